//! `harness mcp`: the model's tools over one workspace, served to an MCP client on stdio.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context;
use clap::Args;
use harness_mcp::{Backend, Call, Reply, Server, ToolDef};
use harness_tools::Toolbox;
use serde_json::Value;

use crate::boundary;
use crate::commands::ConfinementFlags;
use crate::config::{Overrides, Settings};
use crate::display::Out;
use crate::shown::{Shown, shown};
use crate::toolbox;

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

    #[command(flatten)]
    confinement: ConfinementFlags,
}

impl McpCommand {
    /// What the flags say, for [`Settings::resolve`].
    fn overrides(&self) -> Overrides {
        self.confinement.apply(Overrides {
            command_timeout: self.timeout,
            max_command_timeout: self.timeout,
            ..Overrides::default()
        })
    }
}

/// Checks the workspace, says what is active on stderr, and serves until the client is done.
pub(crate) fn exec(command: McpCommand) -> anyhow::Result<ExitCode> {
    let root = toolbox::workspace_root(&command.workspace)?;
    let settings = Settings::resolve(&root, &command.overrides())?;
    let (toolbox, choice) = toolbox::build(&root, &settings.toolbox)?;
    if !command.allow_dirty {
        harness_undo::check_clean(&root)?;
    }
    let served = Served::new(toolbox)?;

    let mut err = Out::stderr();
    err.line(&shown!(
        "harness mcp: serving {} on stdin/stdout\n\
         \x20 policy:     {}\n\
         \x20 isolation:  {}\n\
         {}",
        root.display().to_string(),
        boundary::policy(&settings.toolbox.allow),
        toolbox::isolation_summary(&choice, &settings.toolbox),
        Shown::text(boundary::STATEMENT),
    ))?;
    for warning in toolbox::fallback_warnings(&choice) {
        err.line(&Shown::line(&warning))?;
    }
    toolbox::adopt_escaping_commands();

    Server::new(served, "harness", env!("CARGO_PKG_VERSION"))
        .instructions(format!(
            "The tools of the harness, confined to the workspace {}. {}",
            root.display(),
            boundary::STATEMENT
        ))
        .serve_stdio()
        .context("serving MCP on stdin/stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// What `harness mcp` serves: the toolbox `harness run` and `harness tool` build.
struct Served {
    /// Every tool call goes through it, one at a time, as a model's calls do.
    toolbox: Mutex<Toolbox>,
    /// The toolbox's tools, as the client is offered them.
    tools: Vec<ToolDef>,
}

impl Served {
    fn new(toolbox: Toolbox) -> anyhow::Result<Served> {
        let tools = toolbox
            .specs()
            .iter()
            .map(|spec| ToolDef::new(spec.name(), spec.description(), spec.parameters().clone()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Served {
            toolbox: Mutex::new(toolbox),
            tools,
        })
    }

    /// One toolbox call, interrupted (its command gets SIGINT, as on Ctrl-C) if the client
    /// cancels it.
    fn call_tool(&self, name: &str, arguments: &Value, call: &Call) -> Reply {
        let toolbox = self.toolbox.lock().unwrap_or_else(PoisonError::into_inner);
        if call.is_cancelled() {
            return Reply::error("Error: the call was cancelled before it started");
        }
        // The interrupter reaches every command of the toolbox: a late cancellation must not
        // interrupt the next call's command, so it acts only while this call holds the lock.
        let active = Arc::new(Mutex::new(true));
        let interrupter = toolbox.interrupter();
        let still_active = Arc::clone(&active);
        call.on_cancel(move || {
            if *still_active.lock().unwrap_or_else(PoisonError::into_inner) {
                interrupter.interrupt();
            }
        });
        let result = toolbox.call(name, arguments);
        *active.lock().unwrap_or_else(PoisonError::into_inner) = false;
        drop(toolbox);
        if result.is_error() {
            Reply::error(result.into_text())
        } else {
            Reply::success(result.into_text())
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
