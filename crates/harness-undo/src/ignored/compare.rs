//! What differs from a manifest, and whose change it is: a path whose stat data differs
//! is compared by content (and mode) where it was saved ([`differences`]); a path whose
//! change time is past the run's end (or the undo's) was changed by someone else
//! ([`split_after`]). No program can set a change time back, so a backdated file is
//! still seen.

use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid};

use super::list::Listing;
use super::manifest::{Entry, Kind, Manifest, Stat, path_of};
use super::save::content;

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
