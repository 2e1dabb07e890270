//! The editor on real files in real temporary directories: every operation,
//! every error path, and what a file keeps across an edit.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use harness_edit::{Editor, Error, Limits, Overwrite};
use harness_sandbox::Workspace;
use tempfile::TempDir;

/// A temporary workspace with files written straight to disk (not through the
/// editor), so each test sets up exactly the bytes it means.
struct Fixture {
    dir: TempDir,
    workspace: Workspace,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let workspace = Workspace::new(dir.path()).expect("a workspace");
        Fixture { dir, workspace }
    }

    fn editor(&self) -> Editor<'_> {
        Editor::new(&self.workspace)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn put(&self, name: &str, bytes: impl AsRef<[u8]>) -> &Self {
        let path = self.path(name);
        fs::create_dir_all(path.parent().expect("a parent")).expect("parent directories");
        fs::write(path, bytes).expect("a written file");
        self
    }

    fn bytes(&self, name: &str) -> Vec<u8> {
        fs::read(self.path(name)).expect("a readable file")
    }

    fn text(&self, name: &str) -> String {
        String::from_utf8(self.bytes(name)).expect("UTF-8")
    }
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).expect("metadata").permissions().mode() & 0o7777
}

// --- the spec's required test ---------------------------------------------

#[test]
fn test_edit_requires_a_unique_match() {
    let fixture = Fixture::new();
    fixture.put("f.py", "a\na\n");
    let err = fixture
        .editor()
        .replace("f.py", "a", "b")
        .expect_err("two matches");
    assert!(
        matches!(err, Error::AmbiguousMatch { count: 2, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("starting on lines 1, 2"), "{err}");
    assert_eq!(
        fixture.text("f.py"),
        "a\na\n",
        "a refused edit changes nothing"
    );
}

// --- replace ---------------------------------------------------------------

#[test]
fn replace_writes_the_file_and_returns_its_diff() {
    let fixture = Fixture::new();
    fixture.put("src/lib.rs", "fn one() -> u8 {\n    1\n}\n");
    let change = fixture
        .editor()
        .replace("src/lib.rs", "    1\n", "    2\n")
        .expect("a unique match");
    assert_eq!(fixture.text("src/lib.rs"), "fn one() -> u8 {\n    2\n}\n");
    assert_eq!(change.path(), "src/lib.rs");
    assert_eq!(
        change.diff(),
        "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn one() -> u8 {\n-    1\n+    2\n }\n"
    );
    assert_eq!(change.to_string(), change.diff());
    assert_eq!((change.added(), change.removed()), (1, 1));
}

#[test]
fn replace_all_changes_every_occurrence_in_one_change() {
    let fixture = Fixture::new();
    fixture.put(
        "user.js",
        "function getName(u) {\r\n  return u.name;\r\n}\r\n\r\nmodule.exports = { getName };\r\n",
    );
    let change = fixture
        .editor()
        .replace_all("user.js", "getName", "displayName")
        .expect("two matches, both replaced");
    assert_eq!(
        fixture.text("user.js"),
        "function displayName(u) {\r\n  return u.name;\r\n}\r\n\r\nmodule.exports = { displayName };\r\n",
        "every occurrence, and the file stays CRLF"
    );
    assert_eq!((change.added(), change.removed()), (2, 2));

    // Text from the model is converted to the file's line endings before it is matched.
    let change = fixture
        .editor()
        .replace_all("user.js", "u) {\n  return", "user) {\n  return")
        .expect("one match is fine too");
    assert_eq!((change.added(), change.removed()), (1, 1));
    assert!(fixture.text("user.js").contains("displayName(user) {\r\n"));

    // Occurrences are taken left to right, none inside the one before.
    fixture.put("a.txt", "aaaaa\n");
    fixture
        .editor()
        .replace_all("a.txt", "aa", "b")
        .expect("two whole occurrences");
    assert_eq!(fixture.text("a.txt"), "bba\n");
}

#[test]
fn replace_all_refuses_what_replace_refuses_and_changes_nothing() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "one two one\n");
    let editor = fixture.editor();
    let none = editor
        .replace_all("f.txt", "three", "3")
        .expect_err("no match");
    assert!(matches!(none, Error::NoMatch { .. }), "{none:?}");
    let empty = editor.replace_all("f.txt", "", "x").expect_err("empty");
    assert!(matches!(empty, Error::EmptyOldText { .. }), "{empty:?}");
    let same = editor.replace_all("f.txt", "one", "one").expect_err("same");
    assert!(matches!(same, Error::NothingToChange { .. }), "{same:?}");
    let outside = editor
        .replace_all("../f.txt", "one", "1")
        .expect_err("outside the workspace");
    assert!(matches!(outside, Error::Workspace(_)), "{outside:?}");
    assert_eq!(fixture.text("f.txt"), "one two one\n");

    // Where replace refuses several matches, it says how to change them all.
    let several = editor
        .replace("f.txt", "one", "1")
        .expect_err("two matches");
    assert!(
        several.to_string().ends_with("set replace_all to true"),
        "{several}"
    );
}

