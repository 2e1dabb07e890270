//! Listing what git ignores: every ignored file, symlink and directory of the working
//! tree with its stat data, but those below `.git`, a nested repository git sees, or
//! [`MAX_DEPTH`] levels down, up to [`MOST_LISTED_IGNORED`] entries.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use git2::Repository;

use super::manifest::{Stat, key};
use crate::Error;
use crate::error::GitContext;

/// The most ignored entries listed; the walk stops there and says so.
pub const MOST_LISTED_IGNORED: usize = 500_000;

/// How deep the walk goes; deeper directories are left out, as the scanner does.
const MAX_DEPTH: usize = crate::scan::MAX_DEPTH;

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
        // Gone since its parent was read, or unreadable (a command took the access):
        // nothing below can be listed.
        let Ok(read) = fs::read_dir(&full) else {
            continue;
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
