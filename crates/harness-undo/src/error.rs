//! The one error type of the crate.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::{ParseRunIdError, RunId};

/// The system's message for a full disk (`ENOSPC`), as libgit2 and git quote it.
const DISK_FULL: &str = "No space left on device";

/// How many dirty paths an error message lists before it only counts.
pub(crate) const LISTED_PATHS: usize = 20;

/// Everything that can go wrong, each message naming the input and the way out.
///
/// The way out is phrased with the harness command line's flags (`--init`,
/// `--allow-dirty`, `--force`), which map one to one onto [`BeginOptions`] fields
/// and [`Force`].
///
/// [`BeginOptions`]: crate::BeginOptions
/// [`Force`]: crate::Force
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The workspace is not inside a git repository.
    #[error(
        "{} is not a git repository; pass --init to create one with an initial commit \
         of the current files, so that the run can be undone",
        root.display()
    )]
    NotARepository {
        /// The workspace root that was given.
        root: PathBuf,
    },

    /// The workspace is a subdirectory of a repository instead of its top level.
    #[error(
        "{} is inside the git repository at {}; point the workspace at {} so that \
         undo covers every file git sees",
        root.display(),
        top.display(),
        top.display()
    )]
    NotRepositoryRoot {
        /// The workspace root that was given.
        root: PathBuf,
        /// The top level of the repository that contains it.
        top: PathBuf,
    },

    /// The repository has no working tree to protect.
    #[error("{} is a bare repository; point the workspace at a clone with a working tree", root.display())]
    BareRepository {
        /// The workspace root that was given.
        root: PathBuf,
    },

    /// The repository has no commit yet, so there is nothing to go back to.
    #[error(
        "the repository at {} has no commit yet; pass --init to commit the current \
         files first, so that the run can be undone",
        root.display()
    )]
    NoCommits {
        /// The workspace root that was given.
        root: PathBuf,
    },

    /// Sparse checkouts hide files from the working tree, which a snapshot cannot tell from deletions.
    #[error(
        "{} uses a sparse checkout (core.sparseCheckout), which undo does not support; \
         run `git sparse-checkout disable` or use a full clone",
        root.display()
    )]
    SparseCheckout {
        /// The workspace root that was given.
        root: PathBuf,
    },

    /// The working tree has uncommitted changes and `allow_dirty` was not set.
    #[error(
        "the working tree has {count} uncommitted change{s}: {listing}; commit or stash \
         them first, or pass --allow-dirty to snapshot them so that undo restores them exactly",
        s = if *count == 1 { "" } else { "s" },
        listing = PathListing { paths, count: *count }
    )]
    DirtyTree {
        /// Up to 20 of the changed paths, as git reports them (an untracked
        /// directory ends with `/`).
        paths: Vec<PathBuf>,
        /// How many paths are changed in total.
        count: usize,
    },

    /// The index has unmerged paths, which cannot be recorded as a tree.
    #[error(
        "the index has {count} unmerged path{s}: {listing}; finish or abort the merge \
         (`git merge --abort`, or resolve and `git add`) first",
        count = paths.len(),
        s = if paths.len() == 1 { "" } else { "s" },
        listing = PathListing { paths, count: paths.len() }
    )]
    Unmerged {
        /// The unmerged paths.
        paths: Vec<PathBuf>,
    },

    /// HEAD is no longer where it was, so restoring files would mix with new history.
    #[error(
        "HEAD moved from {recorded} to {current} since {when} of run {run} (a commit, \
         reset or branch switch); restoring the files would leave them on top of the new \
         HEAD; pass --force to restore them anyway (HEAD, branches and commits are never changed)",
        current = current.as_deref().unwrap_or("an unborn branch")
    )]
    HeadMoved {
        /// The run.
        run: RunId,
        /// Which moment HEAD was recorded at: "the start" or "the undo".
        when: &'static str,
        /// HEAD then, as a commit id.
        recorded: String,
        /// HEAD now, as a commit id, or `None` on an unborn branch.
        current: Option<String>,
    },

    /// Files changed after an undo; redo would overwrite them.
    #[error(
        "the working tree or index changed since run {run} was undone; redo would \
         replace those changes (they would stay recoverable under refs/harness/{run}/saved); \
         pass --force to redo anyway"
    )]
    ChangedSinceUndo {
        /// The run.
        run: RunId,
    },

    /// Another git command holds the index, so restoring it could not finish.
    #[error(
        "{} exists: another git command is running, or one crashed; wait for it to \
         finish, or remove the file if no git command is running",
        path.display()
    )]
    IndexLocked {
        /// The lock file.
        path: PathBuf,
    },

    /// A follow-up was asked of a run whose work was committed.
    #[error(
        "run {run} was accepted (committed as {commit}), so there is nothing to follow up: \
         start a new run, which begins on that commit"
    )]
    FollowsAccepted {
        /// The run.
        run: RunId,
        /// The commit accept made.
        commit: String,
    },

    /// A follow-up was asked of a run that was undone: its work is not in the tree.
    #[error(
        "run {run} was undone, so the tree does not hold its work to follow up: redo it \
         first, or start a new run"
    )]
    FollowsUndone {
        /// The run.
        run: RunId,
    },

    /// A follow-up was asked of a run whose HEAD is no longer the current one.
    #[error(
        "HEAD moved since run {run} began (a commit, reset or branch switch): a follow-up \
         would mix the chain's work with the new history; start a new run"
    )]
    FollowsMovedHead {
        /// The run.
        run: RunId,
    },

    /// A follow-up was asked of a run that another run already follows, not undone: the
    /// tree holds that one's work too.
    #[error("run {run} is already followed by run {by}: follow up run {by} instead")]
    AlreadyFollowed {
        /// The run asked for.
        run: RunId,
        /// The run that follows it.
        by: RunId,
    },

    /// Stepping back one run of a chain would take the user's own edits with it.
    #[error(
        "the workspace differs from how run {run} left it: {which} ({listing}); undo steps \
         back one run at a time and never takes your edits with it. Undo the whole chain \
         (--chain) to restore the state before its first run: what is there now is saved \
         first, and redo brings it back",
        which = match before {
            Some(before) => format!("your own edits, made before run {before}"),
            None => "your own edits, made since".to_owned(),
        },
        listing = PathListing { paths, count: *count }
    )]
    UserEdits {
        /// The run undo would step back.
        run: RunId,
        /// The run the edits were made before; `None` when made after the chain's last.
        before: Option<RunId>,
        /// Up to 20 of the paths the edits changed.
        paths: Vec<PathBuf>,
        /// How many paths they changed.
        count: usize,
    },

    /// Undo was asked of a chain whose every run is undone.
    #[error(
        "every run of the chain that begins with run {run} is undone already: the \
         workspace is as it was before it; redo brings the runs back"
    )]
    ChainUndone {
        /// The chain's first run.
        run: RunId,
    },

    /// Redo was asked for a run that was never undone.
    #[error("run {run} has not been undone, so there is nothing to redo")]
    NothingToRedo {
        /// The run.
        run: RunId,
    },

    /// Accept was asked for a run that changed nothing.
    #[error("run {run} changed no files (or was undone), so there is nothing to accept")]
    NothingToAccept {
        /// The run.
        run: RunId,
    },

    /// The run's changes overlap changes made since, so they cannot be committed alone.
    #[error(
        "the changes of run {run} overlap other changes in {listing}, so they cannot be \
         committed on their own; commit by hand with `git add` and `git commit`",
        listing = PathListing { paths, count: paths.len() }
    )]
    AcceptConflict {
        /// The run.
        run: RunId,
        /// The paths where the changes overlap.
        paths: Vec<PathBuf>,
    },

    /// Files too large to record ([`LARGEST_RECORDED_FILE`]) are in the working tree, so
    /// accept could not commit what is there.
    ///
    /// [`LARGEST_RECORDED_FILE`]: crate::LARGEST_RECORDED_FILE
    #[error(
        "{listing} {verb} larger than {mib} MiB, which no snapshot records, so accept cannot \
         commit run {run} as it is: delete or shrink {them}, or commit by hand with \
         `git add` and `git commit`",
        listing = PathListing { paths, count: paths.len() },
        verb = if paths.len() == 1 { "is" } else { "are" },
        them = if paths.len() == 1 { "it" } else { "them" },
        mib = crate::LARGEST_RECORDED_FILE >> 20
    )]
    TooLarge {
        /// The run.
        run: RunId,
        /// The files, relative to the workspace's top level.
        paths: Vec<PathBuf>,
    },

    /// A file that had to be saved before it is overwritten or removed (an ignored file a
    /// file tool is about to write, or one standing where undo puts back a recorded file)
    /// is larger than [`LARGEST_RECORDED_FILE`], so it is left as it is.
    ///
    /// [`LARGEST_RECORDED_FILE`]: crate::LARGEST_RECORDED_FILE
    #[error(
        "{} is larger than {mib} MiB, too large to save for undo first, so nothing was \
         changed; move it out of the workspace (or delete it) and try again",
        path.display(),
        mib = crate::LARGEST_RECORDED_FILE >> 20
    )]
    TooLargeToSave {
        /// The file, relative to the workspace's top level.
        path: PathBuf,
    },

    /// What stands where a file had to be saved before it is overwritten or removed is not
    /// a file (a named pipe, a socket, a device a command made there): it has no content to
    /// save, and reading a named pipe would wait for a writer forever, so it is left as it
    /// is.
    #[error(
        "{} is a {kind}, not a file: it cannot be saved for undo first, so nothing was \
         changed; move it out of the workspace (or delete it) and try again",
        path.display()
    )]
    NotAFile {
        /// The path, relative to the workspace's top level.
        path: PathBuf,
        /// What it is: "named pipe", "socket", "device", "directory" or "special file".
        kind: &'static str,
    },

    /// A run with checkpoints was to be discarded: it has changes to undo.
    #[error(
        "run {run} has {checkpoints} checkpoint{}, so it is kept; undo it with `harness undo`",
        if *checkpoints == 1 { "" } else { "s" }
    )]
    RunStarted {
        /// The run.
        run: RunId,
        /// How many checkpoints it has.
        checkpoints: u32,
    },

    /// No run with this id exists in the repository.
    #[error("there is no run {run} in {}; list the runs to see their ids", root.display())]
    UnknownRun {
        /// The run id that was asked for.
        run: RunId,
        /// The workspace root.
        root: PathBuf,
    },

    /// A string that is not a run id.
    #[error(transparent)]
    InvalidRunId(#[from] ParseRunIdError),

    /// A checkpoint number the run does not have.
    #[error("run {run} has no checkpoint {number}; it has {count} (numbered from 1)")]
    UnknownCheckpoint {
        /// The run.
        run: RunId,
        /// The number that was asked for.
        number: u32,
        /// How many checkpoints the run has.
        count: u32,
    },

    /// A run's metadata file could not be understood.
    #[error("{} is not valid run metadata ({detail}); move it away to hide the run", path.display())]
    Metadata {
        /// The metadata file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },

    /// Neither `XDG_STATE_HOME` nor `HOME` names a directory for the harness's store.
    #[error(
        "neither XDG_STATE_HOME nor HOME is set to an absolute path, so there is no place \
         outside the workspace for the harness's undo store; set XDG_STATE_HOME"
    )]
    NoStateHome,

    /// The store's directory would be inside the workspace, where a command could reach it.
    #[error(
        "the harness's undo store {} would be inside the workspace {}, where the agent's \
         commands could change it; set XDG_STATE_HOME to a directory outside the workspace",
        store.display(),
        root.display()
    )]
    StoreInsideWorkspace {
        /// The store's directory.
        store: PathBuf,
        /// The workspace root.
        root: PathBuf,
    },

    /// The store found for a workspace belongs to another path (a hash collision, or a copied store).
    #[error(
        "the harness store {} belongs to {}, not {}; move it away",
        store.display(),
        recorded.display(),
        root.display()
    )]
    StoreMismatch {
        /// The store's directory.
        store: PathBuf,
        /// The workspace root.
        root: PathBuf,
        /// The workspace the store names.
        recorded: PathBuf,
    },

    /// A store was to be removed while its workspace still exists.
    #[error(
        "the harness store {} belongs to {}, which still exists; prune its runs with \
         `harness runs --prune` instead",
        store.display(),
        workspace.display()
    )]
    StoreInUse {
        /// The store's directory.
        store: PathBuf,
        /// Its workspace.
        workspace: PathBuf,
    },

    /// A run of the store to remove is in progress.
    #[error(
        "run {run} in {} is in progress (a process has it open); the store is kept: end that \
         run first",
        store.display()
    )]
    RunInProgress {
        /// The run.
        run: RunId,
        /// The store's directory.
        store: PathBuf,
    },

    /// libgit2 failed.
    #[error("git could not {action}: {detail}")]
    Git {
        /// What was being done, phrased to follow "could not".
        action: String,
        /// libgit2's message.
        detail: String,
    },

    /// The git command line failed.
    #[error("`{command}` failed ({status}): {stderr}")]
    GitCommand {
        /// The command line.
        command: String,
        /// How it ended.
        status: String,
        /// What it wrote to stderr, trimmed.
        stderr: String,
    },

    /// A filesystem operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

