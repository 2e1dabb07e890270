//! `harness diff`: what a run changed, as a unified diff.

use std::process::ExitCode;

use clap::Args;
use harness_undo::{Diff, DiffTarget, FileStatus, IgnoredChange, IgnoredChanges};

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
    // Ignored files are compared with the start only as they are now.
    let ignored = match target {
        DiffTarget::WorkingTree => session.ignored_changes()?,
        _ => IgnoredChanges::default(),
    };
    let mut out = Out::stdout();
    if diff.is_empty() && ignored.is_empty() {
        out.line(&shown!("run {} changed nothing", session.id()))?;
    } else if command.stat {
        out.print(&stat(&diff))?;
    } else if !diff.is_empty() {
        // Sanitized before it is colored: a line of the patch cannot hide another.
        out.print(&Style::for_stdout().diff(&Shown::text(&diff.to_string())))?;
    }
    out.print(&ignored_stat(&ignored))?;
    Ok(ExitCode::SUCCESS)
}

/// One line per ignored path the run made, changed or deleted, `A  .venv/x.pth  (ignored)`,
/// then their count; nothing when there are none. They are in no patch: git does not
/// record them, and they are often binary (bytecode, interpreters).
pub(crate) fn ignored_stat(ignored: &IgnoredChanges) -> Shown {
    let mut text = Shown::default();
    let all = ignored.all();
    if all.is_empty() {
        return text;
    }
    for (path, change) in &all {
        let status = match change {
            IgnoredChange::Created => "A",
            IgnoredChange::Deleted => "D",
            // Changed, and any kind a later harness-undo adds.
            _ => "M",
        };
        let note = if ignored.not_restorable.iter().any(|p| p == path) {
            "(ignored; not saved at the start: undo cannot put it back)"
        } else {
            "(ignored)"
        };
        text.push(&shown!("{}  {}  {}\n", status, path.display(), note));
    }
    text.push(&shown!(
        "{} ignored path{} changed (git does not record them; undo puts them back)\n",
        all.len(),
        if all.len() == 1 { "" } else { "s" }
    ));
    text
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
