//! Putting a recorded state back: the working tree, then the user's index.

use std::collections::BTreeSet;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use git2::{Delta, Index};

use crate::error::GitContext;
use crate::record::State;
use crate::scan::Scanner;
use crate::state::index_path;
use crate::{Error, paths};

/// What a restore changes, worked out before anything is changed.
pub(crate) struct Plan {
    /// Files and symlinks of the current tree that the target lacks.
    removed: Vec<PathBuf>,
    /// Files and symlinks the target has and the current tree lacks or has
    /// otherwise.
    written: Vec<PathBuf>,
    /// Files and symlinks in neither tree (ignored ones) standing where a
    /// written file or one of its directories must go, which writing removes
    /// or overwrites.
    pub(crate) displaced: Vec<PathBuf>,
}

impl Plan {
    /// Every directory (relative to the top level, the top level itself
    /// included) in which the plan removes or writes an entry, or removes one
    /// left empty: what the harness's user must be able to change.
    pub(crate) fn directories(&self) -> BTreeSet<PathBuf> {
        self.removed
            .iter()
            .chain(&self.written)
            .chain(&self.displaced)
            .flat_map(|path| path.ancestors().skip(1))
            .map(Path::to_path_buf)
            .collect()
    }
}

/// Works out how to go from tree `current` (the working tree right now) to
/// tree `target`, for the working tree at `root`.
pub(crate) fn plan(
    repo: &git2::Repository,
    root: &Path,
    current: git2::Oid,
    target: git2::Oid,
) -> Result<Plan, Error> {
    let (removed, written) = differences(repo, current, target)?;
    let mut displaced = BTreeSet::new();
    for path in &written {
        // A file or symlink where one of the path's directories must be.
        let blocker = path
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .find(|a| fs::symlink_metadata(root.join(a)).is_ok_and(|m| !m.is_dir()));
        if let Some(blocker) = blocker {
            // Whatever lies beyond it is not in this working tree.
            displaced.insert(blocker.to_path_buf());
            continue;
        }
        // A file or symlink where the file must be, or a directory: everything in it.
        match fs::symlink_metadata(root.join(path)) {
            Ok(m) if m.is_dir() => collect_files(root, path, &mut displaced)?,
            Ok(_) => {
                displaced.insert(path.clone());
            }
            Err(_) => {}
        }
    }
    // Files of the current tree are in the saved state already, and removed
    // before anything is written.
    let current = repo.find_tree(current).context("find the current tree")?;
    displaced.retain(|path| current.get_path(path).is_err());
    Ok(Plan {
        removed,
        written,
        displaced: displaced.into_iter().collect(),
    })
}

impl Plan {
    /// The files this plan removes that were there before the run began at `started`.
    ///
    /// The pre-run state lacks such a file only because git ignored it then: a command
    /// that changes the ignore rules (empties `.gitignore`, adds a `!` rule) makes it
    /// visible, and a checkpoint records it. Going back to the start must not delete it;
    /// see [`Session::undo`](crate::Session::undo).
    ///
    /// A file was there before when its birth time is earlier than `started`; where the
    /// file system keeps no birth time, when its inode last changed before `started` (it
    /// was there, and nothing has touched it since). A file a command created is born, and
    /// changed, after the start: no command can set those times back. A file a command
    /// moved keeps its birth time, so this alone does not say the file was ignored.
    pub(crate) fn removed_from_before(&self, root: &Path, started: SystemTime) -> Vec<PathBuf> {
        self.removed
            .iter()
            .filter(|path| was_there_before(&root.join(path), started))
            .cloned()
            .collect()
    }
}

/// True if the file at `path` existed before `started`, as far as its times can tell.
fn was_there_before(path: &Path, started: SystemTime) -> bool {
    fs::symlink_metadata(path).is_ok_and(|metadata| {
        born_before(
            metadata.created(),
            crate::clock::last_change(&metadata),
            started,
        )
    })
}

/// From a file's birth time, where the file system keeps one, else from the time its
/// inode last changed: true if it existed before `started`.
fn born_before(
    born: std::io::Result<SystemTime>,
    changed: std::io::Result<SystemTime>,
    started: SystemTime,
) -> bool {
    match born {
        Ok(born) => born < started,
        Err(_) => changed.is_ok_and(|changed| changed < started),
    }
}

/// Makes the working tree at `root` match `target`'s tree and the user's index
/// match `target`'s index, following `plan`, with the scanner whose last
/// snapshot the plan started from. Returns the paths whose file changed,
/// sorted.
///
/// A file of the current tree that the target lacks is removed, with
/// directories it leaves empty; a file that differs is written the way `git
/// checkout` writes it. Other files stay as they are, except the plan's
/// displaced ones, which are removed to make room (save them first). The
/// index is written only `with_index` (without a repository there is none).
pub(crate) fn apply(
    scanner: &mut Scanner,
    root: &Path,
    plan: Plan,
    target: &State,
    with_index: bool,
) -> Result<Vec<PathBuf>, Error> {
    // Removals first, displaced files included (they are saved), so that a
    // file can take the place of a directory and the other way round.
    for path in plan.removed.iter().chain(&plan.displaced) {
        remove_with_empty_parents(root, path)?;
    }
    // How git writes a file (line endings, `ident`) follows the `.gitattributes`
    // files, read from the working tree, then the index. Git reads the target's,
    // from the index it is checking out; so must this, or a `.gitattributes` a
    // command wrote (`* text eol=crlf`) would rewrite every restored file of the
    // user as it says, itself included.
    for path in plan.written.iter().filter(|p| is_attributes(p)) {
        remove_file(root, path)?;
    }
    scanner.take_from_tree(
        target.tree,
        plan.removed
            .iter()
            .chain(&plan.written)
            .filter(|p| is_attributes(p)),
    )?;
    if !plan.written.is_empty() {
        scanner.checkout(target.tree, &plan.written)?;
    }

    if with_index {
        write_index(scanner.repo(), target)?;
    }
    let mut changed = plan.removed;
    changed.extend(plan.written);
    changed.sort();
    changed.dedup();
    Ok(changed)
}