#[test]
fn diff_headers_name_the_normalized_workspace_path() {
    let fixture = Fixture::new();
    fixture.put("src/a.txt", "x\n");
    let absolute = format!("{}/src/a.txt", fixture.workspace.root());
    let change = fixture
        .editor()
        .replace(&absolute, "x", "y")
        .expect("an absolute path inside the root");
    assert_eq!(change.path(), "src/a.txt");
    assert!(
        change
            .diff()
            .starts_with("--- a/src/a.txt\n+++ b/src/a.txt\n")
    );
    let change = fixture
        .editor()
        .replace("./src/../src//a.txt", "y", "z")
        .expect("a roundabout relative path");
    assert_eq!(change.path(), "src/a.txt");
}

#[test]
fn replace_refuses_empty_old_text() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "a\n");
    let err = fixture
        .editor()
        .replace("f.txt", "", "b")
        .expect_err("empty");
    assert!(matches!(err, Error::EmptyOldText { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("old_text is empty; copy the exact text")
    );
    assert_eq!(fixture.text("f.txt"), "a\n");
}

#[test]
fn replace_refuses_old_equal_to_new() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "a\n");
    let err = fixture
        .editor()
        .replace("f.txt", "a", "a")
        .expect_err("same");
    assert!(matches!(err, Error::NothingToChange { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "old_text and new_text are identical, so nothing in f.txt would change; put the \
         changed text in new_text"
    );
}

#[test]
fn replace_without_a_match_shows_the_closest_region() {
    let fixture = Fixture::new();
    fixture.put(
        "app.py",
        "import os\n\ndef main():\n    run()\n    stop()\n",
    );
    let err = fixture
        .editor()
        .replace("app.py", "def main():\n  run()\n", "def main():\n  go()\n")
        .expect_err("indentation differs");
    assert_eq!(
        err.to_string(),
        "old_text was not found in app.py. The closest region is lines 3-4:\n\
         \x20    3\tdef main():\n\
         \x20    4\t    run()\n\
         What differs from old_text:\n\
         - line 4: the indentation differs: the file has \"    \", old_text has \"  \"\n\
         Copy the text exactly as the file has it (without the line numbers) and try again."
    );
    assert_eq!(
        fixture.text("app.py"),
        "import os\n\ndef main():\n    run()\n    stop()\n"
    );
}

#[test]
fn replace_in_a_missing_file_is_the_workspace_not_found() {
    let fixture = Fixture::new();
    let err = fixture
        .editor()
        .replace("nope.txt", "a", "b")
        .expect_err("missing");
    assert!(
        matches!(
            err,
            Error::Workspace(harness_sandbox::Error::NotFound { .. })
        ),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "no such file or directory: nope.txt");
}

#[test]
fn replace_of_a_directory_is_refused() {
    let fixture = Fixture::new();
    fs::create_dir(fixture.path("dir")).expect("a directory");
    let err = fixture
        .editor()
        .replace("dir", "a", "b")
        .expect_err("a directory");
    assert!(matches!(err, Error::Workspace(_)), "{err:?}");
}

#[test]
fn edit_that_changes_nothing_does_not_rewrite_the_file() {
    // No final newline is kept, so adding one changes nothing.
    let fixture = Fixture::new();
    fixture.put("f.txt", "a\nb");
    let before = fs::metadata(fixture.path("f.txt")).expect("metadata").ino();
    let change = fixture
        .editor()
        .replace("f.txt", "b", "b\n")
        .expect("a valid edit");
    assert_eq!(change.diff(), "");
    assert_eq!((change.added(), change.removed()), (0, 0));
    let after = fs::metadata(fixture.path("f.txt")).expect("metadata").ino();
    assert_eq!(before, after, "an atomic write would have made a new inode");
}

#[test]
fn a_real_edit_replaces_the_file_atomically() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "a\n");
    let before = fs::metadata(fixture.path("f.txt")).expect("metadata").ino();
    fixture
        .editor()
        .replace("f.txt", "a", "b")
        .expect("an edit");
    let after = fs::metadata(fixture.path("f.txt")).expect("metadata").ino();
    assert_ne!(
        before, after,
        "written to a temporary file and renamed over the old one"
    );
    let names: Vec<_> = fs::read_dir(fixture.dir.path())
        .expect("a listing")
        .map(|entry| entry.expect("an entry").file_name())
        .collect();
    assert_eq!(names, ["f.txt"], "no temporary file is left behind");
}

