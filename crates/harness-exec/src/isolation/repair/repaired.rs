//! [`Repaired`]: what the runner reports it put back, and the budget of a record.

use std::path::PathBuf;

/// The most entries recorded of the kept paths before each command.
pub const RECORD_ENTRIES: usize = 20_000;

/// The most bytes of file content recorded of the kept paths before each command.
pub const RECORD_BYTES: u64 = 64 * 1024 * 1024;

/// A change a command made where the tier could not refuse it, and what the runner did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repaired {
    /// The kept or hidden path concerned (absolute).
    pub path: PathBuf,
    /// What the command did there.
    pub change: Change,
    /// `Ok` once put back; why not otherwise.
    pub result: Result<(), String>,
}

/// What a command did to a kept or hidden path.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// Its content, mode, kind or link target changed: the recorded one is back.
    Changed,
    /// git's index of a git directory changed or went: put back as it was. A `git status`
    /// that refreshes it does this as much as a `git add` that stages: bwrap lets neither
    /// write it, and this is no attack of itself, so it is a note, not a tampering.
    Index,
    /// It was removed: it is made again as recorded.
    Removed,
    /// It was made (in a kept directory): moved aside to this path, where nothing reads it.
    Added(PathBuf),
    /// It was renamed to this path: renamed back.
    Renamed(PathBuf),
    /// A hidden file got this other name (a hard link): the name is removed.
    Linked(PathBuf),
    /// The kept paths were too large to record whole: changes past the first
    /// [`RECORD_ENTRIES`] entries or [`RECORD_BYTES`] bytes are not put back.
    NotRecorded,
    /// This many files of a git object store were removed or replaced: written back.
    ObjectsRemoved(usize),
    /// This many files of a git object store were rewritten in place: not undone.
    ObjectsRewritten(usize),
}

impl std::fmt::Display for Repaired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        match &self.change {
            Change::Changed => write!(f, "the command changed {path}")?,
            Change::Index => write!(
                f,
                "git's index {path} changed (a git status refreshes it, a git add stages): \
                 commands cannot change it"
            )?,
            Change::Removed => write!(f, "the command removed {path}")?,
            Change::Added(to) => write!(
                f,
                "the command made {path}; moved to {}, where nothing reads it",
                to.display()
            )?,
            Change::Renamed(to) => write!(f, "the command renamed {path} to {}", to.display())?,
            Change::Linked(name) => write!(
                f,
                "the command gave the hidden {path} another name, {}",
                name.display()
            )?,
            Change::ObjectsRemoved(count) => {
                write!(
                    f,
                    "the command removed or replaced {count} file(s) of {path}"
                )?;
            }
            Change::ObjectsRewritten(count) => {
                write!(f, "the command rewrote {count} file(s) of {path} in place")?;
            }
            Change::NotRecorded => {
                return write!(
                    f,
                    "{path} is too large to record whole before each command: changes past \
                     the first {RECORD_ENTRIES} entries or {} MiB there are not put back",
                    RECORD_BYTES / (1024 * 1024)
                );
            }
        }
        match (&self.change, &self.result) {
            (Change::Added(_), Ok(())) => Ok(()),
            (Change::Linked(_), Ok(())) => f.write_str("; that name is removed"),
            (_, Ok(())) => f.write_str("; put back as it was"),
            (_, Err(error)) => write!(f, "; it could NOT be put back: {error}"),
        }
    }
}
