//! What undo and redo share: the state they replace is saved first (with the ignored
//! files the restore displaces) under `refs/harness/<id>/saved` and the restore recorded
//! before any file changes, so that no state is ever lost and a restore cut short can be
//! redone; then the recorded state is written, giving back the access it needs.

use std::path::PathBuf;

use git2::{Oid, Repository};

use super::verify::Tampering;
use super::{Mode, Session};
use crate::error::GitContext;
use crate::ignored::{self, Change, Manifest};
use crate::record::State;
use crate::scan::Scanner;
use crate::{CommitId, Error, access, fill, restore, state};

/// Whether to restore even though HEAD moved since the state was recorded
/// (`--force`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Force {
    /// Refuse when HEAD moved, or when redo would overwrite changes.
    #[default]
    No,
    /// Restore anyway. HEAD, branches and commits are still never changed.
    Yes,
}

/// What [`Session::undo`] or [`Session::redo`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Restored {
    /// The paths whose file was written or removed, sorted.
    pub changed: Vec<PathBuf>,
    /// The commit that saved the working tree and index as they were just
    /// before; `None` if they already were in the asked-for state and nothing
    /// was done.
    pub saved: Option<CommitId>,
    /// Ignored files that stood where a restored file had to go (a file where
    /// its directory must be, or a directory where it must be), and so were
    /// removed; they are in the `saved` commit, and redo puts them back.
    pub displaced: Vec<PathBuf>,
    /// Files the pre-run state lacks that an undo kept, as they were, because
    /// they were there before the run: git ignored them then, and a command's
    /// change to the ignore rules made them visible since. Sorted. What a
    /// command wrote into one is not undone.
    pub kept: Vec<PathBuf>,
    /// True if and only if the workspace's repository was gone or unreadable,
    /// so that only the working tree came back, from the harness's store: not
    /// the index (staged changes), HEAD, branches or history, which the
    /// store does not hold.
    pub repository_missing: bool,
    /// What was found changed in the workspace's `.git` and put back from
    /// the store before restoring (see [`Session::verify`]).
    pub repaired: Vec<Tampering>,
    /// What was done to ignored files (see the crate docs, "Ignored files").
    pub ignored: IgnoredRestore,
}

/// What putting ignored files back did: by undo or redo ([`Restored::ignored`]), or
/// before a verification ([`Session::reset_ignored`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IgnoredRestore {
    /// Paths written back as they were, sorted.
    pub restored: Vec<PathBuf>,
    /// Paths removed, sorted: the state put back lacks them.
    pub removed: Vec<PathBuf>,
    /// Paths that differ from the state put back and could not be put back, sorted:
    /// their content was not saved (larger than
    /// [`LARGEST_SAVED_IGNORED_FILE`](crate::LARGEST_SAVED_IGNORED_FILE), or over the
    /// budget), or writing failed. They are as the commands left them.
    pub not_restored: Vec<PathBuf>,
    /// Paths that differ but were changed after the run ended (by undo: after
    /// [`Session::finish`], or the run's last record when it never finished; by redo:
    /// after the undo), so not by the run: left as they are, sorted. Told by the change
    /// time (ctime), which no program can set back. Only those there before are named:
    /// a new file made after the run is left without a word, as it is none of the run's.
    pub left: Vec<PathBuf>,
}

impl Restored {
    /// What this restore and `later`, the one done after it, did together: a chain's
    /// runs undone one after another. `saved` is the later one's when it saved.
    pub(super) fn then(self, later: Restored) -> Restored {
        fn union(mut a: Vec<PathBuf>, b: Vec<PathBuf>) -> Vec<PathBuf> {
            a.extend(b);
            a.sort();
            a.dedup();
            a
        }
        let mut repaired = self.repaired;
        repaired.extend(later.repaired);
        Restored {
            changed: union(self.changed, later.changed),
            saved: later.saved.or(self.saved),
            displaced: union(self.displaced, later.displaced),
            kept: union(self.kept, later.kept),
            repository_missing: self.repository_missing || later.repository_missing,
            repaired,
            ignored: IgnoredRestore {
                restored: union(self.ignored.restored, later.ignored.restored),
                removed: union(self.ignored.removed, later.ignored.removed),
                not_restored: union(self.ignored.not_restored, later.ignored.not_restored),
                left: union(self.ignored.left, later.ignored.left),
            },
        }
    }
}

impl IgnoredRestore {
    pub(super) fn from(done: ignored::PutBack) -> IgnoredRestore {
        IgnoredRestore {
            restored: done.restored,
            removed: done.removed,
            not_restored: done.not_restored,
            left: Vec::new(),
        }
    }

    /// True if and only if nothing was done and nothing was left undone.
    pub fn is_empty(&self) -> bool {
        self.restored.is_empty()
            && self.removed.is_empty()
            && self.not_restored.is_empty()
            && self.left.is_empty()
    }
}

