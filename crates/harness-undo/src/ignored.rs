//! What commands leave where git does not look: ignored files, recorded at the start,
//! compared after, and put back by undo and before each verification.
//!
//! Git's snapshots leave out ignored paths, yet they hold what the user's own tools run
//! later: bytecode caches (`__pycache__/*.pyc`, which Python loads instead of the source
//! when the source's recorded size and time match), virtual environments
//! (`.venv/bin/python3`, `*.pth` files in `site-packages`, which `site` executes at every
//! start), `node_modules/.bin`, build outputs. A command can write any of them, and
//! nothing in a diff would show it. So:
//!
//! 1. At begin, every ignored file, symlink and directory is listed in a *manifest*
//!    (path, kind, size, modification and change time in nanoseconds, inode, mode), walking
//!    the whole working tree but `.git` and nested repositories, up to
//!    [`MOST_LISTED_IGNORED`] entries. The content of files within the budget (see below)
//!    goes into the harness's store, outside the workspace, as git blobs reachable from
//!    `refs/harness/<id>/ignored-start` there (never in the workspace's `.git`). Blobs
//!    are named by their content, so a second run writes none of what the first saved,
//!    and a file whose stat data is what the last run's manifest says is not even read.
//! 2. Whenever asked ([`crate::Session::ignored_changes`], undo, the reset before a
//!    verification), the ignored paths are listed again and compared with the manifest:
//!    a path whose stat data differs and whose content (or symlink target, or mode)
//!    differs too is changed; one the manifest lacks is new; one missing is deleted.
//!    Change times are set by the kernel on every write, rename, link or chmod, and no
//!    command can set them back, so a file made to look old (`touch -d`, a forged
//!    `.pyc` with an old time) is still seen.
//! 3. Undo puts every such path back as the manifest has it: new ones removed (with the
//!    directories they made), changed and deleted ones written back from the store (a
//!    symlink as a symlink, the mode and modification time as they were), each written as
//!    a new file after the old entry is unlinked, so a hard link or a symlink a command
//!    left there is never written through. What undo replaced is saved first, within the
//!    same budget, so redo brings it back. A path whose change time is past the run's
//!    end (its finish; for redo, the undo) was changed by the user since, not by the run:
//!    it is left as it is, and named when it was there before ([`split_after`]). A run
//!    that never finished has no end known, and all since its start is its own.
//! 4. Before each verification the harness runs, the same happens against the
//!    *verification baseline*: the manifest, plus what earlier verification runs wrote
//!    (their output comes from the code under test at that moment, and keeping it spares
//!    a full rebuild at every check). Commands' caches and interpreters are gone before
//!    the check starts, and whatever the check writes is its own.
//!
//! # The budget
//!
//! Saving costs reading, hashing and compressing, at every begin for what changed since
//! the last one. A file is saved when it is at most [`LARGEST_SAVED_IGNORED_FILE`]
//! (4 MiB: bytecode, `.pth` files, scripts and most JavaScript are far smaller; shared
//! libraries and binaries often larger), smallest first, until [`IGNORED_SAVE_BUDGET`]
//! (64 MiB in all, the bound a snapshot puts on one file's memory) or
//! [`MOST_SAVED_IGNORED`] files (20,000: the small files of a virtual environment with a
//! few large packages, or of a small project's `node_modules`) is reached. Measured on a
//! 54,000-file, 716 MiB virtual environment on a loaded 2-core machine: the first begin
//! took 6.5 s (reading, hashing and writing 20,000 files, 64 MiB, as loose objects), a
//! begin after it 0.8 to 0.9 s (the listing, and stat data compared with the last run's
//! manifest, which names the blobs and tree to reuse); the listing alone, as each check
//! and undo does it, 0.5 to 0.7 s. What is not saved is still listed:
//! a command that changes or deletes it is named, by undo ("not restored: too large to
//! save at the start, changed by a command") and by the reset before a verification,
//! which then cannot vouch for the check. A file that a verification wrote and a command
//! then changed is removed instead: the next check makes it again.
//!
//! # What this does not do
//!
//! It does not record ignored files beyond [`MOST_LISTED_IGNORED`] entries (the walk
//! stops and says so), sockets and FIFOs' content, the owner or extended attributes, nor
//! the contents of nested repositories. Directories are listed by kind only.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

