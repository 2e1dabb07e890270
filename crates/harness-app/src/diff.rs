//! What a run changed: the diff of its files (against the working tree or a checkpoint),
//! and the ignored files it made, changed or deleted; and the steps of a chain of
//! follow-ups, the user's own edits between runs apart.

use harness_undo::{Chain, Diff, DiffTarget, IgnoredChanges, Session, Step};

use crate::Error;
use crate::render::{self, Style};
use crate::shown::Shown;

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

/// The steps of the chain of follow-ups the run of `session` belongs to, in order: each
/// run's own work, and the user's own edits before a run or since the last, apart. The
/// runs undone are left out; ignored files are not in them. A run of no chain is one step.
///
/// # Errors
///
/// A store or working tree that cannot be read.
pub fn chain_steps(session: &Session) -> Result<Vec<Step>, Error> {
    Ok(Chain::of(session.root(), session.id())?.steps()?)
}

/// [`chain_steps`] as text: each step under a heading that says whose it is, as a patch
/// or, with `stat`, one line per file ([`render::chain_diff`]).
///
/// # Errors
///
/// A store or working tree that cannot be read.
pub fn chain_diff(session: &Session, style: Style, stat: bool) -> Result<Shown, Error> {
    Ok(render::chain_diff(&chain_steps(session)?, style, stat))
}
