//! A run of the agent in one repository: the [`Session`] type, opening a recorded run,
//! its plain accessors, and what every operation shares (which repository it works in,
//! the run's refs and their public copies in the workspace, the scanner).
//!
//! Each operation is a file of its own, an `impl Session` block that opens with its
//! public method and says what it guarantees:
//!
//! - `begin.rs`: check the tree and record the pre-run state ([`Session::begin`]);
//! - `checkpoint.rs`: snapshot the working tree after a step;
//! - `protect.rs`: save an ignored file before a file tool first writes it;
//! - `diff.rs`: what the run changed;
//! - `ignored_changes.rs`: the ignored files that differ from the start;
//! - `reset.rs`: the ignored files put back before a verification, and kept after it;
//! - `verify.rs`: put back what a command changed of the run's records in `.git`;
//! - `undo.rs` and `redo.rs`, through `replace.rs` (save the current state, then
//!   restore a recorded one): bring a recorded state back;
//! - `accept.rs`: commit the run's changes onto the user's branch;
//! - `chain.rs`: the runs of a chain of follow-ups, stepped back, forward and accepted
//!   together ([`Chain`](crate::Chain)), and the checks a follow-up's begin makes;
//! - `finish.rs`: record the end of a run, or forget one that never started.
//!
//! This file imports nothing from the operations' files (only [`Session::open`] calls one
//! of their methods, [`Session::checkpoints`]). Between them: undo and redo verify first
//! ([`Session::verify`]); undo, redo and the reset read the ignored files through
//! `ignored_changes.rs` and return what `replace.rs` defines; discard deletes the refs a
//! begin made with `begin.rs`'s helper.

pub(crate) mod accept;
pub(crate) mod begin;
pub(crate) mod chain;
mod checkpoint;
pub(crate) mod diff;
mod finish;
pub(crate) mod ignored_changes;
mod protect;
mod redo;
pub(crate) mod replace;
mod reset;
mod undo;
pub(crate) mod verify;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

use crate::error::GitContext;
use crate::fill;
use crate::public::Publisher;
use crate::record::{METADATA_FILE, RunRecord, Runs};
use crate::scan::{Scanner, Tracking};
use crate::store::{Copying, Store};
use crate::{CommitId, Error, Hidden, RunId, RunInfo, access, open, state};

/// One run of the agent in one repository.
///
/// See the [crate documentation](crate) for what each operation guarantees.
pub struct Session {
    /// The working tree's top level, canonical.
    root: PathBuf,
    /// The repository the session reads and writes: the workspace's (its
    /// index is the user's), reading the store's objects too; or, once that
    /// is gone, the store's, with the workspace as its working tree.
    repo: Repository,
    /// Which of the two `repo` is.
    mode: Mode,
    /// True if and only if
    /// [`Tampering::RepositoryGone`](crate::Tampering::RepositoryGone) was reported.
    gone_reported: bool,
    /// Paths (relative to `root`) whose owner the session gave access back to
    /// (see [`access`]): in `.git`, in the working tree, and the directories
    /// undo or redo had to change.
    access_given_back: BTreeSet<PathBuf>,
    /// Those in `.git` that [`Session::verify`] has yet to report.
    git_access_unreported: Vec<PathBuf>,
    /// The copy of the pre-run state into the store, while it is under way.
    copying: Option<Copying>,
    /// The harness's store outside the workspace: the authority on the run.
    store: Store,
    /// The run directories in the store.
    runs: Runs,
    /// This run's metadata as last read or written.
    record: RunRecord,
    /// How checkpoints find changes.
    tracking: Tracking,
    /// Follows the working tree between checkpoints; made on first use when
    /// the run was opened rather than begun.
    scanner: Option<Scanner>,
    /// The newest checkpoint.
    last: Option<Checkpoint>,
    /// The tree of the newest checkpoint, or of the pre-run state.
    last_tree: Oid,
    /// The ignored paths (keys, see [`ignored::key`](crate::ignored::key)) the last
    /// [`Session::reset_ignored`] could not put back: the next baseline keeps them as
    /// they were, so that the next check names them again.
    ignored_unrestored: BTreeSet<String>,
    /// Makes the copies of the run's states that the workspace's refs point to, without
    /// the hidden paths.
    publisher: Publisher,
    /// The mark that the run is in progress (begun here) or open (for undo or redo):
    /// [`crate::prune`] passes over the run while this process holds it.
    _live: Option<crate::live::Held>,
    /// True if and only if this session began the run ([`Session::begin`]): the run is
    /// going on, so every ignored file changed since its start is its own.
    live: bool,
}

