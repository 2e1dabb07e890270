//! [`Record`]: one line of a [`Transcript`](crate::Transcript), as one typed value.
//!
//! The loop writes records and `harness show` reads them through this one type, so a field
//! renamed on one side is a compile error on the other, and a line that does not fit is an
//! error naming it rather than a field shown as empty. A live display renders the record of
//! each event ([`Record::of_event`]) with the same code as `harness show`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::budget::Budgets;
use crate::event::{CheckReason, Event};
use crate::model::{CallOrigin, Message, ToolCall};
use crate::outcome::{Outcome, RunReport};

/// The transcript format this version writes, carried by the [`Record::Run`] that starts
/// every transcript. Format 1 (written before the number existed) had no `format` field and
/// wrote a failed checkpoint as a `checkpoint` record with an `error`; it is still read.
pub const FORMAT: u32 = 2;

/// One line of a transcript: when, and what.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// Seconds since the transcript was created, to the millisecond.
    pub t: f64,
    /// What happened.
    #[serde(flatten)]
    pub record: Record,
}

/// What one line of a transcript records. Serialized as a JSON object tagged by `"type"`.
///
/// Where the loop also reports the same moment as an [`Event`], the record is made from the
/// event (`Record::of_event`): it holds every field of the event under the same name (a
/// test runs a loop and checks it), and more: the transcript is what a run can be replayed
/// from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Record {
    /// The run began: always the first line.
    Run {
        /// The transcript's format: [`FORMAT`] when written by this version.
        format: u32,
        /// The task.
        task: String,
        /// The workspace root.
        workspace: String,
        /// The model's context window, in tokens; `None` for a run of calls no model made
        /// (an MCP client's own).
        context_window: Option<u32>,
        /// The verification command, if there was one.
        verification: Option<String>,
        /// The budgets the run was given; `None` for a run of calls no model made.
        budgets: Option<RecordedBudgets>,
    },
    /// A message the harness wrote to the model (the system prompt, the task, the head
    /// start's framing).
    Message(Message),
    /// The model answered.
    Reply {
        /// The step, from 1.
        step: u32,
        /// Its text.
        content: String,
        /// The tools it called.
        tool_calls: Vec<ToolCall>,
        /// True if the answer was cut off (length, or repetition).
        cut_off: bool,
        /// Prompt tokens, as the server counted them.
        prompt_tokens: Option<u64>,
        /// Generated tokens.
        completion_tokens: Option<u64>,
        /// How long the answer took.
        seconds: f64,
    },
    /// A tool was called (step 0: by the head start).
    Tool {
        /// The step.
        step: u32,
        /// The call's id.
        id: String,
        /// The tool, as the model named it.
        tool: String,
        /// The arguments, as the model sent them.
        arguments: Value,
        /// Whether the call was structured or recovered from text.
        origin: CallOrigin,
        /// The one-line summary: `edit_file calc.py  +1 −1`.
        summary: String,
        /// True if and only if the call failed.
        is_error: bool,
        /// True if the call may have changed the workspace.
        may_have_changed_workspace: bool,
        /// What the model read.
        result: String,
        /// How long the call took.
        seconds: f64,
    },
    /// The verification command ran (why: its `reason`).
    Verification {
        /// Which run of it this was, from 1.
        attempt: u32,
        /// The command, as given.
        command: String,
        /// The command, split.
        argv: Vec<String>,
        /// True if and only if it exited 0 and nothing it loads besides the code under
        /// test had changed (before that was judged: it exited 0).
        passed: bool,
        /// How it went, in brief: `exit=1 0.8s`.
        detail: String,
        /// Its output.
        output: String,
        /// Why it ran (absent from older transcripts, where it was always
        /// [`CheckReason::Done`]).
        #[serde(default)]
        reason: CheckReason,
        /// What it loads besides the code under test that had changed since the run
        /// began (absent when nothing had, and from older transcripts).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changed: Vec<String>,
    },
    /// A snapshot of the workspace was taken.
    Checkpoint {
        /// The step.
        step: u32,
        /// Its number in the run, from 1.
        number: u32,
        /// Its label.
        label: String,
    },
    /// A snapshot, or keeping the pre-run state, failed; the run went on.
    CheckpointFailed {
        /// The step.
        step: u32,
        /// Why.
        error: String,
    },
    /// A command changed what undo relies on in `.git`; what could be put back was.
    Tampered {
        /// The step.
        step: u32,
        /// The command, as the tool's target shows it.
        command: String,
        /// What was found and done, one line each.
        findings: Vec<String>,
    },
    /// The model was told something about how it is working.
    Nudge {
        /// The step.
        step: u32,
        /// What it was told.
        content: String,
    },
    /// Older tool results were elided to fit the context window.
    Trim {
        /// The step.
        step: u32,
        /// How many results were elided.
        elided: usize,
    },
    /// An attempt ended without success and another began, from the state before the run.
    Attempt {
        /// The attempt that began, from 2.
        attempt: u32,
        /// How the one before ended.
        previous: Outcome,
        /// Why, in one sentence.
        reason: String,
        /// How many paths going back to the state before the run changed.
        reverted: usize,
    },
    /// The run ended: always the last line of a run that was not killed.
    Outcome(RunReport),
}

