//! One run of the loop, phase by phase. [`Run`] holds the state of a run; this file has the
//! step loop ([`Run::run_to_an_outcome`], `go`) and how the run's facts are reported and
//! recorded, and each phase adds its methods from a file of its own:
//!
//! - `opening.rs`: the system prompt, the task and the head start, and how a later attempt
//!   opens the way the first one did;
//! - `ask.rs`: asking the model on a thread of its own, the budgets checked before each step;
//! - `calls.rs`: running the tool calls of an answer, saving files before they are written,
//!   the checks of what undo relies on after a command;
//! - `written.rs`: the edits an answer writes as blocks, and calls it spells out that did not
//!   run;
//! - `done.rs`: the verification when the model says it is done, or after an edit when it is
//!   quick, and what makes a pass count;
//! - `attempts.rs`: whether another attempt begins, from the files as they were, while the
//!   cap allows and the run's time and tokens last, and how it is introduced;
//! - `steering.rs`: a model that is stuck: empty and repeated answers, corrections (repeated
//!   calls and refusals are counted in `calls.rs`, by `repeat.rs`).

mod ask;
mod attempts;
mod calls;
mod done;
mod opening;
mod steering;
mod written;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness_tools::{Toolbox, VerificationInputs};
use serde_json::Value;

use crate::budget::Budgets;
use crate::chat::{ChatClient, ChatError, Reply};
use crate::checkpoint::Checkpoints;
use crate::edit_format::EditFormat;
use crate::event::{CheckReason, Event, Observer};
use crate::model::Message;
use crate::outcome::{Outcome, RunReport, VerificationReport};
use crate::prompt;
use crate::record::Record;
use crate::repeat::{Refusals, Repeats};
use crate::stop::StopSignal;
use crate::transcript::Transcript;
use crate::verify::Verification;

/// What a run is given, as its [`Agent`](crate::Agent) was built: the model, the tools and
/// the rules. It does not change while the run goes on.
pub(crate) struct Setup<'a> {
    /// The model.
    pub(crate) chat: Arc<dyn ChatClient>,
    /// The tools, over the workspace.
    pub(crate) toolbox: &'a Toolbox,
    /// The limits of the run.
    pub(crate) budgets: Budgets,
    /// The command that decides whether the run succeeded.
    pub(crate) verification: Option<Verification>,
    /// What the verification loads besides the code under test, and whether the tests
    /// among it may change (`--allow-test-edits`).
    pub(crate) inputs: Option<(VerificationInputs, bool)>,
    /// Raised to stop the run.
    pub(crate) stop: StopSignal,
    /// Which edits written into an answer are applied.
    pub(crate) edit_format: EditFormat,
    /// An earlier run's conversation, which this one continues ([`Agent::earlier`]).
    ///
    /// [`Agent::earlier`]: crate::Agent::earlier
    pub(crate) earlier: Vec<Message>,
}

/// The state of one run. Every field is needed by more than one phase of the loop.
pub(crate) struct Run<'a> {
    /// The model, the tools and the rules.
    setup: Setup<'a>,
    /// Where the facts of the run go.
    log: Log<'a>,
    /// Snapshots after changing steps.
    checkpoints: &'a mut dyn Checkpoints,
    /// The tools offered, as JSON.
    tools: Vec<Value>,
    /// Their size, for the context estimate.
    tools_chars: usize,
    /// The conversation.
    messages: Vec<Message>,
    /// When the run started.
    started: Instant,
    /// The figures of its report, so far.
    counts: Counts,
    /// How the model is doing, to steer it.
    steering: Steering,
    /// What the checks of its work found.
    checks: Checks,
    /// What it has done to the workspace.
    work: Work,
    /// The model's last text.
    final_text: String,
    /// The attempt at the task under way.
    attempt: Attempt,
    /// How the first attempt opened, for the later ones to open the same way.
    opening: Option<Opening>,
}

/// Where the facts of a run go: each is shown to the observer as it happens and kept in the
/// transcript, and the problems that did not end the run are kept for its report.
struct Log<'a> {
    /// Told every event.
    observer: &'a mut dyn Observer,
    /// The record being written.
    transcript: Option<Transcript>,
    /// Problems that did not end the run.
    warnings: Vec<String>,
}