impl Session {
    /// Opens run `run` of the workspace at `root`, for example to undo a run
    /// whose process died. Checkpoints taken here continue the run's chain.
    ///
    /// The run is read from the harness's store, so this works even when the
    /// workspace's `.git` was deleted or damaged since: the session then works
    /// on the working tree alone.
    pub fn open(root: &Path, run: &RunId) -> Result<Session, Error> {
        let root = std::fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
        let unknown = || Error::UnknownRun {
            run: run.clone(),
            root: root.clone(),
        };
        let store = Store::open(&root)?.ok_or_else(unknown)?;
        let runs = Runs::new(store.dir());
        let record = runs.find(run)?.ok_or_else(unknown)?;
        let mut git_access = Vec::new();
        let (repo, mode) = match workspace_repo(&root, &store, &mut git_access)? {
            Some(repo) => (repo, Mode::Workspace),
            None => (store_view(&store, &root)?, Mode::StoreOnly),
        };
        let reference = repo.find_commit(record.pre.head).ok().map(|c| c.tree_id());
        // Shared: the run's own process, if it is still running, holds it exclusively
        // and keeps prunes away by itself.
        // Best effort: a store this process cannot write in is still read.
        let live = crate::live::take(&runs.run_dir(run), crate::live::Lock::Shared)
            .ok()
            .flatten();
        let mut session = Session {
            _live: live,
            last_tree: record.pre.tree,
            publisher: Publisher::new(Hidden::default(), reference),
            root,
            repo,
            mode,
            gone_reported: false,
            access_given_back: git_access.iter().cloned().collect(),
            git_access_unreported: git_access,
            copying: None,
            store,
            runs,
            record,
            tracking: Tracking::default(),
            scanner: None,
            last: None,
            ignored_unrestored: BTreeSet::new(),
            live: false,
        };
        if let Some(last) = session.checkpoints()?.pop() {
            session.last_tree = session
                .store
                .repo()
                .find_commit(last.commit.0)
                .context("find the last checkpoint")?
                .tree_id();
            session.last = Some(last);
        }
        Ok(session)
    }

    /// Every run recorded for the workspace at `root`, oldest first.
    pub fn runs(root: &Path) -> Result<Vec<RunInfo>, Error> {
        let root = std::fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
        match Store::open(&root)? {
            Some(store) => Runs::new(store.dir()).list(),
            None => Ok(Vec::new()),
        }
    }

    /// The newest run recorded in the repository at `root`, if any.
    pub fn latest(root: &Path) -> Result<Option<RunInfo>, Error> {
        Ok(Session::runs(root)?.pop())
    }

    /// Hides `hidden` from here on: what this session records of those paths from now on
    /// (checkpoints, saved states, the copies [`Session::verify`] puts back) goes to the
    /// harness's store only, and the workspace's refs point to copies without them (see
    /// [`BeginOptions::hidden`](crate::BeginOptions::hidden)). A run opened with
    /// [`Session::open`] hides nothing until told: call this with what the run hid,
    /// before undo or redo.
    pub fn hide(&mut self, hidden: Hidden) {
        let reference = self.publisher_reference();
        self.publisher = Publisher::new(hidden, reference);
    }

    /// The tree of the HEAD the run began on, if it can be found.
    fn publisher_reference(&self) -> Option<Oid> {
        self.repo
            .find_commit(self.record.pre.head)
            .ok()
            .map(|c| c.tree_id())
    }

    /// The run's id.
    pub fn id(&self) -> &RunId {
        &self.record.id
    }

    /// The run's metadata, as this session last read or wrote it.
    pub fn info(&self) -> RunInfo {
        self.record.info(&self.run_dir())
    }

