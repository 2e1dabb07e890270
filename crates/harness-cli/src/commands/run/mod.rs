//! `harness run`: give a task to the model, in a workspace it cannot leave, and report how
//! it went.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow};
use clap::Args;
use harness_agent::{
    Agent, Budgets, EditFormat, Observer, Outcome, RunReport, StopSignal, Transcript, Verification,
};
use harness_exec::preflight::Choice;
use harness_ollama::Client;
use harness_tools::{TestCode, Toolbox};
use harness_undo::{BeginOptions, DiffTarget, Session};
use serde_json::json;

use crate::boundary;
use crate::checkpoints::SessionCheckpoints;
use crate::commands::{ConfinementFlags, ModelFlags};
use crate::config::{Overrides, Settings};
use crate::display::{JsonLines, Out, Style, Terminal};
use crate::exit;
use crate::shown::{Shown, Visible, shown};
use crate::toolbox;

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
/// command_timeout, max_steps, max_failed_calls, max_tokens, head_start_chars,
/// context_length, temperature).
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

    /// The most model turns. [default: 40]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_steps: Option<u32>,

    /// The most seconds the whole run may take. [default: 1800]
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,

    #[command(flatten)]
    confinement: ConfinementFlags,

    /// Which edits the model writes into an answer, instead of calling a tool, are applied
    /// (through the same tools, so every guard holds): auto (whole files under their path
    /// and search/replace blocks), tools (none), whole, or diff (search/replace).
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

impl RunCommand {
    /// What the flags say, for [`Settings::resolve`].
    fn overrides(&self) -> Overrides {
        self.confinement.apply(self.server.apply(Overrides {
            verify: self.verify.clone(),
            timeout: self.timeout,
            max_steps: self.max_steps,
            edit_format: self.edit_format,
            ..Overrides::default()
        }))
    }
}

