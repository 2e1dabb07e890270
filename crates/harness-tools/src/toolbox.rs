//! [`Toolbox`]: the tools over one workspace, and the dispatch of a model's call.

use std::time::Duration;

use harness_edit::Editor;

use crate::guards::Guards;
use crate::symbols::{SymbolIndex, SymbolLimits};
use crate::syntax::SyntaxCheck;
use crate::test_code::TestCode;
use harness_exec::{Interrupter, Redactor, Runner};
use harness_sandbox::Workspace;
use harness_schema::{
    ArgumentError, Parsed, ToolArgs, ToolName, ToolSpec, catalogue, parse_call_forgiving,
};
use serde_json::Value;

use crate::builder::ToolboxBuilder;
use crate::limits::Limits;
use crate::result::ToolResult;
use crate::{command, files, list, search};

/// The tools a model may call, over one workspace.
///
/// A toolbox owns the [`Workspace`] every path goes through, the [`Runner`] every command goes
/// through (with its policy and timeouts) and the [`Redactor`] every result goes through. Build
/// one with [`Toolbox::new`] or [`Toolbox::builder`], offer the model [`Toolbox::specs`], and
/// hand each call it makes to [`Toolbox::call`].
#[derive(Debug)]
pub struct Toolbox {
    /// Where every path is resolved, checked and opened.
    pub(crate) workspace: Workspace,
    /// Runs `run_command`, with the policy, default timeout and output limit.
    pub(crate) runner: Runner,
    /// The timeout of a `run_command` call that sets none.
    pub(crate) timeout: Duration,
    /// The longest timeout a call gets; longer requests are lowered to it.
    pub(crate) max_timeout: Duration,
    /// Applied to every result's text and summary.
    pub(crate) redactor: Redactor,
    /// Caps on listings, searches, views and edits.
    pub(crate) limits: Limits,
    /// Test code the file tools may not change; `None` lets them change it.
    pub(crate) tests: Option<TestCode>,
    /// Parses what the file tools write; `None` writes unparsed.
    pub(crate) syntax: Option<SyntaxCheck>,
}

impl Toolbox {
    /// A toolbox over `workspace` with the default runner (blocklist policy, 30 s timeout,
    /// 600 s at most, 8 KiB of output), redaction of this process's secret-named variables,
    /// and the default [`Limits`].
    pub fn new(workspace: Workspace) -> Toolbox {
        ToolboxBuilder::new(workspace).build()
    }

    /// Starts configuring a toolbox over `workspace`.
    pub fn builder(workspace: Workspace) -> ToolboxBuilder {
        ToolboxBuilder::new(workspace)
    }

