//! What the Landlock tier cannot refuse and the runner puts back after each command: the
//! workspace's kept paths (its `.git`, the names the caller protects, the git directories
//! of repositories in it, the hooks path) and the places of its hidden paths.
//!
//! Landlock grants by hierarchy and cannot take a subtree back. For ordinary work at the
//! top of the workspace (`touch new.txt`, `rm old.txt`, a first `cargo build`'s `target/`)
//! the top itself is granted making, writing, renaming and removing entries, and with it
//! everything below: `.git/hooks/pre-commit`, `.git/config` (a `core.fsmonitor`),
//! `harness.toml`. So, under Landlock only, the runner records each kept path before the
//! command (every file's content and mode, each directory and link; not a git directory's
//! `objects/` and `lfs/`, which git names by their content) and, once the command and
//! everything it started are gone, puts back what changed, recreates what was removed,
//! moves aside what was added (as `<name>.refused-N`, which git never reads), and moves a
//! kept path that was renamed back where it was. Each is a [`Repaired`] the outcome reports.
//!
//! A git directory's object store (the repository's history) is too large to copy at every
//! command, but a file removed while a process holds it open is still readable through
//! that handle: the runner holds each file of it open across the command (within
//! [`HELD_OBJECTS`] files) and writes back, from that handle, each one removed or replaced
//! (`rm -rf .git` takes nothing for good). One rewritten in place (made writable with
//! `chmod`, then written) reads through the handle as rewritten: that is said, not undone.
//!
//! A hidden path's content stays unreadable, but its name can now be changed: `ln .env
//! notes.txt` or `mv .env notes.txt` at the top would give it a name the next command, and
//! the file tools, read. Landlock itself refuses a move or link into a directory where the
//! file could be read (a rename must not gain access), so such a name is at the top, in a
//! directory made there, or in a hidden directory. The runner finds each hidden file and
//! directory by its identity after the command (within [`WALK_LIMIT`](super::WALK_LIMIT) entries) and puts it
//! back: another name of a file still in place is removed (the content is still there; a
//! name it had before the command, the user's own hard link, is left), a renamed one is
//! renamed back.
//!
//! One file per step: `repair/kept.rs` records a kept path and puts it back,
//! `repair/objects.rs` holds an object store open and writes back what was removed,
//! `repair/names.rs` finds a path by its identity and renames it back or removes another
//! name; `repair/repaired.rs` is what each reports.

mod kept;
mod names;
mod objects;
mod repaired;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use self::kept::{Budget, Node, Tree, repair_tree, take, under};
use self::names::{HiddenEntry, collect_identities, identity, identity_at, names_in, rename_back};
pub use self::objects::HELD_OBJECTS;
use self::objects::{Held, hold};
pub use self::repaired::{Change, RECORD_BYTES, RECORD_ENTRIES, Repaired};

/// The kept paths and the hidden ones as they were when a command started.
#[derive(Clone, Debug, Default)]
pub(crate) struct Record {
    workspace: PathBuf,
    trees: Vec<Tree>,
    /// The object stores of the git directories among them, held open.
    held: Vec<Held>,
    /// Each hidden path, what stood there and its number of names.
    hidden: Vec<HiddenEntry>,
    /// The budget ran out: the first tree not recorded whole, nothing past it.
    truncated: Option<PathBuf>,
    /// The names hidden files already had elsewhere in the workspace (the user's own hard
    /// links): never taken for names a command gave them.
    named_before: HashSet<PathBuf>,
}

/// Records `kept` (the kept paths in `workspace`, those outside it are left out) and
/// `hidden` (hidden paths in it, as they are now).
pub(crate) fn record(workspace: &Path, kept: &[PathBuf], hidden: &[PathBuf]) -> Record {
    let mut inside: Vec<&PathBuf> = kept
        .iter()
        .filter(|path| path.starts_with(workspace) && *path != workspace)
        .collect();
    inside.sort();
    inside.dedup();
    let mut budget = Budget {
        entries: RECORD_ENTRIES,
        bytes: RECORD_BYTES,
    };
    let mut record = Record {
        workspace: workspace.to_owned(),
        ..Record::default()
    };
    let mut taken: Vec<PathBuf> = Vec::new();
    for path in inside {
        // A kept path inside another (a submodule's git directory in `.git/modules`) is
        // recorded with it.
        if taken.iter().any(|outer| path.starts_with(outer)) {
            continue;
        }
        let mut nodes = BTreeMap::new();
        if !take(path, Path::new(""), &mut nodes, &mut budget) {
            record.truncated = Some(path.clone());
        }
        record.trees.push(Tree {
            path: path.clone(),
            identity: identity(path),
            nodes,
        });
        taken.push(path.clone());
        if record.truncated.is_some() {
            break;
        }
    }
    for path in hidden.iter().filter(|path| path.starts_with(workspace)) {
        collect_identities(path, &mut record.hidden, &mut budget);
    }
    record.named_before = names_before(&record.hidden, workspace);
    let mut room = HELD_OBJECTS;
    for tree in &record.trees {
        for (relative, _) in tree.nodes.iter().filter(|(relative, node)| {
            matches!(node, Node::Dir { .. }) && tree.nodes.contains_key(&relative.join("HEAD"))
        }) {
            let store = under(&tree.path, relative).join("objects");
            let (held, complete) = hold(&store, &mut room);
            if !complete {
                record.truncated.get_or_insert(store.clone());
            }
            record.held.push(held);
        }
    }
    record
}