impl Log<'_> {
    /// Records `event` in the transcript, if it is one the transcript keeps, and shows it
    /// to the observer: one call for both, so that neither can miss a fact the other has.
    fn event(&mut self, event: &Event<'_>) {
        if let Some(record) = Record::of_event(event) {
            self.record(record);
        }
        self.observer.on_event(event);
    }

    /// Writes `record` to the transcript, if there is one.
    fn record(&mut self, record: Record) {
        if let Some(transcript) = &mut self.transcript {
            transcript.record(record);
        }
    }
}

/// The opening of the first attempt: the system prompt, the task and the head start, with
/// what the loop learned from the head start. A later attempt starts from the files as they
/// were before the run, so the head start would show the same again; instead the attempt
/// opens with these very messages and only its last one, which says how the attempt before
/// it ended, is new. Model servers reuse the longest prefix of a prompt they have already
/// evaluated (llama.cpp's server, Ollama), so the attempt costs its own answers rather than
/// the whole opening again: about a minute of a small model's first turn on 2 cores. (Run
/// again, the head start would differ anyway: test runners print their timings.)
#[derive(Clone)]
struct Opening {
    /// Up to and including the head start's last result.
    messages: Vec<Message>,
    /// The files the head start read.
    read: Vec<String>,
    /// Whether the head start's run of the verification command failed.
    failure_stands: bool,
}

/// Where an attempt at the task began, so that its steps and checks are counted from there.
#[derive(Clone, Copy)]
struct Attempt {
    /// From 1.
    number: u32,
    /// The steps of the run before it.
    steps_before: u32,
    /// The checks of the model's work before it.
    checks_before: u32,
    /// How the attempt before it ended; `None` for the first.
    after: Option<Outcome>,
}

impl Attempt {
    const FIRST: Attempt = Attempt {
        number: 1,
        steps_before: 0,
        checks_before: 0,
        after: None,
    };
}

/// What a run has counted so far: the figures of its report.
#[derive(Default)]
struct Counts {
    /// The current step, from 1 (0 during the head start).
    step: u32,
    /// Tool calls the model made.
    tool_calls: u32,
    /// Prompt tokens so far.
    prompt_tokens: u64,
    /// Generated tokens so far.
    completion_tokens: u64,
    /// Runs of the verification command to check the model's work.
    verifications: u32,
    /// Checkpoints taken.
    checkpoints_taken: u32,
    /// How long the verification command's first run took (the head start's, a check's or
    /// the model's own), which decides whether it runs after every editing step
    /// ([`Budgets::quick_check`]).
    first_check: Option<Duration>,
    /// Whether a check after an edit took longer than [`Budgets::quick_check`]: the check
    /// is not quick any more, and waits for "done" for the rest of the run.
    check_slowed: bool,
}

/// How the model is doing, to steer it: repeats, failures and corrections in a row, and
/// answers given again ([`steering`]). Begins afresh with each attempt.
#[derive(Default)]
struct Steering {
    /// Identical calls in a row.
    repeats: Repeats,
    /// The refusals of this attempt, counted by what they said ([`Refusals`]).
    refusals: Refusals,
    /// Failed calls in a row.
    failed_in_row: u32,
    /// Empty answers in a row, each asked again ([`Run::empty_answer`]).
    empty_in_row: u32,
    /// The answers of this attempt the model was told how to put right ([`Run::nudge`]).
    corrections: u32,
    /// The last answer, as text and calls, to see the model give the same one again.
    last_answer: Option<(String, Vec<(String, Value)>)>,
    /// How many answers in a row were the same as the one before (at most
    /// [`MAX_RESAMPLE`](steering::MAX_RESAMPLE)): the next request is sampled differently
    /// by that much.
    resample: u32,
    /// The files whose code the last answer repeated as it is, in a block under no path
    /// ([`Edits::repeated`](crate::blocks::Edits::repeated)).
    repeated: BTreeSet<String>,
}

