//! The run tools the workspace serves beside the toolbox: a verified agent run
//! (`run_task`), and the review of runs (`diff_run`, `undo_run`, `redo_run`, `list_runs`),
//! each what `harness run`, `harness diff`, `harness undo`, `harness redo` and `harness runs`
//! do, through the same code.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use harness_agent::{Event, Observer, Outcome, StopSignal, Transcript};
use harness_app::{Overrides, Request, Settings, review};
use harness_tools::Toolbox;
use harness_undo::{DiffTarget, Session};
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::{Error, with_causes};
use super::scope::Scope;
use crate::{Reply, ToolDef};

/// How often a cancelled run's commands are interrupted until it has stopped.
const INTERRUPT_INTERVAL: Duration = Duration::from_millis(50);

/// The run tools, with the JSON Schemas of their arguments.
pub(super) fn tool_defs() -> Result<Vec<ToolDef>, crate::Error> {
    let run = json!({"type": "string", "description":
        "The run's id, as list_runs shows it. Default: the latest run."});
    let defs = [
        (
            "run_task",
            "Give a task to the harness's own (local) model, which works on it in the \
             workspace with the confined tools; the run counts as done only when the \
             verification command exits 0. Returns the outcome, the run id, the diff and a \
             summary; undo_run takes the run's changes back.",
            json!({"type": "object", "properties": {
                "task": {"type": "string", "description": "What to do, in words."},
                "verify": {"type": "string", "description":
                    "The command that checks the task, e.g. \"python3 -m unittest -q\" (split \
                     like a shell would, run without one); the run succeeds only if it exits 0."},
                "max_steps": {"type": "integer", "minimum": 1, "description":
                    "The most model turns. Default: the configuration's max_steps, else 40."},
                "model": {"type": "string", "description":
                    "The model. Default: the server's --model, else the configuration's."}
            }, "required": ["task", "verify"], "additionalProperties": false}),
        ),
        (
            "diff_run",
            "What a run changed, as a unified diff (or, with stat, one line per file).",
            json!({"type": "object", "properties": {"run": run, "stat": {"type": "boolean",
                "description": "One line per file instead of the diff."}},
                "additionalProperties": false}),
        ),
        (
            "undo_run",
            "Put the workspace back as it was before a run (redo_run brings the run's work \
             back). Refused if files changed since the run ended.",
            json!({"type": "object", "properties": {"run": run},
                "additionalProperties": false}),
        ),
        (
            "redo_run",
            "Bring back the work of a run that undo_run took back.",
            json!({"type": "object", "properties": {"run": run},
                "additionalProperties": false}),
        ),
        (
            "list_runs",
            "The runs recorded in the workspace, newest last: id, task, outcome, steps.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ),
    ];
    defs.into_iter()
        .map(|(name, description, schema)| ToolDef::new(name, description, schema))
        .collect()
}

/// What the run tools need beyond the toolbox: the workspace and the server's flags.
pub(super) struct Runs {
    /// The workspace, canonical; fixed for the server's life.
    pub(super) root: PathBuf,
    /// The server's flags, which each run's settings are resolved with (as `harness run`
    /// resolves its own), plus what the call sets.
    pub(super) overrides: Overrides,
    /// Whether a run may start on uncommitted changes (`--allow-dirty`).
    pub(super) allow_dirty: bool,
}

impl Runs {
    /// Calls the run tool `name`, or returns `None` if `name` is none of them.
    pub(super) fn call(
        &self,
        name: &str,
        arguments: &Value,
        toolbox: &Toolbox,
        call: &Scope<'_>,
    ) -> Option<Reply> {
        let result = match name {
            "run_task" => {
                parse(name, arguments).and_then(|args| self.run_task(args, toolbox, call))
            }
            "diff_run" => parse(name, arguments).and_then(|args| self.diff_run(args)),
            "undo_run" => parse(name, arguments).and_then(|args| self.undo_run(args)),
            "redo_run" => parse(name, arguments).and_then(|args| self.redo_run(args)),
            "list_runs" => parse::<NoArgs>(name, arguments).and_then(|_| self.list_runs()),
            _ => return None,
        };
        Some(result.unwrap_or_else(|error| Reply::error(format!("Error: {}", with_causes(&error)))))
    }

    /// A verified run, exactly as `harness run --verify VERIFY TASK` makes it, reporting
    /// each step as progress; a cancellation stops it as Ctrl-C does.
    fn run_task(
        &self,
        args: RunTaskArgs,
        toolbox: &Toolbox,
        call: &Scope<'_>,
    ) -> Result<Reply, Error> {
        let mut overrides = self.overrides.clone();
        overrides.verify = Some(args.verify);
        overrides.max_steps = args.max_steps.or(overrides.max_steps);
        overrides.model = args.model.or(overrides.model);
        let settings = Settings::resolve(&self.root, &overrides)?;
        harness_app::refuse_unrunnable_verification(&settings)?;
        let (client, model) = harness_app::probe::probe(&settings)?;
        let request = Request {
            task: args.task.clone(),
            allow_dirty: self.allow_dirty,
            init: false,
            hidden_around: Vec::new(),
            follows: None,
        };
        let mut session = harness_app::begin(&self.root, &settings, &request)?;
        let transcript = Transcript::create(session.transcript_path())?;
        let stop = StopSignal::new();
        let running = Arc::new(AtomicBool::new(true));
        interrupt_on_cancel(call, &stop, toolbox, &running);
        let agent = harness_app::agent(client, &model, toolbox, &settings, transcript, stop);
        let report = harness_app::run(agent, &args.task, &mut Progress { call }, &mut session);
        running.store(false, Ordering::SeqCst);
        let finished = harness_app::finish(&mut session, &report);
        let diff = session.diff(DiffTarget::WorkingTree)?;
        let mut warnings = report.warnings.clone();
        warnings.extend(finished.err().map(|error| error.to_string()));
        let summary = json!({
            "run": session.id().to_string(),
            "outcome": report.outcome,
            "reason": report.reason,
            "verification": report.verification,
            "steps": report.steps,
            "tool_calls": report.tool_calls,
            "summary": report.final_text,
            "files_changed": diff.files.iter().map(|file| json!({
                "path": file.path.display().to_string(),
                "added": file.additions,
                "removed": file.deletions,
            })).collect::<Vec<_>>(),
            "diff": diff.to_string(),
            "warnings": warnings,
            "undo": format!("undo_run {{\"run\": \"{}\"}}", session.id()),
        });
        let text = serde_json::to_string_pretty(&summary).map_err(|source| Error::Json {
            what: "writing the run's summary",
            source,
        })?;
        // Done means verified: anything else is reported as a failed call.
        Ok(if report.outcome == Outcome::Verified {
            Reply::success(text)
        } else {
            Reply::error(text)
        })
    }

    fn diff_run(&self, args: DiffArgs) -> Result<Reply, Error> {
        let mut session = self.open(args.run.as_deref())?;
        let diff = session.diff(DiffTarget::WorkingTree)?;
        Ok(Reply::success(if diff.is_empty() {
            format!("run {} changed nothing", session.id())
        } else if args.stat {
            review::stat(&diff).as_str().to_owned()
        } else {
            diff.to_string()
        }))
    }

    fn undo_run(&self, args: RunArgs) -> Result<Reply, Error> {
        let mut session = self.open(args.run.as_deref())?;
        let restored = harness_app::undo(&mut session, false)?;
        Ok(Reply::success(restored_text(
            "undid", &session, &restored, "the run",
        )))
    }

    fn redo_run(&self, args: RunArgs) -> Result<Reply, Error> {
        let mut session = self.open(args.run.as_deref())?;
        let restored = harness_app::redo(&mut session, false)?;
        Ok(Reply::success(restored_text(
            "redid", &session, &restored, "the undo",
        )))
    }

    fn list_runs(&self) -> Result<Reply, Error> {
        let runs: Vec<Value> = Session::runs(&self.root)?
            .into_iter()
            .map(|run| {
                json!({
                    "run": run.id.to_string(),
                    "task": run.task,
                    "outcome": run.outcome,
                    "steps": run.steps,
                })
            })
            .collect();
        let text = serde_json::to_string_pretty(&runs).map_err(|source| Error::Json {
            what: "writing the list of runs",
            source,
        })?;
        Ok(Reply::success(text))
    }

    /// The run `id`, or the latest.
    fn open(&self, id: Option<&str>) -> Result<Session, Error> {
        Ok(harness_app::open_run(&self.root, id)?)
    }
}

/// As Ctrl-C: the run stops after the current tool call, and its command is interrupted.
/// The loop looks at the stop signal only between steps, so a command that starts after
/// the cancellation (the step's next call) is interrupted too, while `running` holds.
fn interrupt_on_cancel(
    call: &Scope<'_>,
    stop: &StopSignal,
    toolbox: &Toolbox,
    running: &Arc<AtomicBool>,
) {
    let stopper = stop.clone();
    let interrupter = toolbox.interrupter();
    let still_running = Arc::clone(running);
    call.on_cancel(move || {
        stopper.request();
        std::thread::spawn(move || {
            while still_running.load(Ordering::SeqCst) {
                interrupter.interrupt();
                std::thread::sleep(INTERRUPT_INTERVAL);
            }
        });
    });
}

/// What an undo or redo did, in lines: the files it restored, and what it did to ignored
/// files in the words `harness undo` prints ([`review::ignored_lines`]; `since` as that
/// takes it).
fn restored_text(
    verb: &str,
    session: &Session,
    restored: &harness_undo::Restored,
    since: &str,
) -> String {
    let mut text = restored_files_text(verb, session, restored);
    for line in review::ignored_lines(&restored.ignored, since) {
        text.push('\n');
        text.push_str(line.as_str());
    }
    text
}

/// The files an undo or redo restored, and those it kept, in a line each.
fn restored_files_text(verb: &str, session: &Session, restored: &harness_undo::Restored) -> String {
    if restored.saved.is_none() && restored.changed.is_empty() {
        return format!(
            "run {}: nothing to change, the workspace is already so",
            session.id()
        );
    }
    let count = restored.changed.len();
    let mut text = format!(
        "{verb} run {}: restored {} file{}: {}",
        session.id(),
        count,
        if count == 1 { "" } else { "s" },
        review::named_paths(&restored.changed).as_str()
    );
    if let Some(kept) = review::kept_line(restored) {
        text.push('\n');
        text.push_str(&kept);
    }
    text
}

/// The arguments of `name`, or an error the caller can fix.
fn parse<T: serde::de::DeserializeOwned>(name: &str, arguments: &Value) -> Result<T, Error> {
    T::deserialize(arguments).map_err(|error| Error::InvalidArguments {
        tool: name.to_owned(),
        message: error.to_string(),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunTaskArgs {
    task: String,
    verify: String,
    max_steps: Option<u32>,
    model: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunArgs {
    run: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DiffArgs {
    run: Option<String>,
    #[serde(default)]
    stat: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// Tells the client of each step of a run, once per model turn.
struct Progress<'a, 'b> {
    call: &'a Scope<'b>,
}

impl Observer for Progress<'_, '_> {
    fn on_event(&mut self, event: &Event<'_>) {
        if let Event::Replied {
            step, tool_calls, ..
        } = event
        {
            self.call.progress(format!(
                "step {step}: the model answered with {tool_calls} tool call{}",
                if *tool_calls == 1 { "" } else { "s" }
            ));
        }
    }
}