use git2::{IndexEntry, IndexTime, ObjectType, Oid, Repository};
use serde::{Deserialize, Serialize};

use crate::error::GitContext;
use crate::{Error, paths};

/// The largest ignored file whose content is saved at the start (4 MiB).
pub const LARGEST_SAVED_IGNORED_FILE: u64 = 4 * 1024 * 1024;

/// The most content, in bytes, saved of the ignored files of one state (64 MiB).
pub const IGNORED_SAVE_BUDGET: u64 = 64 * 1024 * 1024;

/// The most ignored files whose content is saved for one state.
pub const MOST_SAVED_IGNORED: usize = 20_000;

/// The most ignored entries listed; the walk stops there and says so.
pub const MOST_LISTED_IGNORED: usize = 500_000;

/// How deep the walk goes; deeper directories are left out, as the scanner does.
const MAX_DEPTH: usize = crate::scan::MAX_DEPTH;

/// What an entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A symbolic link.
    Symlink,
    /// A directory.
    Dir,
    /// A FIFO, socket or device: listed, never saved.
    Special,
}

/// The stat data an entry is compared by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stat {
    /// Its kind.
    pub(crate) kind: Kind,
    /// Size in bytes (0 for a directory).
    pub(crate) size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub(crate) mtime_ns: i64,
    /// Change time (ctime), nanoseconds since the epoch: no command can set it back.
    pub(crate) ctime_ns: i64,
    /// Inode number.
    pub(crate) ino: u64,
    /// Mode bits (permissions and kind).
    pub(crate) mode: u32,
}

impl Stat {
    /// The stat data of `metadata`; a directory's times, inode and mode are left out
    /// (they change whenever an entry inside does).
    fn of(metadata: &fs::Metadata) -> Stat {
        let file_type = metadata.file_type();
        let kind = if file_type.is_dir() {
            Kind::Dir
        } else if file_type.is_symlink() {
            Kind::Symlink
        } else if file_type.is_file() {
            Kind::File
        } else {
            Kind::Special
        };
        if kind == Kind::Dir {
            return Stat {
                kind,
                size: 0,
                mtime_ns: 0,
                ctime_ns: 0,
                ino: 0,
                mode: 0,
            };
        }
        imp::stat(kind, metadata)
    }

    /// True if and only if its content could be saved: a file or symlink within the
    /// per-file limit.
    fn is_savable(&self) -> bool {
        matches!(self.kind, Kind::File | Kind::Symlink) && self.size <= LARGEST_SAVED_IGNORED_FILE
    }
}

#[cfg(unix)]
mod imp {
    use std::os::unix::fs::MetadataExt;

    use super::{Kind, Stat};

    pub(super) fn stat(kind: Kind, metadata: &std::fs::Metadata) -> Stat {
        let ns = |seconds: i64, nanos: i64| seconds.saturating_mul(1_000_000_000) + nanos;
        Stat {
            kind,
            size: metadata.size(),
            mtime_ns: ns(metadata.mtime(), metadata.mtime_nsec()),
            ctime_ns: ns(metadata.ctime(), metadata.ctime_nsec()),
            ino: metadata.ino(),
            mode: metadata.mode(),
        }
    }
}

// Never compiled where mutation testing runs (Linux): its mutants could not be built.
#[cfg(not(unix))]
#[cfg_attr(test, mutants::skip)]
mod imp {
    use super::{Kind, Stat};

    pub(super) fn stat(kind: Kind, metadata: &std::fs::Metadata) -> Stat {
        let mtime_ns = metadata
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Stat {
            kind,
            size: metadata.len(),
            mtime_ns,
            ctime_ns: mtime_ns,
            ino: 0,
            mode: if metadata.permissions().readonly() {
                0o444
            } else {
                0o644
            },
        }
    }
}

