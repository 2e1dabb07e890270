//! The record of a session of a client's own tool calls (an MCP client's), kept as a run
//! of their own (the pre-session state, a checkpoint after each call that may have changed
//! the workspace, a transcript), so `harness show` replays what the client did and
//! `harness undo` takes it back, as for a model's run.

use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Instant;

use harness_agent::{CallOrigin, Outcome, Record, RunReport, TRANSCRIPT_FORMAT, Transcript};
use harness_tools::ToolResult;
use harness_undo::{BeginOptions, Session};
use serde_json::Value;

use crate::Error;

/// The task an MCP session's run is recorded with.
const TASK: &str = "MCP session: the tool calls of an MCP client";

/// An MCP session's run, while the server serves. The run's [`Session`] lives on a thread
/// of its own (git's handles stay on the thread that opened them); each call is handed to
/// it and recorded, checkpoint included, before the next call starts.
pub struct Recorder {
    /// Where calls go; closed to end the run.
    calls: mpsc::Sender<Message>,
    /// The thread that records them.
    thread: JoinHandle<()>,
    /// The run's id.
    id: String,
}

/// What the recorder's thread is asked to do.
enum Message {
    /// Save a file before a tool writes it, so that undo covers it even where no snapshot
    /// would (a file git ignores); then say so.
    Protect {
        path: String,
        done: mpsc::Sender<Result<(), String>>,
    },
    /// Record a call that was made; then say so.
    Call {
        call: Recorded,
        done: mpsc::Sender<()>,
    },
}

/// One call, as it is recorded.
struct Recorded {
    tool: String,
    arguments: Value,
    /// Its one-line summary, as the display shows it.
    summary: String,
    /// What the client read.
    text: String,
    is_error: bool,
    /// Whether it may have changed the workspace: a checkpoint follows.
    changing: bool,
    seconds: f64,
}

impl Recorder {
    /// Records the state of `root` before the session (a dirty tree is refused unless
    /// `allow_dirty`, and snapshotted with it) and starts the transcript.
    ///
    /// # Errors
    ///
    /// A tree that cannot be begun (dirty without `allow_dirty`, no repository), or a
    /// transcript that cannot be made.
    pub fn begin(root: &Path, allow_dirty: bool) -> Result<Recorder, Error> {
        let root = root.to_owned();
        let (started, start) = mpsc::channel();
        let (calls, received) = mpsc::channel::<Message>();
        let thread = std::thread::spawn(move || {
            let mut log = match Log::begin(&root, allow_dirty) {
                Ok(log) => {
                    let _ = started.send(Ok(log.session.id().to_string()));
                    log
                }
                Err(error) => {
                    let _ = started.send(Err(error));
                    return;
                }
            };
            for message in received {
                match message {
                    Message::Protect { path, done } => {
                        let _ = done.send(log.protect(&path));
                    }
                    Message::Call { call, done } => {
                        log.record(&call);
                        let _ = done.send(());
                    }
                }
            }
            log.finish();
        });
        let id = start.recv().map_err(|_| Error::RecorderStopped)??;
        Ok(Recorder { calls, thread, id })
    }

    /// The run's id.
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// Records the call of `tool` with `arguments` that returned `result` after `seconds`;
    /// returns when it is recorded.
    pub fn record(&self, tool: &str, arguments: &Value, result: ToolResult, seconds: f64) {
        self.send(Recorded {
            tool: tool.to_owned(),
            arguments: arguments.clone(),
            summary: result.summary().to_string(),
            is_error: result.is_error(),
            changing: result.may_have_changed_workspace(),
            text: result.into_text(),
            seconds,
        });
    }

    /// Records a call of one of the run tools (`run_task`, `undo_run`, ...) that answered
    /// `text` (an error if `is_error`), so that the session's transcript shows everything
    /// the client did, in order. No checkpoint follows: a run is recorded as a run of its
    /// own, and undo and redo put back states other runs recorded.
    pub fn record_run_tool(
        &self,
        tool: &str,
        arguments: &Value,
        (text, is_error): (&str, bool),
        seconds: f64,
    ) {
        self.send(Recorded {
            tool: tool.to_owned(),
            arguments: arguments.clone(),
            summary: format!("{tool}{}", if is_error { "  error" } else { "" }),
            is_error,
            changing: false,
            text: text.to_owned(),
            seconds,
        });
    }

