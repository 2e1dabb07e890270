//! [`Agent`]: the loop. Ask the model, run the tools it calls, feed the results back, until
//! it says it is done and the verification command agrees, or a budget runs out.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use harness_schema::{ToolArgs, ToolName, parse_call_forgiving};
use harness_tools::{ToolResult, Toolbox, VerificationInputs};
use serde_json::{Value, json};

use crate::blocks;
use crate::edit_format::EditFormat;
use crate::budget::Budgets;
use crate::chat::{ChatClient, ChatError, Reply};
use crate::checkpoint::Checkpoints;
use crate::context;
use crate::event::{CheckReason, Event, Observer};
use crate::head_start;
use crate::model::{CallOrigin, Message, Role, ToolCall};
use crate::outcome::{Outcome, RunReport, VerificationReport};
use crate::plain;
use crate::prompt;
use crate::record::{FORMAT as TRANSCRIPT_FORMAT, Record, RecordedBudgets};
use crate::repeat::Repeats;
use crate::stop::StopSignal;
use crate::transcript::Transcript;
use crate::verify::{self, Verification};

/// How often the loop looks at the stop signal and the clock while the model is answering.
const POLL: Duration = Duration::from_millis(50);

/// The system prompt and the task: never elided.
const KEPT_HEAD: usize = 2;

/// The most retries in a row that are sampled differently ([`ChatClient::chat_resampled`]):
/// three steps take the default temperature of 0.2 to 0.5.
const MAX_RESAMPLE: u32 = 3;

/// The most empty answers in a row that are asked again rather than taken as they are.
const MAX_EMPTY_IN_ROW: u32 = 2;

/// Answers in one attempt that the model was told how to put right, after which the attempt
/// ends when another is left: a fresh attempt, from the opening and sampled differently,
/// does better than a third correction. (Measured with Qwen2.5-Coder-1.5B over 56 suite
/// runs of three attempts, 2026-12-04: of the 17 attempts that went on past a second
/// correction, none was verified; of those past one, 4 of 33.)
const CORRECTIONS_PER_ATTEMPT: u32 = 2;

/// A coding agent: a model, the tools it may call, and the rules of one run.
///
/// ```no_run
/// use std::sync::Arc;
/// use harness_agent::{Agent, FakeChat, NoCheckpoints, Reply, Verification};
/// use harness_sandbox::Workspace;
/// use harness_tools::Toolbox;
///
/// let toolbox = Toolbox::new(Workspace::new("/path/to/repo")?);
/// let chat = Arc::new(FakeChat::new([Reply::text("Nothing to do.")]));
/// let report = Agent::new(chat, &toolbox)
///     .verification(Verification::parse("cargo test")?)
///     .run("make the failing test pass", &mut (), &mut NoCheckpoints);
/// println!("{}: {}", report.outcome, report.reason);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Agent<'a> {
    /// The model.
    chat: Arc<dyn ChatClient>,
    /// The tools, over the workspace.
    toolbox: &'a Toolbox,
    /// The limits of the run.
    budgets: Budgets,
    /// The command that decides whether the run succeeded.
    verification: Option<Verification>,
    /// What the verification loads besides the code under test, and whether the tests
    /// among it may change (`--allow-test-edits`).
    inputs: Option<(VerificationInputs, bool)>,
    /// Where the record of the run goes.
    transcript: Option<Transcript>,
    /// Raised to stop the run.
    stop: StopSignal,
    /// Which edits written into an answer are applied.
    edit_format: EditFormat,
}

impl<'a> Agent<'a> {
    /// An agent asking `chat` and calling the tools of `toolbox`, with default [`Budgets`],
    /// no verification command, no transcript and a stop signal of its own.
    pub fn new(chat: Arc<dyn ChatClient>, toolbox: &'a Toolbox) -> Agent<'a> {
        Agent {
            chat,
            toolbox,
            budgets: Budgets::default(),
            verification: None,
            inputs: None,
            transcript: None,
            stop: StopSignal::new(),
            edit_format: EditFormat::default(),
        }
    }

    /// Sets the limits of the run.
    pub fn budgets(mut self, budgets: Budgets) -> Agent<'a> {
        self.budgets = budgets;
        self
    }

    /// Sets the verification command: without one, a run the model says is done ends
    /// [`Outcome::Unverified`].
    pub fn verification(mut self, verification: Verification) -> Agent<'a> {
        self.verification = Some(verification);
        self
    }

    /// Judges each passing run of the verification command by what it loads besides the
    /// code under test: when any of `inputs` changed since the run began (by the
    /// [`Checkpoints::changes`] of the run), the pass does not count, the model is told
    /// what changed, and a run that ends so ends [`Outcome::TestsChanged`]. With
    /// `tests_may_change` (the user's `--allow-test-edits`) the tests among the inputs may
    /// change; what the runner loads its own code from may not.
    pub fn verification_inputs(
        mut self,
        inputs: VerificationInputs,
        tests_may_change: bool,
    ) -> Agent<'a> {
        self.inputs = Some((inputs, tests_may_change));
        self
    }

    /// Writes the run's record to `transcript`.
    pub fn transcript(mut self, transcript: Transcript) -> Agent<'a> {
        self.transcript = Some(transcript);
        self
    }

    /// Sets which edits the model writes into an answer, instead of calling a tool, are
    /// applied (through the same tools): [`EditFormat::Auto`] by default.
    pub fn edit_format(mut self, format: EditFormat) -> Agent<'a> {
        self.edit_format = format;
        self
    }

    /// Stops the run when `stop` is raised; see [`StopSignal`].
    pub fn stop_signal(mut self, stop: StopSignal) -> Agent<'a> {
        self.stop = stop;
        self
    }

    /// Runs the task to an outcome, reporting each [`Event`] to `observer` and taking a
    /// checkpoint after each step that may have changed files.
    ///
    /// Nothing here fails: a model that cannot be reached, a tool that fails, a budget that
    /// runs out are all outcomes, in the report.
    pub fn run(
        self,
        task: &str,
        observer: &mut dyn Observer,
        checkpoints: &mut dyn Checkpoints,
    ) -> RunReport {
        let tools: Vec<Value> = if self.edit_format.offers_tools() {
            self.toolbox
                .specs()
                .iter()
                .filter_map(|spec| serde_json::to_value(spec).ok())
                .collect()
        } else {
            Vec::new()
        };
        let tools_chars = tools.iter().map(|tool| tool.to_string().len()).sum();
        let mut run = Run {
            chat: self.chat,
            toolbox: self.toolbox,
            budgets: self.budgets,
            verification: self.verification,
            inputs: self.inputs,
            transcript: self.transcript,
            stop: self.stop,
            edit_format: self.edit_format,
            observer,
            checkpoints,
            tools,
            tools_chars,
            messages: Vec::new(),
            started: Instant::now(),
            counts: Counts::default(),
            progress: Progress::default(),
            final_text: String::new(),
            warnings: Vec::new(),
            attempt: Attempt::FIRST,
            opening: None,
        };
        let context_window = match run.start(task) {
            Ok(tokens) => tokens,
            Err(error) => return run.finish(Outcome::ModelError, error.to_string()),
        };
        loop {
            let (outcome, reason) = run.go(task, context_window);
            let (outcome, reason) = run.check_what_was_left(outcome, reason);
            if !run.try_again(outcome, &reason) {
                return run.finish(outcome, reason);
            }
        }
    }
}

