//! Git as the undo button for a coding agent, with no user work ever lost.
//!
//! Before the agent's first edit, [`Session::begin`] checks that the working
//! tree is clean (or, with `allow_dirty`, snapshots the uncommitted work) and
//! records the pre-run state under the harness's own refs. After each step,
//! [`Session::checkpoint`] snapshots the working tree. [`Session::diff`] shows
//! what the run changed, [`Session::undo`] brings everything back,
//! [`Session::redo`] brings the agent's work back again, and
//! [`Session::accept`] commits it.
//!
//! ```
//! use harness_undo::{BeginOptions, DiffTarget, Force, Outcome, Session};
//! # let dir = tempfile::tempdir()?;
//! # let workspace = dir.path();
//! # let state = tempfile::tempdir()?; // the store goes under $XDG_STATE_HOME
//! # unsafe { std::env::set_var("XDG_STATE_HOME", state.path()) };
//! # std::fs::write(workspace.join("notes.txt"), "hello\n")?;
//!
//! // A fresh directory: `init` commits its files first, so there is a state to go back to.
//! let options = BeginOptions { init: true, task: "greet louder".into(), ..Default::default() };
//! let mut session = Session::begin(workspace, options)?;
//!
//! std::fs::write(workspace.join("notes.txt"), "HELLO\n")?; // the agent's step
//! let checkpoint = session.checkpoint("edit notes.txt")?.expect("a file changed");
//! assert_eq!(checkpoint.number, 1);
//!
//! let diff = session.diff(DiffTarget::WorkingTree)?;
//! assert_eq!((diff.additions(), diff.deletions()), (1, 1));
//! session.finish(Outcome::Succeeded, 1)?;
//!
//! // Later, maybe from another process: open the newest run and undo it.
//! let run = Session::latest(workspace)?.expect("one run").id;
//! let mut session = Session::open(workspace, &run)?;
//! session.undo(Force::No)?;
//! assert_eq!(std::fs::read_to_string(workspace.join("notes.txt"))?, "hello\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What begin records
//!
//! 1. The workspace must be the top level of a git repository with at least
//!    one commit. Otherwise begin fails with [`Error::NotARepository`] or
//!    [`Error::NoCommits`], unless `init`: then it creates the repository
//!    and/or commits every file that is not ignored, as
//!    `harness <harness@localhost>`, on the current branch.
//! 2. A tree with staged, modified, deleted or untracked (not ignored) files
//!    is dirty. A dirty tree fails with [`Error::DirtyTree`], listing up to 20
//!    paths and the count, unless `allow_dirty`.
//! 3. The pre-run state is HEAD itself when the tree is clean. When it is
//!    dirty, it is a snapshot commit of the working tree (untracked files
//!    included) whose parents are HEAD and a commit of the index, like a
//!    `git stash` entry, so that undo restores both exactly.
//! 4. It is kept by the ref `refs/harness/<id>/pre` and the lightweight tag
//!    `harness/<id>` (pointing to its copy without hidden paths; see "What the
//!    workspace's `.git` holds"): `git diff harness/<id>` shows what the run changed. Plain
//!    git compares only paths in the index, so a file the run created shows
//!    once added (`git add -N <file>`), and after a dirty start, a file that was
//!    untracked shows as deleted until added; [`Session::diff`] has neither
//!    blind spot. Run ids ([`RunId`]) sort by time and are unique.
//! 5. Every object of the pre-run state (its commits, trees and blobs, and
//!    HEAD's commit and tree, not the history) is copied into the harness's
//!    store, a bare repository outside the workspace under
//!    `$XDG_STATE_HOME/harness/` (default `~/.local/state/harness/`), one per
//!    workspace, named by a hash of its path and recording the path. The
//!    store has its own objects, never alternates into the workspace, so no
//!    `gc` there can prune them.
//! 6. The metadata ([`RunInfo`]) goes to `harness/runs/<id>/run.json` in the
//!    store; the directory also takes the agent's transcript
//!    ([`Session::transcript_path`]). [`Session::runs`] lists the runs.
//! 7. A run that cannot go on before its first checkpoint (its model server cannot be
//!    asked) is forgotten with [`Session::discard`]: its refs, tag and directory go, as
//!    though begin had not run.
//!
//! Begin, checkpoint and diff never change the user's branch, HEAD, index,
//! stash list or files. The clean-tree check runs `git status` (or libgit2's
//! status where git is not installed) without taking the index lock.
//!
//! # What the workspace's `.git` holds
//!
//! A session writes what it records (snapshots, checkpoints, saved states, the index's
//! trees) into the store only: the workspace's object database is read, never written,
//! by the recording. The refs of a run in the workspace (`refs/harness/<id>/…` and the
//! tag `harness/<id>`) point to *public copies* of the store's commits, written into
//! the workspace whole:
//!
//! 1. a path the caller hides ([`BeginOptions::hidden`], [`Session::hide`]; deny rules,
//!    `.env` files, keys), or a directory it hides, is left out of the copy, or, where
//!    the HEAD the run began on has a file at that path, stands as HEAD has it (the
//!    workspace holds that already);
//! 2. everything else is as recorded, with the same author, time and message (plus one
//!    line saying hidden paths are left out), so a run that touches no hidden path has
//!    the same commits in the workspace and in the store;
//! 3. [`Session::verify`] puts back these copies, never the store's full states.
//!
//! So `git show harness/<id>:.env`, `git cat-file --batch-all-objects`, `git log --all
//! -p`, the reflogs and the packs in `.git` hold no byte of a hidden file the harness
//! recorded, and `git diff harness/<id>` shows the run's changes but for hidden paths
//! (a hidden file the index tracks and HEAD lacks shows as added). Undo and redo read
//! the store, so hidden files come back byte for byte. The private index the scanner
//! keeps while a session runs, which names each recorded file with a hash of its
//! content, is in the store too. What stays in `.git/harness/` is the copy of the user's
//! index the clean-tree check runs `git status` on, whose untracked cache names untracked
//! files (names, never content or hashes of it). Objects a harness before this one wrote
//! into `.git` stay there until git prunes them: delete the old runs' refs (`harness
//! runs --prune`), then `git gc --prune=now`. Accept commits the run's changes to the user's branch,
//! hidden files among them if the run changed one (only where commands could reach it,
//! under the tier `none`): that commit is the user's.
//!
//! # Checkpoints
//!
//! A checkpoint is a snapshot commit of the working tree, chained on the
//! previous one under `refs/harness/<id>/checkpoints`, built in a private
//! index and never in the user's. With [`Tracking::Watch`] (the default) the
//! kernel's change notes (inotify, on Linux) say which paths to look at, so a
//! checkpoint costs what changed rather than the size of the tree; the notes'
//! limits are listed on [`Tracking::Watch`]. Undo, redo and accept always scan
//! the whole tree. Each checkpoint and saved state is copied to the store too.
//!
//! # When a command changes `.git`
//!
//! The store is the authority: undo and redo read the run and its objects
//! from there. [`Session::verify`] (the agent calls it after each command)
//! puts back the run's refs and objects a command deleted, moved or pruned in
//! the workspace, and reports each as a [`Tampering`]. When `.git` is gone
//! or no longer a repository, the session works on the working tree alone:
//! checkpoints go on into the store, and undo and redo restore the files
//! (tracked, staged and untracked work) but not the index, HEAD or history,
//! which [`Restored::repository_missing`] says.
//!
//! # Undo and redo
//!
//! [`Session::undo`] first saves the working tree and index as they are (a
//! commit under `refs/harness/<id>/saved`, chained, so no state is ever
//! unreachable), then makes them what they were before the run: changed files
//! rewritten, created files removed, deleted files back, executable bits and
//! symlinks restored, and the index as recorded. [`Session::redo`] does the
//! same in the other direction. Both refuse when HEAD moved (a commit, reset or
//! branch switch) unless forced, and neither ever moves HEAD or a branch.
//!
//! Exactly what is restored:
//!
//! - the content of every file git would record, written the way `git
//!   checkout` writes it (in a repository that converts line endings through
//!   `core.autocrlf` or `.gitattributes`, that is with the converted endings,
//!   as `git stash` would restore them). The `.gitattributes` that count are
//!   the restored state's, as git reads them from the index it checks out: a
//!   `.gitattributes` a command wrote has no say in how the user's files come
//!   back;
//! - the kind (file or symlink) and the executable bit, the only permission
//!   git records; other permission bits of a rewritten file follow git's
//!   defaults;
//! - the index's entries (path, mode, content); flags such as intent-to-add
//!   or assume-unchanged are not recorded.
//!
//! **Ignored files are put back too**, though no snapshot holds them: commands
//! write where git does not look, and the user's own tools run what they find there
//! later (`__pycache__/*.pyc`, `.venv/bin/python3`, `*.pth` in `site-packages`,
//! `node_modules/.bin`). Begin lists every ignored entry (stat data, change time
//! included) and saves, in the store, the content of each file of at most
//! [`LARGEST_SAVED_IGNORED_FILE`] (4 MiB), smallest first, up to
//! [`IGNORED_SAVE_BUDGET`] (64 MiB) and [`MOST_SAVED_IGNORED`] (20,000 files).
//! [`Session::ignored_changes`] lists what differs since; undo removes what the run
//! made and writes back what it changed or deleted, never through a link a command
//! left; redo brings back what undo replaced (within the same budget); and
//! [`Session::reset_ignored`], called before each verification, does the same against
//! the start plus what earlier verifications wrote, so that a check runs the code in
//! the diff. What was too large to save and was changed is named
//! ([`IgnoredChanges::not_restorable`], [`Restored::ignored`],
//! [`Session::unrecorded_ignored_changes`]) and left as the commands left it. The
//! module `ignored` says how, and why these numbers. Ignored files the file tools write
//! are saved first by [`Session::protect`] and covered by the snapshots like tracked
//! ones. An ignored file standing where undo must put back a recorded one (an ignored
//! file where a recorded directory goes, or ignored files in a directory where a
//! recorded file goes) is removed as git's checkout would, after being saved with the
//! state undo replaces ([`Restored::displaced`]), so redo puts it back. Empty
//! directories, the contents of nested repositories and submodules are not recorded.
//!
//! **Files larger than [`LARGEST_RECORDED_FILE`] (64 MiB) that the run wrote
//! are left out** of its snapshots, as if they were not there: recording one
//! holds it in memory, and a command makes one of any size in a moment.
//! Undo puts back what was at such a path before the run and leaves a new
//! one as it is; one standing where undo puts a recorded file back cannot be
//! saved first, so undo refuses ([`Error::TooLargeToSave`]) until it is moved
//! away, as [`Session::protect`] refuses for an ignored file that large.
//! Redo cannot bring one back, and accept refuses while one is there
//! ([`Error::TooLarge`]). [`Session::too_large`] names them. The pre-run
//! state of a dirty tree holds the user's files at any size.
//!
//! **Modes a command changed are not restored**, but for the executable bit:
//! git records no other. Where a command took the owner's access (`chmod 000
//! src`), checkpoints, undo and redo give back what they need, on what the
//! harness's user owns and never through a symlink: read on a file, read and
//! search on a directory they could not read, write on a directory a restore
//! changes, and everything in `.git`. [`Session::access_given_back`] names
//! the paths; in `.git` they are a [`Tampering::AccessGivenBack`] too.
//!
//! # Chains of follow-ups
//!
//! A run begun with [`BeginOptions::follows`] follows up an earlier one: it starts from
//! the tree that run left (dirty with its work, which is not refused) and records the tree
//! that run left beside its own pre-run state, so that what differs between them is the
//! user's own edits ([`RunInfo::user_edits`]), never the follow-up's work. The runs linked
//! so are a [`Chain`]: [`Chain::undo`] steps back its last run not undone, and refuses
//! ([`Error::UserEdits`]) rather than take the user's edits with it; [`Chain::undo_all`]
//! undoes every run, newest first, back to the state before the first, byte for byte, the
//! user's edits saved with the undo of the run before them; [`Chain::redo`] comes forward a
//! run at a time; [`Chain::accept`] commits the chain as one commit naming its runs; and
//! [`Chain::steps`] gives the diff of each run and of the user's edits apart. A follow-up
//! of a run accepted, undone, followed already, in progress or begun on another HEAD is
//! refused before anything is recorded.
//!
//! A run is *in progress* while a process has it open: [`Session::begin`] marks it with
//! an advisory lock (`flock`) on a file in its directory, held for the session's life,
//! and [`Session::open`] with a shared one; the kernel drops the mark with the process.
//! [`prune`] and [`remove_store`] never remove a run in progress ([`is_in_progress`]);
//! a run whose process died is removed like any other.
//!
//! Nothing lives only in the process: a run whose process died (between
//! checkpoints, or in the middle of one) is opened by id with
//! [`Session::open`] and undone like any other. A restore that finds the
//! index locked by another git command refuses before it changes anything.
//!
//! # Platform behavior
//!
//! Change notes exist on Linux only; elsewhere every checkpoint scans the
//! whole tree. Paths are handled as bytes on Unix; the crate is tested on
//! Linux.
//!
//! # Where each guarantee is
//!
//! A [`Session`] is in `session/`, one file per operation (`session/mod.rs` lists them);
//! the steps they take are the modules beside it.
//!
//! - **Where a snapshot is stored**: the store, a bare repository outside the workspace,
//!   is `store.rs` (the copy of a state into it runs in a thread there); a state's
//!   commits are made by `state.rs`; `fill.rs` writes into the workspace's `.git` the
//!   objects its refs need. The run's metadata and directory: `record.rs`; run ids, and
//!   parsing one with its own error, `run_id/`.
//! - **Where the pre-run state is recorded**: `session/begin.rs`, after the clean-tree
//!   check of `clean.rs`; the workspace's copy without hidden paths is `public.rs`.
//! - **Checkpoints**: `session/checkpoint.rs`, over the scan of the working tree in
//!   `scan.rs` and the change notes of `watch.rs`; the largest file recorded is in
//!   `limits.rs`; `session/protect.rs` saves an ignored file a file tool is about to
//!   write.
//! - **Chains of follow-ups**: `session/chain.rs` (the checks of a follow-up's begin, and
//!   the chain's undo, redo, accept and steps over each run's own).
//! - **Where undo restores**: `session/undo.rs` and `session/redo.rs`, through
//!   `session/replace.rs` (the state replaced is saved first), which has `restore.rs`
//!   plan and write the files and the index.
//! - **Where ignored files are saved and restored**: `ignored/` (`list.rs` lists what
//!   git ignores, `save.rs` saves within the budget, `compare.rs` tells what changed and
//!   whose change it is, `put_back.rs` puts it back), driven by
//!   `session/ignored_changes.rs`, `session/reset.rs` (around a verification) and
//!   undo and redo. The file system's clock, which tells the run's changes from later
//!   ones: `clock.rs`.
//! - **Where the store is made private**: `private.rs` (directories 0700, files 0600),
//!   applied where `store.rs`, `record.rs` and `scan.rs` make them, and to every store
//!   by [`make_stores_private`] in `housekeeping.rs`.
//! - **Where a live run is protected from pruning**: `live.rs` (the `flock` a session
//!   holds), checked by [`prune`] and [`remove_store`] in `housekeeping.rs`.
//! - **What a command changed in `.git`**: put back by `session/verify.rs`; the access a
//!   command took (`chmod`) is given back by `access.rs`.
//! - **Diff, accept, the end of a run**: `diff.rs` (read from `session/diff.rs`),
//!   `session/accept.rs`, `session/finish.rs` (and [`Session::discard`]). Errors:
//!   `error.rs`; paths as bytes: `paths.rs`; opening the repository: `open.rs`.
//!
//! # What this crate does not do
//!
//! It does not isolate the agent: a command the agent runs can still change
//! `.git` itself (the store then puts back what undo needs), and, running as
//! the user, can reach the store too; only kernel isolation keeps it out.
//! It never pushes, never runs git hooks, and never deletes a recorded run's
//! refs; the tags `harness/<id>` are ordinary tags, which `git push --tags`
//! would send.

