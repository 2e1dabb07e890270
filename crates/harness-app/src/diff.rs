//! What a run changed: the diff of its files (against the working tree or a checkpoint),
//! and the ignored files it made, changed or deleted.

use harness_undo::{Diff, DiffTarget, IgnoredChanges, Session};

use crate::Error;

/// What a run changed.
#[derive(Debug)]
pub struct RunDiff {
    /// The files git records.
    pub diff: Diff,
    /// Ignored files, compared with the start only as they are now: empty for a
    /// checkpoint.
    pub ignored: IgnoredChanges,
}

impl RunDiff {
    /// True if and only if the run changed nothing.
    pub fn is_empty(&self) -> bool {
        self.diff.is_empty() && self.ignored.is_empty()
    }
}

/// What the run of `session` changed up to now, or up to its checkpoint `checkpoint`.
///
/// # Errors
///
/// A checkpoint that does not exist, or a store that cannot be read.
pub fn diff(session: &mut Session, checkpoint: Option<u32>) -> Result<RunDiff, Error> {
    let target = checkpoint.map_or(DiffTarget::WorkingTree, DiffTarget::Checkpoint);
    let diff = session.diff(target)?;
    // Ignored files are compared with the start only as they are now.
    let ignored = match target {
        DiffTarget::WorkingTree => session.ignored_changes()?,
        _ => IgnoredChanges::default(),
    };
    Ok(RunDiff { diff, ignored })
}
