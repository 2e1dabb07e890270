//! The workspace's [`Backend`]: the toolbox `harness run` and `harness tool` build, and the
//! run tools over it, each call recorded in the session's run.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use harness_app::Recorder;
use harness_tools::{ToolResult, Toolbox};
use serde_json::Value;

use super::runs::{self, Runs};
use super::scope::Scope;
use crate::{Backend, Call, Reply, ToolDef};

/// What the workspace serves: the toolbox's tools, then the run tools.
pub(super) struct Served {
    /// Every tool call and run goes through it, one at a time, as a model's calls do.
    state: Arc<Mutex<State>>,
    /// The run tools.
    runs: Runs,
    /// The toolbox's tools, then the run tools, as the client is offered them.
    tools: Vec<ToolDef>,
}

impl Served {
    pub(super) fn new(
        toolbox: Toolbox,
        recorder: Recorder,
        runs: Runs,
    ) -> Result<Served, crate::Error> {
        let mut tools = toolbox
            .specs()
            .iter()
            .map(|spec| ToolDef::new(spec.name(), spec.description(), spec.parameters().clone()))
            .collect::<Result<Vec<_>, _>>()?;
        tools.extend(runs::tool_defs()?);
        Ok(Served {
            state: Arc::new(Mutex::new(State {
                toolbox,
                recorder: Some(recorder),
            })),
            runs,
            tools,
        })
    }

    /// What the calls share, to end the session's run once the server has stopped.
    pub(super) fn state(&self) -> Arc<Mutex<State>> {
        Arc::clone(&self.state)
    }

    /// One call, of a run tool or of the toolbox. A cancellation interrupts the command it
    /// runs (SIGINT, as on Ctrl-C) and stops a run after its current step.
    fn call_tool(&self, name: &str, arguments: &Value, call: &Call) -> Reply {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if call.is_cancelled() {
            return Reply::error("Error: the call was cancelled before it started");
        }
        let scope = Scope::new(call);
        let started = Instant::now();
        if let Some(reply) = self.runs.call(name, arguments, &state.toolbox, &scope) {
            if let Some(recorder) = &state.recorder {
                recorder.record_run_tool(
                    name,
                    arguments,
                    (reply.text(), reply.is_error()),
                    started.elapsed().as_secs_f64(),
                );
            }
            return reply;
        }
        let interrupter = state.toolbox.interrupter();
        scope.on_cancel(move || {
            interrupter.interrupt();
        });
        // A file git ignores is in no snapshot: saved first, as in a model's run, and not
        // written when it could not be.
        if let (Some(recorder), Some(path)) =
            (&state.recorder, state.toolbox.written_path(name, arguments))
            && let Err(error) = recorder.protect(&path)
        {
            return Reply::error(ToolResult::unsaved(name, &path, &error).text());
        }
        let started = Instant::now();
        let result = state.toolbox.call(name, arguments);
        drop(scope);
        let reply = if result.is_error() {
            Reply::error(result.text())
        } else {
            Reply::success(result.text())
        };
        if let Some(recorder) = &state.recorder {
            recorder.record(name, arguments, result, started.elapsed().as_secs_f64());
        }
        drop(state);
        reply
    }
}

impl Backend for Served {
    fn tools(&self) -> Vec<ToolDef> {
        self.tools.clone()
    }

    fn call(&self, name: &str, arguments: Value, call: &Call) -> Reply {
        self.call_tool(name, &arguments, call)
    }
}

/// What the calls share, one at a time.
pub(super) struct State {
    /// The toolbox every call goes through.
    toolbox: Toolbox,
    /// The session's run; `None` once it is finished.
    recorder: Option<Recorder>,
}

impl State {
    /// Ends the session's run.
    pub(super) fn finish(&mut self) {
        if let Some(recorder) = self.recorder.take() {
            recorder.finish();
        }
    }
}