// --- what a file keeps -----------------------------------------------------

#[test]
fn crlf_file_stays_crlf() {
    let fixture = Fixture::new();
    fixture.put("win.txt", "one\r\ntwo\r\nthree\r\n");
    let change = fixture
        .editor()
        .replace("win.txt", "one\ntwo\n", "one\n2\nand a half\n")
        .expect("the LF old_text matches the CRLF file");
    assert_eq!(
        fixture.text("win.txt"),
        "one\r\n2\r\nand a half\r\nthree\r\n"
    );
    assert_eq!((change.added(), change.removed()), (2, 1));
}

#[test]
fn lf_file_stays_lf() {
    let fixture = Fixture::new();
    fixture.put("unix.txt", "one\ntwo\n");
    fixture
        .editor()
        .replace("unix.txt", "two\r\n", "2\r\n3\r\n")
        .expect("CRLF old_text matches the LF file");
    assert_eq!(fixture.text("unix.txt"), "one\n2\n3\n");
}

#[test]
fn bom_is_kept_and_never_matched() {
    let fixture = Fixture::new();
    fixture.put("bom.txt", "\u{feff}first\nsecond\n");
    let change = fixture
        .editor()
        .replace("bom.txt", "first", "1st")
        .expect("the BOM is not part of the text");
    assert_eq!(fixture.bytes("bom.txt"), b"\xef\xbb\xbf1st\nsecond\n");
    assert!(!change.diff().contains('\u{feff}'), "{}", change.diff());
    let view = fixture
        .editor()
        .view("bom.txt", None, None)
        .expect("a view");
    assert_eq!(view.text(), "     1\t1st\n     2\tsecond\n");
}

#[test]
fn missing_final_newline_stays_missing() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "a\nlast");
    let change = fixture
        .editor()
        .replace("f.txt", "last", "new last\n")
        .expect("an edit");
    assert_eq!(fixture.text("f.txt"), "a\nnew last");
    assert!(
        change
            .diff()
            .ends_with("+new last\n\\ No newline at end of file\n")
    );
}

