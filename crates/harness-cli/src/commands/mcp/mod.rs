//! `harness mcp`: the model's tools over one workspace, served to an MCP client on stdio.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use harness_app::{Overrides, Recorder, Settings, toolbox};
use harness_mcp::{Backend, Call, Reply, Server, ToolDef};
use harness_tools::{ToolResult, Toolbox};
use serde_json::Value;

mod runs;
mod scope;

use self::scope::Scope;

use crate::boundary;
use crate::commands::{ConfinementFlags, ModelFlags};
use crate::display::Out;
use crate::shown::{Shown, shown};
use crate::{exit, isolation, signals};

/// Serve the model's tools over one workspace to an MCP client, on stdin and stdout.
///
/// An MCP client (Claude Desktop, Claude Code, Cursor, Zed, ...) starts this command and
/// speaks the Model Context Protocol to it on stdin/stdout. It is offered the same tools a
/// model gets in `harness run` (read_file, write_file, edit_file, list_dir, search_text,
/// run_command), with the same JSON Schemas, and every call goes through exactly what a
/// model's call goes through: the same settings (~/.config/harness/config.toml,
/// harness.toml in the workspace, then the flags), argument validation, workspace
/// confinement, deny rules, protected files (.git/, harness.toml), command policy,
/// isolation tier, timeouts, environment and redaction. A refused call is a tool result
/// with isError set and the message the model would read.
///
/// It also serves verified runs: run_task {task, verify, max_steps?, model?} gives a task
/// to the harness's own model (--model, --host, --api, or the configuration's), exactly as
/// `harness run --verify` does, with a progress notification per step; cancelling it stops
/// the run as Ctrl-C does. diff_run, undo_run, redo_run and list_runs review runs. The
/// client's own tool calls are recorded as a run of their own (named on stderr at the
/// start): `harness show RUN` replays them, `harness undo RUN` takes them back.
///
/// The workspace is fixed when the server starts; no call can change it. It is refused as
/// for `harness run`: not /, not your home directory, not the harness's own source, and not
/// a git repository with uncommitted changes unless --allow-dirty is given.
///
/// Nothing but the protocol is written to stdout; what the server protects, and what it
/// does not, is printed on stderr when it starts.
///
/// Exit status: 0 when the client closed the session, 2 for bad usage, a configuration
/// error or a workspace that cannot be used.
///
/// Client configuration (the mcpServers entry):
///
///   {"mcpServers": {"harness": {"command": "harness",
///     "args": ["mcp", "--workspace", "/path/to/repo"]}}}
#[derive(Debug, Args)]
#[command(
    verbatim_doc_comment,
    about = "Serve the model's tools over one workspace to an MCP client (stdio)"
)]
pub(crate) struct McpCommand {
    /// The workspace the tools work in, fixed for the whole session: paths are confined to
    /// it, commands run in it.
    #[arg(long, value_name = "DIR", default_value = ".")]
    workspace: PathBuf,

    /// Serve even with uncommitted changes in the workspace.
    #[arg(long)]
    allow_dirty: bool,

    /// Seconds a command may run: the timeout of a call that sets none, and the most a call
    /// may ask for. [default: the configuration's command_timeout, else 30; at most 600]
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,

    /// The model server and model `run_task` gives tasks to.
    #[command(flatten)]
    server: ModelFlags,

    #[command(flatten)]
    confinement: ConfinementFlags,
}

impl McpCommand {
    /// What the flags say, for [`Settings::resolve`].
    fn overrides(&self) -> Overrides {
        self.confinement.apply(self.server.apply(Overrides {
            command_timeout: self.timeout,
            max_command_timeout: self.timeout,
            ..Overrides::default()
        }))
    }
}

/// Checks the workspace, says what is active on stderr, and serves until the client is done.
pub(crate) fn exec(command: McpCommand) -> anyhow::Result<ExitCode> {
    let root = harness_app::workspace_root(&command.workspace)?;
    let settings = Settings::resolve(&root, &command.overrides())?;
    let (toolbox, choice) = toolbox::build(&root, &settings.toolbox)?;
    if !command.allow_dirty {
        harness_undo::check_clean(&root)?;
    }
    let recorder = Recorder::begin(&root, command.allow_dirty)?;
    let run = recorder.id();
    let served = Served::new(
        toolbox,
        recorder,
        runs::Runs {
            root: root.clone(),
            overrides: command.overrides(),
            allow_dirty: command.allow_dirty,
        },
    )?;

    let state = Arc::clone(&served.state);
    let interrupter = state
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .toolbox
        .interrupter();
    announce(&root, &run, &settings, &choice)?;
    toolbox::adopt_escaping_commands();
    // Stopped from outside, the server ends at once and so does every command it runs; the
    // session's run keeps what it recorded, for `harness undo`.
    signals::on_ending_signal(move |_| {
        signals::kill_commands_and_exit(&interrupter, exit::INTERRUPTED)
    });

    let served = Server::new(served, "harness", env!("CARGO_PKG_VERSION"))
        .instructions(format!(
            "The tools of the harness, confined to the workspace {}. {}",
            root.display(),
            boundary::STATEMENT
        ))
        .serve_stdio()
        .context("serving MCP on stdin/stdout");
    // Whatever ended the session, its run is ended; a call still running (the client went
    // away without cancelling it) is waited for.
    state
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .finish();
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Says on stderr what is served and how: the workspace, the run the session is recorded
/// as, the policy, the isolation, the configuration and what of it was ignored.
fn announce(
    root: &std::path::Path,
    run: &str,
    settings: &Settings,
    choice: &harness_exec::preflight::Choice,
) -> anyhow::Result<()> {
    let mut err = Out::stderr();
    err.line(&shown!(
        "harness mcp: serving {} on stdin/stdout\n\
         \x20 recorded:   as run {} ({} / {})\n\
         \x20 policy:     {}\n\
         \x20 isolation:  {}\n\
         \x20 config:     {}\n\
         \x20 settings:   {}\n\
         {}",
        root.display().to_string(),
        run,
        crate::program::command(&format!("show {run}")),
        crate::program::command(&format!("undo {run}")),
        boundary::policy(&settings.toolbox.allow),
        isolation::isolation_summary(choice, &settings.toolbox),
        Shown::line(&settings.files_line()),
        Shown::line(&settings.origins_line()),
        Shown::text(boundary::STATEMENT),
    ))?;
    for line in settings.ignored_lines(crate::program::command) {
        err.line(&shown!("  ignored:    {}", Shown::line(&line)))?;
    }
    for warning in isolation::fallback_warnings(choice) {
        err.line(&Shown::line(&warning))?;
    }
    Ok(())
}

/// What `harness mcp` serves: the toolbox `harness run` and `harness tool` build, and the
/// run tools over it.
struct Served {
    /// Every tool call and run goes through it, one at a time, as a model's calls do.
    state: Arc<Mutex<State>>,
    /// The run tools.
    runs: runs::Runs,
    /// The toolbox's tools, then the run tools, as the client is offered them.
    tools: Vec<ToolDef>,
}

impl Served {
    fn new(toolbox: Toolbox, recorder: Recorder, runs: runs::Runs) -> anyhow::Result<Served> {
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

/// What the calls share, one at a time.
struct State {
    toolbox: Toolbox,
    /// The session's run; `None` once it is finished.
    recorder: Option<Recorder>,
}

impl State {
    /// Ends the session's run.
    fn finish(&mut self) {
        if let Some(recorder) = self.recorder.take() {
            recorder.finish();
        }
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
