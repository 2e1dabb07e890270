//! `harness run`: give a task to the model, in a workspace it cannot leave, and report how
//! it went.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow};
use clap::Args;
use harness_agent::{
    Agent, Budgets, Observer, Outcome, RunReport, StopSignal, Transcript, Verification,
};
use harness_exec::{EnvPolicy, Policy, Runner};
use harness_ollama::{Api, Client, DEFAULT_MODEL};
use harness_sandbox::Workspace;
use harness_tools::Toolbox;
use harness_undo::{BeginOptions, DiffTarget, Session};
use serde_json::json;

use crate::boundary;
use crate::config::{self, FileConfig};
use crate::display::{JsonLines, Style, Terminal};
use crate::exit;
use crate::guard;

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
/// Exit status: 0 verified; 1 not verified (verification failed, none was given, or a
/// budget ran out); 2 usage or configuration error; 3 model server problem; 130
/// interrupted.
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
    about = "Give a task to the model, confined to a git repository"
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

    /// The model. [default: qwen2.5-coder:7b]
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

    /// The most model turns. [default: 40]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_steps: Option<u32>,

    /// The most seconds the whole run may take. [default: 1800]
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,

    /// Allow only this program to run (repeat for more); without it, a blocklist of
    /// accidents applies. The verification command's program must be allowed too.
    #[arg(long = "allow", value_name = "PROGRAM")]
    allow: Vec<String>,

    /// Print the run as JSON lines (one event per line) instead of for a person.
    #[arg(long)]
    json: bool,

    /// What to do, in words.
    #[arg(value_name = "TASK")]
    task: String,
}

/// The settings of one run: flags over configuration files over defaults.
#[derive(Debug)]
struct Settings {
    model: String,
    host: Option<String>,
    api: Api,
    verification: Option<Verification>,
    allow: Vec<String>,
    deny: Vec<String>,
    timeout: Duration,
    command_timeout: Option<Duration>,
    max_steps: u32,
    max_failed_calls: u32,
    max_tokens: Option<u64>,
    head_start_chars: usize,
    context_length: Option<u32>,
    temperature: f64,
}

impl Settings {
    fn resolve(command: &RunCommand, files: FileConfig) -> anyhow::Result<Settings> {
        refuse_zero_limits(&files)?;
        let api = match command.api.as_deref().or(files.api.as_deref()) {
            None => Api::Ollama,
            Some(name) => name.parse().map_err(|_| {
                anyhow!("unknown api {name:?} in the configuration: use \"ollama\" or \"openai\"")
            })?,
        };
        let verification = command
            .verify
            .clone()
            .or(files.verify)
            .map(|text| Verification::parse(&text))
            .transpose()?;
        let defaults = Budgets::default();
        let allow = if command.allow.is_empty() {
            files.allow.unwrap_or_default()
        } else {
            command.allow.clone()
        };
        Ok(Settings {
            model: command
                .model
                .clone()
                .or(files.model)
                .unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
            host: command.host.clone().or(files.host),
            api,
            verification,
            allow,
            deny: files.deny.unwrap_or_default(),
            timeout: command
                .timeout
                .or(files.timeout)
                .map_or(defaults.max_duration, Duration::from_secs),
            command_timeout: files.command_timeout.map(Duration::from_secs),
            max_steps: command
                .max_steps
                .or(files.max_steps)
                .unwrap_or(defaults.max_steps),
            max_failed_calls: files.max_failed_calls.unwrap_or(defaults.max_failed_calls),
            max_tokens: files.max_tokens.or(defaults.max_tokens),
            head_start_chars: files.head_start_chars.unwrap_or(defaults.head_start_chars),
            context_length: files.context_length,
            temperature: files.temperature.unwrap_or(0.2),
        })
    }

    fn policy(&self) -> Policy {
        if self.allow.is_empty() {
            Policy::blocklist()
        } else {
            Policy::allowlist(self.allow.clone())
        }
    }
}

/// A limit of 0 in a configuration file would end every run before its first step (or
/// every command at once): refused, naming the key. The flags cannot be 0 (clap checks).
fn refuse_zero_limits(files: &FileConfig) -> anyhow::Result<()> {
    let limits = [
        ("timeout", files.timeout),
        ("command_timeout", files.command_timeout),
        ("max_steps", files.max_steps.map(u64::from)),
        ("max_failed_calls", files.max_failed_calls.map(u64::from)),
        ("max_tokens", files.max_tokens),
        ("context_length", files.context_length.map(u64::from)),
    ];
    match limits.into_iter().find(|(_, value)| *value == Some(0)) {
        Some((key, _)) => Err(anyhow!(
            "`{key} = 0` in the configuration would stop every run at once: use at least 1, \
             or leave the key out for the default"
        )),
        None => Ok(()),
    }
}