#[test]
fn final_newline_stays_present() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "a\nb\n");
    fixture
        .editor()
        .replace("f.txt", "b\n", "c")
        .expect("an edit");
    assert_eq!(fixture.text("f.txt"), "a\nc\n");
}

#[test]
fn exec_bit_survives_every_edit() {
    let fixture = Fixture::new();
    fixture.put("run.sh", "#!/bin/sh\necho one\n");
    let path = fixture.path("run.sh");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
    let editor = fixture.editor();
    editor.replace("run.sh", "one", "two").expect("replace");
    assert_eq!(mode(&path), 0o755);
    editor.insert("run.sh", 2, "echo three").expect("insert");
    assert_eq!(mode(&path), 0o755);
    editor
        .write("run.sh", "#!/bin/sh\n", Overwrite::Yes)
        .expect("write");
    assert_eq!(mode(&path), 0o755);
}

#[test]
fn private_mode_survives_an_edit() {
    let fixture = Fixture::new();
    fixture.put("notes.txt", "mine\n");
    let path = fixture.path("notes.txt");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).expect("chmod");
    fixture
        .editor()
        .replace("notes.txt", "mine", "ours")
        .expect("replace");
    assert_eq!(mode(&path), 0o600);
}

// --- refused files ---------------------------------------------------------

#[test]
fn binary_file_is_refused_by_every_operation() {
    let fixture = Fixture::new();
    fixture.put("image.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    let editor = fixture.editor();
    let results = [
        editor.view("image.png", None, None).map(|_| ()),
        editor.replace("image.png", "PNG", "JPG").map(|_| ()),
        editor.insert("image.png", 0, "x").map(|_| ()),
        editor.write("image.png", "x", Overwrite::Yes).map(|_| ()),
    ];
    for result in results {
        let err = result.expect_err("binary");
        assert!(matches!(err, Error::Binary { .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("image.png looks like a binary file")
        );
    }
    assert_eq!(fixture.bytes("image.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
}

#[test]
fn invalid_utf8_is_refused() {
    let fixture = Fixture::new();
    fixture.put("latin1.txt", b"caf\xe9\n");
    let err = fixture
        .editor()
        .replace("latin1.txt", "caf", "bar")
        .expect_err("not UTF-8");
    assert_eq!(
        err.to_string(),
        "latin1.txt is not valid UTF-8 (the first invalid byte is on line 1); only UTF-8 \
         text files can be viewed or edited with this tool"
    );
    assert_eq!(fixture.bytes("latin1.txt"), b"caf\xe9\n");
}

fn small_limits() -> Limits {
    Limits {
        max_file_len: 16,
        ..Limits::default()
    }
}

#[test]
fn file_at_the_size_limit_is_edited() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "0123456789abcde\n");
    let editor = Editor::with_limits(&fixture.workspace, small_limits());
    editor
        .replace("f.txt", "0", "x")
        .expect("16 bytes is allowed");
    assert_eq!(fixture.text("f.txt"), "x123456789abcde\n");
}

#[test]
fn file_over_the_size_limit_is_refused_for_every_operation() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "0123456789abcdef\n");
    let editor = Editor::with_limits(&fixture.workspace, small_limits());
    let results = [
        editor.view("f.txt", None, None).map(|_| ()),
        editor.replace("f.txt", "0", "x").map(|_| ()),
        editor.insert("f.txt", 0, "x").map(|_| ()),
        editor.write("f.txt", "x", Overwrite::Yes).map(|_| ()),
    ];
    for result in results {
        let err = result.expect_err("17 bytes");
        assert!(
            matches!(
                err,
                Error::TooLarge {
                    len: 17,
                    max_len: 16,
                    ..
                }
            ),
            "{err:?}"
        );
    }
    assert_eq!(
        editor
            .view("f.txt", None, None)
            .expect_err("too large")
            .to_string(),
        "f.txt: 17 bytes is over the 16-byte limit for files this tool views or edits; read \
         a larger file in parts with a command such as `sed -n` or `grep -n`, and keep \
         written content under the limit"
    );
    assert_eq!(fixture.text("f.txt"), "0123456789abcdef\n");
}

#[test]
fn an_edit_may_not_grow_a_file_past_the_limit() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "0123456789\n");
    let editor = Editor::with_limits(&fixture.workspace, small_limits());
    let err = editor
        .replace("f.txt", "0", "0123456")
        .expect_err("17 bytes");
    assert!(matches!(err, Error::TooLarge { len: 17, .. }), "{err:?}");
    editor.replace("f.txt", "0", "012345").expect("16 bytes");
    assert_eq!(fixture.text("f.txt"), "012345123456789\n");
}

