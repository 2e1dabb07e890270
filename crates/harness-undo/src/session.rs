//! A run of the agent: its pre-run state, checkpoints, diff, undo, redo and accept.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use git2::{Oid, Repository};

use crate::clean::Probe;
use crate::diff::{self, Diff};
use crate::error::{GitContext, PathListing};
use crate::fill;
use crate::ignored::{self, Change, Manifest, Which};
use crate::public::Publisher;
use crate::record::{self, METADATA_FILE, RunRecord, Runs, State};
use crate::scan::{Scanner, Tracking};
use crate::store::{self, Copying, Packer, Store};
use crate::{
    CommitId, Error, Hidden, Outcome, RunId, RunInfo, access, open, paths, restore, state,
};

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
}

/// Whether to restore even though HEAD moved since the state was recorded
/// (`--force`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Force {
    /// Refuse when HEAD moved, or when redo would overwrite changes.
    #[default]
    No,
    /// Restore anyway. HEAD, branches and commits are still never changed.
    Yes,
}

/// What [`Session::diff`] compares the pre-run state with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DiffTarget {
    /// The working tree as it is now.
    #[default]
    WorkingTree,
    /// Checkpoint number `n`, counted from 1.
    Checkpoint(u32),
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

/// What [`Session::undo`] or [`Session::redo`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Restored {
    /// The paths whose file was written or removed, sorted.
    pub changed: Vec<PathBuf>,
    /// The commit that saved the working tree and index as they were just
    /// before; `None` if they already were in the asked-for state and nothing
    /// was done.
    pub saved: Option<CommitId>,
    /// Ignored files that stood where a restored file had to go (a file where
    /// its directory must be, or a directory where it must be), and so were
    /// removed; they are in the `saved` commit, and redo puts them back.
    pub displaced: Vec<PathBuf>,
    /// Files the pre-run state lacks that an undo kept, as they were, because
    /// they were there before the run: git ignored them then, and a command's
    /// change to the ignore rules made them visible since. Sorted. What a
    /// command wrote into one is not undone.
    pub kept: Vec<PathBuf>,
    /// True if and only if the workspace's repository was gone or unreadable,
    /// so that only the working tree came back, from the harness's store: not
    /// the index (staged changes), HEAD, branches or history, which the
    /// store does not hold.
    pub repository_missing: bool,
    /// What was found changed in the workspace's `.git` and put back from
    /// the store before restoring (see [`Session::verify`]).
    pub repaired: Vec<Tampering>,
    /// What was done to ignored files (see the crate docs, "Ignored files").
    pub ignored: IgnoredRestore,
}

/// What putting ignored files back did: by undo or redo ([`Restored::ignored`]), or
/// before a verification ([`Session::reset_ignored`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IgnoredRestore {
    /// Paths written back as they were, sorted.
    pub restored: Vec<PathBuf>,
    /// Paths removed, sorted: the state put back lacks them.
    pub removed: Vec<PathBuf>,
    /// Paths that differ from the state put back and could not be put back, sorted:
    /// their content was not saved (larger than
    /// [`LARGEST_SAVED_IGNORED_FILE`](crate::LARGEST_SAVED_IGNORED_FILE), or over the
    /// budget), or writing failed. They are as the commands left them.
    pub not_restored: Vec<PathBuf>,
    /// Paths that differ but were changed after the run ended (by undo: after
    /// [`Session::finish`], or the run's last record when it never finished; by redo:
    /// after the undo), so not by the run: left as they are, sorted. Told by the change
    /// time (ctime), which no program can set back. Only those there before are named:
    /// a new file made after the run is left without a word, as it is none of the run's.
    pub left: Vec<PathBuf>,
}

impl IgnoredRestore {
    fn from(done: ignored::PutBack) -> IgnoredRestore {
        IgnoredRestore {
            restored: done.restored,
            removed: done.removed,
            not_restored: done.not_restored,
            left: Vec::new(),
        }
    }

    /// True if and only if nothing was done and nothing was left undone.
    pub fn is_empty(&self) -> bool {
        self.restored.is_empty()
            && self.removed.is_empty()
            && self.not_restored.is_empty()
            && self.left.is_empty()
    }
}

/// Ignored files (which no snapshot holds) that differ from the start of the run:
/// [`Session::ignored_changes`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IgnoredChanges {
    /// Made during the run, sorted; undo removes them.
    pub created: Vec<PathBuf>,
    /// There at the start, with another content, kind or mode now, sorted.
    pub changed: Vec<PathBuf>,
    /// There at the start, gone now, sorted.
    pub deleted: Vec<PathBuf>,
    /// Those changed or deleted whose content was not saved at the start (too large, or
    /// over the budget), sorted: undo cannot put them back.
    pub not_restorable: Vec<PathBuf>,
    /// True if and only if the ignored files were too many to list whole
    /// ([`MOST_LISTED_IGNORED`](crate::MOST_LISTED_IGNORED)): changes past the limit are
    /// not seen.
    pub incomplete: bool,
}

impl IgnoredChanges {
    /// True if and only if no ignored file differs.
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.changed.is_empty() && self.deleted.is_empty()
    }

    /// Every differing path with its change, sorted by path.
    pub fn all(&self) -> Vec<(&Path, IgnoredChange)> {
        let mut all: Vec<(&Path, IgnoredChange)> = self
            .created
            .iter()
            .map(|p| (p.as_path(), IgnoredChange::Created))
            .chain(
                self.changed
                    .iter()
                    .map(|p| (p.as_path(), IgnoredChange::Changed)),
            )
            .chain(
                self.deleted
                    .iter()
                    .map(|p| (p.as_path(), IgnoredChange::Deleted)),
            )
            .collect();
        all.sort();
        all
    }
}

/// How an ignored path differs from the start of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum IgnoredChange {
    /// Made during the run.
    Created,
    /// Changed during the run.
    Changed,
    /// Deleted during the run.
    Deleted,
}

/// A change to the run's records in the workspace's `.git` that the harness
/// found, and, where the repository is still there, undid.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Tampering {
    /// The workspace's `.git` is gone or no longer a repository. Undo and redo
    /// work from the store; the history and the index cannot be restored.
    RepositoryGone,
    /// The ref `name` was deleted (`found` is `None`) or moved to `found`; it
    /// points where the store says again.
    RefRestored {
        /// The full ref name, such as `refs/harness/<id>/pre`.
        name: String,
        /// Where it pointed instead, if it existed.
        found: Option<CommitId>,
    },
    /// The objects of the commit `name` points to were missing from the
    /// workspace's repository (pruned or deleted); they were copied back from
    /// the store.
    ObjectsRestored {
        /// The full ref name.
        name: String,
    },
    /// The owner's access to these paths in `.git` (relative to the top
    /// level) was taken (`chmod 000 .git`); it was given back.
    AccessGivenBack {
        /// The paths, sorted.
        paths: Vec<PathBuf>,
    },
    /// The owner's access to what undo relies on outside the workspace was
    /// taken: the harness's store or a directory above it (`chmod 000
    /// ~/.local/state/harness`, which Landlock does not refuse), or a directory
    /// above the workspace; it was given back.
    OutsideAccessGivenBack {
        /// The paths, absolute.
        paths: Vec<PathBuf>,
    },
}