    /// The tools, as the model is offered them: the `tools` array of a chat request is
    /// `serde_json::to_value(toolbox.specs())`.
    pub fn specs(&self) -> &'static [ToolSpec] {
        catalogue()
    }

    /// The workspace the tools act in.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The caps of one call: what a caller sizing the model's answers needs to know, such
    /// as the longest file `write_file` replaces whole ([`Limits::rewrite_lines`]).
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Whether the file tools refuse to change the file at `path` as a whole because it is
    /// a test file, `path` read as the tools read it (`./test.sh`, a link, an absolute path
    /// inside the workspace). False when test edits are allowed, for a path that leads
    /// outside the workspace, and for a source file that only holds a `#[cfg(test)]`
    /// module: the tools change its code, not its tests.
    pub fn is_protected_test_file(&self, path: &str) -> bool {
        let Some(tests) = &self.tests else {
            return false;
        };
        self.workspace
            .relative(path)
            .is_ok_and(|relative| tests.is_test_file(relative.as_str()))
    }

    /// True if and only if `list_dir` would show the file `path` leads to (read as the
    /// tools read it, links followed): inside the workspace, readable under the deny rules,
    /// not in `.git`, and not ignored by the workspace's `.gitignore`, `.ignore` or exclude
    /// files. For a caller that picks files to read on its own (the head start, from paths
    /// a command printed) and must not pick what the user keeps out of git: a local
    /// settings file, a cache, a build output.
    pub fn is_listed(&self, path: &str) -> bool {
        let Ok(relative) = self.workspace.relative(path) else {
            return false;
        };
        if self
            .workspace
            .check(relative.as_str(), harness_sandbox::Access::Read)
            .is_err()
        {
            return false;
        }
        let mut seen = false;
        let walked = crate::walk::visit(&self.workspace, relative.as_str(), Some(0), |entry, _| {
            seen = entry.depth == 0 && entry.kind == crate::walk::Kind::File;
            std::ops::ControlFlow::Break(())
        });
        walked.is_ok() && seen
    }

    /// The definitions of the workspace's source files (Python, JavaScript, TypeScript,
    /// Rust, Go), scanned within `limits` from the files `list_dir` shows and `read_file`
    /// may read: see [`SymbolIndex`]. For a caller that shows the model where the code a
    /// task names is, before the model has searched for it.
    pub fn symbols(&self, limits: SymbolLimits) -> SymbolIndex {
        crate::symbols::index(&self.workspace, limits)
    }

    /// A handle that interrupts the command `run_command` is running, e.g. on Ctrl-C; the
    /// call then returns a result saying the command was interrupted.
    pub fn interrupter(&self) -> Interrupter {
        self.runner.interrupter()
    }

    /// The file a call of `name` with `arguments` would write or edit, read as
    /// [`Toolbox::call`] reads it (a number sent as the path included), so that a caller
    /// saving the file first saves the very file the call changes. `None` for a call that
    /// writes no file, or whose arguments the tool would refuse.
    pub fn written_path(&self, name: &str, arguments: &Value) -> Option<String> {
        match self.read_call(name, arguments).ok()?.args {
            ToolArgs::WriteFile(args) => Some(args.path),
            ToolArgs::EditFile(args) => Some(args.path),
            _ => None,
        }
    }

    /// Calls the tool `name` with the `arguments` the model sent (a JSON object, or a string
    /// holding one), and returns what the model should read.
    ///
    /// The arguments are validated against the tool's schema before anything runs; an
    /// argument with one unambiguous reading of its type (`"true"`, `"60"`, `"pytest -q"` for
    /// `["pytest", "-q"]`) is read so, and the result ends with a note saying what was read
    /// how ([`harness_schema::parse_call_forgiving`]). Every
    /// failure (unknown tool, invalid arguments, a refused path or command, a failed edit) is
    /// a result whose text starts with `Error:`; nothing here panics or ends the run. The text
    /// and the summary are redacted.
    pub fn call(&self, name: &str, arguments: &Value) -> ToolResult {
        self.call_limited(name, arguments, None)
    }

    /// [`Toolbox::call`], with no command the call runs taking longer than `limit`, whatever
    /// timeout the call asks for: a caller with a deadline (a run's time limit) passes the
    /// time it has left, so that no command outlasts it. The limit is rounded up to a whole
    /// second, at least one; when it is what stops the command, the result says so.
    pub fn call_within(&self, name: &str, arguments: &Value, limit: Duration) -> ToolResult {
        self.call_limited(name, arguments, Some(limit))
    }

    fn call_limited(&self, name: &str, arguments: &Value, limit: Option<Duration>) -> ToolResult {
        let result = match self.read_call(name, arguments) {
            Ok(parsed) if parsed.coerced.is_empty() => self.dispatch(&parsed.args, limit),
            Ok(parsed) => {
                let read: Vec<String> = parsed.coerced.iter().map(ToString::to_string).collect();
                self.dispatch(&parsed.args, limit).noted(&format!(
                    "[Note: {}. Send each argument as its schema says.]",
                    read.join("; ")
                ))
            }
            Err(error) => {
                let mut message = error.to_string();
                if let Some(hint) = self.insertion_hint(name, arguments) {
                    message.push('\n');
                    message.push_str(&hint);
                }
                ToolResult::failure(name, "", &message)
            }
        };
        result.redacted(&self.redactor)
    }

    /// How to add lines, for an `edit_file` sent with text to put in but no `old_text` to
    /// replace: small models mean "insert this" (an import, say) and, told only that
    /// `old_text` must not be empty, drop it and send the call again. The hint shows the
    /// shape of an insertion on the file's own first line, read through the workspace, so a
    /// file the tools may not read shows nothing. `None` for any other call.
    fn insertion_hint(&self, name: &str, arguments: &Value) -> Option<String> {
        let text = |key: &str| arguments.get(key).and_then(Value::as_str);
        if name != ToolName::EditFile.as_str() || !text("old_text").unwrap_or("").is_empty() {
            return None;
        }
        let new_text = text("new_text").filter(|new_text| !new_text.trim().is_empty())?;
        let path = text("path")?;
        let file = self.workspace.read_to_string(path).ok()?;
        let anchor = file.lines().find(|line| !line.trim().is_empty())?;
        Some(format!(
            "To add lines without replacing any, send as old_text a line {path} already has \
             next to where they go, and as new_text that line with the new lines before or \
             after it; for example old_text {} and new_text {}.",
            Value::from(anchor),
            Value::from(format!("{anchor}\n{new_text}")),
        ))
    }

    /// The call as the tools read it: its arguments parsed forgivingly, and the path of a
    /// file sent with a location (`calc.py:27`) read without it where that is its one
    /// reading ([`files::drop_location`]).
    fn read_call(&self, name: &str, arguments: &Value) -> Result<Parsed, ArgumentError> {
        let mut parsed = parse_call_forgiving(name, arguments)?;
        if let Some(coercion) = files::drop_location(&self.workspace, &mut parsed.args) {
            parsed.coerced.push(coercion);
        }
        Ok(parsed)
    }

    /// Runs a validated call.
    fn dispatch(&self, args: &ToolArgs, limit: Option<Duration>) -> ToolResult {
        let guards = Guards::new(self.tests.as_ref(), self.syntax.as_ref());
        let editor = Editor::with_limits(&self.workspace, self.limits.edit).guarded(&guards);
        let written = match args {
            ToolArgs::ReadFile(args) => return files::read_file(&editor, args),
            ToolArgs::WriteFile(args) => files::write_file(
                &editor,
                &self.workspace,
                &self.redactor,
                args,
                self.limits.rewrite_lines,
            ),
            ToolArgs::EditFile(args) => {
                files::edit_file(&editor, &self.workspace, &self.redactor, args)
            }
            ToolArgs::ListDir(args) => return list::list_dir(&self.workspace, args, &self.limits),
            ToolArgs::SearchText(args) => {
                return search::search_text(&self.workspace, args, &self.limits);
            }
            ToolArgs::RunCommand(args) => {
                if let Some(refused) = command::refuse_markers(args) {
                    return refused;
                }
                let timeouts = command::Timeouts {
                    default: self.timeout,
                    max: self.max_timeout,
                    limit,
                };
                return command::run_command(&self.runner, self.workspace.root(), args, timeouts);
            }
        };
        match guards.unchecked() {
            Some(why) => written.unchecked(why),
            None => written,
        }
    }
}
