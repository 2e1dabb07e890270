//! Refusals that are not escapes: NUL bytes, overlong paths, hard links, dangling links,
//! link loops, files used as directories, names that are not UTF-8.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;

use harness_sandbox::{Error, Workspace};

use crate::support::{Fixture, OPERATIONS, SECRET};

/// Runs every operation on `candidate` and hands each error to `check`.
fn for_every_operation(workspace: &Workspace, candidate: &str, check: impl Fn(&str, Error)) {
    for (name, operation) in OPERATIONS {
        match operation(workspace, candidate) {
            Ok(()) => panic!("{name}({candidate:?}) should fail"),
            Err(error) => check(name, error),
        }
    }
}

#[test]
fn a_nul_byte_is_refused_by_every_operation() {
    let fixture = Fixture::new();
    fixture.file("a", "inside");
    let workspace = fixture.workspace();
    let before = fixture.outside_snapshot();
    for candidate in [
        "a\0b",
        "\0",
        "../outside/secret.txt\0",
        "a/\0/../../outside",
    ] {
        for_every_operation(&workspace, candidate, |name, error| {
            assert!(
                matches!(error, Error::Nul { .. }),
                "{name}({candidate:?}): {error:?}"
            );
            assert!(
                error.to_string().starts_with("path contains a NUL byte: "),
                "{error}"
            );
        });
    }
    assert_eq!(fixture.outside_snapshot(), before);
    assert_eq!(
        fs::read_to_string(fixture.inside("a")).expect("a"),
        "inside"
    );
}

#[test]
fn a_path_over_the_limit_is_refused_by_every_operation() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace();
    let at_limit = "a/".repeat(2048);
    assert_eq!(at_limit.len(), 4096);
    // At the limit the path is walked (and found missing); one byte more is refused.
    assert!(matches!(
        workspace.read(&at_limit),
        Err(Error::NotFound { .. })
    ));
    let over = format!("{at_limit}b");
    for_every_operation(&workspace, &over, |name, error| {
        assert!(
            matches!(error, Error::TooLong { len: 4097 }),
            "{name}: {error:?}"
        );
        assert_eq!(
            error.to_string(),
            "path is 4097 bytes long; paths are limited to 4096 bytes"
        );
    });
    let traversal = format!("{}etc/passwd", "../".repeat(2000));
    for_every_operation(&workspace, &traversal, |name, error| {
        assert!(matches!(error, Error::TooLong { .. }), "{name}: {error:?}");
    });
}

#[test]
fn a_name_longer_than_the_system_allows_is_an_io_error_for_every_operation() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace();
    let candidate = "x".repeat(300);
    for_every_operation(&workspace, &candidate, |name, error| match error {
        Error::Io { source, .. } => {
            assert_eq!(source.kind(), io::ErrorKind::InvalidFilename, "{name}");
        }
        other => panic!("{name}: {other:?}"),
    });
    assert_eq!(fs::read_dir(&fixture.root).expect("the root").count(), 0);
}