/// How the model's changes are made, for the header.
fn edits(format: EditFormat) -> &'static str {
    match format {
        EditFormat::Tools => "tool calls only (--edit-format tools)",
        EditFormat::Whole => {
            "tool calls, and whole files written into answers (--edit-format whole)"
        }
        EditFormat::Diff => {
            "tool calls, and search/replace blocks written into answers (--edit-format diff)"
        }
        _ => {
            "tool calls, or whole files and search/replace blocks written into answers, applied \
             through the same tools (--edit-format auto)"
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

/// Runs the task and reports; the exit status says how it ended.
pub(crate) fn exec(command: RunCommand) -> anyhow::Result<ExitCode> {
    let root = toolbox::workspace_root(&command.workspace)?;
    let settings = Settings::resolve(&root, &command.overrides())?;
    refuse_unrunnable_verification(&settings)?;
    let (toolbox, isolation) = toolbox::build(&root, &settings.toolbox)?;

    tracing::info!(
        workspace = %root.display(),
        config_files = ?settings.files,
        allow = ?settings.toolbox.allow,
        "settings resolved"
    );
    // What `Session::begin` would refuse (not a repository, no commit, a dirty tree) is
    // refused before the model server is asked, so the user hears of it first, whatever
    // the state of the server.
    if !command.init && !command.allow_dirty {
        harness_undo::check_clean(&root)?;
    }

    let client = model_client(&settings)?;
    tracing::info!(model = %settings.model, api = %settings.api, url = client.base_url(), "asking the model server");
    let context_window = client
        .context_length()
        .context("asking the model server about the model")?;
    tracing::info!(context_window, "the model server answered");

    let mut session = Session::begin(
        &root,
        BeginOptions {
            allow_dirty: command.allow_dirty,
            init: command.init,
            task: command.task.clone(),
            model: settings.model.clone(),
            ..BeginOptions::default()
        },
    )?;
    tracing::info!(run = %session.id(), "recorded the state before the run");
    let transcript = Transcript::create(session.transcript_path())?;

    toolbox::adopt_escaping_commands();
    let stop = StopSignal::new();
    install_interrupt_handler(&stop, &toolbox, &root);

    let header = Header {
        run: session.id().to_string(),
        root: root.display().to_string(),
        settings: &settings,
        base_url: client.base_url().to_owned(),
        context_window,
        files: settings.files.clone(),
        isolation: &isolation,
    };
    for warning in toolbox::fallback_warnings(&isolation) {
        Out::stderr().line(&Shown::line(&warning))?;
    }
    let style = Style::for_stdout();
    let mut observer: Box<dyn Observer> = if command.json {
        JsonLines::print(&header.to_json());
        Box::new(JsonLines)
    } else {
        header.print(style);
        Box::new(Terminal::new(style))
    };

    let mut agent = Agent::new(Arc::new(client), &toolbox)
        .budgets(budgets(&settings))
        .transcript(transcript)
        .edit_format(settings.edit_format)
        .stop_signal(stop);
    if let Some(verification) = settings.verification.clone() {
        agent = agent.verification(verification);
    }
    let report = agent.run(
        &command.task,
        observer.as_mut(),
        &mut SessionCheckpoints(&mut session),
    );
    drop(observer);

    let finished = session.finish(undo_outcome(report.outcome), report.steps);
    let changed = session.diff(DiffTarget::WorkingTree);
    let summary = Summary {
        report: &report,
        run: session.id().to_string(),
        root: &root,
        changed: changed
            .as_ref()
            .map(|diff| {
                diff.files
                    .iter()
                    .map(|file| {
                        (
                            file.path.display().to_string(),
                            file.additions,
                            file.deletions,
                        )
                    })
                    .collect()
            })
            .map_err(ToString::to_string),
        finish_error: finished.err().map(|error| error.to_string()),
        // Best effort: a summary that cannot list them says nothing false.
        not_undoable: session.unrecorded_ignored_changes().unwrap_or_default(),
        tests_changed: tests_changed(&settings, changed.as_ref().ok()),
    };
    if command.json {
        JsonLines::print(&summary.to_json());
    } else {
        summary.print(style);
    }
    Ok(ExitCode::from(summary.exit_code()))
}

/// The test files the run changed, when the tools were kept from changing test code: a
/// command changed them, so a passing verification may not mean the code was fixed.
fn tests_changed(settings: &Settings, diff: Option<&harness_undo::Diff>) -> Vec<String> {
    if settings.toolbox.allow_test_edits {
        return Vec::new();
    }
    let globs: Vec<&str> = settings.toolbox.tests.iter().map(String::as_str).collect();
    let (Ok(tests), Some(diff)) = (TestCode::new(&globs), diff) else {
        return Vec::new();
    };
    diff.files
        .iter()
        .map(|file| file.path.display().to_string())
        .filter(|path| tests.is_test_file(path))
        .collect()
}

/// Refuses a verification command the command policy would refuse: the run could never be
/// verified.
pub(crate) fn refuse_unrunnable_verification(settings: &Settings) -> anyhow::Result<()> {
    if let Some(verification) = &settings.verification {
        settings
            .toolbox
            .policy()
            .check(verification.argv())
            .map_err(|refusal| {
                anyhow!(
                    "the verification command `{}` would be refused ({refusal}); allow its \
                     program with --allow",
                    verification.command()
                )
            })?;
    }
    Ok(())
}

/// The budgets of a run, from `settings`.
pub(crate) fn budgets(settings: &Settings) -> Budgets {
    Budgets {
        max_steps: settings.max_steps,
        max_duration: settings.timeout,
        max_failed_calls: settings.max_failed_calls,
        max_tokens: settings.max_tokens,
        head_start_chars: settings.head_start_chars,
        ..Budgets::default()
    }
}

/// The client of the configured server and model.
pub(crate) fn model_client(settings: &Settings) -> anyhow::Result<Client> {
    let mut config = harness_ollama::Config::new(settings.api, settings.model.clone());
    if let Some(host) = &settings.host {
        config.host = host.clone();
    }
    config.context_length = settings.context_length;
    // Steady answers suit tool calls; a rambling small model is cut off and told so.
    config.temperature = Some(settings.temperature);
    config.max_output_tokens = Some(Budgets::default().answer_reserve_tokens);
    // An address that cannot be understood is a configuration error (2), not the server's (3).
    Client::new(config).map_err(|error| anyhow!("{error}"))
}

/// How the undo record calls an outcome.
pub(crate) fn undo_outcome(outcome: Outcome) -> harness_undo::Outcome {
    match outcome {
        Outcome::Verified => harness_undo::Outcome::Succeeded,
        Outcome::VerificationFailed | Outcome::Unverified => harness_undo::Outcome::Failed,
        _ => harness_undo::Outcome::Interrupted,
    }
}

/// Ctrl-C once: forward it to the running command and stop after the current tool call.
/// Twice: stop at once; the pre-run state is already recorded, so the run can be undone.
fn install_interrupt_handler(stop: &StopSignal, toolbox: &Toolbox, root: &std::path::Path) {
    let stop = stop.clone();
    let interrupter = toolbox.interrupter();
    let undo = format!(
        "harness undo --workspace {}",
        quote(&root.display().to_string())
    );
    let installed = ctrlc::set_handler(move || {
        let requests = stop.request();
        interrupter.interrupt();
        let mut err = Out::stderr();
        if requests == 1 {
            let _ = err.line(&shown!(
                "\nharness: stopping after the current tool call (Ctrl-C again to stop at once)"
            ));
        } else {
            let _ = err.line(&shown!(
                "\nharness: stopped at once; the state before the run is recorded: {}",
                undo
            ));
            std::process::exit(i32::from(exit::INTERRUPTED));
        }
    });
    if let Err(error) = installed {
        tracing::warn!("cannot handle Ctrl-C ({error}); it will end the harness at once");
    }
}

/// `text` quoted for a POSIX shell when it needs to be.
pub(crate) fn quote(text: &str) -> String {
    shell_words::quote(text).into_owned()
}

/// What is active, printed before the first step.
struct Header<'a> {
    run: String,
    root: String,
    settings: &'a Settings,
    base_url: String,
    context_window: u32,
    files: Vec<PathBuf>,
    /// The isolation tier the preflight chose.
    isolation: &'a Choice,
}

impl Header<'_> {
    fn policy(&self) -> String {
        boundary::policy(&self.settings.toolbox.allow)
    }

    fn print(&self, style: Style) {
        let settings = self.settings;
        let verify = match &settings.verification {
            Some(verification) => Shown::line(verification.command()),
            None => {
                shown!("none: nothing will check the model's claim that it is done (--verify CMD)")
            }
        };
        let files = if self.files.is_empty() {
            shown!("none")
        } else {
            let files: Vec<Shown> = self
                .files
                .iter()
                .map(|file| file.display().shown())
                .collect();
            Shown::join(&files, ", ")
        };
        let _ = Out::stdout().line(&shown!(
            "{} {}\n{}\n\
             \x20 workspace:  {}\n\
             \x20 policy:     {}\n\
             \x20 isolation:  {}\n\
             \x20 model:      {} via {} at {} (context {} tokens)\n\
             \x20 edits:      {}\n\
             \x20 verify:     {}\n\
             \x20 config:     {}\n",
            style.bold(&shown!("harness run")),
            self.run,
            style.yellow(&Shown::text(boundary::STATEMENT)),
            self.root,
            self.policy(),
            toolbox::isolation_summary(self.isolation, &settings.toolbox),
            settings.model,
            settings.api,
            self.base_url,
            self.context_window,
            edits(settings.edit_format),
            verify,
            files,
        ));
    }

    fn to_json(&self) -> serde_json::Value {
        let settings = self.settings;
        json!({
            "event": "run",
            "run": self.run,
            "boundary": boundary::STATEMENT,
            "workspace": self.root,
            "policy": self.policy(),
            "isolation": self.isolation.tier.name(),
            "model": settings.model,
            "api": settings.api.to_string(),
            "host": self.base_url,
            "context_window": self.context_window,
            "edit_format": settings.edit_format.name(),
            "verification": settings.verification.as_ref().map(Verification::command),
            "config_files": self.files,
        })
    }
}

