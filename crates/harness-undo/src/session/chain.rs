//! Chains of runs: a follow-up ([`BeginOptions::follows`](crate::BeginOptions::follows))
//! starts from the state the run before it left and is recorded as the next run of its
//! chain. [`Chain`] steps through one: undo one run at a time, or the whole chain back to
//! the state before its first run; redo forward again; accept it as one commit; and the
//! diff of each step, the user's own edits between runs told apart from the runs' work.
//!
//! Each run of a chain keeps its own pre-run state, so a chain is undone with the undo of
//! its runs, newest first, each saving what it replaces: the user's edits made before
//! run N are in the state run N−1's undo saved, and its redo brings them back. Plain undo
//! never takes them: where the workspace differs from how the run to step back left it, it
//! refuses ([`Error::UserEdits`]), and only the undo of the whole chain goes past them.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

use super::Session;
use super::accept::Accepted;
use super::replace::{Force, Restored};
use crate::diff::{self, Diff};
use crate::error::LISTED_PATHS;
use crate::record::{RunRecord, Runs};
use crate::store::Store;
use crate::{Error, Hidden, RunId, RunInfo};

/// The runs of one chain, first to last: the ancestors of a run, the run, and the newest
/// run that follows it, and the newest that follows that one, and so on.
#[derive(Debug)]
pub struct Chain {
    /// The workspace's top level.
    root: PathBuf,
    /// Where its runs are recorded.
    runs: Runs,
    /// The chain's records, first to last.
    records: Vec<RunRecord>,
    /// What the sessions opened for the chain hide ([`Session::hide`]).
    hidden: Hidden,
}

impl Chain {
    /// The chain run `run` of the workspace at `root` belongs to: its ancestors, the run,
    /// and the newest run that follows it, and so on. A run that is no follow-up and has
    /// none is a chain of one.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownRun`], or a store that cannot be read.
    pub fn of(root: &Path, run: &RunId) -> Result<Chain, Error> {
        let root = std::fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
        let unknown = || Error::UnknownRun {
            run: run.clone(),
            root: root.clone(),
        };
        let store = Store::open(&root)?.ok_or_else(unknown)?;
        let runs = Runs::new(store.dir());
        let all = runs.records()?;
        let find = |id: &RunId| all.iter().find(|r| &r.id == id);
        let mut records = vec![find(run).ok_or_else(unknown)?.clone()];
        // Back to the first: a parent is older than its child, so this ends; a pruned one
        // ends the chain there.
        while let Some(parent) = records.last().and_then(|r| r.parent.as_ref())
            && let Some(record) = find(parent).filter(|p| p.id < records[records.len() - 1].id)
        {
            records.push(record.clone());
        }
        records.reverse();
        // Forward to the newest follow-up of each.
        while let Some(child) = all
            .iter()
            .filter(|r| r.parent.as_ref() == records.last().map(|l| &l.id))
            .max_by(|a, b| a.id.cmp(&b.id))
        {
            records.push(child.clone());
        }
        Ok(Chain {
            root,
            runs,
            records,
            hidden: Hidden::default(),
        })
    }

    /// Hides `hidden` in every session the chain opens (see [`Session::hide`]).
    pub fn hide(&mut self, hidden: Hidden) {
        self.hidden = hidden;
    }

    /// The chain's runs, first to last.
    pub fn runs(&self) -> Vec<RunInfo> {
        self.records
            .iter()
            .map(|r| r.info(&self.runs.run_dir(&r.id)))
            .collect()
    }

    /// How many of the chain's runs are in the workspace: those before the first one
    /// undone.
    fn applied(&self) -> usize {
        self.records
            .iter()
            .position(|r| r.undone)
            .unwrap_or(self.records.len())
    }

    /// The steps of the chain's runs that are not undone, in order: before each run the
    /// user's own edits since the run before it ended, if any, then the run's own work,
    /// and at the end the user's edits since the last run ended, if any. Ignored files
    /// are not in them.
    ///
    /// # Errors
    ///
    /// A store or working tree that cannot be read.
    pub fn steps(&self) -> Result<Vec<Step>, Error> {
        let applied = self.applied();
        let Some(last) = applied.checked_sub(1) else {
            return Ok(Vec::new());
        };
        let mut session = self.open(last)?;
        let mut steps = Vec::new();
        let mut end = None;
        for record in &self.records[..applied] {
            if let Some(before) = record.parent_end.filter(|e| *e != record.pre.tree) {
                steps.push(Step {
                    of: StepOf::UserBefore(record.id.clone()),
                    diff: diff::between(&session.repo, before, record.pre.tree)?,
                });
            }
            let this_end = end_of(session.store.repo(), record);
            steps.push(Step {
                of: StepOf::Run(record.id.clone()),
                diff: diff::between(&session.repo, record.pre.tree, this_end)?,
            });
            end = Some(this_end);
        }
        let (_, now) = session.full_snapshot(session.last_tree)?;
        if let Some(end) = end.filter(|e| *e != now) {
            steps.push(Step {
                of: StepOf::UserAfter(self.records[last].id.clone()),
                diff: diff::between(&session.repo, end, now)?,
            });
        }
        Ok(steps)
    }

