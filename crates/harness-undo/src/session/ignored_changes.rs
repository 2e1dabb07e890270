//! The ignored files (which no snapshot holds) that differ from the start of the run:
//! [`Session::ignored_changes`] lists them, and [`Session::unrecorded_ignored_changes`]
//! names those undo cannot put back. Undo, redo and the reset before a verification
//! read the manifests and the listing through the helpers here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use git2::Repository;

use super::Session;
use crate::Error;
use crate::error::GitContext;
use crate::ignored::{self, Change, Manifest, Which};

/// Ignored files (which no snapshot holds) that differ from the start of the run:
/// [`Session::ignored_changes`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IgnoredChanges {
    /// Made during the run, sorted; undo removes them.
    pub created: Vec<PathBuf>,
    /// There at the start, with another content, kind or mode now, sorted.
    pub changed: Vec<PathBuf>,
    /// There at the start, gone now, sorted.
    pub deleted: Vec<PathBuf>,
    /// Those changed or deleted whose content was not saved at the start (too large, or
    /// over the budget), sorted: undo cannot put them back.
    pub not_restorable: Vec<PathBuf>,
    /// True if and only if the ignored files were too many to list whole
    /// ([`MOST_LISTED_IGNORED`](crate::MOST_LISTED_IGNORED)): changes past the limit are
    /// not seen.
    pub incomplete: bool,
}

impl IgnoredChanges {
    /// True if and only if no ignored file differs.
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.changed.is_empty() && self.deleted.is_empty()
    }

    /// Every differing path with its change, sorted by path.
    pub fn all(&self) -> Vec<(&Path, IgnoredChange)> {
        let mut all: Vec<(&Path, IgnoredChange)> = self
            .created
            .iter()
            .map(|p| (p.as_path(), IgnoredChange::Created))
            .chain(
                self.changed
                    .iter()
                    .map(|p| (p.as_path(), IgnoredChange::Changed)),
            )
            .chain(
                self.deleted
                    .iter()
                    .map(|p| (p.as_path(), IgnoredChange::Deleted)),
            )
            .collect();
        all.sort();
        all
    }
}

/// How an ignored path differs from the start of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum IgnoredChange {
    /// Made during the run.
    Created,
    /// Changed during the run.
    Changed,
    /// Deleted during the run.
    Deleted,
}

impl Session {
    /// Ignored files (no snapshot holds them) that differ from the start of the run:
    /// made, changed or deleted, as the crate docs' "Ignored files" tells. Undo puts them
    /// back, but [`IgnoredChanges::not_restorable`]. Empty for a run begun before the
    /// harness listed ignored files.
    pub fn ignored_changes(&self) -> Result<IgnoredChanges, Error> {
        let Some(base) = self.ignored_manifest(Which::Start)? else {
            return Ok(IgnoredChanges::default());
        };
        let listing = self.ignored_listing()?;
        let mut changes = IgnoredChanges {
            incomplete: listing.truncated || base.truncated,
            ..IgnoredChanges::default()
        };
        for (key, change) in ignored::differences(&self.root, &base, &listing) {
            let path = ignored::path_of(&key);
            let saved = base
                .entries
                .get(&key)
                .is_some_and(|e| e.blob.is_some() || e.stat.kind == ignored::Kind::Dir);
            match change {
                Change::Created => changes.created.push(path.clone()),
                Change::Changed => changes.changed.push(path.clone()),
                Change::Deleted => changes.deleted.push(path.clone()),
            }
            if change != Change::Created && !saved {
                changes.not_restorable.push(path);
            }
        }
        Ok(changes)
    }

    /// What commands changed that undo cannot put back: ignored files changed or
    /// deleted whose content was too large to save at the start
    /// ([`IgnoredChanges::not_restorable`]), and directories nested too deep to record
    /// (named `dir/`). Counted in full; the first 20 are named, sorted. A change is
    /// told by the time of the inode's last change, which no command can set back,
    /// not by the modification time, which `touch -d`, `cp -p` or `tar x` do.
    pub fn unrecorded_ignored_changes(&self) -> Result<(usize, Vec<PathBuf>), Error> {
        let too_deep: Vec<PathBuf> = self
            .scanner
            .iter()
            .flat_map(|scanner| scanner.too_deep())
            .map(|dir| dir.join(""))
            .collect();
        let mut changed = match self.ignored_changes_unrestorable() {
            Ok(changed) => changed,
            // The ignored files cannot be listed (an ignored tree nested too deep for
            // libgit2); the directories too deep to record are known all the same.
            Err(_) if !too_deep.is_empty() => Vec::new(),
            Err(error) => return Err(error),
        };
        changed.extend(too_deep);
        changed.sort();
        let count = changed.len();
        changed.truncate(crate::error::LISTED_PATHS);
        Ok((count, changed))
    }

    /// The ignored files of [`Session::unrecorded_ignored_changes`]: those changed or
    /// deleted that undo cannot put back.
    fn ignored_changes_unrestorable(&self) -> Result<Vec<PathBuf>, Error> {
        let mut unrestorable = self.ignored_changes()?.not_restorable;
        unrestorable.extend(
            self.ignored_listing()?
                .too_deep
                .into_iter()
                .map(|dir| dir.join("")),
        );
        Ok(unrestorable)
    }

    /// Manifest `which` of this run, without the paths the file tools protected (the
    /// snapshots hold those).
    pub(super) fn ignored_manifest(&self, which: Which) -> Result<Option<Manifest>, Error> {
        let Some(mut manifest) = ignored::read(&self.run_dir(), which)? else {
            return Ok(None);
        };
        for path in &self.record.ignored {
            manifest.entries.remove(&ignored::key(Path::new(path)));
        }
        Ok(Some(manifest))
    }

    /// The ignored files now, without the paths the file tools protected.
    pub(super) fn ignored_listing(&self) -> Result<ignored::Listing, Error> {
        let skip: BTreeSet<PathBuf> = self.record.ignored.iter().map(PathBuf::from).collect();
        // A handle of its own: a restore may just have rewritten the ignore rules, and a
        // cached reading of them could be stale.
        let fresh = Repository::open(self.repo.path()).context("open the repository")?;
        if fresh.is_bare() {
            fresh
                .set_workdir(&self.root, false)
                .context("use the workspace as the working tree")?;
        }
        ignored::list(&fresh, &self.root, &skip)
    }

    /// The ignored paths found now, of those `touched` names only: what an undo or a redo
    /// saves before it replaces them, and compares them by.
    pub(super) fn ignored_listing_of(
        &self,
        touched: &BTreeSet<&String>,
    ) -> Result<ignored::Listing, Error> {
        let listing = self.ignored_listing()?;
        Ok(ignored::Listing {
            entries: listing
                .entries
                .into_iter()
                .filter(|(k, _)| touched.contains(k))
                .collect(),
            truncated: false,
            too_deep: Vec::new(),
        })
    }
}
