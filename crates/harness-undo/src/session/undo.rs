//! Undo: [`Session::undo`] brings the working tree, the index and the ignored files
//! back to the pre-run state, after saving what it replaces for redo; it refuses when
//! HEAD moved unless forced, never moves HEAD or a branch, and does nothing when all is
//! in the pre-run state already. [`Session::revert_to_start`] does the same in the
//! middle of a run, which goes on.

use std::collections::BTreeSet;

use super::replace::{Direction, Force, IgnoredPlan, IgnoredRestore, Restored};
use super::{Mode, Session};
use crate::Error;
use crate::clock::file_system_stamp_ns;
use crate::ignored::{self, Change, Manifest, Which};

impl Session {
    /// Brings the working tree and index back to the pre-run state.
    ///
    /// First the current working tree and index are saved as a commit under
    /// `refs/harness/<id>/saved`, which [`redo`](Self::redo) restores. Then
    /// files the run changed are rewritten, files it created are removed (with
    /// directories left empty), files it deleted come back, and the index is
    /// set to the one recorded at the start. Ignored files are put back as they were
    /// at the start ([`Restored::ignored`]; see the crate docs for the budget).
    ///
    /// Refuses with [`Error::HeadMoved`] when HEAD is not where it was at the
    /// start, unless `force`. Does nothing when the tree and index already are
    /// in the pre-run state (so a second undo does not replace what redo
    /// brings back).
    pub fn undo(&mut self, force: Force) -> Result<Restored, Error> {
        self.reload()?;
        let repaired = self.verify()?;
        let pre = self.record.pre;
        let head = self.head()?;
        if self.mode == Mode::Workspace && force == Force::No && head != Some(pre.head) {
            return Err(self.head_moved("the start", pre.head, head));
        }
        self.refuse_locked_index()?;
        let (mut scanner, tree) = self.full_snapshot(pre.tree)?;
        let index_tree = self.current_index_tree(pre.index_tree)?;
        let (base, changes, left) = self.ignored_undo_plan()?;
        // An ignored file that cannot be put back is no reason to restore again: a second
        // undo would replace what redo brings back.
        let ignored_to_do = changes.iter().any(|(key, change)| {
            *change == Change::Created
                || base
                    .entries
                    .get(key)
                    .is_some_and(|e| e.blob.is_some() || e.stat.kind == ignored::Kind::Dir)
        });
        if tree == pre.tree && index_tree == pre.index_tree && !ignored_to_do {
            return Ok(Restored {
                changed: Vec::new(),
                saved: None,
                displaced: Vec::new(),
                kept: Vec::new(),
                repository_missing: self.mode == Mode::StoreOnly,
                repaired,
                ignored: IgnoredRestore {
                    not_restored: changes.iter().map(|(k, _)| ignored::path_of(k)).collect(),
                    left,
                    ..IgnoredRestore::default()
                },
            });
        }
        let current = (tree, index_tree, head.unwrap_or(pre.head));
        let mut restored = self.replace(&mut scanner, current, &pre, Direction::Undo)?;
        restored.repaired = repaired;
        // Listed again: the restore of the recorded files may have moved ignored ones.
        let (base, changes, left) = self.ignored_undo_plan()?;
        restored.ignored = self.undo_ignored(&base, &changes)?;
        restored.ignored.left = left;
        Ok(restored)
    }

    /// Brings the working tree and index back to the pre-run state in the middle
    /// of the run, so that the agent can try the task again from the start.
    ///
    /// It restores as [`undo`](Self::undo) does (also when HEAD moved), but the
    /// run is not undone: it goes on, its next checkpoints follow the last one
    /// (which holds what the failed attempt left), and [`redo`](Self::redo) has
    /// nothing to bring back.
    pub fn revert_to_start(&mut self) -> Result<Restored, Error> {
        let restored = self.undo(Force::Yes)?;
        self.record.undone = false;
        self.record.redo = None;
        self.runs.write(&self.record)?;
        Ok(restored)
    }