#[test]
fn created_content_may_not_exceed_the_limit() {
    let fixture = Fixture::new();
    let editor = Editor::with_limits(&fixture.workspace, small_limits());
    let err = editor
        .create("big.txt", "0123456789abcdefg")
        .expect_err("17 bytes");
    assert!(matches!(err, Error::TooLarge { len: 17, .. }), "{err:?}");
    assert!(!fixture.path("big.txt").exists());
    editor
        .create("ok.txt", "0123456789abcdef")
        .expect("16 bytes");
}

#[test]
fn default_limits_are_the_documented_ones() {
    let limits = Limits::default();
    assert_eq!(limits.max_file_len, 8 * 1024 * 1024);
    assert_eq!(limits.view_lines, 400);
    assert_eq!(limits.view_bytes, 32 * 1024);
    assert_eq!(limits.diff_timeout, std::time::Duration::from_millis(500));
}

// --- view ------------------------------------------------------------------

#[test]
fn view_numbers_lines_and_caps_long_files() {
    let fixture = Fixture::new();
    let text: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
    fixture.put("long.txt", &text);
    let view = fixture
        .editor()
        .view("long.txt", None, None)
        .expect("a view");
    assert_eq!(
        (view.first_line(), view.last_line(), view.total_lines()),
        (1, 400, 1000)
    );
    assert!(view.text().starts_with("     1\tline 1\n     2\tline 2\n"));
    assert!(
        view.text().ends_with(
            "   400\tline 400\n[lines 1-400 of 1000 shown: a view shows at most 400 lines or \
             32768 bytes; to see more, view again with start_line=401]\n"
        ),
        "{}",
        view.text()
    );
}

#[test]
fn view_byte_cap_applies() {
    let fixture = Fixture::new();
    let text: String = (1..=100).map(|i| format!("{i:0>100}\n")).collect();
    fixture.put("wide.txt", &text);
    let limits = Limits {
        view_bytes: 1000,
        ..Limits::default()
    };
    let view = Editor::with_limits(&fixture.workspace, limits)
        .view("wide.txt", None, None)
        .expect("a view");
    // Each numbered line is 108 bytes: 9 fit in 1000.
    assert_eq!(view.last_line(), 9);
}

#[test]
fn view_line_cap_applies() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "a\nb\nc\n");
    let limits = Limits {
        view_lines: 2,
        ..Limits::default()
    };
    let view = Editor::with_limits(&fixture.workspace, limits)
        .view("f.txt", Some(2), None)
        .expect("a view");
    assert_eq!((view.first_line(), view.last_line()), (2, 3));
}

#[test]
fn view_range_errors() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "a\nb\n");
    let editor = fixture.editor();
    let err = editor.view("f.txt", Some(0), None).expect_err("line 0");
    assert_eq!(
        err.to_string(),
        "start_line 0 is out of range: f.txt has 2 lines, so start_line must be from 1 to 2"
    );
    let err = editor
        .view("f.txt", Some(3), None)
        .expect_err("past the end");
    assert!(
        matches!(err, Error::LineOutOfRange { value: 3, .. }),
        "{err:?}"
    );
    let err = editor
        .view("f.txt", Some(2), Some(1))
        .expect_err("backwards");
    assert_eq!(
        err.to_string(),
        "end_line 1 is before start_line 2; give an end_line at or after start_line, or \
         leave it out to view to the end of f.txt"
    );
}

