//! Snapshots of the working tree: the tree `git add --all` would record, kept
//! up to date between checkpoints for the cost of what changed.
//!
//! A [`Scanner`] owns a private index (a copy of the user's, so its stat data
//! spares rehashing unchanged files) and never reads or writes the user's index
//! afterwards. What the snapshot contains follows git:
//!
//! 1. every file or symlink in the private index that still exists (so a file
//!    tracked before stays even if it matches an ignore pattern),
//! 2. every other file or symlink that is not ignored,
//! 3. never the contents of `.git`, of nested repositories or of submodules,
//!    and never an empty directory (git records none);
//! 4. never a file larger than [`LARGEST_RECORDED_FILE`] that the snapshot would
//!    have to read (new, or changed since the last one), unless told to record
//!    any size (the pre-run state of a dirty tree, which is the user's).

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use git2::build::CheckoutBuilder;
use git2::{Delta, DiffOptions, Index, IndexEntry, IndexTime, Oid, Repository};

use crate::error::GitContext;
use crate::limits::LARGEST_RECORDED_FILE;
use crate::watch::{Changes, Watcher};
use crate::{Error, access, paths};

/// How checkpoints find what changed in the working tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tracking {
    /// Follow the kernel's change notes (inotify, on Linux), so that a
    /// checkpoint costs what changed rather than the size of the tree.
    ///
    /// The whole tree is scanned instead where the platform has no such notes,
    /// when the kernel dropped notes (its queue overflowed), when watches ran
    /// out (`fs.inotify.max_user_watches`), when a `.gitignore` changed, and
    /// when a nested repository appeared. Changes the kernel does not report
    /// are missed until one of those full scans: writes through a shared
    /// memory map, changes made on a network filesystem by another machine,
    /// and changes of ignore rules outside the tree (`.git/info/exclude`,
    /// `core.excludesFile`). Undo, redo and accept never rely on notes.
    #[default]
    Watch,
    /// Scan the whole working tree at every checkpoint, comparing stat data
    /// with the previous snapshot's. Slower on large trees, and independent
    /// of the kernel (for example on network filesystems).
    FullScan,
}

/// Brings a private index up to date with the working tree on demand.
pub(crate) struct Scanner {
    /// The working tree's top level.
    root: PathBuf,
    /// A handle on the repository whose index is `index` once it is read, so
    /// that libgit2's add, ignore and checkout logic see the scanner's view,
    /// not the user's.
    repo: Repository,
    /// The working tree as of the last snapshot; empty while `unread`.
    index: Index,
    /// Set until [`Scanner::load`] has read the copy of the user's index at
    /// `index_path` into `index`.
    unread: Option<Unread>,
    /// Where the copy of the user's index is, and where libgit2 writes `index`
    /// when it writes it (a full scan may, to refresh stat data); never the
    /// user's index.
    index_path: PathBuf,
    /// The temporary directory holding `index_path`, removed on drop.
    _index_dir: tempfile::TempDir,
    /// Change notes since the last snapshot; `None` means scan in full.
    watcher: Option<Watcher>,
    /// True if and only if the next snapshot must scan in full.
    rescan_due: bool,
    /// Ignored paths recorded all the same (the file tools wrote them).
    forced: BTreeSet<PathBuf>,
    /// Directories nested too deep to record ([`MAX_DEPTH`]), left out of
    /// every snapshot as if ignored.
    too_deep: BTreeSet<PathBuf>,
    /// Set while the snapshot is of the user's own files, before the run:
    /// files of any size are recorded, and no mode is changed.
    users_own: bool,
    /// Files left out because they were too large, as last seen.
    too_large: BTreeSet<PathBuf>,
    /// Paths whose owner got read access back (see [`access`]).
    access_given_back: BTreeSet<PathBuf>,
}

/// What [`Scanner::load`] still has to do: the copy of the user's index is
/// made when the scanner is, but read when first needed, because reading it is
/// slow (some 50 ms for 100,000 files, as long again on a busy machine) and a
/// run's clean-tree check and first model request do not need it: the walk
/// that comes first needs it only at an ignored directory, and a clean tree's
/// first snapshot comes after the model's first answer.
struct Unread {
    /// The tree whose content the index then takes, if any.
    base: Option<Oid>,
}

