//! `harness undo`: put the workspace back as it was before a run.

use std::process::ExitCode;

use clap::Args;
use harness_undo::Force;

use crate::commands::{RunSelector, hint};
use crate::display::Out;
use crate::shown::{Shown, Visible, shown};

/// Put the workspace back exactly as it was before a run.
///
/// The working tree and index are restored (your uncommitted work included, for
/// --allow-dirty runs). What is there now is saved first: `harness redo` brings it back.
/// Ignored files are left alone.
#[derive(Debug, Args)]
pub(crate) struct UndoCommand {
    #[command(flatten)]
    selector: RunSelector,

    /// Restore even though HEAD moved since the run (HEAD and branches are never changed).
    #[arg(long)]
    force: bool,
}

pub(crate) fn exec(command: UndoCommand) -> anyhow::Result<ExitCode> {
    let mut session = command.selector.open()?;
    let force = if command.force { Force::Yes } else { Force::No };
    let restored = session.undo(force)?;
    if restored.saved.is_none() {
        // Either undone already, or the run changed nothing: there is nothing to save.
        Out::stdout().line(&shown!(
            "the workspace is already as it was before run {}: nothing to undo",
            session.id()
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = Out::stdout();
    let paths: Vec<Shown> = restored
        .changed
        .iter()
        .map(|p| p.display().shown())
        .collect();
    out.line(&shown!(
        "undid run {}: restored {} file{}: {}",
        session.id(),
        paths.len(),
        if paths.len() == 1 { "" } else { "s" },
        Shown::join(&paths, ", ")
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
    out.line(&shown!(
        "to bring the run's work back: {}",
        hint("redo", &session)
    ))?;
    Ok(ExitCode::SUCCESS)
}
