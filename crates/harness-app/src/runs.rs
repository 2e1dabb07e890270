//! The runs recorded in a workspace, and the undo stores of every workspace: listed with
//! how each run ended, pruned, and the stores of workspaces that are gone removed.

use std::path::{Path, PathBuf};

use harness_agent::{Record, Transcript};
use harness_undo::{Prune, Pruned, RunInfo, Session, StoreInfo};

use crate::Error;

/// A recorded run, with how it ended in the words that say most.
#[derive(Debug)]
pub struct Listed {
    /// What the undo record holds.
    pub info: RunInfo,
    /// The agent's own outcome ("verification failed"), which says more than the undo
    /// record's ("failed"); else the record's, or whether the run is in progress or was
    /// never finished.
    pub outcome: String,
    /// `accepted`, `undone`, or empty.
    pub state: &'static str,
}

/// The runs recorded in the workspace `root` (canonical), oldest first.
///
/// # Errors
///
/// A store that cannot be read.
pub fn list(root: &Path) -> Result<Vec<Listed>, Error> {
    Ok(Session::runs(root)?
        .into_iter()
        .map(|info| {
            let outcome = match (agent_outcome(&info.dir), info.outcome) {
                (Some(outcome), _) => outcome,
                (None, Some(outcome)) => outcome.to_string(),
                (None, None) if harness_undo::is_in_progress(&info) => "in progress".to_owned(),
                (None, None) => "unfinished".to_owned(),
            };
            let state = if info.accepted.is_some() {
                "accepted"
            } else if info.undone {
                "undone"
            } else {
                ""
            };
            Listed {
                info,
                outcome,
                state,
            }
        })
        .collect())
}

/// Removes the runs of `root` that `keep` or `older_than_days` leave out: the newest `keep`
/// are kept, or those younger than `older_than_days` days. Runs in progress are kept.
///
/// # Errors
///
/// [`Error::PruneWhich`] without either, or a store that cannot be changed.
pub fn prune(
    root: &Path,
    keep: Option<usize>,
    older_than_days: Option<u64>,
) -> Result<Pruned, Error> {
    let which = match (keep, older_than_days) {
        (Some(n), _) => Prune::Keep(n),
        (None, Some(days)) => {
            Prune::OlderThan(std::time::Duration::from_secs(days.saturating_mul(86_400)))
        }
        (None, None) => return Err(Error::PruneWhich),
    };
    Ok(harness_undo::prune(root, which)?)
}

/// The undo store of `root` and its size in bytes, when it has one.
///
/// # Errors
///
/// A store that cannot be read.
pub fn store_of(root: &Path) -> Result<Option<(PathBuf, u64)>, Error> {
    let Some(bytes) = harness_undo::store_size(root)? else {
        return Ok(None);
    };
    let store = harness_undo::stores()?
        .into_iter()
        .find(|store| store.workspace == root);
    Ok(store.map(|store| (store.dir, bytes)))
}

/// What became of a store when the stores were listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreState {
    /// Its workspace exists.
    InUse,
    /// Its workspace is gone; it was removed, as asked.
    Removed,
    /// Its workspace is gone, but a run of it is in progress: kept.
    RunInProgress,
    /// Its workspace is gone; it was kept, as nothing asked to remove it.
    WorkspaceGone,
}

/// Every undo store, and with `remove_missing` the stores of workspaces that are gone
/// removed.
///
/// # Errors
///
/// No state directory, or a store that cannot be read or removed.
pub fn stores(remove_missing: bool) -> Result<Vec<(StoreInfo, StoreState)>, Error> {
    let mut listed = Vec::new();
    for store in harness_undo::stores()? {
        let state = if store.workspace_exists {
            StoreState::InUse
        } else if remove_missing {
            match harness_undo::remove_store(&store) {
                Ok(()) => StoreState::Removed,
                // Its workspace may be gone for a moment, or moved: the run still needs it.
                Err(harness_undo::Error::RunInProgress { .. }) => StoreState::RunInProgress,
                Err(error) => return Err(error.into()),
            }
        } else {
            StoreState::WorkspaceGone
        };
        listed.push((store, state));
    }
    Ok(listed)
}

/// The outcome the agent recorded last in the transcript of the run in `run_dir`.
fn agent_outcome(run_dir: &Path) -> Option<String> {
    let lines = Transcript::read(run_dir.join("transcript.jsonl")).ok()?;
    match &lines.last()?.record {
        Record::Outcome(report) => Some(report.outcome.to_string()),
        _ => None,
    }
}
