//! The confined entry point: every operation reaches files only through a
//! [`Workspace`], so none can read or write outside it.

use std::fmt;
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use harness_sandbox::{Access, Workspace};

use crate::diff::{self, Diff};
use crate::edit;
use crate::error::Error;
use crate::text::{TextFile, check_len};
use crate::view::{self, View, ViewCap};

/// Views and edits text files inside one workspace.
///
/// Paths are taken as a model writes them and resolved by the [`Workspace`]:
/// relative to its root, or absolute inside it. Every refusal of the
/// workspace (an escape, a deny rule, a missing file) comes back unchanged as
/// [`Error::Workspace`].
#[derive(Debug, Clone, Copy)]
pub struct Editor<'w> {
    workspace: &'w Workspace,
    limits: Limits,
    guard: Option<&'w dyn WriteGuard>,
}

/// A check of every change an [`Editor`] is about to write, with the exact text the file
/// would have: a caller's rule that the workspace's own rules do not know, such as "test
/// code is not changed".
pub trait WriteGuard: fmt::Debug + Sync {
    /// `Err(reason)` refuses the write, and nothing is written; the editor returns
    /// [`Error::Refused`] with the reason. `before` is `None` for a file being created.
    ///
    /// # Errors
    ///
    /// Why the change may not be made, worded for the model that asked for it.
    fn check(&self, path: &Utf8Path, before: Option<&str>, after: &str) -> Result<(), String>;
}

/// How large a file this crate edits, how much a view shows, and how long a
/// diff may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest file, in bytes, that is viewed or edited, and the largest
    /// content written. Default: 8 MiB.
    pub max_file_len: u64,
    /// The most lines one view shows. Default: 400.
    pub view_lines: usize,
    /// The most bytes of numbered text one view shows. Default: 32 KiB.
    pub view_bytes: usize,
    /// How long the line diff of a change may search before it settles for a
    /// coarser (still correct) diff. Default: 500 ms.
    pub diff_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_len: 8 * 1024 * 1024,
            view_lines: 400,
            view_bytes: 32 * 1024,
            diff_timeout: Duration::from_millis(500),
        }
    }
}

/// Whether [`Editor::write`] may replace an existing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overwrite {
    /// Replace the file's content if it exists.
    Yes,
    /// Refuse if the file exists ([`Error::AlreadyExists`]).
    No,
}

impl From<bool> for Overwrite {
    /// `true` is [`Overwrite::Yes`], as a tool's `overwrite` argument means.
    fn from(overwrite: bool) -> Self {
        if overwrite {
            Overwrite::Yes
        } else {
            Overwrite::No
        }
    }
}

/// A change made to a file: its unified diff and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    path: Utf8PathBuf,
    diff: String,
    added: usize,
    removed: usize,
}

impl Change {
    /// The file, relative to the workspace root.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// The unified diff of the change: `--- a/<path>` (`--- /dev/null` for a
    /// new file) and `+++ b/<path>` headers, hunks with 3 lines of context.
    /// Empty when the file's content did not change.
    pub fn diff(&self) -> &str {
        &self.diff
    }

    /// The number of lines added.
    pub fn added(&self) -> usize {
        self.added
    }

    /// The number of lines removed.
    pub fn removed(&self) -> usize {
        self.removed
    }
}

impl fmt::Display for Change {
    /// The diff.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diff)
    }
}

impl<'w> Editor<'w> {
    /// An editor of the files in `workspace`, with the default [`Limits`].
    pub fn new(workspace: &'w Workspace) -> Self {
        Editor::with_limits(workspace, Limits::default())
    }

    /// An editor of the files in `workspace`, with `limits`.
    pub fn with_limits(workspace: &'w Workspace, limits: Limits) -> Self {
        Editor {
            workspace,
            limits,
            guard: None,
        }
    }

    /// The same editor, with every change checked by `guard` before it is written.
    pub fn guarded(mut self, guard: &'w dyn WriteGuard) -> Self {
        self.guard = Some(guard);
        self
    }