impl std::fmt::Display for Tampering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tampering::RepositoryGone => f.write_str(
                "the repository (.git) is gone or unreadable; undo works from the harness's store",
            ),
            Tampering::RefRestored { name, found: None } => {
                write!(f, "{name} was deleted; restored from the harness's store")
            }
            Tampering::RefRestored {
                name,
                found: Some(found),
            } => write!(
                f,
                "{name} was moved to {found}; restored from the harness's store"
            ),
            Tampering::ObjectsRestored { name } => write!(
                f,
                "the objects of {name} were removed; restored from the harness's store"
            ),
            Tampering::AccessGivenBack { paths } | Tampering::OutsideAccessGivenBack { paths } => {
                let listing = PathListing {
                    paths,
                    count: paths.len(),
                };
                write!(
                    f,
                    "the owner's access to {listing} was taken (chmod); given back"
                )
            }
        }
    }
}

/// What [`Session::accept`] committed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Accepted {
    /// The new commit on the current branch.
    pub commit: CommitId,
    /// Its message.
    pub message: String,
}

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
    /// True if and only if [`Tampering::RepositoryGone`] was reported.
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
    /// The ignored paths (keys, see [`ignored::key`]) the last
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
            let dirty = Probe::for_workspace(&root).dirty_paths(&repo, &root)?;
            if !dirty.is_empty() && !options.allow_dirty {
                return Err(Error::dirty(dirty));
            }
            Ok((scanner, dirty))
        })();
        let (mut scanner, dirty) = match checked {
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

    /// Hides `hidden` from here on: what this session records of those paths from now on
    /// (checkpoints, saved states, the copies [`Session::verify`] puts back) goes to the
    /// harness's store only, and the workspace's refs point to copies without them (see
    /// [`BeginOptions::hidden`]). A run opened with [`Session::open`] hides nothing until
    /// told: call this with what the run hid, before undo or redo.
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

    /// Snapshots the working tree as the run's next checkpoint, or returns
    /// `None` when nothing changed since the last one (or since the start).
    ///
    /// The snapshot is a commit under `refs/harness/<id>/checkpoints` whose
    /// parent is the previous checkpoint (or the pre-run state), built in a
    /// private index. With [`Tracking::Watch`] it costs what changed.
    pub fn checkpoint(&mut self, label: &str) -> Result<Option<Checkpoint>, Error> {
        self.wait_for_store()?;
        self.ensure_repository()?;
        let tree = self.scanner()?.snapshot()?;
        if tree == self.last_tree {
            return Ok(None);
        }
        let number = self.last.as_ref().map_or(1, |c| c.number + 1);
        let parent = self
            .last
            .as_ref()
            .map_or(self.record.pre.commit, |c| c.commit.0);
        let label = label.split_whitespace().collect::<Vec<_>>().join(" ");
        let message = format!("checkpoint {number}: {label}\n\nRun {}.\n", self.record.id);
        let parent = self
            .repo
            .find_commit(parent)
            .context("find the previous checkpoint")?;
        let commit = state::commit(
            &self.repo,
            &state::harness_signature()?,
            &message,
            tree,
            &[parent],
        )?;
        self.set_run_ref(
            "checkpoints",
            commit,
            false,
            self.last_tree,
            &format!("checkpoint {number}"),
        )?;
        let checkpoint = Checkpoint {
            number,
            label,
            commit: CommitId(commit),
        };
        self.last = Some(checkpoint.clone());
        self.last_tree = tree;
        Ok(Some(checkpoint))
    }

    /// The run's checkpoints, oldest first.
    pub fn checkpoints(&self) -> Result<Vec<Checkpoint>, Error> {
        let name = self.run_ref("checkpoints");
        let store = self.store.repo();
        let mut next = match store.refname_to_id(&name) {
            Ok(id) => Some(id),
            Err(e) => {
                // No checkpoint yet; anything else is a damaged ref.
                if e.code() != git2::ErrorCode::NotFound {
                    return Err(e).context(format_args!("read {name}"));
                }
                None
            }
        };
        let mut checkpoints = Vec::new();
        while let Some(id) = next.filter(|id| *id != self.record.pre.commit) {
            let commit = store.find_commit(id).context("find a checkpoint")?;
            let Some((number, label)) = commit
                .summary()
                .ok()
                .flatten()
                .and_then(parse_checkpoint_summary)
            else {
                break;
            };
            checkpoints.push(Checkpoint {
                number,
                label,
                commit: CommitId(id),
            });
            next = commit.parent_ids().next();
        }
        checkpoints.reverse();
        Ok(checkpoints)
    }

    /// Saves the prior content and mode of `path` (relative to the top
    /// level), or its absence, before a file tool first writes it, when git
    /// ignores it: no snapshot would hold it otherwise. From then on the
    /// pre-run state holds it as it was, every snapshot records it, and diff,
    /// undo and redo cover it like any other file. Returns true if and only
    /// if it was saved now.
    ///
    /// Nothing is saved for a path git records anyway (tracked, or not
    /// ignored), one saved before, a path that is not plainly inside the
    /// workspace (absolute, `..`, through a symlink, in `.git`), or a
    /// directory: the file tools refuse those or the snapshots cover them.
    pub fn protect(&mut self, path: &Path) -> Result<bool, Error> {
        let Some(text) = plain_relative(path) else {
            return Ok(false);
        };
        if self.record.ignored.contains(&text) {
            return Ok(false);
        }
        self.wait_for_store()?;
        self.reload()?;
        self.ensure_repository()?;
        let full = self.root.join(path);
        let metadata = std::fs::symlink_metadata(&full);
        let under_real_dirs = path
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            // A missing directory is one the tool will make.
            .all(|a| match std::fs::symlink_metadata(self.root.join(a)) {
                Ok(m) => m.is_dir(),
                Err(e) => e.kind() == std::io::ErrorKind::NotFound,
            });
        let pre = self.record.pre;
        let pre_tree = self
            .repo
            .find_tree(pre.tree)
            .context("find the pre-run tree")?;
        if !under_real_dirs
            || metadata.as_ref().is_ok_and(std::fs::Metadata::is_dir)
            || pre_tree.get_path(path).is_ok()
            || !is_ignored_even_if_missing(&self.repo, path)?
        {
            return Ok(false);
        }
        // Below what the pre-run state has as a file, the path did not
        // exist before the run (a command made it since): its absence is
        // what undo owes.
        let below_a_file = path
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .any(|a| {
                pre_tree
                    .get_path(a)
                    .is_ok_and(|e| e.kind() != Some(git2::ObjectType::Tree))
            });
        drop(pre_tree);
        let tree = if metadata.is_ok() && !below_a_file {
            state::with_files(&self.repo, &self.root, pre.tree, &[path.to_path_buf()])?
        } else {
            pre.tree
        };
        // Chained on the state it replaces, unless that is HEAD itself.
        let previous = (pre.commit != pre.head).then_some(pre.commit);
        let message = format!(
            "pre-run state of run {}, with ignored {text} as it was",
            self.record.id
        );
        let protected = state::record(
            &self.repo,
            tree,
            pre.index_tree,
            pre.head,
            &message,
            previous,
        )?;
        let public = self.set_run_ref(
            "pre",
            protected.commit,
            true,
            self.record.pre.tree,
            &message,
        )?;
        if self.mode == Mode::Workspace {
            self.repo
                .reference(&tag_ref(&self.record.id), public, true, &message)
                .context(format_args!("move the tag harness/{}", self.record.id))?;
        }
        if self.last.is_none() {
            self.last_tree = tree;
        }
        self.record.pre = protected;
        self.record.ignored.push(text);
        self.runs.write(&self.record)?;
        if let Some(scanner) = &mut self.scanner {
            scanner.force(path);
        }
        Ok(true)
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

    /// What commands changed that undo cannot put back: ignored files changed or
    /// deleted whose content was too large to save at the start
    /// ([`IgnoredChanges::not_restorable`]), and directories nested too deep to record
    /// (named `dir/`). Counted in full; the first 20 are named, sorted. A change is
    /// told by the time of the inode's last change, which no command can set back,
    /// not by the modification time, which `touch -d`, `cp -p` or `tar x` do.
    pub fn unrecorded_ignored_changes(&self) -> Result<(usize, Vec<PathBuf>), Error> {
        let too_deep: Vec<PathBuf> = self
            .scanner
            .iter()
            .flat_map(|scanner| scanner.too_deep())
            .map(|dir| dir.join(""))
            .collect();
        let mut changed = match self.ignored_changes_unrestorable() {
            Ok(changed) => changed,
            // The ignored files cannot be listed (an ignored tree nested too deep for
            // libgit2); the directories too deep to record are known all the same.
            Err(_) if !too_deep.is_empty() => Vec::new(),
            Err(error) => return Err(error),
        };
        changed.extend(too_deep);
        changed.sort();
        let count = changed.len();
        changed.truncate(crate::error::LISTED_PATHS);
        Ok((count, changed))
    }

    /// The ignored files of [`Session::unrecorded_ignored_changes`]: those changed or
    /// deleted that undo cannot put back.
    fn ignored_changes_unrestorable(&self) -> Result<Vec<PathBuf>, Error> {
        let mut unrestorable = self.ignored_changes()?.not_restorable;
        unrestorable.extend(
            self.ignored_listing()?
                .too_deep
                .into_iter()
                .map(|dir| dir.join("")),
        );
        Ok(unrestorable)
    }

    /// Ignored files (no snapshot holds them) that differ from the start of the run:
    /// made, changed or deleted, as the crate docs' "Ignored files" tells. Undo puts them
    /// back, but [`IgnoredChanges::not_restorable`]. Empty for a run begun before the
    /// harness listed ignored files.
    pub fn ignored_changes(&self) -> Result<IgnoredChanges, Error> {
        let Some(base) = self.ignored_manifest(Which::Start)? else {
            return Ok(IgnoredChanges::default());
        };
        let listing = self.ignored_listing()?;
        let mut changes = IgnoredChanges {
            incomplete: listing.truncated || base.truncated,
            ..IgnoredChanges::default()
        };
        for (key, change) in ignored::differences(&self.root, &base, &listing) {
            let path = ignored::path_of(&key);
            let saved = base
                .entries
                .get(&key)
                .is_some_and(|e| e.blob.is_some() || e.stat.kind == ignored::Kind::Dir);
            match change {
                Change::Created => changes.created.push(path.clone()),
                Change::Changed => changes.changed.push(path.clone()),
                Change::Deleted => changes.deleted.push(path.clone()),
            }
            if change != Change::Created && !saved {
                changes.not_restorable.push(path);
            }
        }
        Ok(changes)
    }

    /// Puts ignored files back as they were before the run's commands touched them,
    /// for a verification about to run: what the commands made is removed, what they
    /// changed or deleted is written back from the store. The state put back is the
    /// one at the start plus what earlier verifications wrote (recorded by
    /// [`Session::keep_ignored_after_check`]), so a check does not rebuild everything;
    /// a file a verification wrote that a command then changed is removed when its
    /// content was not saved. What could not be put back is in
    /// [`IgnoredRestore::not_restored`]: the verification may run it.
    pub fn reset_ignored(&mut self) -> Result<IgnoredRestore, Error> {
        self.wait_for_store()?;
        let base = match self.ignored_manifest(Which::Check)? {
            Some(base) => base,
            None => match self.ignored_manifest(Which::Start)? {
                Some(base) => base,
                None => return Ok(IgnoredRestore::default()),
            },
        };
        let listing = self.ignored_listing()?;
        let changes = ignored::differences(&self.root, &base, &listing);
        let done = ignored::put_back(&self.root, self.store.repo(), &base, &changes, true);
        self.ignored_unrestored = done.not_restored.iter().map(|p| ignored::key(p)).collect();
        let mut reset = IgnoredRestore::from(done);
        if listing.truncated {
            // What lies past the limit was not compared: the check cannot be vouched for.
            reset.not_restored.push(PathBuf::from(format!(
                "(ignored entries past the first {}, not compared)",
                crate::MOST_LISTED_IGNORED
            )));
        }
        Ok(reset)
    }

    /// Records the ignored files a verification just wrote as the baseline of the next
    /// [`Session::reset_ignored`], saving their content within the budget. Call it right
    /// after the verification ran (after [`Session::reset_ignored`] and the check only).
    pub fn keep_ignored_after_check(&mut self) -> Result<(), Error> {
        let base = match self.ignored_manifest(Which::Check)? {
            Some(base) => base,
            None => match self.ignored_manifest(Which::Start)? {
                Some(base) => base,
                None => return Ok(()),
            },
        };
        let listing = self.ignored_listing()?;
        let (mut manifest, commit) =
            ignored::save(self.store.dir(), &self.root, listing, Some(&base), true)?;
        // What a command left that could not be put back is not the check's: kept as the
        // baseline had it, it is a change again at the next check.
        for key in std::mem::take(&mut self.ignored_unrestored) {
            match base.entries.get(&key) {
                Some(entry) => manifest.entries.insert(key, entry.clone()),
                None => manifest.entries.remove(&key),
            };
        }
        if let Some(commit) = commit {
            self.store.set_ref(
                &ignored::ref_name(&self.run_ref(""), Which::Check),
                commit,
                "harness: ignored files a verification wrote",
            )?;
        }
        ignored::write(&self.run_dir(), Which::Check, &manifest)
    }

    /// Manifest `which` of this run, without the paths the file tools protected (the
    /// snapshots hold those).
    fn ignored_manifest(&self, which: Which) -> Result<Option<Manifest>, Error> {
        let Some(mut manifest) = ignored::read(&self.run_dir(), which)? else {
            return Ok(None);
        };
        for path in &self.record.ignored {
            manifest.entries.remove(&ignored::key(Path::new(path)));
        }
        Ok(Some(manifest))
    }

    /// The ignored files now, without the paths the file tools protected.
    fn ignored_listing(&self) -> Result<ignored::Listing, Error> {
        let skip: BTreeSet<PathBuf> = self.record.ignored.iter().map(PathBuf::from).collect();
        // A handle of its own: a restore may just have rewritten the ignore rules, and a
        // cached reading of them could be stale.
        let fresh = Repository::open(self.repo.path()).context("open the repository")?;
        if fresh.is_bare() {
            fresh
                .set_workdir(&self.root, false)
                .context("use the workspace as the working tree")?;
        }
        ignored::list(&fresh, &self.root, &skip)
    }

    /// Saves the current state of the ignored paths `changes` names (for redo), then puts
    /// them back as `base` has them. Returns what was done.
    fn undo_ignored(
        &mut self,
        base: &Manifest,
        changes: &[(String, Change)],
    ) -> Result<IgnoredRestore, Error> {
        let touched: BTreeSet<&String> = changes.iter().map(|(k, _)| k).collect();
        let listing = self.ignored_listing()?;
        let now = ignored::Listing {
            entries: listing
                .entries
                .into_iter()
                .filter(|(k, _)| touched.contains(k))
                .collect(),
            truncated: false,
            too_deep: Vec::new(),
        };
        let (mut before, commit) = ignored::save(self.store.dir(), &self.root, now, None, false)?;
        before.touched = touched.iter().map(|k| (*k).clone()).collect();
        if let Some(commit) = commit {
            self.store.set_ref(
                &ignored::ref_name(&self.run_ref(""), Which::Redo),
                commit,
                "harness: ignored files before undo",
            )?;
        }
        ignored::write(&self.run_dir(), Which::Redo, &before)?;
        let done = ignored::put_back(&self.root, self.store.repo(), base, changes, false);
        // Written after every file the undo wrote: what changes later is not the undo's.
        before.undone_ns = Some(file_system_stamp_ns(&self.run_dir()));
        ignored::write(&self.run_dir(), Which::Redo, &before)?;
        // What the next check compares with is the start again: the run's files are gone.
        let check = ignored::manifest_path(&self.run_dir(), Which::Check);
        if let Err(e) = std::fs::remove_file(&check)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            return Err(Error::io(&check, e));
        }
        Ok(IgnoredRestore::from(done))
    }

    /// The changes of the ignored files from the start that are the run's, for undo,
    /// and the paths changed after the run ([`IgnoredRestore::left`]); empty for a run
    /// begun before the harness listed them.
    fn ignored_undo_plan(&self) -> Result<IgnoredPlan, Error> {
        let Some(base) = self.ignored_manifest(Which::Start)? else {
            return Ok((Manifest::default(), Vec::new(), Vec::new()));
        };
        let listing = self.ignored_listing()?;
        let changes = ignored::differences(&self.root, &base, &listing);
        let end = self.run_end_ns();
        // What the last redo wrote is the run's, up to the time it wrote it.
        let redone = ignored::read(&self.run_dir(), Which::Redo)?
            .and_then(|m| m.redone_ns.map(|ns| (ns, m.redone)))
            .map(|(ns, touched)| (ns, touched.into_iter().collect::<BTreeSet<String>>()));
        let end_of = |path: &str| {
            let end = end?;
            Some(match &redone {
                Some((ns, touched)) if touched.contains(path) => end.max(*ns),
                _ => end,
            })
        };
        let (changes, left) = ignored::split_after(changes, &listing, end_of);
        Ok((base, changes, left))
    }

    /// When the run ended, as a change time in ns: anything changed later is not the
    /// run's. A finished run ended at [`Session::finish`]: the clock read there, rounded
    /// up to the next millisecond (the kernel stamps files from a clock that lags it,
    /// never leads it), or the stamp a file written in `.git` then got, if later (a
    /// network file system's clock may lead this machine's). `None`, all being the run's, while this session runs it, and for
    /// a run that never finished (its process died): no record tells when its last
    /// command stopped writing (a checkpoint follows a command, and the process can die
    /// between the two), so the whole time since is the run's. What undo then replaces
    /// that the user wrote since is saved first, within the budget, and redo brings it
    /// back.
    fn run_end_ns(&self) -> Option<i64> {
        if self.live {
            return None;
        }
        let ms = i64::try_from(self.record.ended_ms?).unwrap_or(i64::MAX);
        let ended = ms.saturating_add(1).saturating_mul(1_000_000);
        // The later of the two: a run's file is never taken for the user's.
        Some(
            self.record
                .ended_stamp_ns
                .map_or(ended, |stamp| stamp.max(ended)),
        )
    }

    /// The changes that bring the ignored paths the last undo touched back as it found
    /// them, for redo.
    fn ignored_redo_plan(&self) -> Result<IgnoredPlan, Error> {
        let Some(before) = ignored::read(&self.run_dir(), Which::Redo)? else {
            return Ok((Manifest::default(), Vec::new(), Vec::new()));
        };
        let touched: BTreeSet<&String> = before.touched.iter().collect();
        let listing = self.ignored_listing()?;
        let now = ignored::Listing {
            entries: listing
                .entries
                .into_iter()
                .filter(|(k, _)| touched.contains(k))
                .collect(),
            truncated: false,
            too_deep: Vec::new(),
        };
        let changes = ignored::differences(&self.root, &before, &now)
            .into_iter()
            .filter(|(k, _)| touched.contains(k))
            .collect();
        // Changed since the undo: not by the undo, so not for redo to replace.
        let (changes, left) = ignored::split_after(changes, &now, |_| before.undone_ns);
        Ok((before, changes, left))
    }

    /// Records the end of the run: its outcome and how many steps it took.
    pub fn finish(&mut self, outcome: Outcome, steps: u32) -> Result<(), Error> {
        self.wait_for_store()?;
        self.reload()?;
        self.record.ended_ms = Some(crate::run_id::unix_millis(SystemTime::now()));
        // Where the workspace's files are stamped: the harness's directory in its `.git`.
        self.record.ended_stamp_ns = Some(file_system_stamp_ns(&self.repo.path().join("harness")));
        self.record.outcome = Some(outcome);
        self.record.steps = Some(steps);
        self.runs.write(&self.record)
    }

    /// Forgets a run that was begun but never started, as if [`Session::begin`] had not
    /// been called: when what must follow the begin fails (the model server cannot be
    /// asked), there is nothing to undo and no run to list. Its refs and tag go, in the
    /// workspace and in the store, and so does its directory in the store. The working
    /// tree, index, HEAD and branches are not touched (nothing but the begin ran); objects
    /// already copied into the store stay there until pruned.
    ///
    /// # Errors
    ///
    /// [`Error::RunStarted`] once a checkpoint was taken: such a run has changes to undo,
    /// so it is kept. The error of the copy into the store, after the run is forgotten.
    pub fn discard(mut self) -> Result<(), Error> {
        if let Some(last) = &self.last {
            return Err(Error::RunStarted {
                run: self.record.id.clone(),
                checkpoints: last.number,
            });
        }
        // The copy names the run in the store when it ends: let it end first.
        let copied = self.wait_for_store();
        delete_refs(&self.repo, &self.record.id);
        delete_refs(self.store.repo(), &self.record.id);
        self.runs.release(&self.record.id);
        copied.map(drop)
    }

    /// What the run changed: the diff from the pre-run state to `to`.
    pub fn diff(&mut self, to: DiffTarget) -> Result<Diff, Error> {
        self.wait_for_store()?;
        self.ensure_repository()?;
        let to_tree = match to {
            DiffTarget::WorkingTree => self.scanner()?.snapshot()?,
            DiffTarget::Checkpoint(number) => {
                let checkpoints = self.checkpoints()?;
                let count = u32::try_from(checkpoints.len()).unwrap_or(u32::MAX);
                let index = usize::try_from(number).unwrap_or(usize::MAX);
                let checkpoint = index
                    .checked_sub(1)
                    .and_then(|i| checkpoints.get(i))
                    .ok_or_else(|| Error::UnknownCheckpoint {
                        run: self.record.id.clone(),
                        number,
                        count,
                    })?;
                self.repo
                    .find_commit(checkpoint.commit.0)
                    .context("find the checkpoint")?
                    .tree_id()
            }
        };
        diff::between(&self.repo, self.record.pre.tree, to_tree)
    }

    /// Brings the working tree and index back to the pre-run state.
    ///
    /// First the current working tree and index are saved as a commit under
    /// `refs/harness/<id>/saved`, which [`redo`](Self::redo) restores. Then
    /// files the run changed are rewritten, files it created are removed (with
    /// directories left empty), files it deleted come back, and the index is
    /// set to the one recorded at the start. Ignored files are put back as they were
    /// at the start ([`Restored::ignored`]; see the crate docs for the budget).
    ///
    /// Refuses with [`Error::HeadMoved`] when HEAD is not where it was at the
    /// start, unless `force`. Does nothing when the tree and index already are
    /// in the pre-run state (so a second undo does not replace what redo
    /// brings back).
    pub fn undo(&mut self, force: Force) -> Result<Restored, Error> {
        self.reload()?;
        let repaired = self.verify()?;
        let pre = self.record.pre;
        let head = self.head()?;
        if self.mode == Mode::Workspace && force == Force::No && head != Some(pre.head) {
            return Err(self.head_moved("the start", pre.head, head));
        }
        self.refuse_locked_index()?;
        let (mut scanner, tree) = self.full_snapshot(pre.tree)?;
        let index_tree = self.current_index_tree(pre.index_tree)?;
        let (base, changes, left) = self.ignored_undo_plan()?;
        // An ignored file that cannot be put back is no reason to restore again: a second
        // undo would replace what redo brings back.
        let ignored_to_do = changes.iter().any(|(key, change)| {
            *change == Change::Created
                || base
                    .entries
                    .get(key)
                    .is_some_and(|e| e.blob.is_some() || e.stat.kind == ignored::Kind::Dir)
        });
        if tree == pre.tree && index_tree == pre.index_tree && !ignored_to_do {
            return Ok(Restored {
                changed: Vec::new(),
                saved: None,
                displaced: Vec::new(),
                kept: Vec::new(),
                repository_missing: self.mode == Mode::StoreOnly,
                repaired,
                ignored: IgnoredRestore {
                    not_restored: changes.iter().map(|(k, _)| ignored::path_of(k)).collect(),
                    left,
                    ..IgnoredRestore::default()
                },
            });
        }
        let current = (tree, index_tree, head.unwrap_or(pre.head));
        let mut restored = self.replace(&mut scanner, current, &pre, Direction::Undo)?;
        restored.repaired = repaired;
        // Listed again: the restore of the recorded files may have moved ignored ones.
        let (base, changes, left) = self.ignored_undo_plan()?;
        restored.ignored = self.undo_ignored(&base, &changes)?;
        restored.ignored.left = left;
        Ok(restored)
    }

    /// Brings the working tree and index back to the pre-run state in the middle
    /// of the run, so that the agent can try the task again from the start.
    ///
    /// It restores as [`undo`](Self::undo) does (also when HEAD moved), but the
    /// run is not undone: it goes on, its next checkpoints follow the last one
    /// (which holds what the failed attempt left), and [`redo`](Self::redo) has
    /// nothing to bring back.
    pub fn revert_to_start(&mut self) -> Result<Restored, Error> {
        let restored = self.undo(Force::Yes)?;
        self.record.undone = false;
        self.record.redo = None;
        self.runs.write(&self.record)?;
        Ok(restored)
    }

    /// Brings back the working tree and index that the last [`undo`](Self::undo)
    /// replaced, after saving the current ones under `refs/harness/<id>/saved`.
    ///
    /// Refuses with [`Error::NothingToRedo`] unless the run's last restore was an
    /// undo; with [`Error::HeadMoved`] when HEAD moved since the undo and with
    /// [`Error::ChangedSinceUndo`] when the tree or index changed since the
    /// undo, both unless `force`.
    pub fn redo(&mut self, force: Force) -> Result<Restored, Error> {
        self.reload()?;
        let (Some(redo), true) = (self.record.redo, self.record.undone) else {
            return Err(Error::NothingToRedo {
                run: self.record.id.clone(),
            });
        };
        let repaired = self.verify()?;
        let head = self.head()?;
        if self.mode == Mode::Workspace && force == Force::No && head != Some(redo.head) {
            return Err(self.head_moved("the undo", redo.head, head));
        }
        self.refuse_locked_index()?;
        let pre = self.record.pre;
        // The state undo left: the pre-run state, unless something changed.
        let (mut scanner, tree) = self.full_snapshot(pre.tree)?;
        let index_tree = self.current_index_tree(pre.index_tree)?;
        if force == Force::No && (tree != pre.tree || index_tree != pre.index_tree) {
            return Err(Error::ChangedSinceUndo {
                run: self.record.id.clone(),
            });
        }
        let current = (tree, index_tree, head.unwrap_or(redo.head));
        let mut restored = self.replace(&mut scanner, current, &redo, Direction::Redo)?;
        restored.repaired = repaired;
        let (mut before, changes, left) = self.ignored_redo_plan()?;
        let done = ignored::put_back(&self.root, self.store.repo(), &before, &changes, false);
        // What this redo wrote is the run's for the next undo, up to now.
        before.redone_ns = Some(file_system_stamp_ns(&self.run_dir()));
        before.redone = changes.into_iter().map(|(key, _)| key).collect();
        ignored::write(&self.run_dir(), Which::Redo, &before)?;
        restored.ignored = IgnoredRestore::from(done);
        restored.ignored.left = left;
        Ok(restored)
    }

    /// Checks that the run's records in the workspace's `.git` (its refs, the
    /// tag `harness/<id>`, and the objects they point to) are as the store
    /// says, and puts back what a command removed or moved. Returns what was
    /// found; empty when all was intact.
    ///
    /// When `.git` is gone or no longer a repository, nothing can be put back:
    /// [`Tampering::RepositoryGone`] is returned (once), and from then on the
    /// session works from the store, so checkpoints, undo and redo go on.
    pub fn verify(&mut self) -> Result<Vec<Tampering>, Error> {
        self.wait_for_store()?;
        // Landlock does not cover modes: a command may have taken the owner's
        // access to the store, which nothing else here would read until undo.
        let mut outside = access::give_back_above(&self.root);
        outside.extend(self.store.give_back_access());
        let mut found = match self.verify_once() {
            // A command may only have taken the owner's access to part of `.git`.
            Err(error) => {
                if !self.give_back_git_access() {
                    return Err(error);
                }
                self.verify_once()?
            }
            Ok(found) => found,
        };
        if !self.git_access_unreported.is_empty() {
            let paths = std::mem::take(&mut self.git_access_unreported);
            found.insert(0, Tampering::AccessGivenBack { paths });
        }
        if !outside.is_empty() {
            found.insert(0, Tampering::OutsideAccessGivenBack { paths: outside });
        }
        Ok(found)
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

    /// [`Session::verify`], once.
    fn verify_once(&mut self) -> Result<Vec<Tampering>, Error> {
        if !self.ensure_repository()? {
            let first = !self.gone_reported;
            self.gone_reported = true;
            return Ok(if first {
                vec![Tampering::RepositoryGone]
            } else {
                Vec::new()
            });
        }
        // The workspace's own objects only: this handle must not see the store's.
        let workspace_odb =
            Repository::open(&self.root).context("open the workspace's repository")?;
        let mut found = Vec::new();
        // Shared by the refs: their chains share the pre-run state.
        let mut written = HashSet::new();
        for (name, full) in self.expected_refs() {
            // The workspace's ref names the copy without the hidden paths.
            let expected = self.public_in_store(full)?;
            // Every commit the ref leads to, not only its own: a `gc` after
            // the refs were deleted prunes the whole chain, and `git log` or
            // `git diff` of an older checkpoint needs all of it.
            let chain = store::chain(self.store.repo(), expected);
            if chain
                .iter()
                .any(|id| !store::has_commit(&workspace_odb, *id))
            {
                store::rewrite_chain(
                    self.store.repo(),
                    &workspace_odb,
                    expected,
                    &mut written,
                    Packer::for_workspace(&self.root),
                )?;
                found.push(Tampering::ObjectsRestored { name: name.clone() });
            }
            let actual = workspace_odb.refname_to_id(&name).ok();
            if actual != Some(expected) {
                // A damaged loose ref is a file libgit2 will not overwrite.
                if actual.is_none() {
                    let loose = workspace_odb.path().join(&name);
                    if loose.is_file() {
                        std::fs::remove_file(&loose).map_err(|e| Error::io(&loose, e))?;
                    }
                }
                workspace_odb
                    .reference(&name, expected, true, "harness: restored from the store")
                    .context(format_args!("restore {name}"))?;
                found.push(Tampering::RefRestored {
                    name,
                    found: actual.map(CommitId),
                });
            }
        }
        Ok(found)
    }

    /// Commits what the run changed onto the current branch as one commit,
    /// whose message names the task and the run, and updates the index to
    /// match (the working tree already does).
    ///
    /// Only the run's changes are committed: uncommitted work that was there
    /// before the run (`allow_dirty`) stays uncommitted, and commits made since
    /// the run are kept (the changes are merged onto HEAD). Author and
    /// committer are the user's `user.name` and `user.email`, or
    /// `harness <harness@localhost>` when those are not configured. Commit
    /// hooks do not run.
    ///
    /// # Errors
    ///
    /// [`Error::NothingToAccept`] when the working tree is in the pre-run state,
    /// [`Error::AcceptConflict`] when the run's changes overlap other changes,
    /// [`Error::IndexLocked`] while another git command holds the index.
    pub fn accept(&mut self) -> Result<Accepted, Error> {
        self.wait_for_store()?;
        self.reload()?;
        self.refuse_locked_index()?;
        let pre = self.record.pre;
        let (scanner, now) = self.full_snapshot(self.last_tree)?;
        let too_large = scanner.too_large();
        if !too_large.is_empty() {
            return Err(Error::TooLarge {
                run: self.record.id.clone(),
                paths: too_large,
            });
        }
        if now == pre.tree {
            return Err(Error::NothingToAccept {
                run: self.record.id.clone(),
            });
        }
        let head = self
            .repo
            .head()
            .and_then(|h| h.peel_to_commit())
            .context("read HEAD's commit")?;
        let tree = self.merge(pre.tree, head.tree_id(), now)?;
        let index_tree = self.merge(pre.tree, state::index_tree(&self.repo)?, now)?;
        let signature =
            state::user_signature(&self.repo.config().context("read the configuration")?)?;
        let message = accept_message(&self.record);
        let tree = self.repo.find_tree(tree).context("find the merged tree")?;
        let commit = self
            .repo
            .commit(None, &signature, &signature, &message, &tree, &[&head])
            .context("commit the run's changes")?;
        // The session writes into the store: the commit the user's branch takes, and
        // what their index names, go into the workspace whole (this is the user's own
        // commit), before the branch moves.
        let own = Repository::open(self.repo.path()).context("open the workspace's repository")?;
        fill::fill_workspace(&self.repo, &own, commit, false, Some(head.tree_id()))?;
        fill::fill_tree(&self.repo, &own, index_tree, Some(head.tree_id()))?;
        self.repo
            .head()
            .and_then(|mut branch| {
                branch.set_target(
                    commit,
                    &format!("commit: {}", message.lines().next().unwrap_or_default()),
                )
            })
            .context("move the branch to the run's commit")?;
        let mut index =
            git2::Index::open(&state::index_path(self.repo.path())).context("read the index")?;
        let index_tree = self
            .repo
            .find_tree(index_tree)
            .context("find the new index")?;
        index.read_tree(&index_tree).context("load the new index")?;
        index.write().context("write the index")?;
        self.record.accepted = Some(commit);
        self.runs.write(&self.record)?;
        Ok(Accepted {
            commit: CommitId(commit),
            message,
        })
    }

    /// Saves the current state (tree, index tree, HEAD) together with the
    /// ignored files restoring `target` would displace, records the restore,
    /// then restores `target`.
    fn replace(
        &mut self,
        scanner: &mut Scanner,
        (tree, index_tree, head): (Oid, Oid, Oid),
        target: &State,
        direction: Direction,
    ) -> Result<Restored, Error> {
        let plan = restore::plan(&self.repo, &self.root, tree, target.tree)?;
        self.give_back_access_to_change(&plan)?;
        // Only an undo goes back to before the run; what redo removes, the run removed.
        let from_before = match direction {
            Direction::Undo => {
                let started = crate::record::time_of(self.record.started_ms);
                plan.removed_from_before(&self.root, started)
            }
            Direction::Redo => Vec::new(),
        };
        let displaced = plan.displaced.clone();
        let saved_tree = state::with_files(&self.repo, &self.root, tree, &displaced)?;
        let message = format!("state before {direction} of run {}", self.record.id);
        let saved = self.save(saved_tree, index_tree, head, &message)?;
        // Recorded before any file changes, so that a restore cut short can
        // still be redone.
        if direction == Direction::Undo {
            self.record.redo = Some(saved);
        }
        self.record.undone = direction == Direction::Undo;
        self.runs.write(&self.record)?;
        let with_index = self.mode == Mode::Workspace;
        if with_index {
            // The index names trees git trusts to be there (`git commit` reuses them):
            // the recorded index's, which the session wrote into the store, go into the
            // workspace whole. Its files were the user's index's, so in the workspace already.
            let own =
                Repository::open(self.repo.path()).context("open the workspace's repository")?;
            fill::fill_tree(&self.repo, &own, target.index_tree, None)?;
        }
        let mut changed = restore::apply(scanner, &self.root, plan, target, with_index)?;
        let kept = self.put_back_ignored(scanner, saved_tree, from_before)?;
        changed.retain(|path| !kept.contains(path));
        Ok(Restored {
            changed,
            saved: Some(CommitId(saved.commit)),
            displaced,
            kept,
            repository_missing: !with_index,
            repaired: Vec::new(),
            ignored: IgnoredRestore::default(),
        })
    }

    /// Writes back, as they were before the restore (from `saved_tree`), the files among
    /// `from_before` (files that were there before the run, which the restore removed)
    /// that the restored ignore rules ignore: files git ignored when the run began, made
    /// visible since by a command's change to the rules. Returns them, sorted. A file that
    /// is not ignored now (a tracked one a command moved) stays removed.
    fn put_back_ignored(
        &self,
        scanner: &mut Scanner,
        saved_tree: Oid,
        from_before: Vec<PathBuf>,
    ) -> Result<Vec<PathBuf>, Error> {
        if from_before.is_empty() {
            return Ok(Vec::new());
        }
        // A handle of its own: the rules were just rewritten, and a cached reading of
        // them could be stale.
        let fresh = Repository::open(self.repo.path()).context("open the repository")?;
        if fresh.is_bare() {
            fresh
                .set_workdir(&self.root, false)
                .context("use the workspace as the working tree")?;
        }
        let mut kept = Vec::new();
        for path in from_before {
            if fresh
                .is_path_ignored(&path)
                .context(format_args!("check whether {} is ignored", path.display()))?
            {
                kept.push(path);
            }
        }
        if !kept.is_empty() {
            scanner.checkout(saved_tree, &kept)?;
        }
        kept.sort();
        Ok(kept)
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

    /// Saves a state on the chain of `refs/harness/<id>/saved`.
    fn save(
        &mut self,
        tree: Oid,
        index_tree: Oid,
        head: Oid,
        message: &str,
    ) -> Result<State, Error> {
        let previous = self.store.find_ref(&self.run_ref("saved"));
        let saved = state::record(&self.repo, tree, index_tree, head, message, previous)?;
        self.set_run_ref("saved", saved.commit, true, self.last_tree, message)?;
        Ok(saved)
    }

    /// The three-way merge of `theirs` and `ours` from `base`.
    fn merge(&self, base: Oid, ours: Oid, theirs: Oid) -> Result<Oid, Error> {
        let find = |id| self.repo.find_tree(id).context("find a tree to merge");
        let mut merged = self
            .repo
            .merge_trees(&find(base)?, &find(ours)?, &find(theirs)?, None)
            .context("merge the run's changes")?;
        if merged.has_conflicts() {
            let mut conflicted: Vec<PathBuf> = merged
                .conflicts()
                .context("read the merge's conflicts")?
                .filter_map(Result::ok)
                .filter_map(|c| c.our.or(c.their).or(c.ancestor))
                .map(|entry| paths::from_bytes(&entry.path))
                .collect();
            conflicted.sort();
            return Err(Error::AcceptConflict {
                run: self.record.id.clone(),
                paths: conflicted,
            });
        }
        merged
            .write_tree_to(&self.repo)
            .context("write the merged tree")
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

    /// The public copy of `full` (see [`Publisher`]), made whole in the store, so that
    /// [`Session::verify`] can put it back from there.
    fn public_in_store(&mut self, full: Oid) -> Result<Oid, Error> {
        let own = Repository::open(self.repo.path()).context("open the workspace's repository")?;
        let odb = own.odb().context("open the workspace's objects")?;
        let public = self.publisher.commit(&self.repo, &odb, full)?;
        if public != full && self.publisher.note_in_store(public) {
            // What differs from the full state is the paths to the hidden files.
            let base = self
                .repo
                .find_commit(full)
                .context("find a recorded state")?
                .tree_id();
            fill::fill_workspace(&self.repo, self.store.repo(), public, true, Some(base))?;
        }
        Ok(public)
    }

    /// The refs the workspace's repository should have for this run, and
    /// the commits the store says they point to.
    fn expected_refs(&self) -> Vec<(String, Oid)> {
        let pre = self.record.pre.commit;
        let mut refs = vec![(self.run_ref("pre"), pre), (tag_ref(&self.record.id), pre)];
        for leaf in ["checkpoints", "saved"] {
            let name = self.run_ref(leaf);
            if let Some(commit) = self.store.find_ref(&name) {
                refs.push((name, commit));
            }
        }
        refs
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

    /// Gives the owner back access to everything in the workspace's `.git`
    /// (see [`access`]); true if and only if anything changed, which is kept
    /// to report.
    fn give_back_git_access(&mut self) -> bool {
        let given = give_back_git_access(&self.root);
        let changed = !given.is_empty();
        self.note_git_access(given);
        changed
    }

    /// Keeps `given`, paths in `.git` whose access was given back, for
    /// [`Session::access_given_back`] and for the next [`Session::verify`] to
    /// report.
    fn note_git_access(&mut self, given: Vec<PathBuf>) {
        self.access_given_back.extend(given.iter().cloned());
        self.git_access_unreported.extend(given);
    }

    /// Gives the owner back what a restore by `plan` needs: to change every
    /// directory it changes, and to read every displaced file it saves, so that
    /// a directory a command made read-only (`chmod 555 src`) does not stop
    /// the restore halfway. A directory that is not there yet is made by it.
    fn give_back_access_to_change(&mut self, plan: &restore::Plan) -> Result<(), Error> {
        let directories = plan.directories();
        let needs = directories
            .iter()
            .map(|dir| (dir.as_path(), access::Need::Change))
            .chain(
                plan.displaced
                    .iter()
                    .map(|file| (file.as_path(), access::Need::Read)),
            );
        for (path, need) in needs {
            if access::give_back(&self.root, path, need)
                .map_err(|e| Error::io(&self.root.join(path), e))?
            {
                self.access_given_back.insert(path.to_path_buf());
            }
        }
        Ok(())
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

/// Which way a restore goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    /// Back to the pre-run state.
    Undo,
    /// Back to the state the last undo replaced.
    Redo,
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Direction::Undo => "undo",
            Direction::Redo => "redo",
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
    let record = record::new_record(
        id.clone(),
        options.task.clone(),
        options.model.clone(),
        started,
        pre,
        dirty,
    );
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

/// Now, as the file system holding `dir` stamps a file it writes.
///
/// The kernel stamps a file's times from a clock it reads once a tick, a few
/// milliseconds behind the one [`SystemTime::now`] reads, and some file
/// systems round them down further: a file a command writes just after a run
/// starts can carry a time before the start, and would not be counted as
/// changed during the run. A file written here and read back carries the
/// stamp anything written later is at least at. If it cannot be written,
/// the clock's own now is the best left.
fn file_system_now(dir: &Path) -> SystemTime {
    let now = SystemTime::now();
    let stamped = tempfile::Builder::new()
        .prefix("harness-clock-")
        .tempfile_in(dir)
        .and_then(|probe| last_change(&probe.as_file().metadata()?));
    match stamped {
        Ok(stamped) => stamped.min(now),
        Err(_) => now,
    }
}

/// The change time (ns) of a file written in `dir` now: past that of every file written
/// before it (the kernel's file clock only goes forward). The clock's own now when no
/// file can be written there, which is later still.
fn file_system_stamp_ns(dir: &Path) -> i64 {
    let now = SystemTime::now();
    let stamped = tempfile::Builder::new()
        .prefix("harness-clock-")
        .tempfile_in(dir)
        .and_then(|probe| last_change(&probe.as_file().metadata()?))
        .unwrap_or(now);
    stamped
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
        })
}

/// What undo or redo does to ignored files: the state it puts back, the changes of the
/// run (or the undo) that bring it, and the paths left as changed after
/// ([`IgnoredRestore::left`]).
type IgnoredPlan = (Manifest, Vec<(String, Change)>, Vec<PathBuf>);

/// When the file of `metadata` last changed: on Unix its inode's change time
/// (ctime), which the kernel sets on every write, create, rename or chmod and
/// no program can set back; elsewhere its modification time.
pub(crate) fn last_change(metadata: &std::fs::Metadata) -> std::io::Result<SystemTime> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // Before 1970 only with a clock set wrong: the earliest time, never "during the run".
        let seconds = u64::try_from(metadata.ctime()).unwrap_or(0);
        let nanos = u32::try_from(metadata.ctime_nsec()).unwrap_or(0);
        Ok(std::time::UNIX_EPOCH + std::time::Duration::new(seconds, nanos))
    }
    #[cfg(not(unix))]
    metadata.modified()
}

/// Removes what a failed begin may have created.
fn delete_refs(repo: &Repository, id: &RunId) {
    let prefix = run_ref(id, "");
    let ignored = [Which::Start, Which::Check, Which::Redo].map(|w| ignored::ref_name(&prefix, w));
    for name in [run_ref(id, "pre"), tag_ref(id)].into_iter().chain(ignored) {
        // Best effort: a ref that was not created is not there to delete.
        if let Ok(mut reference) = repo.find_reference(&name) {
            let _ = reference.delete();
        }
    }
}

/// True if and only if git ignores `path`, or would once it exists.
///
/// libgit2 asks about the path, then about each of its directories as a
/// directory whether or not it exists yet, so that a pattern such as
/// `build/`, which matches only directories, covers `build/new.o` before
/// `build/` is made, and a file below an excluded directory is ignored even
/// where a later rule (`!build/keep.cfg`) names it, as git has it.
fn is_ignored_even_if_missing(repo: &Repository, path: &Path) -> Result<bool, Error> {
    repo.is_path_ignored(path)
        .context(format_args!("check whether git ignores {}", path.display()))
}

/// `path` as UTF-8 text when it is relative and made of plain names only
/// (no `..`, `.`, root or prefix) and not inside `.git`.
fn plain_relative(path: &Path) -> Option<String> {
    let mut components = path.components().peekable();
    components.peek()?;
    let plain = path
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    let first = path.components().next()?;
    if !plain || first.as_os_str() == ".git" {
        return None;
    }
    path.to_str().map(str::to_owned)
}

fn run_ref(id: &RunId, leaf: &str) -> String {
    format!("refs/harness/{id}/{leaf}")
}

fn tag_ref(id: &RunId) -> String {
    format!("refs/tags/harness/{id}")
}

/// The number and label of a checkpoint commit's summary line.
fn parse_checkpoint_summary(summary: &str) -> Option<(u32, String)> {
    let (number, label) = summary.strip_prefix("checkpoint ")?.split_once(':')?;
    // git trims the space after the colon when the label is empty.
    Some((number.parse().ok()?, label.trim_start().to_string()))
}

/// The message of the commit accept makes.
fn accept_message(record: &RunRecord) -> String {
    const SUBJECT_CHARS: usize = 72;
    let task = record.task.trim();
    let first_line = task.lines().next().unwrap_or_default();
    let mut subject: String = first_line.chars().take(SUBJECT_CHARS).collect();
    if subject.len() < first_line.len() {
        subject.push('…');
    }
    if subject.is_empty() {
        subject = format!("Changes of harness run {}", record.id);
    }
    let mut message = format!("{subject}\n\n");
    if !task.is_empty() {
        message.push_str(&format!("Task: {task}\n\n"));
    }
    message.push_str(&format!("Harness-Run: {}\n", record.id));
    if !record.model.is_empty() {
        message.push_str(&format!("Harness-Model: {}\n", record.model));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! summaries {
        ($($name:ident: $summary:expr => $parsed:expr;)*) => {$(
            #[test]
            fn $name() {
                let parsed: Option<(u32, &str)> = $parsed;
                assert_eq!(
                    parse_checkpoint_summary($summary),
                    parsed.map(|(n, l)| (n, l.to_string()))
                );
            }
        )*};
    }

    summaries! {
        labelled: "checkpoint 3: edit src/lib.rs" => Some((3, "edit src/lib.rs"));
        label_with_colon: "checkpoint 12: run: cargo test" => Some((12, "run: cargo test"));
        empty_label: "checkpoint 1: " => Some((1, ""));
        empty_label_trimmed: "checkpoint 1:" => Some((1, ""));
        not_a_checkpoint: "pre-run state of run x" => None;
        no_number: "checkpoint x: y" => None;
        no_colon: "checkpoint 4" => None;
    }

    fn record(task: &str, model: &str) -> RunRecord {
        let oid = Oid::ZERO_SHA1;
        let state = State {
            commit: oid,
            tree: oid,
            index_tree: oid,
            head: oid,
        };
        record::new_record(
            "20250101-000000-000".parse().unwrap(),
            task.into(),
            model.into(),
            SystemTime::UNIX_EPOCH,
            state,
            false,
        )
    }

    macro_rules! messages {
        ($($name:ident: $task:expr, $model:expr => $message:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(accept_message(&record($task, $model)), $message);
            }
        )*};
    }

    messages! {
        short_task: "Fix the failing test", "qwen3" =>
            "Fix the failing test\n\nTask: Fix the failing test\n\n\
             Harness-Run: 20250101-000000-000\nHarness-Model: qwen3\n";
        multi_line_task: "Fix it\nin src/", "" =>
            "Fix it\n\nTask: Fix it\nin src/\n\nHarness-Run: 20250101-000000-000\n";
        no_task: "  ", "m" =>
            "Changes of harness run 20250101-000000-000\n\n\
             Harness-Run: 20250101-000000-000\nHarness-Model: m\n";
        exactly_72: &"x".repeat(72), "" =>
            format!("{x}\n\nTask: {x}\n\nHarness-Run: 20250101-000000-000\n", x = "x".repeat(72));
        long_task: &"y".repeat(73), "" =>
            format!("{}…\n\nTask: {}\n\nHarness-Run: 20250101-000000-000\n", "y".repeat(72), "y".repeat(73));
    }
}