/// How many directories down the scanner records files; a directory this deep
/// is left out with what it holds. libgit2 refuses to walk a working tree
/// nested deeper than 100 levels (its own limit), and git itself cannot check
/// out paths longer than the system allows, so nothing deeper could be undone.
pub(crate) const MAX_DEPTH: usize = 90;

impl Scanner {
    /// A scanner of the working tree at `root`, whose private index starts as a
    /// copy of the user's and then, if given, takes the content of tree `base`
    /// (keeping the stat data of entries that are the same in both). The copy
    /// is made here and read when first needed ([`Scanner::load`]).
    ///
    /// With [`Tracking::Watch`] the directories are watched from here on, so
    /// create the scanner before looking at the tree by other means.
    #[cfg(test)] // A session keeps the index in its store: [`Scanner::new_in`].
    pub(crate) fn new(
        repo: &Repository,
        root: &Path,
        base: Option<Oid>,
        tracking: Tracking,
    ) -> Result<Scanner, Error> {
        Scanner::new_in(repo, root, base, tracking, &repo.path().join("harness"))
    }

    /// [`Scanner::new`], keeping the private index in `harness_dir` (made if missing): a
    /// session keeps it in the store, since it names every file the snapshots record
    /// with the hash of its content, hidden files among them.
    pub(crate) fn new_in(
        repo: &Repository,
        root: &Path,
        base: Option<Oid>,
        tracking: Tracking,
        harness_dir: &Path,
    ) -> Result<Scanner, Error> {
        // In the store, which is its user's alone: made private like the rest of it.
        crate::private::create_dir(harness_dir).map_err(|e| Error::io(harness_dir, e))?;
        let index_dir = tempfile::Builder::new()
            .prefix("scan-")
            .tempdir_in(harness_dir)
            .map_err(|e| Error::io(harness_dir, e))?;
        let index_path = index_dir.path().join("index");
        let user_index = repo.path().join("index");
        // Without an index (none yet, or deleted), start empty, as git does.
        if user_index.exists() {
            fs::copy(&user_index, &index_path).map_err(|e| Error::io(&user_index, e))?;
        }
        let own = Repository::open(repo.path()).context("open the repository")?;
        // The same objects (the store's included) and working tree as `repo`,
        // which may be the store's repository lent the workspace.
        let odb = repo.odb().context("open the object database")?;
        own.set_odb(&odb).context("share the object database")?;
        if own.is_bare() {
            own.set_workdir(root, false)
                .context("use the workspace as the working tree")?;
        }
        let mut scanner = Scanner {
            root: root.to_path_buf(),
            repo: own,
            index: Index::new().context("make an index")?,
            unread: Some(Unread { base }),
            index_path,
            _index_dir: index_dir,
            watcher: None,
            rescan_due: true,
            forced: BTreeSet::new(),
            too_deep: BTreeSet::new(),
            users_own: false,
            too_large: BTreeSet::new(),
            access_given_back: BTreeSet::new(),
        };
        if tracking == Tracking::Watch {
            scanner.watcher = Watcher::new(root).ok();
            scanner.walk(Path::new(""), None)?;
        }
        Ok(scanner)
    }

    /// Reads the private index, if it is not read yet: the copy of the user's
    /// index the scanner made, with the content of its base tree.
    fn load(&mut self) -> Result<(), Error> {
        let Some(Unread { base }) = self.unread else {
            return Ok(());
        };
        let mut index = Index::open(&self.index_path).context("read a copy of the index")?;
        if let Some(base) = base {
            let tree = self
                .repo
                .find_tree(base)
                .context("find the snapshot tree")?;
            index.read_tree(&tree).context("load the snapshot tree")?;
        }
        self.repo
            .set_index(&mut index)
            .context("use a private index")?;
        self.index = index;
        self.unread = None;
        Ok(())
    }

    /// Tells the scanner that its index already matches the working tree (the
    /// clean-tree check proved it), so the next snapshot need not scan in full.
    pub(crate) fn assume_current(&mut self) {
        self.rescan_due = false;
    }

    /// Records the ignored path `path` in every snapshot from now on, as if
    /// it were tracked: present, changed or gone.
    pub(crate) fn force(&mut self, path: &Path) {
        self.forced.insert(path.to_path_buf());
    }

