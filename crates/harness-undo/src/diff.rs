//! What a run changed, file by file, with the unified diff git would print.

use std::fmt;
use std::path::PathBuf;

use git2::{Delta, DiffFindOptions, DiffOptions, FileMode as GitMode, Oid, Patch, Repository};

use crate::error::GitContext;
use crate::{Error, paths};

/// What changed between two states, one entry per file in path order.
///
/// Build it with [`Session::diff`](crate::Session::diff). [`Display`](fmt::Display)
/// prints the whole unified diff, as `git diff` does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diff {
    /// The changed files.
    pub files: Vec<FileDiff>,
}

impl Diff {
    /// True if and only if nothing changed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Lines added, over all text files.
    pub fn additions(&self) -> usize {
        self.files.iter().map(|f| f.additions).sum()
    }

    /// Lines deleted, over all text files.
    pub fn deletions(&self) -> usize {
        self.files.iter().map(|f| f.deletions).sum()
    }
}

impl fmt::Display for Diff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.files
            .iter()
            .try_for_each(|file| f.write_str(&file.patch))
    }
}

/// One changed file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileDiff {
    /// How the file changed.
    pub status: FileStatus,
    /// The file's path after the change (before it, for a deleted file),
    /// relative to the top level.
    pub path: PathBuf,
    /// The path before a rename; `None` unless [`FileStatus::Renamed`].
    pub old_path: Option<PathBuf>,
    /// The file's kind before the change; `None` for an added file.
    pub old_mode: Option<FileMode>,
    /// The file's kind after the change; `None` for a deleted file.
    pub new_mode: Option<FileMode>,
    /// True if and only if git considers either side binary; a binary file
    /// counts no lines.
    pub binary: bool,
    /// Lines added.
    pub additions: usize,
    /// Lines deleted.
    pub deletions: usize,
    /// The file's part of the unified diff, headers included (`diff --git`,
    /// mode, rename and `index` lines), or git's "Binary files … differ" line.
    /// Content that is not UTF-8 is shown with replacement characters.
    pub patch: String,
}

/// How a file changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileStatus {
    /// The run created it.
    Added,
    /// The run deleted it.
    Deleted,
    /// Its content or mode changed.
    Modified,
    /// It moved, possibly with changes (git's similarity rule, 50% by default).
    Renamed,
    /// It changed kind, for example from a file to a symlink.
    TypeChanged,
}

/// The kind of a file as git records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileMode {
    /// A regular file (`100644`).
    Regular,
    /// An executable file (`100755`).
    Executable,
    /// A symbolic link (`120000`).
    Symlink,
    /// A submodule (`160000`).
    Submodule,
}

/// The diff from tree `from` to tree `to`, with renames found the way
/// `git diff` finds them.
pub(crate) fn between(repo: &Repository, from: Oid, to: Oid) -> Result<Diff, Error> {
    let old = repo.find_tree(from).context("find the tree to diff from")?;
    let new = repo.find_tree(to).context("find the tree to diff to")?;
    let mut options = DiffOptions::new();
    // git's default since 2.14; without it some hunks start a line off.
    options.indent_heuristic(true);
    let mut diff = repo
        .diff_tree_to_tree(Some(&old), Some(&new), Some(&mut options))
        .context("compare two trees")?;
    diff.find_similar(Some(DiffFindOptions::new().renames(true)))
        .context("find renamed files")?;
    let mut files: Vec<FileDiff> = Vec::new();
    for position in 0..diff.deltas().len() {
        let Some(mut patch) = Patch::from_diff(&diff, position).context("make a patch")? else {
            continue;
        };
        let (_, additions, deletions) = patch.line_stats().context("count changed lines")?;
        let text = patch.to_buf().context("print a patch")?;
        let delta = patch.delta();
        let status = match delta.status() {
            Delta::Added => FileStatus::Added,
            Delta::Deleted => FileStatus::Deleted,
            Delta::Renamed => FileStatus::Renamed,
            _ => FileStatus::Modified,
        };
        let old_path = delta.old_file().path_bytes().map(paths::from_bytes);
        let new_path = delta.new_file().path_bytes().map(paths::from_bytes);
        let path = if status == FileStatus::Deleted {
            old_path.clone()
        } else {
            new_path
        }
        .unwrap_or_default();
        let file = FileDiff {
            status,
            old_path: old_path.filter(|_| status == FileStatus::Renamed),
            old_mode: mode(delta.old_file().mode()),
            new_mode: mode(delta.new_file().mode()),
            binary: delta.flags().is_binary(),
            additions,
            deletions,
            patch: String::from_utf8_lossy(&text).into_owned(),
            path,
        };
        match files.last_mut() {
            // A change of kind comes as an addition and a deletion of the same
            // path, which git prints as two patches (deletion first) under status T.
            Some(other) if other.path == file.path => {
                let (deleted, added) = if file.status == FileStatus::Deleted {
                    (file, other.clone())
                } else {
                    (other.clone(), file)
                };
                *other = FileDiff {
                    status: FileStatus::TypeChanged,
                    new_mode: added.new_mode,
                    binary: deleted.binary || added.binary,
                    additions: added.additions,
                    patch: deleted.patch + &added.patch,
                    ..deleted
                };
            }
            _ => files.push(file),
        }
    }
    Ok(Diff { files })
}

fn mode(mode: GitMode) -> Option<FileMode> {
    match mode {
        GitMode::Blob | GitMode::BlobGroupWritable => Some(FileMode::Regular),
        GitMode::BlobExecutable => Some(FileMode::Executable),
        GitMode::Link => Some(FileMode::Symlink),
        GitMode::Commit => Some(FileMode::Submodule),
        GitMode::Unreadable | GitMode::Tree => None,
    }
}
