//! `read_file`, `write_file`, `edit_file`: what they return, and every way they fail.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;

use harness_tools::{Detail, Limits};
use serde_json::json;

use crate::support::{Fixture, assert_error, ok};

#[test]
fn read_file_numbers_lines() {
    let fixture = Fixture::new();
    fixture.file("a.py", "one\ntwo\nthree\n");
    let result = fixture.call("read_file", json!({"path": "a.py"}));
    assert_eq!(ok(&result), "     1\tone\n     2\ttwo\n     3\tthree\n");
    assert!(!result.may_have_changed_workspace());
    assert_eq!(result.summary().to_string(), "read_file a.py  3 of 3 lines");
    assert_eq!(
        result.summary().detail(),
        &Detail::Viewed {
            first_line: 1,
            last_line: 3,
            total_lines: 3
        }
    );
}

#[test]
fn read_file_reads_a_range() {
    let fixture = Fixture::new();
    fixture.file("a.py", "one\ntwo\nthree\nfour\n");
    let result = fixture.call(
        "read_file",
        json!({"path": "a.py", "start_line": 2, "end_line": 3}),
    );
    assert_eq!(
        ok(&result),
        "     2\ttwo\n     3\tthree\n[lines 2-3 of 4 shown]\n"
    );
    assert_eq!(result.summary().to_string(), "read_file a.py  2 of 4 lines");
}

#[test]
fn read_file_is_capped_with_a_note_on_how_to_read_on() {
    let fixture = Fixture::new();
    fixture.file("long.txt", "x\n".repeat(10));
    let mut limits = Limits::default();
    limits.edit.view_lines = 4;
    let result = fixture
        .toolbox_with(limits)
        .call("read_file", &json!({"path": "long.txt"}));
    let text = ok(&result);
    assert!(
        text.starts_with("     1\tx\n     2\tx\n     3\tx\n     4\tx\n[lines 1-4 of 10 shown"),
        "{text}"
    );
    assert!(text.ends_with("view again with start_line=5]\n"), "{text}");
}

#[test]
fn read_file_of_an_empty_file_says_so() {
    let fixture = Fixture::new();
    fixture.file("empty.txt", "");
    let result = fixture.call("read_file", json!({"path": "empty.txt"}));
    assert_eq!(ok(&result), "[empty.txt is empty]\n");
    assert_eq!(
        result.summary().to_string(),
        "read_file empty.txt  0 of 0 lines"
    );
}

macro_rules! read_errors {
    ($($name:ident: $setup:expr, $arguments:expr => $prefix:expr,)*) => {$(
        #[test]
        fn $name() {
            let fixture = Fixture::new();
            #[allow(clippy::redundant_closure_call)]
            ($setup)(&fixture);
            let result = fixture.call("read_file", $arguments);
            assert_error(&result, $prefix);
            assert_eq!(result.summary().detail(), &Detail::Failed);
            assert!(!result.may_have_changed_workspace());
        }
    )*};
}

fn nothing(_: &Fixture) {}