/// Why an attempt ended whose last answer wrote the code as the files already hold it
/// ([`blocks::Edits::changes_nothing`]), when another attempt is left. Such an answer is the
/// fix the model believes it made; told it changes nothing, a small model says so again.
/// (Measured with Qwen2.5-Coder-1.5B over 56 suite runs, 2026-12-04: of the 21 attempts told
/// so, none was verified.)
const CHANGED_NOTHING: &str = "the model's answer wrote the code as the files already hold it";

/// Why an attempt ended whose last answer showed a part of a file that has no one place in
/// it, and so changed nothing ([`blocks::Edits::unplaced`]), when another attempt is left.
/// (9 of the 21 attempts measured for [`CHANGED_NOTHING`] were told this.)
const UNPLACED: &str =
    "the model's answer showed part of a file with no one place in it, and changed nothing";

/// The state of one run. Every field is needed by more than one step of the loop.
struct Run<'a> {
    /// The model.
    chat: Arc<dyn ChatClient>,
    /// The tools.
    toolbox: &'a Toolbox,
    /// The limits.
    budgets: Budgets,
    /// The command that decides success.
    verification: Option<Verification>,
    /// What it loads besides the code under test, and whether the tests may change.
    inputs: Option<(VerificationInputs, bool)>,
    /// The record being written.
    transcript: Option<Transcript>,
    /// Raised to stop.
    stop: StopSignal,
    /// Which edits written into an answer are applied.
    edit_format: EditFormat,
    /// Told every event.
    observer: &'a mut dyn Observer,
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
    progress: Progress,
    /// The model's last text.
    final_text: String,
    /// Problems that did not end the run.
    warnings: Vec<String>,
    /// The attempt at the task under way.
    attempt: Attempt,
    /// How the first attempt opened, for the later ones to open the same way.
    opening: Option<Opening>,
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
}

