//! Beginning a run: [`Session::begin`] checks that the working tree is clean (or, when
//! allowed, snapshots the uncommitted work), records the pre-run state under the run's
//! refs and tag, lists and saves the ignored files, and writes the run's metadata. On an
//! error nothing of the run is left but the objects already copied into the store; the
//! user's branch, HEAD, index, stash and files are never changed (but by `init`).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::SystemTime;

use git2::{Oid, Repository};

use super::{Mode, Session, chain, private_dir, publish, read_store_objects, run_ref, tag_ref};
use crate::clean::Probe;
use crate::clock::file_system_now;
use crate::error::GitContext;
use crate::ignored::{self, Which};
use crate::public::Publisher;
use crate::record::{self, RunRecord, Runs};
use crate::scan::{Scanner, Tracking};
use crate::store::{Copying, Store};
use crate::{Error, Hidden, RunId, open, state};

/// How [`Session::begin`] starts a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BeginOptions {
    /// Begin on a dirty tree, snapshotting the uncommitted work (`--allow-dirty`).
    pub allow_dirty: bool,
    /// Create the repository, or its first commit, when missing (`--init`).
    pub init: bool,
    /// The task, recorded in the run's metadata and in the message of
    /// [`Session::accept`]'s commit.
    pub task: String,
    /// The model, recorded in the run's metadata.
    pub model: String,
    /// How checkpoints find what changed.
    pub tracking: Tracking,
    /// The paths the caller hides from the model and its commands: their content is
    /// recorded in the harness's store only, and left out of the copies of the run's
    /// states in the workspace's `.git` (see [`Session::hide`]).
    pub hidden: Hidden,
    /// The run this one follows (`harness run --continue`): it starts from the state
    /// that run left, which is dirty with its work and so is not refused as a dirty tree,
    /// and is recorded as the next run of its chain. Where the tree differs from how that
    /// run left it, the difference is the user's own edits, recorded as theirs
    /// ([`RunInfo::user_edits`](crate::RunInfo::user_edits)). See [`Chain`](crate::Chain).
    pub follows: Option<RunId>,
}

impl Session {
    /// Records the pre-run state of the working tree at `root` and starts a run.
    ///
    /// In order: open the repository (creating it, or its first commit, with
    /// `init`); start copying HEAD's commit and tree into the harness's store
    /// (made if missing), in a thread; check the tree is clean, refusing a dirty one unless
    /// `allow_dirty`; record the pre-run state under `refs/harness/<id>/pre`
    /// and the tag `harness/<id>`; write the run's metadata. The user's branch,
    /// HEAD, index, stash and files are not changed (except by `init`, which
    /// commits onto the new branch).
    ///
    /// # Errors
    ///
    /// [`Error::NotARepository`] and [`Error::NoCommits`] without `init`,
    /// [`Error::DirtyTree`] without `allow_dirty`, [`Error::Unmerged`] during a
    /// merge, [`Error::NotRepositoryRoot`], [`Error::BareRepository`],
    /// [`Error::SparseCheckout`], and failures of git or the filesystem. On an
    /// error no run, ref or tag is recorded (the store may hold HEAD's objects).
    pub fn begin(root: &Path, options: BeginOptions) -> Result<Session, Error> {
        let (repo, root) = open::open_for_run(root, options.init)?;
        let head =
            open::head_commit(&repo)?.ok_or_else(|| Error::NoCommits { root: root.clone() })?;
        let store = Store::create(&root)?;
        // HEAD's commit and tree are in the pre-run state whether the tree
        // is clean (they are it) or dirty (its first parent): their copy,
        // nearly all of a first one, runs while the tree is checked.
        let head_copy = Copying::start(repo.path(), store.dir(), head, false, None, None, None);
        let checked = (|| {
            // Before the scanner shares the object database: what it records goes there.
            read_store_objects(&repo, &store)?;
            // Watch before looking, so that nothing changing meanwhile is missed.
            let scanner =
                Scanner::new_in(&repo, &root, None, options.tracking, &private_dir(&store))?;
            // A follow-up is checked before the tree: its tree is dirty with the work of
            // the run it follows, which is no reason to refuse it.
            let parent_end = match &options.follows {
                Some(parent) => Some(chain::check_parent(&repo, &store, parent, head)?),
                None => None,
            };
            let dirty = Probe::for_workspace(&root).dirty_paths(&repo, &root)?;
            if !dirty.is_empty() && !options.allow_dirty && parent_end.is_none() {
                return Err(Error::dirty(dirty));
            }
            Ok((scanner, dirty, parent_end))
        })();
        let (mut scanner, dirty, parent_end) = match checked {
            Ok(checked) => checked,
            Err(e) => return Err(head_copy.abandon(e)),
        };
        let runs = Runs::new(store.dir());
        // In the harness's own directory of the git directory, on the workspace's disk.
        let clock_dir = repo.path().join("harness");
        let _ = std::fs::create_dir_all(&clock_dir);
        let started = file_system_now(&clock_dir);
        let id = match runs.reserve(started) {
            Ok(id) => id,
            Err(e) => return Err(head_copy.abandon(e)),
        };
        // Before the run is listed (its metadata is written below), so that no prune
        // ever sees it listed and not in progress.
        let live = match crate::live::take(&runs.run_dir(&id), crate::live::Lock::Exclusive) {
            Ok(live) => live,
            Err(e) => {
                runs.release(&id);
                return Err(head_copy.abandon(e));
            }
        };
        let head_tree = match repo.find_commit(head).context("find HEAD's commit") {
            Ok(commit) => commit.tree_id(),
            Err(e) => return Err(head_copy.abandon(e)),
        };
        let mut publisher = Publisher::new(options.hidden.clone(), Some(head_tree));
        let recorded = record_start(
            &repo,
            &mut publisher,
            &runs,
            &id,
            &mut scanner,
            head,
            !dirty.is_empty(),
            &options,
            started,
            parent_end,
        );
        let recorded = recorded.and_then(|record| {
            record_ignored_start(&repo, &store, &runs, &id, &root)?;
            Ok(record)
        });
        let record = match recorded {
            Ok(record) => record,
            Err(e) => {
                delete_refs(&repo, &id);
                runs.release(&id);
                return Err(head_copy.abandon(e));
            }
        };
        let copying = Some(Copying::start(
            repo.path(),
            store.dir(),
            record.pre.commit,
            record.dirty,
            Some(run_ref(&id, "pre")),
            Some(head_copy),
            Some(head_tree),
        ));
        Ok(Session {
            last_tree: record.pre.tree,
            root,
            repo,
            mode: Mode::Workspace,
            gone_reported: false,
            access_given_back: BTreeSet::new(),
            git_access_unreported: Vec::new(),
            copying,
            store,
            runs,
            record,
            tracking: options.tracking,
            scanner: Some(scanner),
            last: None,
            ignored_unrestored: BTreeSet::new(),
            publisher,
            _live: live,
            live: true,
        })
    }
}