/// One listed path: its stat data and, where saved, its content's blob.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// As listed.
    pub(crate) stat: Stat,
    /// The blob holding its content (a symlink's target), in the store; `None` when not
    /// saved (a directory, too large, over budget, unreadable).
    #[serde(default, with = "hex_option")]
    pub(crate) blob: Option<Oid>,
    /// True if and only if a verification run wrote it (it is in the baseline for the
    /// next check, not in the pre-run manifest).
    #[serde(default)]
    pub(crate) from_check: bool,
}

/// The ignored paths of one state, keyed by their path's bytes as text (see [`key`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    /// Every listed path.
    pub(crate) entries: BTreeMap<String, Entry>,
    /// True if and only if the walk stopped at [`MOST_LISTED_IGNORED`].
    #[serde(default)]
    pub(crate) truncated: bool,
    /// For the state an undo replaced: the paths the undo changed (those `entries`
    /// lacks were not there, and redo removes them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) touched: Vec<String>,
    /// The store's tree holding the saved blobs, reused by the next manifest that saves
    /// the same ones.
    #[serde(default, with = "hex_option")]
    pub(crate) tree: Option<Oid>,
    /// For the state an undo replaced: the change time (ns) a file written just after
    /// the undo got, past every one the undo wrote. A touched path changed after it is
    /// the user's, and redo leaves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) undone_ns: Option<i64>,
    /// Likewise once a redo put paths back: a later undo counts a path in
    /// [`Manifest::redone`] changed up to this time as the run's (the redo wrote it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) redone_ns: Option<i64>,
    /// The paths that redo put back (not those it left as changed after the undo).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) redone: Vec<String>,
}

/// Which manifest of a run: the files in its directory in the store, and the refs that
/// keep their blobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    /// The ignored files at the start.
    Start,
    /// The baseline of the next verification.
    Check,
    /// What the last undo replaced, for redo.
    Redo,
}

impl Which {
    fn leaf(self) -> &'static str {
        match self {
            Which::Start => "ignored-start",
            Which::Check => "ignored-check",
            Which::Redo => "ignored-redo",
        }
    }
}

/// The text key of `path`: itself when it is UTF-8 and does not start with the escape
/// character U+0001, else that character followed by its bytes in hex.
pub(crate) fn key(path: &Path) -> String {
    match path.to_str() {
        Some(text) if !text.starts_with('\u{1}') => text.to_owned(),
        _ => {
            let bytes = paths::to_bytes(path);
            let mut text = String::from('\u{1}');
            for byte in bytes {
                text.push_str(&format!("{byte:02x}"));
            }
            text
        }
    }
}

/// The path of key `key` (see [`key`]).
pub(crate) fn path_of(key: &str) -> PathBuf {
    match key.strip_prefix('\u{1}') {
        Some(hex) => {
            let bytes: Vec<u8> = (0..hex.len() / 2)
                .filter_map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
                .collect();
            paths::from_bytes(&bytes)
        }
        None => PathBuf::from(key),
    }
}

/// The ignored paths found now: what [`list`] returns.
pub(crate) struct Listing {
    /// Each path's stat data.
    pub(crate) entries: BTreeMap<String, Stat>,
    /// True if and only if the walk stopped at [`MOST_LISTED_IGNORED`].
    pub(crate) truncated: bool,
    /// Ignored directories nested too deep to list ([`MAX_DEPTH`]), sorted.
    pub(crate) too_deep: Vec<PathBuf>,
}

