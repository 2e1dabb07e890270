//! [`ToolResult`]: what one tool call gives back, to the model and to the display.

use std::fmt;
use std::time::Duration;

use harness_exec::{Redactor, Status};

/// The result of one tool call.
///
/// [`ToolResult::text`] is what the model reads. A failure is a result too: its text starts
/// with `Error:` and says what to do instead, and [`ToolResult::is_error`] is true. The rest is
/// for the harness around the model: whether to checkpoint the workspace
/// ([`ToolResult::may_have_changed_workspace`]) and a [`Summary`] to show the user.
///
/// Everything in it, the summary included, has been redacted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolResult {
    /// The text for the model.
    text: String,
    /// True if and only if the call failed; then `text` starts with `Error:`.
    is_error: bool,
    /// Whether files in the workspace may differ from before the call.
    may_have_changed_workspace: bool,
    /// One line for the display.
    summary: Summary,
    /// What a command changed that its tier could not refuse, put back or moved aside.
    put_back: Vec<String>,
    /// Why a write of a language the syntax check knows was written without being parsed
    /// (its parser absent, failed or too slow); for a debug view, never the model.
    not_syntax_checked: Option<String>,
}

impl ToolResult {
    /// The text the model reads: numbered lines, a diff, a listing, matches, a command's exit
    /// status and output, or an `Error:` message that says what to do instead.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text, without copying it.
    pub fn into_text(self) -> String {
        self.text
    }

    /// True if and only if the call failed: invalid arguments, an unknown tool, a refused path
    /// or command, a failed edit, a command that timed out or was interrupted. The text then
    /// starts with `Error:`. A command that ran and exited non-zero is not an error: its exit
    /// status is the result the model needs.
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// True if and only if files in the workspace may differ from before the call: after a
    /// `write_file` or `edit_file` that changed a file, and after every `run_command` that
    /// may have started a process. The agent checkpoints after such a call.
    pub fn may_have_changed_workspace(&self) -> bool {
        self.may_have_changed_workspace
    }

    /// A compact description of the call for the display.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// What a command changed where its tier could not refuse it, and the runner put back
    /// or moved aside once it had ended (`harness_exec::Outcome::repaired` and
    /// `set_aside`: under Landlock a hook or `.git/config` written, a hidden file linked to
    /// another name), one line each, also in [`text`](ToolResult::text). Empty for every
    /// other call, and when nothing was.
    pub fn put_back(&self) -> &[String] {
        &self.put_back
    }

    /// Why the file this call wrote was written without its syntax checked, though its
    /// language is one the check knows: its parser is not installed, failed, or took too
    /// long. `None` for every other call.
    pub fn not_syntax_checked(&self) -> Option<&str> {
        self.not_syntax_checked.as_deref()
    }

    /// The same result, written without a syntax check, for this reason.
    pub(crate) fn unchecked(mut self, why: String) -> ToolResult {
        self.not_syntax_checked = Some(why);
        self
    }

    /// The same result, with `lines` as what was [put back](ToolResult::put_back).
    pub(crate) fn putting_back(mut self, lines: Vec<String>) -> ToolResult {
        self.put_back = lines;
        self
    }

    /// A successful result.
    pub(crate) fn success(summary: Summary, text: String) -> ToolResult {
        ToolResult {
            text,
            is_error: false,
            may_have_changed_workspace: false,
            summary,
            put_back: Vec::new(),
            not_syntax_checked: None,
        }
    }

    /// A write of `path` by `tool` that its caller refused before the tool ran, because
    /// the undo record it keeps could not save the file's current content first (`why`):
    /// a file no undo could bring back is not written.
    pub fn unsaved(tool: &str, path: &str, why: &str) -> ToolResult {
        ToolResult::failure(
            tool,
            path,
            &format!(
                "{path} was not changed: its current content could not be saved for undo \
                 first ({why}). Change another file, or leave this one as it is."
            ),
        )
    }

    /// A failed result: `message` is prefixed with `Error: `.
    pub(crate) fn failure(tool: &str, target: &str, message: &str) -> ToolResult {
        ToolResult {
            text: format!("Error: {message}"),
            is_error: true,
            may_have_changed_workspace: false,
            summary: Summary::new(tool, target, Detail::Failed),
            put_back: Vec::new(),
            not_syntax_checked: None,
        }
    }

    /// Marks the call as one that may have changed the workspace, or not.
    pub(crate) fn changing(mut self, may_have_changed: bool) -> ToolResult {
        self.may_have_changed_workspace = may_have_changed;
        self
    }

    /// The same result with `note` on a line of its own after the text.
    pub(crate) fn noted(mut self, note: &str) -> ToolResult {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
        self.text.push_str(note);
        self
    }

