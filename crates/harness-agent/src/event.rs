//! [`Event`]s: what the loop reports as it goes, for a display or a script to follow.

use harness_tools::ToolResult;
use serde::Serialize;
use serde_json::Value;

use crate::budget::Budgets;
use crate::chat::Reply;
use crate::model::ToolCall;
use crate::outcome::{Outcome, RunReport};
use crate::verify::Verification;

/// Something that happened in a run, reported to the [`Observer`] as it happens.
///
/// Events serialize to one JSON object each, tagged by `"event"`, which is what
/// `harness run --json` prints, one per line:
///
/// ```
/// use harness_agent::Event;
///
/// let event = Event::Checkpoint { step: 3, number: 2, label: "step 3: edit_file calc.py" };
/// assert_eq!(
///     serde_json::to_string(&event)?,
///     r#"{"event":"checkpoint","step":3,"number":2,"label":"step 3: edit_file calc.py"}"#
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// Step 0 is the head start: the calls the harness makes itself before the model's first
/// turn.
///
/// An event the transcript also records carries all the record needs (see
/// [`Record`](crate::Record)): the fields a display has no use for are left out of the JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event<'a> {
    /// The run began.
    Started {
        /// The task.
        task: &'a str,
        /// The workspace root.
        workspace: &'a str,
        /// The model's context window, in tokens.
        context_window: u32,
        /// The verification command, if there is one.
        verification: Option<&'a str>,
        /// The run's budgets (for the transcript; not serialized).
        #[serde(skip)]
        budgets: &'a Budgets,
    },
    /// The model was asked; it has not answered yet.
    Waiting {
        /// The step.
        step: u32,
    },
    /// A piece of the model's text, as it streams.
    Text {
        /// The step.
        step: u32,
        /// The piece.
        text: &'a str,
    },
    /// The model answered.
    Replied {
        /// The step.
        step: u32,
        /// How many tools it called.
        tool_calls: usize,
        /// Prompt tokens, as the server counted them.
        prompt_tokens: Option<u64>,
        /// Generated tokens.
        completion_tokens: Option<u64>,
        /// How long the answer took.
        seconds: f64,
        /// The answer (for the transcript; not serialized).
        #[serde(skip)]
        reply: &'a Reply,
    },
    /// A tool call begins.
    ToolStarted {
        /// The step.
        step: u32,
        /// The tool, as the model named it.
        tool: &'a str,
        /// The arguments, as the model sent them.
        arguments: &'a Value,
    },
    /// A tool call ended.
    ToolFinished {
        /// The step.
        step: u32,
        /// The tool, as the model named it.
        tool: &'a str,
        /// What it acted on: a path, a pattern, a command line (empty for invalid arguments).
        target: &'a str,
        /// How it went, in brief: `+3 −1`, `exit=1 0.8s`, `error`.
        detail: String,
        /// True if and only if the call failed (its output starts with `Error:`).
        is_error: bool,
        /// What the model reads: for an edit, the unified diff.
        output: &'a str,
        /// The call (for the transcript; not serialized).
        #[serde(skip)]
        call: &'a ToolCall,
        /// Its result (for the transcript; not serialized).
        #[serde(skip)]
        result: &'a ToolResult,
        /// How long it took (for the transcript; not serialized).
        #[serde(skip)]
        seconds: f64,
    },
    /// The model was told something about how it is working: it repeats a call, or its
    /// answer was cut off.
    Nudged {
        /// The step.
        step: u32,
        /// What it was told.
        message: &'a str,
    },
    /// Older tool results were elided to keep the conversation in the context window.
    ContextTrimmed {
        /// The step.
        step: u32,
        /// How many results were elided now.
        elided: usize,
    },
    /// A snapshot of the workspace was taken.
    Checkpoint {
        /// The step.
        step: u32,
        /// Its number in the run, from 1.
        number: u32,
        /// Its label.
        label: &'a str,
    },
    /// A command changed what undo relies on in the workspace's `.git` (the run's refs, its
    /// pre-run snapshot); what could be put back from the harness's store was, and the
    /// model was told that changing `.git` is not allowed.
    Tampered {
        /// The step.
        step: u32,
        /// The command that did it, as the tool's target shows it.
        command: &'a str,
        /// What was found and done, one line each.
        findings: &'a [String],
    },
    /// A snapshot could not be taken; the run goes on.
    CheckpointFailed {
        /// The step.
        step: u32,
        /// Why.
        error: String,
    },
    /// The verification command starts.
    VerificationStarted {
        /// Which run of it this is, from 1.
        attempt: u32,
        /// The command.
        command: &'a str,
        /// Why it runs now.
        reason: CheckReason,
    },
    /// The verification command ended.
    VerificationFinished {
        /// Which run of it this is, from 1.
        attempt: u32,
        /// True if and only if it exited 0 and nothing it loads besides the code under
        /// test had changed since the run began.
        passed: bool,
        /// How it went, in brief: `exit=1 0.8s`.
        detail: String,
        /// Its output, cut in the middle when long.
        output: &'a str,
        /// What it loads besides the code under test that had changed since the run
        /// began, one line each: a run that exited 0 with any is not verified.
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        changed: &'a [String],
        /// The command (for the transcript; not serialized).
        #[serde(skip)]
        verification: &'a Verification,
        /// Why it ran (for the transcript; not serialized).
        #[serde(skip)]
        reason: CheckReason,
    },
    /// An attempt at the task ended without success and another begins: the files were
    /// brought back to the state before the run.
    NextAttempt {
        /// The attempt that begins, from 2.
        attempt: u32,
        /// How many attempts the run may make.
        of: u32,
        /// How the one before ended.
        previous: Outcome,
        /// Why, in one sentence.
        reason: &'a str,
        /// How many paths going back to the state before the run changed.
        reverted: usize,
    },
    /// The run is over.
    Finished {
        /// What it did.
        report: &'a RunReport,
    },
}

/// Why the verification command runs: the run's measure of done is the command, and these
/// are the moments it is asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CheckReason {
    /// The model said it was done: an answer without a tool call, or one whose edit blocks
    /// were applied.
    #[default]
    Done,
    /// The model ran the same command itself after its edits, and it passed.
    ModelRanIt,
    /// The run ended on its own (stuck, out of steps or tokens) after an edit: the files
    /// as it left them are checked once.
    RunEnded,
    /// A step of the model's edited a file, and the command is quick
    /// ([`Budgets::quick_check`](crate::Budgets::quick_check)): it runs before the model
    /// is asked again.
    AfterEdit,
}

impl CheckReason {
    /// Why, in words, for a person reading the run.
    pub fn describe(self) -> &'static str {
        match self {
            CheckReason::Done => "the model said it was done",
            CheckReason::ModelRanIt => "the model's own run of it passed",
            CheckReason::RunEnded => "the run ended; the files as it left them",
            CheckReason::AfterEdit => "after an edit, as the check is quick",
        }
    }
}

/// Follows a run as it goes; the loop itself never touches the terminal.
pub trait Observer {
    /// Called for each event, in order, on the thread running the loop.
    fn on_event(&mut self, event: &Event<'_>);
}

/// Ignores every event.
impl Observer for () {
    fn on_event(&mut self, _event: &Event<'_>) {}
}

/// Collects every event as JSON, for tests and scripts.
impl Observer for Vec<Value> {
    fn on_event(&mut self, event: &Event<'_>) {
        // Events hold only strings, numbers and JSON values: they always serialize.
        if let Ok(value) = serde_json::to_value(event) {
            self.push(value);
        }
    }
}
