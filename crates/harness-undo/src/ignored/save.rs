//! Saving the content of the ignored files within the budget: each file of at most
//! [`LARGEST_SAVED_IGNORED_FILE`], smallest first, up to [`IGNORED_SAVE_BUDGET`] and
//! [`MOST_SAVED_IGNORED`] files, as blobs in the store kept by a commit; what the last
//! manifest saved with the same stat data is reused unread. A file is read without
//! following a symlink and without waiting for a writer.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::Path;

use git2::{IndexEntry, IndexTime, ObjectType, Oid, Repository};

use super::list::Listing;
use super::manifest::{Entry, Kind, Manifest, Stat, path_of};
use crate::error::GitContext;
use crate::{Error, paths};

/// The largest ignored file whose content is saved at the start (4 MiB).
pub const LARGEST_SAVED_IGNORED_FILE: u64 = 4 * 1024 * 1024;

/// The most content, in bytes, saved of the ignored files of one state (64 MiB).
pub const IGNORED_SAVE_BUDGET: u64 = 64 * 1024 * 1024;

/// The most ignored files whose content is saved for one state.
pub const MOST_SAVED_IGNORED: usize = 20_000;

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
    // What the previous manifest's blobs already hold counts toward the budgets.
    let kept = || entries.values().filter(|e| e.blob.is_some());
    let mut total: u64 = kept().map(|e| e.stat.size).sum();
    let mut count = kept().count();
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

impl Stat {
    /// True if and only if its content could be saved: a file or symlink within the
    /// per-file limit.
    fn is_savable(&self) -> bool {
        matches!(self.kind, Kind::File | Kind::Symlink) && self.size <= LARGEST_SAVED_IGNORED_FILE
    }
}

/// The content of the entry at `full` as a blob's bytes: a file's bytes, a symlink's
/// target. `None` when it cannot be read whole within the per-file limit.
pub(super) fn content(full: &Path, kind: Kind) -> Option<Vec<u8>> {
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::super::list::list;
    use super::*;

    /// A workspace whose git ignores `cache/`, and an empty store.
    struct Scene {
        root: tempfile::TempDir,
        repo: Repository,
        store: tempfile::TempDir,
    }

    impl Scene {
        fn new() -> Scene {
            let root = tempfile::tempdir().unwrap();
            let repo = Repository::init(root.path()).unwrap();
            fs::write(root.path().join(".gitignore"), "cache/\n").unwrap();
            fs::create_dir(root.path().join("cache")).unwrap();
            let store = tempfile::tempdir().unwrap();
            Repository::init_bare(store.path()).unwrap();
            Scene { root, repo, store }
        }

        /// Writes `cache/NAME`.
        fn write(&self, name: &str, content: impl AsRef<[u8]>) {
            fs::write(self.root.path().join("cache").join(name), content).unwrap();
        }

        /// Lists the ignored files as they are now and saves them over `previous`.
        fn save(&self, previous: Option<&Manifest>, from_check: bool) -> Manifest {
            let listing = list(&self.repo, self.root.path(), &BTreeSet::new()).unwrap();
            let (manifest, _) = save(
                self.store.path(),
                self.root.path(),
                listing,
                previous,
                from_check,
            )
            .unwrap();
            manifest
        }
    }

    fn saved(manifest: &Manifest) -> usize {
        manifest
            .entries
            .values()
            .filter(|e| e.blob.is_some())
            .count()
    }

    #[test]
    fn an_unchanged_file_keeps_its_blob_and_its_writer_and_a_blob_the_store_lost_is_saved_again() {
        let scene = Scene::new();
        scene.write("a.pyc", "compiled a");
        scene.write("b.pyc", "compiled b");
        let first = scene.save(None, false);
        let blob_of = |manifest: &Manifest, path: &str| manifest.entries[path].blob;
        assert!(blob_of(&first, "cache/a.pyc").is_some());
        // The store lost b's blob since (as a prune can take it).
        let mut previous = first.clone();
        let lost = Oid::from_str("1111111111111111111111111111111111111111").unwrap();
        previous.entries.get_mut("cache/b.pyc").unwrap().blob = Some(lost);

        let second = scene.save(Some(&previous), true);
        // Unchanged, its blob held: kept unread, and still the start's, not a check's.
        let a = &second.entries["cache/a.pyc"];
        assert_eq!(a.blob, blob_of(&first, "cache/a.pyc"));
        assert!(!a.from_check);
        // Unchanged but its blob lost: read and saved again.
        assert_eq!(
            blob_of(&second, "cache/b.pyc"),
            blob_of(&first, "cache/b.pyc")
        );
    }

    #[test]
    fn what_the_last_manifest_saved_counts_toward_the_budget() {
        let scene = Scene::new();
        // The whole budget, in files of the largest size saved, and one more.
        let large = vec![b'x'; LARGEST_SAVED_IGNORED_FILE as usize];
        let files = IGNORED_SAVE_BUDGET / LARGEST_SAVED_IGNORED_FILE;
        for i in 0..=files {
            scene.write(&format!("{i:02}.bin"), &large);
        }
        let first = scene.save(None, false);
        assert_eq!(saved(&first) as u64, files);
        assert_eq!(first.entries[&format!("cache/{files:02}.bin")].blob, None);

        // One byte more, beside the unchanged files the last manifest saved: over budget.
        scene.write("small", "1");
        let second = scene.save(Some(&first), false);
        assert_eq!(saved(&second) as u64, files);
        assert_eq!(second.entries["cache/small"].blob, None);
    }

    #[test]
    fn at_most_so_many_files_are_saved_for_one_state() {
        let scene = Scene::new();
        for i in 0..=MOST_SAVED_IGNORED {
            scene.write(&format!("{i:05}"), i.to_string());
        }
        assert_eq!(saved(&scene.save(None, false)), MOST_SAVED_IGNORED);
    }

    /// Every saved blob is in the tree the store's commit keeps, at its path: a blob out of
    /// it would be lost at the store's next prune.
    fn assert_kept(store: &Path, manifest: &Manifest) {
        let repo = Repository::open_bare(store).unwrap();
        let tree = repo.find_tree(manifest.tree.expect("a tree")).unwrap();
        for (key, entry) in &manifest.entries {
            if let Some(blob) = entry.blob {
                let held = tree.get_path(&path_of(key)).map(|e| e.id()).ok();
                assert_eq!(held, Some(blob), "{key}");
            }
        }
    }

    #[test]
    fn the_kept_tree_holds_every_saved_blob_when_one_changes_and_is_reused_when_none_does() {
        let scene = Scene::new();
        scene.write("a.pyc", "compiled a");
        scene.write("b.pyc", "compiled b");
        let first = scene.save(None, false);
        assert_kept(scene.store.path(), &first);
        // Nothing changed: the same tree.
        let same = scene.save(Some(&first), false);
        assert_eq!(same.tree, first.tree);
        // One file changed: a tree that holds its new blob.
        scene.write("a.pyc", "compiled a, again");
        let changed = scene.save(Some(&first), false);
        assert_ne!(changed.tree, first.tree);
        assert_kept(scene.store.path(), &changed);
    }
}
