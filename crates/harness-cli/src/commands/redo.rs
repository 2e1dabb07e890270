//! `harness redo`: bring back what `harness undo` took away.

use std::process::ExitCode;

use clap::Args;

use crate::commands::RunSelector;
use crate::display::Out;
use crate::review::{access_line, hint, named_paths, report_limits};
use crate::shown::shown;

/// Bring back the working tree and index that `harness undo` replaced.
///
/// Ignored files the undo removed or put back return as the undo found them, but one
/// changed since the undo, which is yours: it is left as it is, and named.
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
    let restored = harness_app::redo(&mut session, command.force)?;
    let mut out = Out::stdout();
    let count = restored.changed.len();
    out.line(&shown!(
        "redid run {}: restored {} file{}: {}",
        session.id(),
        count,
        if count == 1 { "" } else { "s" },
        named_paths(&restored.changed)
    ))?;
    report_limits(&restored, &session, "the undo")?;
    if let Some(line) = access_line(&session) {
        out.line(&line)?;
    }
    out.line(&shown!("to undo it again: {}", hint("undo", &session)))?;
    Ok(ExitCode::SUCCESS)
}
