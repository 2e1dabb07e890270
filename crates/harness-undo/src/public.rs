//! The workspace's copy of a recorded state: the state with the hidden paths left out.
//!
//! A session writes what it records into the harness's store, never into the workspace's
//! `.git` (the store's object database takes the writes; the workspace's is only read).
//! The refs a run keeps in the workspace (`refs/harness/<id>/…`, the tag `harness/<id>`),
//! which `git diff harness/<id>` and `git log` use, point to a public copy of each state
//! commit instead: the same commit (author, time, message and shape) whose trees leave out
//! every path the caller hides ([`Hidden`]), or, where the pre-run HEAD has a file at that
//! path, hold HEAD's version of it, which the workspace has already. A state that holds no
//! hidden path is its own public copy, so for most runs the workspace's refs and the
//! store's name the same commits. The copies are made the same way every time (no clock
//! is read), so a later process makes the same ones again from the store.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository};

use crate::error::GitContext;
use crate::{Error, Hidden, paths};

/// The line a public copy adds to the state commit's message.
const NOTE: &str = "Paths the harness hides from the model and its commands are left out of \
                    this copy; the harness's store keeps them.";

/// Makes, and remembers, the public copies of one run's commits.
pub(crate) struct Publisher {
    /// What is left out.
    hidden: Hidden,
    /// The tree of the HEAD the run began on, whose version of a hidden file the public
    /// copy holds (the workspace has it already); `None` for none.
    reference: Option<Oid>,
    /// Public copies made, by the commit they copy.
    commits: HashMap<Oid, Oid>,
    /// Public trees made, by the directory (relative) and tree they copy.
    trees: HashMap<(PathBuf, Oid), Option<Oid>>,
    /// Public commits known to be whole in the store.
    in_store: HashSet<Oid>,
    /// The public tree last written whole into the workspace (at first the reference).
    filled: Option<Oid>,
}

impl Publisher {
    /// A publisher leaving out `hidden`, holding the versions of `reference` (a tree).
    pub(crate) fn new(hidden: Hidden, reference: Option<Oid>) -> Publisher {
        Publisher {
            hidden,
            reference,
            commits: HashMap::new(),
            trees: HashMap::new(),
            in_store: HashSet::new(),
            filled: reference,
        }
    }

    /// A tree the workspace has whole: the public tree last filled in, or the reference.
    pub(crate) fn filled(&self) -> Option<Oid> {
        self.filled
    }

    /// Remembers that the workspace has the public tree `tree` whole.
    pub(crate) fn note_filled(&mut self, tree: Oid) {
        self.filled = Some(tree);
    }

    /// Remembers that `public` is whole in the store.
    pub(crate) fn note_in_store(&mut self, public: Oid) -> bool {
        self.in_store.insert(public)
    }

    /// The public copy of `commit`, written through `repo` (which writes into the store and
    /// reads the workspace too). A commit the workspace's own objects (`workspace`) have
    /// whole, such as the user's HEAD, or one `repo` cannot find (history the store does
    /// not copy), is its own copy; so is one holding no hidden path with parents that are
    /// their own.
    pub(crate) fn commit(
        &mut self,
        repo: &Repository,
        workspace: &git2::Odb<'_>,
        commit: Oid,
    ) -> Result<Oid, Error> {
        if let Some(public) = self.commits.get(&commit) {
            return Ok(*public);
        }
        let Ok(found) = repo.find_commit(commit) else {
            return Ok(commit);
        };
        if workspace.exists(commit) && workspace.exists(found.tree_id()) {
            self.commits.insert(commit, commit);
            return Ok(commit);
        }
        let tree = found.tree_id();
        let public_tree = match self.tree(repo, Path::new(""), tree, self.reference)? {
            Some(public) => public,
            None => empty_tree(repo)?,
        };
        let parents: Vec<Oid> = found.parent_ids().collect();
        let mut public_parents = Vec::with_capacity(parents.len());
        for parent in &parents {
            public_parents.push(self.commit(repo, workspace, *parent)?);
        }
        let public = if public_tree == tree && public_parents == parents {
            commit
        } else {
            let message = format!(
                "{}\n{NOTE}\n",
                String::from_utf8_lossy(found.message_raw_bytes()).trim_end()
            );
            let tree = repo.find_tree(public_tree).context("find a public tree")?;
            let parents = public_parents
                .iter()
                .map(|id| repo.find_commit(*id))
                .collect::<Result<Vec<_>, _>>()
                .context("find a public parent")?;
            let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
            repo.commit(
                None,
                &found.author(),
                &found.committer(),
                &message,
                &tree,
                &parents,
            )
            .context("write the workspace's copy of a state")?
        };
        self.commits.insert(commit, public);
        Ok(public)
    }

    /// The public copy of `tree`, the directory `dir`, with `reference` the reference's
    /// tree at `dir`; `None` when nothing in it is left.
    fn tree(
        &mut self,
        repo: &Repository,
        dir: &Path,
        tree: Oid,
        reference: Option<Oid>,
    ) -> Result<Option<Oid>, Error> {
        let key = (dir.to_path_buf(), tree);
        if let Some(public) = self.trees.get(&key) {
            return Ok(*public);
        }
        let found = repo.find_tree(tree).context("find a tree to copy")?;
        let reference = match reference {
            Some(id) => Some(repo.find_tree(id).context("find HEAD's tree")?),
            None => None,
        };
        let mut builder = repo
            .treebuilder(Some(&found))
            .context("copy a tree without hidden paths")?;
        let mut changed = false;
        for entry in found.iter() {
            let name = entry.name_bytes();
            let path = dir.join(paths::from_bytes(name));
            let theirs = reference.as_ref().and_then(|r| {
                r.iter()
                    .find(|e| e.name_bytes() == name)
                    .map(|e| (e.id(), e.filemode(), e.kind()))
            });
            if self.hidden.is_hidden(&path) {
                match theirs {
                    Some((id, _, _)) if id == entry.id() => {}
                    Some((id, mode, _)) => {
                        builder
                            .insert(name, id, mode)
                            .context("hold HEAD's version of a hidden path")?;
                        changed = true;
                    }
                    None => {
                        builder.remove(name).context("leave out a hidden path")?;
                        changed = true;
                    }
                }
                continue;
            }
            if entry.kind() != Some(ObjectType::Tree) {
                continue;
            }
            let their_tree = theirs
                .filter(|(_, _, kind)| *kind == Some(ObjectType::Tree))
                .map(|(id, _, _)| id);
            match self.tree(repo, &path, entry.id(), their_tree)? {
                Some(public) if public == entry.id() => {}
                Some(public) => {
                    builder
                        .insert(name, public, entry.filemode())
                        .context("copy a directory without hidden paths")?;
                    changed = true;
                }
                None => {
                    builder
                        .remove(name)
                        .context("leave out an emptied directory")?;
                    changed = true;
                }
            }
        }
        let public = if builder.is_empty() {
            None
        } else if changed {
            Some(builder.write().context("write a public tree")?)
        } else {
            Some(tree)
        };
        self.trees.insert(key, public);
        Ok(public)
    }
}

/// The empty tree, written through `repo`.
fn empty_tree(repo: &Repository) -> Result<Oid, Error> {
    repo.treebuilder(None)
        .and_then(|builder| builder.write())
        .context("write the empty tree")
}