    /// Steps back the chain's last run not undone: the workspace as it was before that
    /// run. Returns its session and what the undo did.
    ///
    /// # Errors
    ///
    /// [`Error::UserEdits`] when the workspace differs from how that run left it (the
    /// user's own edits, which only [`undo_all`](Self::undo_all) goes past);
    /// [`Error::ChainUndone`] when every run is undone; what [`Session::undo`] refuses.
    pub fn undo(&self, force: Force) -> Result<(Session, Restored), Error> {
        let applied = self.applied();
        let Some(last) = applied.checked_sub(1) else {
            return Err(self.all_undone());
        };
        let mut session = self.open(last)?;
        let end = end_of(session.store.repo(), &self.records[last]);
        let (_, now) = session.full_snapshot(session.last_tree)?;
        if now != end {
            let edits = diff::between(&session.repo, end, now)?;
            let paths: Vec<PathBuf> = edits.files.into_iter().map(|f| f.path).collect();
            return Err(Error::UserEdits {
                run: self.records[last].id.clone(),
                before: self.records.get(applied).map(|r| r.id.clone()),
                count: paths.len(),
                paths: paths.into_iter().take(LISTED_PATHS).collect(),
            });
        }
        let restored = session.undo(force)?;
        Ok((session, restored))
    }

    /// Undoes every run of the chain not undone, newest first, so that the workspace is
    /// as it was before the first, byte for byte; the user's edits between runs are saved
    /// with the undo of the run before them, and redo brings them back with it. Returns the
    /// first run's session and what the undos did together.
    ///
    /// # Errors
    ///
    /// [`Error::ChainUndone`] when every run is undone; what [`Session::undo`] refuses,
    /// which the first undo does before anything changed when HEAD moved.
    pub fn undo_all(&self, force: Force) -> Result<(Session, Restored), Error> {
        let applied = self.applied();
        if applied == 0 {
            return Err(self.all_undone());
        }
        let mut done: Option<(Session, Restored)> = None;
        for index in (0..applied).rev() {
            let mut session = self.open(index)?;
            let restored = session.undo(force)?;
            let restored = match done {
                Some((_, before)) => before.then(restored),
                None => restored,
            };
            done = Some((session, restored));
        }
        done.ok_or_else(|| self.all_undone())
    }

    /// Brings back the chain's first run that is undone (see [`Session::redo`]).
    ///
    /// # Errors
    ///
    /// [`Error::NothingToRedo`] when no run of the chain is undone; what
    /// [`Session::redo`] refuses.
    pub fn redo(&self, force: Force) -> Result<(Session, Restored), Error> {
        let applied = self.applied();
        if applied == self.records.len() {
            return Err(Error::NothingToRedo {
                run: self.records[applied - 1].id.clone(),
            });
        }
        let mut session = self.open(applied)?;
        let restored = session.redo(force)?;
        Ok((session, restored))
    }

    /// Commits the work of the chain's runs that are not undone, and the user's edits
    /// between them, as one commit (see [`Session::accept`]) whose message names every
    /// run; each of them is recorded as accepted. Returns the first run's session.
    ///
    /// # Errors
    ///
    /// [`Error::NothingToAccept`] when every run is undone; what [`Session::accept`]
    /// refuses.
    pub fn accept(&self) -> Result<(Session, Accepted), Error> {
        let applied = &self.records[..self.applied()];
        let Some(first) = applied.first() else {
            return Err(Error::NothingToAccept {
                run: self.records[0].id.clone(),
            });
        };
        let mut session = self.open(0)?;
        let accepted = session.accept_with(chain_message(applied))?;
        for record in &applied[1..] {
            if let Some(mut record) = self.runs.find(&record.id)? {
                record.accepted = Some(accepted.commit.0);
                self.runs.write(&record)?;
            }
        }
        debug_assert_eq!(session.id(), &first.id);
        Ok((session, accepted))
    }