// --- insert ----------------------------------------------------------------

#[test]
fn insert_adds_lines_and_returns_the_diff() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "a\nb\n");
    let change = fixture
        .editor()
        .insert("f.txt", 1, "x\ny")
        .expect("an insert");
    assert_eq!(fixture.text("f.txt"), "a\nx\ny\nb\n");
    assert_eq!(
        change.diff(),
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,4 @@\n a\n+x\n+y\n b\n"
    );
    assert_eq!((change.added(), change.removed()), (2, 0));
}

#[test]
fn insert_errors() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "a\nb\n");
    let editor = fixture.editor();
    let err = editor.insert("f.txt", 3, "x").expect_err("past the end");
    assert_eq!(
        err.to_string(),
        "after_line 3 is out of range: f.txt has 2 lines, so after_line must be from 0 to 2"
    );
    let err = editor
        .insert("f.txt", 1, "")
        .expect_err("nothing to insert");
    assert_eq!(
        err.to_string(),
        "the text to insert into f.txt is empty; give the lines to insert"
    );
    assert_eq!(fixture.text("f.txt"), "a\nb\n");
}

#[test]
fn insert_into_crlf_without_final_newline() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "a\r\nb");
    fixture
        .editor()
        .insert("f.txt", 2, "c\n")
        .expect("an insert");
    assert_eq!(fixture.text("f.txt"), "a\r\nb\r\nc");
}

// --- create and write ------------------------------------------------------

#[test]
fn create_makes_the_file_and_its_directories() {
    let fixture = Fixture::new();
    let change = fixture
        .editor()
        .create("src/deep/new.py", "print('hi')\n")
        .expect("a new file");
    assert_eq!(fixture.text("src/deep/new.py"), "print('hi')\n");
    assert_eq!(
        change.diff(),
        "--- /dev/null\n+++ b/src/deep/new.py\n@@ -0,0 +1 @@\n+print('hi')\n"
    );
    assert_eq!((change.added(), change.removed()), (1, 0));
}

#[test]
fn create_writes_content_as_given() {
    let fixture = Fixture::new();
    fixture
        .editor()
        .create("f.txt", "\u{feff}a\r\nb")
        .expect("a new file");
    assert_eq!(fixture.bytes("f.txt"), b"\xef\xbb\xbfa\r\nb");
}

#[test]
fn create_refuses_an_existing_file() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "keep\n");
    let err = fixture
        .editor()
        .create("f.txt", "lost\n")
        .expect_err("exists");
    assert!(matches!(err, Error::AlreadyExists { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "f.txt already exists; to change part of it use replace (old_text and new_text), to \
         replace all of its content use write with overwrite=true"
    );
    assert_eq!(fixture.text("f.txt"), "keep\n");
}

#[test]
fn create_refuses_a_name_taken_by_a_directory() {
    let fixture = Fixture::new();
    fs::create_dir(fixture.path("dir")).expect("a directory");
    let err = fixture.editor().create("dir", "x").expect_err("exists");
    assert!(matches!(err, Error::AlreadyExists { .. }), "{err:?}");
}

#[test]
fn create_under_a_file_is_the_workspace_refusal() {
    let fixture = Fixture::new();
    fixture.put("file", "x\n");
    let err = fixture
        .editor()
        .create("file/new.txt", "x")
        .expect_err("not a directory");
    assert!(
        matches!(
            err,
            Error::Workspace(harness_sandbox::Error::NotADirectory { .. })
        ),
        "{err:?}"
    );
}

#[test]
fn create_refused_by_a_deny_rule_leaves_no_directory_behind() {
    let fixture = Fixture::new();
    let err = fixture
        .editor()
        .create("config/.env", "TOKEN=1\n")
        .expect_err("a deny rule");
    assert!(
        matches!(err, Error::Workspace(harness_sandbox::Error::Denied { .. })),
        "{err:?}"
    );
    assert!(!fixture.path("config").exists());
}

#[test]
fn write_without_overwrite_refuses_an_existing_file() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "keep\n");
    let err = fixture
        .editor()
        .write("f.txt", "lost\n", Overwrite::No)
        .expect_err("exists");
    assert!(matches!(err, Error::AlreadyExists { .. }), "{err:?}");
    assert_eq!(fixture.text("f.txt"), "keep\n");
}

