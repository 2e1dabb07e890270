//! The words of a run's review, shared by the front ends that review, take back and keep
//! a run (`harness diff`, `undo`, `redo`, and the MCP server's `diff_run`, `undo_run`,
//! `redo_run`): a diff's stat, the paths an undo restored or kept, and what it did to
//! ignored files. Each is [`Shown`] text, safe on a terminal and the same over MCP.

use std::path::PathBuf;

use harness_undo::{Diff, FileStatus, IgnoredChange, IgnoredChanges, Session};

use crate::shown;
use crate::shown::{Shown, Visible};

/// One line per ignored path the run made, changed or deleted, `A  .venv/x.pth  (ignored)`,
/// then their count; nothing when there are none. They are in no patch: git does not
/// record them, and they are often binary (bytecode, interpreters).
pub fn ignored_stat(ignored: &IgnoredChanges) -> Shown {
    let mut text = Shown::default();
    let all = ignored.all();
    if all.is_empty() {
        return text;
    }
    for (path, change) in &all {
        let status = match change {
            IgnoredChange::Created => "A",
            IgnoredChange::Deleted => "D",
            // Changed, and any kind a later harness-undo adds.
            _ => "M",
        };
        let note = if ignored.not_restorable.iter().any(|p| p == path) {
            "(ignored; not saved at the start: undo cannot put it back)"
        } else {
            "(ignored)"
        };
        text.push(&shown!("{}  {}  {}\n", status, path.display(), note));
    }
    text.push(&shown!(
        "{} ignored path{} changed (git does not record them; undo puts them back)\n",
        all.len(),
        if all.len() == 1 { "" } else { "s" }
    ));
    text
}

/// One line per file, `M  src/lib.rs  +3 −1` (binary files say so), then the totals.
pub fn stat(diff: &Diff) -> Shown {
    let mut text = Shown::default();
    for file in &diff.files {
        let status = match file.status {
            FileStatus::Added => "A",
            FileStatus::Deleted => "D",
            FileStatus::Renamed => "R",
            FileStatus::TypeChanged => "T",
            // Modified, and any kind a later harness-undo adds.
            _ => "M",
        };
        let path = match &file.old_path {
            Some(old) => shown!("{} → {}", old.display(), file.path.display()),
            None => file.path.display().shown(),
        };
        let lines = if file.binary {
            shown!("binary")
        } else {
            shown!("+{} −{}", file.additions, file.deletions)
        };
        text.push(&shown!("{}  {}  {}\n", status, path, lines));
    }
    let count = diff.files.len();
    text.push(&shown!(
        "{} file{} changed, +{} −{}\n",
        count,
        if count == 1 { "" } else { "s" },
        diff.additions(),
        diff.deletions()
    ));
    text
}

/// How many paths a line names before it only counts the rest: a command can change any
/// number of files, and a line naming half a million of them helps nobody.
pub const NAMED_PATHS: usize = 20;

/// The first [`NAMED_PATHS`] of `paths`, joined by commas, then ` and N more` for the rest.
pub fn named_paths(paths: &[PathBuf]) -> Shown {
    let named: Vec<Shown> = paths
        .iter()
        .take(NAMED_PATHS)
        .map(|path| path.display().shown())
        .collect();
    let mut line = Shown::join(&named, ", ");
    if paths.len() > named.len() {
        line.push(&shown!(" and {} more", paths.len() - named.len()));
    }
    line
}

/// The line with which `undo` and the MCP `undo_run` name the files an undo kept
/// ([`harness_undo::Restored::kept`]); `None` when it kept none.
pub fn kept_line(restored: &harness_undo::Restored) -> Option<String> {
    if restored.kept.is_empty() {
        return None;
    }
    let kept: Vec<String> = restored
        .kept
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    Some(format!(
        "kept, as they were there before the run, when git ignored them (a command made them \
         visible): {}",
        kept.join(", ")
    ))
}

/// The line naming the paths whose owner got back the access a command took
/// ([`Session::access_given_back`]); `None` when there are none.
pub fn access_line(session: &Session) -> Option<Shown> {
    access_line_for(&session.access_given_back())
}

/// The line naming the paths `given` whose owner got back the access a command took;
/// `None` when there are none.
pub fn access_line_for(given: &[PathBuf]) -> Option<Shown> {
    if given.is_empty() {
        return None;
    }
    Some(shown!(
        "access:        a command took your access to {}; given back (read, and write on \
         directories that had to change). Git records no other permission: check them",
        named_paths(given)
    ))
}

/// What an undo or redo did to ignored files ([`harness_undo::IgnoredRestore`]), in lines:
/// what it removed and restored, what it could not restore, and what it left as changed
/// after `since` ("the run" for undo, "the undo" for redo). `harness undo` and `redo` print
/// them, and the MCP `undo_run` and `redo_run` answer with them.
pub fn ignored_lines(ignored: &harness_undo::IgnoredRestore, since: &str) -> Vec<Shown> {
    let mut lines = Vec::new();
    let mut done = Vec::new();
    for (verb, paths) in [
        ("removed", &ignored.removed),
        ("restored", &ignored.restored),
    ] {
        if !paths.is_empty() {
            done.push(shown!("{} {}: {}", verb, paths.len(), named_paths(paths)));
        }
    }
    if !done.is_empty() {
        lines.push(shown!(
            "ignored files (git does not record them): {}",
            Shown::join(&done, "; ")
        ));
    }
    // The pronoun of `paths`, and with "is".
    let it = |paths: &[PathBuf]| -> (&'static str, &'static str) {
        if paths.len() == 1 {
            ("it", "it is")
        } else {
            ("they", "they are")
        }
    };
    if !ignored.not_restored.is_empty() {
        lines.push(shown!(
            "warning: NOT restored: {} (ignored; too large to save at the start, changed by a \
             command, or could not be written): {} as the commands left {}",
            named_paths(&ignored.not_restored),
            if ignored.not_restored.len() == 1 {
                "it stays"
            } else {
                "they stay"
            },
            it(&ignored.not_restored).0
        ));
    }
    if !ignored.left.is_empty() {
        lines.push(shown!(
            "note: {} (ignored) changed after {}, not by it: left as {}",
            named_paths(&ignored.left),
            since,
            it(&ignored.left).1
        ));
    }
    lines
}
