//! `read_file`, `write_file` and `edit_file`: harness-edit's view, write and replace.

use harness_edit::{Change, Editor, Error as EditError};
use harness_schema::{EditFile, ReadFile, ToolName, WriteFile};

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
pub(crate) fn write_file(editor: &Editor<'_>, args: &WriteFile) -> ToolResult {
    let written = editor.write(&args.path, &args.content, args.overwrite.into());
    changed(ToolName::WriteFile.as_str(), &args.path, written)
}

/// One exact, unique replacement; the diff of the change.
pub(crate) fn edit_file(editor: &Editor<'_>, args: &EditFile) -> ToolResult {
    let replaced = editor.replace(&args.path, &args.old_text, &args.new_text);
    changed(ToolName::EditFile.as_str(), &args.path, replaced)
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