/// Lists every ignored file, symlink and directory of the working tree at `root` that
/// `repo` (whose ignore rules and index are the workspace's) sees, but those in `skip`
/// (recorded by the snapshots already) and those below `.git`, a nested repository, or
/// [`MAX_DEPTH`] levels down.
pub(crate) fn list(
    repo: &Repository,
    root: &Path,
    skip: &BTreeSet<PathBuf>,
) -> Result<Listing, Error> {
    let index = repo.index().ok();
    let tracked = |path: &Path| {
        index
            .as_ref()
            .is_some_and(|index| index.get_path(path, 0).is_some())
    };
    let tracked_below = |dir: &Path| {
        let mut prefix = dir.as_os_str().to_os_string();
        prefix.push("/");
        index
            .as_ref()
            .is_some_and(|index| index.find_prefix(Path::new(&prefix)).is_ok())
    };
    let ignored = |path: &Path, is_dir: bool| -> Result<bool, Error> {
        // A trailing slash has libgit2 match directory-only patterns (`build/`).
        let asked = if is_dir {
            path.join("")
        } else {
            path.to_path_buf()
        };
        repo.is_path_ignored(&asked)
            .context(format_args!("check whether git ignores {}", path.display()))
    };
    let mut entries = BTreeMap::new();
    let mut truncated = false;
    // (directory, whether git ignores it or a directory above it)
    let mut pending: Vec<(PathBuf, bool)> = vec![(PathBuf::new(), false)];
    let mut too_deep = Vec::new();
    'walk: while let Some((dir, under_ignored)) = pending.pop() {
        if dir.components().count() >= MAX_DEPTH {
            if under_ignored {
                too_deep.push(dir);
            }
            continue;
        }
        let full = root.join(&dir);
        let read = match fs::read_dir(&full) {
            Ok(read) => read,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                continue;
            }
            // Unreadable (a command took the access): nothing below can be listed.
            Err(_) => continue,
        };
        for entry in read {
            let Ok(entry) = entry else { continue };
            let name = entry.file_name();
            if name == ".git" {
                continue;
            }
            let path = dir.join(&name);
            let Ok(metadata) = fs::symlink_metadata(root.join(&path)) else {
                continue;
            };
            let is_dir = metadata.is_dir();
            let is_ignored = if is_dir {
                under_ignored || ignored(&path, true)?
            } else {
                !tracked(&path) && (under_ignored || ignored(&path, false)?)
            };
            // A nested repository git sees is its own; one inside an ignored directory is
            // listed like the rest of it: a command could otherwise hide what it planted
            // there by making a `.git` beside it.
            if is_dir && !is_ignored && fs::symlink_metadata(root.join(&path).join(".git")).is_ok()
            {
                continue;
            }
            if is_dir {
                // An ignored directory holding tracked files is walked as one git reads.
                let as_ignored = is_ignored && !tracked_below(&path);
                pending.push((path.clone(), as_ignored));
                if !as_ignored {
                    continue;
                }
            } else if !is_ignored {
                continue;
            }
            if skip.contains(&path) {
                continue;
            }
            if entries.len() >= MOST_LISTED_IGNORED {
                truncated = true;
                break 'walk;
            }
            entries.insert(key(&path), Stat::of(&metadata));
        }
    }
    too_deep.sort();
    Ok(Listing {
        entries,
        truncated,
        too_deep,
    })
}

/// The content of the entry at `full` as a blob's bytes: a file's bytes, a symlink's
/// target. `None` when it cannot be read whole within the per-file limit.
fn content(full: &Path, kind: Kind) -> Option<Vec<u8>> {
    match kind {
        Kind::Symlink => fs::read_link(full).ok().map(|t| paths::to_bytes(&t)),
        Kind::File => {
            let file = imp_open::open_no_follow(full).ok()?;
            if !file.metadata().ok()?.is_file() {
                return None;
            }
            let mut bytes = Vec::new();
            file.take(LARGEST_SAVED_IGNORED_FILE + 1)
                .read_to_end(&mut bytes)
                .ok()?;
            (bytes.len() as u64 <= LARGEST_SAVED_IGNORED_FILE).then_some(bytes)
        }
        Kind::Dir | Kind::Special => None,
    }
}

mod imp_open {
    use std::fs::{File, OpenOptions};
    use std::path::Path;