/// The budgets a run was given, as its first record holds them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedBudgets {
    /// Model turns.
    pub max_steps: u32,
    /// Seconds for the whole run.
    pub max_seconds: f64,
    /// Failed tool calls in a row before the run is stuck.
    pub max_failed_calls: u32,
    /// Tokens, prompt and generated, over the run; `None` for no limit.
    pub max_tokens: Option<u64>,
    /// Attempts at the task the run could make (1 in transcripts from before there were
    /// more).
    #[serde(default = "crate::outcome::one")]
    pub attempts: u32,
}

impl RecordedBudgets {
    /// `budgets` as a transcript records them.
    fn of(budgets: &Budgets) -> RecordedBudgets {
        RecordedBudgets {
            max_steps: budgets.max_steps,
            max_seconds: budgets.max_duration.as_secs_f64(),
            max_failed_calls: budgets.max_failed_calls,
            max_tokens: budgets.max_tokens,
            attempts: budgets.attempts,
        }
    }
}

impl Record {
    /// The record of `event`, for the events a transcript keeps; `None` for those only a
    /// live view shows (waiting, streamed text, a tool or a check starting: their record is
    /// written when the call or the check ends).
    ///
    /// A display renders the fact of each event from its record, so that a run shown as it
    /// happens and a transcript read back are shown by the same code:
    ///
    /// ```
    /// use harness_agent::{Event, Record};
    ///
    /// let event = Event::Checkpoint { step: 3, number: 2, label: "step 3" };
    /// let Some(Record::Checkpoint { number, .. }) = Record::of_event(&event) else {
    ///     unreachable!()
    /// };
    /// assert_eq!(number, 2);
    /// assert_eq!(Record::of_event(&Event::Waiting { step: 3 }), None);
    /// ```
    pub fn of_event(event: &Event<'_>) -> Option<Record> {
        Some(match *event {
            Event::Started {
                task,
                workspace,
                context_window,
                verification,
                budgets,
            } => Record::Run {
                format: FORMAT,
                task: task.to_owned(),
                workspace: workspace.to_owned(),
                context_window: Some(context_window),
                verification: verification.map(str::to_owned),
                budgets: Some(RecordedBudgets::of(budgets)),
            },
            Event::Replied {
                step,
                prompt_tokens,
                completion_tokens,
                seconds,
                reply,
                ..
            } => Record::Reply {
                step,
                content: reply.text.clone(),
                tool_calls: reply.tool_calls.clone(),
                cut_off: reply.cut_off,
                prompt_tokens,
                completion_tokens,
                seconds,
            },
            Event::ToolFinished {
                step,
                call,
                result,
                seconds,
                ..
            } => Record::Tool {
                step,
                id: call.id.clone(),
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
                origin: call.origin,
                summary: result.summary().to_string(),
                is_error: result.is_error(),
                may_have_changed_workspace: result.may_have_changed_workspace(),
                result: result.text().to_owned(),
                seconds,
            },
            Event::Nudged { step, message } => Record::Nudge {
                step,
                content: message.to_owned(),
            },
            Event::ContextTrimmed { step, elided } => Record::Trim { step, elided },
            Event::Checkpoint {
                step,
                number,
                label,
            } => Record::Checkpoint {
                step,
                number,
                label: label.to_owned(),
            },
            Event::Tampered {
                step,
                command,
                findings,
            } => Record::Tampered {
                step,
                command: command.to_owned(),
                findings: findings.to_vec(),
            },
            Event::CheckpointFailed { step, ref error } => Record::CheckpointFailed {
                step,
                error: error.clone(),
            },
            Event::VerificationFinished {
                attempt,
                passed,
                ref detail,
                output,
                changed,
                verification,
                reason,
            } => Record::Verification {
                attempt,
                command: verification.command().to_owned(),
                argv: verification.argv().to_vec(),
                passed,
                detail: detail.clone(),
                output: output.to_owned(),
                reason,
                changed: changed.to_vec(),
            },
            Event::NextAttempt {
                attempt,
                previous,
                reason,
                reverted,
                ..
            } => Record::Attempt {
                attempt,
                previous,
                reason: reason.to_owned(),
                reverted,
            },
            Event::Finished { report } => Record::Outcome(report.clone()),
            Event::Waiting { .. }
            | Event::Text { .. }
            | Event::ToolStarted { .. }
            | Event::VerificationStarted { .. } => return None,
        })
    }

