//! `harness mcp`: the model's tools over one workspace, served to an MCP client on stdio.
//! The server is `harness-mcp`'s ([`Workspace`]); this command parses the flags, says on
//! stderr what is served, and ends as the session did.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use harness_app::Overrides;
use harness_mcp::{Options, Workspace};

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
    let workspace = Workspace::open(Options {
        workspace: command.workspace.clone(),
        overrides: command.overrides(),
        allow_dirty: command.allow_dirty,
    })
    .map_err(cause)?;
    announce(&workspace)?;
    // Stopped from outside, the server ends at once and so does every command it runs; the
    // session's run keeps what it recorded, for `harness undo`.
    let interrupter = workspace.interrupter();
    signals::on_ending_signal(move |_| {
        signals::kill_commands_and_exit(&interrupter, exit::INTERRUPTED)
    });
    workspace.serve_stdio().map_err(cause)?;
    Ok(ExitCode::SUCCESS)
}

/// Says on stderr what is served and how: the workspace, the run the session is recorded
/// as, the policy, the isolation, the configuration and what of it was ignored.
fn announce(workspace: &Workspace) -> anyhow::Result<()> {
    let (run, settings, choice) = (workspace.run(), workspace.settings(), workspace.isolation());
    let mut err = Out::stderr();
    err.line(&shown!(
        "harness mcp: serving {} on stdin/stdout\n\
         \x20 recorded:   as run {} ({} / {})\n\
         \x20 policy:     {}\n\
         \x20 isolation:  {}\n\
         \x20 config:     {}\n\
         \x20 settings:   {}\n\
         {}",
        workspace.root().display().to_string(),
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

/// The error the server stopped with, as the other commands report theirs: the failure of
/// `harness-app` or `harness-undo` itself, so its message, exit status and disk-full advice
/// are theirs.
fn cause(error: harness_mcp::workspace::Error) -> anyhow::Error {
    use harness_mcp::workspace::Error;
    match error {
        Error::App(error) => error.into(),
        Error::Undo(error) => error.into(),
        Error::Transcript(error) => error.into(),
        Error::Tool(error) => error.into(),
        Error::Serve(error) => anyhow::Error::from(error).context("serving MCP on stdin/stdout"),
        error => error.into(),
    }
}