read_errors! {
    read_file_of_a_missing_file_points_to_list_dir: nothing, json!({"path": "missing.txt"})
        => "Error: no such file or directory: missing.txt; list_dir shows which files and directories exist",
    read_file_through_a_file_points_to_list_dir:
        |fixture: &Fixture| { fixture.file("a.txt", "x\n"); }, json!({"path": "a.txt/b"})
        => "Error: not a directory: a.txt/b (a component of the path is a file); list_dir shows",
    read_file_of_a_directory_says_to_list_it:
        |fixture: &Fixture| { fixture.dir("src"); }, json!({"path": "src"})
        => "Error: src: is a directory; list it instead",
    read_file_of_a_binary_file_is_refused:
        |fixture: &Fixture| { fixture.file("a.bin", b"\x00\x01\x02"); }, json!({"path": "a.bin"})
        => "Error: a.bin looks like a binary file",
    read_file_of_invalid_utf8_is_refused:
        |fixture: &Fixture| { fixture.file("latin1.txt", b"caf\xe9\n"); }, json!({"path": "latin1.txt"})
        => "Error: latin1.txt is not valid UTF-8",
    read_file_past_the_end_is_refused:
        |fixture: &Fixture| { fixture.file("a.txt", "x\n"); }, json!({"path": "a.txt", "start_line": 5})
        => "Error: start_line 5 is out of range: a.txt has 1 lines",
    read_file_of_a_reversed_range_is_refused:
        |fixture: &Fixture| { fixture.file("a.txt", "x\ny\nz\n"); },
        json!({"path": "a.txt", "start_line": 3, "end_line": 2})
        => "Error: end_line 2 is before start_line 3",
    a_link_loop_says_to_use_the_file_itself:
        |fixture: &Fixture| {
            symlink("loop-b", fixture.path("loop-a")).expect("link");
            symlink("loop-a", fixture.path("loop-b")).expect("link");
        },
        json!({"path": "loop-a"})
        => "Error: too many levels of symbolic links: loop-a; use the path of the file itself, without the links",
    a_nul_byte_asks_for_a_plain_path: nothing, json!({"path": "a\u{0}b"})
        => "Error: path contains a NUL byte: \"a\\0b\"; give a plain relative path such as \"src/main.rs\"",
    a_too_long_path_asks_for_a_plain_path: nothing, json!({"path": "a/".repeat(2100)})
        => "Error: path is 4200 bytes long; paths are limited to 4096 bytes; give a plain relative path",
    a_link_to_a_name_that_is_not_utf8_asks_for_a_plain_path:
        |fixture: &Fixture| {
            symlink(OsStr::from_bytes(b"caf\xe9"), fixture.path("odd")).expect("link");
        },
        json!({"path": "odd"})
        => "Error: path is not valid UTF-8: caf\u{fffd}; give a plain relative path",
}

#[test]
fn an_escape_message_gets_no_advice_of_ours() {
    let fixture = Fixture::new();
    let result = fixture.call("read_file", json!({"path": "../x"}));
    assert_eq!(
        result.text(),
        format!(
            "Error: path escapes the workspace: ../x (use a path inside {})",
            fixture.root.display()
        )
    );
}

#[test]
fn write_file_creates_a_file_and_its_directories_and_returns_the_diff() {
    let fixture = Fixture::new();
    let result = fixture.call(
        "write_file",
        json!({"path": "notes/todo.md", "content": "- a\n- b\n"}),
    );
    assert_eq!(
        ok(&result),
        "--- /dev/null\n+++ b/notes/todo.md\n@@ -0,0 +1,2 @@\n+- a\n+- b\n"
    );
    assert!(result.may_have_changed_workspace());
    assert_eq!(
        result.summary().to_string(),
        "write_file notes/todo.md  +2 −0"
    );
    assert_eq!(fixture.read("notes/todo.md"), "- a\n- b\n");
}

#[test]
fn write_file_refuses_an_existing_file_without_overwrite() {
    let fixture = Fixture::new();
    fixture.file("a.txt", "keep\n");
    let result = fixture.call("write_file", json!({"path": "a.txt", "content": "new\n"}));
    assert_eq!(
        result.text(),
        "Error: a.txt already exists; to change part of it use edit_file, to replace all of its \
         content call write_file with \"overwrite\": true"
    );
    assert!(result.is_error());
    assert!(!result.may_have_changed_workspace());
    assert_eq!(fixture.read("a.txt"), "keep\n");
}

#[test]
fn write_file_with_overwrite_replaces_the_file_and_returns_the_diff() {
    let fixture = Fixture::new();
    fixture.file("a.txt", "one\ntwo\n");
    let result = fixture.call(
        "write_file",
        json!({"path": "a.txt", "content": "one\n2\n", "overwrite": true}),
    );
    assert_eq!(
        ok(&result),
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
    );
    assert_eq!(result.summary().to_string(), "write_file a.txt  +1 −1");
    assert!(result.may_have_changed_workspace());
    assert_eq!(fixture.read("a.txt"), "one\n2\n");
}