    /// Opens `path` to read without following a symlink and without waiting for a writer
    /// (a FIFO put where a file was).
    #[cfg(unix)]
    pub(super) fn open_no_follow(path: &Path) -> std::io::Result<File> {
        use std::os::unix::fs::OpenOptionsExt;
        OpenOptions::new()
            .read(true)
            .custom_flags(
                (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32,
            )
            .open(path)
    }

    // Never compiled where mutation testing runs (Linux): its mutants could not be built.
    #[cfg(not(unix))]
    #[cfg_attr(test, mutants::skip)]
    pub(super) fn open_no_follow(path: &Path) -> std::io::Result<File> {
        OpenOptions::new().read(true).open(path)
    }
}

/// Builds a manifest of `listing` for run `run` under `which`, saving the content of
/// what fits the budget into the store at `store_dir`, smallest first. An entry whose
/// stat data `previous` has with a blob the store still holds keeps that blob unread.
/// `from_check` marks every entry not taken from `previous` as written by a verification.
/// Returns the manifest and the commit that keeps its blobs (none when none was saved).
pub(crate) fn save(
    store_dir: &Path,
    root: &Path,
    listing: Listing,
    previous: Option<&Manifest>,
    from_check: bool,
) -> Result<(Manifest, Option<Oid>), Error> {
    let repo = Repository::open_bare(store_dir).context("open the harness store")?;
    let odb = repo.odb().context("open the store's objects")?;
    // Loose objects, only those the store lacks (libgit2 skips a write of an object it
    // has). A pack built in memory (libgit2's mempack) took four times longer: its dump
    // searches for deltas among every object.
    let mut entries: BTreeMap<String, Entry> = BTreeMap::new();
    let mut candidates: Vec<(&String, &Stat)> = Vec::new();
    for (path, stat) in &listing.entries {
        let known = previous
            .and_then(|p| p.entries.get(path))
            .filter(|e| e.stat == *stat);
        if let Some(known) = known {
            let blob = known.blob.filter(|b| odb.exists(*b));
            if blob.is_some() || !stat.is_savable() {
                entries.insert(
                    path.clone(),
                    Entry {
                        stat: *stat,
                        blob,
                        from_check: known.from_check,
                    },
                );
                continue;
            }
        }
        entries.insert(
            path.clone(),
            Entry {
                stat: *stat,
                blob: None,
                from_check,
            },
        );
        if stat.is_savable() {
            candidates.push((path, stat));
        }
    }
    let (mut total, mut count) = entries
        .values()
        .filter(|e| e.blob.is_some())
        .fold((0u64, 0usize), |(t, c), e| (t + e.stat.size, c + 1));
    candidates.sort_by_key(|(path, stat)| (stat.size, (*path).clone()));
    for (path, stat) in candidates {
        if count >= MOST_SAVED_IGNORED || total + stat.size > IGNORED_SAVE_BUDGET {
            break;
        }
        let Some(bytes) = content(&root.join(path_of(path)), stat.kind) else {
            continue;
        };
        let blob = odb
            .write(ObjectType::Blob, &bytes)
            .context("save an ignored file")?;
        total += bytes.len() as u64;
        count += 1;
        if let Some(entry) = entries.get_mut(path) {
            entry.blob = Some(blob);
        }
    }
    let manifest = Manifest {
        entries,
        truncated: listing.truncated,
        touched: Vec::new(),
        tree: None,
        undone_ns: None,
        redone_ns: None,
        redone: Vec::new(),
    };
    if manifest.entries.values().all(|e| e.blob.is_none()) {
        // Nothing to keep: no commit, and no pack of it.
        return Ok((manifest, None));
    }
    // The same blobs as the previous manifest (nothing saved changed): the same tree.
    let same_blobs = previous.is_some_and(|p| {
        p.tree.is_some()
            && p.entries.len() == manifest.entries.len()
            && p.entries
                .iter()
                .zip(&manifest.entries)
                .all(|((k1, e1), (k2, e2))| {
                    k1 == k2 && e1.blob == e2.blob && e1.stat.kind == e2.stat.kind
                })
    });
    let tree = match previous.and_then(|p| p.tree) {
        Some(tree) if same_blobs && odb.exists(tree) => tree,
        _ => tree_of(&repo, &manifest)?,
    };
    let mut manifest = manifest;
    manifest.tree = Some(tree);
    let commit = keep(&repo, tree)?;
    Ok((manifest, Some(commit)))
}

/// A commit in `repo` of `tree`, so that the store's `gc` keeps its blobs once a ref
/// points at it.
fn keep(repo: &Repository, tree: Oid) -> Result<Oid, Error> {
    let tree = repo.find_tree(tree).context("find the saved tree")?;
    let signature = crate::state::harness_signature()?;
    repo.commit(
        None,
        &signature,
        &signature,
        "ignored files saved",
        &tree,
        &[],
    )
    .context("record the saved ignored files")
}

/// The tree in `repo` holding every saved blob of `manifest` at its path (a symlink
/// with its mode).
fn tree_of(repo: &Repository, manifest: &Manifest) -> Result<Oid, Error> {
    let mut index = git2::Index::new().context("make an index")?;
    let unknown = IndexTime::new(0, 0);
    for (path, entry) in &manifest.entries {
        let Some(blob) = entry.blob else { continue };
        let mode = if entry.stat.kind == Kind::Symlink {
            0o120_000
        } else {
            0o100_644
        };
        index
            .add(&IndexEntry {
                ctime: unknown,
                mtime: unknown,
                dev: 0,
                ino: 0,
                mode,
                uid: 0,
                gid: 0,
                file_size: 0,
                id: blob,
                flags: 0,
                flags_extended: 0,
                path: paths::to_bytes(&path_of(path)),
            })
            .context("list a saved ignored file")?;
    }
    index
        .write_tree_to(repo)
        .context("write the saved ignored files' tree")
}

/// The manifest file `which` in run directory `run_dir`.
pub(crate) fn manifest_path(run_dir: &Path, which: Which) -> PathBuf {
    run_dir.join(format!("{}.json", which.leaf()))
}

/// The store's ref that keeps the blobs of manifest `which` of the run whose refs start
/// with `prefix` (`refs/harness/<id>/`).
pub(crate) fn ref_name(prefix: &str, which: Which) -> String {
    format!("{prefix}{}", which.leaf())
}

/// Reads manifest `which` of the run in `run_dir`; `None` when there is none (a run from
/// before manifests, or no verification yet).
pub(crate) fn read(run_dir: &Path, which: Which) -> Result<Option<Manifest>, Error> {
    let path = manifest_path(run_dir, which);
    match fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| Error::io(&path, std::io::Error::new(ErrorKind::InvalidData, e))),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&path, e)),
    }
}