    /// Hands `call` to the recorder's thread and waits until it is recorded.
    fn send(&self, call: Recorded) {
        let (done, recorded) = mpsc::channel();
        if self.calls.send(Message::Call { call, done }).is_ok() {
            let _ = recorded.recv();
        } else {
            tracing::warn!("the MCP session's recorder is gone: a call was not recorded");
        }
    }

    /// Saves the file at `path` (as the client gave it) before a tool writes it, as a
    /// model's run does; returns when it is saved.
    pub fn protect(&self, path: &str) -> Result<(), String> {
        let (done, saved) = mpsc::channel();
        let message = Message::Protect {
            path: path.to_owned(),
            done,
        };
        let gone = || "the session's undo record stopped".to_owned();
        self.calls.send(message).map_err(|_| gone())?;
        saved.recv().map_err(|_| gone())?
    }

    /// Ends the run when the client is done.
    pub fn finish(self) {
        drop(self.calls);
        if self.thread.join().is_err() {
            tracing::warn!("the MCP session's recorder failed at the end");
        }
    }
}

/// The run itself, on the recorder's thread.
struct Log {
    session: Session,
    transcript: Transcript,
    /// The calls recorded so far.
    calls: u32,
    started: Instant,
}

impl Log {
    fn begin(root: &Path, allow_dirty: bool) -> Result<Log, Error> {
        let session = Session::begin(
            root,
            BeginOptions {
                allow_dirty,
                task: TASK.to_owned(),
                model: "an MCP client".to_owned(),
                hidden: crate::toolbox::hidden_by_configuration(root),
                ..BeginOptions::default()
            },
        )?;
        let mut transcript = Transcript::create(session.transcript_path())?;
        transcript.record(Record::Run {
            format: TRANSCRIPT_FORMAT,
            task: TASK.to_owned(),
            workspace: root.display().to_string(),
            context_window: None,
            verification: None,
            budgets: None,
        });
        Ok(Log {
            session,
            transcript,
            calls: 0,
            started: Instant::now(),
        })
    }

    /// Saves `path` before a tool writes it; a failure is recorded and returned, and the
    /// call is refused, as in a model's run.
    fn protect(&mut self, path: &str) -> Result<(), String> {
        self.session
            .protect(Path::new(path))
            .map(drop)
            .map_err(|error| {
                let error = error.to_string();
                self.transcript.record(Record::CheckpointFailed {
                    step: self.calls + 1,
                    error: format!("saving {path} before the call failed: {error}"),
                });
                error
            })
    }

    /// Records the call as the agent records a model's call, and takes a checkpoint if it
    /// may have changed the workspace.
    fn record(&mut self, call: &Recorded) {
        self.calls += 1;
        self.transcript.record(Record::Tool {
            step: self.calls,
            id: format!("client_{}", self.calls),
            tool: call.tool.clone(),
            arguments: call.arguments.clone(),
            origin: CallOrigin::Client,
            summary: call.summary.clone(),
            is_error: call.is_error,
            may_have_changed_workspace: call.changing,
            result: call.text.clone(),
            seconds: call.seconds,
        });
        if call.changing {
            let label = format!("call {}: {}", self.calls, call.summary);
            match self.session.checkpoint(&label) {
                Ok(Some(checkpoint)) => self.transcript.record(Record::Checkpoint {
                    step: self.calls,
                    number: checkpoint.number,
                    label,
                }),
                Ok(None) => {}
                Err(error) => self.transcript.record(Record::CheckpointFailed {
                    step: self.calls,
                    error: error.to_string(),
                }),
            }
        }
    }

    /// Ends the run: nothing verified the calls, so it is recorded as unverified.
    fn finish(mut self) {
        self.transcript.record(Record::Outcome(RunReport::of_calls(
            Outcome::Unverified,
            "an MCP session: nothing verifies a client's own tool calls".to_owned(),
            self.calls,
            self.started.elapsed(),
        )));
        if let Err(error) = self
            .session
            .finish(harness_undo::Outcome::Failed, self.calls)
        {
            tracing::warn!("cannot record the end of the MCP session's run: {error}");
        }
    }
}
