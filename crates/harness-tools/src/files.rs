//! `read_file`, `write_file` and `edit_file`: harness-edit's view, write and replace.

use std::io::ErrorKind;

use harness_edit::{Change, Editor, Error as EditError};
use harness_exec::{Redactor, has_marker};
use harness_sandbox::{Access, Workspace};
use harness_schema::{Coercion, EditFile, ReadFile, ToolArgs, ToolName, WriteFile};
use serde_json::Value;

use crate::failure::{Failure, sandbox};
use crate::result::{Detail, Summary, ToolResult};

/// Numbered lines of a file, capped by the editor's limits with a note on how to read on.
pub(crate) fn read_file(editor: &Editor<'_>, args: &ReadFile) -> ToolResult {
    let start = args.start_line.map(|line| line as usize);
    let end = args.end_line.map(|line| line as usize);
    match editor.view(&args.path, start, end) {
        Ok(view) => {
            let detail = Detail::Viewed {
                first_line: view.first_line(),
                last_line: view.last_line(),
                total_lines: view.total_lines(),
            };
            ToolResult::success(
                Summary::new(ToolName::ReadFile.as_str(), &args.path, detail),
                view.text().to_owned(),
            )
        }
        Err(error) => fail(ToolName::ReadFile.as_str(), &args.path, &error),
    }
}

/// A new file, or with `overwrite` a whole file's new content; the diff of the change.
///
/// The markers of redacted values in the content are written as the values they stand for
/// (see [`restore`]).
///
/// An existing file of more than `rewrite_lines` lines is not replaced whole: the model is
/// told to change it with `edit_file`.
pub(crate) fn write_file(
    editor: &Editor<'_>,
    workspace: &Workspace,
    redactor: &Redactor,
    args: &WriteFile,
    rewrite_lines: usize,
) -> ToolResult {
    let tool = ToolName::WriteFile.as_str();
    if args.overwrite
        && let Ok(current) = workspace.read_to_string(&args.path)
        && current.lines().count() > rewrite_lines
    {
        let message = format!(
            "{} has {} lines, more than the {rewrite_lines} that write_file replaces whole, \
             so nothing was written: a whole file this long is where answers are cut off and \
             lines are lost. Change it with edit_file: old_text copied exactly from the file \
             (the lines to change and a few around them), new_text what they become; or, in \
             a code block under its path, show only the functions you change.",
            args.path,
            current.lines().count()
        );
        return ToolResult::failure(tool, &args.path, &message);
    }
    let content = match restore(workspace, redactor, tool, &args.path, &args.content) {
        Ok(content) => content,
        Err(refused) => return *refused,
    };
    let written = editor.write(&args.path, &content, args.overwrite.into());
    changed(tool, &args.path, written)
}

/// One exact, unique replacement, or with `replace_all` every occurrence; the diff of the
/// change.
///
/// The markers of redacted values in `old_text` and `new_text` are read as the values they
/// stand for (see [`restore`]), so `old_text` matches the file's real text.
pub(crate) fn edit_file(
    editor: &Editor<'_>,
    workspace: &Workspace,
    redactor: &Redactor,
    args: &EditFile,
) -> ToolResult {
    let tool = ToolName::EditFile.as_str();
    let old_text = redactor.restore(&args.old_text).text;
    let new_text = match restore(workspace, redactor, tool, &args.path, &args.new_text) {
        Ok(new_text) => new_text,
        Err(refused) => return *refused,
    };
    let replaced = if args.replace_all {
        editor.replace_all(&args.path, &old_text, &new_text)
    } else {
        editor.replace(&args.path, &old_text, &new_text)
    };
    changed(tool, &args.path, replaced)
}

