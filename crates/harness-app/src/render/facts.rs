//! [`Facts`]: each fact of a run rendered by one function, for the run shown as it happens
//! (the `harness` command's live display) and for `harness show`, which reads the facts back.
//!
//! A fact is a transcript [`Record`]: the live display renders the record of each event as it
//! happens (`Record::of_event`), `harness show` the records it reads back, so both show a fact
//! by the same code. Where the two looks of one fact differ, the [`View`] chooses:
//!
//! - the run and its outcome: shown only when replayed (live, the run's header and its summary
//!   show them);
//! - a reply: replayed, its heading and text; live, nothing here (the text streamed as it came);
//! - a tool call: live, its detail coloured alone, a head start noted after it, and an edit's
//!   diff (its first 40 lines) or an error's first line; replayed, the whole summary coloured,
//!   a head start marked before it, and the result, in full, when the call failed (or with
//!   `--full`);
//! - a verification: live, a `✔`/`✘` verdict and a failure's last 12 lines; replayed, the
//!   numbered command with its verdict, and its whole output when it failed (or with `--full`);
//! - a nudge: live, "harness to model:"; an elision: live, counted with its reason; what
//!   changed undo's `.git`: live, the findings on one line, replayed, one a line; another
//!   attempt: live, "of N" and that the model starts again, replayed, a new paragraph;
//! - a message the harness wrote: shown only when replayed (no event carries one);
//! - a checkpoint, and a checkpoint that failed: the same in both.
//!
//! Every string in a record came from the model, a file, a command or the task, so each is
//! shown through [`Shown`].

use harness_agent::{CheckReason, Message, Outcome, Record, Role, RunReport};
use harness_schema::ToolName;

use super::Style;
use crate::shown;
use crate::shown::Shown;

/// Which look of a run the facts are rendered for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// As the run goes, on a terminal or in a log.
    Live,
    /// Read back from the transcript by `harness show`; `full` also prints every tool
    /// result.
    Replay {
        /// Print every tool result and verification output, not only the failed ones.
        full: bool,
    },
}

/// Renders the facts of one run, in order, as lines to print.
pub struct Facts {
    /// The colours.
    style: Style,
    /// Live or replayed.
    view: View,
    /// How many attempts the run may make, from its first record (live shows "attempt 2 of
    /// 3").
    attempts: u32,
    /// What a command line the user may paste starts with (`harness`, or the path of the
    /// executable), so that a command the facts name works as printed.
    program: String,
}

/// The most lines of an edit's diff shown while the run goes on (`harness diff` shows all).
const DIFF_LINES: usize = 40;

/// The most lines of a failed verification's output shown while the run goes on.
const FAILURE_LINES: usize = 12;

impl Facts {
    /// A renderer in `style` for `view`; a command line it prints starts with `program`.
    pub fn new(style: Style, view: View, program: &str) -> Facts {
        Facts {
            style,
            view,
            attempts: 1,
            program: program.to_owned(),
        }
    }

    /// The lines that show `record`, each to be printed on a line of its own (a line may
    /// hold newlines: a diff, a heading that opens a paragraph); none for a fact this view
    /// does not show.
    pub fn lines(&mut self, record: &Record) -> Vec<Shown> {
        match record {
            Record::Run {
                task,
                workspace,
                verification,
                budgets,
                ..
            } => {
                self.attempts = budgets.as_ref().map_or(1, |budgets| budgets.attempts);
                self.run(task, workspace, verification.as_deref())
            }
            Record::Message(message) => self.message(message),
            Record::Reply {
                step,
                content,
                prompt_tokens,
                completion_tokens,
                seconds,
                ..
            } => self.reply(
                *step,
                content,
                (*prompt_tokens, *completion_tokens),
                *seconds,
            ),
            Record::Tool {
                step,
                tool,
                summary,
                is_error,
                result,
                ..
            } => self.tool(*step, tool, summary, *is_error, result),
            Record::Verification {
                attempt,
                command,
                passed,
                detail,
                output,
                changed,
                reason,
                ..
            } => self.verification(
                (*attempt, *reason),
                command,
                *passed,
                detail,
                output,
                changed,
            ),
            Record::Checkpoint { number, .. } => self.checkpoint(*number),
            Record::CheckpointFailed { error, .. } => self.checkpoint_failed(error),
            Record::Tampered {
                command, findings, ..
            } => self.tampered(command, findings),
            Record::Nudge { content, .. } => self.nudge(content),
            Record::Trim { elided, .. } => self.trim(*elided),
            Record::Attempt {
                attempt,
                previous,
                reason,
                reverted,
            } => self.attempt(*attempt, *previous, reason, *reverted),
            Record::Outcome(report) => self.outcome(report),
            other => self.unknown(other),
        }
    }

