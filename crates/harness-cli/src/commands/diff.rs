//! `harness diff`: what a run changed, as a unified diff.

use std::process::ExitCode;

use clap::Args;

use crate::commands::RunSelector;
use crate::display::{Out, stdout_style};
use crate::review::{ignored_stat, stat};
use crate::shown::{Shown, shown};

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

    /// Print one line per changed file (status, path, lines added and removed) and the
    /// totals, instead of the patch.
    #[arg(long)]
    stat: bool,

    /// Show every step of the run's chain of follow-ups, your own edits between runs apart.
    #[arg(long, conflicts_with = "checkpoint")]
    chain: bool,
}

pub(crate) fn exec(command: DiffCommand) -> anyhow::Result<ExitCode> {
    let mut session = command.selector.open()?;
    if command.chain {
        let text = harness_app::chain_diff(&session, stdout_style(), command.stat)?;
        Out::stdout().print(&text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let changed = harness_app::diff(&mut session, command.checkpoint)?;
    let (diff, ignored) = (&changed.diff, &changed.ignored);
    let mut out = Out::stdout();
    if changed.is_empty() {
        out.line(&shown!("run {} changed nothing", session.id()))?;
    } else if command.stat {
        out.print(&stat(diff))?;
    } else if !diff.is_empty() {
        // Sanitized before it is colored: a line of the patch cannot hide another.
        out.print(&crate::display::stdout_style().diff(&Shown::text(&diff.to_string())))?;
    }
    out.print(&ignored_stat(ignored))?;
    Ok(ExitCode::SUCCESS)
}