#[test]
fn write_creates_a_missing_file_either_way() {
    let fixture = Fixture::new();
    let editor = fixture.editor();
    let change = editor
        .write("a/new.txt", "x\n", Overwrite::No)
        .expect("created");
    assert!(
        change
            .diff()
            .starts_with("--- /dev/null\n+++ b/a/new.txt\n")
    );
    let change = editor
        .write("b/new.txt", "y\n", Overwrite::Yes)
        .expect("created");
    assert!(
        change
            .diff()
            .starts_with("--- /dev/null\n+++ b/b/new.txt\n")
    );
    assert_eq!(fixture.text("a/new.txt"), "x\n");
    assert_eq!(fixture.text("b/new.txt"), "y\n");
}

#[test]
fn write_with_overwrite_replaces_and_keeps_the_conventions() {
    let fixture = Fixture::new();
    fixture.put("f.txt", "\u{feff}old\r\nlines\r\n");
    let change = fixture
        .editor()
        .write("f.txt", "new\nlines", Overwrite::Yes)
        .expect("overwritten");
    assert_eq!(fixture.bytes("f.txt"), b"\xef\xbb\xbfnew\r\nlines\r\n");
    assert_eq!(
        change.diff(),
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-old\r\n+new\r\n lines\r\n"
    );
}

#[test]
fn write_with_overwrite_from_a_bool() {
    assert_eq!(Overwrite::from(true), Overwrite::Yes);
    assert_eq!(Overwrite::from(false), Overwrite::No);
}

#[test]
fn write_with_overwrite_passes_other_read_errors_on() {
    let fixture = Fixture::new();
    fs::create_dir(fixture.path("dir")).expect("a directory");
    let err = fixture
        .editor()
        .write("dir", "x", Overwrite::Yes)
        .expect_err("a directory");
    assert!(
        matches!(err, Error::Workspace(harness_sandbox::Error::Io { .. })),
        "{err:?}"
    );
}

// --- the workspace's deny rules ----------------------------------------------

fn is_denied(err: &Error) -> bool {
    matches!(err, Error::Workspace(harness_sandbox::Error::Denied { .. }))
}

#[test]
fn secrets_are_refused_by_every_operation() {
    let fixture = Fixture::new();
    fixture.put(".env", "TOKEN=secret\n");
    let editor = fixture.editor();
    let results = [
        editor.view(".env", None, None).map(|_| ()),
        editor.replace(".env", "secret", "x").map(|_| ()),
        editor.insert(".env", 0, "x").map(|_| ()),
        editor.write(".env", "x", Overwrite::Yes).map(|_| ()),
        editor.create("keys/id_rsa", "x").map(|_| ()),
    ];
    for result in results {
        let err = result.expect_err("a deny rule");
        assert!(is_denied(&err), "{err:?}");
    }
    assert_eq!(fixture.text(".env"), "TOKEN=secret\n");
}

#[test]
fn git_internals_can_be_viewed_but_not_edited() {
    let fixture = Fixture::new();
    fixture.put(".git/config", "[core]\n\tbare = false\n");
    let editor = fixture.editor();
    editor
        .view(".git/config", None, None)
        .expect("reading is allowed");
    let err = editor
        .replace(".git/config", "bare = false", "bare = true")
        .expect_err("writing is refused");
    assert!(is_denied(&err), "{err:?}");
    let err = editor
        .create(".git/hooks/pre-commit", "#!/bin/sh\n")
        .expect_err("refused");
    assert!(is_denied(&err), "{err:?}");
    assert_eq!(fixture.text(".git/config"), "[core]\n\tbare = false\n");
    assert!(!fixture.path(".git/hooks").exists());
}

