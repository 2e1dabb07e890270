//! Accepting a run: [`Session::accept`] commits what the run changed onto the current
//! branch as one commit of the user's (merged onto HEAD, the uncommitted work from
//! before the run left out), and sets the index to match. No hook runs.

use std::path::PathBuf;

use git2::{Oid, Repository};

use super::Session;
use crate::error::GitContext;
use crate::record::RunRecord;
use crate::{CommitId, Error, fill, paths, state};

/// What [`Session::accept`] committed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Accepted {
    /// The new commit on the current branch.
    pub commit: CommitId,
    /// Its message.
    pub message: String,
}

impl Session {
    /// Commits what the run changed onto the current branch as one commit,
    /// whose message names the task and the run, and updates the index to
    /// match (the working tree already does).
    ///
    /// Only the run's changes are committed: uncommitted work that was there
    /// before the run (`allow_dirty`) stays uncommitted, and commits made since
    /// the run are kept (the changes are merged onto HEAD). Author and
    /// committer are the user's `user.name` and `user.email`, or
    /// `harness <harness@localhost>` when those are not configured. Commit
    /// hooks do not run.
    ///
    /// # Errors
    ///
    /// [`Error::NothingToAccept`] when the working tree is in the pre-run state,
    /// [`Error::AcceptConflict`] when the run's changes overlap other changes,
    /// [`Error::IndexLocked`] while another git command holds the index.
    pub fn accept(&mut self) -> Result<Accepted, Error> {
        self.reload()?;
        let message = accept_message(&self.record);
        self.accept_with(message)
    }

    /// [`accept`](Self::accept) with the commit message `message`: a chain's names its runs.
    pub(super) fn accept_with(&mut self, message: String) -> Result<Accepted, Error> {
        self.wait_for_store()?;
        self.reload()?;
        self.refuse_locked_index()?;
        let pre = self.record.pre;
        let (scanner, now) = self.full_snapshot(self.last_tree)?;
        let too_large = scanner.too_large();
        if !too_large.is_empty() {
            return Err(Error::TooLarge {
                run: self.record.id.clone(),
                paths: too_large,
            });
        }
        if now == pre.tree {
            return Err(Error::NothingToAccept {
                run: self.record.id.clone(),
            });
        }
        let head = self
            .repo
            .head()
            .and_then(|h| h.peel_to_commit())
            .context("read HEAD's commit")?;
        let tree = self.merge(pre.tree, head.tree_id(), now)?;
        let index_tree = self.merge(pre.tree, state::index_tree(&self.repo)?, now)?;
        let signature =
            state::user_signature(&self.repo.config().context("read the configuration")?)?;
        let tree = self.repo.find_tree(tree).context("find the merged tree")?;
        let commit = self
            .repo
            .commit(None, &signature, &signature, &message, &tree, &[&head])
            .context("commit the run's changes")?;
        // The session writes into the store: the commit the user's branch takes, and
        // what their index names, go into the workspace whole (this is the user's own
        // commit), before the branch moves.
        let own = Repository::open(self.repo.path()).context("open the workspace's repository")?;
        fill::fill_workspace(&self.repo, &own, commit, false, Some(head.tree_id()))?;
        fill::fill_tree(&self.repo, &own, index_tree, Some(head.tree_id()))?;
        self.repo
            .head()
            .and_then(|mut branch| {
                branch.set_target(
                    commit,
                    &format!("commit: {}", message.lines().next().unwrap_or_default()),
                )
            })
            .context("move the branch to the run's commit")?;
        let mut index =
            git2::Index::open(&state::index_path(self.repo.path())).context("read the index")?;
        let index_tree = self
            .repo
            .find_tree(index_tree)
            .context("find the new index")?;
        index.read_tree(&index_tree).context("load the new index")?;
        index.write().context("write the index")?;
        self.record.accepted = Some(commit);
        self.runs.write(&self.record)?;
        Ok(Accepted {
            commit: CommitId(commit),
            message,
        })
    }

    /// The three-way merge of `theirs` and `ours` from `base`.
    fn merge(&self, base: Oid, ours: Oid, theirs: Oid) -> Result<Oid, Error> {
        let find = |id| self.repo.find_tree(id).context("find a tree to merge");
        let mut merged = self
            .repo
            .merge_trees(&find(base)?, &find(ours)?, &find(theirs)?, None)
            .context("merge the run's changes")?;
        if merged.has_conflicts() {
            let mut conflicted: Vec<PathBuf> = merged
                .conflicts()
                .context("read the merge's conflicts")?
                .filter_map(Result::ok)
                .filter_map(|c| c.our.or(c.their).or(c.ancestor))
                .map(|entry| paths::from_bytes(&entry.path))
                .collect();
            conflicted.sort();
            return Err(Error::AcceptConflict {
                run: self.record.id.clone(),
                paths: conflicted,
            });
        }
        merged
            .write_tree_to(&self.repo)
            .context("write the merged tree")
    }
}

/// The message of the commit accept makes.
fn accept_message(record: &RunRecord) -> String {
    const SUBJECT_CHARS: usize = 72;
    let task = record.task.trim();
    let first_line = task.lines().next().unwrap_or_default();
    let mut subject: String = first_line.chars().take(SUBJECT_CHARS).collect();
    if subject.len() < first_line.len() {
        subject.push('…');
    }
    if subject.is_empty() {
        subject = format!("Changes of harness run {}", record.id);
    }
    let mut message = format!("{subject}\n\n");
    if !task.is_empty() {
        message.push_str(&format!("Task: {task}\n\n"));
    }
    message.push_str(&format!("Harness-Run: {}\n", record.id));
    if !record.model.is_empty() {
        message.push_str(&format!("Harness-Model: {}\n", record.model));
    }
    message
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;
    use crate::record::{self, State};

    fn record(task: &str, model: &str) -> RunRecord {
        let oid = Oid::ZERO_SHA1;
        let state = State {
            commit: oid,
            tree: oid,
            index_tree: oid,
            head: oid,
        };
        record::new_record(
            "20250101-000000-000".parse().unwrap(),
            task.into(),
            model.into(),
            SystemTime::UNIX_EPOCH,
            state,
            false,
        )
    }

    macro_rules! messages {
        ($($name:ident: $task:expr, $model:expr => $message:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(accept_message(&record($task, $model)), $message);
            }
        )*};
    }

    messages! {
        short_task: "Fix the failing test", "qwen3" =>
            "Fix the failing test\n\nTask: Fix the failing test\n\n\
             Harness-Run: 20250101-000000-000\nHarness-Model: qwen3\n";
        multi_line_task: "Fix it\nin src/", "" =>
            "Fix it\n\nTask: Fix it\nin src/\n\nHarness-Run: 20250101-000000-000\n";
        no_task: "  ", "m" =>
            "Changes of harness run 20250101-000000-000\n\n\
             Harness-Run: 20250101-000000-000\nHarness-Model: m\n";
        exactly_72: &"x".repeat(72), "" =>
            format!("{x}\n\nTask: {x}\n\nHarness-Run: 20250101-000000-000\n", x = "x".repeat(72));
        long_task: &"y".repeat(73), "" =>
            format!("{}…\n\nTask: {}\n\nHarness-Run: 20250101-000000-000\n", "y".repeat(72), "y".repeat(73));
    }
}