// Issue 49: three answers in a row were cut off at the reply limit while rewriting a
// whole file.
#[test]
fn write_file_over_a_long_existing_file_is_refused_with_advice_to_edit() {
    let fixture = Fixture::new();
    let long: String = (1..=201).map(|n| format!("line {n}\n")).collect();
    let short: String = (1..=200).map(|n| format!("line {n}\n")).collect();
    fixture.file("long.txt", &long).file("short.txt", &short);
    let rewrite = |path: &str| {
        fixture.call(
            "write_file",
            json!({"path": path, "content": "new\n", "overwrite": true}),
        )
    };
    let refused = rewrite("long.txt");
    assert_error(
        &refused,
        "Error: long.txt has 201 lines, more than the 200 that write_file replaces whole, \
         so nothing was written",
    );
    assert!(
        refused.text().contains("Change it with edit_file"),
        "{}",
        refused.text()
    );
    assert_eq!(fixture.read("long.txt"), long);
    // At the limit, and a new file of any length: written.
    assert_eq!(
        ok(&rewrite("short.txt")).lines().next(),
        Some("--- a/short.txt")
    );
    let created = fixture.call("write_file", json!({"path": "new.txt", "content": long}));
    assert!(!created.is_error(), "{}", created.text());
    // The limit is the toolbox's to set.
    let mut limits = Limits::default();
    limits.rewrite_lines = 300;
    let toolbox = fixture.toolbox_with(limits);
    let result = toolbox.call(
        "write_file",
        &json!({"path": "long.txt", "content": "new\n", "overwrite": true}),
    );
    assert!(!result.is_error(), "{}", result.text());
}

#[test]
fn write_file_of_the_same_content_changes_nothing_and_says_so() {
    let fixture = Fixture::new();
    fixture.file("a.txt", "same\n");
    let result = fixture.call(
        "write_file",
        json!({"path": "a.txt", "content": "same\n", "overwrite": true}),
    );
    assert_eq!(
        ok(&result),
        "No change: a.txt already has exactly this content.\n"
    );
    assert!(!result.may_have_changed_workspace());
    assert_eq!(result.summary().to_string(), "write_file a.txt  +0 −0");
}

#[test]
fn write_file_through_a_hard_link_is_refused_with_advice() {
    let fixture = Fixture::new();
    fixture.file("a.txt", "x\n");
    std::fs::hard_link(fixture.path("a.txt"), fixture.path("b.txt")).expect("hard link");
    let result = fixture.call(
        "write_file",
        json!({"path": "a.txt", "content": "y\n", "overwrite": true}),
    );
    // Overwriting reads the file first (to keep its line endings), and the read refuses.
    assert_error(
        &result,
        "Error: refusing to read a.txt: the file has 2 hard links",
    );
    assert!(result.text().ends_with("; leave this file as it is"));
    assert_eq!(fixture.read("b.txt"), "x\n");
}

#[test]
fn write_file_through_a_dangling_link_is_refused_with_advice() {
    let fixture = Fixture::new();
    symlink("missing.txt", fixture.path("ghost")).expect("link");
    let result = fixture.call("write_file", json!({"path": "ghost", "content": "y\n"}));
    assert_eq!(
        result.text(),
        "Error: refusing to write ghost: it goes through a dangling symbolic link and would create \
         missing.txt; use a path that is not a symbolic link"
    );
    assert!(!fixture.path("missing.txt").exists());
}

