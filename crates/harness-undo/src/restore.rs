//! Putting a recorded state back: the working tree, then the user's index.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use git2::{Delta, Index};

use crate::error::GitContext;
use crate::record::State;
use crate::scan::Scanner;
use crate::state::index_path;
use crate::{Error, paths};

/// Makes the working tree at `root` match `target`'s tree and the user's index
/// match `target`'s index, given a scanner whose last snapshot, `current`, is
/// the working tree right now. Returns the paths whose file changed, sorted.
///
/// Only paths in one of the two trees are touched: a file in `current` and
/// not in the target is removed, with directories it leaves empty; a file that
/// differs is written the way `git checkout` writes it. Ignored files, being in
/// neither tree, stay as they are.
pub(crate) fn restore(
    scanner: &Scanner,
    root: &Path,
    current: git2::Oid,
    target: &State,
) -> Result<Vec<PathBuf>, Error> {
    let repo = scanner.repo();
    let (removed, written) = differences(repo, current, target.tree)?;
    // Removals first, so that a file can take the place of a directory and
    // the other way round.
    for path in &removed {
        remove_with_empty_parents(root, path)?;
    }
    if !written.is_empty() {
        scanner.checkout(target.tree, &written)?;
    }

    let path = index_path(repo.path());
    let mut index = Index::open(&path).context("read the index")?;
    let index_tree = repo
        .find_tree(target.index_tree)
        .context("find the index to restore")?;
    index
        .read_tree(&index_tree)
        .context("load the index to restore")?;
    index.write().context("write the restored index")?;

    let mut changed = removed;
    changed.extend(written);
    changed.sort();
    changed.dedup();
    Ok(changed)
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
    let full = root.join(path);
    if let Err(e) = fs::remove_file(&full) {
        // Already gone is as good as removed.
        if e.kind() != ErrorKind::NotFound {
            return Err(Error::io(&full, e));
        }
    }
    for parent in path.ancestors().skip(1) {
        if parent.as_os_str().is_empty() || fs::remove_dir(root.join(parent)).is_err() {
            // Not empty (ignored files, say), or the top level: stop here.
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
