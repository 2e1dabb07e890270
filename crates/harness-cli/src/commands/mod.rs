//! One module per subcommand, each with its clap definition and an `exec` function that
//! parses, calls `harness-app` (or the library that does the job) and displays. No command
//! reaches into another: what two share is in `harness-app`, or in `crate::review` for the
//! words of a run's review.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use harness_app::{Overrides, Replies};
use harness_exec::Sandbox;
use harness_undo::Session;

use crate::shown::shown;

mod accept;
mod batch;
mod completions;
mod diff;
mod man;
mod mcp;
mod redo;
mod run;
mod runs;
mod sandbox;
mod show;
mod tool;
mod trust;
mod undo;

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    Run(run::RunCommand),
    Batch(batch::BatchCommand),
    Diff(diff::DiffCommand),
    Undo(undo::UndoCommand),
    Redo(redo::RedoCommand),
    Accept(accept::AcceptCommand),
    Runs(runs::RunsCommand),
    Show(show::ShowCommand),
    Tool(tool::ToolCommand),
    Mcp(mcp::McpCommand),
    Sandbox(sandbox::SandboxCommand),
    Trust(trust::TrustCommand),
    Completions(completions::CompletionsCommand),
    Man(man::ManCommand),
}

impl Command {
    /// True for the subcommands that run the model's commands (`run`, `tool`, `mcp`, and
    /// `batch` but for its `collect`): those that start under a reaper, so that none of
    /// their commands outlives them.
    pub(crate) fn runs_commands(&self) -> bool {
        match self {
            Command::Run(_) | Command::Tool(_) | Command::Mcp(_) => true,
            Command::Batch(command) => command.runs_tasks(),
            _ => false,
        }
    }
}

/// Runs `command`. An `Err` is a usage or configuration problem (exit status 2) or a model
/// server problem (3); the exit status of everything else is the subcommand's.
///
/// `parser` builds the program's whole command line, which `completions` and `man` write
/// out. It is handed in, not imported: the top-level parser (`cli`) is made of these
/// subcommands, so this module using it would make the two use each other.
pub(crate) fn run(command: Command, parser: fn() -> clap::Command) -> anyhow::Result<ExitCode> {
    if !matches!(command, Command::Sandbox(_) | Command::Tool(_)) {
        make_stores_private();
    }
    match command {
        Command::Run(command) => run::exec(command),
        Command::Batch(command) => batch::exec(command),
        Command::Diff(command) => diff::exec(command),
        Command::Undo(command) => undo::exec(command),
        Command::Redo(command) => redo::exec(command),
        Command::Accept(command) => accept::exec(command),
        Command::Runs(command) => runs::exec(command),
        Command::Show(command) => show::exec(command),
        Command::Tool(command) => tool::exec(command),
        Command::Mcp(command) => mcp::exec(command),
        Command::Sandbox(command) => sandbox::exec(command),
        Command::Trust(command) => trust::exec(command),
        Command::Completions(command) => completions::exec(command, parser()),
        Command::Man(command) => man::exec(command, parser()),
    }
}

/// Makes the harness's stores private to the user (directories 0700, a run's files 0600),
/// saying once on standard error which were readable by other local users: stores made by
/// a harness before this one were, under the usual umask. A store that cannot be tightened
/// is warned about, and the command goes on.
fn make_stores_private() {
    use crate::display::Out;
    let said = match harness_undo::make_stores_private() {
        Ok(tightened) => tightened
            .iter()
            .map(|path| {
                shown!(
                    "note: {} was readable by other local users; it is private to you now (chmod go-rwx)",
                    path.display()
                )
            })
            .collect::<Vec<_>>(),
        // No state directory: there is no store to tighten, and the command says so if it
        // needs one.
        Err(harness_undo::Error::NoStateHome) => Vec::new(),
        Err(error) => vec![shown!(
            "warning: the harness's stores could not all be made private to you: {}",
            error
        )],
    };
    for line in said {
        // Best effort: a closed standard error must not stop the command.
        let _ = Out::stderr().line(&line);
    }
}

/// How commands are confined: the flags `harness run`, `harness tool` and `harness mcp`
/// share, so each is confined the same way by the same words.
#[derive(Debug, Args)]
pub(crate) struct ConfinementFlags {
    /// Allow only this program to run (repeat for more), instead of the configuration's
    /// `allow`. Without either, a blocklist of accidents (sudo, rm -rf /, mkfs, ...) applies.
    /// In `harness run`, the verification command's program must be allowed too.
    #[arg(long = "allow", value_name = "PROGRAM")]
    allow: Vec<String>,