    /// Takes the next snapshots as of the user's own files (`true`: the
    /// pre-run state of a dirty tree), recording files of any size and never
    /// giving back access (the user's modes are theirs: a file they cannot
    /// read fails the snapshot), or as of a run (`false`, the default), leaving
    /// out files larger than [`LARGEST_RECORDED_FILE`] and giving back the
    /// access a command took.
    pub(crate) fn users_own(&mut self, users_own: bool) {
        self.users_own = users_own;
    }

    /// Files the last snapshots left out for their size that still are too
    /// large, sorted.
    pub(crate) fn too_large(&self) -> Vec<PathBuf> {
        self.too_large
            .iter()
            .filter(|path| self.is_too_large(path))
            .cloned()
            .collect()
    }

    /// True if and only if change notes are being followed.
    #[cfg(test)]
    pub(crate) fn is_watching(&self) -> bool {
        self.watcher.is_some()
    }

    /// The repository handle whose index is the scanner's once it is read
    /// (its objects and working tree are the workspace's either way).
    pub(crate) fn repo(&self) -> &Repository {
        &self.repo
    }

    /// Writes the files at `paths` as tree `tree` has them, the way `git
    /// checkout` writes files (filters, executable bit, symlinks).
    pub(crate) fn checkout(&mut self, tree: Oid, paths: &[PathBuf]) -> Result<(), Error> {
        self.load()?;
        // libgit2's checkout reasons from HEAD's tree when the index has a
        // file on disk, and from an empty tree otherwise. HEAD has nothing to
        // do with the states restored here (reasoning from it, checkout left
        // out a directory that had to become a symlink), so drop the file:
        // the index in memory is all the scanner uses.
        if self.index_path.exists() {
            fs::remove_file(&self.index_path).map_err(|e| Error::io(&self.index_path, e))?;
        }
        let tree = self
            .repo
            .find_tree(tree)
            .context("find the tree to restore")?;
        let mut checkout = CheckoutBuilder::new();
        checkout
            .force()
            .recreate_missing(true)
            .update_index(false)
            // Exactly these paths: without them, checkout rewrites every file
            // the index has no stat data for.
            .disable_pathspec_match(true);
        for path in paths {
            checkout.path(path.as_path());
        }
        self.repo
            .checkout_tree(tree.as_object(), Some(&mut checkout))
            .context("write the restored files")
    }

