//! [`harness_sandbox::WorkspaceDir`]: listing, opening and reading through a handle.

use std::fs;

use harness_sandbox::{Error, FileType};

use crate::support::Fixture;

#[test]
fn an_open_directory_lists_opens_and_reads_by_name() {
    let fixture = Fixture::new();
    fixture.file("src/lib.rs", "lib");
    fixture.file("src/deep/a.rs", "a");
    fixture.file("src/.env", "TOKEN=1");
    let workspace = fixture.workspace();
    let root = workspace.open_dir(".").expect("the root");
    assert_eq!(root.path(), "");
    let src = root.open_dir("src").expect("src");
    assert_eq!(src.path(), "src/");
    let names: Vec<(String, FileType)> = src
        .entries()
        .expect("entries")
        .into_iter()
        .map(|entry| (entry.name().to_owned(), entry.file_type()))
        .collect();
    assert_eq!(
        names,
        [
            ("deep".to_owned(), FileType::Dir),
            ("lib.rs".to_owned(), FileType::File)
        ]
    );
    assert_eq!(src.read("lib.rs").expect("read"), b"lib");
    let metadata = src.metadata("lib.rs").expect("metadata");
    assert!(metadata.is_file());
    assert_eq!(metadata.len(), 3);
    let deep = src.open_dir("deep").expect("deep");
    assert_eq!(deep.path(), "src/deep/");
    assert_eq!(deep.read("a.rs").expect("read"), b"a");
    assert_eq!(
        workspace.open_dir("src/deep").expect("by path").path(),
        "src/deep/"
    );
}

#[test]
fn an_open_directory_refuses_protected_names_with_their_path() {
    let fixture = Fixture::new();
    fixture.file("src/.env", "TOKEN=1");
    fixture.file("src/keys.key/inner", "x");
    let workspace = fixture.workspace();
    let src = workspace.open_dir("src").expect("src");
    for (what, result) in [
        ("read", src.read(".env").map(drop)),
        ("metadata", src.metadata(".env").map(drop)),
        ("open_dir", src.open_dir("keys.key").map(drop)),
    ] {
        match result {
            Err(Error::Denied { candidate, .. }) => {
                assert!(candidate.starts_with("src/"), "{what}: {candidate}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
}

#[test]
fn an_open_directory_never_follows_a_link() {
    let fixture = Fixture::new();
    fixture.file("real/a.txt", "a");
    fixture.symlink("real", "dir-link");
    fixture.symlink("real/a.txt", "file-link");
    fixture.symlink(fixture.outside("dir"), "out");
    let workspace = fixture.workspace();
    let root = workspace.open_dir(".").expect("root");
    for name in ["dir-link", "out", "file-link"] {
        let error = root.open_dir(name).expect_err(name);
        assert!(matches!(error, Error::Io { .. }), "{name}: {error:?}");
        let error = root.read(name).expect_err(name);
        assert!(matches!(error, Error::Io { .. }), "{name}: {error:?}");
        let metadata = root.metadata(name).expect("the link's own metadata");
        assert_eq!(metadata.file_type(), FileType::Symlink, "{name}");
    }
    // A link in the candidate path is resolved by the walk, inside the workspace.
    assert_eq!(
        workspace.open_dir("dir-link").expect("resolved").path(),
        "real/"
    );
    let error = workspace.open_dir("out").expect_err("a link out");
    assert!(matches!(error, Error::Escape { .. }), "{error:?}");
}

#[test]
fn an_open_directory_takes_single_names_only() {
    let fixture = Fixture::new();
    fixture.file("sub/a.txt", "a");
    let workspace = fixture.workspace();
    let sub = workspace.open_dir("sub").expect("sub");
    for name in ["", ".", "..", "../sub/a.txt", "x/a.txt", "a\0"] {
        for (what, result) in [
            ("open_dir", sub.open_dir(name).map(drop)),
            ("read", sub.read(name).map(drop)),
            ("metadata", sub.metadata(name).map(drop)),
        ] {
            match result {
                Err(Error::Io { source, .. }) => {
                    assert_eq!(
                        source.kind(),
                        std::io::ErrorKind::InvalidInput,
                        "{what} {name:?}"
                    );
                    assert_eq!(source.to_string(), "not a single name in the directory");
                }
                other => panic!("{what} {name:?}: {other:?}"),
            }
        }
    }
}

#[test]
fn opening_what_is_not_a_directory_is_refused() {
    let fixture = Fixture::new();
    fixture.file("a.txt", "a");
    let workspace = fixture.workspace();
    let error = workspace.open_dir("a.txt").expect_err("a file");
    assert!(matches!(error, Error::NotADirectory { .. }), "{error:?}");
    let error = workspace.open_dir("missing").expect_err("missing");
    assert!(matches!(error, Error::NotFound { .. }), "{error:?}");
    let root = workspace.open_dir(".").expect("root");
    let error = root.open_dir("missing").expect_err("missing");
    assert!(matches!(error, Error::NotFound { .. }), "{error:?}");
    let error = root.open_dir("a.txt").expect_err("a file");
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
    let error = root.read("missing").expect_err("missing");
    assert!(matches!(error, Error::NotFound { .. }), "{error:?}");
    fs::create_dir(fixture.inside("d")).expect("a directory");
    let error = root.read("d").expect_err("a directory");
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
}

#[test]
fn a_listing_of_an_open_directory_names_a_bad_entry_with_its_path() {
    use std::os::unix::ffi::OsStrExt;
    let fixture = Fixture::new();
    fixture.dir("d");
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    fs::write(fixture.inside("d").join(name), "x").expect("latin-1 name");
    let workspace = fixture.workspace();
    let error = workspace
        .open_dir("d")
        .expect("d")
        .entries()
        .expect_err("not UTF-8");
    assert_eq!(
        error.to_string(),
        "path is not valid UTF-8: d/caf\u{fffd}.txt"
    );
}