/// Puts back what the command changed of `record`, once every process of it is gone.
pub(crate) fn repair(record: &Record) -> Vec<Repaired> {
    let mut repaired = Vec::new();
    let wanted: HashSet<(u64, u64)> = record
        .trees
        .iter()
        .filter_map(|tree| tree.identity)
        .chain(record.hidden.iter().map(|hidden| hidden.identity))
        .collect();
    // Only a path no longer where it was, or a file with more names than it had, has a
    // name elsewhere: the workspace is walked for it then only.
    let moved = record
        .trees
        .iter()
        .any(|tree| tree.identity.is_some() && identity_at(&tree.path) != tree.identity);
    let linked = record.hidden.iter().any(|hidden| {
        hidden.path.symlink_metadata().ok().is_none_or(|now| {
            (now.dev(), now.ino()) != hidden.identity || now.nlink() > hidden.links
        })
    });
    let names = if moved || linked {
        names_in(&record.workspace, &wanted)
    } else {
        HashMap::new()
    };
    let elsewhere = |path: &Path, identity: (u64, u64)| -> Vec<PathBuf> {
        names
            .get(&identity)
            .map(|found| {
                found
                    .iter()
                    .filter(|name| *name != path && !record.named_before.contains(*name))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    for tree in &record.trees {
        // Renamed whole (`mv .git g`): renamed back before its content is looked at.
        if let Some(identity) = tree.identity
            && identity_at(&tree.path) != Some(identity)
            && let Some(moved) = elsewhere(&tree.path, identity).into_iter().next()
        {
            repaired.push(Repaired {
                path: tree.path.clone(),
                result: rename_back(&moved, &tree.path),
                change: Change::Renamed(moved),
            });
        }
        repair_tree(tree, &mut repaired);
    }
    // After the git directories are back where they were (a renamed one took its
    // objects with it).
    for held in &record.held {
        objects::put_back(held, &mut repaired);
    }
    names::put_back(&record.hidden, elsewhere, &mut repaired);
    if let Some(path) = &record.truncated {
        repaired.push(Repaired {
            path: path.clone(),
            change: Change::NotRecorded,
            result: Err("not recorded whole".to_owned()),
        });
    }
    repaired
}

/// The other names, in `workspace`, of the hidden files that had more than one before the
/// command: the workspace is walked for them only when there are such files.
fn names_before(hidden: &[HiddenEntry], workspace: &Path) -> HashSet<PathBuf> {
    let shared: HashSet<(u64, u64)> = hidden
        .iter()
        .filter(|hidden| {
            hidden.links > 1
                && hidden
                    .path
                    .symlink_metadata()
                    .is_ok_and(|now| !now.is_dir())
        })
        .map(|hidden| hidden.identity)
        .collect();
    if shared.is_empty() {
        return HashSet::new();
    }
    let hidden_paths: HashSet<&Path> = hidden.iter().map(|hidden| hidden.path.as_path()).collect();
    names_in(workspace, &shared)
        .into_values()
        .flatten()
        .filter(|name| !hidden_paths.contains(name.as_path()))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// Each repair as (path, change, result), in path order.
    fn changes(repaired: &[Repaired]) -> Vec<(PathBuf, Change, Result<(), String>)> {
        let mut changes: Vec<_> = repaired
            .iter()
            .map(|r| (r.path.clone(), r.change.clone(), r.result.clone()))
            .collect();
        changes.sort_by(|a, b| a.0.cmp(&b.0));
        changes
    }

    fn repo(root: &Path) {
        for dir in [
            ".git/hooks",
            ".git/refs/heads",
            ".git/objects/ab",
            ".git/info",
        ] {
            std::fs::create_dir_all(root.join(dir)).expect("mkdir");
        }
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
        std::fs::write(root.join(".git/config"), "[core]\n").expect("config");
        std::fs::write(root.join(".git/refs/heads/main"), "1234\n").expect("ref");
        std::fs::write(root.join(".git/objects/ab/cd"), "object").expect("object");
        std::fs::write(root.join("harness.toml"), "verify = \"x\"\n").expect("toml");
    }

    #[test]
    fn what_a_command_changes_in_a_kept_path_is_put_back_and_reported() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        repo(&root);
        let kept = [root.join(".git"), root.join("harness.toml")];
        let before = record(&root, &kept, &[]);
        assert!(before.truncated.is_none());
        std::fs::write(root.join(".git/config"), "[core]\nfsmonitor = evil\n").expect("w");
        std::fs::write(root.join(".git/hooks/pre-commit"), "evil").expect("w");
        std::fs::remove_file(root.join(".git/refs/heads/main")).expect("rm");
        std::fs::set_permissions(
            root.join(".git/HEAD"),
            std::fs::Permissions::from_mode(0o777),
        )
        .expect("chmod");
        std::fs::write(root.join("harness.toml"), "verify = \"true\"\n").expect("w");
        // Objects are git's, by their content: not looked at.
        std::fs::write(root.join(".git/objects/ab/ef"), "new object").expect("w");
        let repaired = repair(&before);
        let changes = changes(&repaired);
        assert_eq!(
            changes,
            [
                (root.join(".git/HEAD"), Change::Changed, Ok(())),
                (root.join(".git/config"), Change::Changed, Ok(())),
                (
                    root.join(".git/hooks/pre-commit"),
                    Change::Added(root.join(".git/hooks/pre-commit.refused-1")),
                    Ok(())
                ),
                (root.join(".git/refs/heads/main"), Change::Removed, Ok(())),
                (root.join("harness.toml"), Change::Changed, Ok(())),
            ]
        );
        assert_eq!(
            std::fs::read_to_string(root.join(".git/config")).expect("r"),
            "[core]\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join(".git/refs/heads/main")).expect("r"),
            "1234\n"
        );
        assert!(!root.join(".git/hooks/pre-commit").exists());
        assert!(root.join(".git/objects/ab/ef").exists());
        assert_eq!(
            root.join(".git/HEAD")
                .metadata()
                .expect("HEAD")
                .permissions()
                .mode()
                & 0o777,
            0o644
        );
        let again = repair(&before);
        assert_eq!(
            again.len(),
            1,
            "only what was moved aside is new: {again:?}"
        );
        assert!(repair(&record(&root, &kept, &[])).is_empty());
    }

    #[test]
    fn a_kept_directory_renamed_away_is_renamed_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        repo(&root);
        let before = record(&root, &[root.join(".git")], &[]);
        std::fs::rename(root.join(".git"), root.join("g")).expect("mv");
        std::fs::create_dir_all(root.join(".git/hooks")).expect("mkdir");
        let repaired = repair(&before);
        assert_eq!(repaired[0].change, Change::Renamed(root.join("g")));
        assert_eq!(repaired[0].result, Ok(()));
        assert!(root.join(".git/objects/ab/cd").exists(), "{repaired:?}");
        assert!(!root.join("g").exists());
        assert!(root.join(".git.refused-1/hooks").is_dir());
    }

    #[test]
    fn a_hidden_file_keeps_no_other_name_and_a_renamed_one_comes_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(root.join("secrets")).expect("mkdir");
        std::fs::write(root.join(".env"), "A=1").expect("w");
        std::fs::write(root.join("secrets/key"), "k").expect("w");
        let before = record(&root, &[], &[root.join(".env"), root.join("secrets")]);
        std::fs::hard_link(root.join(".env"), root.join("notes.txt")).expect("ln");
        std::fs::create_dir_all(root.join("new/deep")).expect("mkdir");
        std::fs::rename(root.join("secrets/key"), root.join("new/deep/k")).expect("mv");
        std::fs::rename(root.join("secrets"), root.join("s")).expect("mv");
        let repaired = repair(&before);
        let changes = changes(&repaired);
        assert_eq!(
            changes,
            [
                (
                    root.join(".env"),
                    Change::Linked(root.join("notes.txt")),
                    Ok(())
                ),
                (
                    root.join("secrets"),
                    Change::Renamed(root.join("s")),
                    Ok(())
                ),
                (
                    root.join("secrets/key"),
                    Change::Renamed(root.join("new/deep/k")),
                    Ok(())
                ),
            ]
        );
        assert!(!root.join("notes.txt").exists() && !root.join("new/deep/k").exists());
        assert_eq!(
            std::fs::read_to_string(root.join("secrets/key")).expect("r"),
            "k"
        );
        assert_eq!(
            std::fs::read_to_string(root.join(".env")).expect("r"),
            "A=1"
        );
    }

    #[test]
    fn a_link_left_at_the_temporary_name_is_not_written_through() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let outside = root.join("outside");
        std::fs::write(&outside, "the user's file\n").expect("w");
        std::fs::create_dir(root.join("ws")).expect("mkdir");
        let toml = root.join("ws/harness.toml");
        std::fs::write(&toml, "kept\n").expect("w");
        let before = record(&root.join("ws"), std::slice::from_ref(&toml), &[]);
        std::fs::write(&toml, "changed\n").expect("w");
        std::os::unix::fs::symlink(&outside, root.join("ws/harness.toml.harness-repair"))
            .expect("ln");
        // And an object of a git directory, written back from its held handle.
        let ws = root.join("ws");
        repo(&ws);
        let git = record(&ws, &[ws.join(".git")], &[]);
        let object = ws.join(".git/objects/ab/cd");
        std::fs::remove_file(&object).expect("rm");
        std::os::unix::fs::symlink(&outside, ws.join(".git/objects/ab/cd.harness-repair"))
            .expect("ln");
        let objects = repair(&git);
        assert_eq!(
            objects
                .iter()
                .map(|r| (r.change.clone(), r.result.clone()))
                .collect::<Vec<_>>(),
            [(Change::ObjectsRemoved(1), Ok(()))]
        );
        assert_eq!(std::fs::read_to_string(&object).expect("r"), "object");
        let repaired = repair(&before);
        assert_eq!(repaired.len(), 1, "{repaired:?}");
        assert_eq!(repaired[0].result, Ok(()));
        assert_eq!(std::fs::read_to_string(&toml).expect("r"), "kept\n");
        assert_eq!(
            std::fs::read_to_string(&outside).expect("r"),
            "the user's file\n"
        );
    }

    #[test]
    fn only_kept_paths_inside_the_workspace_are_recorded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let ws = root.join("ws");
        std::fs::create_dir(&ws).expect("mkdir");
        repo(&ws);
        repo(&root.join("elsewhere"));
        // The workspace itself is never a kept path (its whole content would be put back
        // after every command), nor is anything outside it.
        let kept = [ws.clone(), root.join("elsewhere/.git"), ws.join(".git")];
        let before = record(&ws, &kept, &[]);
        let recorded: Vec<&PathBuf> = before.trees.iter().map(|tree| &tree.path).collect();
        assert_eq!(recorded, [&ws.join(".git")]);
    }

    #[test]
    fn a_hidden_file_given_another_name_loses_it_when_nothing_else_moved() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::write(root.join(".env"), "A=1").expect("w");
        let before = record(&root, &[], &[root.join(".env")]);
        // The only sign is the file's count of names: the path still holds the same file.
        std::fs::hard_link(root.join(".env"), root.join("notes.txt")).expect("ln");
        let repaired = repair(&before);
        assert_eq!(
            changes(&repaired),
            [(
                root.join(".env"),
                Change::Linked(root.join("notes.txt")),
                Ok(())
            )]
        );
        assert!(!root.join("notes.txt").exists());
    }

    #[test]
    fn a_kept_directory_that_is_not_a_git_directory_is_put_back_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        // Named like a git directory's object store, but with no HEAD beside it: its
        // files are kept as content, not held as objects.
        std::fs::create_dir_all(root.join("tools/objects")).expect("mkdir");
        std::fs::write(root.join("tools/objects/o1"), "one").expect("w");
        let before = record(&root, &[root.join("tools")], &[]);
        std::fs::remove_file(root.join("tools/objects/o1")).expect("rm");
        let repaired = repair(&before);
        assert_eq!(
            changes(&repaired),
            [(root.join("tools/objects/o1"), Change::Removed, Ok(()))]
        );
        assert_eq!(
            std::fs::read_to_string(root.join("tools/objects/o1")).expect("r"),
            "one"
        );
    }

    #[test]
    fn a_name_a_hidden_file_had_before_the_command_is_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::write(root.join(".env"), "A=1").expect("w");
        // The user's own second name of the file, made before the run.
        std::fs::hard_link(root.join(".env"), root.join("env.backup")).expect("ln");
        let before = record(&root, &[], &[root.join(".env")]);
        std::fs::hard_link(root.join(".env"), root.join("notes.txt")).expect("ln");
        let repaired = repair(&before);
        assert_eq!(
            changes(&repaired)
                .into_iter()
                .map(|(path, change, _)| (path, change))
                .collect::<Vec<_>>(),
            [(root.join(".env"), Change::Linked(root.join("notes.txt")))]
        );
        assert!(!root.join("notes.txt").exists());
        assert_eq!(
            std::fs::read_to_string(root.join("env.backup")).expect("the user's name stays"),
            "A=1"
        );
    }

    #[test]
    fn a_removed_directory_is_reported_once_and_a_changed_one_with_what_changed_in_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        repo(&root);
        std::fs::write(root.join(".git/hooks/post-merge.sample"), "#!/bin/sh\n").expect("w");
        let before = record(&root, &[root.join(".git")], &[]);
        // Removed whole: one report, its content made again with it.
        std::fs::remove_dir_all(root.join(".git/hooks")).expect("rm");
        // Changed (its mode), and a file in it changed too: each is its own report.
        std::fs::set_permissions(
            root.join(".git/refs"),
            std::fs::Permissions::from_mode(0o777),
        )
        .expect("chmod");
        std::fs::write(root.join(".git/refs/heads/main"), "5678\n").expect("w");
        let repaired = repair(&before);
        assert_eq!(
            changes(&repaired),
            [
                (root.join(".git/hooks"), Change::Removed, Ok(())),
                (root.join(".git/refs"), Change::Changed, Ok(())),
                (root.join(".git/refs/heads/main"), Change::Changed, Ok(())),
            ]
        );
        assert_eq!(
            std::fs::read_to_string(root.join(".git/hooks/post-merge.sample")).expect("r"),
            "#!/bin/sh\n"
        );
    }

    #[test]
    fn a_changed_link_and_a_removed_one_are_made_again_and_an_untouched_one_is_not_reported() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        repo(&root);
        for (name, target) in [("l1", "a"), ("l2", "b"), ("l3", "c")] {
            std::os::unix::fs::symlink(target, root.join(".git").join(name)).expect("ln");
        }
        let before = record(&root, &[root.join(".git")], &[]);
        std::fs::remove_file(root.join(".git/l1")).expect("rm");
        std::os::unix::fs::symlink("/etc/passwd", root.join(".git/l1")).expect("ln");
        std::fs::remove_file(root.join(".git/l2")).expect("rm");
        let repaired = repair(&before);
        assert_eq!(
            changes(&repaired),
            [
                (root.join(".git/l1"), Change::Changed, Ok(())),
                (root.join(".git/l2"), Change::Removed, Ok(())),
            ]
        );
        for (name, target) in [("l1", "a"), ("l2", "b"), ("l3", "c")] {
            assert_eq!(
                std::fs::read_link(root.join(".git").join(name)).expect("a link"),
                PathBuf::from(target)
            );
        }
    }

    #[test]
    fn an_untouched_fifo_is_not_reported_and_one_replaced_by_a_directory_is() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        repo(&root);
        for name in ["f1", "f2"] {
            let made = std::process::Command::new("mkfifo")
                .arg(root.join(".git").join(name))
                .status()
                .expect("mkfifo");
            assert!(made.success());
        }
        let before = record(&root, &[root.join(".git")], &[]);
        std::fs::remove_file(root.join(".git/f2")).expect("rm");
        std::fs::create_dir(root.join(".git/f2")).expect("mkdir");
        let repaired = repair(&before);
        assert_eq!(
            changes(&repaired)
                .into_iter()
                .map(|(path, change, _)| (path, change))
                .collect::<Vec<_>>(),
            [(root.join(".git/f2"), Change::Changed)]
        );
    }

    #[test]
    fn a_kept_file_of_two_mib_is_recorded_whole_and_put_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let large = vec![b'k'; 2 * 1024 * 1024];
        std::fs::write(root.join("harness.toml"), &large).expect("w");
        let before = record(&root, &[root.join("harness.toml")], &[]);
        assert!(before.truncated.is_none());
        std::fs::write(root.join("harness.toml"), "verify = \"true\"\n").expect("w");
        let repaired = repair(&before);
        assert_eq!(repaired.len(), 1, "{repaired:?}");
        assert_eq!(std::fs::read(root.join("harness.toml")).expect("r"), large);
    }
}