#[test]
fn writing_through_a_hard_link_is_refused() {
    let fixture = Fixture::new();
    fs::hard_link(fixture.outside("secret.txt"), fixture.inside("linked.txt")).expect("hard link");
    let workspace = fixture.workspace();
    let error = workspace
        .write("linked.txt", "overwritten")
        .expect_err("two links");
    assert!(
        matches!(error, Error::HardLink { links: 2, .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "refusing to write linked.txt: the file has 2 hard links, and another of its names \
         may be outside the workspace or a file the workspace protects"
    );
    let error = workspace
        .check("linked.txt", harness_sandbox::Access::Write)
        .expect_err("check");
    assert!(matches!(error, Error::HardLink { .. }), "{error:?}");
    assert_eq!(
        fs::read(fixture.outside("secret.txt")).expect("the secret"),
        SECRET
    );
    assert_eq!(
        fs::read(fixture.inside("linked.txt")).expect("the link"),
        SECRET
    );
}

#[test]
fn a_file_with_one_link_is_written() {
    let fixture = Fixture::new();
    fixture.file("single.txt", "old");
    fixture
        .workspace()
        .write("single.txt", "new")
        .expect("one link");
    assert_eq!(
        fs::read_to_string(fixture.inside("single.txt")).expect("read"),
        "new"
    );
}

#[test]
fn allowed_hard_link_writes_replace_the_name_and_leave_the_other_alone() {
    let fixture = Fixture::new();
    fs::hard_link(fixture.outside("secret.txt"), fixture.inside("linked.txt")).expect("hard link");
    let workspace = Workspace::builder(&fixture.root)
        .allow_hard_link_writes(true)
        .build()
        .expect("workspace");
    workspace.write("linked.txt", "replaced").expect("allowed");
    assert_eq!(
        fs::read_to_string(fixture.inside("linked.txt")).expect("read"),
        "replaced"
    );
    // The write renamed a new file over the name: the other name keeps the old inode.
    assert_eq!(
        fs::read(fixture.outside("secret.txt")).expect("the secret"),
        SECRET
    );
}

#[test]
fn removing_a_hard_link_removes_only_the_name_inside() {
    let fixture = Fixture::new();
    fs::hard_link(fixture.outside("secret.txt"), fixture.inside("linked.txt")).expect("hard link");
    fixture
        .workspace()
        .remove_file("linked.txt")
        .expect("removing a name is not writing");
    assert!(!fixture.inside("linked.txt").exists());
    assert_eq!(
        fs::read(fixture.outside("secret.txt")).expect("the secret"),
        SECRET
    );
}

#[test]
fn creating_through_a_dangling_link_inside_is_refused() {
    let fixture = Fixture::new();
    fixture.symlink("missing.txt", "dl");
    fixture.symlink("missing-dir", "dd");
    let workspace = fixture.workspace();
    // The link resolves, to the path it would create.
    assert_eq!(workspace.relative("dl").expect("relative"), "missing.txt");
    let writes: [(&str, &str, Result<(), Error>); 4] = [
        ("write", "dl", workspace.write("dl", "x")),
        ("create_new", "dl", workspace.create_new("dl", "x")),
        ("create_dir_all", "dd", workspace.create_dir_all("dd")),
        (
            "create_dir_all",
            "dd/sub",
            workspace.create_dir_all("dd/sub"),
        ),
    ];
    for (name, candidate, result) in writes {
        match result {
            Err(error @ Error::DanglingSymlink { .. }) => assert!(
                error.to_string().starts_with(&format!(
                    "refusing to write {candidate}: it goes through a dangling symbolic link \
                     and would create missing"
                )),
                "{name}: {error}"
            ),
            other => panic!("{name}({candidate}): {other:?}"),
        }
    }
    assert!(!fixture.inside("missing.txt").exists());
    assert!(!fixture.inside("missing-dir").exists());
    for (name, candidate) in [("read", "dl"), ("metadata", "dl"), ("read_dir", "dd")] {
        let result = match name {
            "read" => workspace.read(candidate).map(drop),
            "metadata" => workspace.metadata(candidate).map(drop),
            _ => workspace.read_dir(candidate).map(drop),
        };
        assert!(
            matches!(result, Err(Error::NotFound { .. })),
            "{name}: {result:?}"
        );
    }
    // Removing the dangling link removes the link.
    workspace.remove_file("dl").expect("remove the link");
    assert!(fs::symlink_metadata(fixture.inside("dl")).is_err());
}

#[test]
fn a_missing_name_after_a_link_to_a_real_directory_is_not_dangling() {
    let fixture = Fixture::new();
    fixture.dir("real");
    fixture.symlink("real", "d");
    let workspace = fixture.workspace();
    workspace
        .write("d/new.txt", "new")
        .expect("the directory exists");
    workspace
        .create_dir_all("d/sub/deeper")
        .expect("below an existing directory");
    assert_eq!(
        fs::read_to_string(fixture.inside("real/new.txt")).expect("read"),
        "new"
    );
    assert!(fixture.inside("real/sub/deeper").is_dir());
}

#[test]
fn allowed_dangling_link_writes_create_the_target_inside() {
    let fixture = Fixture::new();
    fixture.symlink("missing.txt", "dl");
    fixture.symlink("missing-dir", "dd");
    let workspace = Workspace::builder(&fixture.root)
        .allow_dangling_symlink_writes(true)
        .build()
        .expect("workspace");
    workspace.write("dl", "through").expect("allowed");
    workspace.create_dir_all("dd/sub").expect("allowed");
    assert_eq!(
        fs::read_to_string(fixture.inside("missing.txt")).expect("read"),
        "through"
    );
    assert!(fixture.inside("missing-dir/sub").is_dir());
}

#[test]
fn a_link_loop_is_refused_by_every_operation() {
    let fixture = Fixture::new();
    fixture.symlink("loop", "loop");
    fixture.symlink("pong", "ping");
    fixture.symlink("ping", "pong");
    let workspace = fixture.workspace();
    for candidate in ["loop/x", "ping/x"] {
        for_every_operation(&workspace, candidate, |name, error| {
            assert!(
                matches!(error, Error::SymlinkLoop { .. }),
                "{name}: {error:?}"
            );
            assert_eq!(
                error.to_string(),
                format!("too many levels of symbolic links: {candidate}")
            );
        });
    }
}

#[test]
fn forty_links_are_followed_and_forty_one_are_not() {
    let fixture = Fixture::new();
    fixture.file("target.txt", "end of the chain");
    fixture.symlink("target.txt", "l40");
    for n in (0..40).rev() {
        fixture.symlink(format!("l{}", n + 1), &format!("l{n}"));
    }
    let workspace = fixture.workspace();
    // l1 → … → l40 → target.txt: 40 links.
    assert_eq!(
        workspace.read_to_string("l1").expect("40 links"),
        "end of the chain"
    );
    // l0 adds one more.
    let error = workspace.read("l0").expect_err("41 links");
    assert!(matches!(error, Error::SymlinkLoop { .. }), "{error:?}");
}

#[test]
fn a_file_used_as_a_directory_is_refused_by_every_operation() {
    let fixture = Fixture::new();
    fixture.file("file.txt", "a file");
    let workspace = fixture.workspace();
    for candidate in ["file.txt/x", "file.txt/..", "file.txt/x/../.."] {
        for_every_operation(&workspace, candidate, |name, error| {
            assert!(
                matches!(error, Error::NotADirectory { .. }),
                "{name}({candidate}): {error:?}"
            );
            assert_eq!(
                error.to_string(),
                format!("not a directory: {candidate} (a component of the path is a file)")
            );
        });
    }
    assert_eq!(
        fs::read_to_string(fixture.inside("file.txt")).expect("read"),
        "a file"
    );
}

#[test]
fn a_link_target_that_is_not_utf8_is_refused() {
    let fixture = Fixture::new();
    let target = OsStr::from_bytes(b"caf\xe9");
    std::os::unix::fs::symlink(target, fixture.inside("latin1")).expect("symlink");
    let workspace = fixture.workspace();
    for_every_operation(&workspace, "latin1/x", |name, error| {
        assert!(matches!(error, Error::NotUtf8 { .. }), "{name}: {error:?}");
        assert_eq!(error.to_string(), "path is not valid UTF-8: caf\u{fffd}");
    });
}