/// Writes manifest `which` of the run in `run_dir`, whole or not at all.
pub(crate) fn write(run_dir: &Path, which: Which, manifest: &Manifest) -> Result<(), Error> {
    let path = manifest_path(run_dir, which);
    let bytes =
        serde_json::to_vec(manifest).map_err(|e| Error::io(&path, std::io::Error::other(e)))?;
    let mut file = tempfile::NamedTempFile::new_in(run_dir).map_err(|e| Error::io(run_dir, e))?;
    file.write_all(&bytes).map_err(|e| Error::io(&path, e))?;
    file.persist(&path).map_err(|e| Error::io(&path, e.error))?;
    Ok(())
}

/// How one path differs from a manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Change {
    /// The manifest lacks it.
    Created,
    /// Its kind, content or mode differ.
    Changed,
    /// The manifest has it; it is gone.
    Deleted,
}

/// Every path of `now` or `base` that differs, sorted. A path whose stat data differs
/// is compared by content (and mode) where `base` saved it, so a file rewritten the same
/// is not a change; where it did not, different stat data is a change.
pub(crate) fn differences(root: &Path, base: &Manifest, now: &Listing) -> Vec<(String, Change)> {
    let mut found = Vec::new();
    for (path, stat) in &now.entries {
        match base.entries.get(path) {
            None => found.push((path.clone(), Change::Created)),
            Some(entry) if entry.stat == *stat => {}
            Some(entry) => {
                if !same(root, path, entry, stat) {
                    found.push((path.clone(), Change::Changed));
                }
            }
        }
    }
    for path in base.entries.keys() {
        if !now.entries.contains_key(path) {
            found.push((path.clone(), Change::Deleted));
        }
    }
    found.sort();
    found
}

/// True if and only if the entry at `path`, now of stat data `now`, is what `entry` saved:
/// the same kind, a directory, or the same content and permission bits.
fn same(root: &Path, path: &str, entry: &Entry, now: &Stat) -> bool {
    if entry.stat.kind != now.kind {
        return false;
    }
    match now.kind {
        Kind::Dir => true,
        Kind::Special => false,
        Kind::File | Kind::Symlink => {
            let Some(blob) = entry.blob else {
                return false;
            };
            if now.kind == Kind::File && entry.stat.mode & 0o7777 != now.mode & 0o7777 {
                return false;
            }
            if now.size != entry.stat.size {
                return false;
            }
            content(&root.join(path_of(path)), now.kind).is_some_and(|bytes| hash(&bytes) == blob)
        }
    }
}

