//! `harness undo`: put the workspace back as it was before a run.

use std::process::ExitCode;

use clap::Args;

use crate::commands::RunSelector;
use crate::display::Out;
use crate::review::{access_line, hint, kept_line, named_paths, report_limits};
use crate::shown::{Shown, Visible, shown};

/// Put the workspace back exactly as it was before a run.
///
/// The working tree and index are restored (your uncommitted work included, for
/// --allow-dirty runs), from the harness's store outside the workspace, so this works even
/// when a command deleted the run's refs or .git itself (then only the working tree comes
/// back). What is there now is saved first: `harness redo` brings it back. Ignored files
/// (caches, virtual environments, build outputs) are put back too: those the run made are
/// removed, those it changed or deleted are restored from what was saved at the start
/// (each file up to 4 MiB, 64 MiB and 20,000 files in all); one too large to have been
/// saved is named, and left as the commands left it. An ignored file changed after the run
/// finished (its change time, which no program can set back, says so) is yours: left as it
/// is, and named when it was there before the run. A file that was there before the run,
/// ignored then, and that a command made visible by changing the ignore rules, is kept and
/// named, never deleted.
#[derive(Debug, Args)]
pub(crate) struct UndoCommand {
    #[command(flatten)]
    selector: RunSelector,

    /// Restore even though HEAD moved since the run (HEAD and branches are never changed).
    #[arg(long)]
    force: bool,

    /// Undo the run's whole chain of follow-ups (your edits between runs too, saved for redo).
    #[arg(long)]
    chain: bool,
}

pub(crate) fn exec(command: UndoCommand) -> anyhow::Result<ExitCode> {
    let mut session = command.selector.open()?;
    let restored = harness_app::undo_chain(&mut session, command.force, command.chain)?;
    if restored.saved.is_none() {
        // Either undone already, or the run changed nothing: there is nothing to save.
        Out::stdout().line(&shown!(
            "the workspace is already as it was before run {}: nothing to undo",
            session.id()
        ))?;
        report_limits(&restored, &session, "the run")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = Out::stdout();
    let count = restored.changed.len();
    out.line(&shown!(
        "undid run {}: restored {} file{}: {}",
        session.id(),
        count,
        if count == 1 { "" } else { "s" },
        named_paths(&restored.changed)
    ))?;
    if !restored.displaced.is_empty() {
        let displaced: Vec<Shown> = restored
            .displaced
            .iter()
            .map(|p| p.display().shown())
            .collect();
        out.line(&shown!(
            "moved aside ignored files in the way (redo puts them back): {}",
            Shown::join(&displaced, ", ")
        ))?;
    }
    if let Some(kept) = kept_line(&restored) {
        // Made visible as a whole: the paths in it are the workspace's.
        out.line(&shown!("{}", kept))?;
    }
    report_limits(&restored, &session, "the run")?;
    if let Some(line) = access_line(&session) {
        out.line(&line)?;
    }
    out.line(&shown!(
        "to bring the run's work back: {}",
        hint("redo", &session)
    ))?;
    Ok(ExitCode::SUCCESS)
}