/// What the run did, printed at the end.
struct Summary<'a> {
    report: &'a RunReport,
    run: String,
    root: &'a std::path::Path,
    /// Changed files with lines added and removed, or why they could not be listed.
    changed: Result<Vec<(String, usize, usize)>, String>,
    finish_error: Option<String>,
    /// Ignored files commands changed, which no snapshot holds: how many, and the first.
    not_undoable: (usize, Vec<std::path::PathBuf>),
    /// Test files changed although the tools may not change them: by a command.
    tests_changed: Vec<String>,
}

impl Summary<'_> {
    /// The run's exit status: a verified run whose commands changed test code is not
    /// counted as done, since the tests it passed may not be the ones the user wrote.
    fn exit_code(&self) -> u8 {
        if self.tests_changed.is_empty() {
            exit::code_for_outcome(self.report.outcome)
        } else {
            exit::NOT_VERIFIED
        }
    }

    fn commands(&self) -> [(&'static str, String); 4] {
        let workspace = quote(&self.root.display().to_string());
        let run = &self.run;
        [
            (
                "review",
                format!("harness diff {run} --workspace {workspace}"),
            ),
            (
                "undo",
                format!("harness undo {run} --workspace {workspace}"),
            ),
            (
                "keep",
                format!("harness accept {run} --workspace {workspace}"),
            ),
            (
                "transcript",
                format!("harness show {run} --workspace {workspace}"),
            ),
        ]
    }

    fn verification(&self) -> String {
        match &self.report.verification {
            None => "none was given, so nothing checked the model's claim that it was done; \
                     pass --verify CMD"
                .to_owned(),
            Some(v) if v.runs == 0 => format!(
                "`{}` never ran after the model's work: the model did not say it was done",
                v.command
            ),
            Some(v) => format!(
                "`{}` ran {} time{} when the model said it was done; the last run {}",
                v.command,
                v.runs,
                if v.runs == 1 { "" } else { "s" },
                if v.passed {
                    "passed (exit 0)"
                } else {
                    "failed"
                }
            ),
        }
    }

    fn print(&self, style: Style) {
        let report = self.report;
        let outcome = Shown::line(&report.outcome.to_string());
        let outcome = match report.outcome {
            Outcome::Verified => style.green(&outcome),
            Outcome::Unverified => style.yellow(&outcome),
            _ => style.red(&outcome),
        };
        let changed = match &self.changed {
            Ok(files) if files.is_empty() => shown!("none"),
            Ok(files) => {
                let files: Vec<Shown> = files
                    .iter()
                    .map(|(path, added, removed)| shown!("{} (+{} −{})", path, added, removed))
                    .collect();
                Shown::join(&files, ", ")
            }
            Err(error) => shown!("unknown ({})", error),
        };
        let mut out = Out::stdout();
        let _ = out.line(&shown!(
            "\n{}\n\
             \x20 outcome:       {} — {}\n\
             \x20 verification:  {}\n\
             \x20 steps:         {} ({} tool calls)   tokens: {} prompt + {} generated   time: {}\n\
             \x20 workspace:     {}\n\
             \x20 files changed: {}",
            style.bold(&shown!("summary")),
            style.bold(&outcome),
            report.reason,
            self.verification(),
            report.steps,
            report.tool_calls,
            report.prompt_tokens,
            report.completion_tokens,
            duration(report.duration),
            self.root.display(),
            changed,
        ));
        if let Some(line) = self.not_undoable_line() {
            let _ = out.line(&shown!("  {}", style.yellow(&line)));
        }
        if !self.tests_changed.is_empty() {
            let files: Vec<Shown> = self.tests_changed.iter().map(|p| Shown::line(p)).collect();
            let line = shown!(
                "test code:     changed by a command: {} (the file tools may not change it); \
                 a passing verification does not show the code was fixed, so the run is not \
                 counted as done (exit 1): review the diff",
                Shown::join(&files, ", ")
            );
            let _ = out.line(&shown!("  {}", style.red(&line)));
        }
        for (label, command) in self.commands() {
            let _ = out.line(&shown!("  {:<14} {}", format!("{label}:"), command));
        }
        for warning in report.warnings.iter().chain(&self.finish_error) {
            let warning = shown!("warning: {}", Shown::text(warning));
            let _ = out.line(&shown!("  {}", style.yellow(&warning)));
        }
        let _ = out.line(&style.yellow(&Shown::text(boundary::STATEMENT)));
    }

    /// `not undoable:  N ignored paths changed by commands: a, b, c and N-3 more`.
    fn not_undoable_line(&self) -> Option<Shown> {
        const NAMED: usize = 5;
        let (count, first) = &self.not_undoable;
        if *count == 0 {
            return None;
        }
        let named: Vec<Shown> = first
            .iter()
            .take(NAMED)
            .map(|p| p.display().shown())
            .collect();
        let more = count - named.len();
        Some(shown!(
            "not undoable:  {} ignored path{} changed by commands: {}{} (undo leaves them as they are)",
            count,
            if *count == 1 { "" } else { "s" },
            Shown::join(&named, ", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ))
    }

    fn to_json(&self) -> serde_json::Value {
        let commands: serde_json::Map<String, serde_json::Value> = self
            .commands()
            .into_iter()
            .map(|(label, command)| (label.to_owned(), json!(command)))
            .collect();
        let changed = match &self.changed {
            Ok(files) => json!(
                files
                    .iter()
                    .map(|(path, added, removed)| json!({"path": path, "added": added, "removed": removed}))
                    .collect::<Vec<_>>()
            ),
            Err(error) => json!({"error": error}),
        };
        json!({
            "event": "summary",
            "run": self.run,
            "outcome": self.report.outcome,
            "reason": self.report.reason,
            "exit_code": self.exit_code(),
            "tests_changed": self.tests_changed,
            "verification": self.verification(),
            "files_changed": changed,
            "not_undoable": {
                "count": self.not_undoable.0,
                "first": self.not_undoable.1.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            },
            "commands": commands,
            "warnings": self.report.warnings.iter().chain(&self.finish_error).collect::<Vec<_>>(),
            "boundary": boundary::STATEMENT,
        })
    }
}

/// `1m 12s`, `8.3s`.
fn duration(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds < 60.0 {
        format!("{seconds:.1}s")
    } else {
        format!(
            "{}m {:02}s",
            duration.as_secs() / 60,
            duration.as_secs() % 60
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_seconds_or_minutes() {
        assert_eq!(duration(Duration::from_millis(8_340)), "8.3s");
        assert_eq!(duration(Duration::from_secs(72)), "1m 12s");
    }

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