    /// Makes the private index's entries for `paths` those of tree `tree`, and
    /// removes those it lacks. They carry no stat data, so the next snapshot
    /// hashes the working tree's file again.
    pub(crate) fn take_from_tree<'a>(
        &mut self,
        tree: Oid,
        paths: impl IntoIterator<Item = &'a PathBuf>,
    ) -> Result<(), Error> {
        self.load()?;
        let tree = self
            .repo
            .find_tree(tree)
            .context("find the tree to restore")?;
        for path in paths {
            // A tree that cannot be read fails the checkout that follows; until
            // then it has no entry to give.
            let Ok(entry) = tree.get_path(path) else {
                self.index
                    .remove_path(path)
                    .context(format_args!("forget {}", path.display()))?;
                continue;
            };
            let unknown = IndexTime::new(0, 0);
            let entry = IndexEntry {
                ctime: unknown,
                mtime: unknown,
                dev: 0,
                ino: 0,
                mode: u32::try_from(entry.filemode()).unwrap_or(0o100_644),
                uid: 0,
                gid: 0,
                file_size: 0,
                id: entry.id(),
                flags: 0,
                flags_extended: 0,
                path: paths::to_bytes(path),
            };
            self.index
                .add(&entry)
                .context(format_args!("record {}", path.display()))?;
        }
        Ok(())
    }

    /// Brings the private index up to date with the working tree and returns
    /// the tree it describes.
    ///
    /// When that fails and a command took the owner's read access to part of
    /// the tree, the access is given back (see [`access`]) and the snapshot is
    /// taken again, from a full scan.
    pub(crate) fn snapshot(&mut self) -> Result<Oid, Error> {
        let taken = match self.snapshot_once() {
            Err(error) => {
                if self.users_own || self.give_back_access().is_empty() {
                    Err(error)
                } else {
                    self.rescan_due = true;
                    self.snapshot_once()
                }
            }
            taken => taken,
        };
        if taken.is_err() {
            // The failed snapshot took the change notes, and what it recorded of them
            // was not kept: only a full scan sees those changes now. (After a command
            // filled the disk, the next snapshot, of a tree it had changed, found
            // nothing changed.)
            self.rescan_due = true;
        }
        taken
    }

    /// Paths whose owner the scanner gave read access back to, relative to
    /// the top level, sorted.
    pub(crate) fn access_given_back(&self) -> &BTreeSet<PathBuf> {
        &self.access_given_back
    }

    /// Gives the owner read access back to every file and directory a
    /// snapshot reads (not `.git`, nested repositories or ignored
    /// directories); returns what changed.
    fn give_back_access(&mut self) -> Vec<PathBuf> {
        let repo = &self.repo;
        let root = &self.root;
        let changed = access::give_back_below(root, access::Need::Read, |path, is_dir| {
            let Ok(relative) = path.strip_prefix(root) else {
                return false;
            };
            if is_dir
                && (relative.file_name().is_some_and(|name| name == ".git")
                    || fs::symlink_metadata(path.join(".git")).is_ok())
            {
                // Git's own, or a nested repository's: no snapshot reads them.
                return false;
            }
            // An ignored directory is not read; an ignored file may be (the
            // file tools' own), and giving read back to it costs nothing.
            !is_dir || !repo.is_path_ignored(relative).unwrap_or(true)
        });
        let changed: Vec<PathBuf> = changed
            .into_iter()
            .filter_map(|path| path.strip_prefix(root).ok().map(Path::to_path_buf))
            .collect();
        self.access_given_back.extend(changed.iter().cloned());
        changed
    }

    fn snapshot_once(&mut self) -> Result<Oid, Error> {
        self.load()?;
        let changes = match self.watcher.as_mut().map(Watcher::drain) {
            Some(Ok(changes)) => changes,
            Some(Err(_)) => {
                // Without a readable queue there are no more notes to trust.
                self.watcher = None;
                Changes::default()
            }
            None => Changes::default(),
        };
        if self.watcher.is_none() || self.rescan_due || changes.rescan {
            self.rescan()?;
        } else {
            for path in &changes.paths {
                self.update(path)?;
            }
        }
        // Ignored directories are not watched, and a full scan skips ignored
        // files it was not told of: look at each forced path itself.
        for path in self.forced.clone() {
            self.update(&path)?;
        }
        self.index.write_tree().context("write the snapshot's tree")
    }

    /// Compares every file with the private index (stat data first, content
    /// where stat data differs) and records what differs.
    fn rescan(&mut self) -> Result<(), Error> {
        self.rescan_due = false;
        if self.watcher.is_some() {
            // Ignore rules may have changed, and with them the directories to watch.
            self.walk(Path::new(""), None)?;
        }
        let mut options = DiffOptions::new();
        options
            .include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_typechange(true)
            .ignore_submodules(true)
            // Refresh stat data of files that were touched but not changed, so
            // the next scan need not hash them again.
            .update_index(true);
        self.leave_out_too_deep()?;
        let compared = self
            .repo
            .diff_index_to_workdir(Some(&self.index), Some(&mut options))
            .map(|diff| changed_paths(&diff));
        let (removed, present) = match compared {
            Ok(changed) => changed,
            Err(error) => {
                // Perhaps a directory nested too deep for libgit2, which no
                // walk of this scanner has met yet: look for one, and if that
                // was it, compare again without it.
                let known = self.too_deep.len();
                self.walk_for_depth()?;
                if self.too_deep.len() == known {
                    return Err(error).context("compare the working tree with the last snapshot");
                }
                self.leave_out_too_deep()?;
                let diff = self
                    .repo
                    .diff_index_to_workdir(Some(&self.index), Some(&mut options))
                    .context("compare the working tree with the last snapshot")?;
                changed_paths(&diff)
            }
        };
        for path in removed {
            self.remove_file(&path)?;
        }
        for path in present {
            self.add_file(&path)?;
        }
        Ok(())
    }

    /// Walks the whole tree without watching, only to find the directories
    /// nested too deep to record.
    fn walk_for_depth(&mut self) -> Result<(), Error> {
        let watcher = self.watcher.take();
        let walked = self.walk(Path::new(""), None);
        self.watcher = watcher;
        walked
    }

    /// Records the current state of one path that may have changed.
    fn update(&mut self, path: &Path) -> Result<(), Error> {
        let full = self.root.join(path);
        let metadata = if self.is_under_real_dirs(path) {
            fs::symlink_metadata(&full)
        } else {
            // Reached through a symlink or a file: not in the tree git sees.
            Err(ErrorKind::NotFound.into())
        };
        match metadata {
            Ok(m) if m.is_dir() => {
                self.remove_file(path)?;
                if self.is_visible_dir(path)? {
                    self.add_dir(path)
                } else {
                    self.remove_dir(path)
                }
            }
            Ok(m) if m.is_file() || m.is_symlink() => {
                self.remove_dir(path)?;
                if self.is_tracked(path) || self.forced.contains(path) || !self.is_ignored(path)? {
                    self.add_file(path)
                } else {
                    Ok(())
                }
            }
            // Something git does not record (a socket, a fifo).
            Ok(_) => self.forget(path),
            Err(e) => {
                if is_gone(&e) {
                    self.forget(path)
                } else {
                    Err(Error::io(&full, e))
                }
            }
        }
    }

    /// Records directory `dir` afresh: every file below it, and the removal of
    /// every recorded file below it that is no longer there.
    fn add_dir(&mut self, dir: &Path) -> Result<(), Error> {
        let mut found = Vec::new();
        self.walk(dir, Some(&mut found))?;
        let found_set: HashSet<&Path> = found.iter().map(PathBuf::as_path).collect();
        let mut prefix = dir.as_os_str().to_os_string();
        prefix.push("/");
        let mut gone = Vec::new();
        if let Ok(start) = self.index.find_prefix(Path::new(&prefix)) {
            for position in start..self.index.len() {
                let Some(entry) = self.index.get(position) else {
                    break;
                };
                let path = paths::from_bytes(&entry.path);
                if !path
                    .as_os_str()
                    .as_encoded_bytes()
                    .starts_with(prefix.as_encoded_bytes())
                {
                    break;
                }
                if !found_set.contains(path.as_path()) {
                    gone.push(path);
                }
            }
        }
        for path in gone {
            self.remove_file(&path)?;
        }
        for path in &found {
            if self.is_tracked(path) || !self.is_ignored(path)? {
                self.add_file(path)?;
            }
        }
        Ok(())
    }

    /// Visits directory `dir` and every directory below it that git sees:
    /// watches each (when watching) and collects the files and symlinks (when
    /// given `files`). A directory [`MAX_DEPTH`] levels down is not entered
    /// but noted in `too_deep`. Iterative: a command can nest directories far
    /// deeper than a thread's stack could recurse.
    fn walk(&mut self, dir: &Path, mut files: Option<&mut Vec<PathBuf>>) -> Result<(), Error> {
        let mut pending = vec![dir.to_path_buf()];
        while let Some(dir) = pending.pop() {
            if dir.components().count() >= MAX_DEPTH {
                self.too_deep.insert(dir);
                continue;
            }
            if let Some(watcher) = &mut self.watcher
                && let Err(e) = watcher.watch(&dir)
            {
                if is_gone(&e) {
                    // Gone since it was listed: its parent's notes cover it.
                    continue;
                }
                // Out of watches (fs.inotify.max_user_watches) or similar:
                // notes from here on would be incomplete, so scan in full.
                self.watcher = None;
                self.rescan_due = true;
            }
            let full = self.root.join(&dir);
            let entries = match fs::read_dir(&full) {
                Ok(entries) => entries,
                Err(e) if is_gone(&e) => continue,
                Err(e) => return Err(Error::io(&full, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| Error::io(&full, e))?;
                let file_type = entry.file_type().map_err(|e| Error::io(&entry.path(), e))?;
                // A path is made only for what needs one: a walk that only
                // watches meets 100 files for every directory.
                if file_type.is_dir() {
                    let path = dir.join(entry.file_name());
                    if entry.file_name() != ".git" && self.is_visible_dir(&path)? {
                        pending.push(path);
                    }
                } else if let Some(files) = files.as_deref_mut()
                    && (file_type.is_file() || file_type.is_symlink())
                {
                    files.push(dir.join(entry.file_name()));
                }
            }
        }
        Ok(())
    }

    /// Has libgit2 take every directory in `too_deep` for an ignored one, which
    /// its walk of the working tree does not enter: it refuses a tree nested
    /// deeper than 100 levels, so one such directory would otherwise stop
    /// every full scan, and with it undo. The rules live in this handle only.
    fn leave_out_too_deep(&mut self) -> Result<(), Error> {
        if self.too_deep.is_empty() {
            return Ok(());
        }
        // Only this scanner's rules are in memory: set them afresh.
        self.repo
            .clear_ignore_rules()
            .context("reset the rules of the scanner")?;
        for dir in &self.too_deep {
            let Some(rule) = anchored_rule(dir) else {
                continue;
            };
            self.repo
                .add_ignore_rule(&rule)
                .context(format_args!("leave out {}", dir.display()))?;
        }
        Ok(())
    }

    /// Directories too deep to record (see [`MAX_DEPTH`]), sorted.
    pub(crate) fn too_deep(&self) -> &BTreeSet<PathBuf> {
        &self.too_deep
    }

    /// True if and only if git looks inside directory `dir`: it is not a nested
    /// repository, and it is not ignored or holds recorded files.
    fn is_visible_dir(&mut self, dir: &Path) -> Result<bool, Error> {
        if fs::symlink_metadata(self.root.join(dir).join(".git")).is_ok() {
            return Ok(false);
        }
        if !self.is_ignored(dir)? {
            return Ok(true);
        }
        // Only here is the index needed, so the first walk reads it no sooner.
        self.load()?;
        let mut prefix = dir.as_os_str().to_os_string();
        prefix.push("/");
        Ok(self.index.find_prefix(Path::new(&prefix)).is_ok())
    }

    /// True if and only if every proper ancestor of `path` is a real directory
    /// (not a symlink, not a file).
    fn is_under_real_dirs(&self, path: &Path) -> bool {
        path.ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .all(|a| fs::symlink_metadata(self.root.join(a)).is_ok_and(|m| m.is_dir()))
    }

    fn is_tracked(&self, path: &Path) -> bool {
        self.index.get_path(path, 0).is_some()
    }

    fn is_ignored(&self, path: &Path) -> Result<bool, Error> {
        self.repo
            .is_path_ignored(path)
            .context(format_args!("check whether {} is ignored", path.display()))
    }

    /// Hashes the file or symlink at `path` into the private index, or, when
    /// it is too large to record, leaves it out (removing what the index had).
    fn add_file(&mut self, path: &Path) -> Result<(), Error> {
        if !self.users_own && self.is_too_large(path) {
            self.too_large.insert(path.to_path_buf());
            return self.remove_file(path);
        }
        self.too_large.remove(path);
        self.index
            .add_path(path)
            .context(format_args!("record {}", path.display()))
    }

    /// True if and only if `path` is a regular file larger than
    /// [`LARGEST_RECORDED_FILE`]. Its size is the one the metadata gives; a
    /// sparse file's holes count, since recording reads them.
    fn is_too_large(&self, path: &Path) -> bool {
        fs::symlink_metadata(self.root.join(path))
            .is_ok_and(|m| m.is_file() && m.len() > LARGEST_RECORDED_FILE)
    }

    fn remove_file(&mut self, path: &Path) -> Result<(), Error> {
        self.index
            .remove_path(path)
            .context(format_args!("forget {}", path.display()))
    }

    fn remove_dir(&mut self, path: &Path) -> Result<(), Error> {
        self.index
            .remove_dir(path, 0)
            .context(format_args!("forget {}", path.display()))
    }

    /// Removes `path` and everything below it from the private index.
    fn forget(&mut self, path: &Path) -> Result<(), Error> {
        self.remove_file(path)?;
        self.remove_dir(path)
    }
}