/// What the checks of the model's work found ([`done`]). Begins afresh with each attempt.
#[derive(Default)]
struct Checks {
    /// Whether the last check of the model's work passed: exited 0, with nothing it loads
    /// besides the code under test changed.
    verification_passed: bool,
    /// What the verification loads besides the code under test that had changed at the
    /// last check, one line each.
    inputs_changed: Vec<String>,
    /// Whether the verification command's last run failed (the head start's, a check's or
    /// the model's own) and no call since may have changed the workspace: running it again
    /// would fail the same way.
    failure_stands: bool,
    /// The answers of this attempt that said "done" while the failure stood, each answered
    /// without running the check but counted as one of the attempt's checks.
    unchecked_dones: u32,
    /// The checks of this attempt run after an editing step ([`CheckReason::AfterEdit`]):
    /// not the model's word, so not among the attempt's checks.
    after_edits: u32,
    /// What commands wrote where git does not look that could not be put back before the
    /// last check ran ([`Checkpoints::before_verification`]): the check may have run it,
    /// so a pass is not counted as verified. Empty when all was put back.
    unvouched: Vec<String>,
    /// What commands wrote where git does not look that was put back before the last
    /// check ran: a failure may come from a missing install or build, which the model is
    /// told belongs in the verification command.
    put_back: Vec<String>,
    /// Whether the model itself ran the verification command, and it passed, after its
    /// last edit: the task is done by the run's own measure, so the harness checks it.
    passed_after_edit: bool,
}

/// What the model has done to the workspace: edits, and the files it was shown. Begins
/// afresh with each attempt.
#[derive(Default)]
struct Work {
    /// Whether the model has written or edited a file successfully.
    edited: bool,
    /// Whether a call of the last turn may have changed the workspace.
    changed_in_turn: bool,
    /// Whether a call of the last turn edited a file (a write or an edit that changed one).
    edited_in_turn: bool,
    /// The files read for the model so far (by the head start or its own calls), where a
    /// code block in an answer that names no file may belong.
    read: Vec<String>,
}

/// Where an answer's blocks were written ([`Run::edit_blocks`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Blocks {
    /// In an answer that calls no tool: they are its edits.
    Alone,
    /// Beside calls that all failed: they are made if they can be, and change nothing
    /// otherwise.
    BesideFailedCalls,
}

/// How the model's answer to one request came out.
enum Answer {
    /// It answered, in this long.
    Reply(Reply, Duration),
    /// It could not be asked, or its answer read.
    Failed(ChatError),
    /// A stop was requested while it was answering.
    Stopped,
    /// The run's time ran out while it was answering.
    OutOfTime,
}

/// How the tool calls of one turn went.
enum TurnEnd {
    /// All ran; go on.
    Continue,
    /// The run ends.
    Ended(Outcome, String),
}

impl From<Option<(Outcome, String)>> for TurnEnd {
    /// An end, if there is one; going on otherwise.
    fn from(end: Option<(Outcome, String)>) -> TurnEnd {
        match end {
            Some((outcome, reason)) => TurnEnd::Ended(outcome, reason),
            None => TurnEnd::Continue,
        }
    }
}

impl<'a> Run<'a> {
    /// A run of `setup`, writing `transcript`, reporting each event to `observer` and taking
    /// `checkpoints`.
    pub(crate) fn new(
        setup: Setup<'a>,
        transcript: Option<Transcript>,
        observer: &'a mut dyn Observer,
        checkpoints: &'a mut dyn Checkpoints,
    ) -> Run<'a> {
        let tools: Vec<Value> = if setup.edit_format.offers_tools() {
            setup
                .toolbox
                .specs()
                .iter()
                .filter_map(|spec| serde_json::to_value(spec).ok())
                .collect()
        } else {
            Vec::new()
        };
        let tools_chars = tools.iter().map(|tool| tool.to_string().len()).sum();
        Run {
            setup,
            log: Log {
                observer,
                transcript,
                warnings: Vec::new(),
            },
            checkpoints,
            tools,
            tools_chars,
            messages: Vec::new(),
            started: Instant::now(),
            counts: Counts::default(),
            steering: Steering::default(),
            checks: Checks::default(),
            work: Work::default(),
            final_text: String::new(),
            attempt: Attempt::FIRST,
            opening: None,
        }
    }

    /// Runs `task` to an outcome: attempt after attempt, each checked on what it left,
    /// until one ends the run.
    pub(crate) fn run_to_an_outcome(mut self, task: &str) -> RunReport {
        let context_window = match self.start(task) {
            Ok(tokens) => tokens,
            Err(error) => return self.finish(Outcome::ModelError, error.to_string()),
        };
        loop {
            let (outcome, reason) = self.go(task, context_window);
            let (outcome, mut reason) = self.check_what_was_left(outcome, reason);
            if !self.try_again(outcome, &mut reason) {
                return self.finish(outcome, reason);
            }
        }
    }
}

