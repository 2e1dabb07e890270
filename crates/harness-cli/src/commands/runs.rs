//! `harness runs`: the runs recorded in a repository.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use harness_app::StoreState;

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

/// Lists the runs of a workspace, prunes them, or lists every workspace's undo store.
pub(crate) fn exec(command: RunsCommand) -> anyhow::Result<ExitCode> {
    if command.stores {
        return list_stores(command.remove_missing);
    }
    let root = workspace_root(&command.workspace)?;
    let mut out = Out::stdout();
    if command.prune {
        let pruned = harness_app::prune(&root, command.keep, command.older_than)?;
        print_pruned(&mut out, &pruned)?;
        print_store_size(&mut out, &root)?;
        return Ok(ExitCode::SUCCESS);
    }
    let runs = harness_app::list(&root)?;
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
        let steps = run
            .info
            .steps
            .map_or_else(|| "-".to_owned(), |steps| steps.to_string());
        let task: String = run
            .info
            .task
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(60)
            .collect();
        out.line(&shown!(
            "{:<19}  {:<19}  {:>5}  {:<8}  {}",
            run.info.id,
            run.outcome,
            steps,
            run.state,
            task
        ))?;
    }
    print_store_size(&mut out, &root)?;
    Ok(ExitCode::SUCCESS)
}

/// The runs a prune kept because they are in progress, and those it removed.
fn print_pruned(out: &mut Out, pruned: &harness_undo::Pruned) -> anyhow::Result<()> {
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
    Ok(())
}

/// The line naming the workspace's undo store and its size, when it has one.
fn print_store_size(out: &mut Out, root: &Path) -> anyhow::Result<()> {
    if let Some((dir, bytes)) = harness_app::store_of(root)? {
        out.line(&shown!(
            "undo store: {} ({})",
            dir.display(),
            human_size(bytes)
        ))?;
    }
    Ok(())
}

/// Every workspace's undo store, with its size, runs and state; with `remove_missing`, the
/// stores of workspaces that are gone removed.
fn list_stores(remove_missing: bool) -> anyhow::Result<ExitCode> {
    let stores = harness_app::stores(remove_missing)?;
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
    for (store, state) in &stores {
        let state = match state {
            StoreState::InUse => "in use",
            StoreState::Removed => "removed",
            StoreState::RunInProgress => "run in progress",
            StoreState::WorkspaceGone => "workspace gone",
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
    if !remove_missing && stores.iter().any(|(store, _)| !store.workspace_exists) {
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
