//! `harness diff`: what a run changed, as a unified diff.

use std::process::ExitCode;

use clap::Args;
use harness_undo::{Diff, DiffTarget, FileStatus};

use crate::commands::RunSelector;
use crate::display::{Out, Style};
use crate::shown::{Shown, Visible, shown};

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
}

pub(crate) fn exec(command: DiffCommand) -> anyhow::Result<ExitCode> {
    let mut session = command.selector.open()?;
    let target = command
        .checkpoint
        .map_or(DiffTarget::WorkingTree, DiffTarget::Checkpoint);
    let diff = session.diff(target)?;
    let mut out = Out::stdout();
    if diff.is_empty() {
        out.line(&shown!("run {} changed nothing", session.id()))?;
    } else if command.stat {
        out.print(&stat(&diff))?;
    } else {
        // Sanitized before it is colored: a line of the patch cannot hide another.
        out.print(&Style::for_stdout().diff(&Shown::text(&diff.to_string())))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per file, `M  src/lib.rs  +3 −1` (binary files say so), then the totals.
pub(crate) fn stat(diff: &Diff) -> Shown {
    let mut text = Shown::default();
    for file in &diff.files {
        let status = match file.status {
            FileStatus::Added => "A",
            FileStatus::Deleted => "D",
            FileStatus::Renamed => "R",
            FileStatus::TypeChanged => "T",
            // Modified, and any kind a later harness-undo adds.
            _ => "M",
        };
        let path = match &file.old_path {
            Some(old) => shown!("{} → {}", old.display(), file.path.display()),
            None => file.path.display().shown(),
        };
        let lines = if file.binary {
            shown!("binary")
        } else {
            shown!("+{} −{}", file.additions, file.deletions)
        };
        text.push(&shown!("{}  {}  {}\n", status, path, lines));
    }
    let count = diff.files.len();
    text.push(&shown!(
        "{} file{} changed, +{} −{}\n",
        count,
        if count == 1 { "" } else { "s" },
        diff.additions(),
        diff.deletions()
    ));
    text
}
