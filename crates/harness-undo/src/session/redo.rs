//! Redo: [`Session::redo`] brings back the working tree, index and ignored files the
//! last undo replaced, after saving the current ones; it refuses when HEAD moved or the
//! tree changed since the undo, unless forced.

use std::collections::BTreeSet;

use super::replace::{Direction, Force, IgnoredPlan, IgnoredRestore, Restored};
use super::{Mode, Session};
use crate::Error;
use crate::clock::file_system_stamp_ns;
use crate::ignored::{self, Manifest, Which};

impl Session {
    /// Brings back the working tree and index that the last [`undo`](Self::undo)
    /// replaced, after saving the current ones under `refs/harness/<id>/saved`.
    ///
    /// Refuses with [`Error::NothingToRedo`] unless the run's last restore was an
    /// undo; with [`Error::HeadMoved`] when HEAD moved since the undo and with
    /// [`Error::ChangedSinceUndo`] when the tree or index changed since the
    /// undo, both unless `force`.
    pub fn redo(&mut self, force: Force) -> Result<Restored, Error> {
        self.reload()?;
        let (Some(redo), true) = (self.record.redo, self.record.undone) else {
            return Err(Error::NothingToRedo {
                run: self.record.id.clone(),
            });
        };
        let repaired = self.verify()?;
        let head = self.head()?;
        if self.mode == Mode::Workspace && force == Force::No && head != Some(redo.head) {
            return Err(self.head_moved("the undo", redo.head, head));
        }
        self.refuse_locked_index()?;
        let pre = self.record.pre;
        // The state undo left: the pre-run state, unless something changed.
        let (mut scanner, tree) = self.full_snapshot(pre.tree)?;
        let index_tree = self.current_index_tree(pre.index_tree)?;
        if force == Force::No && (tree != pre.tree || index_tree != pre.index_tree) {
            return Err(Error::ChangedSinceUndo {
                run: self.record.id.clone(),
            });
        }
        let current = (tree, index_tree, head.unwrap_or(redo.head));
        let mut restored = self.replace(&mut scanner, current, &redo, Direction::Redo)?;
        restored.repaired = repaired;
        let (mut before, changes, left) = self.ignored_redo_plan()?;
        let done = ignored::put_back(&self.root, self.store.repo(), &before, &changes, false);
        // What this redo wrote is the run's for the next undo, up to now.
        before.redone_ns = Some(file_system_stamp_ns(&self.run_dir()));
        before.redone = changes.into_iter().map(|(key, _)| key).collect();
        ignored::write(&self.run_dir(), Which::Redo, &before)?;
        restored.ignored = IgnoredRestore::from(done);
        restored.ignored.left = left;
        Ok(restored)
    }

    /// The changes that bring the ignored paths the last undo touched back as it found
    /// them, for redo.
    fn ignored_redo_plan(&self) -> Result<IgnoredPlan, Error> {
        let Some(before) = ignored::read(&self.run_dir(), Which::Redo)? else {
            return Ok((Manifest::default(), Vec::new(), Vec::new()));
        };
        let touched: BTreeSet<&String> = before.touched.iter().collect();
        let now = self.ignored_listing_of(&touched)?;
        let changes = ignored::differences(&self.root, &before, &now)
            .into_iter()
            .filter(|(k, _)| touched.contains(k))
            .collect();
        // Changed since the undo: not by the undo, so not for redo to replace.
        let (changes, left) = ignored::split_after(changes, &now, |_| before.undone_ns);
        Ok((before, changes, left))
    }
}
