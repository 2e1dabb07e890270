//! Views and edits of text files inside a confined workspace, each change
//! returned as a unified diff.
//!
//! This is how a model changes code in the harness: not by writing whole
//! files, which silently drops whatever it did not think to repeat, but by
//! replacing one exact, unique piece of text with another, and seeing the
//! diff of what changed. An [`Editor`] reaches files only through a
//! [`harness_sandbox::Workspace`], so no path it is given can read or write
//! outside the workspace.
//!
//! ```
//! use harness_edit::{Editor, Error, Overwrite};
//! use harness_sandbox::Workspace;
//!
//! # fn main() -> Result<(), Error> {
//! # let temporary = tempfile::tempdir().expect("a temporary directory");
//! let workspace = Workspace::new(temporary.path())?;
//! let editor = Editor::new(&workspace);
//!
//! editor.create("src/calc.py", "def add(a, b):\n    return a - b\n")?;
//! let change = editor.replace("src/calc.py", "return a - b", "return a + b")?;
//! assert_eq!(
//!     change.diff(),
//!     "--- a/src/calc.py\n+++ b/src/calc.py\n\
//!      @@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
//! );
//! assert_eq!((change.added(), change.removed()), (1, 1));
//!
//! // Text that occurs twice is refused: the edit would be a guess.
//! editor.insert("src/calc.py", 2, "\ndef twice(a):\n    return a + a\n")?;
//! let err = editor.replace("src/calc.py", "return a +", "return a *").expect_err("two matches");
//! assert!(err.to_string().starts_with("old_text matches 2 places in src/calc.py (starting on lines 2, 5)"));
//!
//! // Numbered lines, as a model reads them.
//! let view = editor.view("src/calc.py", Some(4), None)?;
//! assert_eq!(view.text(), "     4\tdef twice(a):\n     5\t    return a + a\n[lines 4-5 of 5 shown]\n");
//!
//! // Whole-file writes replace an existing file only when asked to.
//! assert!(matches!(editor.write("src/calc.py", "", Overwrite::No), Err(Error::AlreadyExists { .. })));
//!
//! // No path leads outside.
//! let escape = editor.view("../../etc/passwd", None, None).expect_err("outside the workspace");
//! assert!(matches!(escape, Error::Workspace(harness_sandbox::Error::Escape { .. })));
//! # Ok(())
//! # }
//! ```
//!
//! # Operations
//!
//! - [`Editor::view`]: numbered lines, capped at 400 lines or 32 KiB, with a
//!   note naming the `start_line` to view next.
//! - [`Editor::replace`]: `old_text` must occur exactly once. No match: the
//!   error shows the region of the file most like `old_text` and says, line by
//!   line, what differs (indentation, other whitespace, line ending, text, a
//!   line missing or added).
//!   Several matches (overlapping ones count): the error lists their lines
//!   and asks for more context. An empty `old_text`, or one equal to
//!   `new_text`, is refused.
//! - [`Editor::replace_all`]: every occurrence of `old_text`, left to right and
//!   none inside another (a rename); at least one must exist, and the other
//!   refusals of [`Editor::replace`] hold.
//! - [`Editor::insert`]: whole lines after a line number (0: at the top).
//! - [`Editor::create`]: a new file, with missing parent directories; an
//!   existing file is refused.
//! - [`Editor::write`]: a whole file, replacing an existing one only with
//!   [`Overwrite::Yes`].
//!
//! Each change returns a [`Change`]: the unified diff (`a/<path>` and
//! `b/<path>` headers relative to the workspace root, `/dev/null` for a new
//! file, 3 lines of context) and the counts of added and removed lines.
//!
//! # What a file keeps
//!
//! - Its line-ending style: text from the model is converted to the style of
//!   the file's first line break, CRLF or LF. Lines the edit does not touch
//!   keep their bytes, even in a file of mixed styles.
//! - Its UTF-8 byte-order mark, if it has one (views and matches never see it).
//! - Whether its last line ends with a line break: an edit that would add or
//!   remove the final line break is adjusted so it does not. (An empty file has
//!   no convention, so text written to it stays as given.)
//! - Its permissions, and its integrity: the workspace writes a temporary file
//!   and renames it over the old one, so a reader sees the old file or the new
//!   one, never half of one. An edit that changes nothing writes nothing.
//!
//! # What is refused before editing
//!
//! In this order: a path the workspace refuses ([`Error::Workspace`]); a file
//! over [`Limits::max_file_len`] (8 MiB by default; checked before reading
//! it); a binary file, one with a NUL byte in its first 8 KiB; a file that is
//! not valid UTF-8. Content that would exceed the size limit is not written.
//!
//! # Diffs under a deadline
//!
//! Only the changed region of a file is diffed (the common prefix and suffix
//! are found by comparing bytes), so a one-line edit of a large file costs
//! little more than the edit. The line diff itself runs under
//! [`Limits::diff_timeout`]: when a pathological change (thousands of
//! scattered small edits) makes it search longer, the part still unresolved is
//! shown as all of its old lines removed and all of its new lines added. That
//! diff is coarser, but still correct: applied to the old file it gives the
//! new one. The harness never waits on it.
//!
//! # What this crate does not do
//!
//! It does not confine anything itself, run commands, or keep history: the
//! workspace decides which paths are allowed, and undoing a change is
//! `harness-undo`'s job.

mod diff;
mod edit;
mod editor;
mod error;
mod matching;
mod text;
mod view;

pub use editor::{Change, Editor, Limits, Overwrite, WriteGuard};
pub use error::{Closest, Error};
pub use view::View;