    /// The run's task, workspace and verification command; live, the run's header showed
    /// them.
    fn run(&self, task: &str, workspace: &str, verification: Option<&str>) -> Vec<Shown> {
        if self.view == View::Live {
            return Vec::new();
        }
        let verification = match verification {
            Some(command) => shown!("verification: {}", Shown::line(command)),
            None => shown!("verification: none"),
        };
        vec![
            shown!("task: {}", Shown::line(task)),
            shown!("workspace: {}", Shown::line(workspace)),
            verification,
        ]
    }

    /// A message the harness wrote to the model; the system prompt by its size only.
    fn message(&self, message: &Message) -> Vec<Shown> {
        if message.role == Role::System {
            let chars = message.content.chars().count();
            return vec![
                self.style
                    .dim(&shown!("[system prompt, {} characters]", chars)),
            ];
        }
        vec![shown!(
            "{}: {}",
            role(message.role),
            Shown::text(&message.content)
        )]
    }

    /// A reply's heading (step, time, tokens) and its text; live, the text was shown as it
    /// streamed.
    fn reply(
        &self,
        step: u32,
        content: &str,
        tokens: (Option<u64>, Option<u64>),
        seconds: f64,
    ) -> Vec<Shown> {
        if self.view == View::Live {
            return Vec::new();
        }
        let tokens = match tokens {
            (Some(prompt), Some(completion)) => shown!(", {}+{} tokens", prompt, completion),
            _ => Shown::default(),
        };
        let heading = shown!("step {} ({}s{})", step, format!("{seconds:.1}"), tokens);
        let mut lines = vec![shown!("\n{}", self.style.bold(&heading))];
        if !content.trim().is_empty() {
            lines.push(Shown::text(content.trim_end()));
        }
        lines
    }

    /// A tool call: its summary (`edit_file calc.py  +1 −1`), and what it did or why it
    /// failed.
    fn tool(
        &self,
        step: u32,
        tool: &str,
        summary: &str,
        is_error: bool,
        result: &str,
    ) -> Vec<Shown> {
        let View::Replay { full } = self.view else {
            return self.tool_live(step, tool, summary, is_error, result);
        };
        let summary = Shown::line(summary);
        let line = if is_error {
            self.style.red(&summary)
        } else {
            summary
        };
        let marker = if step == 0 { "▹ (head start)" } else { "▸" };
        let mut lines = vec![shown!("{} {}", marker, line)];
        if full || is_error {
            lines.extend(self.indented(result));
        }
        lines
    }

    /// A tool call as it ends: the summary with its detail coloured, then an error's first
    /// line or an edit's diff.
    fn tool_live(
        &self,
        step: u32,
        tool: &str,
        summary: &str,
        is_error: bool,
        result: &str,
    ) -> Vec<Shown> {
        // A summary is `tool target  detail`, and no detail holds two spaces (harness-tools'
        // `Detail`): the last two split the detail off, to colour it alone.
        let (subject, detail) = summary.rsplit_once("  ").unwrap_or((summary, ""));
        let detail = Shown::line(detail);
        let detail = if is_error {
            self.style.red(&detail)
        } else {
            self.style.dim(&detail)
        };
        // Step 0 is the harness's own look around, shown to the model before its first turn.
        let note = if step == 0 {
            self.style.dim(&shown!("  (head start, for the model)"))
        } else {
            Shown::default()
        };
        let marker = self.style.cyan(&shown!("▸"));
        let subject = Shown::line(subject);
        let mut lines = vec![shown!("{} {}  {}{}", marker, subject, detail, note)];
        if is_error {
            let first = result.lines().next().unwrap_or_default();
            lines.push(shown!("  {}", self.style.dim(&Shown::line(first))));
        } else if ToolName::parse(tool).is_some_and(ToolName::changes_files) && !result.is_empty() {
            lines.push(self.diff(result));
        }
        lines
    }

