//! `harness redo`: bring back what `harness undo` took away.

use std::process::ExitCode;

use clap::Args;
use harness_undo::Force;

use crate::commands::{RunSelector, hint, report_limits};
use crate::display::Out;
use crate::shown::{Shown, Visible, shown};

/// Bring back the working tree and index that `harness undo` replaced.
#[derive(Debug, Args)]
pub(crate) struct RedoCommand {
    #[command(flatten)]
    selector: RunSelector,

    /// Redo even though HEAD moved or files changed since the undo (they stay recoverable).
    #[arg(long)]
    force: bool,
}

pub(crate) fn exec(command: RedoCommand) -> anyhow::Result<ExitCode> {
    let mut session = command.selector.open()?;
    let force = if command.force { Force::Yes } else { Force::No };
    let restored = session.redo(force)?;
    let mut out = Out::stdout();
    let paths: Vec<Shown> = restored
        .changed
        .iter()
        .map(|p| p.display().shown())
        .collect();
    out.line(&shown!(
        "redid run {}: restored {} file{}: {}",
        session.id(),
        paths.len(),
        if paths.len() == 1 { "" } else { "s" },
        Shown::join(&paths, ", ")
    ))?;
    report_limits(&restored, &session)?;
    out.line(&shown!("to undo it again: {}", hint("undo", &session)))?;
    Ok(ExitCode::SUCCESS)
}
