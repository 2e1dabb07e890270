//! `harness run`: give a task to the model, in a workspace it cannot leave, and report how
//! it went.
//!
//! [`exec`] reads as the steps of a run, each done by `harness-app` (settings, preparing,
//! running and finishing the run); beside it are what this front end shows: the header
//! before the first step in `header`, and the summary after the last in `summary`.

mod header;
mod summary;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use harness_agent::{EditFormat, Observer, StopSignal, Transcript};
use harness_app::{Finished, Follow, Overrides, Prepared, Request, RunHeader, Settings, toolbox};
use harness_tools::Toolbox;

use self::header::Header;
use self::summary::Summary;
use crate::commands::{ConfinementFlags, ModelFlags};
use crate::display::{JsonLines, Out, Style, Terminal};
use crate::exit;
use crate::shown::{Shown, shown};
use crate::{isolation, signals};

/// Give a task to the model and let it work in a git repository, confined to it.
///
/// Before the first step the harness records the state of the repository (a dirty tree is
/// refused unless --allow-dirty), and after each step that changed files it takes a
/// checkpoint. When the model says it is done (or after an edit, when the check is quick),
/// the verification command runs; only its exit status 0 makes the run succeed. Review with `harness diff`, go back with
/// `harness undo`, keep with `harness accept`.
///
/// Settings come from the flags, then harness.toml in the workspace, then
/// ~/.config/harness/config.toml (keys: model, host, api, verify, allow, deny, timeout,
/// command_timeout, max_steps, attempts, max_checks, max_failed_calls, max_tokens,
/// head_start_chars, quick_check, context_length, temperature). A repository's harness.toml sets
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

    /// Follow up the latest run: start from the tree it left and continue its conversation.
    #[arg(long = "continue", conflicts_with_all = ["init", "resume"])]
    follow_latest: bool,

    /// Follow up run RUN, as --continue does the latest.
    #[arg(long, value_name = "RUN", conflicts_with = "init")]
    resume: Option<String>,

    /// The command that checks the task, e.g. "cargo test" (split like a shell would, run
    /// without one). The run succeeds only if it exits 0.
    #[arg(long, value_name = "CMD")]
    verify: Option<String>,

    #[command(flatten)]
    server: ModelFlags,

    /// The most model turns, per attempt. [default: 40]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_steps: Option<u32>,

    /// The most tries at the task: when one ends unverified (the check failed, the model got
    /// stuck or ran out of steps), its changes are reverted and the model starts again, while
    /// the time and tokens left last another attempt. Each is in the transcript. [default: 8]
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
    let root = harness_app::workspace_root(&command.workspace)?;
    let settings = Settings::resolve(&root, &command.overrides())?;
    harness_app::refuse_unrunnable_verification(&settings)?;
    tracing::info!(
        workspace = %root.display(),
        config_files = ?settings.files,
        allow = ?settings.toolbox.allow,
        "settings resolved"
    );
    // The toolbox built, the state before the run recorded and the model server asked, side
    // by side; a run begun beside a failure is discarded.
    let Prepared {
        toolbox,
        isolation,
        mut session,
        client,
        model,
    } = harness_app::prepare(&root, &settings, &command.request())?;
    let transcript = Transcript::create(session.transcript_path())?;
    let stop = prepare_to_stop(&toolbox, &root);

    let header = Header(RunHeader {
        run: session.id().to_string(),
        root: root.display().to_string(),
        settings: &settings,
        base_url: client.base_url().to_owned(),
        model: &model,
        isolation: &isolation,
    });
    let view = View::new(command.json);
    let mut observer = view.start(&header)?;
    let agent = harness_app::agent(client, &model, &toolbox, &settings, transcript, stop);
    let report = harness_app::run(agent, &command.task, observer.as_mut(), &mut session);
    drop(observer);

    let recorded = harness_app::finish(&mut session, &report);
    let finished = Finished::of(&mut session, &settings);
    let summary = Summary::new(&report, recorded, finished, &root);
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

    /// What the run is asked to do, and on what tree it may start.
    fn request(&self) -> Request {
        Request {
            task: self.task.clone(),
            allow_dirty: self.allow_dirty,
            init: self.init,
            hidden_around: Vec::new(),
            follows: Follow::of(self.follow_latest, self.resume.clone()),
        }
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
            View::Text(crate::display::stdout_style())
        }
    }

    /// Shows the isolation's fallback warnings (on stderr) and the header, and returns what
    /// shows each step of the run.
    fn start(&self, header: &Header<'_>) -> anyhow::Result<Box<dyn Observer>> {
        for warning in isolation::fallback_warnings(header.0.isolation) {
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

/// Ctrl-C (or another ending signal, [`signals::ENDING`]) once: forward it to the running command and stop after the
/// current tool call. Twice: kill the running command and stop at once; the pre-run state
/// is already recorded, so the run can be undone.
fn install_interrupt_handler(stop: &StopSignal, toolbox: &Toolbox, root: &Path) {
    let stop = stop.clone();
    let interrupter = toolbox.interrupter();
    let undo = crate::program::command(&format!(
        "undo --workspace {}",
        harness_app::quote(&root.display().to_string())
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
