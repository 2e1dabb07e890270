//! `harness runs`: the runs recorded in a repository.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use harness_agent::{Record, Transcript};
use harness_undo::{Prune, Session};

use crate::commands::workspace_root;
use crate::display::Out;
use crate::shown::shown;

/// List the runs recorded in a repository, prune old ones, or list the stores.
///
/// Oldest first: id, outcome, steps, state (undone, accepted) and task, then the size of
/// the workspace's undo store (outside the workspace, under $XDG_STATE_HOME/harness).
#[derive(Debug, Args)]
pub(crate) struct RunsCommand {
    /// The repository.
    #[arg(long, value_name = "DIR", default_value = ".")]
    workspace: PathBuf,

    /// Remove old runs from the store and the repository's refs (with --keep or --older-than).
    #[arg(long, conflicts_with = "stores")]
    prune: bool,

    /// With --prune: keep the newest N runs.
    #[arg(
        long,
        value_name = "N",
        requires = "prune",
        conflicts_with = "older_than"
    )]
    keep: Option<usize>,

    /// With --prune: remove runs begun more than DAYS days ago.
    #[arg(long, value_name = "DAYS", requires = "prune")]
    older_than: Option<u64>,

    /// List every workspace's undo store, flagging those whose workspace no longer exists.
    #[arg(long)]
    stores: bool,

    /// With --stores: remove the stores whose workspace no longer exists.
    #[arg(long, requires = "stores")]
    remove_missing: bool,
}

pub(crate) fn exec(command: RunsCommand) -> anyhow::Result<ExitCode> {
    if command.stores {
        return list_stores(command.remove_missing);
    }
    let root = workspace_root(&command.workspace)?;
    let mut out = Out::stdout();
    if command.prune {
        let which = match (command.keep, command.older_than) {
            (Some(n), _) => Prune::Keep(n),
            (None, Some(days)) => {
                Prune::OlderThan(Duration::from_secs(days.saturating_mul(86_400)))
            }
            (None, None) => anyhow::bail!("--prune needs --keep N or --older-than DAYS"),
        };
        let pruned = harness_undo::prune(&root, which)?;
        for run in &pruned.in_progress {
            out.line(&shown!(
                "kept run {}: it is in progress (a harness process has it open)",
                run.id
            ))?;
        }
        let ids: Vec<String> = pruned
            .removed
            .iter()
            .map(|run| match run.outcome {
                Some(_) => run.id.to_string(),
                // Its process ended before the run did: killed, or the machine stopped.
                None => format!("{} (unfinished)", run.id),
            })
            .collect();
        out.line(&shown!(
            "pruned {} run{}{}{}",
            ids.len(),
            if ids.len() == 1 { "" } else { "s" },
            if ids.is_empty() { "" } else { ": " },
            ids.join(", ")
        ))?;
        print_store_size(&mut out, &root)?;
        return Ok(ExitCode::SUCCESS);
    }
    let runs = Session::runs(&root)?;
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
            (None, None) if harness_undo::is_in_progress(&run) => "in progress".to_owned(),
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
    print_store_size(&mut out, &root)?;
    Ok(ExitCode::SUCCESS)
}

/// `undo store: <dir> (<size>)` for the workspace at `root`.
fn print_store_size(out: &mut Out, root: &Path) -> anyhow::Result<()> {
    let Some(bytes) = harness_undo::store_size(root)? else {
        return Ok(());
    };
    let store = harness_undo::stores()?
        .into_iter()
        .find(|store| store.workspace == root);
    if let Some(store) = store {
        out.line(&shown!(
            "undo store: {} ({})",
            store.dir.display(),
            human_size(bytes)
        ))?;
    }
    Ok(())
}

/// Lists the stores; with `remove_missing`, removes those whose workspace is gone.
fn list_stores(remove_missing: bool) -> anyhow::Result<ExitCode> {
    let stores = harness_undo::stores()?;
    let mut out = Out::stdout();
    if stores.is_empty() {
        out.line(&shown!("no harness undo store exists yet"))?;
        return Ok(ExitCode::SUCCESS);
    }
    out.line(&shown!(
        "{:>9}  {:>4}  {:<16}  workspace  (store)",
        "size",
        "runs",
        "state"
    ))?;
    for store in &stores {
        let state = if store.workspace_exists {
            "in use"
        } else if remove_missing {
            match harness_undo::remove_store(store) {
                Ok(()) => "removed",
                // Its workspace may be gone for a moment, or moved: the run still needs it.
                Err(harness_undo::Error::RunInProgress { .. }) => "run in progress",
                Err(error) => return Err(error.into()),
            }
        } else {
            "workspace gone"
        };
        out.line(&shown!(
            "{:>9}  {:>4}  {:<16}  {}  ({})",
            human_size(store.bytes),
            store.runs,
            state,
            store.workspace.display(),
            store.dir.display()
        ))?;
    }
    if !remove_missing && stores.iter().any(|store| !store.workspace_exists) {
        out.line(&shown!(
            "remove the stores of workspaces that are gone: {}",
            crate::program::command("runs --stores --remove-missing")
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `bytes` in B, KiB, MiB or GiB.
fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The outcome the agent wrote last in the run's transcript, in words.
fn agent_outcome(run_dir: &Path) -> Option<String> {
    let lines = Transcript::read(run_dir.join("transcript.jsonl")).ok()?;
    match &lines.last()?.record {
        Record::Outcome(report) => Some(report.outcome.to_string()),
        _ => None,
    }
}