/// Runs the task and reports; the exit status says how it ended.
pub(crate) fn exec(command: RunCommand) -> anyhow::Result<ExitCode> {
    let root = guard::canonical_workspace(&command.workspace)?;
    guard::refuse_broad(
        &root,
        std::env::var_os("HOME")
            .as_deref()
            .map(std::path::Path::new),
    )?;
    let loaded = config::load(&root)?;
    let settings = Settings::resolve(&command, loaded.config)?;
    let policy = settings.policy();
    if let Some(verification) = &settings.verification {
        policy.check(verification.argv()).map_err(|refusal| {
            anyhow!(
                "the verification command `{}` would be refused ({refusal}); allow its program \
                 with --allow",
                verification.command()
            )
        })?;
    }
    let mut builder = Workspace::builder(&root);
    // The model may not rewrite the configuration of its own next run.
    builder.deny_write(config::WORKSPACE_FILE);
    for glob in &settings.deny {
        builder.deny(glob.clone());
    }
    let workspace = builder
        .build()
        .with_context(|| format!("cannot use {} as the workspace", root.display()))?;
    guard::refuse_own_harness(&workspace)?;

    tracing::info!(
        workspace = %root.display(),
        config_files = ?loaded.files,
        allow = ?settings.allow,
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

    // Python writes bytecode caches keyed on a source's mtime in whole seconds and its size,
    // and an edit the harness makes within the same second that keeps the size (`a - b` to
    // `a + b`) would then run the old code. So no caches: every run reads the source.
    let runner = Runner::new().env(EnvPolicy::scrubbed().set("PYTHONDONTWRITEBYTECODE", "1"));
    let mut toolbox = Toolbox::builder(workspace).runner(runner).policy(policy);
    if let Some(timeout) = settings.command_timeout {
        toolbox = toolbox.timeout(timeout);
    }
    let toolbox = toolbox.build();
    // Commands that leave their process group are still found and stopped: this process
    // adopts them. Without it they are found through their environment only.
    if let Err(error) = harness_exec::enable_subreaper() {
        tracing::warn!("cannot become a child subreaper ({error}); cleanup relies on /proc");
    }
    let stop = StopSignal::new();
    install_interrupt_handler(&stop, &toolbox, &root);

    let header = Header {
        run: session.id().to_string(),
        root: root.display().to_string(),
        settings: &settings,
        base_url: client.base_url().to_owned(),
        context_window,
        files: loaded.files,
    };
    let style = Style::for_stdout();
    let mut observer: Box<dyn Observer> = if command.json {
        JsonLines::print(&header.to_json());
        Box::new(JsonLines)
    } else {
        header.print(style);
        Box::new(Terminal::new(style))
    };

    let budgets = Budgets {
        max_steps: settings.max_steps,
        max_duration: settings.timeout,
        max_failed_calls: settings.max_failed_calls,
        max_tokens: settings.max_tokens,
        head_start_chars: settings.head_start_chars,
        ..Budgets::default()
    };
    let mut agent = Agent::new(Arc::new(client), &toolbox)
        .budgets(budgets)
        .transcript(transcript)
        .stop_signal(stop);
    if let Some(verification) = settings.verification.clone() {
        agent = agent.verification(verification);
    }
    let report = agent.run(&command.task, observer.as_mut(), &mut session);
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
    };
    if command.json {
        JsonLines::print(&summary.to_json());
    } else {
        summary.print(style);
    }
    Ok(exit::for_outcome(report.outcome))
}

