//! What each operation does inside the root: results, atomicity, permissions, errors.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use harness_sandbox::{Error, FileType};

use crate::support::Fixture;

/// The names in a directory of the fixture, sorted.
fn listing(fixture: &Fixture, relative: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(fixture.inside(relative))
        .expect("list")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .into_string()
                .expect("UTF-8")
        })
        .collect();
    names.sort();
    names
}

fn io_kind(error: Error) -> io::ErrorKind {
    match error {
        Error::Io { source, .. } => source.kind(),
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

#[test]
fn nested_paths_resolve_to_the_named_file() {
    // The spec's `test_nested_paths_are_allowed`.
    let fixture = Fixture::new();
    fixture.dir("src");
    let workspace = fixture.workspace();
    let resolved = workspace.resolve("src/main.py").expect("inside");
    assert_eq!(resolved.file_name(), Some("main.py"));
    assert_eq!(resolved, fixture.inside("src/main.py"));
}

#[test]
fn resolve_goes_through_the_deepest_existing_ancestor() {
    let fixture = Fixture::new();
    fixture.dir("src");
    fixture.symlink("src", "s");
    let workspace = fixture.workspace();
    assert_eq!(
        workspace
            .relative("s/new/deeper/file.rs")
            .expect("relative"),
        "src/new/deeper/file.rs"
    );
    // `..` in the missing part cancels a missing name.
    assert_eq!(
        workspace.relative("s/new/../other.rs").expect("relative"),
        "src/other.rs"
    );
    assert_eq!(workspace.relative("new/a/../../b").expect("relative"), "b");
}

#[test]
fn dotdot_over_several_missing_names_lands_back_in_an_existing_directory() {
    let fixture = Fixture::new();
    fixture.dir("src");
    let workspace = fixture.workspace();
    workspace
        .write("n1/n2/../../top.txt", "top")
        .expect("both missing names cancelled");
    workspace
        .create_new("src/n1/n2/n3/../../../new.rs", "new")
        .expect("three cancelled");
    assert_eq!(
        fs::read_to_string(fixture.inside("top.txt")).expect("read"),
        "top"
    );
    assert_eq!(
        fs::read_to_string(fixture.inside("src/new.rs")).expect("read"),
        "new"
    );
    let error = workspace
        .write("n1/n2/../f.txt", "x")
        .expect_err("n1 is still missing");
    assert!(matches!(error, Error::NotFound { .. }), "{error:?}");
    assert_eq!(listing(&fixture, "."), ["src", "top.txt"]);
}

#[test]
fn read_returns_the_bytes_and_read_to_string_the_text() {
    let fixture = Fixture::new();
    fixture.file("a.txt", "héllo\n");
    fs::write(fixture.inside("binary"), [0xff, 0x00, 0xfe]).expect("binary file");
    let workspace = fixture.workspace();
    assert_eq!(workspace.read("a.txt").expect("read"), "héllo\n".as_bytes());
    assert_eq!(workspace.read_to_string("a.txt").expect("read"), "héllo\n");
    assert_eq!(workspace.read("binary").expect("read"), [0xff, 0x00, 0xfe]);
    let error = workspace.read_to_string("binary").expect_err("not UTF-8");
    assert_eq!(error.to_string(), "binary: the file is not UTF-8 text");
    assert_eq!(io_kind(error), io::ErrorKind::InvalidData);
}

#[test]
fn read_refuses_directories_missing_files_and_special_files() {
    let fixture = Fixture::new();
    fixture.dir("src");
    let status = Command::new("mkfifo")
        .arg(fixture.inside("fifo"))
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo failed");
    let workspace = fixture.workspace();
    let error = workspace.read("src").expect_err("a directory");
    assert_eq!(error.to_string(), "src: is a directory; list it instead");
    assert_eq!(io_kind(error), io::ErrorKind::IsADirectory);
    // A FIFO would block the reader forever: refused before opening.
    let error = workspace.read("fifo").expect_err("a FIFO");
    assert_eq!(error.to_string(), "fifo: not a regular file");
    assert_eq!(io_kind(error), io::ErrorKind::InvalidInput);
    let error = workspace.read("missing.txt").expect_err("missing");
    assert!(matches!(&error, Error::NotFound { candidate } if candidate == "missing.txt"));
    assert_eq!(error.to_string(), "no such file or directory: missing.txt");
    let error = workspace.read("missing/deeper.txt").expect_err("missing");
    assert!(matches!(error, Error::NotFound { .. }), "{error:?}");
}

#[test]
fn write_creates_a_file_and_replaces_one() {
    let fixture = Fixture::new();
    fixture.dir("src");
    let workspace = fixture.workspace();
    workspace.write("src/new.rs", "first").expect("create");
    assert_eq!(
        fs::read_to_string(fixture.inside("src/new.rs")).expect("read"),
        "first"
    );
    workspace.write("src/new.rs", "second").expect("replace");
    assert_eq!(
        fs::read_to_string(fixture.inside("src/new.rs")).expect("read"),
        "second"
    );
    // Atomic through a temporary file, which never stays behind.
    assert_eq!(listing(&fixture, "src"), ["new.rs"]);
}

#[test]
fn write_keeps_the_permissions_of_the_file_it_replaces() {
    let fixture = Fixture::new();
    for (name, mode) in [
        ("script.sh", 0o750),
        ("private", 0o600),
        ("read-only", 0o444),
    ] {
        fixture.file(name, "old");
        fs::set_permissions(fixture.inside(name), fs::Permissions::from_mode(mode)).expect("chmod");
    }
    let workspace = fixture.workspace();
    for (name, mode) in [
        ("script.sh", 0o750),
        ("private", 0o600),
        ("read-only", 0o444),
    ] {
        workspace.write(name, "new").expect("write");
        let metadata = fs::metadata(fixture.inside(name)).expect("metadata");
        assert_eq!(metadata.permissions().mode() & 0o7777, mode, "{name}");
        assert_eq!(
            fs::read_to_string(fixture.inside(name)).expect("read"),
            "new"
        );
    }
}

#[test]
fn write_replaces_a_new_inode_so_open_readers_keep_the_old_contents() {
    let fixture = Fixture::new();
    fixture.file("a.txt", "old");
    let before = fs::File::open(fixture.inside("a.txt")).expect("open");
    fixture.workspace().write("a.txt", "new").expect("write");
    let mut old = String::new();
    io::Read::read_to_string(&mut &before, &mut old).expect("read the old inode");
    assert_eq!(old, "old");
}

#[test]
fn write_through_a_link_inside_replaces_the_target_and_keeps_the_link() {
    let fixture = Fixture::new();
    fixture.file("src/a.txt", "old");
    fixture.symlink("src/a.txt", "link");
    fixture.workspace().write("link", "new").expect("write");
    assert_eq!(
        fs::read_to_string(fixture.inside("src/a.txt")).expect("read"),
        "new"
    );
    assert!(
        fs::symlink_metadata(fixture.inside("link"))
            .expect("link")
            .is_symlink()
    );
}

#[test]
fn write_refuses_a_missing_directory_and_a_directory() {
    let fixture = Fixture::new();
    fixture.dir("src");
    let workspace = fixture.workspace();
    let error = workspace
        .write("nope/a.txt", "x")
        .expect_err("missing directory");
    assert!(matches!(error, Error::NotFound { .. }), "{error:?}");
    let error = workspace.write("src", "x").expect_err("a directory");
    assert_eq!(io_kind(error), io::ErrorKind::IsADirectory);
    assert!(!fixture.inside("nope").exists());
    assert!(fixture.inside("src").is_dir());
}

#[test]
fn create_new_creates_only_what_does_not_exist() {
    let fixture = Fixture::new();
    fixture.file("taken.txt", "first");
    fixture.dir("src");
    let workspace = fixture.workspace();
    workspace
        .create_new("src/fresh.txt", "fresh")
        .expect("create");
    assert_eq!(
        fs::read_to_string(fixture.inside("src/fresh.txt")).expect("read"),
        "fresh"
    );
    assert_eq!(
        listing(&fixture, "src"),
        ["fresh.txt"],
        "no temporary file stays behind"
    );
    for taken in ["taken.txt", "src"] {
        let error = workspace.create_new(taken, "again").expect_err("exists");
        assert_eq!(
            error.to_string(),
            format!("{taken}: already exists; edit it or write it instead")
        );
        assert_eq!(io_kind(error), io::ErrorKind::AlreadyExists);
    }
    assert_eq!(
        fs::read_to_string(fixture.inside("taken.txt")).expect("read"),
        "first"
    );
    let error = workspace
        .create_new("nope/a.txt", "x")
        .expect_err("missing directory");
    assert!(matches!(error, Error::NotFound { .. }), "{error:?}");
}

#[test]
fn create_dir_all_creates_missing_parents_then_create_new_fills_them() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace();
    workspace.create_dir_all("a/b/c").expect("create");
    assert!(fixture.inside("a/b/c").is_dir());
    workspace.create_dir_all("a/b/c").expect("already there");
    workspace
        .create_dir_all("a/x/../y")
        .expect("`..` cancels a missing name");
    assert!(fixture.inside("a/y").is_dir());
    assert!(!fixture.inside("a/x").exists());
    workspace
        .create_new("a/b/c/file.rs", "fn f() {}")
        .expect("create_new");
    assert_eq!(
        fs::read_to_string(fixture.inside("a/b/c/file.rs")).expect("read"),
        "fn f() {}"
    );
}

#[test]
fn create_dir_all_refuses_a_file_in_the_way() {
    let fixture = Fixture::new();
    fixture.file("file.txt", "x");
    let workspace = fixture.workspace();
    let error = workspace.create_dir_all("file.txt").expect_err("a file");
    assert!(matches!(error, Error::NotADirectory { .. }), "{error:?}");
    let error = workspace
        .create_dir_all("file.txt/sub")
        .expect_err("a file");
    assert!(matches!(error, Error::NotADirectory { .. }), "{error:?}");
}

#[test]
fn remove_file_removes_files_and_links_but_not_directories() {
    let fixture = Fixture::new();
    fixture.file("src/a.txt", "a");
    fixture.symlink("src/a.txt", "link");
    let workspace = fixture.workspace();
    workspace.remove_file("link").expect("remove the link");
    assert!(fs::symlink_metadata(fixture.inside("link")).is_err());
    assert!(fixture.inside("src/a.txt").exists(), "the target stays");
    workspace.remove_file("src/a.txt").expect("remove the file");
    assert!(!fixture.inside("src/a.txt").exists());
    let error = workspace.remove_file("src").expect_err("a directory");
    assert_eq!(io_kind(error), io::ErrorKind::IsADirectory);
    let error = workspace.remove_file("src/a.txt").expect_err("gone");
    assert!(matches!(error, Error::NotFound { .. }), "{error:?}");
}

#[test]
fn remove_file_follows_links_in_the_middle() {
    let fixture = Fixture::new();
    fixture.file("src/a.txt", "a");
    fixture.symlink("src", "s");
    fixture
        .workspace()
        .remove_file("s/a.txt")
        .expect("remove through the link");
    assert!(!fixture.inside("src/a.txt").exists());
}

#[test]
fn metadata_follows_links_and_describes_files_and_directories() {
    let fixture = Fixture::new();
    fixture.file("src/a.txt", "12345");
    fixture.file("empty", "");
    fixture.symlink("src/a.txt", "link");
    let workspace = fixture.workspace();
    let file = workspace.metadata("link").expect("metadata");
    assert!(file.is_file() && !file.is_dir() && !file.is_empty());
    assert_eq!((file.file_type(), file.len()), (FileType::File, 5));
    assert!(file.modified().is_some());
    assert!(workspace.metadata("empty").expect("metadata").is_empty());
    let dir = workspace.metadata("src").expect("metadata");
    assert!(dir.is_dir() && !dir.is_file());
    assert_eq!(dir.file_type(), FileType::Dir);
    assert!(workspace.metadata(".").expect("the root").is_dir());
    let error = workspace.metadata("missing").expect_err("missing");
    assert!(matches!(error, Error::NotFound { .. }), "{error:?}");
}

#[test]
fn read_dir_lists_sorted_names_with_their_own_types() {
    let fixture = Fixture::new();
    fixture.file("b.txt", "b");
    fixture.dir("a-dir");
    fixture.symlink("b.txt", "c-link");
    fixture.symlink("../outside/secret.txt", "d-link-out");
    let status = Command::new("mkfifo")
        .arg(fixture.inside("e-fifo"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    let workspace = fixture.workspace();
    let entries: Vec<(String, FileType)> = workspace
        .read_dir(".")
        .expect("list the root")
        .into_iter()
        .map(|entry| (entry.name().to_owned(), entry.file_type()))
        .collect();
    let expected = [
        ("a-dir", FileType::Dir),
        ("b.txt", FileType::File),
        ("c-link", FileType::Symlink),
        ("d-link-out", FileType::Symlink),
        ("e-fifo", FileType::Other),
    ];
    let expected: Vec<(String, FileType)> = expected
        .iter()
        .map(|(name, kind)| (name.to_string(), *kind))
        .collect();
    assert_eq!(entries, expected);
    assert!(
        workspace
            .read_dir("a-dir")
            .expect("empty directory")
            .is_empty()
    );
    let error = workspace.read_dir("b.txt").expect_err("a file");
    assert!(matches!(error, Error::NotADirectory { .. }), "{error:?}");
    let error = workspace.read_dir("nope").expect_err("missing");
    assert!(matches!(error, Error::NotFound { .. }), "{error:?}");
}

#[test]
fn read_dir_refuses_a_name_that_is_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let fixture = Fixture::new();
    fixture.dir("d");
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    fs::write(fixture.inside("d").join(name), "x").expect("latin-1 name");
    let error = fixture.workspace().read_dir("d").expect_err("not UTF-8");
    assert_eq!(
        error.to_string(),
        "path is not valid UTF-8: d/caf\u{fffd}.txt"
    );
}

#[test]
fn relative_names_the_normalized_workspace_path() {
    let fixture = Fixture::new();
    fixture.file("src/lib.rs", "");
    fixture.symlink("src/lib.rs", "lib");
    let workspace = fixture.workspace();
    for (candidate, relative) in [
        ("src/lib.rs", "src/lib.rs"),
        ("./src//lib.rs", "src/lib.rs"),
        ("lib", "src/lib.rs"),
        (&format!("{}/src/lib.rs", fixture.root_str()), "src/lib.rs"),
        (".", "."),
        ("src/..", "."),
        ("src/new.rs", "src/new.rs"),
    ] {
        assert_eq!(
            workspace.relative(candidate).expect("relative"),
            relative,
            "{candidate}"
        );
    }
}
