//! Running the tool calls of an answer, in order: the repeat and failure budgets, saving a
//! file before it is written, the check of what undo relies on after a command, and the
//! checkpoint after a turn that may have changed files.

use std::time::{Duration, Instant};

use harness_schema::{ToolArgs, ToolName, parse_call_forgiving};
use harness_tools::ToolResult;

use super::steering::MAX_RESAMPLE;
use super::{Run, TurnEnd, count};
use crate::event::Event;
use crate::model::{Message, ToolCall};
use crate::outcome::Outcome;
use crate::prompt;
use crate::repeat::{REFUSAL_RETOLD, REFUSAL_STOP};
use crate::verify;

/// The most characters of a refusal quoted back to the model when it comes again.
const REFUSAL_QUOTED: usize = 600;

impl Run<'_> {
    /// Runs the calls of one turn in order, then checkpoints if files may have changed.
    pub(super) fn run_calls(&mut self, calls: &[ToolCall]) -> TurnEnd {
        let mut end = TurnEnd::Continue;
        let mut changed = Vec::new();
        let mut nudge = None;
        let mut retold = None;
        self.work.edited_in_turn = false;
        for call in calls {
            if self.setup.stop.is_requested() {
                let (outcome, reason) = self.interrupted();
                end = TurnEnd::Ended(outcome, reason);
                break;
            }
            let repeats = self.steering.repeats.record(&call.name, &call.arguments);
            if repeats >= self.setup.budgets.repeat_stop {
                end = TurnEnd::Ended(
                    Outcome::Stuck,
                    format!(
                        "the model called {} with the same arguments {} in a row",
                        call.name,
                        count(u64::from(repeats), "time")
                    ),
                );
                break;
            }
            let refused_before = self
                .steering
                .refusals
                .times_before(&call.name, &call.arguments);
            if refused_before >= REFUSAL_RETOLD {
                end = TurnEnd::Ended(
                    Outcome::Stuck,
                    format!(
                        "the model made a call of {} that was refused {} already, and it was \
                         not run again",
                        call.name,
                        count(u64::from(refused_before), "time")
                    ),
                );
                break;
            }
            let result = self.run_call(call);
            if result.is_error() {
                let times =
                    self.steering
                        .refusals
                        .record(&call.name, &call.arguments, result.text());
                if times >= REFUSAL_STOP {
                    end = TurnEnd::Ended(
                        Outcome::Stuck,
                        format!(
                            "the same refusal came {} in this attempt: {}",
                            count(u64::from(times), "time"),
                            first_line(result.text())
                        ),
                    );
                    break;
                }
                if times == REFUSAL_RETOLD {
                    retold = Some(refused_again(
                        call,
                        result.summary().target(),
                        result.text(),
                    ));
                }
            }
            if result.may_have_changed_workspace() {
                changed.push(format!("{} {}", call.name, result.summary().target()));
            }
            if repeats == self.setup.budgets.repeat_nudge {
                nudge = Some(prompt::repeat_nudge(
                    &call.name,
                    repeats,
                    self.setup.budgets.repeat_stop,
                ));
            }
            self.steering.failed_in_row = if result.is_error() {
                self.steering.failed_in_row + 1
            } else {
                0
            };
            if self.steering.failed_in_row >= self.setup.budgets.max_failed_calls {
                end = TurnEnd::Ended(
                    Outcome::Stuck,
                    format!(
                        "{} in a row failed",
                        count(u64::from(self.steering.failed_in_row), "tool call")
                    ),
                );
                break;
            }
        }
        self.work.changed_in_turn = !changed.is_empty();
        if !changed.is_empty() {
            self.checkpoint(&format!(
                "step {}: {}",
                self.counts.step,
                changed.join("; ")
            ));
        }
        if let (TurnEnd::Continue, Some(message)) = (&end, nudge) {
            self.nudge(message);
        }
        if let (TurnEnd::Continue, Some(message)) = (&end, retold) {
            // The request changes twice over: what it says, and how it is sampled.
            self.steering.resample = (self.steering.resample + 1).min(MAX_RESAMPLE);
            self.tell(message);
        }
        end
    }

    /// Runs one call of a turn, saving the file it writes first, and notes what its result
    /// tells of the model's work: an edit made, the verification's own run passed or failed.
    fn run_call(&mut self, call: &ToolCall) -> ToolResult {
        self.counts.tool_calls += 1;
        let tool = ToolName::parse(&call.name);
        let edits = tool.is_some_and(ToolName::changes_files);
        let unsaved = if edits { self.protect(call) } else { None };
        if tool == Some(ToolName::RunCommand)
            && let Err(error) = self.checkpoints.before_command()
        {
            self.warn(format!(
                "keeping the pre-run state before step {} failed: {error}",
                self.counts.step
            ));
        }
        let result = match unsaved {
            Some(refusal) => self.refuse_call(call, refusal),
            None => self.call_tool(call),
        };
        let mut framed = prompt::tool_result(&call.name, result.summary().target(), result.text());
        if tool == Some(ToolName::RunCommand)
            && let Some(note) = self.verify_after(result.summary().target(), result.put_back())
        {
            framed.push_str(&note);
        }
        self.messages.push(Message::tool_result(call, framed));
        if edits && !result.is_error() {
            self.work.edited = true;
            self.work.edited_in_turn |= result.may_have_changed_workspace();
            self.checks.passed_after_edit = false;
        }
        let ran_the_verification =
            tool == Some(ToolName::RunCommand) && self.runs_the_verification(call);
        if ran_the_verification && self.work.edited && verify::passed(&result) {
            self.checks.passed_after_edit = true;
        }
        // The model's own run of the check tells as much as the harness's; any other
        // call that may have changed a file may have changed the check's outcome.
        if ran_the_verification {
            self.checks.failure_stands = !verify::passed(&result);
        } else if result.may_have_changed_workspace() {
            self.checks.failure_stands = false;
        }
        result
    }

    /// Calls one tool, reporting and recording it.
    pub(super) fn call_tool(&mut self, call: &ToolCall) -> ToolResult {
        self.log.event(&Event::ToolStarted {
            step: self.counts.step,
            tool: &call.name,
            arguments: &call.arguments,
        });
        let began = Instant::now();
        // No command outlasts the run: the time limit holds while one runs, not after it.
        let result = self
            .setup
            .toolbox
            .call_within(&call.name, &call.arguments, self.time_left());
        self.finish_call(call, result, began.elapsed())
    }

    /// Shows and records how `call` ended, with `result` after `took`.
    fn finish_call(&mut self, call: &ToolCall, result: ToolResult, took: Duration) -> ToolResult {
        if self.counts.first_check.is_none() && self.runs_the_verification(call) {
            self.counts.first_check = Some(took);
        }
        if !result.is_error()
            && let Ok(parsed) = parse_call_forgiving(&call.name, &call.arguments)
            && let ToolArgs::ReadFile(read) = parsed.args
            && !self.work.read.contains(&read.path)
        {
            self.work.read.push(read.path);
        }
        let detail = result.summary().detail().to_string();
        self.log.event(&Event::ToolFinished {
            step: self.counts.step,
            tool: &call.name,
            target: result.summary().target(),
            detail: detail.clone(),
            is_error: result.is_error(),
            output: result.text(),
            call,
            result: &result,
            seconds: took.as_secs_f64(),
        });
        tracing::debug!(step = self.counts.step, tool = %call.name, summary = %result.summary(), "tool call");
        result
    }

    /// Lets the undo record save the file `call` is about to write, if it must. When it
    /// could not, returns the refusal of the call: a file no undo could bring back is not
    /// written.
    fn protect(&mut self, call: &ToolCall) -> Option<ToolResult> {
        // Read as the tool reads it, so the file saved is the file the call changes.
        // Invalid arguments: the tool refuses the call.
        let path = self
            .setup
            .toolbox
            .written_path(&call.name, &call.arguments)?;
        let error = self.checkpoints.protect(&path).err()?;
        self.warn(format!(
            "saving {path} before step {} failed: {error}",
            self.counts.step
        ));
        Some(ToolResult::unsaved(&call.name, &path, &error.to_string()))
    }

    /// Shows and records `call` as refused with `result`, without running it.
    fn refuse_call(&mut self, call: &ToolCall, result: ToolResult) -> ToolResult {
        self.log.event(&Event::ToolStarted {
            step: self.counts.step,
            tool: &call.name,
            arguments: &call.arguments,
        });
        self.finish_call(call, result, Duration::ZERO)
    }

    /// After a command: checks what undo relies on, and returns what to tell the model
    /// when the command changed it. `put_back` is what the command's runner already put
    /// back (the model read it in the result): reported with the rest, not told again.
    fn verify_after(&mut self, command: &str, put_back: &[String]) -> Option<String> {
        let found = match self.checkpoints.verify() {
            Ok(found) => found,
            Err(error) => {
                self.warn(format!(
                    "checking .git after step {} failed: {error}",
                    self.counts.step
                ));
                Vec::new()
            }
        };
        let note = (!found.is_empty()).then(|| prompt::tampered(&found));
        let findings: Vec<String> = put_back.iter().cloned().chain(found).collect();
        if findings.is_empty() {
            return None;
        }
        self.log.event(&Event::Tampered {
            step: self.counts.step,
            command,
            findings: &findings,
        });
        self.log.warnings.push(format!(
            "step {}: {command} changed what undo relies on: {}",
            self.counts.step,
            findings.join("; ")
        ));
        note
    }

    /// Whether `call` runs the verification command itself (the same words).
    fn runs_the_verification(&self, call: &ToolCall) -> bool {
        let Some(verification) = &self.setup.verification else {
            return false;
        };
        matches!(
            parse_call_forgiving(&call.name, &call.arguments).map(|parsed| parsed.args),
            Ok(ToolArgs::RunCommand(run)) if run.argv == verification.argv()
        )
    }

    /// Whether each of the last turn's `calls` calls failed: the failures in a row reach
    /// back to its first.
    pub(super) fn every_call_failed(&self, calls: usize) -> bool {
        self.steering.failed_in_row as usize >= calls
    }
}

/// What the model is told when `call` (acting on `target`) met a refusal it had met before:
/// what was refused, in the refusal's own words (which say what to do instead), and that a
/// third time ends the attempt.
fn refused_again(call: &ToolCall, target: &str, refusal: &str) -> String {
    let what = if target.is_empty() {
        call.name.clone()
    } else {
        format!("{} {target}", call.name)
    };
    let refusal = prompt::cut_middle(refusal.trim(), REFUSAL_QUOTED);
    let refusal = refusal.strip_prefix("Error: ").unwrap_or(&refusal);
    format!(
        "The harness refused {what}, and this is the second time a call met this refusal:\n\
         {refusal}\n\
         Sending the same call again, or another that meets the same refusal, will not work: \
         a third time ends this attempt. Do what the refusal says instead."
    )
}

/// The first line of `text`, without the `Error: ` a failed result starts with.
fn first_line(text: &str) -> &str {
    let line = text.lines().next().unwrap_or_default();
    line.strip_prefix("Error: ").unwrap_or(line)
}