/// The client of the configured server and model.
fn model_client(settings: &Settings) -> anyhow::Result<Client> {
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
fn undo_outcome(outcome: Outcome) -> harness_undo::Outcome {
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
        if requests == 1 {
            eprintln!(
                "\nharness: stopping after the current tool call (Ctrl-C again to stop at once)"
            );
        } else {
            eprintln!("\nharness: stopped at once; the state before the run is recorded: {undo}");
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
}

impl Header<'_> {
    fn policy(&self) -> String {
        boundary::policy(&self.settings.allow)
    }

    fn print(&self, style: Style) {
        let settings = self.settings;
        let verify = match &settings.verification {
            Some(verification) => verification.command().to_owned(),
            None => "none: nothing will check the model's claim that it is done (--verify CMD)"
                .to_owned(),
        };
        let files = if self.files.is_empty() {
            "none".to_owned()
        } else {
            self.files
                .iter()
                .map(|file| file.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!(
            "{} {}\n{}\n\
             \x20 workspace:  {}\n\
             \x20 policy:     {}\n\
             \x20 isolation:  none: commands run as you (harness sandbox explain)\n\
             \x20 model:      {} via {} at {} (context {} tokens)\n\
             \x20 verify:     {verify}\n\
             \x20 config:     {files}\n",
            style.bold("harness run"),
            self.run,
            style.yellow(boundary::STATEMENT),
            self.root,
            self.policy(),
            settings.model,
            settings.api,
            self.base_url,
            self.context_window,
        );
    }

    fn to_json(&self) -> serde_json::Value {
        let settings = self.settings;
        json!({
            "event": "run",
            "run": self.run,
            "boundary": boundary::STATEMENT,
            "workspace": self.root,
            "policy": self.policy(),
            "isolation": "none",
            "model": settings.model,
            "api": settings.api.to_string(),
            "host": self.base_url,
            "context_window": self.context_window,
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
}

impl Summary<'_> {
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
        let outcome = report.outcome.to_string();
        let outcome = match report.outcome {
            Outcome::Verified => style.green(&outcome),
            Outcome::Unverified => style.yellow(&outcome),
            _ => style.red(&outcome),
        };
        let changed = match &self.changed {
            Ok(files) if files.is_empty() => "none".to_owned(),
            Ok(files) => files
                .iter()
                .map(|(path, added, removed)| format!("{path} (+{added} −{removed})"))
                .collect::<Vec<_>>()
                .join(", "),
            Err(error) => format!("unknown ({error})"),
        };
        println!(
            "\n{}\n\
             \x20 outcome:       {} — {}\n\
             \x20 verification:  {}\n\
             \x20 steps:         {} ({} tool calls)   tokens: {} prompt + {} generated   time: {}\n\
             \x20 workspace:     {}\n\
             \x20 files changed: {changed}",
            style.bold("summary"),
            style.bold(&outcome),
            report.reason,
            self.verification(),
            report.steps,
            report.tool_calls,
            report.prompt_tokens,
            report.completion_tokens,
            duration(report.duration),
            self.root.display(),
        );
        if let Some(line) = self.not_undoable_line() {
            println!("  {}", style.yellow(&line));
        }
        for (label, command) in self.commands() {
            println!("  {:<14} {command}", format!("{label}:"));
        }
        for warning in report.warnings.iter().chain(&self.finish_error) {
            println!("  {}", style.yellow(&format!("warning: {warning}")));
        }
        println!("{}", style.yellow(boundary::STATEMENT));
    }

    /// `not undoable:  N ignored paths changed by commands: a, b, c and N-3 more`.
    fn not_undoable_line(&self) -> Option<String> {
        const NAMED: usize = 5;
        let (count, first) = &self.not_undoable;
        if *count == 0 {
            return None;
        }
        let named: Vec<String> = first
            .iter()
            .take(NAMED)
            .map(|p| p.display().to_string())
            .collect();
        let more = count - named.len();
        Some(format!(
            "not undoable:  {count} ignored path{} changed by commands: {}{} (undo leaves them as they are)",
            if *count == 1 { "" } else { "s" },
            named.join(", "),
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
            "exit_code": match self.report.outcome {
                Outcome::Verified => exit::VERIFIED,
                Outcome::ModelError => exit::MODEL_SERVER,
                Outcome::Interrupted => exit::INTERRUPTED,
                _ => exit::NOT_VERIFIED,
            },
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
    fn a_zero_limit_in_the_configuration_is_refused_by_name() {
        let none = FileConfig::default;
        let cases = [
            (
                "timeout",
                FileConfig {
                    timeout: Some(0),
                    ..none()
                },
            ),
            (
                "command_timeout",
                FileConfig {
                    command_timeout: Some(0),
                    ..none()
                },
            ),
            (
                "max_steps",
                FileConfig {
                    max_steps: Some(0),
                    ..none()
                },
            ),
            (
                "max_failed_calls",
                FileConfig {
                    max_failed_calls: Some(0),
                    ..none()
                },
            ),
            (
                "max_tokens",
                FileConfig {
                    max_tokens: Some(0),
                    ..none()
                },
            ),
            (
                "context_length",
                FileConfig {
                    context_length: Some(0),
                    ..none()
                },
            ),
        ];
        for (key, files) in cases {
            let error = refuse_zero_limits(&files).unwrap_err().to_string();
            assert!(error.contains(&format!("`{key} = 0`")), "{error}");
        }
        let ones = FileConfig {
            timeout: Some(1),
            command_timeout: Some(1),
            max_steps: Some(1),
            max_failed_calls: Some(1),
            max_tokens: Some(1),
            context_length: Some(1),
            head_start_chars: Some(0),
            ..FileConfig::default()
        };
        assert!(
            refuse_zero_limits(&ones).is_ok(),
            "1 is a limit; a head start of 0 is off"
        );
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
