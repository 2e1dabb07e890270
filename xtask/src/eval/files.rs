//! Files of a job: copying trees, and snapshots that show what changed between two moments.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Directories never copied into a holdout's copy: build output and caches, which the copy
/// rebuilds, and git's own data.
const NOT_COPIED: &[&str] = &[".git", "target", "node_modules", "__pycache__"];

/// Copies the files under `from` into `to` (created if need be), over what is there,
/// skipping [`NOT_COPIED`] directories. Symbolic links are copied as links.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    copy_tree_inner(from, to)
        .with_context(|| format!("copying {} to {}", from.display(), to.display()))
}

fn copy_tree_inner(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let target = to.join(&name);
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if !NOT_COPIED.iter().any(|skip| name == *skip) {
                copy_tree_inner(&entry.path(), &target)?;
            }
        } else if kind.is_symlink() {
            let _ = fs::remove_file(&target);
            std::os::unix::fs::symlink(fs::read_link(entry.path())?, &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// What is under a directory at one moment: each file's bytes (a link's target), by its
/// path relative to the directory. Directories are recorded empty, so a new empty one shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Snapshot {
    entries: BTreeMap<PathBuf, Vec<u8>>,
}

impl Snapshot {
    /// Takes a snapshot of `root`, leaving out the paths (relative to `root`) in `skip` and
    /// everything below them.
    pub(crate) fn take(root: &Path, skip: &[PathBuf]) -> Result<Snapshot> {
        let mut snapshot = Snapshot::default();
        snapshot
            .walk(root, Path::new(""), skip)
            .with_context(|| format!("taking a snapshot of {}", root.display()))?;
        Ok(snapshot)
    }

    /// The paths that were added, removed or changed between `self` and `later`, sorted.
    pub(crate) fn changes(&self, later: &Snapshot) -> Vec<String> {
        let mut changed: Vec<String> = Vec::new();
        for (path, bytes) in &self.entries {
            match later.entries.get(path) {
                Some(now) if now == bytes => {}
                Some(_) => changed.push(format!("changed {}", path.display())),
                None => changed.push(format!("removed {}", path.display())),
            }
        }
        for path in later.entries.keys() {
            if !self.entries.contains_key(path) {
                changed.push(format!("added {}", path.display()));
            }
        }
        changed.sort();
        changed
    }

    /// The files in the snapshot (not the directories), by their relative paths.
    #[cfg(test)]
    pub(crate) fn files(&self) -> impl Iterator<Item = &Path> {
        self.entries
            .keys()
            .filter(|path| !path.as_os_str().to_string_lossy().ends_with('/'))
            .map(PathBuf::as_path)
    }

    fn walk(&mut self, root: &Path, relative: &Path, skip: &[PathBuf]) -> io::Result<()> {
        for entry in fs::read_dir(root.join(relative))? {
            let entry = entry?;
            let path = relative.join(entry.file_name());
            if skip.contains(&path) {
                continue;
            }
            let kind = entry.file_type()?;
            if kind.is_dir() {
                self.entries.insert(path.join(""), Vec::new());
                self.walk(root, &path, skip)?;
            } else if kind.is_symlink() {
                let target = fs::read_link(entry.path())?;
                self.entries
                    .insert(path, format!("-> {}", target.display()).into_bytes());
            } else {
                self.entries.insert(path, fs::read(entry.path())?);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_shows_added_removed_and_changed_files_but_not_skipped_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("kept"), "same").unwrap();
        fs::write(root.join("edited"), "before").unwrap();
        fs::write(root.join("deleted"), "x").unwrap();
        fs::create_dir(root.join("skipped")).unwrap();
        let skip = [PathBuf::from("skipped")];
        let before = Snapshot::take(root, &skip).unwrap();
        fs::write(root.join("edited"), "after").unwrap();
        fs::remove_file(root.join("deleted")).unwrap();
        fs::create_dir(root.join("new")).unwrap();
        fs::write(root.join("new/file"), "").unwrap();
        fs::write(root.join("skipped/file"), "").unwrap();
        let after = Snapshot::take(root, &skip).unwrap();
        assert_eq!(
            before.changes(&after),
            [
                "added new/",
                "added new/file",
                "changed edited",
                "removed deleted"
            ]
        );
        assert!(after.changes(&after).is_empty());
    }

    #[test]
    fn copies_skip_build_output_and_git() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("from");
        for sub in ["src", ".git", "target", "node_modules", "__pycache__"] {
            fs::create_dir_all(from.join(sub)).unwrap();
            fs::write(from.join(sub).join("f"), sub).unwrap();
        }
        let to = dir.path().join("to");
        copy_tree(&from, &to).unwrap();
        assert_eq!(fs::read_to_string(to.join("src/f")).unwrap(), "src");
        for sub in [".git", "target", "node_modules", "__pycache__"] {
            assert!(!to.join(sub).exists(), "{sub} was copied");
        }
    }
}
