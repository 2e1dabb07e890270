//! What stands at a kept or hidden path, by its identity (device and inode): a path a
//! command renamed is found under its new name and renamed back, another name a command
//! gave a hidden file (a hard link) is removed.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::kept::Budget;
use super::repaired::{Change, Repaired};
use crate::isolation::WALK_LIMIT;
use crate::isolation::aside::move_aside;

/// A hidden path as it was: what stood there and how many names it had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct HiddenEntry {
    pub(super) path: PathBuf,
    pub(super) identity: (u64, u64),
    pub(super) links: u64,
}

/// Puts each of `hidden` back where it was, outermost first, and removes every other name
/// of it: `elsewhere` gives the names of an identity found in the workspace other than a
/// path.
pub(super) fn put_back(
    hidden: &[HiddenEntry],
    elsewhere: impl Fn(&Path, (u64, u64)) -> Vec<PathBuf>,
    repaired: &mut Vec<Repaired>,
) {
    // The hidden paths, outermost first: a hidden directory renamed back brings its files.
    let hidden_paths: HashSet<&Path> = hidden.iter().map(|hidden| hidden.path.as_path()).collect();
    let mut hidden = hidden.to_vec();
    hidden.sort_by_key(|hidden| hidden.path.components().count());
    for HiddenEntry { path, identity, .. } in &hidden {
        let others: Vec<PathBuf> = elsewhere(path, *identity)
            .into_iter()
            .filter(|name| !hidden_paths.contains(name.as_path()))
            // Those under a hidden path renamed back have moved with it.
            .filter(|name| name.symlink_metadata().is_ok())
            .collect();
        let mut others = others.into_iter();
        if identity_at(path) != Some(*identity)
            && let Some(moved) = others.next()
        {
            repaired.push(Repaired {
                path: path.clone(),
                result: rename_back(&moved, path),
                change: Change::Renamed(moved),
            });
        }
        for name in others {
            // A directory has one name; another name is a hard link of a file, whose
            // content is still at `path`.
            let result = std::fs::remove_file(&name).map_err(|error| error.to_string());
            repaired.push(Repaired {
                path: path.clone(),
                change: Change::Linked(name),
                result,
            });
        }
    }
}

/// Adds `path` and, for a directory, every entry under it (not following links), with its
/// identity, to `found`.
pub(super) fn collect_identities(path: &Path, found: &mut Vec<HiddenEntry>, budget: &mut Budget) {
    let mut pending = vec![path.to_owned()];
    while let Some(path) = pending.pop() {
        if budget.entries == 0 {
            return;
        }
        budget.entries -= 1;
        let Ok(metadata) = path.symlink_metadata() else {
            continue;
        };
        found.push(HiddenEntry {
            path: path.clone(),
            identity: (metadata.dev(), metadata.ino()),
            links: metadata.nlink(),
        });
        if metadata.is_dir()
            && let Ok(entries) = std::fs::read_dir(&path)
        {
            pending.extend(entries.flatten().map(|entry| entry.path()));
        }
    }
}

/// The device and inode of what stands at `path`, not followed if a link.
pub(super) fn identity(path: &Path) -> Option<(u64, u64)> {
    let metadata = path.symlink_metadata().ok()?;
    Some((metadata.dev(), metadata.ino()))
}

/// The identity of what stands at `path` now.
pub(super) fn identity_at(path: &Path) -> Option<(u64, u64)> {
    identity(path)
}

/// Renames `moved` back to `path`, moving aside whatever stands at `path` first.
pub(super) fn rename_back(moved: &Path, path: &Path) -> Result<(), String> {
    if path.symlink_metadata().is_ok() {
        move_aside(path).map_err(|error| format!("moving aside what stands there: {error}"))?;
    }
    // Its directory may have gone with it (`mv lib gone` took `lib/sub/.git`).
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|error| error.to_string())?;
    }
    std::fs::rename(moved, path).map_err(|error| error.to_string())
}

/// Every name under `root` (not following links, not into its `.git`, within
/// [`WALK_LIMIT`] entries) of what has one of the `wanted` identities.
pub(super) fn names_in(
    root: &Path,
    wanted: &HashSet<(u64, u64)>,
) -> HashMap<(u64, u64), Vec<PathBuf>> {
    names_within(root, wanted, WALK_LIMIT)
}

/// [`names_in`] within `limit` entries.
fn names_within(
    root: &Path,
    wanted: &HashSet<(u64, u64)>,
    limit: usize,
) -> HashMap<(u64, u64), Vec<PathBuf>> {
    let git = root.join(".git");
    let mut found: HashMap<(u64, u64), Vec<PathBuf>> = HashMap::new();
    let mut seen = 0usize;
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > limit {
                return found;
            }
            let path = entry.path();
            let Ok(metadata) = path.symlink_metadata() else {
                continue;
            };
            let id = (metadata.dev(), metadata.ino());
            if wanted.contains(&id) {
                found.entry(id).or_default().push(path.clone());
            }
            if metadata.is_dir() && path != git {
                pending.push(path);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(found: &HashMap<(u64, u64), Vec<PathBuf>>, root: &Path) -> Vec<PathBuf> {
        let mut names: Vec<PathBuf> = found
            .values()
            .flatten()
            .map(|name| name.strip_prefix(root).expect("under root").to_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_walk_finds_every_name_within_its_limit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::write(root.join("a"), "x").expect("w");
        for name in ["b", "c", "d"] {
            std::fs::hard_link(root.join("a"), root.join(name)).expect("ln");
        }
        let wanted = HashSet::from([identity(&root.join("a")).expect("a")]);
        assert_eq!(
            names(&names_within(&root, &wanted, 4), &root),
            ["a", "b", "c", "d"].map(PathBuf::from)
        );
        assert_eq!(
            names_within(&root, &wanted, 3).values().flatten().count(),
            3
        );
    }

    #[test]
    fn the_walk_never_looks_in_git() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(root.join(".git")).expect("mkdir");
        std::fs::create_dir_all(root.join("sub")).expect("mkdir");
        std::fs::write(root.join("a"), "x").expect("w");
        for name in ["sub/b", ".git/c"] {
            std::fs::hard_link(root.join("a"), root.join(name)).expect("ln");
        }
        let wanted = HashSet::from([identity(&root.join("a")).expect("a")]);
        assert_eq!(
            names(&names_in(&root, &wanted), &root),
            ["a", "sub/b"].map(PathBuf::from)
        );
    }

    #[test]
    fn identities_are_collected_within_the_budget() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(root.join("secrets")).expect("mkdir");
        for n in 0..5 {
            std::fs::write(root.join(format!("secrets/{n}")), "x").expect("w");
        }
        let mut found = Vec::new();
        let mut budget = Budget {
            entries: 3,
            bytes: 0,
        };
        collect_identities(&root.join("secrets"), &mut found, &mut budget);
        assert_eq!((found.len(), budget.entries), (3, 0));
        let mut found = Vec::new();
        let mut budget = Budget {
            entries: 10,
            bytes: 0,
        };
        collect_identities(&root.join("secrets"), &mut found, &mut budget);
        assert_eq!((found.len(), budget.entries), (6, 4));
    }
}