impl Session {
    /// Saves the current state (tree, index tree, HEAD) together with the
    /// ignored files restoring `target` would displace, records the restore,
    /// then restores `target`.
    pub(super) fn replace(
        &mut self,
        scanner: &mut Scanner,
        (tree, index_tree, head): (Oid, Oid, Oid),
        target: &State,
        direction: Direction,
    ) -> Result<Restored, Error> {
        let plan = restore::plan(&self.repo, &self.root, tree, target.tree)?;
        self.give_back_access_to_change(&plan)?;
        // Only an undo goes back to before the run; what redo removes, the run removed.
        let from_before = match direction {
            Direction::Undo => {
                let started = crate::record::time_of(self.record.started_ms);
                plan.removed_from_before(&self.root, started)
            }
            Direction::Redo => Vec::new(),
        };
        let displaced = plan.displaced.clone();
        let saved_tree = state::with_files(&self.repo, &self.root, tree, &displaced)?;
        let message = format!("state before {direction} of run {}", self.record.id);
        let saved = self.save(saved_tree, index_tree, head, &message)?;
        // Recorded before any file changes, so that a restore cut short can
        // still be redone.
        if direction == Direction::Undo {
            self.record.redo = Some(saved);
        }
        self.record.undone = direction == Direction::Undo;
        self.runs.write(&self.record)?;
        let with_index = self.mode == Mode::Workspace;
        if with_index {
            // The index names trees git trusts to be there (`git commit` reuses them):
            // the recorded index's, which the session wrote into the store, go into the
            // workspace whole. Its files were the user's index's, so in the workspace already.
            let own =
                Repository::open(self.repo.path()).context("open the workspace's repository")?;
            fill::fill_tree(&self.repo, &own, target.index_tree, None)?;
        }
        let mut changed = restore::apply(scanner, &self.root, plan, target, with_index)?;
        let kept = self.put_back_ignored(scanner, saved_tree, from_before)?;
        changed.retain(|path| !kept.contains(path));
        Ok(Restored {
            changed,
            saved: Some(CommitId(saved.commit)),
            displaced,
            kept,
            repository_missing: !with_index,
            repaired: Vec::new(),
            ignored: IgnoredRestore::default(),
        })
    }

    /// Writes back, as they were before the restore (from `saved_tree`), the files among
    /// `from_before` (files that were there before the run, which the restore removed)
    /// that the restored ignore rules ignore: files git ignored when the run began, made
    /// visible since by a command's change to the rules. Returns them, sorted. A file that
    /// is not ignored now (a tracked one a command moved) stays removed.
    fn put_back_ignored(
        &self,
        scanner: &mut Scanner,
        saved_tree: Oid,
        from_before: Vec<PathBuf>,
    ) -> Result<Vec<PathBuf>, Error> {
        if from_before.is_empty() {
            return Ok(Vec::new());
        }
        // A handle of its own: the rules were just rewritten, and a cached reading of
        // them could be stale.
        let fresh = Repository::open(self.repo.path()).context("open the repository")?;
        if fresh.is_bare() {
            fresh
                .set_workdir(&self.root, false)
                .context("use the workspace as the working tree")?;
        }
        let mut kept = Vec::new();
        for path in from_before {
            if fresh
                .is_path_ignored(&path)
                .context(format_args!("check whether {} is ignored", path.display()))?
            {
                kept.push(path);
            }
        }
        if !kept.is_empty() {
            scanner.checkout(saved_tree, &kept)?;
        }
        kept.sort();
        Ok(kept)
    }

    /// Saves a state on the chain of `refs/harness/<id>/saved`.
    fn save(
        &mut self,
        tree: Oid,
        index_tree: Oid,
        head: Oid,
        message: &str,
    ) -> Result<State, Error> {
        let previous = self.store.find_ref(&self.run_ref("saved"));
        let saved = state::record(&self.repo, tree, index_tree, head, message, previous)?;
        self.set_run_ref("saved", saved.commit, true, self.last_tree, message)?;
        Ok(saved)
    }

    /// Gives the owner back what a restore by `plan` needs: to change every
    /// directory it changes, and to read every displaced file it saves, so that
    /// a directory a command made read-only (`chmod 555 src`) does not stop
    /// the restore halfway. A directory that is not there yet is made by it.
    fn give_back_access_to_change(&mut self, plan: &restore::Plan) -> Result<(), Error> {
        let directories = plan.directories();
        let needs = directories
            .iter()
            .map(|dir| (dir.as_path(), access::Need::Change))
            .chain(
                plan.displaced
                    .iter()
                    .map(|file| (file.as_path(), access::Need::Read)),
            );
        for (path, need) in needs {
            if access::give_back(&self.root, path, need)
                .map_err(|e| Error::io(&self.root.join(path), e))?
            {
                self.access_given_back.insert(path.to_path_buf());
            }
        }
        Ok(())
    }
}

/// Which way a restore goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Direction {
    /// Back to the pre-run state.
    Undo,
    /// Back to the state the last undo replaced.
    Redo,
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Direction::Undo => "undo",
            Direction::Redo => "redo",
        })
    }
}

/// What undo or redo does to ignored files: the state it puts back, the changes of the
/// run (or the undo) that bring it, and the paths left as changed after
/// ([`IgnoredRestore::left`]).
pub(super) type IgnoredPlan = (Manifest, Vec<(String, Change)>, Vec<PathBuf>);
