//! `harness run`: give a task to the model, in a workspace it cannot leave, and report how
//! it went.
//!
//! [`exec`] reads as the steps of a run; each step's detail is beside it: the settings in
//! `config` (files and flags, the budgets and the model client), what makes a verification
//! count in [`verify`], the header shown before the first step in `header`, and the
//! summary shown after the last in `summary`.

mod header;
mod summary;
pub(crate) mod verify;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::thread;

use clap::Args;
use harness_agent::{Agent, EditFormat, Observer, Outcome, StopSignal, Transcript};
use harness_exec::preflight::Choice;
use harness_ollama::Client;
use harness_tools::Toolbox;
use harness_undo::{BeginOptions, Session};

use self::header::Header;
use self::summary::Summary;
use crate::checkpoints::SessionCheckpoints;
use crate::commands::{ConfinementFlags, ModelFlags};
use crate::config::{Overrides, Settings};
use crate::display::{JsonLines, Out, Style, Terminal};
use crate::exit;
use crate::model::ServerChat;
use crate::probe::{self, ModelProbe};
use crate::shown::{Shown, shown};
use crate::{signals, toolbox};

/// Give a task to the model and let it work in a git repository, confined to it.
///
/// Before the first step the harness records the state of the repository (a dirty tree is
/// refused unless --allow-dirty), and after each step that changed files it takes a
/// checkpoint. When the model says it is done, the verification command runs; only its
/// exit status 0 makes the run succeed. Review with `harness diff`, go back with
/// `harness undo`, keep with `harness accept`.
///
/// Settings come from the flags, then harness.toml in the workspace, then
/// ~/.config/harness/config.toml (keys: model, host, api, verify, allow, deny, timeout,
/// command_timeout, max_steps, attempts, max_checks, max_failed_calls, max_tokens,
/// head_start_chars, context_length, temperature). A repository's harness.toml sets
/// host, api, model, writable, network, allow_test_edits, a weaker sandbox or a wider
/// allow only once you trust its exact content (`harness trust`); the header says which
/// setting came from where and what was ignored.
///
/// Examples:
///
///   harness run --verify "python3 -m unittest -q" "make the failing test pass"
///
///   harness run --workspace ../app --allow cargo --verify "cargo test" "fix the build"
///
///   harness run --api openai --host http://127.0.0.1:8080 --verify "pytest -q" "fix it"
#[derive(Debug, Args)]
#[command(
    verbatim_doc_comment,
    about = "Give a task to the model, confined to a git repository",
    after_help = exit::help(exit::Help::Run)
)]
pub(crate) struct RunCommand {
    /// The git repository to work in.
    #[arg(long, value_name = "DIR", default_value = ".")]
    workspace: PathBuf,

    /// Start even with uncommitted changes; they are snapshotted, and `harness undo` brings
    /// them back exactly.
    #[arg(long)]
    allow_dirty: bool,

    /// Make the workspace a git repository (or give it a first commit) if it is not one.
    #[arg(long)]
    init: bool,

    /// The command that checks the task, e.g. "cargo test" (split like a shell would, run
    /// without one). The run succeeds only if it exits 0.
    #[arg(long, value_name = "CMD")]
    verify: Option<String>,

    #[command(flatten)]
    server: ModelFlags,

    /// The most model turns, per attempt. [default: 40]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_steps: Option<u32>,

    /// Tries at the task: when one ends unverified (the check failed, the model got stuck or
    /// ran out of steps), its changes are reverted to the state before the run and the model
    /// starts again, told how it ended. Every attempt is in the transcript. [default: 3]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    attempts: Option<u32>,

    /// Failed checks of the verification command that end an attempt (the next one, if
    /// any, starts afresh). A "done" with nothing changed since the last failure counts as
    /// one without running it. [default: 1]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_checks: Option<u32>,

    /// The most seconds the whole run may take. [default: 1800]
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,

    #[command(flatten)]
    confinement: ConfinementFlags,

    /// How the model changes files. auto: tool calls, and whole files under their path or
    /// search/replace blocks written into an answer; tools: tool calls only; whole: whole
    /// files written into answers, no tools offered (the harness shows the files and runs
    /// the check after each change); diff: as whole, with search/replace blocks. Every
    /// change goes through the same tools, so every guard holds.
    /// [default: the configuration's edit_format, else auto]
    #[arg(long, value_name = "FORMAT", value_parser = parse_edit_format)]
    edit_format: Option<EditFormat>,

    /// Print the run as JSON lines (one event per line) instead of for a person.
    #[arg(long)]
    json: bool,

    /// What to do, in words.
    #[arg(value_name = "TASK")]
    task: String,
}

