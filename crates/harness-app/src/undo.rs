//! Taking a run back, and bringing it back: the workspace put as it was before the run
//! (`undo`) or as the run left it (`redo`), refused without `force` when files changed
//! since.

use harness_undo::{Force, Restored, Session};

use crate::Error;

/// Puts the workspace back as it was before the run of `session`.
///
/// # Errors
///
/// Files changed since the run ended (without `force`), or a store that cannot be read.
pub fn undo(session: &mut Session, force: bool) -> Result<Restored, Error> {
    Ok(session.undo(force_of(force))?)
}

/// Brings back the work of the run of `session` that an undo took back.
///
/// # Errors
///
/// Files changed since the undo (without `force`), or a store that cannot be read.
pub fn redo(session: &mut Session, force: bool) -> Result<Restored, Error> {
    Ok(session.redo(force_of(force))?)
}

/// The undo store's word for `force`.
fn force_of(force: bool) -> Force {
    if force { Force::Yes } else { Force::No }
}
