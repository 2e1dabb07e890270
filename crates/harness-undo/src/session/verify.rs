//! Repair of what a command changed in `.git`: [`Session::verify`] puts back the run's
//! refs, tag and objects in the workspace as the store has them, gives back the access
//! a command took to `.git`, the store or the directories above, and reports each as a
//! [`Tampering`]. When `.git` is gone the session goes on from the store.

use std::collections::HashSet;
use std::path::PathBuf;

use git2::{Oid, Repository};

use super::{Session, give_back_git_access, tag_ref};
use crate::error::{GitContext, PathListing};
use crate::store::{self, Packer};
use crate::{CommitId, Error, access, fill};

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

impl Session {
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

    /// The public copy of `full` (see [`Publisher`](crate::public::Publisher)), made whole
    /// in the store, so that [`Session::verify`] can put it back from there.
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

    /// Gives the owner back access to everything in the workspace's `.git`
    /// (see [`access`]); true if and only if anything changed, which is kept
    /// to report.
    fn give_back_git_access(&mut self) -> bool {
        let given = give_back_git_access(&self.root);
        let changed = !given.is_empty();
        self.note_git_access(given);
        changed
    }
}
