//! Housekeeping of the stores: their sizes, old runs pruned, stores of
//! workspaces that no longer exist listed and removed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use git2::Repository;

use crate::clean::{Probe, git_command};
use crate::record::Runs;
use crate::store::{self, Store};
use crate::{Error, RunId, RunInfo};

/// Which runs [`prune`] removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prune {
    /// All but the newest `n` (`--keep N`).
    Keep(usize),
    /// Those begun longer ago than this (`--older-than DAYS`).
    OlderThan(Duration),
}

/// What [`prune`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Pruned {
    /// The runs removed, oldest first. One without an outcome was unfinished: its
    /// process ended (killed, or the machine stopped) before it did.
    pub removed: Vec<RunInfo>,
    /// The runs `which` selected that are in progress ([`is_in_progress`]), kept, oldest
    /// first.
    pub in_progress: Vec<RunInfo>,
}

/// True if and only if `run` is in progress: a process has it open, the one that runs it
/// (`harness run`, a `harness mcp` session) or one that undoes or redoes it. It is marked
/// by a lock the kernel holds for that process and for nothing else, so a run whose
/// process died is not in progress, whether or not it recorded an outcome. Always false
/// on platforms other than Unix.
pub fn is_in_progress(run: &RunInfo) -> bool {
    crate::live::is_held(&run.dir)
}

/// One harness store, as [`stores`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreInfo {
    /// The store's directory.
    pub dir: PathBuf,
    /// The workspace it belongs to, as it recorded it.
    pub workspace: PathBuf,
    /// True if and only if that workspace is still a directory.
    pub workspace_exists: bool,
    /// The bytes its files take.
    pub bytes: u64,
    /// How many runs it records.
    pub runs: usize,
}

/// The directory that holds every harness store: `$XDG_STATE_HOME/harness`, else
/// `~/.local/state/harness`; `None` when neither variable names an absolute path. What a
/// command could write there, it could take from `undo`: keep it read-only to commands.
pub fn stores_dir() -> Option<PathBuf> {
    store::state_home().map(|home| home.join("harness"))
}

/// Makes every harness store private to its owner, as the harness now creates them: the
/// directory of all stores, each store, its runs and their directories 0700 and the files
/// in a run's directory (metadata, transcript) 0600, taking every permission of the group
/// and of others. Returns the paths that were readable by others, sorted, so that the
/// user is told once: after this they are not.
///
/// # Errors
///
/// [`Error::NoStateHome`], and failures of the filesystem (a path the user does not own).
pub fn make_stores_private() -> Result<Vec<PathBuf>, Error> {
    let base = stores_dir().ok_or(Error::NoStateHome)?;
    crate::private::tighten_all(&base).map_err(|e| Error::io(&base, e))
}

/// Every harness store under the state directory (`$XDG_STATE_HOME/harness`).
pub fn stores() -> Result<Vec<StoreInfo>, Error> {
    let base = stores_dir().ok_or(Error::NoStateHome)?;
    let Ok(entries) = fs::read_dir(&base) else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(&base, e))?;
        let dir = entry.path();
        let Some(workspace) = store::recorded_workspace(&dir) else {
            continue; // Not a store: a half-made one, or something else.
        };
        found.push(StoreInfo {
            workspace_exists: workspace.is_dir(),
            bytes: size(&dir),
            runs: Runs::new(&dir).list()?.len(),
            dir,
            workspace,
        });
    }
    found.sort_by(|a, b| a.workspace.cmp(&b.workspace));
    Ok(found)
}

/// Removes a store whose workspace no longer exists.
///
/// # Errors
///
/// [`Error::StoreInUse`] when its workspace still exists (prune its runs
/// instead), [`Error::RunInProgress`] when a run in it is in progress (its workspace
/// may be gone for a moment, or moved), and failures of the filesystem.
pub fn remove_store(store: &StoreInfo) -> Result<(), Error> {
    let workspace = store::recorded_workspace(&store.dir).unwrap_or_default();
    if workspace.is_dir() {
        return Err(Error::StoreInUse {
            store: store.dir.clone(),
            workspace,
        });
    }
    // Each run's lock is held until the store is gone, so that none starts meanwhile.
    let mut held = Vec::new();
    for run in Runs::new(&store.dir).list()? {
        match crate::live::take(&run.dir, crate::live::Lock::Exclusive)? {
            Some(lock) => held.push(lock),
            None => {
                return Err(Error::RunInProgress {
                    run: run.id,
                    store: store.dir.clone(),
                });
            }
        }
    }
    fs::remove_dir_all(&store.dir).map_err(|e| Error::io(&store.dir, e))
}

