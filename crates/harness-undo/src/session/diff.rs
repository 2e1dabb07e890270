//! What the run changed: [`Session::diff`] compares the pre-run state with the working
//! tree as it is now or with a checkpoint, without changing either.

use super::Session;
use crate::Error;
use crate::diff::{self, Diff};
use crate::error::GitContext;

/// What [`Session::diff`] compares the pre-run state with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DiffTarget {
    /// The working tree as it is now.
    #[default]
    WorkingTree,
    /// Checkpoint number `n`, counted from 1.
    Checkpoint(u32),
}

impl Session {
    /// What the run changed: the diff from the pre-run state to `to`.
    pub fn diff(&mut self, to: DiffTarget) -> Result<Diff, Error> {
        self.wait_for_store()?;
        self.ensure_repository()?;
        let to_tree = match to {
            DiffTarget::WorkingTree => self.scanner()?.snapshot()?,
            DiffTarget::Checkpoint(number) => {
                let checkpoints = self.checkpoints()?;
                let count = u32::try_from(checkpoints.len()).unwrap_or(u32::MAX);
                let index = usize::try_from(number).unwrap_or(usize::MAX);
                let checkpoint = index
                    .checked_sub(1)
                    .and_then(|i| checkpoints.get(i))
                    .ok_or_else(|| Error::UnknownCheckpoint {
                        run: self.record.id.clone(),
                        number,
                        count,
                    })?;
                self.repo
                    .find_commit(checkpoint.commit.0)
                    .context("find the checkpoint")?
                    .tree_id()
            }
        };
        diff::between(&self.repo, self.record.pre.tree, to_tree)
    }
}
