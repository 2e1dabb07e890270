//! Protecting an ignored file before a file tool first writes it: [`Session::protect`]
//! records its prior content (or absence) in the pre-run state, which no snapshot would
//! otherwise hold, so that diff, undo and redo cover it like any other file.

use std::path::Path;

use git2::Repository;

use super::{Mode, Session, tag_ref};
use crate::error::GitContext;
use crate::{Error, state};

impl Session {
    /// Saves the prior content and mode of `path` (relative to the top
    /// level), or its absence, before a file tool first writes it, when git
    /// ignores it: no snapshot would hold it otherwise. From then on the
    /// pre-run state holds it as it was, every snapshot records it, and diff,
    /// undo and redo cover it like any other file. Returns true if and only
    /// if it was saved now.
    ///
    /// Nothing is saved for a path git records anyway (tracked, or not
    /// ignored), one saved before, a path that is not plainly inside the
    /// workspace (absolute, `..`, through a symlink, in `.git`), or a
    /// directory: the file tools refuse those or the snapshots cover them.
    pub fn protect(&mut self, path: &Path) -> Result<bool, Error> {
        let Some(text) = plain_relative(path) else {
            return Ok(false);
        };
        if self.record.ignored.contains(&text) {
            return Ok(false);
        }
        self.wait_for_store()?;
        self.reload()?;
        self.ensure_repository()?;
        let full = self.root.join(path);
        let metadata = std::fs::symlink_metadata(&full);
        let under_real_dirs = path
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            // A missing directory is one the tool will make.
            .all(|a| match std::fs::symlink_metadata(self.root.join(a)) {
                Ok(m) => m.is_dir(),
                Err(e) => e.kind() == std::io::ErrorKind::NotFound,
            });
        let pre = self.record.pre;
        let pre_tree = self
            .repo
            .find_tree(pre.tree)
            .context("find the pre-run tree")?;
        if !under_real_dirs
            || metadata.as_ref().is_ok_and(std::fs::Metadata::is_dir)
            || pre_tree.get_path(path).is_ok()
            || !is_ignored_even_if_missing(&self.repo, path)?
        {
            return Ok(false);
        }
        // Below what the pre-run state has as a file, the path did not
        // exist before the run (a command made it since): its absence is
        // what undo owes.
        let below_a_file = path
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .any(|a| {
                pre_tree
                    .get_path(a)
                    .is_ok_and(|e| e.kind() != Some(git2::ObjectType::Tree))
            });
        drop(pre_tree);
        let tree = if metadata.is_ok() && !below_a_file {
            state::with_files(&self.repo, &self.root, pre.tree, &[path.to_path_buf()])?
        } else {
            pre.tree
        };
        // Chained on the state it replaces, unless that is HEAD itself.
        let previous = (pre.commit != pre.head).then_some(pre.commit);
        let message = format!(
            "pre-run state of run {}, with ignored {text} as it was",
            self.record.id
        );
        let protected = state::record(
            &self.repo,
            tree,
            pre.index_tree,
            pre.head,
            &message,
            previous,
        )?;
        let public = self.set_run_ref(
            "pre",
            protected.commit,
            true,
            self.record.pre.tree,
            &message,
        )?;
        if self.mode == Mode::Workspace {
            self.repo
                .reference(&tag_ref(&self.record.id), public, true, &message)
                .context(format_args!("move the tag harness/{}", self.record.id))?;
        }
        if self.last.is_none() {
            self.last_tree = tree;
        }
        self.record.pre = protected;
        self.record.ignored.push(text);
        self.runs.write(&self.record)?;
        if let Some(scanner) = &mut self.scanner {
            scanner.force(path);
        }
        Ok(true)
    }
}

/// `path` as UTF-8 text when it is relative and made of plain names only
/// (no `..`, `.`, root or prefix) and not inside `.git`.
fn plain_relative(path: &Path) -> Option<String> {
    let mut components = path.components().peekable();
    components.peek()?;
    let plain = path
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    let first = path.components().next()?;
    if !plain || first.as_os_str() == ".git" {
        return None;
    }
    path.to_str().map(str::to_owned)
}

/// True if and only if git ignores `path`, or would once it exists.
///
/// libgit2 asks about the path, then about each of its directories as a
/// directory whether or not it exists yet, so that a pattern such as
/// `build/`, which matches only directories, covers `build/new.o` before
/// `build/` is made, and a file below an excluded directory is ignored even
/// where a later rule (`!build/keep.cfg`) names it, as git has it.
fn is_ignored_even_if_missing(repo: &Repository, path: &Path) -> Result<bool, Error> {
    repo.is_path_ignored(path)
        .context(format_args!("check whether git ignores {}", path.display()))
}