    /// Lines `start_line..=end_line` of the file at `path`, numbered from 1.
    ///
    /// `None` means from the first line, or to the last. An `end_line` past
    /// the end is taken as the end. At most [`Limits::view_lines`] lines and
    /// [`Limits::view_bytes`] bytes are shown; the view then ends with a note
    /// naming the `start_line` to view next.
    ///
    /// # Errors
    ///
    /// The workspace's refusals; [`Error::TooLarge`], [`Error::Binary`],
    /// [`Error::InvalidUtf8`]; [`Error::LineOutOfRange`] for a `start_line` of
    /// 0 or past the end; [`Error::InvalidRange`] for an `end_line` before `start_line`.
    pub fn view(
        &self,
        path: &str,
        start_line: Option<usize>,
        end_line: Option<usize>,
    ) -> Result<View, Error> {
        let relative = self.workspace.relative(path)?;
        let file = self.load(path, &relative)?;
        let cap = ViewCap {
            lines: self.limits.view_lines,
            bytes: self.limits.view_bytes,
        };
        view::view(&relative, &file.body, start_line, end_line, cap)
    }

    /// Replaces the only occurrence of `old_text` in the file at `path` with `new_text`.
    ///
    /// Both texts are first converted to the file's line-ending style. The
    /// match is exact otherwise: whitespace and indentation count.
    ///
    /// # Errors
    ///
    /// The workspace's refusals; those of reading (see [`Editor::view`]);
    /// [`Error::EmptyOldText`]; [`Error::NothingToChange`] when the texts are
    /// the same; [`Error::NoMatch`] with the closest region of the file and
    /// what differs; [`Error::AmbiguousMatch`] with the line of each match;
    /// [`Error::TooLarge`] when the result would be.
    pub fn replace(&self, path: &str, old_text: &str, new_text: &str) -> Result<Change, Error> {
        let relative = self.workspace.relative(path)?;
        let file = self.load(path, &relative)?;
        let body = edit::replace(&file, &relative, old_text, new_text)?;
        self.save(path, relative, &file, body)
    }

    /// Replaces every occurrence of `old_text` in the file at `path` with `new_text`: a
    /// rename within a file, where [`Editor::replace`] would refuse the several matches.
    ///
    /// Occurrences are taken left to right, each after the one before it ends (`aa` occurs
    /// once in `aaa` here). Text is matched and converted as for [`Editor::replace`].
    ///
    /// # Errors
    ///
    /// As [`Editor::replace`], but for [`Error::AmbiguousMatch`], which is the point.
    pub fn replace_all(&self, path: &str, old_text: &str, new_text: &str) -> Result<Change, Error> {
        let relative = self.workspace.relative(path)?;
        let file = self.load(path, &relative)?;
        let body = edit::replace_all(&file, &relative, old_text, new_text)?;
        self.save(path, relative, &file, body)
    }

    /// Inserts `text` as whole lines after line `after_line` of the file at
    /// `path` (0: before the first line).
    ///
    /// `text` is converted to the file's line-ending style and gets a line
    /// break where it needs one to stay on lines of its own.
    ///
    /// # Errors
    ///
    /// The workspace's refusals; those of reading (see [`Editor::view`]);
    /// [`Error::EmptyInsert`]; [`Error::LineOutOfRange`] for an `after_line`
    /// past the end; [`Error::TooLarge`] when the result would be.
    pub fn insert(&self, path: &str, after_line: usize, text: &str) -> Result<Change, Error> {
        let relative = self.workspace.relative(path)?;
        let file = self.load(path, &relative)?;
        let body = edit::insert(&file, &relative, after_line, text)?;
        self.save(path, relative, &file, body)
    }