#[test]
fn edit_file_replaces_and_returns_the_diff() {
    let fixture = Fixture::new();
    fixture.file("calc.py", "def add(a, b):\n    return a - b\n");
    let result = fixture.call(
        "edit_file",
        json!({"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}),
    );
    assert_eq!(
        ok(&result),
        "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
    );
    assert!(result.may_have_changed_workspace());
    assert_eq!(result.summary().to_string(), "edit_file calc.py  +1 −1");
    assert_eq!(
        fixture.read("calc.py"),
        "def add(a, b):\n    return a + b\n"
    );
}

/// The spec's `test_edit_requires_a_unique_match`, through the toolbox.
#[test]
fn test_edit_requires_a_unique_match() {
    let fixture = Fixture::new();
    fixture.file("f.py", "a\na\n");
    let result = fixture.call(
        "edit_file",
        json!({"path": "f.py", "old_text": "a", "new_text": "b"}),
    );
    assert_error(
        &result,
        "Error: old_text matches 2 places in f.py (starting on lines 1, 2)",
    );
    assert!(!result.may_have_changed_workspace());
    assert_eq!(fixture.read("f.py"), "a\na\n");
}

#[test]
fn edit_file_with_replace_all_renames_every_occurrence() {
    let fixture = Fixture::new();
    fixture.file(
        "user.js",
        "function getUserName(u) {}\nmodule.exports = { getUserName };\n",
    );
    let result = fixture.call(
        "edit_file",
        json!({"path": "user.js", "old_text": "getUserName", "new_text": "displayName", "replace_all": true}),
    );
    assert!(!result.is_error(), "{}", result.text());
    assert!(result.may_have_changed_workspace());
    assert_eq!(result.summary().to_string(), "edit_file user.js  +2 −2");
    assert_eq!(
        fixture.read("user.js"),
        "function displayName(u) {}\nmodule.exports = { displayName };\n"
    );
    // Without it, the same call is refused and says how to rename.
    fixture.file("greet.js", "getUserName(getUserName)\n");
    let refused = fixture.call(
        "edit_file",
        json!({"path": "greet.js", "old_text": "getUserName", "new_text": "displayName"}),
    );
    assert_error(
        &refused,
        "Error: old_text matches 2 places in greet.js (starting on lines 1, 1)",
    );
    assert!(refused.text().contains("set replace_all to true"));
    assert_eq!(fixture.read("greet.js"), "getUserName(getUserName)\n");
}

#[test]
fn edit_file_without_a_match_shows_the_closest_region() {
    let fixture = Fixture::new();
    fixture.file("f.py", "def f():\n    return 1\n");
    let result = fixture.call(
        "edit_file",
        json!({"path": "f.py", "old_text": "def f():\n  return 1", "new_text": "x"}),
    );
    assert_error(
        &result,
        "Error: old_text was not found in f.py. The closest region is lines 1-2:",
    );
    assert_eq!(fixture.read("f.py"), "def f():\n    return 1\n");
}

#[test]
fn edit_file_with_identical_texts_is_refused() {
    let fixture = Fixture::new();
    fixture.file("f.py", "x = 1\n");
    let result = fixture.call(
        "edit_file",
        json!({"path": "f.py", "old_text": "x", "new_text": "x"}),
    );
    assert_error(&result, "Error: old_text and new_text are identical");
}

#[test]
fn edit_file_of_a_missing_file_points_to_list_dir() {
    let fixture = Fixture::new();
    let result = fixture.call(
        "edit_file",
        json!({"path": "nope.py", "old_text": "x", "new_text": "y"}),
    );
    assert_error(
        &result,
        "Error: no such file or directory: nope.py; list_dir shows",
    );
}

#[test]
fn an_edit_without_old_text_is_shown_how_to_insert_on_the_file_s_first_line() {
    let fixture = Fixture::new();
    fixture
        .file(
            "stats.py",
            "\n\"\"\"Summary statistics.\"\"\"\n\ndef mean(v):\n    pass\n",
        )
        .file(".env", "TOKEN=hunter2\n");
    // Qwen2.5-Coder-1.5B meaning "add an import": old_text empty, then left out.
    for arguments in [
        json!({"path": "stats.py", "old_text": "", "new_text": "import math\n"}),
        json!({"path": "stats.py", "new_text": "import math\n"}),
    ] {
        let result = fixture.call("edit_file", arguments.clone());
        assert_error(&result, "Error: edit_file: ");
        assert!(
            result.text().contains(
                r#"for example old_text "\"\"\"Summary statistics.\"\"\"" and new_text "\"\"\"Summary statistics.\"\"\"\nimport math\n"."#
            ),
            "{arguments}: {}",
            result.text()
        );
    }
    // Nothing to put in, a file the tools may not read or that does not exist, another
    // tool, another mistake: no hint.
    for (tool, arguments) in [
        (
            "edit_file",
            json!({"path": "stats.py", "old_text": "", "new_text": " \n"}),
        ),
        (
            "edit_file",
            json!({"path": ".env", "old_text": "", "new_text": "X=1\n"}),
        ),
        (
            "edit_file",
            json!({"path": "nowhere.py", "old_text": "", "new_text": "x\n"}),
        ),
        ("edit_file", json!({"old_text": "", "new_text": "x\n"})),
        ("edit_file", json!({"path": "stats.py", "old_text": "def"})),
        (
            "write_file",
            json!({"path": "stats.py", "old_text": "", "new_text": "x\n"}),
        ),
    ] {
        let result = fixture.call(tool, arguments.clone());
        assert!(result.is_error(), "{arguments}");
        assert!(
            !result.text().contains("To add lines"),
            "{arguments}: {}",
            result.text()
        );
        assert!(!result.text().contains("hunter2"), "{}", result.text());
    }
}