/// What the loop knows of how the model is doing, to steer it: repeats and failures in a
/// row, edits and checks, and what it has read.
#[derive(Default)]
struct Progress {
    /// Identical calls in a row.
    repeats: Repeats,
    /// Failed calls in a row.
    failed_in_row: u32,
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
    /// The files whose code the last answer repeated as it is, in a block under no path
    /// ([`blocks::Edits::repeated`]).
    repeated: BTreeSet<String>,
    /// Whether the model has written or edited a file successfully.
    edited: bool,
    /// Whether a call of the last turn may have changed the workspace.
    changed_in_turn: bool,
    /// Empty answers in a row, each asked again ([`Run::empty_answer`]).
    empty_in_row: u32,
    /// The answers of this attempt the model was told how to put right ([`Run::nudge`]).
    corrections: u32,
    /// What commands wrote where git does not look that could not be put back before the
    /// last check ran ([`Checkpoints::before_verification`]): the check may have run it,
    /// so a pass is not counted as verified. Empty when all was put back.
    unvouched: Vec<String>,
    /// Whether the model itself ran the verification command, and it passed, after its
    /// last edit: the task is done by the run's own measure, so the harness checks it.
    passed_after_edit: bool,
    /// The last answer, as text and calls, to see the model give the same one again.
    last_answer: Option<(String, Vec<(String, Value)>)>,
    /// How many answers in a row were the same as the one before (at most
    /// [`MAX_RESAMPLE`]): the next request is sampled differently by that much.
    resample: u32,
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

/// What the model thread sends the loop.
enum FromModel {
    Text(String),
    Done(Result<Reply, ChatError>),
}

/// How the tool calls of one turn went.
enum TurnEnd {
    /// All ran; go on.
    Continue,
    /// The run ends.
    Ended(Outcome, String),
}

impl Run<'_> {
    /// Reports and records the start of the run; returns the model's context window.
    fn start(&mut self, task: &str) -> Result<u32, ChatError> {
        let context_window = self.chat.context_window()?;
        let workspace = self.toolbox.workspace().root().to_string();
        let verification_command = self.verification.as_ref().map(|v| v.command().to_owned());
        self.observer.on_event(&Event::Started {
            task,
            workspace: &workspace,
            context_window,
            verification: verification_command.as_deref(),
        });
        self.record(Record::Run {
            format: TRANSCRIPT_FORMAT,
            task: task.to_owned(),
            workspace: workspace.clone(),
            context_window: Some(context_window),
            verification: verification_command.clone(),
            budgets: Some(RecordedBudgets {
                max_steps: self.budgets.max_steps,
                max_seconds: self.budgets.max_duration.as_secs_f64(),
                max_failed_calls: self.budgets.max_failed_calls,
                max_tokens: self.budgets.max_tokens,
                attempts: self.budgets.attempts,
            }),
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
        let limit = (context_window.saturating_sub(self.budgets.answer_reserve_tokens)) as usize;
        loop {
            if let Some(end) = self.budget_exhausted().or_else(|| self.corrected_enough()) {
                return end;
            }
            self.counts.step += 1;
            let elided = context::fit(&mut self.messages, KEPT_HEAD, self.tools_chars, limit);
            if elided > 0 {
                self.observer.on_event(&Event::ContextTrimmed {
                    step: self.counts.step,
                    elided,
                });
                self.record(Record::Trim {
                    step: self.counts.step,
                    elided,
                });
            }
            let (reply, took) = match self.ask() {
                Answer::Reply(reply, took) => (reply, took),
                Answer::Failed(error) => return (Outcome::ModelError, error.to_string()),
                Answer::Stopped => return self.interrupted(),
                Answer::OutOfTime => return self.out_of_time(),
            };
            tracing::debug!(
                step = self.counts.step,
                tool_calls = reply.tool_calls.len(),
                seconds = took.as_secs_f64(),
                "the model answered"
            );
            self.counts.prompt_tokens += reply.prompt_tokens.unwrap_or(0);
            self.counts.completion_tokens += reply.completion_tokens.unwrap_or(0);
            self.observer.on_event(&Event::Replied {
                step: self.counts.step,
                tool_calls: reply.tool_calls.len(),
                prompt_tokens: reply.prompt_tokens,
                completion_tokens: reply.completion_tokens,
                seconds: took.as_secs_f64(),
            });
            self.record(Record::Reply {
                step: self.counts.step,
                content: reply.text.clone(),
                tool_calls: reply.tool_calls.clone(),
                cut_off: reply.cut_off,
                prompt_tokens: reply.prompt_tokens,
                completion_tokens: reply.completion_tokens,
                seconds: took.as_secs_f64(),
            });
            if self.empty_answer(&reply) {
                continue;
            }
            if !reply.text.trim().is_empty() {
                self.final_text = reply.text.trim().to_owned();
            }
            self.note_repeated_answer(&reply);
            self.messages.push(reply.to_message());
            if let Some(end) = self.same_answer_again(&reply) {
                return end;
            }
            if reply.tool_calls.is_empty() {
                if reply.cut_off {
                    self.nudge(prompt::cut_off(self.edit_format).to_owned());
                    continue;
                }
                match self.written_calls(&reply.text) {
                    Some(TurnEnd::Ended(outcome, reason)) => return (outcome, reason),
                    Some(TurnEnd::Continue) => continue,
                    None => {}
                }
                if self.progress.failure_stands {
                    if let Some(end) = self.done_while_failure_stands() {
                        return end;
                    }
                    continue;
                }
                if let Some(end) = self.done(CheckReason::Done) {
                    return end;
                }
                continue;
            }
            if let TurnEnd::Ended(outcome, reason) = self.run_calls(&reply.tool_calls) {
                return (outcome, reason);
            }
            // Every call failed, and the answer also wrote its change out as code: that is
            // the model's other statement of the same change, so it is made. (Measured with
            // Qwen2.5-Coder-1.5B: answers show the fixed file, then a call as JSON whose
            // `old_text` is not in the file; 6 of 22 answers with calls in one suite run.)
            if self.every_call_failed(reply.tool_calls.len()) {
                match self.edit_blocks(&reply.text, Blocks::BesideFailedCalls) {
                    Some(TurnEnd::Ended(outcome, reason)) => return (outcome, reason),
                    Some(TurnEnd::Continue) => continue,
                    None => {}
                }
            }
            // The model's own run of the verification command passed after its edits: it
            // may go on (small models loop on), but the run's measure of done is met, so
            // the harness checks, as if the model had said it was done.
            if std::mem::take(&mut self.progress.passed_after_edit)
                && let Some(end) = self.done(CheckReason::ModelRanIt)
            {
                return end;
            }
        }
    }

    /// Opens an attempt from nothing: the system prompt, the task and, unless it is turned
    /// off, the head start, which is kept as the [`Opening`] of later attempts. `previous`
    /// is how the attempt before ended, when one did and there is no opening to reuse: the
    /// task then says so.
    fn open(&mut self, task: &str, previous: Option<Outcome>) {
        let workspace = self.toolbox.workspace().root().to_string();
        let tool_names: Vec<&str> = self.toolbox.specs().iter().map(|s| s.name()).collect();
        let head_start = self.budgets.head_start_chars > 0;
        self.push(Message::system(prompt::system_prompt(
            &tool_names,
            self.verification.is_some(),
            self.edit_format,
        )));
        let task = match previous {
            None => task.to_owned(),
            Some(previous) => format!(
                "{task}\n\n{}",
                prompt::next_attempt((self.attempt.number, self.budgets.attempts), previous)
            ),
        };
        self.push(Message::user(prompt::task_message(
            &task,
            &workspace,
            self.verification.as_ref(),
            head_start,
            self.edit_format,
        )));
        if !head_start {
            return;
        }
        // The head start is step 0: its calls are the harness's own.
        let steps = std::mem::replace(&mut self.counts.step, 0);
        self.head_start();
        self.counts.step = steps;
        self.opening = Some(Opening {
            messages: self.messages.clone(),
            read: self.progress.read.clone(),
            failure_stands: self.progress.failure_stands,
        });
        self.push(Message::user(
            prompt::after_head_start(self.edit_format).to_owned(),
        ));
    }

    /// Opens a later attempt the way the first one opened ([`Opening`]), followed by how
    /// the attempt before it ended and what to do now.
    fn reopen(&mut self, opening: Opening, previous: Outcome) {
        self.messages = opening.messages;
        self.progress.read = opening.read;
        self.progress.failure_stands = opening.failure_stands;
        let note = prompt::next_attempt((self.attempt.number, self.budgets.attempts), previous);
        self.push(Message::user(format!(
            "{note}\n\n{}",
            prompt::after_head_start(self.edit_format)
        )));
    }

    /// Gives the model what a person looks at first: the listing of the workspace, with a
    /// verification command its output now, and the files that output names (in a small
    /// project, every file). Each is presented as a turn of its own in which the assistant
    /// made the call, so the results arrive the way every tool result does (as data, in tool
    /// messages), and a small model sees, turn after turn, that working means calling tools.
    /// (Measured with Qwen2.5-Coder-1.5B: all the calls in one turn, followed by the
    /// harness's instruction, made it repeat that instruction back as its answer.)
    fn head_start(&mut self) {
        let mut budget = self.budgets.head_start_chars;
        let mut done: Vec<(ToolCall, String)> = Vec::new();
        let mut first = vec![(ToolName::ListDir, json!({}))];
        if let Some(verification) = &self.verification {
            first.push((ToolName::RunCommand, verification.call_arguments()));
        }
        // The listing and the verification output share the budget at most half each.
        let share = budget / (2 * first.len());
        let mut texts = Vec::new();
        for (name, arguments) in first {
            if self.stop.is_requested() {
                break;
            }
            if name == ToolName::RunCommand {
                // Nothing ran yet to put back; what it writes is kept for the first check.
                self.reset_before_check(0);
            }
            let (call, result) = self.head_start_call(done.len(), name, arguments);
            if name == ToolName::RunCommand {
                self.keep_after_check(0);
                self.progress.failure_stands = !verify::passed(&result);
            }
            let text = prompt::cut_middle(result.text(), share);
            budget = budget.saturating_sub(text.chars().count());
            texts.push(result.text().to_owned());
            done.push((
                call,
                prompt::tool_result(name.as_str(), result.summary().target(), &text),
            ));
        }
        let listing = texts.first().map_or("", String::as_str);
        let output = texts.get(1).map_or("", String::as_str);
        let paths = head_start::files_to_read(self.toolbox, listing, output, |path| {
            self.toolbox.is_protected_test_file(path)
        });
        for path in paths {
            if self.stop.is_requested() || budget == 0 {
                break;
            }
            let (call, result) =
                self.head_start_call(done.len(), ToolName::ReadFile, json!({"path": path}));
            // A model that writes whole files back is shown them as they are: measured with
            // Qwen2.5-Coder-1.5B, shown numbered lines, it wrote the file back unchanged,
            // numbers and all.
            let shown = if self.edit_format.offers_tools() {
                None
            } else {
                let lines: Vec<&str> = result.text().lines().collect();
                blocks::without_line_numbers(&lines).map(|lines| lines.join("\n") + "\n")
            };
            let text = prompt::cut_middle(shown.as_deref().unwrap_or(result.text()), budget);
            budget = budget.saturating_sub(text.chars().count());
            done.push((
                call,
                prompt::tool_result(ToolName::ReadFile.as_str(), &path, &text),
            ));
        }
        for (call, framed) in done {
            self.messages
                .push(Message::assistant("", vec![call.clone()]));
            self.messages.push(Message::tool_result(&call, framed));
        }
    }

    /// Runs one call of the head start, as call number `position`.
    fn head_start_call(
        &mut self,
        position: usize,
        tool: ToolName,
        arguments: Value,
    ) -> (ToolCall, ToolResult) {
        let call = ToolCall {
            id: format!("head_start_{position}"),
            name: tool.as_str().to_owned(),
            arguments,
            origin: CallOrigin::Structured,
        };
        let result = self.call_tool(&call);
        (call, result)
    }

    /// The outcome of a budget that ran out or a stop that was asked for, if any.
    fn budget_exhausted(&self) -> Option<(Outcome, String)> {
        if self.stop.is_requested() {
            return Some(self.interrupted());
        }
        if self.started.elapsed() >= self.budgets.max_duration {
            return Some(self.out_of_time());
        }
        if self.counts.step - self.attempt.steps_before >= self.budgets.max_steps {
            return Some((
                Outcome::StepLimit,
                format!(
                    "the model took {} without finishing (the limit)",
                    count(u64::from(self.budgets.max_steps), "step")
                ),
            ));
        }
        match self.budgets.max_tokens {
            Some(max) if self.counts.prompt_tokens + self.counts.completion_tokens >= max => {
                Some((
                    Outcome::TokenLimit,
                    format!(
                        "the run used {} tokens, over its budget of {max}",
                        self.counts.prompt_tokens + self.counts.completion_tokens
                    ),
                ))
            }
            _ => None,
        }
    }

    fn interrupted(&self) -> (Outcome, String) {
        (
            Outcome::Interrupted,
            "the run was stopped on request".to_owned(),
        )
    }

    fn out_of_time(&self) -> (Outcome, String) {
        (
            Outcome::TimeLimit,
            format!(
                "the run took longer than its limit of {} s",
                self.budgets.max_duration.as_secs()
            ),
        )
    }

    /// Asks the model, on a thread of its own, while watching the stop signal and the clock.
    ///
    /// A model answer cannot be cut short from inside the client, and a small local model
    /// may take minutes: waiting here instead means Ctrl-C and the time limit take effect at
    /// once. An abandoned request finishes, unread, in the background.
    fn ask(&mut self) -> Answer {
        self.observer.on_event(&Event::Waiting {
            step: self.counts.step,
        });
        let (sender, receiver) = mpsc::channel();
        let chat = Arc::clone(&self.chat);
        let messages = if self.edit_format.offers_tools() {
            self.messages.clone()
        } else {
            plain::conversation(&self.messages)
        };
        let tools = self.tools.clone();
        // A later attempt is sampled differently from its first request on, and a retry
        // within it differently again.
        let resample = (self.progress.resample + self.attempt.number - 1).min(MAX_RESAMPLE);
        let asked = Instant::now();
        let spawned = thread::Builder::new()
            .name("harness-model".to_owned())
            .spawn(move || {
                let texts = sender.clone();
                let mut on_text = |text: &str| {
                    // The loop may have stopped listening: the text is then unwanted.
                    let _ = texts.send(FromModel::Text(text.to_owned()));
                };
                let answer = chat.chat_resampled(&messages, &tools, &mut on_text, resample);
                let _ = sender.send(FromModel::Done(answer));
            });
        if let Err(error) = spawned {
            return Answer::Failed(ChatError::new(format!(
                "cannot start a thread to ask the model: {error}"
            )));
        }
        loop {
            match receiver.recv_timeout(POLL) {
                Ok(FromModel::Text(text)) => self.observer.on_event(&Event::Text {
                    step: self.counts.step,
                    text: &text,
                }),
                Ok(FromModel::Done(Ok(reply))) => return Answer::Reply(reply, asked.elapsed()),
                Ok(FromModel::Done(Err(error))) => return Answer::Failed(error),
                Err(RecvTimeoutError::Timeout) => {
                    if self.stop.is_requested() {
                        return Answer::Stopped;
                    }
                    if self.started.elapsed() >= self.budgets.max_duration {
                        return Answer::OutOfTime;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Answer::Failed(ChatError::new(
                        "the model client stopped without an answer (it panicked)",
                    ));
                }
            }
        }
    }

    /// Runs the calls of one turn in order, then checkpoints if files may have changed.
    fn run_calls(&mut self, calls: &[ToolCall]) -> TurnEnd {
        let mut end = TurnEnd::Continue;
        let mut changed = Vec::new();
        let mut nudge = None;
        for call in calls {
            if self.stop.is_requested() {
                let (outcome, reason) = self.interrupted();
                end = TurnEnd::Ended(outcome, reason);
                break;
            }
            let repeats = self.progress.repeats.record(&call.name, &call.arguments);
            if repeats >= self.budgets.repeat_stop {
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
            let mut framed =
                prompt::tool_result(&call.name, result.summary().target(), result.text());
            if tool == Some(ToolName::RunCommand)
                && let Some(note) = self.verify_after(result.summary().target(), result.put_back())
            {
                framed.push_str(&note);
            }
            self.messages.push(Message::tool_result(call, framed));
            if edits && !result.is_error() {
                self.progress.edited = true;
                self.progress.passed_after_edit = false;
            }
            let ran_the_verification =
                tool == Some(ToolName::RunCommand) && self.runs_the_verification(call);
            if ran_the_verification && self.progress.edited && verify::passed(&result) {
                self.progress.passed_after_edit = true;
            }
            if result.may_have_changed_workspace() {
                changed.push(format!("{} {}", call.name, result.summary().target()));
            }
            // The model's own run of the check tells as much as the harness's; any other
            // call that may have changed a file may have changed the check's outcome.
            if ran_the_verification {
                self.progress.failure_stands = !verify::passed(&result);
            } else if result.may_have_changed_workspace() {
                self.progress.failure_stands = false;
            }
            if repeats == self.budgets.repeat_nudge {
                nudge = Some(prompt::repeat_nudge(
                    &call.name,
                    repeats,
                    self.budgets.repeat_stop,
                ));
            }
            self.progress.failed_in_row = if result.is_error() {
                self.progress.failed_in_row + 1
            } else {
                0
            };
            if self.progress.failed_in_row >= self.budgets.max_failed_calls {
                end = TurnEnd::Ended(
                    Outcome::Stuck,
                    format!(
                        "{} in a row failed",
                        count(u64::from(self.progress.failed_in_row), "tool call")
                    ),
                );
                break;
            }
        }
        self.progress.changed_in_turn = !changed.is_empty();
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
        end
    }

    /// The calls an answer without a tool call writes out: the edits of its blocks, or a
    /// call spelled out as JSON that did not run. Where tools are offered, a spelled-out
    /// call comes first (its JSON may hold code that would read as a block); where none
    /// are, the blocks are what the model was asked for. `None` if the answer holds neither.
    fn written_calls(&mut self, text: &str) -> Option<TurnEnd> {
        if self.edit_format.offers_tools() {
            self.unreadable_call(text)
                .or_else(|| self.edit_blocks(text, Blocks::Alone))
        } else {
            self.edit_blocks(text, Blocks::Alone)
                .or_else(|| self.unreadable_call(text))
        }
    }

    /// An answer that spells out a call the client could not read (small models write JSON
    /// with unescaped quotes) is not "done": the model is told its call did not run, and it
    /// counts as a failed call; in an edit format that offers no tools, it is told that
    /// none can be called, and how to write the change instead. `None` if the text names no
    /// call; otherwise whether the run goes on (the model was told) or ends (one failed call
    /// too many).
    fn unreadable_call(&mut self, text: &str) -> Option<TurnEnd> {
        let tool = self
            .toolbox
            .specs()
            .iter()
            .map(|spec| spec.name())
            .find(|name| prompt::names_a_call(text, name))?
            .to_owned();
        self.progress.failed_in_row += 1;
        if self.progress.failed_in_row >= self.budgets.max_failed_calls {
            return Some(TurnEnd::Ended(
                Outcome::Stuck,
                format!(
                    "{} in a row failed (the last, a call of {tool}, could not be read)",
                    count(u64::from(self.progress.failed_in_row), "tool call")
                ),
            ));
        }
        self.nudge(if self.edit_format.offers_tools() {
            prompt::unreadable_call(&tool)
        } else {
            prompt::no_tools(&tool, self.edit_format)
        });
        Some(TurnEnd::Continue)
    }

    /// An answer that holds edits as blocks ([`blocks`]): they are made as the calls they
    /// stand for, and when all of them worked the answer counts as the model saying it is
    /// done, so the verification runs at once, as after a call-less answer. `None` when
    /// the answer holds none, or, beside its failed calls, none that can be made: those
    /// calls' errors are what the model reads.
    fn edit_blocks(&mut self, text: &str, blocks: Blocks) -> Option<TurnEnd> {
        let workspace = self.toolbox.workspace();
        let found = blocks::edits(
            text,
            self.edit_format,
            &blocks::Files::new(workspace.root().as_str(), |path| {
                workspace.read_to_string(path).ok()
            }),
            &self.progress.read,
        );
        self.progress.repeated = found.repeated;
        if found.calls.is_empty() {
            if found.problems.is_empty() || blocks == Blocks::BesideFailedCalls {
                return None;
            }
            if found.changes_nothing && self.another_attempt_left() {
                let why = if found.unplaced {
                    UNPLACED
                } else {
                    CHANGED_NOTHING
                };
                return Some(TurnEnd::Ended(Outcome::Stuck, why.to_owned()));
            }
            self.progress.failed_in_row += 1;
            if self.progress.failed_in_row >= self.budgets.max_failed_calls {
                return Some(TurnEnd::Ended(
                    Outcome::Stuck,
                    format!(
                        "{} in a row failed (the last, an edit written into the answer, could not be applied)",
                        count(u64::from(self.progress.failed_in_row), "tool call")
                    ),
                ));
            }
            self.nudge(found.problems.join("\n"));
            return Some(TurnEnd::Continue);
        }
        let calls: Vec<ToolCall> = found
            .calls
            .into_iter()
            .enumerate()
            .map(|(position, (tool, arguments))| ToolCall {
                id: format!("block_{}_{position}", self.counts.step),
                name: tool.as_str().to_owned(),
                arguments,
                origin: CallOrigin::EditBlock,
            })
            .collect();
        // The calls belong to the answer they were written in, so that their results
        // follow it the way every tool result follows its call.
        if let Some(answer) = self
            .messages
            .iter_mut()
            .rev()
            .find(|message| message.role == Role::Assistant)
        {
            answer.tool_calls.extend(calls.iter().cloned());
        }
        if let TurnEnd::Ended(outcome, reason) = self.run_calls(&calls) {
            return Some(TurnEnd::Ended(outcome, reason));
        }
        let applied = self.progress.changed_in_turn;
        if !found.problems.is_empty() {
            self.nudge(found.problems.join("\n"));
        }
        // A block that could not be applied, or an edit that failed (a refused path, a
        // protected file), is read by the model first; unless another block of the answer
        // changed a file: the check then tells whether that change was the fix. (Measured
        // with Qwen2.5-Coder-1.5B: answers that fix the code and also rewrite the test,
        // which is refused, were told of the refusal and gave the same answer again, turn
        // after turn, without the fix ever being checked.)
        if !applied && (!found.problems.is_empty() || self.progress.failed_in_row > 0) {
            return Some(TurnEnd::Continue);
        }
        match self.done(CheckReason::Done) {
            Some((outcome, reason)) => Some(TurnEnd::Ended(outcome, reason)),
            None => Some(TurnEnd::Continue),
        }
    }

    /// The time the run has left before its limit: the most any command it runs may take.
    fn time_left(&self) -> Duration {
        self.budgets
            .max_duration
            .saturating_sub(self.started.elapsed())
    }

    /// Whether each of the last turn's `calls` calls failed: the failures in a row reach
    /// back to its first.
    fn every_call_failed(&self, calls: usize) -> bool {
        self.progress.failed_in_row as usize >= calls
    }

    /// The model says it is done while the check's last failure stands: nothing has changed
    /// since it failed, so it is not run again, and the model is told so. The answer still
    /// counts as one of the attempt's checks, so a run ends where it ended when every done
    /// ran the check. (Measured with Qwen2.5-Coder-1.5B: letting five such answers in a row
    /// go on instead of three gave the model no fix in 8 runs and cost time.)
    fn done_while_failure_stands(&mut self) -> Option<(Outcome, String)> {
        let verification = self.verification.clone()?;
        self.progress.unchecked_dones += 1;
        let dones = self.dones_of_attempt();
        if dones >= self.budgets.max_verifications {
            return Some(self.out_of_checks(&verification, None));
        }
        let mut told = String::new();
        let repeated = std::mem::take(&mut self.progress.repeated);
        if !repeated.is_empty() && self.another_attempt_left() {
            return Some((Outcome::Stuck, CHANGED_NOTHING.to_owned()));
        }
        if !repeated.is_empty() {
            told = format!("{} ", blocks::unchanged(&repeated));
        }
        told.push_str(&prompt::failure_stands(
            verification.command(),
            dones,
            self.budgets.max_verifications,
            self.progress.edited,
            self.edit_format,
        ));
        self.nudge(told);
        None
    }

    /// The checks of this attempt: the verification's runs after a done, and the dones
    /// answered on a standing failure without a run.
    fn dones_of_attempt(&self) -> u32 {
        self.counts.verifications - self.attempt.checks_before + self.progress.unchecked_dones
    }

    /// The end of an attempt whose checks are used up; `detail` is how the last run went,
    /// when the last check ran.
    fn out_of_checks(
        &self,
        verification: &Verification,
        detail: Option<&str>,
    ) -> (Outcome, String) {
        if let Some(end) = self.tests_changed_end(verification) {
            return end;
        }
        let dones = self.dones_of_attempt();
        let unchecked = self.progress.unchecked_dones;
        let last = detail.map_or(String::new(), |detail| format!(" ({detail} the last time)"));
        let reason = if unchecked == 0 {
            format!(
                "`{}` failed {}{last}",
                verification.command(),
                count(u64::from(dones), "time")
            )
        } else {
            format!(
                "`{}` failed{last}, and the model said it was done {}, {unchecked} \
                 of them with nothing changed since it failed",
                verification.command(),
                count(u64::from(dones), "time")
            )
        };
        (Outcome::VerificationFailed, reason)
    }

    /// The model says it is done (or its own run of the check passed: `reason`): verify,
    /// and either end or send it back to work.
    fn done(&mut self, reason: CheckReason) -> Option<(Outcome, String)> {
        let Some(verification) = self.verification.clone() else {
            return Some((
                Outcome::Unverified,
                "the model said it was done; no verification command checked it".to_owned(),
            ));
        };
        let (number, result) = self.check(&verification, reason);
        // Each attempt has the budget of checks; a done on a standing failure is one.
        let attempt = self.dones_of_attempt();
        let passed = self.progress.verification_passed;
        let detail = result.summary().detail().to_string();
        if passed {
            return Some(self.vouched(format!("`{}` exited 0", verification.command())));
        }
        if attempt >= self.budgets.max_verifications {
            return Some(self.out_of_checks(&verification, Some(&detail)));
        }
        // The check is shown as a call on the model's "done" message, so that its output
        // reaches the model as a tool result, data like every other.
        let call = ToolCall {
            id: format!("verification_{number}"),
            name: ToolName::RunCommand.as_str().to_owned(),
            arguments: verification.call_arguments(),
            origin: CallOrigin::Structured,
        };
        // After an answer's edit blocks or the model's own run of the check, the last message
        // is a tool result: the call then goes on an assistant message of its own.
        match self.messages.last_mut() {
            Some(done) if done.role == Role::Assistant => done.tool_calls.push(call.clone()),
            _ => self
                .messages
                .push(Message::assistant("", vec![call.clone()])),
        }
        let framed = prompt::tool_result(
            ToolName::RunCommand.as_str(),
            verification.command(),
            result.text(),
        );
        self.messages.push(Message::tool_result(&call, framed));
        // The check's output is news for the model, not a correction of its answer.
        let news = if self.progress.inputs_changed.is_empty() {
            prompt::verification_failed(
                verification.command(),
                attempt,
                self.budgets.max_verifications,
                self.progress.edited,
                self.edit_format,
            )
        } else {
            prompt::inputs_changed(
                verification.command(),
                &self.progress.inputs_changed,
                attempt,
                self.budgets.max_verifications,
            )
        };
        self.tell(news);
        None
    }

    /// The end of a run whose last check exited 0 but found what the verification loads
    /// besides the code under test changed: [`Outcome::TestsChanged`], naming what.
    fn tests_changed_end(&self, verification: &Verification) -> Option<(Outcome, String)> {
        (!self.progress.inputs_changed.is_empty()).then(|| {
            (
                Outcome::TestsChanged,
                format!(
                    "`{}` exited 0, but what it loads besides the code under test changed \
                     since the run began, so the pass does not show the code was fixed: {}",
                    verification.command(),
                    self.progress.inputs_changed.join("; ")
                ),
            )
        })
    }

    /// What the verification loads besides the code under test that changed since the run
    /// began, one line each; empty when nothing did, or no inputs were given, or the run
    /// keeps no record to compare with. A list that cannot be made is a finding: the pass
    /// cannot be shown to be worth anything.
    fn inputs_changed(&mut self) -> Vec<String> {
        let Some((inputs, tests_may_change)) = &self.inputs else {
            return Vec::new();
        };
        let root = self.toolbox.workspace().root().as_std_path().to_owned();
        match self.checkpoints.changes() {
            Ok(Some(changes)) => inputs
                .judge(&root, &changes, *tests_may_change)
                .iter()
                .map(ToString::to_string)
                .collect(),
            Ok(None) => Vec::new(),
            Err(error) => vec![format!(
                "the run's changes could not be listed to see whether the tests changed \
                 ({error})"
            )],
        }
    }

    /// An answer with no text and no call says nothing, not "done": the same request is
    /// asked again at once, sampled differently, up to [`MAX_EMPTY_IN_ROW`] times in a
    /// row; then the answer is taken as it is. Nothing is added to the conversation, so the
    /// server has the whole prompt evaluated already. (Measured with Qwen2.5-Coder-1.5B on
    /// the task suite: the first request of every second attempt, at temperature 0.5 and
    /// seed 1, was answered with the end of the message and nothing else; taken for done,
    /// each cost a check and a turn.)
    fn empty_answer(&mut self, reply: &Reply) -> bool {
        let empty = reply.text.trim().is_empty() && reply.tool_calls.is_empty() && !reply.cut_off;
        if !empty || self.progress.empty_in_row >= MAX_EMPTY_IN_ROW {
            self.progress.empty_in_row = 0;
            return false;
        }
        self.progress.empty_in_row += 1;
        self.progress.resample = (self.progress.resample + 1).min(MAX_RESAMPLE);
        tracing::info!(
            step = self.counts.step,
            resample = self.progress.resample,
            "the model answered nothing: asked again, sampled differently"
        );
        true
    }

    /// Ends the attempt when the model gave, without a tool call, the answer it gave the
    /// turn before and another attempt is left: a fresh attempt, from the opening and
    /// sampled differently, is likelier to go otherwise than asking again. (Measured with
    /// Qwen2.5-Coder-1.5B on the task suite: once its answer is in the conversation twice,
    /// it gave it again word for word even at a temperature of 0.8, each time 10-40 s.)
    /// On the last attempt the next request is sampled differently instead
    /// ([`Run::note_repeated_answer`]).
    fn same_answer_again(&self, reply: &Reply) -> Option<(Outcome, String)> {
        let repeated = reply.tool_calls.is_empty() && self.progress.resample > 0;
        (repeated && self.another_attempt_left()).then(|| {
            (
                Outcome::Stuck,
                "the model gave the same answer as the turn before".to_owned(),
            )
        })
    }

    /// Ends the attempt when the model was told [`CORRECTIONS_PER_ATTEMPT`] times how to
    /// put its answer right and another attempt is left.
    fn corrected_enough(&self) -> Option<(Outcome, String)> {
        (self.progress.corrections >= CORRECTIONS_PER_ATTEMPT && self.another_attempt_left()).then(
            || {
                (
                    Outcome::Stuck,
                    format!(
                        "the model was told {} in this attempt how to put its answer right",
                        count(u64::from(self.progress.corrections), "time")
                    ),
                )
            },
        )
    }

    /// Whether an attempt after this one may begin, if this one ends unverified.
    fn another_attempt_left(&self) -> bool {
        self.attempt.number < self.budgets.attempts
    }

    /// Counts answers that are the same as the one before (the same text and calls): at a
    /// low temperature a small model asked nearly the same thing gives the same answer, turn
    /// after turn, until the run is stuck; the next request is then sampled differently.
    fn note_repeated_answer(&mut self, reply: &Reply) {
        let answer = (
            reply.text.trim().to_owned(),
            reply
                .tool_calls
                .iter()
                .map(|call| (call.name.clone(), call.arguments.clone()))
                .collect::<Vec<_>>(),
        );
        self.progress.resample = if self.progress.last_answer.as_ref() == Some(&answer) {
            (self.progress.resample + 1).min(MAX_RESAMPLE)
        } else {
            0
        };
        if self.progress.resample > 0 {
            tracing::info!(
                step = self.counts.step,
                resample = self.progress.resample,
                "the model gave the same answer again: the next request is sampled differently"
            );
        }
        self.progress.last_answer = Some(answer);
    }

    /// Runs the verification command as check number `attempt`, reporting and recording
    /// it, and takes a checkpoint. Returns the attempt and the command's result; whether it
    /// passed is in `verification_passed`.
    fn check(&mut self, verification: &Verification, reason: CheckReason) -> (u32, ToolResult) {
        self.counts.verifications += 1;
        let attempt = self.counts.verifications;
        self.observer.on_event(&Event::VerificationStarted {
            attempt,
            command: verification.command(),
            reason,
        });
        self.progress.unvouched = self.reset_before_check(attempt);
        let result = verification.run(self.toolbox, self.time_left());
        self.keep_after_check(attempt);
        let exited_0 = verify::passed(&result);
        // Only a pass is judged: a failure is a failure whatever changed.
        let changed = if exited_0 {
            self.inputs_changed()
        } else {
            Vec::new()
        };
        let passed = exited_0 && changed.is_empty();
        self.progress.verification_passed = passed;
        self.progress.failure_stands = !passed;
        let detail = result.summary().detail().to_string();
        self.observer.on_event(&Event::VerificationFinished {
            attempt,
            passed,
            detail: detail.clone(),
            output: result.text(),
            changed: &changed,
        });
        self.record(Record::Verification {
            attempt,
            command: verification.command().to_owned(),
            argv: verification.argv().to_vec(),
            passed,
            detail,
            output: result.text().to_owned(),
            reason,
            changed: changed.clone(),
        });
        self.progress.inputs_changed = changed;
        self.checkpoint(&format!("step {}: verification", self.counts.step));
        (attempt, result)
    }

    /// After an attempt that ended `outcome`, whether another begins: when attempts are
    /// left and another try could end otherwise (the check failed, the model got stuck or
    /// ran out of steps; not a stop, the time or tokens running out, or a run with nothing
    /// to check it), the files are brought back to the state before the run and the
    /// conversation starts afresh. If they cannot be brought back, no attempt follows: one
    /// built on the failed attempt's changes would not be a new attempt.
    fn try_again(&mut self, outcome: Outcome, reason: &str) -> bool {
        let another_could_differ = matches!(
            outcome,
            Outcome::VerificationFailed
                | Outcome::TestsChanged
                | Outcome::Stuck
                | Outcome::StepLimit
        );
        if !another_could_differ
            || self.attempt.number >= self.budgets.attempts
            || self
                .budget_exhausted()
                .is_some_and(|(end, _)| end != Outcome::StepLimit)
        {
            return false;
        }
        let reverted = match self.checkpoints.revert_to_start() {
            Ok(reverted) => reverted,
            Err(error) => {
                self.warn(format!(
                    "no other attempt was made: the files could not be brought back to the \
                     state before the run ({error})"
                ));
                return false;
            }
        };
        self.attempt = Attempt {
            number: self.attempt.number + 1,
            steps_before: self.counts.step,
            checks_before: self.counts.verifications,
            after: Some(outcome),
        };
        self.observer.on_event(&Event::NextAttempt {
            attempt: self.attempt.number,
            of: self.budgets.attempts,
            previous: outcome,
            reason,
            reverted,
        });
        self.record(Record::Attempt {
            attempt: self.attempt.number,
            previous: outcome,
            reason: reason.to_owned(),
            reverted,
        });
        self.messages.clear();
        self.progress = Progress::default();
        self.checkpoint(&format!(
            "attempt {}: the files as they were before the run",
            self.attempt.number
        ));
        true
    }

    /// A run that ended without the model saying it was done (stuck in a loop, out of steps
    /// or tokens) may still have left the task done: small models fix the code and then
    /// repeat themselves. The verification decides, once, on the files as they were left;
    /// a run stopped on request or out of time is not checked.
    fn check_what_was_left(&mut self, outcome: Outcome, reason: String) -> (Outcome, String) {
        let ended_on_its_own = matches!(
            outcome,
            Outcome::Stuck | Outcome::StepLimit | Outcome::TokenLimit
        );
        let Some(verification) = self.verification.clone() else {
            return (outcome, reason);
        };
        if !ended_on_its_own || !self.progress.edited || self.progress.verification_passed {
            return (outcome, reason);
        }
        self.check(&verification, CheckReason::RunEnded);
        if let Some(end) = self.tests_changed_end(&verification) {
            return end;
        }
        if self.progress.verification_passed {
            self.vouched(format!(
                "`{}` exited 0 on the files as the model left them, after the run ended: \
                 {reason}",
                verification.command()
            ))
        } else {
            (outcome, reason)
        }
    }

    /// The outcome of a check that passed (`reason` says how): verified, unless commands
    /// left files where git does not look that could not be put back before it ran. Then
    /// the pass does not show the code in the diff passes, and the run is unverified, with
    /// those files named.
    fn vouched(&self, reason: String) -> (Outcome, String) {
        if self.progress.unvouched.is_empty() {
            return (Outcome::Verified, reason);
        }
        const NAMED: usize = 5;
        let count = self.progress.unvouched.len();
        let mut named = self.progress.unvouched[..count.min(NAMED)].join(", ");
        if count > NAMED {
            named.push_str(&format!(" and {} more", count - NAMED));
        }
        (
            Outcome::Unverified,
            format!(
                "{reason}, but not on the code in the diff alone: commands changed files git \
                 ignores that could not be put back before the check ran (too large to save \
                 at the start), and the check may have run them: {named}"
            ),
        )
    }

    /// Puts back what commands wrote where git does not look before check `attempt` (or
    /// the head start's run, 0), returning what could not be; a failure is warned of and
    /// stands for itself in the list.
    fn reset_before_check(&mut self, attempt: u32) -> Vec<String> {
        match self.checkpoints.before_verification() {
            Ok(left) => left,
            Err(error) => {
                self.warn(format!(
                    "putting back the ignored files commands wrote before check {attempt} \
                     failed: {error}"
                ));
                vec![format!(
                    "(the ignored files could not be put back: {error})"
                )]
            }
        }
    }

    /// Keeps what check `attempt` wrote where git does not look for the next check.
    fn keep_after_check(&mut self, attempt: u32) {
        if let Err(error) = self.checkpoints.after_verification() {
            self.warn(format!(
                "keeping the ignored files check {attempt} wrote failed: {error}"
            ));
        }
    }

    /// Whether `call` runs the verification command itself (the same words).
    fn runs_the_verification(&self, call: &ToolCall) -> bool {
        let Some(verification) = &self.verification else {
            return false;
        };
        matches!(
            parse_call_forgiving(&call.name, &call.arguments).map(|parsed| parsed.args),
            Ok(ToolArgs::RunCommand(run)) if run.argv == verification.argv()
        )
    }

    /// Calls one tool, reporting and recording it.
    fn call_tool(&mut self, call: &ToolCall) -> ToolResult {
        self.observer.on_event(&Event::ToolStarted {
            step: self.counts.step,
            tool: &call.name,
            arguments: &call.arguments,
        });
        let began = Instant::now();
        // No command outlasts the run: the time limit holds while one runs, not after it.
        let result = self
            .toolbox
            .call_within(&call.name, &call.arguments, self.time_left());
        self.finish_call(call, result, began.elapsed())
    }

    /// Shows and records how `call` ended, with `result` after `took`.
    fn finish_call(&mut self, call: &ToolCall, result: ToolResult, took: Duration) -> ToolResult {
        if !result.is_error()
            && let Ok(parsed) = parse_call_forgiving(&call.name, &call.arguments)
            && let ToolArgs::ReadFile(read) = parsed.args
            && !self.progress.read.contains(&read.path)
        {
            self.progress.read.push(read.path);
        }
        let detail = result.summary().detail().to_string();
        self.observer.on_event(&Event::ToolFinished {
            step: self.counts.step,
            tool: &call.name,
            target: result.summary().target(),
            detail: detail.clone(),
            is_error: result.is_error(),
            output: result.text(),
        });
        self.record(Record::Tool {
            step: self.counts.step,
            id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            origin: call.origin,
            summary: result.summary().to_string(),
            is_error: result.is_error(),
            may_have_changed_workspace: result.may_have_changed_workspace(),
            result: result.text().to_owned(),
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
        let path = self.toolbox.written_path(&call.name, &call.arguments)?;
        let error = self.checkpoints.protect(&path).err()?;
        self.warn(format!(
            "saving {path} before step {} failed: {error}",
            self.counts.step
        ));
        Some(ToolResult::unsaved(&call.name, &path, &error.to_string()))
    }

    /// Shows and records `call` as refused with `result`, without running it.
    fn refuse_call(&mut self, call: &ToolCall, result: ToolResult) -> ToolResult {
        self.observer.on_event(&Event::ToolStarted {
            step: self.counts.step,
            tool: &call.name,
            arguments: &call.arguments,
        });
        self.finish_call(call, result, Duration::ZERO)
    }

    /// Reports a failure of the undo record that does not end the run.
    fn warn(&mut self, error: String) {
        self.observer.on_event(&Event::CheckpointFailed {
            step: self.counts.step,
            error: error.clone(),
        });
        self.record(Record::CheckpointFailed {
            step: self.counts.step,
            error: error.clone(),
        });
        self.warnings.push(error);
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
        self.observer.on_event(&Event::Tampered {
            step: self.counts.step,
            command,
            findings: &findings,
        });
        self.record(Record::Tampered {
            step: self.counts.step,
            command: command.to_owned(),
            findings: findings.clone(),
        });
        self.warnings.push(format!(
            "step {}: {command} changed what undo relies on: {}",
            self.counts.step,
            findings.join("; ")
        ));
        note
    }

    /// Snapshots the workspace.
    fn checkpoint(&mut self, label: &str) {
        match self.checkpoints.checkpoint(label) {
            Ok(Some(number)) => {
                self.counts.checkpoints_taken += 1;
                self.observer.on_event(&Event::Checkpoint {
                    step: self.counts.step,
                    number,
                    label,
                });
                self.record(Record::Checkpoint {
                    step: self.counts.step,
                    number,
                    label: label.to_owned(),
                });
            }
            Ok(None) => {}
            Err(error) => {
                let error = format!("checkpoint after step {} failed: {error}", self.counts.step);
                self.observer.on_event(&Event::CheckpointFailed {
                    step: self.counts.step,
                    error: error.clone(),
                });
                self.record(Record::CheckpointFailed {
                    step: self.counts.step,
                    error: error.clone(),
                });
                self.warnings.push(error);
            }
        }
    }

    /// Tells the model how to put its answer right: one of the attempt's corrections
    /// ([`CORRECTIONS_PER_ATTEMPT`]).
    fn nudge(&mut self, message: String) {
        self.progress.corrections += 1;
        self.tell(message);
    }

    /// Tells the model something about how it is working.
    fn tell(&mut self, message: String) {
        self.observer.on_event(&Event::Nudged {
            step: self.counts.step,
            message: &message,
        });
        self.record(Record::Nudge {
            step: self.counts.step,
            content: message.clone(),
        });
        self.messages.push(Message::user(message));
    }

    /// Appends a message the harness wrote, and records it.
    fn push(&mut self, message: Message) {
        self.record(Record::Message(message.clone()));
        self.messages.push(message);
    }

    fn record(&mut self, record: Record) {
        if let Some(transcript) = &mut self.transcript {
            transcript.record(record);
        }
    }

    /// The report, recorded and reported.
    fn finish(mut self, outcome: Outcome, reason: String) -> RunReport {
        tracing::info!(%outcome, %reason, steps = self.counts.step, "run finished");
        if let Some(failure) = self.transcript.as_ref().and_then(Transcript::failure) {
            self.warnings.push(failure.to_owned());
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
            verification: self.verification.as_ref().map(|v| VerificationReport {
                command: v.command().to_owned(),
                runs: self.counts.verifications,
                passed: self.progress.verification_passed,
                changed: self.progress.inputs_changed.clone(),
            }),
            checkpoints: self.counts.checkpoints_taken,
            final_text: self.final_text.clone(),
            transcript: self.transcript.as_ref().map(|t| t.path().to_owned()),
            warnings: self.warnings.clone(),
        };
        self.record(Record::Outcome(report.clone()));
        self.observer.on_event(&Event::Finished { report: &report });
        report
    }
}

/// `n` and `noun`, plural unless `n` is 1: "1 time", "3 tool calls".
fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}
