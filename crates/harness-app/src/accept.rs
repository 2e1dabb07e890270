//! Keeping a run's work as one commit.

use harness_undo::{Accepted, Session};

use crate::Error;

/// Commits the work of the run of `session`.
///
/// # Errors
///
/// A run that cannot be accepted (undone, changed since), or a repository that refuses
/// the commit.
pub fn accept(session: &mut Session) -> Result<Accepted, Error> {
    Ok(session.accept()?)
}