/// `text`, to be written to `path`, with every marker of a redacted value the model was
/// shown replaced by that value: a file read redacted and written back keeps its secrets.
///
/// Refused, with a message that says which marker and why:
///
/// 1. a marker that stands for one of the harness's own secrets (the values of its
///    secret-named variables): no tool writes those into the workspace;
/// 2. marker-like text that this run did not give out (a marker mistyped, invented, or
///    the plain `[REDACTED]`) where `path` holds a secret: writing it would put a marker
///    where the secret was.
///
/// Marker-like text anywhere else is only text, written as sent.
fn restore(
    workspace: &Workspace,
    redactor: &Redactor,
    tool: &str,
    path: &str,
    text: &str,
) -> Result<String, Box<ToolResult>> {
    if !has_marker(text) {
        return Ok(text.to_owned());
    }
    let restored = redactor.restore(text);
    if let Some(marker) = restored.withheld.first() {
        let message = format!(
            "{marker} stands for a secret of the harness itself, which no tool writes into \
             the workspace; leave it out of what you write to {path}"
        );
        return Err(Box::new(ToolResult::failure(tool, path, &message)));
    }
    if restored.unknown.is_empty() {
        return Ok(restored.text);
    }
    // A file that cannot be read (a new one, say) holds no secret to overwrite.
    let original = workspace.read_to_string(path).unwrap_or_default();
    let standing = restored
        .unknown
        .iter()
        .find(|at| redactor.stands_for_secret(&original, &restored.text, (*at).clone()));
    if let Some(at) = standing {
        let marker = &restored.text[at.clone()];
        let message = format!(
            "{marker} is not a marker this run showed you, and it stands where {path} holds \
             a secret: writing it would replace the secret with the marker. Send each marker \
             exactly as read_file showed it ([REDACTED:<rule>:<number>]), or leave that line \
             out of an edit_file"
        );
        return Err(Box::new(ToolResult::failure(tool, path, &message)));
    }
    Ok(restored.text)
}

/// The result of a call that changes a file: its diff, or why nothing was changed.
fn changed(tool: &str, path: &str, change: Result<Change, EditError>) -> ToolResult {
    match change {
        Ok(change) if change.diff().is_empty() => {
            let detail = Detail::Changed {
                added: 0,
                removed: 0,
            };
            let text = format!("No change: {path} already has exactly this content.\n");
            ToolResult::success(Summary::new(tool, path, detail), text)
        }
        Ok(change) => {
            let detail = Detail::Changed {
                added: change.added(),
                removed: change.removed(),
            };
            ToolResult::success(Summary::new(tool, path, detail), change.diff().to_owned())
                .changing(true)
        }
        Err(error) => fail(tool, path, &error),
    }
}

/// Reads the `path` of a `read_file` or `edit_file` call without the location a model
/// copied with it from a traceback or a test's output (`calc.py:27`, `csv.js:15:1`), when
/// that is its one reading: the path as sent names nothing, and without its `:LINE` or
/// `:LINE:COLUMN` it names a file the call may read. Both are looked up through the
/// workspace, so nothing outside it is consulted. `write_file` is left alone: a new file may
/// be called anything.
pub(crate) fn drop_location(workspace: &Workspace, args: &mut ToolArgs) -> Option<Coercion> {
    let path = match args {
        ToolArgs::ReadFile(args) => &mut args.path,
        ToolArgs::EditFile(args) => &mut args.path,
        _ => return None,
    };
    let without = without_location(path)?.to_owned();
    // The workspace resolves a missing path (a file may be created there), so whether it
    // names anything is asked of the file system, where it resolved. A path the workspace
    // refuses is left as sent, to be refused.
    let names_nothing = workspace.check(path, Access::Read).is_ok_and(
        |found| matches!(found.symlink_metadata(), Err(e) if e.kind() == ErrorKind::NotFound),
    );
    let names_a_file = workspace
        .check(&without, Access::Read)
        .is_ok_and(|found| found.is_file());
    if !(names_nothing && names_a_file) {
        return None;
    }
    let coercion = Coercion {
        argument: "path",
        sent: Value::from(path.as_str()).to_string(),
        read_as: Value::from(without.as_str()).to_string(),
    };
    *path = without;
    Some(coercion)
}

/// `path` without the `:LINE` or `:LINE:COLUMN` at its end, if it has one and something is
/// left.
fn without_location(path: &str) -> Option<&str> {
    let line = without_number(path)?;
    let bare = without_number(line).unwrap_or(line);
    (!bare.is_empty()).then_some(bare)
}

/// `text` without the `:` and digits at its end, if it ends so.
fn without_number(text: &str) -> Option<&str> {
    let (head, number) = text.rsplit_once(':')?;
    let digits = !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit());
    digits.then_some(head)
}

/// A failed file tool, its message in the tools' own words.
fn fail(tool: &str, path: &str, error: &EditError) -> ToolResult {
    ToolResult::failure(tool, path, edit(error).message())
}

/// The editor's refusal as the model should read it. The editor names its own operations
/// (`replace`, `write`); the model knows them as `edit_file` and `write_file`.
fn edit(error: &EditError) -> Failure {
    match error {
        EditError::Workspace(error) => sandbox(error),
        EditError::AlreadyExists { path } => Failure::new(format!(
            "{path} already exists; to change part of it use edit_file, to replace all of its \
             content call write_file with \"overwrite\": true"
        )),
        other => Failure::new(other.to_string()),
    }
}
