//! Keeping a run's work as one commit; a chain of follow-ups is kept whole, as one commit
//! naming its runs.

use harness_undo::{Accepted, Session};

use crate::Error;
use crate::undo::chain_of;

/// Commits the work of the run of `session`; in a chain of follow-ups, the work of every
/// run not undone and the user's own edits between them, as one commit, and `session`
/// becomes the chain's first run.
///
/// # Errors
///
/// A run that cannot be accepted (undone, changed since), or a repository that refuses
/// the commit.
pub fn accept(session: &mut Session) -> Result<Accepted, Error> {
    let Some(chain) = chain_of(session)? else {
        return Ok(session.accept()?);
    };
    let (first, accepted) = chain.accept()?;
    *session = first;
    Ok(accepted)
}
