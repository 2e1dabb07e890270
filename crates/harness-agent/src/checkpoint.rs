//! [`Checkpoints`]: a snapshot of the workspace after each step that changed files.

/// Takes a snapshot of the workspace after a step that may have changed files.
///
/// Implemented by the command line over its undo session (`harness-undo`'s `Session`, whose
/// checkpoints `harness diff` and `harness undo` work with; this crate does not depend on
/// it), and by [`NoCheckpoints`] for runs that keep none (tests).
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

    /// Called before a file tool writes, edits or creates `path` (as the model gave it,
    /// relative to the workspace), so that a file no snapshot would hold (one git ignores)
    /// is saved first. Keeps nothing by default.
    ///
    /// # Errors
    ///
    /// Whatever kept it from being saved; the loop reports it and goes on.
    fn protect(&mut self, path: &str) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let _ = path;
        Ok(())
    }

    /// Called before each command: returns once what undo relies on is kept where no
    /// command can reach it. Waits for nothing by default.
    ///
    /// # Errors
    ///
    /// Whatever kept it from being kept; the loop reports it and goes on.
    fn before_command(&mut self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        Ok(())
    }

    /// Called after each command: checks that what undo relies on is intact, puts back
    /// what the command removed or moved, and describes each finding, one line each.
    /// Finds nothing by default.
    ///
    /// # Errors
    ///
    /// Whatever kept the check from being made; the loop reports it and goes on.
    fn verify(&mut self) -> Result<Vec<String>, Box<dyn std::error::Error + Send + Sync>> {
        Ok(Vec::new())
    }

    /// Called right before each run of the verification command the harness makes (the
    /// head start's and every check): puts back what commands wrote where git does not
    /// look (ignored files: bytecode caches, virtual environments, `node_modules/.bin`), so
    /// that the check runs the code in the diff, not a planted cache or interpreter.
    /// Returns what it put back, which the model and the user are told of, and what it
    /// could not, which the check may run: a check that passes with any is not counted as
    /// verified. Puts back nothing by default.
    ///
    /// # Errors
    ///
    /// Whatever kept them from being put back; the loop reports it, and a check that then
    /// passes is not counted as verified.
    fn before_verification(&mut self) -> Result<PutBack, Box<dyn std::error::Error + Send + Sync>> {
        Ok(PutBack::default())
    }

    /// Called right after each run of the verification command the harness makes: what it
    /// wrote where git does not look came from the code under test, and is kept as it is
    /// for the next check (so a build is not redone from nothing at every check). Keeps
    /// nothing by default.
    ///
    /// # Errors
    ///
    /// Whatever kept it from being kept; the loop reports it and goes on.
    fn after_verification(&mut self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        Ok(())
    }

    /// Brings the workspace back to the state before the run, for another attempt at the
    /// task (see [`Budgets::attempts`](crate::Budgets::attempts)), and returns how many
    /// paths it changed. The run goes on: it is not undone.
    ///
    /// # Errors
    ///
    /// Whatever kept the state from being restored; the loop then makes no other attempt.
    /// By default nothing is kept to restore from, so this always fails.
    fn revert_to_start(&mut self) -> Result<usize, Box<dyn std::error::Error + Send + Sync>> {
        Err("this run keeps no record of the files before it, so it cannot go back to them".into())
    }

    /// Every path the run changed since the state before it (tracked files and untracked
    /// ones git does not ignore), for the verification to judge what it loads
    /// ([`VerificationInputs`](harness_tools::VerificationInputs)). `None` by default: a run
    /// that keeps no record of the state before it cannot say.
    ///
    /// # Errors
    ///
    /// Whatever kept the changes from being listed; the loop then does not count a passing
    /// verification as verified, since it cannot tell what the verification loaded.
    fn changes(
        &mut self,
    ) -> Result<Option<Vec<harness_tools::Change>>, Box<dyn std::error::Error + Send + Sync>> {
        Ok(None)
    }
}

/// What [`Checkpoints::before_verification`] did with the files commands wrote where git
/// does not look, workspace-relative paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PutBack {
    /// Removed (a command made them) or restored (a command changed or deleted them), so
    /// that the check runs the code in the diff.
    pub put_back: Vec<String>,
    /// Changed by a command but not put back (too large to save at the start): the check
    /// may run them.
    pub left: Vec<String>,
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
