//! Opening a workspace, and refusing one that contains the harness.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;

use harness_sandbox::{Error, Workspace};

use crate::support::Fixture;

#[test]
fn the_root_is_canonicalized() {
    let fixture = Fixture::new();
    std::os::unix::fs::symlink(&fixture.root, fixture.base.join("alias")).expect("symlink");
    let through_alias =
        Workspace::new(fixture.base.join("alias/.")).expect("a link to a directory");
    assert_eq!(through_alias.root(), fixture.root);
    let dotted = Workspace::new(fixture.base.join("outside/../work")).expect("dotdot");
    assert_eq!(dotted.root(), fixture.root);
}

#[test]
fn a_missing_root_is_refused_and_not_created() {
    let fixture = Fixture::new();
    let missing = fixture.base.join("missing");
    let error = Workspace::new(&missing).expect_err("missing");
    assert_eq!(
        error.to_string(),
        format!(
            "workspace root {} is not usable: it does not exist (a workspace is never created)",
            missing.display()
        )
    );
    assert!(!missing.exists());
}

#[test]
fn a_file_as_root_is_refused() {
    let fixture = Fixture::new();
    let file = fixture.outside("secret.txt");
    let error = Workspace::new(&file).expect_err("a file");
    assert!(
        matches!(
            &error,
            Error::InvalidRoot {
                reason: "it is not a directory",
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn a_root_that_is_not_utf8_is_refused() {
    let fixture = Fixture::new();
    let root = fixture.base.join(OsStr::from_bytes(b"caf\xe9"));
    fs::create_dir(&root).expect("latin-1 directory");
    let error = Workspace::new(&root).expect_err("not UTF-8");
    assert!(
        matches!(&error, Error::NotUtf8 { path } if path.ends_with("caf\u{fffd}")),
        "{error:?}"
    );
}

#[test]
fn a_root_that_cannot_be_canonicalized_is_an_io_error() {
    let fixture = Fixture::new();
    // A path through a file: canonicalize fails with "not a directory", not "not found".
    let error = Workspace::new(fixture.outside("secret.txt/x")).expect_err("through a file");
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
}

#[test]
fn ensure_not_within_refuses_paths_inside_the_workspace() {
    let fixture = Fixture::new();
    fixture.file("harness/src/main.rs", "fn main() {}");
    let workspace = fixture.workspace();
    for inside in [
        fixture.inside("harness/src/main.rs"),
        fixture.inside("harness"),
        fixture.root.clone(),
    ] {
        let error = workspace.ensure_not_within(&inside).expect_err("inside");
        assert_eq!(
            error.to_string(),
            format!(
                "the workspace {} contains {}; choose a workspace that does not contain the \
                 harness itself, or the agent could rewrite its own rules",
                fixture.root.display(),
                inside.display()
            )
        );
        let io: std::io::Error = error.into();
        assert_eq!(io.kind(), std::io::ErrorKind::PermissionDenied);
    }
    // Spelled through a link, it is still inside.
    std::os::unix::fs::symlink(fixture.inside("harness"), fixture.base.join("h")).expect("link");
    let error = workspace
        .ensure_not_within(fixture.base.join("h/src"))
        .expect_err("inside");
    assert!(matches!(error, Error::Within { .. }), "{error:?}");
}

#[test]
fn ensure_not_within_accepts_paths_outside_and_missing_ones() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace();
    workspace
        .ensure_not_within(fixture.outside("secret.txt"))
        .expect("outside");
    workspace
        .ensure_not_within(fixture.base.join("work-evil/f.txt"))
        .expect("a sibling prefix");
    workspace
        .ensure_not_within(&fixture.base)
        .expect("the parent");
    workspace
        .ensure_not_within(fixture.inside("not/there"))
        .expect("nothing to protect");
    let error = workspace
        .ensure_not_within(fixture.outside("secret.txt/x"))
        .expect_err("through a file");
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
}

#[test]
fn one_workspace_serves_several_threads() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace();
    std::thread::scope(|scope| {
        for n in 0..4 {
            let workspace = &workspace;
            scope.spawn(move || {
                let name = format!("thread-{n}.txt");
                workspace.write(&name, format!("{n}")).expect("write");
                assert_eq!(
                    workspace.read_to_string(&name).expect("read"),
                    format!("{n}")
                );
            });
        }
    });
    assert_eq!(fs::read_dir(&fixture.root).expect("list").count(), 4);
}