    /// The changes of the ignored files from the start that are the run's, for undo,
    /// and the paths changed after the run ([`IgnoredRestore::left`]); empty for a run
    /// begun before the harness listed them.
    fn ignored_undo_plan(&self) -> Result<IgnoredPlan, Error> {
        let Some(base) = self.ignored_manifest(Which::Start)? else {
            return Ok((Manifest::default(), Vec::new(), Vec::new()));
        };
        let listing = self.ignored_listing()?;
        let changes = ignored::differences(&self.root, &base, &listing);
        let end = self.run_end_ns();
        // What the last redo wrote is the run's, up to the time it wrote it.
        let redone = ignored::read(&self.run_dir(), Which::Redo)?
            .and_then(|m| m.redone_ns.map(|ns| (ns, m.redone)))
            .map(|(ns, touched)| (ns, touched.into_iter().collect::<BTreeSet<String>>()));
        let end_of = |path: &str| {
            let end = end?;
            Some(match &redone {
                Some((ns, touched)) if touched.contains(path) => end.max(*ns),
                _ => end,
            })
        };
        let (changes, left) = ignored::split_after(changes, &listing, end_of);
        Ok((base, changes, left))
    }

    /// Saves the current state of the ignored paths `changes` names (for redo), then puts
    /// them back as `base` has them. Returns what was done.
    fn undo_ignored(
        &mut self,
        base: &Manifest,
        changes: &[(String, Change)],
    ) -> Result<IgnoredRestore, Error> {
        let touched: BTreeSet<&String> = changes.iter().map(|(k, _)| k).collect();
        let now = self.ignored_listing_of(&touched)?;
        let (mut before, commit) = ignored::save(self.store.dir(), &self.root, now, None, false)?;
        before.touched = touched.iter().map(|k| (*k).clone()).collect();
        if let Some(commit) = commit {
            self.store.set_ref(
                &ignored::ref_name(&self.run_ref(""), Which::Redo),
                commit,
                "harness: ignored files before undo",
            )?;
        }
        ignored::write(&self.run_dir(), Which::Redo, &before)?;
        let done = ignored::put_back(&self.root, self.store.repo(), base, changes, false);
        // Written after every file the undo wrote: what changes later is not the undo's.
        before.undone_ns = Some(file_system_stamp_ns(&self.run_dir()));
        ignored::write(&self.run_dir(), Which::Redo, &before)?;
        // What the next check compares with is the start again: the run's files are gone.
        let check = ignored::manifest_path(&self.run_dir(), Which::Check);
        if let Err(e) = std::fs::remove_file(&check)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            return Err(Error::io(&check, e));
        }
        Ok(IgnoredRestore::from(done))
    }

    /// When the run ended, as a change time in ns: anything changed later is not the
    /// run's. A finished run ended at [`Session::finish`]: the clock read there, rounded
    /// up to the next millisecond (the kernel stamps files from a clock that lags it,
    /// never leads it), or the stamp a file written in `.git` then got, if later (a
    /// network file system's clock may lead this machine's). `None`, all being the run's, while this session runs it, and for
    /// a run that never finished (its process died): no record tells when its last
    /// command stopped writing (a checkpoint follows a command, and the process can die
    /// between the two), so the whole time since is the run's. What undo then replaces
    /// that the user wrote since is saved first, within the budget, and redo brings it
    /// back.
    fn run_end_ns(&self) -> Option<i64> {
        if self.live {
            return None;
        }
        let ms = i64::try_from(self.record.ended_ms?).unwrap_or(i64::MAX);
        let ended = ms.saturating_add(1).saturating_mul(1_000_000);
        // The later of the two: a run's file is never taken for the user's.
        Some(
            self.record
                .ended_stamp_ns
                .map_or(ended, |stamp| stamp.max(ended)),
        )
    }
}
