//! How a run ends: [`Session::finish`] records its outcome and end, and
//! [`Session::discard`] forgets a run that never started, as if it had not begun.

use std::time::SystemTime;

use super::Session;
use super::begin::delete_refs;
use crate::clock::file_system_stamp_ns;
use crate::{Error, Outcome};

impl Session {
    /// Records the end of the run: its outcome and how many steps it took.
    pub fn finish(&mut self, outcome: Outcome, steps: u32) -> Result<(), Error> {
        self.wait_for_store()?;
        self.reload()?;
        self.record.ended_ms = Some(crate::run_id::unix_millis(SystemTime::now()));
        // Where the workspace's files are stamped: the harness's directory in its `.git`.
        self.record.ended_stamp_ns = Some(file_system_stamp_ns(&self.repo.path().join("harness")));
        self.record.outcome = Some(outcome);
        self.record.steps = Some(steps);
        self.runs.write(&self.record)
    }

    /// Forgets a run that was begun but never started, as if [`Session::begin`] had not
    /// been called: when what must follow the begin fails (the model server cannot be
    /// asked), there is nothing to undo and no run to list. Its refs and tag go, in the
    /// workspace and in the store, and so does its directory in the store. The working
    /// tree, index, HEAD and branches are not touched (nothing but the begin ran); objects
    /// already copied into the store stay there until pruned.
    ///
    /// # Errors
    ///
    /// [`Error::RunStarted`] once a checkpoint was taken: such a run has changes to undo,
    /// so it is kept. The error of the copy into the store, after the run is forgotten.
    pub fn discard(mut self) -> Result<(), Error> {
        if let Some(last) = &self.last {
            return Err(Error::RunStarted {
                run: self.record.id.clone(),
                checkpoints: last.number,
            });
        }
        // The copy names the run in the store when it ends: let it end first.
        let copied = self.wait_for_store();
        delete_refs(&self.repo, &self.record.id);
        delete_refs(self.store.repo(), &self.record.id);
        self.runs.release(&self.record.id);
        copied.map(drop)
    }
}