impl Run<'_> {
    /// Reports and records the start of the run; returns the model's context window.
    fn start(&mut self, task: &str) -> Result<u32, ChatError> {
        let context_window = self.setup.chat.context_window()?;
        let workspace = self.setup.toolbox.workspace().root().to_string();
        self.log.event(&Event::Started {
            task,
            workspace: &workspace,
            context_window,
            verification: self.setup.verification.as_ref().map(Verification::command),
            budgets: &self.setup.budgets,
        });
        Ok(context_window)
    }

    /// One attempt at the task: the loop, from a fresh conversation up to an outcome and
    /// the reason for it.
    fn go(&mut self, task: &str, context_window: u32) -> (Outcome, String) {
        match (self.attempt.after, self.opening.clone()) {
            (Some(previous), Some(opening)) => self.reopen(opening, previous),
            (previous, _) => self.open(task, previous),
        }
        let limit =
            (context_window.saturating_sub(self.setup.budgets.answer_reserve_tokens)) as usize;
        loop {
            if let Some(end) = self.budget_exhausted().or_else(|| self.corrected_enough()) {
                return end;
            }
            self.counts.step += 1;
            self.fit_context(limit);
            let reply = match self.ask() {
                Answer::Reply(reply, took) => {
                    self.answered(&reply, took);
                    reply
                }
                Answer::Failed(error) => return (Outcome::ModelError, error.to_string()),
                Answer::Stopped => return self.interrupted(),
                Answer::OutOfTime => return self.out_of_time(),
            };
            if self.empty_answer(&reply) {
                continue;
            }
            if let TurnEnd::Ended(outcome, reason) = self.turn(&reply) {
                return (outcome, reason);
            }
        }
    }

    /// The turn on an answer: it goes into the conversation, then its calls run, or, with
    /// none, it is taken for what it says (an edit, a call that did not run, or "done").
    fn turn(&mut self, reply: &Reply) -> TurnEnd {
        if !reply.text.trim().is_empty() {
            self.final_text = reply.text.trim().to_owned();
        }
        self.note_repeated_answer(reply);
        self.messages.push(reply.to_message());
        if let Some((outcome, reason)) = self.same_answer_again(reply) {
            return TurnEnd::Ended(outcome, reason);
        }
        if reply.tool_calls.is_empty() {
            self.without_calls(reply)
        } else {
            self.with_calls(reply)
        }
    }

    /// An answer that calls no tool: cut off, it is continued; holding edits or a call
    /// spelled out, those are made or told; otherwise the model says it is done.
    fn without_calls(&mut self, reply: &Reply) -> TurnEnd {
        if reply.cut_off {
            self.nudge(prompt::cut_off(
                self.setup.edit_format,
                reply.completion_tokens,
            ));
            return TurnEnd::Continue;
        }
        if let Some(end) = self.written_calls(&reply.text) {
            return end;
        }
        if self.checks.failure_stands {
            return TurnEnd::from(self.done_while_failure_stands());
        }
        TurnEnd::from(self.done(CheckReason::Done))
    }

    /// An answer that calls tools: they run, and then what the turn showed may end it.
    fn with_calls(&mut self, reply: &Reply) -> TurnEnd {
        // A whole file in an answer cut off may be cut too: none of its calls runs, and
        // each is answered, as every call is.
        if reply.cut_off
            && reply
                .tool_calls
                .iter()
                .any(|call| call.name == "write_file")
        {
            for call in &reply.tool_calls {
                self.push(Message::tool_result(call, prompt::NOT_RUN_CUT_OFF));
            }
            self.nudge(prompt::cut_off(
                self.setup.edit_format,
                reply.completion_tokens,
            ));
            return TurnEnd::Continue;
        }
        if let TurnEnd::Ended(outcome, reason) = self.run_calls(&reply.tool_calls) {
            return TurnEnd::Ended(outcome, reason);
        }
        // Every call failed, and the answer also wrote its change out as code: that is
        // the model's other statement of the same change, so it is made. (Measured with
        // Qwen2.5-Coder-1.5B: answers show the fixed file, then a call as JSON whose
        // `old_text` is not in the file; 6 of 22 answers with calls in one suite run.)
        if self.every_call_failed(reply.tool_calls.len())
            && let Some(end) = self.edit_blocks(&reply.text, Blocks::BesideFailedCalls)
        {
            return end;
        }
        // The model's own run of the verification command passed after its edits: it
        // may go on (small models loop on), but the run's measure of done is met, so
        // the harness checks, as if the model had said it was done.
        if std::mem::take(&mut self.checks.passed_after_edit) {
            return TurnEnd::from(self.done(CheckReason::ModelRanIt));
        }
        if self.work.edited_in_turn && self.is_check_quick() {
            return TurnEnd::from(self.check_after_edit());
        }
        TurnEnd::Continue
    }

    /// Tells the model something about how it is working.
    fn tell(&mut self, message: String) {
        self.log.event(&Event::Nudged {
            step: self.counts.step,
            message: &message,
        });
        self.messages.push(Message::user(message));
    }

    /// Appends a message the harness wrote, and records it.
    fn push(&mut self, message: Message) {
        self.log.record(Record::Message(message.clone()));
        self.messages.push(message);
    }

    /// Reports a failure of the undo record that does not end the run.
    fn warn(&mut self, error: String) {
        self.log.event(&Event::CheckpointFailed {
            step: self.counts.step,
            error: error.clone(),
        });
        self.log.warnings.push(error);
    }

    /// Snapshots the workspace.
    fn checkpoint(&mut self, label: &str) {
        match self.checkpoints.checkpoint(label) {
            Ok(Some(number)) => {
                self.counts.checkpoints_taken += 1;
                self.log.event(&Event::Checkpoint {
                    step: self.counts.step,
                    number,
                    label,
                });
            }
            Ok(None) => {}
            Err(error) => {
                let error = format!("checkpoint after step {} failed: {error}", self.counts.step);
                self.log.event(&Event::CheckpointFailed {
                    step: self.counts.step,
                    error: error.clone(),
                });
                self.log.warnings.push(error);
            }
        }
    }

    /// The report, recorded and reported.
    fn finish(mut self, outcome: Outcome, reason: String) -> RunReport {
        tracing::info!(%outcome, %reason, steps = self.counts.step, "run finished");
        if let Some(failure) = self.log.transcript.as_ref().and_then(Transcript::failure) {
            self.log.warnings.push(failure.to_owned());
        }
        let report = RunReport {
            outcome,
            reason,
            steps: self.counts.step,
            attempts: self.attempt.number,
            tool_calls: self.counts.tool_calls,
            prompt_tokens: self.counts.prompt_tokens,
            completion_tokens: self.counts.completion_tokens,
            duration: self.started.elapsed(),
            verification: self
                .setup
                .verification
                .as_ref()
                .map(|v| VerificationReport {
                    command: v.command().to_owned(),
                    runs: self.counts.verifications,
                    passed: self.checks.verification_passed,
                    changed: self.checks.inputs_changed.clone(),
                }),
            checkpoints: self.counts.checkpoints_taken,
            final_text: self.final_text.clone(),
            transcript: self.log.transcript.as_ref().map(|t| t.path().to_owned()),
            warnings: self.log.warnings.clone(),
        };
        self.log.event(&Event::Finished { report: &report });
        report
    }
}

/// `n` and `noun`, plural unless `n` is 1: "1 time", "3 tool calls".
fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}