    /// Marks a result whose text starts with `Error:` as a failure.
    pub(crate) fn failed(mut self) -> ToolResult {
        self.is_error = true;
        self
    }

    /// The same result with its text and summary redacted.
    pub(crate) fn redacted(self, redactor: &Redactor) -> ToolResult {
        ToolResult {
            text: redactor.redact(&self.text).into_owned(),
            put_back: self
                .put_back
                .iter()
                .map(|line| redactor.redact(line).into_owned())
                .collect(),
            summary: Summary {
                target: redactor.redact(&self.summary.target).into_owned(),
                ..self.summary
            },
            ..self
        }
    }
}

/// One line describing a tool call, for a person watching the agent: which tool, on what, and
/// how it went. Structured, so a display can style each part; its `Display` is the plain form:
///
/// ```text
/// edit_file src/lib.rs  +3 −1
/// run_command pytest -q  exit=1 0.8s
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The tool called, as the model named it.
    tool: String,
    /// What it acted on: a path, a pattern, a command line; empty when the arguments were invalid.
    target: String,
    /// How it went.
    detail: Detail,
}

impl Summary {
    /// The tool called, as the model named it (possibly a tool that does not exist).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// What the call acted on: the path for file tools (`.` for the workspace root), the
    /// pattern for `search_text`, the command line for `run_command`; empty when the arguments
    /// did not validate.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// How the call went.
    pub fn detail(&self) -> &Detail {
        &self.detail
    }

    pub(crate) fn new(tool: &str, target: &str, detail: Detail) -> Summary {
        Summary {
            tool: tool.to_owned(),
            target: target.to_owned(),
            detail,
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.tool)?;
        if !self.target.is_empty() {
            write!(f, " {}", self.target)?;
        }
        write!(f, "  {}", self.detail)
    }
}

