//! Taking a run back, and bringing it back: the workspace put as it was before the run
//! (`undo`) or as the run left it (`redo`), refused without `force` when files changed
//! since. A run that is part of a chain of follow-ups is taken back as a step of its chain
//! ([`harness_undo::Chain`]): one run at a time, never past the user's own edits, or the
//! whole chain at once.

use harness_undo::{Chain, Force, Restored, Session};

use crate::Error;
use crate::toolbox;

/// Puts the workspace back as it was before the run of `session`; in a chain, before its
/// last run not undone, which `session` becomes (see [`undo_chain`]).
///
/// # Errors
///
/// Files changed since the run ended (without `force`), or a store that cannot be read.
pub fn undo(session: &mut Session, force: bool) -> Result<Restored, Error> {
    undo_chain(session, force, false)
}

/// Steps back the chain of follow-ups the run of `session` belongs to: its last run not
/// undone, or with `whole` every run, so that the workspace is as it was before the first
/// (the user's own edits between runs saved with the undo, and brought back by redo).
/// `session` becomes the run undone (with `whole`, the first). A run that is no chain's is
/// undone as itself.
///
/// # Errors
///
/// The user's own edits in the way of one step back
/// ([`harness_undo::Error::UserEdits`]), every run undone already, files changed or HEAD
/// moved since (without `force`), or a store that cannot be read.
pub fn undo_chain(session: &mut Session, force: bool, whole: bool) -> Result<Restored, Error> {
    let Some(chain) = chain_of(session)? else {
        return Ok(session.undo(force_of(force))?);
    };
    let (undone, restored) = if whole {
        chain.undo_all(force_of(force))?
    } else {
        chain.undo(force_of(force))?
    };
    *session = undone;
    Ok(restored)
}

/// Brings back the work of the run of `session` that an undo took back; in a chain, of its
/// first run undone, which `session` becomes.
///
/// # Errors
///
/// Files changed since the undo (without `force`), or a store that cannot be read.
pub fn redo(session: &mut Session, force: bool) -> Result<Restored, Error> {
    let Some(chain) = chain_of(session)? else {
        return Ok(session.redo(force_of(force))?);
    };
    let (redone, restored) = chain.redo(force_of(force))?;
    *session = redone;
    Ok(restored)
}

/// The chain of follow-ups the run of `session` belongs to, hiding what the configuration
/// hides; `None` for a run that is no chain's (no follow-up, and followed by none).
pub(crate) fn chain_of(session: &Session) -> Result<Option<Chain>, Error> {
    let mut chain = Chain::of(session.root(), session.id())?;
    if chain.runs().len() < 2 {
        return Ok(None);
    }
    chain.hide(toolbox::hidden_by_configuration(session.root()));
    Ok(Some(chain))
}

/// The undo store's word for `force`.
fn force_of(force: bool) -> Force {
    if force { Force::Yes } else { Force::No }
}
