//! `harness runs`: the runs recorded in a repository.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use harness_app::render;

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
        for line in render::pruned_lines(&pruned) {
            out.line(&line)?;
        }
        print_store_size(&mut out, &root)?;
        return Ok(ExitCode::SUCCESS);
    }
    let runs = harness_app::list(&root)?;
    if runs.is_empty() {
        out.line(&shown!("no harness run is recorded in {}", root.display()))?;
        return Ok(ExitCode::SUCCESS);
    }
    for line in render::runs_table(&runs) {
        out.line(&line)?;
    }
    print_store_size(&mut out, &root)?;
    Ok(ExitCode::SUCCESS)
}

/// The line naming the workspace's undo store and its size, when it has one.
fn print_store_size(out: &mut Out, root: &Path) -> anyhow::Result<()> {
    if let Some((dir, bytes)) = harness_app::store_of(root)? {
        out.line(&shown!(
            "undo store: {} ({})",
            dir.display(),
            render::human_size(bytes)
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
    for line in render::stores_table(&stores, remove_missing, crate::program::program()) {
        out.line(&line)?;
    }
    Ok(ExitCode::SUCCESS)
}
