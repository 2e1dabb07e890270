//! [`Checkpoints`]: a snapshot of the workspace after each step that changed files.

/// Takes a snapshot of the workspace after a step that may have changed files.
///
/// Implemented over [`harness_undo::Session`], whose checkpoints `harness diff` and
/// `harness undo` work with, and by [`NoCheckpoints`] for runs that keep none (tests).
pub trait Checkpoints {
    /// Snapshots the workspace with `label`, and returns the checkpoint's number, or `None`
    /// when nothing changed since the last one.
    ///
    /// # Errors
    ///
    /// Whatever kept the snapshot from being taken. The loop reports it and goes on: the
    /// pre-run state is still recorded, so the run can still be undone as a whole.
    fn checkpoint(
        &mut self,
        label: &str,
    ) -> Result<Option<u32>, Box<dyn std::error::Error + Send + Sync>>;
}

/// Takes no checkpoints.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCheckpoints;

impl Checkpoints for NoCheckpoints {
    fn checkpoint(
        &mut self,
        _label: &str,
    ) -> Result<Option<u32>, Box<dyn std::error::Error + Send + Sync>> {
        Ok(None)
    }
}

impl Checkpoints for harness_undo::Session {
    fn checkpoint(
        &mut self,
        label: &str,
    ) -> Result<Option<u32>, Box<dyn std::error::Error + Send + Sync>> {
        let taken = harness_undo::Session::checkpoint(self, label)?;
        Ok(taken.map(|checkpoint| checkpoint.number))
    }
}
