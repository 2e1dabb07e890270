//! Keeping the workspace's repository whole: every object a run's ref there points to is in
//! the workspace's own object directory.
//!
//! A session reads the store's objects through the workspace's handle (the store is an
//! alternate of its object database), and libgit2 does not write an object that any of
//! its backends already has. So a tree or blob the store holds from an earlier run of the
//! same workspace (one cloned again at the same path, or whose objects `git gc` pruned)
//! was not written into the workspace, and a checkpoint there pointed at a tree only the
//! store had: `git fsck` reported it missing and `git gc` stopped on it. Each commit a
//! workspace ref is about to point to is filled in here first, through a handle that does
//! not read the store.

use std::collections::{HashMap, HashSet};

use git2::{ObjectType, Oid, Repository};

use crate::Error;
use crate::error::GitContext;

/// Writes into the workspace's repository `to` (opened without the store) every object of
/// `commit` that it lacks, and with `with_parents` those of each parent and its tree (not
/// the parents' parents), reading them from `from`, which reads the store too. Returns how
/// many objects were written.
///
/// `base` is a tree `to` has whole (the last one filled, or HEAD's): a subtree the same as
/// the base's at the same place is not looked into, so a checkpoint costs what changed.
pub(crate) fn fill_workspace(
    from: &Repository,
    to: &Repository,
    commit: Oid,
    with_parents: bool,
    base: Option<Oid>,
) -> Result<usize, Error> {
    let from_odb = from.odb().context("open the objects to read")?;
    let to_odb = to.odb().context("open the workspace's objects")?;
    let found = from.find_commit(commit).context("find a commit to keep")?;
    let mut commits: Vec<Oid> = if with_parents {
        found.parent_ids().collect()
    } else {
        Vec::new()
    };
    commits.push(commit);
    let mut missing = Vec::new();
    for &id in &commits {
        let tree = from
            .find_commit(id)
            .context("find a commit to keep")?
            .tree_id();
        missing_in_tree(from, &to_odb, tree, base, &mut missing)?;
    }
    // Commits last, in the order given (parents first): a commit written always has its tree.
    missing.extend(commits.into_iter().filter(|&id| !to_odb.exists(id)));
    for &id in &missing {
        let object = from_odb.read(id).context("read an object to keep")?;
        to_odb
            .write(object.kind(), object.data())
            .context("write an object into the workspace")?;
    }
    Ok(missing.len())
}

/// Writes into `to` every object of `tree` that it lacks, reading them from `from`, not
/// looking into a subtree the same as `base`'s at the same place. Returns how many.
pub(crate) fn fill_tree(
    from: &Repository,
    to: &Repository,
    tree: Oid,
    base: Option<Oid>,
) -> Result<usize, Error> {
    let from_odb = from.odb().context("open the objects to read")?;
    let to_odb = to.odb().context("open the objects to write")?;
    let mut missing = Vec::new();
    missing_in_tree(from, &to_odb, tree, base, &mut missing)?;
    for &id in &missing {
        let object = from_odb.read(id).context("read an object to keep")?;
        to_odb
            .write(object.kind(), object.data())
            .context("write an object to keep")?;
    }
    Ok(missing.len())
}