    /// Creates the file at `path` with `content`, and any missing parent
    /// directories inside the workspace. The content is written as given.
    ///
    /// # Errors
    ///
    /// The workspace's refusals; [`Error::AlreadyExists`] when something is
    /// at `path` (edit it with [`Editor::replace`], or replace it whole with
    /// [`Editor::write`] and [`Overwrite::Yes`]); [`Error::TooLarge`].
    pub fn create(&self, path: &str, content: &str) -> Result<Change, Error> {
        let relative = self.workspace.relative(path)?;
        check_len(&relative, content.len() as u64, self.limits.max_file_len)?;
        self.check_guard(&relative, None, content)?;
        match self.workspace.metadata(path) {
            Err(harness_sandbox::Error::NotFound { .. }) => {}
            Ok(_) => return Err(Error::AlreadyExists { path: relative }),
            Err(other) => return Err(other.into()),
        }
        // Every check of the final write first, so that a refused file
        // leaves no new directories behind.
        self.workspace.check(path, Access::Write)?;
        if let Some(parent) = Utf8Path::new(path).parent() {
            self.workspace.create_dir_all(parent.as_str())?;
        }
        // Still refuses to replace a file that appeared since the check.
        self.workspace.create_new(path, content)?;
        let diff = diff::unified(
            "/dev/null",
            &format!("b/{relative}"),
            "",
            content,
            self.limits.diff_timeout,
        );
        Ok(Change::new(relative, diff))
    }

    /// Writes `content` as the whole content of the file at `path`.
    ///
    /// A missing file is created as by [`Editor::create`]. An existing file
    /// is replaced only with [`Overwrite::Yes`], and keeps its line-ending
    /// style, byte-order mark, final-newline convention and permissions.
    ///
    /// # Errors
    ///
    /// Those of [`Editor::create`]; with [`Overwrite::Yes`], those of reading
    /// the existing file (see [`Editor::view`]): a binary file is not overwritten.
    pub fn write(&self, path: &str, content: &str, overwrite: Overwrite) -> Result<Change, Error> {
        if overwrite == Overwrite::No {
            return self.create(path, content);
        }
        let relative = self.workspace.relative(path)?;
        let file = match self.load(path, &relative) {
            Err(Error::Workspace(harness_sandbox::Error::NotFound { .. })) => {
                return self.create(path, content);
            }
            loaded => loaded?,
        };
        let body = file.keep_ending(file.conform(content));
        self.save(path, relative, &file, body)
    }

    /// Reads the file at `path` (shown as `relative`) for editing: under the
    /// size limit (checked before reading), not binary, UTF-8.
    fn load(&self, path: &str, relative: &Utf8Path) -> Result<TextFile, Error> {
        let len = self.workspace.metadata(path)?.len();
        check_len(relative, len, self.limits.max_file_len)?;
        TextFile::decode(relative, self.workspace.read(path)?)
    }

    /// Writes `body` as the new text of `file`, atomically, unless nothing
    /// changed, and returns the change.
    fn save(
        &self,
        path: &str,
        relative: Utf8PathBuf,
        file: &TextFile,
        body: String,
    ) -> Result<Change, Error> {
        let bytes = file.encode(&body);
        check_len(&relative, bytes.len() as u64, self.limits.max_file_len)?;
        let diff = diff::unified(
            &format!("a/{relative}"),
            &format!("b/{relative}"),
            &file.body,
            &body,
            self.limits.diff_timeout,
        );
        // An edit that changes nothing (new text equal to old after the
        // file's conventions) has an empty diff, and leaves the file alone,
        // modification time and all.
        if !diff.text.is_empty() {
            self.check_guard(&relative, Some(&file.body), &body)?;
            self.workspace.write(path, bytes)?;
        }
        Ok(Change::new(relative, diff))
    }

    /// The guard's verdict on a change of `relative` from `before` to `after`.
    fn check_guard(
        &self,
        relative: &Utf8Path,
        before: Option<&str>,
        after: &str,
    ) -> Result<(), Error> {
        match self.guard.map(|guard| guard.check(relative, before, after)) {
            Some(Err(reason)) => Err(Error::Refused {
                path: relative.to_owned(),
                reason,
            }),
            _ => Ok(()),
        }
    }
}

impl Change {
    fn new(path: Utf8PathBuf, diff: Diff) -> Self {
        Change {
            path,
            diff: diff.text,
            added: diff.added,
            removed: diff.removed,
        }
    }
}