/// A guard that refuses any change whose new text holds `REFUSE`, and remembers what it saw.
#[derive(Debug, Default)]
struct Remembering {
    seen: std::sync::Mutex<Vec<(String, Option<String>, String)>>,
}

impl harness_edit::WriteGuard for Remembering {
    fn check(
        &self,
        path: &camino::Utf8Path,
        before: Option<&str>,
        after: &str,
    ) -> Result<(), String> {
        self.seen.lock().expect("not poisoned").push((
            path.to_string(),
            before.map(str::to_owned),
            after.to_owned(),
        ));
        if after.contains("REFUSE") {
            Err("the guard says no".to_owned())
        } else {
            Ok(())
        }
    }
}

#[test]
fn a_guard_sees_every_change_with_its_exact_texts_and_a_refusal_writes_nothing() {
    let fixture = Fixture::new();
    fixture.put("a.txt", "one\r\ntwo\r\n");
    let guard = Remembering::default();
    let editor = fixture.editor().guarded(&guard);

    // Each kind of write is checked, with the text the file would have (its CRLF kept).
    editor.replace("a.txt", "two", "2").expect("allowed");
    editor.insert("a.txt", 0, "zero").expect("allowed");
    editor
        .write("a.txt", "w\n", Overwrite::Yes)
        .expect("allowed");
    editor.create("sub/new.txt", "new\n").expect("allowed");
    let seen = guard.seen.lock().expect("not poisoned").clone();
    assert_eq!(
        seen,
        [
            (
                "a.txt".to_owned(),
                Some("one\r\ntwo\r\n".to_owned()),
                "one\r\n2\r\n".to_owned()
            ),
            (
                "a.txt".to_owned(),
                Some("one\r\n2\r\n".to_owned()),
                "zero\r\none\r\n2\r\n".to_owned()
            ),
            (
                "a.txt".to_owned(),
                Some("zero\r\none\r\n2\r\n".to_owned()),
                "w\r\n".to_owned()
            ),
            ("sub/new.txt".to_owned(), None, "new\n".to_owned()),
        ]
    );

    // A refusal names the file and the reason, and nothing is written or created.
    for refused in [
        editor.replace("a.txt", "w", "REFUSE"),
        editor.insert("a.txt", 1, "REFUSE"),
        editor.write("a.txt", "REFUSE", Overwrite::Yes),
        editor.write("other/b.txt", "REFUSE", Overwrite::No),
        editor.create("deep/er/c.txt", "REFUSE"),
    ] {
        let error = refused.expect_err("the guard refuses");
        assert!(matches!(error, Error::Refused { .. }), "{error}");
        assert!(
            error.to_string().ends_with(": the guard says no"),
            "{error}"
        );
    }
    assert_eq!(fs::read(fixture.path("a.txt")).unwrap(), b"w\r\n");
    for missing in ["other", "deep", "other/b.txt"] {
        assert!(!fixture.path(missing).exists(), "{missing}");
    }
    assert_eq!(
        editor
            .replace("a.txt", "w", "REFUSE")
            .unwrap_err()
            .to_string(),
        "refusing to change a.txt: the guard says no"
    );

    // A change that changes nothing is no change for the guard either.
    let before = guard.seen.lock().expect("not poisoned").len();
    editor
        .write("a.txt", "w\n", Overwrite::Yes)
        .expect("the same content");
    assert_eq!(guard.seen.lock().expect("not poisoned").len(), before);

    // Without the guard the same change is made.
    fixture
        .editor()
        .replace("a.txt", "w", "REFUSE")
        .expect("unguarded");
}