/// The bytes the store of the workspace at `root` takes; `None` without one.
pub fn store_size(root: &Path) -> Result<Option<u64>, Error> {
    let root = fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
    Ok(Store::open(&root)?.map(|store| size(store.dir())))
}

/// Removes the runs `which` selects from the store of the workspace at `root`
/// and from its repository (refs and tag), and lets the store drop the objects
/// no other run needs (with `git gc`, where git is installed).
///
/// A run in progress ([`is_in_progress`]) is never removed: it is kept and named in
/// [`Pruned::in_progress`]. A run whose process died is removed like any other.
pub fn prune(root: &Path, which: Prune) -> Result<Pruned, Error> {
    let root = fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
    let Some(store) = Store::open(&root)? else {
        return Ok(Pruned::default());
    };
    let runs = Runs::new(store.dir());
    let all = runs.list()?;
    let doomed: Vec<RunInfo> = match which {
        Prune::Keep(n) => {
            let cut = all.len().saturating_sub(n);
            all.into_iter().take(cut).collect()
        }
        Prune::OlderThan(age) => {
            let cutoff = SystemTime::now()
                .checked_sub(age)
                .unwrap_or(SystemTime::UNIX_EPOCH);
            all.into_iter()
                .filter(|run| begun_before(run, cutoff))
                .collect()
        }
    };
    let workspace = Repository::open(&root).ok();
    let mut pruned = Pruned::default();
    for run in doomed {
        let dir = runs.run_dir(&run.id);
        // Held while the run goes, so that no process opens it meanwhile.
        let Some(_lock) = crate::live::take(&dir, crate::live::Lock::Exclusive)? else {
            pruned.in_progress.push(run);
            continue;
        };
        delete_run_refs(store.repo(), &run.id)?;
        if let Some(repo) = &workspace {
            delete_run_refs(repo, &run.id)?;
        }
        fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        pruned.removed.push(run);
    }
    // A run in progress writes objects into the store before the ref that keeps them:
    // while one is, only objects older than any step are let go.
    let any_in_progress = runs.list()?.iter().any(is_in_progress);
    let prune_before = if any_in_progress {
        "--prune=1.hour.ago"
    } else {
        "--prune=now"
    };
    if let (false, Probe::GitCli(git)) = (pruned.removed.is_empty(), Probe::for_workspace(&root)) {
        // Best effort: without git the objects stay, and only the space is lost.
        let _ = git_command(git)
            .arg("--git-dir")
            .arg(store.dir())
            .args(["gc", "--quiet", prune_before])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    Ok(pruned)
}

/// True if and only if `run` began strictly before `cutoff`.
fn begun_before(run: &RunInfo, cutoff: SystemTime) -> bool {
    run.started_at < cutoff
}

/// Deletes `refs/harness/<id>/*` and `refs/tags/harness/<id>` of `repo`.
fn delete_run_refs(repo: &Repository, id: &RunId) -> Result<(), Error> {
    let prefix = format!("refs/harness/{id}/");
    let tag = format!("refs/tags/harness/{id}");
    let names: Vec<String> = repo
        .references()
        .map_err(|e| Error::Git {
            action: "list the refs".into(),
            detail: e.message().into(),
        })?
        .filter_map(Result::ok)
        .filter_map(|r| r.name().map(str::to_owned).ok())
        .filter(|name| name.starts_with(&prefix) || *name == tag)
        .collect();
    for name in names {
        if let Ok(mut reference) = repo.find_reference(&name) {
            reference.delete().map_err(|e| Error::Git {
                action: format!("delete {name}"),
                detail: e.message().into(),
            })?;
        }
    }
    Ok(())
}

/// The bytes of the files below `dir`.
fn size(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|entry| match entry.file_type() {
            Ok(t) if t.is_dir() => size(&entry.path()),
            Ok(_) => entry.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{State, new_record};

    #[test]
    fn a_run_begun_at_the_cutoff_is_not_older_than_it() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let oid = git2::Oid::ZERO_SHA1;
        let state = State {
            commit: oid,
            tree: oid,
            index_tree: oid,
            head: oid,
        };
        let id: RunId = "20250101-000000-000".parse().expect("a run id");
        let run =
            new_record(id, String::new(), String::new(), at, state, false).info(Path::new("/runs"));
        assert!(!begun_before(&run, at));
        assert!(begun_before(&run, at + Duration::from_millis(1)));
        assert!(!begun_before(&run, at - Duration::from_millis(1)));
    }
}