/// `changes` split by whose they are: those the run (or the undo or redo before) made,
/// and the paths changed after `end(path)` (a change time in ns, `None` for no end) by
/// someone else, which are left as they are. A new entry changed after the end is
/// dropped silently (it is the user's, and nothing was there); a changed one is named
/// in the second list, sorted. Directories carry no change time here and stay in the
/// first list: one is only removed once empty, so nothing in it is lost. A deleted path
/// is restored: the content put back is what was there, so nothing is lost either.
pub(crate) fn split_after(
    changes: Vec<(String, Change)>,
    now: &Listing,
    end: impl Fn(&str) -> Option<i64>,
) -> (Vec<(String, Change)>, Vec<PathBuf>) {
    let mut ours = Vec::new();
    let mut left = Vec::new();
    for (path, change) in changes {
        let later = now.entries.get(&path).is_some_and(|stat| {
            stat.kind != Kind::Dir && end(&path).is_some_and(|end| stat.ctime_ns > end)
        });
        match (later, change) {
            (false, _) | (true, Change::Deleted) => ours.push((path, change)),
            (true, Change::Created) => {}
            (true, Change::Changed) => left.push(path_of(&path)),
        }
    }
    left.sort();
    (ours, left)
}

/// The blob id of `bytes`.
fn hash(bytes: &[u8]) -> Oid {
    Oid::hash_object(ObjectType::Blob, bytes).unwrap_or(Oid::ZERO_SHA1)
}

/// What [`put_back`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PutBack {
    /// Paths written back as the manifest has them, sorted.
    pub(crate) restored: Vec<PathBuf>,
    /// Paths removed (the manifest lacks them), sorted.
    pub(crate) removed: Vec<PathBuf>,
    /// Paths that differ and could not be put back (not saved, or the write failed),
    /// sorted.
    pub(crate) not_restored: Vec<PathBuf>,
}

/// Puts the paths in `changes` back as `base` has them, reading saved content from
/// `store`: created ones removed, changed and deleted ones rewritten where saved. Where
/// not saved, an entry a verification wrote is removed (`remove_unsaved_checks`); any
/// other is left and named.
pub(crate) fn put_back(
    root: &Path,
    store: &Repository,
    base: &Manifest,
    changes: &[(String, Change)],
    remove_unsaved_checks: bool,
) -> PutBack {
    let mut done = PutBack::default();
    // Removals deepest first, so a directory a command made goes after what it holds.
    for (path, change) in changes.iter().rev() {
        if *change != Change::Created {
            continue;
        }
        let relative = path_of(path);
        let removed = if now_is_dir(root, &relative) {
            // Only once empty: it may hold what is not listed here (a file the file
            // tools wrote, which the snapshots restore, or a nested repository).
            match fs::remove_dir(root.join(&relative)) {
                Err(e) if e.kind() == ErrorKind::DirectoryNotEmpty => continue,
                removed => removed,
            }
        } else {
            remove(root, &relative)
        };
        match removed {
            Err(e) if e.kind() != ErrorKind::NotFound => done.not_restored.push(relative),
            _ => done.removed.push(relative),
        }
    }
    // Writes shallowest first, so a directory is made before what goes in it.
    for (path, change) in changes {
        if *change == Change::Created {
            continue;
        }
        let relative = path_of(path);
        let Some(entry) = base.entries.get(path) else {
            continue;
        };
        let written = match (entry.stat.kind, entry.blob) {
            (Kind::Dir, _) => make_dirs(root, &relative).map(|()| true),
            (Kind::File | Kind::Symlink, Some(blob)) => store
                .find_blob(blob)
                .map_err(|e| std::io::Error::other(e.message().to_owned()))
                .and_then(|b| write_entry(root, &relative, &entry.stat, b.content()))
                .map(|()| true),
            _ if entry.from_check && remove_unsaved_checks => {
                remove(root, &relative).map(|()| true)
            }
            _ => Ok(false),
        };
        match written {
            Ok(true) => done.restored.push(relative),
            _ => done.not_restored.push(relative),
        }
    }
    done.restored.sort();
    done.removed.sort();
    done.not_restored.sort();
    done
}