    /// The working tree's top level.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The run's directory in the harness's store (`harness/runs/<id>/`), for
    /// files that belong to the run (the agent's transcript). It exists from
    /// [`Session::begin`] on, outside the workspace.
    pub fn run_dir(&self) -> PathBuf {
        self.runs.run_dir(&self.record.id)
    }

    /// The harness's store for this workspace: a bare repository outside it.
    pub fn store_dir(&self) -> &Path {
        self.store.dir()
    }

    /// The run's metadata file, `run.json` in [`run_dir`](Self::run_dir).
    pub fn metadata_path(&self) -> PathBuf {
        self.run_dir().join(METADATA_FILE)
    }

    /// Where the agent writes its JSONL transcript: `transcript.jsonl` in
    /// [`run_dir`](Self::run_dir).
    pub fn transcript_path(&self) -> PathBuf {
        self.run_dir().join("transcript.jsonl")
    }

    /// Files larger than [`LARGEST_RECORDED_FILE`] that the run wrote, as of
    /// the last checkpoint, sorted: no snapshot holds them. Undo puts back
    /// what was at such a path before the run and leaves a new one as it is;
    /// redo cannot bring one back, and accept refuses while one is there
    /// ([`Error::TooLarge`]).
    ///
    /// [`LARGEST_RECORDED_FILE`]: crate::LARGEST_RECORDED_FILE
    pub fn too_large(&self) -> Vec<PathBuf> {
        self.scanner
            .as_ref()
            .map(Scanner::too_large)
            .unwrap_or_default()
    }

    /// Paths (relative to the top level, sorted) whose owner this session gave
    /// back the access a command took (`chmod 000 src`): read on a file, read
    /// and search on a directory, and write on a directory that undo or redo
    /// had to change. Git records no other mode, so nothing else of it is
    /// restored. Empty unless a command took some.
    pub fn access_given_back(&self) -> Vec<PathBuf> {
        let mut all = self.access_given_back.clone();
        if let Some(scanner) = &self.scanner {
            all.extend(scanner.access_given_back().iter().cloned());
        }
        all.into_iter().collect()
    }

    /// Waits until the pre-run state is in the store. [`Session::begin`]
    /// copies it in a thread, so that the first copy of a large tree costs
    /// the time the model takes to answer; call this before anything that
    /// could change `.git` runs (the agent does, before each command). Every
    /// other operation waits by itself. Returns how many objects the copy
    /// wrote (none when the store had them, or the wait was done before).
    pub fn wait_for_store(&mut self) -> Result<usize, Error> {
        match self.copying.take() {
            Some(copying) => copying.wait(),
            None => Ok(0),
        }
    }

    /// Re-reads the metadata, which another process may have changed.
    fn reload(&mut self) -> Result<(), Error> {
        if let Some(record) = self.runs.find(&self.record.id)? {
            self.record = record;
        }
        Ok(())
    }

    /// Refuses to start a restore that could not write the index at its end.
    fn refuse_locked_index(&self) -> Result<(), Error> {
        if self.mode == Mode::StoreOnly {
            return Ok(());
        }
        let lock = self.repo.path().join("index.lock");
        if lock.exists() {
            return Err(Error::IndexLocked { path: lock });
        }
        Ok(())
    }

    /// The session's scanner, made on first use.
    fn scanner(&mut self) -> Result<&mut Scanner, Error> {
        match &mut self.scanner {
            Some(scanner) => Ok(scanner),
            empty => {
                let mut scanner = Scanner::new_in(
                    &self.repo,
                    &self.root,
                    Some(self.last_tree),
                    self.tracking,
                    &private_dir(&self.store),
                )?;
                for path in &self.record.ignored {
                    scanner.force(Path::new(path));
                }
                Ok(empty.insert(scanner))
            }
        }
    }