/// Runs the task and reports; the exit status says how it ended.
pub(crate) fn exec(command: RunCommand) -> anyhow::Result<ExitCode> {
    let root = toolbox::workspace_root(&command.workspace)?;
    let settings = Settings::resolve(&root, &command.overrides())?;
    verify::refuse_unrunnable_verification(&settings)?;
    tracing::info!(
        workspace = %root.display(),
        config_files = ?settings.files,
        allow = ?settings.toolbox.allow,
        "settings resolved"
    );
    let Prepared {
        toolbox,
        isolation,
        mut session,
        client,
        model,
    } = command.prepare(&root, &settings)?;
    let transcript = Transcript::create(session.transcript_path())?;
    let stop = prepare_to_stop(&toolbox, &root);

    let header = Header {
        run: session.id().to_string(),
        root: root.display().to_string(),
        settings: &settings,
        base_url: client.base_url().to_owned(),
        model: &model,
        isolation: &isolation,
    };
    let view = View::new(command.json);
    let mut observer = view.start(&header)?;
    let report = agent(client, &model, &toolbox, &settings, transcript, stop).run(
        &command.task,
        observer.as_mut(),
        &mut SessionCheckpoints(&mut session),
    );
    drop(observer);

    let finished = session.finish(undo_outcome(report.outcome), report.steps);
    let summary = Summary::new(&report, &mut session, finished, &root, &settings);
    view.finish(&summary);
    Ok(ExitCode::from(summary.exit_code()))
}

impl RunCommand {
    /// What the flags say, for [`Settings::resolve`].
    fn overrides(&self) -> Overrides {
        self.confinement.apply(self.server.apply(Overrides {
            verify: self.verify.clone(),
            timeout: self.timeout,
            max_steps: self.max_steps,
            attempts: self.attempts,
            max_checks: self.max_checks,
            edit_format: self.edit_format,
            ..Overrides::default()
        }))
    }

    /// Checks the toolbox's refusals, then records the state before the run while the
    /// toolbox is built and the model server asked, side by side: on a large repository
    /// each takes a noticeable part of the time to the first model request (the clean
    /// check, as long as a `git status`; the probe of bwrap and the walk for the paths the
    /// deny rules hide from commands; the server's answer), and none needs another.
    ///
    /// The errors come in the order of the steps run one after another: the toolbox's (a
    /// workspace that holds the harness, found before anything is recorded; an isolation
    /// tier that cannot run here); then the tree's (dirty, or no repository), whatever the
    /// state of the server and without waiting for it; then the server's. A run begun
    /// beside a toolbox or server that failed is discarded, so it leaves nothing to list
    /// or undo. With `--init` the server is asked before the begin, which changes the
    /// directory.
    fn prepare(&self, root: &Path, settings: &Settings) -> anyhow::Result<Prepared> {
        let plan = toolbox::Plan::check(root, &settings.toolbox)?;
        if self.init {
            let (toolbox, isolation) = plan.build()?;
            let (client, model) = ask_the_model_server(settings)?;
            let session = self.begin(root, settings)?;
            return Ok(Prepared {
                toolbox,
                isolation,
                session,
                client,
                model,
            });
        }
        // Not scoped: a tree that cannot be begun is reported at once, without waiting for
        // a server that takes its time to answer (or never does).
        let asking = {
            let settings = settings.clone();
            thread::spawn(move || ask_the_model_server(&settings))
        };
        let (built, begun) = thread::scope(|scope| {
            let building = scope.spawn(|| plan.build());
            let begun = self.begin(root, settings);
            (joined(building.join()), begun)
        });
        let (toolbox, isolation) = match built {
            Ok(built) => built,
            Err(error) => {
                if let Ok(session) = begun {
                    discard(session);
                }
                return Err(error);
            }
        };
        let session = begun?;
        match joined(asking.join()) {
            Ok((client, model)) => Ok(Prepared {
                toolbox,
                isolation,
                session,
                client,
                model,
            }),
            Err(error) => {
                discard(session);
                Err(error)
            }
        }
    }

    /// Records the state of the repository before the run, so it can be undone.
    fn begin(&self, root: &Path, settings: &Settings) -> anyhow::Result<Session> {
        let session = Session::begin(
            root,
            BeginOptions {
                allow_dirty: self.allow_dirty,
                init: self.init,
                task: self.task.clone(),
                model: settings.model.clone(),
                hidden: toolbox::hidden(root, &settings.toolbox.deny),
                ..BeginOptions::default()
            },
        )?;
        tracing::info!(run = %session.id(), "recorded the state before the run");
        Ok(session)
    }
}

/// What a run needs before its first step ([`RunCommand::prepare`]).
struct Prepared {
    toolbox: Toolbox,
    isolation: Choice,
    session: Session,
    client: Client,
    model: ModelProbe,
}

/// Removes the run `session` began, which will not take place, so that nothing of it is
/// left to list or undo.
fn discard(session: Session) {
    let run = session.id().clone();
    if let Err(discarding) = session.discard() {
        tracing::warn!(%run, "the run could not be discarded: {discarding}");
    }
}