/// True if and only if `error` says the path is not there (any more), or
/// that one of its parents is not a directory.
fn is_gone(error: &std::io::Error) -> bool {
    matches!(error.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
}

/// The paths a comparison of the index with the working tree found removed,
/// and those found added or changed.
fn changed_paths(diff: &git2::Diff<'_>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut removed = Vec::new();
    let mut present = Vec::new();
    for delta in diff.deltas() {
        if delta.status() == Delta::Deleted {
            removed.extend(delta.old_file().path_bytes().map(paths::from_bytes));
        } else if let Some(path) = delta.new_file().path_bytes() {
            // A nested repository shows as one untracked `dir/`; git records
            // none of it.
            if !path.ends_with(b"/") {
                present.push(paths::from_bytes(path));
            }
        }
    }
    (removed, present)
}

/// A `.gitignore` rule for exactly directory `dir` (relative to the top),
/// every character escaped that the syntax would read otherwise; `None` for a
/// name no rule can spell (not UTF-8, or holding a line break).
fn anchored_rule(dir: &Path) -> Option<String> {
    let text = dir.to_str()?;
    if text.contains(['\n', '\r']) {
        return None;
    }
    let mut rule = String::from("/");
    for c in text.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']' | '!' | '#' | ' ') {
            rule.push('\\');
        }
        rule.push(c);
    }
    rule.push('/');
    Some(rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gone_means_not_found_or_not_a_directory() {
        use std::io::Error as E;
        assert!(is_gone(&E::from(ErrorKind::NotFound)));
        assert!(is_gone(&E::from(ErrorKind::NotADirectory)));
        assert!(!is_gone(&E::from(ErrorKind::PermissionDenied)));
        assert!(!is_gone(&E::from(ErrorKind::InvalidFilename)));
    }

    #[test]
    fn assume_current_spares_the_first_full_scan() {
        let (dir, repo) = repo();
        let mut scanner = Scanner::new(&repo, dir.path(), None, Tracking::FullScan).unwrap();
        assert!(scanner.rescan_due);
        scanner.assume_current();
        assert!(!scanner.rescan_due);
    }

    #[cfg(target_os = "linux")] // Elsewhere there is no walk to read it.
    #[test]
    fn the_copy_of_the_index_is_read_when_first_needed() {
        let (dir, repo) = repo();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("sub/file")).unwrap();
        index.write().unwrap();
        let mut scanner = Scanner::new(&repo, dir.path(), None, Tracking::Watch).unwrap();
        assert!(
            scanner.unread.is_some(),
            "read by a walk that met no ignored directory"
        );
        scanner.snapshot().unwrap();
        assert!(scanner.unread.is_none());
        assert!(scanner.is_tracked(Path::new("sub/file")));
        // An ignored directory that holds a tracked file is watched: its walk reads it.
        fs::write(dir.path().join(".gitignore"), "sub/\n").unwrap();
        let scanner = Scanner::new(&repo, dir.path(), None, Tracking::Watch).unwrap();
        assert!(scanner.unread.is_none());
    }

    #[cfg(target_os = "linux")] // Elsewhere every snapshot scans in full.
    #[test]
    fn a_failed_snapshot_leaves_its_changes_to_the_next() {
        let (dir, repo) = repo();
        let mut scanner = Scanner::new(&repo, dir.path(), None, Tracking::Watch).unwrap();
        let before = scanner.snapshot().unwrap();
        fs::write(dir.path().join("sub/file"), "changed").unwrap();
        // Objects cannot be written (as when the disk is full): the snapshot fails
        // after it has taken the change notes.
        let objects = repo.path().join("objects");
        let away = repo.path().join("objects.away");
        fs::rename(&objects, &away).unwrap();
        fs::write(&objects, "not a directory").unwrap();
        let failed = scanner.snapshot();
        fs::remove_file(&objects).unwrap();
        fs::rename(&away, &objects).unwrap();
        assert!(failed.is_err(), "{failed:?}");
        let after = scanner.snapshot().unwrap();
        assert_ne!(
            after, before,
            "the change was lost with the failed snapshot"
        );
        let tree = repo.find_tree(after).unwrap();
        let blob = tree.get_path(Path::new("sub/file")).unwrap().id();
        assert_eq!(repo.find_blob(blob).unwrap().content(), b"changed");
    }

    fn repo() -> (tempfile::TempDir, Repository) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(dir.path().join("sub/file"), "f").unwrap();
        (dir, repo)
    }

    #[test]
    fn the_walk_collects_files_above_the_depth_limit_and_notes_the_first_directory_at_it() {
        let (dir, repo) = repo();
        let root = dir.path();
        let above: PathBuf = std::iter::repeat_n("a", MAX_DEPTH - 1).collect();
        let at = above.join("a");
        fs::create_dir_all(root.join(&at).join("b")).unwrap();
        fs::write(root.join(&above).join("kept"), "x").unwrap();
        fs::write(root.join(&at).join("left-out"), "x").unwrap();
        let mut scanner = Scanner::new(&repo, root, None, Tracking::FullScan).unwrap();
        let mut files = Vec::new();
        scanner.walk(Path::new(""), Some(&mut files)).unwrap();
        files.sort();
        assert_eq!(files, [above.join("kept"), PathBuf::from("sub/file")]);
        assert_eq!(scanner.too_deep().iter().collect::<Vec<_>>(), [&at]);
        // Left out of a full scan as an ignored directory would be.
        scanner.snapshot().unwrap();
        assert!(scanner.is_tracked(&above.join("kept")));
        assert!(!scanner.is_tracked(&at.join("left-out")));
    }

    #[test]
    fn a_rule_names_exactly_its_directory_whatever_its_characters() {
        assert_eq!(
            anchored_rule(Path::new("a b/[x]*?/!#\\")).as_deref(),
            Some("/a\\ b/\\[x\\]\\*\\?/\\!\\#\\\\/")
        );
        assert_eq!(anchored_rule(Path::new("line\nbreak")), None);
        let (dir, repo) = repo();
        let root = dir.path();
        for name in ["a b", "[x]", "*", "!n", "#c"] {
            fs::create_dir_all(root.join(name)).unwrap();
            let rule = anchored_rule(Path::new(name)).unwrap();
            let scanner = Scanner::new(&repo, root, None, Tracking::FullScan).unwrap();
            scanner.repo.add_ignore_rule(&rule).unwrap();
            assert!(
                scanner.is_ignored(Path::new(name)).unwrap(),
                "{name}: {rule}"
            );
            assert!(
                !scanner.is_ignored(Path::new("sub")).unwrap(),
                "{name}: {rule}"
            );
        }
    }

    #[test]
    fn only_watch_tracking_watches() {
        let (dir, repo) = repo();
        let watching = Scanner::new(&repo, dir.path(), None, Tracking::Watch).unwrap();
        assert_eq!(watching.is_watching(), cfg!(target_os = "linux"));
        let scanning = Scanner::new(&repo, dir.path(), None, Tracking::FullScan).unwrap();
        assert!(!scanning.is_watching());
    }

    #[test]
    fn a_directory_that_vanished_is_walked_as_empty() {
        let (dir, repo) = repo();
        for tracking in [Tracking::Watch, Tracking::FullScan] {
            let mut scanner = Scanner::new(&repo, dir.path(), None, tracking).unwrap();
            let mut files = Vec::new();
            scanner
                .walk(Path::new("missing"), Some(&mut files))
                .unwrap();
            scanner
                .walk(Path::new("sub/file"), Some(&mut files))
                .unwrap();
            assert!(files.is_empty());
            let watching = tracking == Tracking::Watch && cfg!(target_os = "linux");
            assert_eq!(scanner.is_watching(), watching);
        }
    }

    #[cfg(target_os = "linux")] // Elsewhere nothing is watched.
    #[test]
    fn every_directory_git_sees_is_watched_and_no_other() {
        let (dir, repo) = repo();
        let root = dir.path();
        fs::write(root.join(".gitignore"), "build/\nlogs/\n").unwrap();
        for path in [
            "build/deep/x",
            "logs/keep.txt",
            "vendor/lib/x",
            "empty/.keep",
            "sub/inner/y",
        ] {
            fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            fs::write(root.join(path), "x").unwrap();
        }
        fs::remove_file(root.join("empty/.keep")).unwrap();
        // A nested repository, and a file tracked inside an ignored directory.
        Repository::init(root.join("vendor")).unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("logs/keep.txt")).unwrap();
        index.write().unwrap();
        let scanner = Scanner::new(&repo, root, None, Tracking::Watch).unwrap();
        let watched = scanner.watcher.as_ref().unwrap().watched();
        let expected: Vec<PathBuf> = ["", "empty", "logs", "sub", "sub/inner"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(watched, expected);
    }

    #[cfg(target_os = "linux")] // Elsewhere there is no watch to fail.
    #[test]
    fn a_watch_that_fails_otherwise_turns_to_full_scans() {
        let (dir, repo) = repo();
        let mut scanner = Scanner::new(&repo, dir.path(), None, Tracking::Watch).unwrap();
        scanner.assume_current();
        // A name longer than the system allows fails with neither NotFound
        // nor NotADirectory, like running out of watches would.
        let err = scanner.walk(Path::new(&"n".repeat(300)), None).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
        assert!(!scanner.is_watching());
        assert!(scanner.rescan_due);
    }
}