/// How a tool call went, in numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detail {
    /// `read_file` showed lines `first_line..=last_line` of a file of `total_lines` lines.
    Viewed {
        /// The first line shown, from 1.
        first_line: usize,
        /// The last line shown; `first_line - 1` when none was.
        last_line: usize,
        /// The lines in the file.
        total_lines: usize,
    },
    /// `write_file` or `edit_file` changed a file by this many lines.
    Changed {
        /// Lines added.
        added: usize,
        /// Lines removed.
        removed: usize,
    },
    /// `list_dir` listed `shown` entries and left out `omitted` (at least that many when the
    /// listing stopped early).
    Listed {
        /// Entries in the listing.
        shown: usize,
        /// Entries left out because of the cap.
        omitted: usize,
    },
    /// `search_text` found `matches` matching lines and showed `shown` of them.
    Found {
        /// Matching lines shown.
        shown: usize,
        /// Matching lines found.
        matches: usize,
    },
    /// `run_command` ran a command.
    Ran {
        /// How it ended.
        status: Status,
        /// How long it took.
        duration: Duration,
    },
    /// The call failed; [`ToolResult::text`] says why.
    Failed,
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detail::Viewed {
                first_line,
                last_line,
                total_lines,
            } => {
                let shown = (last_line + 1).saturating_sub(*first_line);
                write!(f, "{shown} of {total_lines} lines")
            }
            Detail::Changed { added, removed } => write!(f, "+{added} −{removed}"),
            Detail::Listed { shown, omitted: 0 } => write!(f, "{shown} entries"),
            Detail::Listed { shown, omitted } => write!(f, "{shown} entries, {omitted} more"),
            Detail::Found { shown, matches } if shown == matches => write!(f, "{matches} matches"),
            Detail::Found { shown, matches } => write!(f, "{shown} of {matches} matches"),
            Detail::Ran { status, duration } => {
                match status {
                    Status::Exited(code) => write!(f, "exit={code}")?,
                    Status::Signaled(signal) => write!(f, "signal={signal}")?,
                    Status::TimedOut(_) => f.write_str("timed out")?,
                    Status::Interrupted => f.write_str("interrupted")?,
                    // A status added later to harness-exec reads as its debug name.
                    other => write!(f, "{other:?}")?,
                }
                write!(f, " {:.1}s", duration.as_secs_f64())
            }
            Detail::Failed => f.write_str("error"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_goes_on_a_line_of_its_own() {
        let noted = |text: &str| {
            ToolResult::success(
                Summary::new("read_file", "a", Detail::Failed),
                text.to_owned(),
            )
            .noted("[Note]")
            .into_text()
        };
        assert_eq!(noted("abc"), "abc\n[Note]");
        assert_eq!(noted("abc\n"), "abc\n[Note]");
        assert_eq!(noted(""), "[Note]");
    }

    macro_rules! displays {
        ($($name:ident: $summary:expr => $text:expr,)*) => {$(
            #[test]
            fn $name() {
                assert_eq!($summary.to_string(), $text);
            }
        )*};
    }

    fn ran(status: Status, millis: u64) -> Detail {
        Detail::Ran {
            status,
            duration: Duration::from_millis(millis),
        }
    }

    displays! {
        edit_shows_added_and_removed:
            Summary::new("edit_file", "src/lib.rs", Detail::Changed { added: 3, removed: 1 })
            => "edit_file src/lib.rs  +3 −1",
        command_shows_exit_and_seconds:
            Summary::new("run_command", "pytest -q", ran(Status::Exited(1), 840))
            => "run_command pytest -q  exit=1 0.8s",
        signal: Summary::new("run_command", "a", ran(Status::Signaled(9), 50)) => "run_command a  signal=9 0.1s",
        timeout:
            Summary::new("run_command", "a", ran(Status::TimedOut(Duration::from_secs(2)), 2000))
            => "run_command a  timed out 2.0s",
        interrupted: Summary::new("run_command", "a", ran(Status::Interrupted, 0)) => "run_command a  interrupted 0.0s",
        view_counts_shown_lines:
            Summary::new("read_file", "a.rs", Detail::Viewed { first_line: 3, last_line: 5, total_lines: 9 })
            => "read_file a.rs  3 of 9 lines",
        view_of_an_empty_file:
            Summary::new("read_file", "a.rs", Detail::Viewed { first_line: 1, last_line: 0, total_lines: 0 })
            => "read_file a.rs  0 of 0 lines",
        listing_without_omissions: Summary::new("list_dir", ".", Detail::Listed { shown: 4, omitted: 0 }) => "list_dir .  4 entries",
        listing_with_omissions: Summary::new("list_dir", ".", Detail::Listed { shown: 4, omitted: 7 }) => "list_dir .  4 entries, 7 more",
        all_matches_shown: Summary::new("search_text", "fn", Detail::Found { shown: 2, matches: 2 }) => "search_text fn  2 matches",
        some_matches_shown: Summary::new("search_text", "fn", Detail::Found { shown: 2, matches: 5 }) => "search_text fn  2 of 5 matches",
        failure_without_target: Summary::new("edit_file", "", Detail::Failed) => "edit_file  error",
    }

    #[test]
    fn an_unsaved_write_is_a_failure_that_names_the_file_and_why() {
        let result = ToolResult::unsaved("write_file", "data.bin", "larger than 64 MiB");
        assert!(result.is_error());
        assert!(!result.may_have_changed_workspace());
        assert_eq!(result.summary().target(), "data.bin");
        assert_eq!(
            result.text(),
            "Error: data.bin was not changed: its current content could not be saved for \
             undo first (larger than 64 MiB). Change another file, or leave this one as it is."
        );
    }

    #[test]
    fn failure_text_starts_with_error() {
        let result = ToolResult::failure("read_file", "x", "no such file");
        assert_eq!(result.text(), "Error: no such file");
        assert!(result.is_error());
        assert!(!result.may_have_changed_workspace());
        assert_eq!(result.summary().detail(), &Detail::Failed);
        assert_eq!(result.summary().tool(), "read_file");
        assert_eq!(result.summary().target(), "x");
    }

    #[test]
    fn success_is_not_an_error_and_changes_nothing_until_told() {
        let summary = Summary::new(
            "list_dir",
            ".",
            Detail::Listed {
                shown: 0,
                omitted: 0,
            },
        );
        let result = ToolResult::success(summary, "text".to_owned());
        assert!(!result.is_error());
        assert!(!result.may_have_changed_workspace());
        assert!(result.clone().changing(true).may_have_changed_workspace());
        assert!(result.clone().failed().is_error());
        assert_eq!(result.into_text(), "text");
    }

    #[test]
    fn redaction_covers_the_text_and_the_target() {
        let summary = Summary::new("run_command", "echo API_KEY=abc123", Detail::Failed);
        let result = ToolResult::success(summary, "API_KEY=abc123".to_owned())
            .changing(true)
            .redacted(&Redactor::new());
        let plain = harness_exec::plain_markers;
        assert_eq!(plain(result.text()), "API_KEY=[REDACTED]");
        assert_eq!(plain(result.summary().target()), "echo API_KEY=[REDACTED]");
        // One value, one marker, in the text as in the summary.
        assert!(result.summary().target().ends_with(result.text()));
        assert_eq!(result.summary().tool(), "run_command");
        assert!(result.may_have_changed_workspace());
    }
}