/// Adds to `missing` the blobs and trees of `tree` that `to` lacks, children before the
/// trees that hold them, not looking into a subtree that is the same as `base`'s at the
/// same place. Each object once.
fn missing_in_tree(
    from: &Repository,
    to: &git2::Odb<'_>,
    tree: Oid,
    base: Option<Oid>,
    missing: &mut Vec<Oid>,
) -> Result<(), Error> {
    let mut trees = Vec::new();
    let mut blobs = Vec::new();
    let mut seen = HashSet::new();
    let mut pending = vec![(tree, base)];
    while let Some((tree, base)) = pending.pop() {
        if Some(tree) == base || !seen.insert(tree) {
            continue;
        }
        let found = from.find_tree(tree).context("find a tree to keep")?;
        let before: HashMap<Vec<u8>, (Oid, Option<ObjectType>)> = match base {
            Some(base) => from
                .find_tree(base)
                .context("find the tree to compare with")?
                .iter()
                .map(|entry| (entry.name_bytes().to_vec(), (entry.id(), entry.kind())))
                .collect(),
            None => HashMap::new(),
        };
        for entry in found.iter() {
            let was = before.get(entry.name_bytes());
            if was.is_some_and(|(id, _)| *id == entry.id()) {
                continue;
            }
            match entry.kind() {
                Some(ObjectType::Tree) => {
                    let was_tree = was
                        .filter(|(_, kind)| *kind == Some(ObjectType::Tree))
                        .map(|(id, _)| *id);
                    pending.push((entry.id(), was_tree));
                }
                Some(ObjectType::Blob) if seen.insert(entry.id()) && !to.exists(entry.id()) => {
                    blobs.push(entry.id());
                }
                // A blob seen or there already; a submodule's commit, the submodule's to keep.
                _ => {}
            }
        }
        trees.push(tree);
    }
    missing.extend(blobs);
    // Found parents first: written in reverse, every tree follows what it holds.
    missing.extend(trees.into_iter().rev().filter(|&id| !to.exists(id)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use git2::{Signature, TreeBuilder};

    use super::*;

    /// A workspace repository, a store beside it, and a handle of the workspace that also
    /// reads the store, as a session's does.
    struct Repos {
        _dir: tempfile::TempDir,
        workspace: Repository,
        store: Repository,
        from: Repository,
    }

    fn repos() -> Repos {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Repository::init(dir.path().join("ws")).unwrap();
        let store = Repository::init_bare(dir.path().join("store")).unwrap();
        let from = Repository::open(workspace.path()).unwrap();
        from.odb()
            .unwrap()
            .add_disk_alternate(&store.path().join("objects").to_string_lossy())
            .unwrap();
        Repos {
            _dir: dir,
            workspace,
            store,
            from,
        }
    }

    fn blob(repo: &Repository, text: &str) -> Oid {
        repo.odb()
            .unwrap()
            .write(ObjectType::Blob, text.as_bytes())
            .unwrap()
    }

    fn tree(repo: &Repository, entries: &[(&str, Oid, i32)]) -> Oid {
        let mut builder: TreeBuilder<'_> = repo.treebuilder(None).unwrap();
        for (name, id, mode) in entries {
            builder.insert(name, *id, *mode).unwrap();
        }
        builder.write().unwrap()
    }

    fn commit(repo: &Repository, tree: Oid) -> Oid {
        let signature = Signature::now("t", "t@x").unwrap();
        let tree = repo.find_tree(tree).unwrap();
        repo.commit(None, &signature, &signature, "c", &tree, &[])
            .unwrap()
    }

    #[test]
    fn what_only_the_store_has_is_written_and_nothing_twice() {
        let repos = repos();
        // `a` the workspace has already; the rest only the store.
        let a = blob(&repos.workspace, "a");
        blob(&repos.store, "a");
        let b = blob(&repos.store, "b");
        let dir = tree(&repos.store, &[("b", b, 0o100644)]);
        let top = tree(&repos.store, &[("a", a, 0o100644), ("d", dir, 0o040000)]);
        let tip = commit(&repos.store, top);
        let to = Repository::open(repos.workspace.path()).unwrap();
        // b, d, the top tree and the commit.
        assert_eq!(
            fill_workspace(&repos.from, &to, tip, false, None).unwrap(),
            4
        );
        for id in [a, b, dir, top, tip] {
            assert!(repos.workspace.odb().unwrap().exists(id));
        }
        assert_eq!(
            fill_workspace(&repos.from, &to, tip, false, None).unwrap(),
            0
        );
    }

    #[test]
    fn a_subtree_the_same_as_the_bases_is_not_looked_into() {
        let repos = repos();
        let b = blob(&repos.store, "b");
        let dir = tree(&repos.store, &[("b", b, 0o100644)]);
        let base = tree(&repos.store, &[("d", dir, 0o040000)]);
        let a = blob(&repos.store, "a");
        let top = tree(&repos.store, &[("a", a, 0o100644), ("d", dir, 0o040000)]);
        let tip = commit(&repos.store, top);
        let to = Repository::open(repos.workspace.path()).unwrap();
        // The base is taken to be whole in the workspace: `d` and `b` are not looked at.
        assert_eq!(
            fill_workspace(&repos.from, &to, tip, false, Some(base)).unwrap(),
            3
        );
        assert!(!repos.workspace.odb().unwrap().exists(b));
        // A commit of the base itself (a clean start: the pre-run state is HEAD's tree)
        // needs only the commit.
        let same = commit(&repos.store, base);
        assert_eq!(
            fill_workspace(&repos.from, &to, same, false, Some(base)).unwrap(),
            1
        );
        assert!(!repos.workspace.odb().unwrap().exists(base));
    }
}