    /// An edit's diff, coloured, cut at [`DIFF_LINES`] with a note of what was left out.
    fn diff(&self, diff: &str) -> Shown {
        let head: Vec<&str> = diff.lines().take(DIFF_LINES).collect();
        let mut shown = self.style.diff(&Shown::text(&head.join("\n")));
        let total = diff.lines().count();
        if total > DIFF_LINES {
            shown.push(&self.style.dim(&shown!(
                "[… {} more lines: {} shows all]\n",
                total - DIFF_LINES,
                format!("{} diff", self.program)
            )));
        }
        shown.trim_end()
    }

    /// A run of the verification command (its number, and why it ran): its verdict, why it
    /// ran unless the model said it was done (so a replay says which check decided the run),
    /// and the output of a failure.
    fn verification(
        &self,
        (attempt, reason): (u32, CheckReason),
        command: &str,
        passed: bool,
        detail: &str,
        output: &str,
        changed: &[String],
    ) -> Vec<Shown> {
        let View::Replay { full } = self.view else {
            return self.verification_live(passed, detail, output, changed);
        };
        let verdict = match (passed, changed.is_empty()) {
            (true, _) => "passed".to_owned(),
            (false, true) => "failed".to_owned(),
            (false, false) => format!(
                "does not count: what it loads besides the code under test changed: {}",
                changed.join("; ")
            ),
        };
        // A check on "done" is the rule, and reads as transcripts from before the reason
        // was recorded did; any other says why it ran.
        let why = match reason {
            CheckReason::Done => String::new(),
            other => format!("; {}", other.describe()),
        };
        let line = shown!(
            "verification {}: `{}` {} ({}{})",
            attempt,
            Shown::line(command),
            Shown::line(&verdict),
            Shown::line(detail),
            Shown::line(&why)
        );
        let mut lines = vec![if passed {
            self.style.green(&line)
        } else {
            self.style.red(&line)
        }];
        if full || !passed {
            lines.extend(self.indented(output));
        }
        lines
    }

    /// A run of the verification command as it ends: a verdict, and the last
    /// [`FAILURE_LINES`] of a failure's output.
    fn verification_live(
        &self,
        passed: bool,
        detail: &str,
        output: &str,
        changed: &[String],
    ) -> Vec<Shown> {
        if !changed.is_empty() {
            let line = shown!(
                "✘ verification does not count  {}: what it loads besides the code \
                 under test changed: {}",
                detail,
                Shown::line(&changed.join("; "))
            );
            return vec![self.style.red(&line)];
        }
        if passed {
            return vec![
                self.style
                    .green(&shown!("✔ verification passed  {}", detail)),
            ];
        }
        let mut lines = vec![self.style.red(&shown!("✘ verification failed  {}", detail))];
        let output: Vec<&str> = output.lines().collect();
        let tail = &output[output.len().saturating_sub(FAILURE_LINES)..];
        for line in tail {
            lines.push(shown!("  {}", self.style.dim(&Shown::line(line))));
        }
        lines
    }

    /// A snapshot of the workspace was taken.
    fn checkpoint(&self, number: u32) -> Vec<Shown> {
        vec![self.style.dim(&shown!("· checkpoint {}", number))]
    }