/// Records the pre-run state of a run that passed the checks.
#[allow(clippy::too_many_arguments)]
fn record_start(
    repo: &Repository,
    publisher: &mut Publisher,
    runs: &Runs,
    id: &RunId,
    scanner: &mut Scanner,
    head: Oid,
    dirty: bool,
    options: &BeginOptions,
    started: SystemTime,
    parent_end: Option<Oid>,
) -> Result<RunRecord, Error> {
    let pre = if dirty {
        let index_tree = state::index_tree(repo)?;
        // The user's own files, whatever their size (a run may change them),
        // and modes as the user left them.
        scanner.users_own(true);
        let tree = scanner.snapshot();
        scanner.users_own(false);
        let tree = tree?;
        state::record(
            repo,
            tree,
            index_tree,
            head,
            &format!("pre-run state of run {id}"),
            None,
        )?
    } else {
        scanner.assume_current();
        state::clean(repo, head)?
    };
    let public = publish(repo, publisher, pre.commit, true)?;
    repo.reference(&run_ref(id, "pre"), public, false, "harness: pre-run state")
        .context("record the pre-run state")?;
    repo.reference(&tag_ref(id), public, false, "harness: pre-run tag")
        .context(format_args!("create the tag harness/{id}"))?;
    let mut record = record::new_record(
        id.clone(),
        options.task.clone(),
        options.model.clone(),
        started,
        pre,
        dirty,
    );
    record.parent = options.follows.clone();
    record.parent_end = parent_end;
    runs.write(&record)?;
    Ok(record)
}

/// Lists the ignored files at the start of run `id` and saves their content within the
/// budget (see [`crate::ignored`]), reusing what the previous run of the workspace saved.
fn record_ignored_start(
    repo: &Repository,
    store: &Store,
    runs: &Runs,
    id: &RunId,
    root: &Path,
) -> Result<(), Error> {
    let listing = ignored::list(repo, root, &BTreeSet::new())?;
    // The newest other run's manifest: its stat data spares reading what did not change.
    let previous = runs
        .list()
        .ok()
        .and_then(|all| all.into_iter().rev().find(|run| &run.id != id))
        .and_then(|run| ignored::read(&run.dir, Which::Start).ok().flatten());
    let (manifest, commit) = ignored::save(store.dir(), root, listing, previous.as_ref(), false)?;
    if let Some(commit) = commit {
        store.set_ref(
            &ignored::ref_name(&run_ref(id, ""), Which::Start),
            commit,
            "harness: ignored files at the start",
        )?;
    }
    ignored::write(&runs.run_dir(id), Which::Start, &manifest)
}

/// Removes what a failed begin may have created.
pub(super) fn delete_refs(repo: &Repository, id: &RunId) {
    let prefix = run_ref(id, "");
    let ignored = [Which::Start, Which::Check, Which::Redo].map(|w| ignored::ref_name(&prefix, w));
    for name in [run_ref(id, "pre"), tag_ref(id)].into_iter().chain(ignored) {
        // Best effort: a ref that was not created is not there to delete.
        if let Ok(mut reference) = repo.find_reference(&name) {
            let _ = reference.delete();
        }
    }
}