/// True if and only if `relative` is a real directory under real directories now.
fn now_is_dir(root: &Path, relative: &Path) -> bool {
    is_under_real_dirs(root, relative)
        && fs::symlink_metadata(root.join(relative)).is_ok_and(|m| m.is_dir())
}

/// Removes whatever is at `relative` (a directory with what it holds, never following a
/// symlink); gone already is done.
fn remove(root: &Path, relative: &Path) -> std::io::Result<()> {
    if !is_under_real_dirs(root, relative) {
        // Reached through a symlink: what is there is not in the workspace, and the
        // symlink itself is an entry of its own.
        return Ok(());
    }
    let full = root.join(relative);
    let removed = match fs::symlink_metadata(&full) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(&full),
        Ok(_) => fs::remove_file(&full),
        Err(e) => Err(e),
    };
    match removed {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// True if and only if every directory above `relative` is a real one.
fn is_under_real_dirs(root: &Path, relative: &Path) -> bool {
    relative
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .all(|a| fs::symlink_metadata(root.join(a)).is_ok_and(|m| m.is_dir()))
}

/// Makes `relative` and every directory above it real directories: a symlink or file in
/// the way is removed first (a command may have put `.venv/bin -> /elsewhere`, through
/// which a write would leave the workspace).
fn make_dirs(root: &Path, relative: &Path) -> std::io::Result<()> {
    let mut ancestors: Vec<&Path> = relative
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .collect();
    ancestors.reverse();
    for dir in ancestors {
        let full = root.join(dir);
        match fs::symlink_metadata(&full) {
            Ok(m) if m.is_dir() => continue,
            Ok(_) => fs::remove_file(&full)?,
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        fs::create_dir(&full)?;
    }
    Ok(())
}

/// Writes `bytes` at `relative` as a new file (or symlink) of `stat`'s mode and
/// modification time, after removing what is there: never through a hard link or a
/// symlink a command left.
fn write_entry(root: &Path, relative: &Path, stat: &Stat, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = relative.parent() {
        make_dirs(root, parent)?;
    }
    remove(root, relative)?;
    let full = root.join(relative);
    imp_write::write(&full, stat, bytes)
}

#[cfg(unix)]
mod imp_write {
    use std::fs::{self, OpenOptions};
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    use std::path::Path;

    use super::{Kind, Stat};

    pub(super) fn write(full: &Path, stat: &Stat, bytes: &[u8]) -> std::io::Result<()> {
        if stat.kind == Kind::Symlink {
            let target = crate::paths::from_bytes(bytes);
            return std::os::unix::fs::symlink(target, full);
        }
        let permissions = stat.mode & 0o7777;
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(full)?;
        file.write_all(bytes)?;
        let seconds = stat.mtime_ns.div_euclid(1_000_000_000);
        let nanos = stat.mtime_ns.rem_euclid(1_000_000_000);
        let mtime = u64::try_from(seconds)
            .ok()
            .zip(u32::try_from(nanos).ok())
            .map(|(s, n)| std::time::UNIX_EPOCH + std::time::Duration::new(s, n));
        if let Some(mtime) = mtime {
            file.set_modified(mtime)?;
        }
        fs::set_permissions(full, fs::Permissions::from_mode(permissions))
    }
}

// Never compiled where mutation testing runs (Linux): its mutants could not be built.
#[cfg(not(unix))]
#[cfg_attr(test, mutants::skip)]
mod imp_write {
    use std::path::Path;

    use super::Stat;

    pub(super) fn write(full: &Path, _stat: &Stat, bytes: &[u8]) -> std::io::Result<()> {
        std::fs::write(full, bytes)
    }
}

/// Serializes an optional object id as hex text.
mod hex_option {
    use git2::Oid;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(oid: &Option<Oid>, s: S) -> Result<S::Ok, S::Error> {
        match oid {
            Some(oid) => s.serialize_some(&oid.to_string()),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Oid>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| Oid::from_str(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}