    /// A full scan of the working tree, starting from tree `base`: undo, redo
    /// and accept trust no change notes.
    fn full_snapshot(&mut self, base: Oid) -> Result<(Scanner, Oid), Error> {
        let mut scanner = Scanner::new_in(
            &self.repo,
            &self.root,
            Some(base),
            Tracking::FullScan,
            &private_dir(&self.store),
        )?;
        for path in &self.record.ignored {
            scanner.force(Path::new(path));
        }
        let tree = scanner.snapshot();
        self.access_given_back
            .extend(scanner.access_given_back().iter().cloned());
        Ok((scanner, tree?))
    }

    fn head_moved(&self, when: &'static str, recorded: Oid, current: Option<Oid>) -> Error {
        Error::HeadMoved {
            run: self.record.id.clone(),
            when,
            recorded: recorded.to_string(),
            current: current.map(|id| id.to_string()),
        }
    }

    /// `refs/harness/<id>/<leaf>`.
    fn run_ref(&self, leaf: &str) -> String {
        run_ref(&self.record.id, leaf)
    }

    /// Keeps `commit` (and, `with_parents`, its parents) in the store and
    /// points the run's ref `leaf` at it in the store and, while there is
    /// one, at its public copy in the workspace's repository (see [`Publisher`]),
    /// which is returned. `base` is a tree the store has whole.
    fn set_run_ref(
        &mut self,
        leaf: &str,
        commit: Oid,
        with_parents: bool,
        base: Oid,
        message: &str,
    ) -> Result<Oid, Error> {
        // The session wrote the state into the store, but not what the workspace had
        // already (files as HEAD has them): that is walked for, in what differs from `base`.
        fill::fill_workspace(
            &self.repo,
            self.store.repo(),
            commit,
            with_parents,
            Some(base),
        )?;
        let name = self.run_ref(leaf);
        self.store.set_ref(&name, commit, message)?;
        if self.mode == Mode::Workspace {
            let public = publish(&self.repo, &mut self.publisher, commit, with_parents)?;
            self.repo
                .reference(&name, public, true, message)
                .context(format_args!("update {name}"))?;
            return Ok(public);
        }
        Ok(commit)
    }

    /// Switches to working from the store when the workspace's repository is
    /// gone or unreadable. True if and only if the workspace's repository is
    /// still the one worked in.
    fn ensure_repository(&mut self) -> Result<bool, Error> {
        if self.mode == Mode::StoreOnly {
            return Ok(false);
        }
        let mut given = Vec::new();
        let found = workspace_repo(&self.root, &self.store, &mut given)?;
        self.note_git_access(given);
        if found.is_some() {
            return Ok(true);
        }
        self.repo = store_view(&self.store, &self.root)?;
        self.mode = Mode::StoreOnly;
        // Made again over the store on next use, from the last recorded tree.
        self.scanner = None;
        Ok(false)
    }

    /// Keeps `given`, paths in `.git` whose access was given back, for
    /// [`Session::access_given_back`] and for the next [`Session::verify`] to
    /// report.
    fn note_git_access(&mut self, given: Vec<PathBuf>) {
        self.access_given_back.extend(given.iter().cloned());
        self.git_access_unreported.extend(given);
    }

    /// HEAD's commit; `None` on an unborn branch and without a repository.
    fn head(&self) -> Result<Option<Oid>, Error> {
        match self.mode {
            Mode::Workspace => open::head_commit(&self.repo),
            Mode::StoreOnly => Ok(None),
        }
    }

    /// The tree of the user's index; without a repository there is no index,
    /// and `recorded` stands for it.
    fn current_index_tree(&self, recorded: Oid) -> Result<Oid, Error> {
        match self.mode {
            Mode::Workspace => state::index_tree(&self.repo),
            Mode::StoreOnly => Ok(recorded),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // The copy must not be cut off by a process that ends right after.
        // Its error, if any, has nowhere to go; the workspace still has the
        // state.
        let _ = self.wait_for_store();
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.record.id)
            .field("root", &self.root)
            .field("tracking", &self.tracking)
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

/// A snapshot of the working tree taken after a step.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Checkpoint {
    /// Its number in the run, from 1.
    pub number: u32,
    /// The label it was taken with, on one line.
    pub label: String,
    /// The snapshot commit, reachable from `refs/harness/<run-id>/checkpoints`.
    pub commit: CommitId,
}

/// Which repository a session works in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// The workspace's own, with the store's objects readable through it.
    Workspace,
    /// The store's: the workspace's `.git` is gone or unreadable.
    StoreOnly,
}