/// What a joined thread returned; its panic goes on in this thread.
fn joined<T>(joined: thread::Result<T>) -> T {
    joined.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The client of the configured model, and what the probe of its server found.
fn ask_the_model_server(settings: &Settings) -> anyhow::Result<(Client, ModelProbe)> {
    tracing::info!(model = %settings.model, api = %settings.api, "asking the model server");
    let (client, model) = probe::probe(settings)?;
    tracing::info!(
        context_window = model.context_window,
        replies = model.replies_name(),
        "the model server answered"
    );
    Ok((client, model))
}

/// The loop, over the model (as the probe found it), the toolbox and the settings, writing
/// `transcript`.
fn agent<'a>(
    client: Client,
    model: &ModelProbe,
    toolbox: &'a Toolbox,
    settings: &Settings,
    transcript: Transcript,
    stop: StopSignal,
) -> Agent<'a> {
    let agent = Agent::new(Arc::new(ServerChat::new(client)), toolbox)
        .budgets(settings.budgets())
        .transcript(transcript)
        .edit_format(model.edit_format)
        .stop_signal(stop);
    match settings.verification.clone() {
        Some(verification) => agent.verification(verification).verification_inputs(
            settings.toolbox.verification_inputs(),
            settings.toolbox.allow_test_edits,
        ),
        None => agent,
    }
}

/// Makes the run stoppable: commands that leave their process group are adopted, so they
/// are still found and stopped, and Ctrl-C raises the returned signal.
fn prepare_to_stop(toolbox: &Toolbox, root: &Path) -> StopSignal {
    toolbox::adopt_escaping_commands();
    let stop = StopSignal::new();
    install_interrupt_handler(&stop, toolbox, root);
    stop
}

/// How the run is shown: one JSON object per line for scripts (`--json`), or text for a
/// person.
enum View {
    Json,
    Text(Style),
}

impl View {
    fn new(json: bool) -> View {
        if json {
            View::Json
        } else {
            View::Text(Style::for_stdout())
        }
    }

    /// Shows the isolation's fallback warnings (on stderr) and the header, and returns what
    /// shows each step of the run.
    fn start(&self, header: &Header<'_>) -> anyhow::Result<Box<dyn Observer>> {
        for warning in toolbox::fallback_warnings(header.isolation) {
            Out::stderr().line(&Shown::line(&warning))?;
        }
        Ok(match self {
            View::Json => {
                JsonLines::print(&header.to_json());
                Box::new(JsonLines)
            }
            View::Text(style) => {
                header.print(*style);
                Box::new(Terminal::new(*style))
            }
        })
    }

    /// Shows the summary.
    fn finish(&self, summary: &Summary<'_>) {
        match self {
            View::Json => JsonLines::print(&summary.to_json()),
            View::Text(style) => summary.print(*style),
        }
    }
}

/// `--edit-format`'s values, by the names [`EditFormat::parse`] takes.
fn parse_edit_format(name: &str) -> Result<EditFormat, String> {
    EditFormat::parse(name).ok_or_else(|| {
        let names: Vec<&str> = EditFormat::ALL.iter().map(|(name, _)| *name).collect();
        format!("use one of: {}", names.join(", "))
    })
}

/// How the undo record calls an outcome.
pub(crate) fn undo_outcome(outcome: Outcome) -> harness_undo::Outcome {
    match outcome {
        Outcome::Verified => harness_undo::Outcome::Succeeded,
        Outcome::VerificationFailed | Outcome::Unverified | Outcome::TestsChanged => {
            harness_undo::Outcome::Failed
        }
        _ => harness_undo::Outcome::Interrupted,
    }
}

/// Ctrl-C (or another ending signal, [`signals::ENDING`]) once: forward it to the running command and stop after the
/// current tool call. Twice: kill the running command and stop at once; the pre-run state
/// is already recorded, so the run can be undone.
fn install_interrupt_handler(stop: &StopSignal, toolbox: &Toolbox, root: &Path) {
    let stop = stop.clone();
    let interrupter = toolbox.interrupter();
    let undo = crate::program::command(&format!(
        "undo --workspace {}",
        quote(&root.display().to_string())
    ));
    signals::on_ending_signal(move |received| {
        stop.request();
        let mut err = Out::stderr();
        if received == 1 {
            interrupter.interrupt();
            let _ = err.line(&shown!(
                "\nharness: stopping after the current tool call (Ctrl-C again to stop at once)"
            ));
        } else {
            let _ = err.line(&shown!(
                "\nharness: stopped at once; the state before the run is recorded: {}",
                undo
            ));
            signals::kill_commands_and_exit(&interrupter, exit::INTERRUPTED);
        }
    });
}

/// `text` quoted for a POSIX shell when it needs to be.
pub(crate) fn quote(text: &str) -> String {
    shell_words::quote(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_map_onto_the_undo_record() {
        assert_eq!(
            undo_outcome(Outcome::Verified),
            harness_undo::Outcome::Succeeded
        );
        assert_eq!(
            undo_outcome(Outcome::Unverified),
            harness_undo::Outcome::Failed
        );
        assert_eq!(
            undo_outcome(Outcome::VerificationFailed),
            harness_undo::Outcome::Failed
        );
        assert_eq!(
            undo_outcome(Outcome::Stuck),
            harness_undo::Outcome::Interrupted
        );
    }
}
