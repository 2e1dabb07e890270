//! `harness diff`: what a run changed, as a unified diff.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Args;
use harness_undo::DiffTarget;

use crate::commands::RunSelector;
use crate::display::Style;

/// Show what a run changed, as a unified diff.
///
/// The diff goes from the state before the run to the working tree now (files the run
/// created included), or to one of its checkpoints.
#[derive(Debug, Args)]
pub(crate) struct DiffCommand {
    #[command(flatten)]
    selector: RunSelector,

    /// Compare with checkpoint N of the run (from 1) instead of the working tree.
    #[arg(long, value_name = "N")]
    checkpoint: Option<u32>,
}

pub(crate) fn exec(command: DiffCommand) -> anyhow::Result<ExitCode> {
    let mut session = command.selector.open()?;
    let target = command
        .checkpoint
        .map_or(DiffTarget::WorkingTree, DiffTarget::Checkpoint);
    let diff = session.diff(target)?;
    let mut out = io::stdout().lock();
    if diff.is_empty() {
        writeln!(out, "run {} changed nothing", session.id())?;
    } else {
        write!(out, "{}", Style::for_stdout().diff(&diff.to_string()))?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
