//! Every path-taking operation refuses every escape class of the workspace,
//! as the workspace's own [`Escape`](harness_sandbox::Error::Escape) error,
//! and nothing outside the workspace changes.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use harness_edit::{Editor, Error, Overwrite};
use harness_sandbox::Workspace;
use tempfile::TempDir;

/// ```text
/// tmp/
///   work/                  the workspace root
///     inside.txt
///     link -> ../outside/secret.txt
///     dirlink -> ../outside
///     dangling -> ../outside/new.txt   (does not exist)
///   outside/secret.txt
///   work-evil/f.txt        a sibling whose name starts with the root's
/// ```
struct Tree {
    tmp: TempDir,
    workspace: Workspace,
}

impl Tree {
    fn new() -> Tree {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        let base = tmp.path();
        for dir in ["work", "outside", "work-evil"] {
            fs::create_dir(base.join(dir)).expect("a directory");
        }
        fs::write(base.join("work/inside.txt"), "inside\n").expect("a file");
        fs::write(base.join("outside/secret.txt"), "secret\n").expect("a file");
        fs::write(base.join("work-evil/f.txt"), "evil\n").expect("a file");
        symlink("../outside/secret.txt", base.join("work/link")).expect("a symlink");
        symlink("../outside", base.join("work/dirlink")).expect("a symlink");
        symlink("../outside/new.txt", base.join("work/dangling")).expect("a symlink");
        let workspace = Workspace::new(base.join("work")).expect("a workspace");
        Tree { tmp, workspace }
    }

    /// Every file outside the workspace with its bytes and mode.
    fn outside(&self) -> BTreeMap<PathBuf, (Vec<u8>, u32)> {
        let mut files = BTreeMap::new();
        for dir in ["outside", "work-evil"] {
            collect(&self.tmp.path().join(dir), &mut files);
        }
        files
    }

    fn canonical(&self, relative: &str) -> String {
        let base = self.tmp.path().canonicalize().expect("a canonical path");
        format!("{}/{relative}", base.display())
    }
}

fn collect(dir: &Path, files: &mut BTreeMap<PathBuf, (Vec<u8>, u32)>) {
    for entry in fs::read_dir(dir).expect("a listing") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            let mode = fs::metadata(&path).expect("metadata").permissions().mode();
            files.insert(path.clone(), (fs::read(&path).expect("a file"), mode));
        }
    }
}

/// Runs every operation on `candidate` and checks each is an escape that
/// changed nothing outside.
fn assert_every_operation_escapes(candidate: &str) {
    let tree = Tree::new();
    let before = tree.outside();
    let editor = Editor::new(&tree.workspace);
    type Operation<'a> = (&'static str, Box<dyn Fn() -> Result<(), Error> + 'a>);
    let operations: Vec<Operation<'_>> = vec![
        (
            "view",
            Box::new(|| editor.view(candidate, None, None).map(drop)),
        ),
        (
            "replace",
            Box::new(|| editor.replace(candidate, "secret", "changed").map(drop)),
        ),
        (
            "insert",
            Box::new(|| editor.insert(candidate, 0, "changed").map(drop)),
        ),
        (
            "create",
            Box::new(|| editor.create(candidate, "changed\n").map(drop)),
        ),
        (
            "write",
            Box::new(|| {
                editor
                    .write(candidate, "changed\n", Overwrite::No)
                    .map(drop)
            }),
        ),
        (
            "write with overwrite",
            Box::new(|| {
                editor
                    .write(candidate, "changed\n", Overwrite::Yes)
                    .map(drop)
            }),
        ),
    ];
    for (name, operation) in operations {
        match operation() {
            Err(Error::Workspace(harness_sandbox::Error::Escape { candidate: c, .. })) => {
                assert_eq!(c, candidate, "{name} names the path as given");
            }
            other => panic!("{name} of {candidate:?}: expected an escape, got {other:?}"),
        }
        assert_eq!(
            tree.outside(),
            before,
            "{name} of {candidate:?} changed the outside"
        );
    }
    assert!(!tree.tmp.path().join("outside/new.txt").exists());
}

#[test]
fn relative_traversal() {
    assert_every_operation_escapes("../outside/secret.txt");
}

#[test]
fn relative_traversal_deep() {
    assert_every_operation_escapes("../../../../../../etc/passwd");
}

#[test]
fn absolute_path_outside() {
    let tree = Tree::new();
    assert_every_operation_escapes(&tree.canonical("outside/secret.txt"));
}

#[test]
fn absolute_system_path() {
    assert_every_operation_escapes("/etc/passwd");
}

#[test]
fn symlink_to_a_file_outside() {
    assert_every_operation_escapes("link");
}

#[test]
fn symlink_to_a_directory_outside_as_a_middle_component() {
    assert_every_operation_escapes("dirlink/secret.txt");
}

#[test]
fn new_file_through_a_symlinked_directory() {
    assert_every_operation_escapes("dirlink/new.txt");
}

#[test]
fn sibling_with_the_root_as_prefix() {
    assert_every_operation_escapes("../work-evil/f.txt");
}

#[test]
fn sibling_with_the_root_as_prefix_absolute() {
    let tree = Tree::new();
    assert_every_operation_escapes(&tree.canonical("work-evil/f.txt"));
}

#[test]
fn dangling_symlink_out() {
    assert_every_operation_escapes("dangling");
}

#[test]
fn traversal_after_a_missing_directory() {
    assert_every_operation_escapes("missing/../../outside/new.txt");
}

#[test]
fn the_tree_allows_what_is_inside() {
    // The fixture itself is sound: the same editor edits inside the root.
    let tree = Tree::new();
    let editor = Editor::new(&tree.workspace);
    editor
        .replace("inside.txt", "inside", "still inside")
        .expect("inside the workspace");
    assert_eq!(
        fs::read_to_string(tree.tmp.path().join("work/inside.txt")).expect("a file"),
        "still inside\n"
    );
}