    /// A snapshot, or keeping the state before the run, failed; the run went on.
    fn checkpoint_failed(&self, error: &str) -> Vec<Shown> {
        vec![self.style.yellow(&shown!("! {}", Shown::text(error)))]
    }

    /// A command changed what undo relies on in `.git`: the command and what was found.
    fn tampered(&self, command: &str, findings: &[String]) -> Vec<Shown> {
        if self.view == View::Live {
            let note = shown!(
                "! the command `{}` changed what undo relies on, which is not allowed: {}",
                command,
                findings.join("; ")
            );
            return vec![self.style.yellow(&note)];
        }
        let mut lines = vec![self.style.yellow(&shown!(
            "! the command `{}` changed what undo relies on, which is not allowed:",
            Shown::line(command)
        ))];
        for finding in findings {
            lines.push(self.style.yellow(&shown!("    {}", Shown::line(finding))));
        }
        lines
    }

    /// What the model was told about how it is working.
    fn nudge(&self, content: &str) -> Vec<Shown> {
        let note = match self.view {
            View::Live => shown!("! harness to model: {}", Shown::text(content)),
            View::Replay { .. } => shown!("! {}", Shown::text(content)),
        };
        vec![self.style.yellow(&note)]
    }

    /// Older tool results elided to fit the context window.
    fn trim(&self, elided: usize) -> Vec<Shown> {
        let note = match self.view {
            View::Live => shown!(
                "· elided {} to fit the model's context window",
                count(elided as u64, "older tool result")
            ),
            View::Replay { .. } => shown!("· elided {} older results", elided),
        };
        vec![self.style.dim(&note)]
    }

    /// Another attempt began, from the state before the run.
    fn attempt(
        &self,
        attempt: u32,
        previous: Outcome,
        reason: &str,
        reverted: usize,
    ) -> Vec<Shown> {
        let reverted = count(reverted as u64, "path");
        let note = match self.view {
            View::Live => shown!(
                "↺ attempt {} of {}: the last one ended {} ({}); its changes were reverted \
                 ({}), and the model starts again",
                attempt,
                self.attempts,
                previous,
                Shown::line(reason),
                reverted
            ),
            View::Replay { .. } => shown!(
                "\n↺ attempt {}: the last one ended {} ({}); its changes were reverted ({})",
                attempt,
                previous,
                Shown::line(reason),
                reverted
            ),
        };
        vec![self.style.bold(&note)]
    }

    /// How the run ended; live, the run's summary shows it.
    fn outcome(&self, report: &RunReport) -> Vec<Shown> {
        if self.view == View::Live {
            return Vec::new();
        }
        vec![shown!(
            "\n{} {} — {} ({}, {}, {}+{} tokens, {}s)",
            self.style.bold(&shown!("outcome:")),
            report.outcome,
            Shown::line(&report.reason),
            count(u64::from(report.steps), "step"),
            count(report.tool_calls as u64, "tool call"),
            report.prompt_tokens,
            report.completion_tokens,
            format!("{:.1}", report.duration.as_secs_f64())
        )]
    }

    /// A kind of record newer than this renderer: replayed, shown by name rather than
    /// dropped.
    fn unknown(&self, record: &Record) -> Vec<Shown> {
        if self.view == View::Live {
            return Vec::new();
        }
        vec![self.style.dim(&shown!("· a {} record", record.kind()))]
    }

    /// `text`'s lines, indented and dimmed: a tool result or a command's output.
    fn indented(&self, text: &str) -> Vec<Shown> {
        Shown::text(text)
            .lines()
            .map(|line| shown!("    {}", self.style.dim(&line)))
            .collect()
    }
}

