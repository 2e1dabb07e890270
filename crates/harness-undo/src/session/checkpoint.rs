//! Checkpoints: [`Session::checkpoint`] snapshots the working tree after a step as a
//! commit chained on the previous one under `refs/harness/<id>/checkpoints`, built in a
//! private index and never in the user's; with change notes it costs what changed.
//! [`Session::checkpoints`] reads the chain back from the store.

use super::{Checkpoint, Session};
use crate::error::GitContext;
use crate::{CommitId, Error, state};

impl Session {
    /// Snapshots the working tree as the run's next checkpoint, or returns
    /// `None` when nothing changed since the last one (or since the start).
    ///
    /// The snapshot is a commit under `refs/harness/<id>/checkpoints` whose
    /// parent is the previous checkpoint (or the pre-run state), built in a
    /// private index. With [`Tracking::Watch`](crate::Tracking::Watch) it costs what
    /// changed.
    pub fn checkpoint(&mut self, label: &str) -> Result<Option<Checkpoint>, Error> {
        self.wait_for_store()?;
        self.ensure_repository()?;
        let tree = self.scanner()?.snapshot()?;
        if tree == self.last_tree {
            return Ok(None);
        }
        let number = self.last.as_ref().map_or(1, |c| c.number + 1);
        let parent = self
            .last
            .as_ref()
            .map_or(self.record.pre.commit, |c| c.commit.0);
        let label = label.split_whitespace().collect::<Vec<_>>().join(" ");
        let message = format!("checkpoint {number}: {label}\n\nRun {}.\n", self.record.id);
        let parent = self
            .repo
            .find_commit(parent)
            .context("find the previous checkpoint")?;
        let commit = state::commit(
            &self.repo,
            &state::harness_signature()?,
            &message,
            tree,
            &[parent],
        )?;
        self.set_run_ref(
            "checkpoints",
            commit,
            false,
            self.last_tree,
            &format!("checkpoint {number}"),
        )?;
        let checkpoint = Checkpoint {
            number,
            label,
            commit: CommitId(commit),
        };
        self.last = Some(checkpoint.clone());
        self.last_tree = tree;
        Ok(Some(checkpoint))
    }

    /// The run's checkpoints, oldest first.
    pub fn checkpoints(&self) -> Result<Vec<Checkpoint>, Error> {
        let name = self.run_ref("checkpoints");
        let store = self.store.repo();
        let mut next = match store.refname_to_id(&name) {
            Ok(id) => Some(id),
            Err(e) => {
                // No checkpoint yet; anything else is a damaged ref.
                if e.code() != git2::ErrorCode::NotFound {
                    return Err(e).context(format_args!("read {name}"));
                }
                None
            }
        };
        let mut checkpoints = Vec::new();
        while let Some(id) = next.filter(|id| *id != self.record.pre.commit) {
            let commit = store.find_commit(id).context("find a checkpoint")?;
            let Some((number, label)) = commit
                .summary()
                .ok()
                .flatten()
                .and_then(parse_checkpoint_summary)
            else {
                break;
            };
            checkpoints.push(Checkpoint {
                number,
                label,
                commit: CommitId(id),
            });
            next = commit.parent_ids().next();
        }
        checkpoints.reverse();
        Ok(checkpoints)
    }
}

/// The number and label of a checkpoint commit's summary line.
fn parse_checkpoint_summary(summary: &str) -> Option<(u32, String)> {
    let (number, label) = summary.strip_prefix("checkpoint ")?.split_once(':')?;
    // git trims the space after the colon when the label is empty.
    Some((number.parse().ok()?, label.trim_start().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! summaries {
        ($($name:ident: $summary:expr => $parsed:expr;)*) => {$(
            #[test]
            fn $name() {
                let parsed: Option<(u32, &str)> = $parsed;
                assert_eq!(
                    parse_checkpoint_summary($summary),
                    parsed.map(|(n, l)| (n, l.to_string()))
                );
            }
        )*};
    }

    summaries! {
        labelled: "checkpoint 3: edit src/lib.rs" => Some((3, "edit src/lib.rs"));
        label_with_colon: "checkpoint 12: run: cargo test" => Some((12, "run: cargo test"));
        empty_label: "checkpoint 1: " => Some((1, ""));
        empty_label_trimmed: "checkpoint 1:" => Some((1, ""));
        not_a_checkpoint: "pre-run state of run x" => None;
        no_number: "checkpoint x: y" => None;
        no_colon: "checkpoint 4" => None;
    }
}