    /// The `"type"` the record is tagged with, e.g. `tool`.
    pub fn kind(&self) -> &'static str {
        match self {
            Record::Run { .. } => "run",
            Record::Message(_) => "message",
            Record::Reply { .. } => "reply",
            Record::Tool { .. } => "tool",
            Record::Verification { .. } => "verification",
            Record::Checkpoint { .. } => "checkpoint",
            Record::CheckpointFailed { .. } => "checkpoint_failed",
            Record::Tampered { .. } => "tampered",
            Record::Nudge { .. } => "nudge",
            Record::Trim { .. } => "trim",
            Record::Attempt { .. } => "attempt",
            Record::Outcome(_) => "outcome",
        }
    }
}

/// Rewrites a format 1 line, in place, into the shape format 2 reads.
pub(crate) fn upgrade_from_1(line: &mut Value) {
    let Some(fields) = line.as_object_mut() else {
        return;
    };
    match fields.get("type").and_then(Value::as_str) {
        Some("run") => {
            fields.insert("format".to_owned(), Value::from(1));
        }
        Some("checkpoint") if fields.contains_key("error") => {
            fields.insert("type".to_owned(), Value::from("checkpoint_failed"));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kind_is_the_tag_serde_writes() {
        let records = [
            Record::Checkpoint {
                step: 1,
                number: 1,
                label: "l".to_owned(),
            },
            Record::CheckpointFailed {
                step: 1,
                error: "e".to_owned(),
            },
            Record::Trim { step: 2, elided: 3 },
            Record::Message(Message::user("hi")),
        ];
        for record in records {
            let value = serde_json::to_value(&record).unwrap();
            assert_eq!(value["type"], record.kind());
            assert_eq!(serde_json::from_value::<Record>(value).unwrap(), record);
        }
    }

    #[test]
    fn format_1_lines_are_upgraded_and_others_left_alone() {
        let mut run = json!({"type": "run", "task": "t"});
        upgrade_from_1(&mut run);
        assert_eq!(run["format"], 1);
        let mut failed = json!({"type": "checkpoint", "step": 2, "error": "disk full"});
        upgrade_from_1(&mut failed);
        assert_eq!(failed["type"], "checkpoint_failed");
        let mut taken = json!({"type": "checkpoint", "step": 2, "number": 1, "label": "l"});
        let before = taken.clone();
        upgrade_from_1(&mut taken);
        assert_eq!(taken, before);
    }
}