impl Error {
    /// True if and only if this failed because the disk was full: nothing could be
    /// recorded, and the same action succeeds once there is space (a command of the run
    /// may have filled it).
    pub fn is_disk_full(&self) -> bool {
        match self {
            Error::Io { source, .. } => source.kind() == std::io::ErrorKind::StorageFull,
            // libgit2 passes on the system's message, not the error.
            Error::Git { detail, .. } => detail.contains(DISK_FULL),
            Error::GitCommand { stderr, .. } => stderr.contains(DISK_FULL),
            _ => false,
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// [`Error::DirtyTree`] counting all of `paths` and keeping the first 20.
    pub(crate) fn dirty(paths: Vec<PathBuf>) -> Error {
        Error::DirtyTree {
            count: paths.len(),
            paths: paths.into_iter().take(LISTED_PATHS).collect(),
        }
    }
}

/// Adds "could not <action>" context to a libgit2 result.
pub(crate) trait GitContext<T> {
    /// Maps the libgit2 error into [`Error::Git`] with the given action.
    fn context(self, action: impl fmt::Display) -> Result<T, Error>;
}

impl<T> GitContext<T> for Result<T, git2::Error> {
    fn context(self, action: impl fmt::Display) -> Result<T, Error> {
        self.map_err(|e| Error::Git {
            action: action.to_string(),
            detail: e.message().to_string(),
        })
    }
}

/// Up to [`LISTED_PATHS`] paths joined by commas, then how many more.
pub(crate) struct PathListing<'a> {
    /// The paths, of which the first [`LISTED_PATHS`] are shown.
    pub(crate) paths: &'a [PathBuf],
    /// How many there are in all.
    pub(crate) count: usize,
}

impl fmt::Display for PathListing<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = &self.paths[..self.paths.len().min(LISTED_PATHS)];
        for (i, path) in shown.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", path.display())?;
        }
        let more = self.count - shown.len();
        if more > 0 {
            write!(f, " and {more} more")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(n: usize) -> Vec<PathBuf> {
        (0..n).map(|i| PathBuf::from(format!("f{i}"))).collect()
    }

    macro_rules! listing {
        ($($name:ident: $given:expr, $count:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let given = paths($given);
                let got = PathListing { paths: &given, count: $count }.to_string();
                assert_eq!(got, $want);
            }
        )*};
    }

    listing! {
        one_path: 1, 1 => "f0";
        two_paths: 2, 2 => "f0, f1";
        twenty_paths_listed_whole: 20, 20 =>
            "f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19";
        twenty_one_paths_cut_at_twenty: 21, 21 =>
            "f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19 and 1 more";
        count_beyond_the_list: 2, 30 => "f0, f1 and 28 more";
    }

    #[test]
    fn a_full_disk_is_told_apart_from_other_failures() {
        let full = std::io::Error::from_raw_os_error(28);
        assert!(Error::io(Path::new("f"), full).is_disk_full());
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert!(!Error::io(Path::new("f"), denied).is_disk_full());
        let git = |detail: &str| Error::Git {
            action: "record a.py".into(),
            detail: detail.into(),
        };
        assert!(git("failed to write out file: No space left on device").is_disk_full());
        assert!(!git("the index is locked").is_disk_full());
        let command = |stderr: &str| Error::GitCommand {
            command: "git status".into(),
            status: "exit status: 128".into(),
            stderr: stderr.into(),
        };
        assert!(command("fatal: unable to write index: No space left on device").is_disk_full());
        assert!(!command("fatal: not a git repository").is_disk_full());
        assert!(!Error::dirty(paths(1)).is_disk_full());
    }

    #[test]
    fn dirty_message_counts_and_names_the_flag() {
        let one = Error::DirtyTree {
            paths: paths(1),
            count: 1,
        }
        .to_string();
        assert!(one.contains("has 1 uncommitted change: f0;"), "{one}");
        let many = Error::DirtyTree {
            paths: paths(2),
            count: 2,
        }
        .to_string();
        assert!(
            many.contains("has 2 uncommitted changes: f0, f1;"),
            "{many}"
        );
        assert!(many.contains("--allow-dirty"), "{many}");
    }

    #[test]
    fn unmerged_message_counts() {
        let one = Error::Unmerged { paths: paths(1) }.to_string();
        assert!(one.contains("1 unmerged path: f0;"), "{one}");
        let two = Error::Unmerged { paths: paths(2) }.to_string();
        assert!(two.contains("2 unmerged paths: f0, f1;"), "{two}");
    }

    #[test]
    fn head_moved_names_unborn_and_force() {
        let run: RunId = "20250101-000000-000".parse().unwrap();
        let message = Error::HeadMoved {
            run,
            when: "the start",
            recorded: "abc".into(),
            current: None,
        }
        .to_string();
        assert!(
            message.contains("from abc to an unborn branch"),
            "{message}"
        );
        assert!(message.contains("--force"), "{message}");
    }
}