    /// The session of the chain's run at `index`.
    fn open(&self, index: usize) -> Result<Session, Error> {
        let mut session = Session::open(&self.root, &self.records[index].id)?;
        session.hide(self.hidden.clone());
        Ok(session)
    }

    fn all_undone(&self) -> Error {
        Error::ChainUndone {
            run: self.records[0].id.clone(),
        }
    }
}

/// Whose change a [`Step`] of a chain is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepOf {
    /// The run's own work: from its pre-run state to the tree it left.
    Run(RunId),
    /// The user's own edits, made between the run before and this run.
    UserBefore(RunId),
    /// The user's own edits, made since this run, the last one not undone, ended.
    UserAfter(RunId),
}

/// One step of a chain and what it changed, as [`Chain::steps`] lists them.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Step {
    /// Whose change it is.
    pub of: StepOf,
    /// What it changed.
    pub diff: Diff,
}

/// Checks that the run `parent` can be followed up on the tree of `repo`, whose HEAD is
/// `head`, and returns the working tree it left. Refused: a run accepted or undone, one in
/// progress in another process, one begun on another HEAD, one another run (not undone)
/// already follows.
pub(super) fn check_parent(
    repo: &Repository,
    store: &Store,
    parent: &RunId,
    head: Oid,
) -> Result<Oid, Error> {
    let runs = Runs::new(store.dir());
    let record = runs.find(parent)?.ok_or_else(|| Error::UnknownRun {
        run: parent.clone(),
        root: repo.workdir().map(Path::to_path_buf).unwrap_or_default(),
    })?;
    if let Some(commit) = record.accepted {
        return Err(Error::FollowsAccepted {
            run: parent.clone(),
            commit: commit.to_string(),
        });
    }
    if record.undone {
        return Err(Error::FollowsUndone {
            run: parent.clone(),
        });
    }
    if record.ended_ms.is_none() && crate::live::is_held(&runs.run_dir(parent)) {
        return Err(Error::RunInProgress {
            run: parent.clone(),
            store: store.dir().to_path_buf(),
        });
    }
    if record.pre.head != head {
        return Err(Error::FollowsMovedHead {
            run: parent.clone(),
        });
    }
    if let Some(child) = runs
        .records()?
        .into_iter()
        .find(|r| r.parent.as_ref() == Some(parent) && !r.undone)
    {
        return Err(Error::AlreadyFollowed {
            run: parent.clone(),
            by: child.id,
        });
    }
    Ok(end_of(store.repo(), &record))
}

/// The working tree run `record` left: its last checkpoint's (the loop takes one after
/// every step that may have changed files, the verification's and the return to the start
/// of a new attempt included), else its pre-run state's.
fn end_of(store: &Repository, record: &RunRecord) -> Oid {
    store
        .refname_to_id(&super::run_ref(&record.id, "checkpoints"))
        .and_then(|id| store.find_commit(id))
        .map(|commit| commit.tree_id())
        .unwrap_or(record.pre.tree)
}

/// The message of the commit that accepts the chain of `records` (first to last): the
/// first task's subject and the number of follow-ups, every task, and every run.
fn chain_message(records: &[RunRecord]) -> String {
    const SUBJECT_CHARS: usize = 60;
    let first = records[0].task.trim();
    let line = first.lines().next().unwrap_or_default();
    let mut subject: String = line.chars().take(SUBJECT_CHARS).collect();
    if subject.len() < line.len() {
        subject.push('…');
    }
    if subject.is_empty() {
        subject = format!("Changes of harness run {}", records[0].id);
    }
    let follow_ups = records.len() - 1;
    if follow_ups > 0 {
        let s = if follow_ups == 1 { "" } else { "s" };
        subject.push_str(&format!(" (+{follow_ups} follow-up{s})"));
    }
    let mut message = format!("{subject}\n\n");
    for (index, record) in records.iter().enumerate() {
        let label = if index == 0 { "Task" } else { "Follow-up" };
        if record.parent_end.is_some_and(|end| end != record.pre.tree) {
            message.push_str(&format!("Your own edits, made before run {}.\n", record.id));
        }
        message.push_str(&format!(
            "{label} (run {}): {}\n",
            record.id,
            record.task.trim()
        ));
    }
    message.push('\n');
    for record in records {
        message.push_str(&format!("Harness-Run: {}\n", record.id));
    }
    let models: std::collections::BTreeSet<&str> = records
        .iter()
        .map(|r| r.model.as_str())
        .filter(|m| !m.is_empty())
        .collect();
    for model in models {
        message.push_str(&format!("Harness-Model: {model}\n"));
    }
    message
}
