//! `harness runs`: the runs recorded in a repository.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use harness_agent::Transcript;
use harness_undo::Session;

use crate::commands::workspace_root;
use crate::display::Out;
use crate::shown::shown;

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
    let mut out = Out::stdout();
    if runs.is_empty() {
        out.line(&shown!("no harness run is recorded in {}", root.display()))?;
        return Ok(ExitCode::SUCCESS);
    }
    out.line(&shown!(
        "{:<19}  {:<19}  {:>5}  {:<8}  task",
        "run",
        "outcome",
        "steps",
        "state"
    ))?;
    for run in runs {
        // The agent's own outcome ("verification failed") says more than the undo record's
        // ("failed"); a run without a transcript still has the latter.
        let outcome = match (agent_outcome(&run.dir), run.outcome) {
            (Some(outcome), _) => outcome,
            (None, Some(outcome)) => outcome.to_string(),
            (None, None) => "unfinished".to_owned(),
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
        out.line(&shown!(
            "{:<19}  {:<19}  {:>5}  {:<8}  {}",
            run.id,
            outcome,
            steps,
            state,
            task
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The outcome the agent wrote last in the run's transcript, in words.
fn agent_outcome(run_dir: &Path) -> Option<String> {
    let records = Transcript::read(run_dir.join("transcript.jsonl")).ok()?;
    let last = records
        .last()
        .filter(|record| record["type"] == "outcome")?;
    Some(last["outcome"].as_str()?.replace('_', " "))
}
