//! Files with more than one hard link are not read: another name may be outside the
//! workspace, or a file the rules protect.

use std::fs;

use harness_sandbox::{Access, Error, Workspace};

use crate::support::{Fixture, SECRET};

/// Every way the workspace reads a file's contents, on `candidate`.
fn every_read(workspace: &Workspace, candidate: &str) -> Vec<(&'static str, Result<(), Error>)> {
    let (parent, name) = candidate.rsplit_once('/').unwrap_or((".", candidate));
    vec![
        ("read", workspace.read(candidate).map(drop)),
        (
            "read_to_string",
            workspace.read_to_string(candidate).map(drop),
        ),
        (
            "check read",
            workspace.check(candidate, Access::Read).map(drop),
        ),
        (
            "open_dir then read",
            workspace
                .open_dir(parent)
                .and_then(|dir| dir.read(name))
                .map(drop),
        ),
    ]
}

#[test]
fn a_hard_link_to_a_file_outside_is_not_read() {
    let fixture = Fixture::new();
    fixture.dir("sub");
    fs::hard_link(
        fixture.outside("secret.txt"),
        fixture.inside("sub/linked.txt"),
    )
    .expect("hard link");
    let workspace = fixture.workspace();
    for (name, result) in every_read(&workspace, "sub/linked.txt") {
        match result {
            Err(
                error @ Error::HardLink {
                    links: 2,
                    access: Access::Read,
                    ..
                },
            ) => {
                let message = error.to_string();
                assert!(
                    message
                        .starts_with("refusing to read sub/linked.txt: the file has 2 hard links"),
                    "{name}: {message}"
                );
                assert!(
                    message.ends_with(
                        "another of its names may be outside the workspace or a file the \
                         workspace protects"
                    ),
                    "{name}: {message}"
                );
                let io: std::io::Error = error.into();
                assert_eq!(io.kind(), std::io::ErrorKind::PermissionDenied);
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    // Its size and type are not its contents.
    assert!(
        workspace
            .metadata("sub/linked.txt")
            .expect("metadata")
            .is_file()
    );
}

#[test]
fn a_hard_link_to_a_protected_file_is_not_read() {
    let fixture = Fixture::new();
    fixture.file(".env", "DATABASE_URL=postgres://app:hunter2@db/app\n");
    fs::hard_link(fixture.inside(".env"), fixture.inside("notes.txt")).expect("hard link");
    let workspace = fixture.workspace();
    for (name, result) in every_read(&workspace, "notes.txt") {
        assert!(
            matches!(result, Err(Error::HardLink { links: 2, .. })),
            "{name}: {result:?}"
        );
    }
}

#[test]
fn a_file_with_one_link_is_read_by_every_read() {
    let fixture = Fixture::new();
    fixture.file("sub/single.txt", "single");
    let workspace = fixture.workspace();
    for (name, result) in every_read(&workspace, "sub/single.txt") {
        assert!(result.is_ok(), "{name}: {result:?}");
    }
}

#[test]
fn hard_link_reads_can_be_allowed() {
    let fixture = Fixture::new();
    fs::hard_link(fixture.outside("secret.txt"), fixture.inside("linked.txt")).expect("link");
    let workspace = Workspace::builder(&fixture.root)
        .allow_hard_link_reads(true)
        .build()
        .expect("workspace");
    assert_eq!(workspace.read("linked.txt").expect("allowed"), SECRET);
    assert_eq!(
        workspace
            .open_dir(".")
            .expect("root")
            .read("linked.txt")
            .expect("allowed"),
        SECRET
    );
    workspace
        .check("linked.txt", Access::Read)
        .expect("allowed");
    // Reading is allowed, writing still is not.
    let error = workspace.write("linked.txt", "x").expect_err("write");
    assert!(
        matches!(
            error,
            Error::HardLink {
                access: Access::Write,
                ..
            }
        ),
        "{error:?}"
    );
    let writable = Workspace::builder(&fixture.root)
        .allow_hard_link_writes(true)
        .build()
        .expect("workspace");
    let error = writable
        .read("linked.txt")
        .expect_err("reading is still refused");
    assert!(
        matches!(
            error,
            Error::HardLink {
                access: Access::Read,
                ..
            }
        ),
        "{error:?}"
    );
}