mod access;
mod clean;
mod clock;
mod diff;
mod error;
mod fill;
mod hidden;
mod housekeeping;
mod ignored;
mod limits;
mod live;
mod open;
mod paths;
mod private;
mod public;
mod record;
mod restore;
mod run_id;
mod scan;
mod session;
mod state;
mod store;
mod watch;

pub use diff::{Diff, FileDiff, FileMode, FileStatus};
pub use error::Error;
pub use hidden::Hidden;
pub use housekeeping::{
    Prune, Pruned, StoreInfo, is_in_progress, make_stores_private, prune, remove_store, store_size,
    stores, stores_dir,
};
pub use ignored::{
    IGNORED_SAVE_BUDGET, LARGEST_SAVED_IGNORED_FILE, MOST_LISTED_IGNORED, MOST_SAVED_IGNORED,
};
pub use limits::LARGEST_RECORDED_FILE;
pub use record::{CommitId, Outcome, RunInfo};
pub use run_id::{ParseRunIdError, RunId};
pub use scan::Tracking;
pub use session::accept::Accepted;
pub use session::begin::BeginOptions;
pub use session::chain::{Chain, Step, StepOf};
pub use session::diff::DiffTarget;
pub use session::ignored_changes::{IgnoredChange, IgnoredChanges};
pub use session::replace::{Force, IgnoredRestore, Restored};
pub use session::verify::Tampering;
pub use session::{Checkpoint, Session};

