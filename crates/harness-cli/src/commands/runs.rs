//! `harness runs`: the runs recorded in a repository.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use harness_undo::Session;

use crate::commands::workspace_root;

/// List the runs recorded in a repository.
///
/// Oldest first: id, outcome, steps, state (undone, accepted) and task.
#[derive(Debug, Args)]
pub(crate) struct RunsCommand {
    /// The repository.
    #[arg(long, value_name = "DIR", default_value = ".")]
    workspace: PathBuf,
}

pub(crate) fn exec(command: RunsCommand) -> anyhow::Result<ExitCode> {
    let root = workspace_root(&command.workspace)?;
    let runs = Session::runs(&root)?;
    let mut out = io::stdout().lock();
    if runs.is_empty() {
        writeln!(out, "no harness run is recorded in {}", root.display())?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{:<20}  {:<12}  {:>5}  {:<9}  task",
        "run", "outcome", "steps", "state"
    )?;
    for run in runs {
        let outcome = match (run.outcome, run.ended_at) {
            (Some(outcome), _) => outcome.to_string(),
            (None, _) => "unfinished".to_owned(),
        };
        let state = if run.accepted.is_some() {
            "accepted"
        } else if run.undone {
            "undone"
        } else {
            ""
        };
        let steps = run
            .steps
            .map_or_else(|| "-".to_owned(), |steps| steps.to_string());
        let task: String = run
            .task
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(60)
            .collect();
        writeln!(
            out,
            "{:<20}  {outcome:<12}  {steps:>5}  {state:<9}  {task}",
            run.id
        )?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