/// `n` and `noun`, plural unless `n` is 1: "1 tool call", "3 tool calls", "0 paths".
pub fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// The name of who wrote a message, as the transcript shows it.
fn role(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_agent::RecordedBudgets;

    /// The text of every line `records` render to, without colours.
    fn shown(view: View, records: &[Record]) -> Vec<String> {
        let mut facts = Facts::new(Style::choose(false, None), view, "harness");
        records
            .iter()
            .flat_map(|record| facts.lines(record))
            .map(|line| line.as_str().to_owned())
            .collect()
    }

    fn tool(step: u32, tool: &str, summary: &str, is_error: bool, result: &str) -> Record {
        Record::Tool {
            step,
            id: "1".to_owned(),
            tool: tool.to_owned(),
            arguments: serde_json::Value::Null,
            origin: harness_agent::CallOrigin::Structured,
            summary: summary.to_owned(),
            is_error,
            may_have_changed_workspace: false,
            result: result.to_owned(),
            seconds: 0.1,
        }
    }

    const REPLAY: View = View::Replay { full: false };

    #[test]
    fn a_tool_call_live_colours_its_detail_and_replayed_its_summary() {
        let edit = tool(
            2,
            "edit_file",
            "edit_file calc.py  +1 −1",
            false,
            "--- a/calc.py\n+++ b/calc.py\n-x\n+y\n",
        );
        let failed = tool(
            0,
            "run_command",
            "run_command ls   error",
            true,
            "Error: no\nmore",
        );
        assert_eq!(
            shown(View::Live, &[edit.clone(), failed.clone()]),
            [
                "▸ edit_file calc.py  +1 −1",
                "--- a/calc.py\n+++ b/calc.py\n-x\n+y",
                "▸ run_command ls   error  (head start, for the model)",
                "  Error: no",
            ]
        );
        assert_eq!(
            shown(REPLAY, &[edit.clone(), failed]),
            [
                "▸ edit_file calc.py  +1 −1",
                "▹ (head start) run_command ls   error",
                "    Error: no",
                "    more",
            ]
        );
        assert_eq!(shown(View::Replay { full: true }, &[edit]).len(), 5);
        let colored = Facts::new(Style::choose(true, None), View::Live, "harness").lines(&tool(
            1,
            "read_file",
            "read_file a  error",
            true,
            "Error: x",
        ));
        assert!(
            colored[0]
                .as_str()
                .contains("read_file a  \x1b[31merror\x1b[0m"),
            "{colored:?}"
        );
    }

    #[test]
    fn a_long_diff_live_is_cut_with_a_note() {
        let diff: String = (0..45).map(|n| format!("+{n}\n")).collect();
        let lines = shown(
            View::Live,
            &[tool(1, "write_file", "write_file a  +45 −0", false, &diff)],
        );
        assert!(lines[1].starts_with("+0\n"), "{lines:?}");
        assert!(lines[1].contains("+39\n[… 5 more lines: "), "{lines:?}");
        assert!(lines[1].ends_with(" diff shows all]"), "{lines:?}");
    }

    #[test]
    fn a_verification_in_each_view() {
        let output: String = (1..=14).map(|n| format!("line {n}\n")).collect();
        let check = |passed: bool, changed: &[&str]| Record::Verification {
            attempt: 2,
            command: "pytest -q".to_owned(),
            argv: vec!["pytest".to_owned(), "-q".to_owned()],
            passed,
            detail: "exit=1 0.8s".to_owned(),
            output: output.clone(),
            reason: harness_agent::CheckReason::Done,
            changed: changed.iter().map(|path| (*path).to_owned()).collect(),
        };
        let failed = shown(View::Live, &[check(false, &[])]);
        assert_eq!(failed[0], "✘ verification failed  exit=1 0.8s");
        assert_eq!(
            failed[1..],
            (3..=14).map(|n| format!("  line {n}")).collect::<Vec<_>>()[..]
        );
        assert_eq!(
            shown(View::Live, &[check(true, &[]), check(false, &["a", "b"])]),
            [
                "✔ verification passed  exit=1 0.8s",
                "✘ verification does not count  exit=1 0.8s: what it loads besides the code under test changed: a; b",
            ]
        );
        let replayed = shown(REPLAY, &[check(true, &[]), check(false, &["a"])]);
        assert_eq!(
            replayed[0],
            "verification 2: `pytest -q` passed (exit=1 0.8s)"
        );
        assert_eq!(
            replayed[1],
            "verification 2: `pytest -q` does not count: what it loads besides the code under test changed: a (exit=1 0.8s)"
        );
        let after_edit = Record::Verification {
            attempt: 2,
            command: "pytest -q".to_owned(),
            argv: vec!["pytest".to_owned(), "-q".to_owned()],
            passed: true,
            detail: "exit=1 0.8s".to_owned(),
            output: output.clone(),
            reason: harness_agent::CheckReason::AfterEdit,
            changed: Vec::new(),
        };
        assert_eq!(
            shown(REPLAY, &[after_edit])[0],
            "verification 2: `pytest -q` passed (exit=1 0.8s; after an edit, as the check is quick)"
        );
        assert_eq!(
            replayed[2..],
            (1..=14)
                .map(|n| format!("    line {n}"))
                .collect::<Vec<_>>()[..]
        );
    }

    #[test]
    fn notes_in_each_view() {
        let records = [
            Record::Run {
                format: 2,
                task: "fix it".to_owned(),
                workspace: "/w".to_owned(),
                context_window: Some(8192),
                verification: None,
                budgets: Some(RecordedBudgets {
                    max_steps: 5,
                    max_seconds: 60.0,
                    max_failed_calls: 5,
                    max_tokens: None,
                    attempts: 3,
                }),
            },
            Record::Nudge {
                step: 1,
                content: "stop".to_owned(),
            },
            Record::Trim { step: 1, elided: 1 },
            Record::Checkpoint {
                step: 1,
                number: 4,
                label: "l".to_owned(),
            },
            Record::CheckpointFailed {
                step: 1,
                error: "disk full".to_owned(),
            },
            Record::Tampered {
                step: 1,
                command: "git reset".to_owned(),
                findings: vec!["a".to_owned(), "b".to_owned()],
            },
            Record::Attempt {
                attempt: 2,
                previous: Outcome::Stuck,
                reason: "looped".to_owned(),
                reverted: 1,
            },
        ];
        let stuck = Outcome::Stuck.to_string();
        assert_eq!(
            shown(View::Live, &records),
            [
                "! harness to model: stop".to_owned(),
                "· elided 1 older tool result to fit the model's context window".to_owned(),
                "· checkpoint 4".to_owned(),
                "! disk full".to_owned(),
                "! the command `git reset` changed what undo relies on, which is not allowed: a; b"
                    .to_owned(),
                format!(
                    "↺ attempt 2 of 3: the last one ended {stuck} (looped); its changes were \
                     reverted (1 path), and the model starts again"
                ),
            ]
        );
        assert_eq!(
            shown(REPLAY, &records),
            [
                "task: fix it".to_owned(),
                "workspace: /w".to_owned(),
                "verification: none".to_owned(),
                "! stop".to_owned(),
                "· elided 1 older results".to_owned(),
                "· checkpoint 4".to_owned(),
                "! disk full".to_owned(),
                "! the command `git reset` changed what undo relies on, which is not allowed:"
                    .to_owned(),
                "    a".to_owned(),
                "    b".to_owned(),
                format!(
                    "\n↺ attempt 2: the last one ended {stuck} (looped); its changes were \
                     reverted (1 path)"
                ),
            ]
        );
    }

    #[test]
    fn a_reply_and_a_message_are_shown_only_when_replayed() {
        let records = [
            Record::Message(Message::user("do \x1b[2Kit")),
            Record::Reply {
                step: 1,
                content: "done\n".to_owned(),
                tool_calls: Vec::new(),
                cut_off: false,
                prompt_tokens: Some(10),
                completion_tokens: Some(2),
                seconds: 1.3,
            },
        ];
        assert_eq!(
            shown(REPLAY, &records),
            [
                "user: do \\x1b[2Kit",
                "\nstep 1 (1.3s, 10+2 tokens)",
                "done"
            ]
        );
        assert_eq!(shown(View::Live, &records[1..]), Vec::<String>::new());
    }
}