/// Where the working tree at `root` holds, or may come to hold, a submodule's
/// `.git` (a file naming its git directory, or the directory itself): `path/.git`
/// for each submodule the index records, checked out or not. The user's git reads
/// that submodule's configuration through it, and a configuration can name
/// programs to run (`core.fsmonitor`), so a confining tier keeps these as they are
/// (`harness_exec::Confinement::protect`).
///
/// # Errors
///
/// The errors of opening the repository at `root` (its top) and reading its index.
pub fn submodule_git_paths(root: &std::path::Path) -> Result<Vec<std::path::PathBuf>, Error> {
    let (repo, root) = open::open(root)?;
    Ok(clean::submodules(&repo)?
        .into_iter()
        .map(|path| root.join(path).join(".git"))
        .collect())
}

/// Where the git configuration of the repository at `root` has git take programs from,
/// besides its git directories: the hooks directory `core.hooksPath` names (relative to
/// the working tree's top, as git takes it) and the file system monitor `core.fsmonitor`
/// names when it is a program and not a yes or no. The user's git runs what it finds
/// there as the user: the `post-index-change` hook at every `git status` that writes the
/// index, which a shell prompt may run after every command. A confining tier keeps these
/// as they are (`harness_exec::Confinement::protect`), for where they lie where commands
/// write: husky's `.husky/_`, a team's `.githooks`, `~/.githooks` inside `--writable ~`.
///
/// A hooks directory that is the working tree's top or holds it is left out: keeping it
/// would keep the whole workspace from commands.
///
/// # Errors
///
/// The errors of opening the repository at `root` (its top) and reading its
/// configuration.
pub fn configured_program_paths(root: &std::path::Path) -> Result<Vec<std::path::PathBuf>, Error> {
    use crate::error::GitContext;
    let (repo, root) = open::open(root)?;
    let config = repo
        .config()
        .and_then(|mut config| config.snapshot())
        .context("read the configuration")?;
    let mut paths = Vec::new();
    if let Ok(hooks) = config.get_path("core.hooksPath") {
        paths.push(root.join(hooks));
    }
    let monitor_is_a_switch = config.get_bool("core.fsmonitor").is_ok();
    if let (Ok(monitor), false) = (config.get_path("core.fsmonitor"), monitor_is_a_switch) {
        paths.push(root.join(monitor));
    }
    paths.retain(|path| {
        let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        !root.starts_with(resolved)
    });
    Ok(paths)
}

/// Checks that the working tree at `root` is clean, as [`Session::begin`] does
/// without `allow_dirty`: no staged, modified, deleted, or untracked files that
/// are not ignored.
///
/// # Errors
///
/// [`Error::DirtyTree`] with up to 20 of the paths and the count; the errors of
/// opening the repository.
pub fn check_clean(root: &std::path::Path) -> Result<(), Error> {
    let (repo, root) = open::open(root)?;
    let dirty = clean::Probe::for_workspace(&root).dirty_paths(&repo, &root)?;
    if dirty.is_empty() {
        Ok(())
    } else {
        Err(Error::dirty(dirty))
    }
}