/// True if and only if `path` names a `.gitattributes` file.
fn is_attributes(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name == ".gitattributes")
}

/// Makes the user's index the one `target` recorded.
fn write_index(repo: &git2::Repository, target: &State) -> Result<(), Error> {
    let path = index_path(repo.path());
    let mut index = Index::open(&path).context("read the index")?;
    let index_tree = repo
        .find_tree(target.index_tree)
        .context("find the index to restore")?;
    index
        .read_tree(&index_tree)
        .context("load the index to restore")?;
    index.write().context("write the restored index")
}

/// Adds every file and symlink below directory `path` (relative to `root`).
fn collect_files(root: &Path, path: &Path, files: &mut BTreeSet<PathBuf>) -> Result<(), Error> {
    let full = root.join(path);
    for entry in fs::read_dir(&full).map_err(|e| Error::io(&full, e))? {
        let entry = entry.map_err(|e| Error::io(&full, e))?;
        let child = path.join(entry.file_name());
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            collect_files(root, &child, files)?;
        } else {
            files.insert(child);
        }
    }
    Ok(())
}

/// The paths to remove and the paths to write to go from tree `from` to tree `to`.
fn differences(
    repo: &git2::Repository,
    from: git2::Oid,
    to: git2::Oid,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), Error> {
    let old = repo.find_tree(from).context("find the current tree")?;
    let new = repo.find_tree(to).context("find the tree to restore")?;
    let diff = repo
        .diff_tree_to_tree(Some(&old), Some(&new), None)
        .context("compare the current and the restored tree")?;
    let mut removed = Vec::new();
    let mut written = Vec::new();
    for delta in diff.deltas() {
        if delta.status() == Delta::Deleted {
            removed.extend(delta.old_file().path_bytes().map(paths::from_bytes));
        } else {
            written.extend(delta.new_file().path_bytes().map(paths::from_bytes));
        }
    }
    Ok((removed, written))
}

/// Removes the file or symlink `path` (relative to `root`), then each parent
/// directory that is left empty, up to but not including `root`.
fn remove_with_empty_parents(root: &Path, path: &Path) -> Result<(), Error> {
    remove_file(root, path)?;
    for parent in path.ancestors().skip(1) {
        if parent.as_os_str().is_empty() || fs::remove_dir(root.join(parent)).is_err() {
            // Not empty (ignored files, say), or the top level: stop here.
            break;
        }
    }
    Ok(())
}

/// Removes the file or symlink `path` (relative to `root`), if it is there.
fn remove_file(root: &Path, path: &Path) -> Result<(), Error> {
    let full = root.join(path);
    match fs::remove_file(&full) {
        // Already gone is as good as removed.
        Err(e) if e.kind() != ErrorKind::NotFound => Err(Error::io(&full, e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_file_is_from_before_the_run_by_its_birth_else_by_its_last_change() {
        let started = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let (before, at, after) = (
            started - Duration::from_millis(1),
            started,
            started + Duration::from_millis(1),
        );
        let none = || Err(io::Error::from(io::ErrorKind::Unsupported));
        // The birth time decides when there is one, whatever the last change says.
        assert!(born_before(Ok(before), Ok(after), started));
        assert!(!born_before(Ok(at), Ok(before), started));
        assert!(!born_before(Ok(after), Ok(before), started));
        // Without one, a file untouched since before the start was there.
        assert!(born_before(none(), Ok(before), started));
        assert!(!born_before(none(), Ok(at), started));
        assert!(!born_before(none(), Ok(after), started));
        assert!(!born_before(none(), none(), started));
    }

    #[test]
    fn removal_climbs_while_directories_empty() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("a/b/c")).unwrap();
        fs::write(root.join("a/keep"), "k").unwrap();
        fs::write(root.join("a/b/c/file"), "f").unwrap();
        remove_with_empty_parents(root, Path::new("a/b/c/file")).unwrap();
        assert!(!root.join("a/b").exists());
        assert!(root.join("a/keep").exists());
    }

    #[test]
    fn removal_keeps_the_top_level() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("top");
        fs::create_dir(&root).unwrap();
        fs::write(root.join("only"), "o").unwrap();
        remove_with_empty_parents(&root, Path::new("only")).unwrap();
        assert!(root.is_dir());
    }

    #[test]
    fn removal_of_a_missing_file_is_done_already() {
        let dir = tempfile::tempdir().unwrap();
        remove_with_empty_parents(dir.path(), Path::new("never")).unwrap();
        assert!(dir.path().is_dir());
    }

    #[test]
    fn removal_of_a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("d")).unwrap();
        let err = remove_with_empty_parents(dir.path(), Path::new("d")).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
        assert!(dir.path().join("d").is_dir());
    }
}