/// The workspace's repository at `root`, reading the store's objects too;
/// `None` when `root` is no longer the top level of a readable repository.
fn workspace_repo(
    root: &Path,
    store: &Store,
    access_given: &mut Vec<PathBuf>,
) -> Result<Option<Repository>, Error> {
    // Only `root/.git` itself: a repository further up is not this workspace's.
    let repo = match Repository::open(root) {
        Ok(repo) => repo,
        Err(_) => {
            // Unreadable perhaps only because a command took the owner's access.
            let given = give_back_git_access(root);
            if given.is_empty() {
                return Ok(None);
            }
            access_given.extend(given);
            let Ok(repo) = Repository::open(root) else {
                return Ok(None);
            };
            repo
        }
    };
    let top = repo.workdir().and_then(|w| std::fs::canonicalize(w).ok());
    if top.as_deref() != Some(root) {
        return Ok(None);
    }
    read_store_objects(&repo, store)?;
    Ok(Some(repo))
}

/// Gives the owner back access to everything in `root/.git` when it is a
/// directory (see [`access`]): read on its files, and read, write and search
/// on its directories, which git writes in; returns the paths that changed,
/// relative to `root`.
fn give_back_git_access(root: &Path) -> Vec<PathBuf> {
    let git = root.join(".git");
    if !std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
        return Vec::new();
    }
    access::give_back_below(&git, access::Need::Change, |_, _| true)
        .into_iter()
        .filter_map(|path| path.strip_prefix(root).ok().map(Path::to_path_buf))
        .collect()
}

/// Where a session's scanner keeps its private index: in the store, out of commands' reach
/// under the kernel tiers, since it names each recorded file with the hash of its content.
fn private_dir(store: &Store) -> PathBuf {
    store.dir().join("harness")
}

/// Has `repo` (the workspace's) write every object into the store and read the
/// workspace's objects beside the store's, in memory only: what the session records
/// (the content of hidden files among it) goes to the store, outside the workspace, and
/// reaches the workspace's `.git` only as [`publish`] copies it there. The store never
/// borrows the workspace's objects on disk.
fn read_store_objects(repo: &Repository, store: &Store) -> Result<(), Error> {
    let own = repo.commondir().join("objects");
    let store_repo = Repository::open_bare(store.dir()).context("open the harness store")?;
    let odb = store_repo
        .odb()
        .context("open the harness store's objects")?;
    odb.add_disk_alternate(&own.to_string_lossy())
        .context("read the workspace's objects")?;
    repo.set_odb(&odb)
        .context("write into the harness store's objects")
}

/// The public copy of `commit` ([`Publisher`]) written into the workspace's own object
/// directory with what it (with `with_parents`, its parents too) needs and the workspace
/// lacks ([`fill::fill_workspace`]), through a handle that does not read the store.
fn publish(
    repo: &Repository,
    publisher: &mut Publisher,
    commit: Oid,
    with_parents: bool,
) -> Result<Oid, Error> {
    let own = Repository::open(repo.path()).context("open the workspace's repository")?;
    let odb = own.odb().context("open the workspace's objects")?;
    let public = publisher.commit(repo, &odb, commit)?;
    let base = publisher.filled();
    fill::fill_workspace(repo, &own, public, with_parents, base)?;
    publisher.note_filled(
        repo.find_commit(public)
            .context("find the workspace's copy")?
            .tree_id(),
    );
    Ok(public)
}

/// The store's repository with the workspace at `root` as its working tree.
fn store_view(store: &Store, root: &Path) -> Result<Repository, Error> {
    let repo = Repository::open_bare(store.dir()).context("open the harness store")?;
    repo.set_workdir(root, false)
        .context("use the workspace with the harness store")?;
    Ok(repo)
}

fn run_ref(id: &RunId, leaf: &str) -> String {
    format!("refs/harness/{id}/{leaf}")
}

fn tag_ref(id: &RunId) -> String {
    format!("refs/tags/harness/{id}")
}