    /// The isolation tier commands (the verification command's too) run under: auto (the
    /// strongest that works here), bwrap, landlock or none. [default: the configuration's
    /// sandbox, else auto]
    #[arg(long, value_name = "TIER")]
    sandbox: Option<Sandbox>,

    /// Let commands also write under PATH (repeat for more), e.g. ~/.cargo/registry.
    #[arg(long, value_name = "PATH")]
    writable: Vec<PathBuf>,

    /// Let commands use the network.
    #[arg(long)]
    network: bool,

    /// Let write_file and edit_file change test code (test files by each ecosystem's
    /// conventions, the configuration's `tests` globs, Rust #[cfg(test)] modules), which
    /// they refuse by default.
    #[arg(long)]
    allow_test_edits: bool,
}

impl ConfinementFlags {
    /// `overrides` with what these flags say.
    pub(crate) fn apply(&self, overrides: Overrides) -> Overrides {
        Overrides {
            allow: self.allow.clone(),
            sandbox: self.sandbox,
            writable: self.writable.clone(),
            network: self.network,
            allow_test_edits: self.allow_test_edits,
            ..overrides
        }
    }
}

/// Which model server and model a run asks: the flags `harness run` and `harness mcp`
/// (for `run_task`) share.
#[derive(Debug, Args)]
pub(crate) struct ModelFlags {
    /// The model. [default: the configuration's model, else qwen2.5-coder:7b]
    #[arg(long, value_name = "M")]
    model: Option<String>,

    /// The model server's address. [default: OLLAMA_HOST, else http://127.0.0.1:11434;
    /// http://127.0.0.1:8080 with --api openai]
    #[arg(long, value_name = "URL")]
    host: Option<String>,

    /// The server's API: ollama, or openai for OpenAI-compatible servers (llama.cpp's
    /// llama-server, vLLM, LM Studio). [default: ollama]
    #[arg(long, value_name = "API", value_parser = ["ollama", "openai"])]
    api: Option<String>,

    /// How the model replies: auto (native tool calls where the model's chat template takes
    /// tools; where it takes none and the server can, replies constrained by the server to
    /// one tool call or a final answer), native, or constrained. The run's header says what
    /// was chosen and why. [default: the configuration's replies, else auto]
    #[arg(long, value_name = "HOW", value_parser = parse_replies)]
    replies: Option<Replies>,
}

impl ModelFlags {
    /// `overrides` with what these flags say.
    pub(crate) fn apply(&self, overrides: Overrides) -> Overrides {
        Overrides {
            model: self.model.clone(),
            host: self.host.clone(),
            api: self.api.clone(),
            replies: self.replies,
            ..overrides
        }
    }
}

/// `--replies`' values, by the names [`Replies::parse`] takes.
fn parse_replies(name: &str) -> Result<Replies, String> {
    Replies::parse(name).ok_or_else(|| {
        let names: Vec<&str> = Replies::ALL.iter().map(|(name, _)| *name).collect();
        format!("use one of: {}", names.join(", "))
    })
}

/// Which run of which repository a review command is about.
#[derive(Debug, Args)]
pub(crate) struct RunSelector {
    /// The run's id (as `harness runs` lists them). [default: the latest run]
    #[arg(value_name = "RUN")]
    run: Option<String>,

    /// The repository the run worked in.
    #[arg(long, value_name = "DIR", default_value = ".")]
    workspace: PathBuf,
}

impl RunSelector {
    /// Opens the selected run.
    pub(crate) fn open(&self) -> anyhow::Result<Session> {
        let root = self.root()?;
        harness_app::open_run(&root, self.run.as_deref()).map_err(|error| match error {
            harness_app::Error::NoRun { root } => anyhow::anyhow!(
                "no harness run is recorded in {}; start one with `{}`",
                root.display(),
                crate::program::command("run")
            ),
            error => error.into(),
        })
    }

    /// The workspace, canonical.
    pub(crate) fn root(&self) -> anyhow::Result<PathBuf> {
        workspace_root(&self.workspace)
    }
}

/// `directory`, canonical, or an error naming it.
pub(crate) fn workspace_root(directory: &Path) -> anyhow::Result<PathBuf> {
    std::fs::canonicalize(directory)
        .with_context(|| format!("{} is not an existing directory", directory.display()))
}
