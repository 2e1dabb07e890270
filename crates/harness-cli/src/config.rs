//! Settings: `~/.config/harness/config.toml` for the user, `harness.toml` in the workspace
//! for the project, and the flags. Flags win over both, the project's file over the user's.
//!
//! [`Settings::resolve`] is the one way settings are decided, for `harness run` and for
//! `harness tool` alike, so a call made by hand meets exactly the guards a model's call
//! meets; [`Settings::budgets`] and [`Settings::model_client`] turn them into a run's limits
//! and its model, for `harness run` and `harness mcp`'s `run_task` alike.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, anyhow};
use harness_agent::{Budgets, EditFormat, Verification};
use harness_exec::{Policy, Sandbox};
use harness_ollama::{Api, Client, DEFAULT_MODEL};
use harness_tools::{TestCode, TestCodeError, VerificationInputs};

use crate::probe::Replies;
use serde::Deserialize;

/// The name of the project's configuration file, at the workspace root.
pub(crate) const WORKSPACE_FILE: &str = "harness.toml";

/// Tries at a task unless the flags or a configuration file say otherwise. A later attempt
/// opens with the first one's head start, which the model server has already evaluated, so
/// it costs its own answers; measured on the task suite with Qwen2.5-Coder-1.5B, a small
/// model's fresh sample solves tasks its first one did not (see the README's suite runs).
/// An attempt only follows one that ended unverified, and the run's timeout bounds them all.
/// Six were measured twice and not taken: the fourth to sixth attempts, asked at 0.5, solved
/// 1 of the 25 tasks that reached them (2026-12-04, `target/eval/s34a` in the README), and
/// the median wall per task rose to 138 s, past the 120 s the suite allows.
pub(crate) const DEFAULT_ATTEMPTS: u32 = 3;

/// Failed checks of the verification that end an attempt unless the flags or a
/// configuration file say otherwise. Measured on the task suite with Qwen2.5-Coder-1.5B
/// (2026-12-03, the README's suite runs): ending an attempt at its first failed check, so
/// the next starts afresh, took the median wall per task from 345 s to 121 s and the runs
/// at the time limit from 8 of 16 to none, and solved 7 of 16 where three checks solved 5.
/// A small model that failed a check mostly repeats itself; a fresh sample does not.
pub(crate) const DEFAULT_MAX_CHECKS: u32 = 1;

/// The settings of one command: flags over configuration files over defaults.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    /// What the model's tools may do: shared by `harness run` and `harness tool`.
    pub(crate) toolbox: ToolboxSettings,
    /// The model.
    pub(crate) model: String,
    /// The model server's address; `None` for the API's default.
    pub(crate) host: Option<String>,
    /// The model server's API.
    pub(crate) api: Api,
    /// The command that decides whether a run succeeded.
    pub(crate) verification: Option<Verification>,
    /// The longest a whole run may take.
    pub(crate) timeout: Duration,
    /// The most model turns.
    pub(crate) max_steps: u32,
    /// Failed tool calls in a row that end a run.
    pub(crate) max_failed_calls: u32,
    /// Prompt and generated tokens a run may use.
    pub(crate) max_tokens: Option<u64>,
    /// Characters of the head start shown to the model; 0 turns it off.
    pub(crate) head_start_chars: usize,
    /// Attempts at the task, each after reverting the one before.
    pub(crate) attempts: u32,
    /// Failed checks of the verification that end an attempt.
    pub(crate) max_checks: u32,
    /// The model's context window, when the configuration sets it.
    pub(crate) context_length: Option<u32>,
    /// Sampling temperature.
    pub(crate) temperature: f64,
    /// Which edits written into an answer, instead of a tool call, are applied.
    pub(crate) edit_format: EditFormat,
    /// How the model is asked to reply.
    pub(crate) replies: Replies,
    /// The configuration files that were read, in order.
    pub(crate) files: Vec<PathBuf>,
}

/// What confines the model's tools: the deny rules, the command policy and the command
/// timeouts. `toolbox::build` turns it into the toolbox, the same way for every command.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ToolboxSettings {
    /// Programs allowed to run; empty for the blocklist.
    pub(crate) allow: Vec<String>,
    /// Files the tools may neither read nor write, beyond the built-in rules.
    pub(crate) deny: Vec<String>,
    /// The timeout of a command whose call sets none; `None` for the toolbox's default.
    pub(crate) command_timeout: Option<Duration>,
    /// The most a call may ask for; `None` for the toolbox's default.
    pub(crate) max_command_timeout: Option<Duration>,
    /// The isolation tier commands run under: `auto` unless asked otherwise.
    pub(crate) sandbox: Sandbox,
    /// Paths commands may write beyond the workspace (build caches).
    pub(crate) writable: Vec<PathBuf>,
    /// Whether commands may use the network.
    pub(crate) network: bool,
    /// Globs of test files beyond the conventional ones.
    pub(crate) tests: Vec<String>,
    /// The verification command's words: the checks it runs are test code too
    /// ([`TestCode::with_checks_run_by`]).
    pub(crate) verification: Vec<String>,
    /// Whether the file tools may change test code.
    pub(crate) allow_test_edits: bool,
}

impl ToolboxSettings {
    /// The test code the file tools may not change: `None` when they may.
    ///
    /// # Errors
    ///
    /// A `tests` glob that is not valid.
    pub(crate) fn test_code(&self) -> Result<Option<TestCode>, TestCodeError> {
        if self.allow_test_edits {
            return Ok(None);
        }
        let globs: Vec<&str> = self.tests.iter().map(String::as_str).collect();
        Ok(Some(
            TestCode::new(&globs)?.with_checks_run_by(&self.verification),
        ))
    }

    /// What the verification loads besides the code under test: the conventions, the
    /// configuration's test globs, and what the verification command names. Judged at each
    /// passing verification whether or not the file tools may change tests.
    pub(crate) fn verification_inputs(&self) -> VerificationInputs {
        let globs: Vec<&str> = self.tests.iter().map(String::as_str).collect();
        // A glob that does not parse was refused with the configuration; the conventions
        // still hold without it.
        let tests = TestCode::new(&globs).unwrap_or_else(|_| TestCode::conventional());
        VerificationInputs::new(tests, &self.verification)
    }

    /// The command policy: the allowlist if one was given, else the blocklist.
    pub(crate) fn policy(&self) -> Policy {
        if self.allow.is_empty() {
            Policy::blocklist()
        } else {
            Policy::allowlist(self.allow.clone())
        }
    }
}

/// What the flags of a command say. `None` (or an empty list) leaves the key to the files.
#[derive(Clone, Debug, Default)]
pub(crate) struct Overrides {
    pub(crate) model: Option<String>,
    pub(crate) host: Option<String>,
    pub(crate) api: Option<String>,
    pub(crate) verify: Option<String>,
    pub(crate) allow: Vec<String>,
    pub(crate) timeout: Option<u64>,
    pub(crate) max_steps: Option<u32>,
    pub(crate) attempts: Option<u32>,
    pub(crate) max_checks: Option<u32>,
    pub(crate) command_timeout: Option<u64>,
    pub(crate) max_command_timeout: Option<u64>,
    pub(crate) sandbox: Option<Sandbox>,
    pub(crate) writable: Vec<PathBuf>,
    pub(crate) network: bool,
    pub(crate) edit_format: Option<EditFormat>,
    pub(crate) replies: Option<Replies>,
    pub(crate) allow_test_edits: bool,
}

impl Settings {
    /// The settings for the workspace `root` (canonical): the user's file, the project's
    /// file over it, `flags` over both, then the defaults.
    ///
    /// # Errors
    ///
    /// A file that cannot be read or parsed, an unknown key, a zero limit, an unknown API
    /// or a verification command that cannot be split, each named.
    pub(crate) fn resolve(root: &Path, flags: &Overrides) -> anyhow::Result<Settings> {
        let loaded = load(root)?;
        Settings::from_parts(flags, loaded)
    }

    /// The budgets of a run under these settings.
    pub(crate) fn budgets(&self) -> Budgets {
        Budgets {
            max_steps: self.max_steps,
            max_duration: self.timeout,
            max_failed_calls: self.max_failed_calls,
            max_tokens: self.max_tokens,
            head_start_chars: self.head_start_chars,
            attempts: self.attempts,
            max_verifications: self.max_checks,
            ..Budgets::default()
        }
    }

    /// The client of the configured server and model.
    ///
    /// # Errors
    ///
    /// An address that cannot be understood.
    pub(crate) fn model_client(&self) -> anyhow::Result<Client> {
        let mut config = harness_ollama::Config::new(self.api, self.model.clone());
        if let Some(host) = &self.host {
            config.host = host.clone();
        }
        config.context_length = self.context_length;
        // Steady answers suit tool calls; a rambling small model is cut off and told so.
        config.temperature = Some(self.temperature);
        config.max_output_tokens = Some(Budgets::default().answer_reserve_tokens);
        // An address that cannot be understood is a configuration error (2), not the
        // server's (3).
        Client::new(config).map_err(|error| anyhow!("{error}"))
    }

    fn from_parts(flags: &Overrides, loaded: Loaded) -> anyhow::Result<Settings> {
        let files = loaded.config;
        refuse_zero_limits(&files)?;
        let api = match flags.api.as_deref().or(files.api.as_deref()) {
            None => Api::Ollama,
            Some(name) => name.parse().map_err(|_| {
                anyhow!("unknown api {name:?} in the configuration: use \"ollama\" or \"openai\"")
            })?,
        };
        let verification = flags
            .verify
            .clone()
            .or(files.verify)
            .map(|text| Verification::parse(&text))
            .transpose()?;
        let defaults = Budgets::default();
        let allow = if flags.allow.is_empty() {
            files.allow.unwrap_or_default()
        } else {
            flags.allow.clone()
        };
        let seconds = |value: Option<u64>| value.map(Duration::from_secs);
        let sandbox = match (flags.sandbox, files.sandbox.as_deref()) {
            (Some(sandbox), _) => sandbox,
            (None, Some(name)) => name
                .parse()
                .map_err(|error| anyhow!("in the configuration: {error}"))?,
            (None, None) => Sandbox::Auto,
        };
        let edit_format = match (flags.edit_format, files.edit_format.as_deref()) {
            (Some(format), _) => format,
            (None, Some(name)) => EditFormat::parse(name).ok_or_else(|| {
                anyhow!(
                    "unknown edit_format {name:?} in the configuration: use \"auto\", \
                     \"tools\", \"whole\" or \"diff\""
                )
            })?,
            (None, None) => EditFormat::default(),
        };
        let replies = match (flags.replies, files.replies.as_deref()) {
            (Some(replies), _) => replies,
            (None, Some(name)) => Replies::parse(name).ok_or_else(|| {
                anyhow!(
                    "unknown replies {name:?} in the configuration: use \"auto\", \"native\" \
                     or \"constrained\""
                )
            })?,
            (None, None) => Replies::default(),
        };
        let mut writable = files
            .writable
            .unwrap_or_default()
            .into_iter()
            .map(|path| expand_home(&path))
            .collect::<Vec<_>>();
        writable.extend(flags.writable.iter().cloned());
        Ok(Settings {
            toolbox: ToolboxSettings {
                allow,
                deny: files.deny.unwrap_or_default(),
                command_timeout: seconds(flags.command_timeout.or(files.command_timeout)),
                max_command_timeout: seconds(flags.max_command_timeout),
                sandbox,
                writable,
                network: flags.network || files.network.unwrap_or(false),
                tests: files.tests.unwrap_or_default(),
                verification: verification
                    .as_ref()
                    .map(|verification| verification.argv().to_vec())
                    .unwrap_or_default(),
                allow_test_edits: flags.allow_test_edits || files.allow_test_edits.unwrap_or(false),
            },
            model: flags
                .model
                .clone()
                .or(files.model)
                .unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
            host: flags.host.clone().or(files.host),
            api,
            verification,
            timeout: flags
                .timeout
                .or(files.timeout)
                .map_or(defaults.max_duration, Duration::from_secs),
            max_steps: flags
                .max_steps
                .or(files.max_steps)
                .unwrap_or(defaults.max_steps),
            max_failed_calls: files.max_failed_calls.unwrap_or(defaults.max_failed_calls),
            max_tokens: files.max_tokens.or(defaults.max_tokens),
            head_start_chars: files.head_start_chars.unwrap_or(defaults.head_start_chars),
            attempts: flags
                .attempts
                .or(files.attempts)
                .unwrap_or(DEFAULT_ATTEMPTS),
            max_checks: flags
                .max_checks
                .or(files.max_checks)
                .unwrap_or(DEFAULT_MAX_CHECKS),
            context_length: files.context_length,
            temperature: files.temperature.unwrap_or(0.2),
            edit_format,
            replies,
            files: loaded.files,
        })
    }
}

/// A limit of 0 in a configuration file would end every run before its first step (or
/// every command at once): refused, naming the key. The flags cannot be 0 (clap checks).
fn refuse_zero_limits(files: &FileConfig) -> anyhow::Result<()> {
    let limits = [
        ("timeout", files.timeout),
        ("command_timeout", files.command_timeout),
        ("max_steps", files.max_steps.map(u64::from)),
        ("attempts", files.attempts.map(u64::from)),
        ("max_checks", files.max_checks.map(u64::from)),
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

/// What one configuration file may say. Every key is optional; an unknown key is an error
/// naming the file and the key, so a typo never goes unnoticed.
///
/// ```toml
/// model = "qwen2.5-coder:7b"
/// host = "http://127.0.0.1:11434"
/// api = "ollama"                      # or "openai"
/// verify = "python3 -m unittest -q"
/// allow = ["python3", "git"]          # an allowlist instead of the blocklist
/// deny = ["secrets/", "/private", "*.sqlite"] # .gitignore lines: what the tools may neither read nor write
/// timeout = 1800                      # seconds for the whole run
/// command_timeout = 60                # seconds for one command
/// max_steps = 40                      # per attempt
/// attempts = 3                        # tries at the task; each failed one is reverted first
/// max_checks = 1                      # failed checks of the verification that end an attempt
/// max_failed_calls = 5                # failed tool calls in a row that end the run
/// max_tokens = 200000                 # prompt + generated tokens; default: no limit
/// head_start_chars = 6000             # what the model is shown first; 0 turns it off
/// context_length = 16384              # tokens; default: what the server reports
/// temperature = 0.2                   # sampling; default 0.2
/// edit_format = "auto"                # or "tools", "whole", "diff": edits written into answers
/// replies = "auto"                    # or "native", "constrained": how the model replies
/// tests = ["checks/**"]               # test files beyond each ecosystem's conventions
/// allow_test_edits = false            # true lets the file tools change test code
/// # sandbox, writable and network: the user's file only, never a project's harness.toml
/// sandbox = "auto"                    # or "bwrap", "landlock", "none"
/// writable = ["~/.cargo/registry"]    # paths commands may write beyond the workspace
/// network = false                     # true lets commands use the network
/// ```
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileConfig {
    pub(crate) model: Option<String>,
    pub(crate) host: Option<String>,
    pub(crate) api: Option<String>,
    pub(crate) verify: Option<String>,
    pub(crate) allow: Option<Vec<String>>,
    pub(crate) deny: Option<Vec<String>>,
    pub(crate) timeout: Option<u64>,
    pub(crate) command_timeout: Option<u64>,
    pub(crate) max_steps: Option<u32>,
    pub(crate) attempts: Option<u32>,
    pub(crate) max_checks: Option<u32>,
    pub(crate) max_failed_calls: Option<u32>,
    pub(crate) max_tokens: Option<u64>,
    pub(crate) head_start_chars: Option<usize>,
    pub(crate) context_length: Option<u32>,
    pub(crate) temperature: Option<f64>,
    pub(crate) edit_format: Option<String>,
    pub(crate) replies: Option<String>,
    pub(crate) tests: Option<Vec<String>>,
    pub(crate) allow_test_edits: Option<bool>,
    pub(crate) sandbox: Option<String>,
    pub(crate) writable: Option<Vec<String>>,
    pub(crate) network: Option<bool>,
}

/// The configuration files that apply to a workspace, merged: the user's, then the
/// project's over it. `deny` rules add up; every other key is replaced.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Loaded {
    /// The merged settings.
    pub(crate) config: FileConfig,
    /// The files that were read, in order.
    pub(crate) files: Vec<PathBuf>,
}

/// Reads the user's file and the workspace's, where they exist.
pub(crate) fn load(workspace: &Path) -> anyhow::Result<Loaded> {
    let mut loaded = Loaded::default();
    let project = workspace.join(WORKSPACE_FILE);
    let files = [user_file(), Some(project.clone())];
    for path in files.into_iter().flatten() {
        if let Some(config) = read(&path)? {
            if path == project {
                refuse_loosening(&path, &config)?;
            }
            loaded.config = merge(loaded.config, config);
            loaded.files.push(path);
        }
    }
    Ok(loaded)
}

/// The keys that decide how commands are confined: only the user (in their own
/// configuration, or by a flag) may set them. A repository's `harness.toml` is written by
/// whoever wrote the repository, and must not lower the confinement of the commands run in it.
const CONFINEMENT_KEYS: &[&str] = &["sandbox", "writable", "network"];

/// Refuses a project file that sets one of [`CONFINEMENT_KEYS`].
fn refuse_loosening(path: &Path, config: &FileConfig) -> anyhow::Result<()> {
    let set = [
        config.sandbox.is_some(),
        config.writable.is_some(),
        config.network.is_some(),
    ];
    match CONFINEMENT_KEYS.iter().zip(set).find(|(_, set)| *set) {
        None => Ok(()),
        Some((key, _)) => Err(anyhow::anyhow!(
            "{} sets `{key}`, which a repository may not: it decides how the commands run in              it are confined. Set it in your own configuration ({}) or with the flag              `--{key}`, and remove it from the project's file",
            path.display(),
            user_file()
                .map(|file| file.display().to_string())
                .unwrap_or_else(|| "~/.config/harness/config.toml".to_owned()),
        )),
    }
}

/// `$XDG_CONFIG_HOME/harness/config.toml`, else `~/.config/harness/config.toml`.
pub(crate) fn user_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some(base.join("harness").join("config.toml"))
}

/// The configuration in `path`, or `None` when there is no such file.
fn read(path: &Path) -> anyhow::Result<Option<FileConfig>> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(error).with_context(|| format!("cannot read {}", path.display()));
        }
    };
    let config: FileConfig = toml::from_str(&text)
        .with_context(|| format!("invalid configuration file {}", path.display()))?;
    // A bad deny rule is heard of at start, naming the file and the rule, not when (or
    // whether) a workspace is built from it.
    for rule in config.deny.iter().flatten() {
        harness_sandbox::WorkspaceBuilder::check_rule(rule)
            .with_context(|| format!("invalid configuration file {}", path.display()))?;
    }
    Ok(Some(config))
}

/// `over` on top of `base`.
fn merge(base: FileConfig, over: FileConfig) -> FileConfig {
    let deny = match (base.deny, over.deny) {
        (Some(mut base), Some(over)) => {
            base.extend(over);
            Some(base)
        }
        (base, over) => over.or(base),
    };
    FileConfig {
        model: over.model.or(base.model),
        host: over.host.or(base.host),
        api: over.api.or(base.api),
        verify: over.verify.or(base.verify),
        allow: over.allow.or(base.allow),
        deny,
        timeout: over.timeout.or(base.timeout),
        command_timeout: over.command_timeout.or(base.command_timeout),
        max_steps: over.max_steps.or(base.max_steps),
        attempts: over.attempts.or(base.attempts),
        max_checks: over.max_checks.or(base.max_checks),
        max_failed_calls: over.max_failed_calls.or(base.max_failed_calls),
        max_tokens: over.max_tokens.or(base.max_tokens),
        head_start_chars: over.head_start_chars.or(base.head_start_chars),
        context_length: over.context_length.or(base.context_length),
        temperature: over.temperature.or(base.temperature),
        edit_format: over.edit_format.or(base.edit_format),
        replies: over.replies.or(base.replies),
        tests: over.tests.or(base.tests),
        allow_test_edits: over.allow_test_edits.or(base.allow_test_edits),
        sandbox: over.sandbox.or(base.sandbox),
        writable: over.writable.or(base.writable),
        network: over.network.or(base.network),
    }
}

/// `path` with a leading `~/` read as the home directory, as in a shell.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_key_names_the_file_and_the_key() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join(WORKSPACE_FILE);
        fs::write(&path, "model = \"m\"\nmodle = \"typo\"\n").unwrap();
        let error = format!("{:#}", read(&path).unwrap_err());
        assert!(error.contains(&path.display().to_string()), "{error}");
        assert!(error.contains("modle"), "{error}");
    }

    #[test]
    fn an_invalid_deny_rule_names_the_file_and_the_rule() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join(WORKSPACE_FILE);
        fs::write(&path, "deny = [\"secrets/\", \"src/[\"]\n").unwrap();
        let error = format!("{:#}", read(&path).unwrap_err());
        assert!(error.contains(&path.display().to_string()), "{error}");
        assert!(error.contains("invalid deny rule `src/[`"), "{error}");
        fs::write(
            &path,
            "deny = [\"secrets/\", \"/private\", \"!keep.txt\"]\n",
        )
        .unwrap();
        assert!(read(&path).unwrap().is_some());
    }

    #[test]
    fn a_project_file_may_not_set_how_commands_are_confined() {
        for (key, line) in [
            ("sandbox", "sandbox = \"none\"\n"),
            ("writable", "writable = [\"/\"]\n"),
            ("network", "network = true\n"),
        ] {
            let directory = tempfile::tempdir().unwrap();
            let path = directory.path().join(WORKSPACE_FILE);
            fs::write(&path, line).unwrap();
            let error = format!("{:#}", load(directory.path()).unwrap_err());
            assert!(error.contains(&path.display().to_string()), "{error}");
            assert!(error.contains(&format!("sets `{key}`")), "{error}");
            assert!(error.contains(&format!("`--{key}`")), "{error}");
        }
        let directory = tempfile::tempdir().unwrap();
        fs::write(
            directory.path().join(WORKSPACE_FILE),
            "model = \"m\"\ndeny = [\"secrets/\"]\n",
        )
        .unwrap();
        assert!(load(directory.path()).is_ok());
    }

    #[test]
    fn a_missing_file_is_no_configuration() {
        let directory = tempfile::tempdir().unwrap();
        assert_eq!(read(&directory.path().join("none.toml")).unwrap(), None);
    }

    #[test]
    fn the_project_wins_and_deny_rules_add_up() {
        let user = FileConfig {
            model: Some("user-model".into()),
            host: Some("http://user".into()),
            deny: Some(vec!["a".into()]),
            allow: Some(vec!["git".into()]),
            max_tokens: Some(1000),
            head_start_chars: Some(10),
            ..FileConfig::default()
        };
        let project = FileConfig {
            model: Some("project-model".into()),
            deny: Some(vec!["b".into()]),
            head_start_chars: Some(0),
            max_failed_calls: Some(2),
            ..FileConfig::default()
        };
        let merged = merge(user, project);
        assert_eq!(merged.model.as_deref(), Some("project-model"));
        assert_eq!(merged.host.as_deref(), Some("http://user"));
        assert_eq!(merged.deny, Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(merged.allow, Some(vec!["git".to_owned()]));
        assert_eq!(merged.max_tokens, Some(1000));
        assert_eq!(merged.head_start_chars, Some(0));
        assert_eq!(merged.max_failed_calls, Some(2));
        let only_project = merge(
            FileConfig::default(),
            FileConfig {
                deny: Some(vec!["c".into()]),
                ..FileConfig::default()
            },
        );
        assert_eq!(only_project.deny, Some(vec!["c".to_owned()]));
    }

    #[test]
    fn every_documented_key_parses() {
        let text = r#"
            model = "qwen2.5-coder:7b"
            host = "http://127.0.0.1:11434"
            api = "ollama"
            verify = "python3 -m unittest -q"
            allow = ["python3", "git"]
            deny = ["secrets/**"]
            timeout = 1800
            command_timeout = 60
            max_steps = 40
            max_failed_calls = 4
            max_tokens = 200000
            head_start_chars = 0
            context_length = 16384
            temperature = 0.1
        "#;
        let config: FileConfig = toml::from_str(text).unwrap();
        assert_eq!(config.command_timeout, Some(60));
        assert_eq!(config.context_length, Some(16384));
        assert_eq!(config.temperature, Some(0.1));
        assert_eq!(config.max_failed_calls, Some(4));
        assert_eq!(config.max_tokens, Some(200_000));
        assert_eq!(config.head_start_chars, Some(0));
        assert_eq!(config.allow.unwrap().len(), 2);
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
                "max_checks",
                FileConfig {
                    max_checks: Some(0),
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
            max_checks: Some(1),
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
    fn a_run_makes_three_attempts_unless_told_otherwise_and_the_library_one() {
        let defaults = Settings::from_parts(&Overrides::default(), Loaded::default()).unwrap();
        assert_eq!(defaults.attempts, 3);
        assert_eq!(defaults.budgets().attempts, DEFAULT_ATTEMPTS);
        assert_eq!(Budgets::default().attempts, 1);
        let files = Loaded {
            config: FileConfig {
                attempts: Some(2),
                ..FileConfig::default()
            },
            files: Vec::new(),
        };
        assert_eq!(
            Settings::from_parts(&Overrides::default(), files.clone())
                .unwrap()
                .attempts,
            2
        );
        let flags = Overrides {
            attempts: Some(1),
            ..Overrides::default()
        };
        assert_eq!(Settings::from_parts(&flags, files).unwrap().attempts, 1);
    }

    #[test]
    fn an_attempt_ends_at_its_first_failed_check_unless_told_otherwise_and_the_library_s_third() {
        let defaults = Settings::from_parts(&Overrides::default(), Loaded::default()).unwrap();
        assert_eq!(defaults.budgets().max_verifications, 1);
        assert_eq!(defaults.budgets().max_verifications, DEFAULT_MAX_CHECKS);
        assert_eq!(Budgets::default().max_verifications, 3);
        let files = Loaded {
            config: FileConfig {
                max_checks: Some(2),
                ..FileConfig::default()
            },
            files: Vec::new(),
        };
        let from_files = Settings::from_parts(&Overrides::default(), files.clone()).unwrap();
        assert_eq!(from_files.budgets().max_verifications, 2);
        let flags = Overrides {
            max_checks: Some(4),
            ..Overrides::default()
        };
        let from_flags = Settings::from_parts(&flags, files).unwrap();
        assert_eq!(from_flags.budgets().max_verifications, 4);
    }

    #[test]
    fn the_sandbox_keys_come_from_the_files_and_the_flags_win() {
        let files = Loaded {
            config: FileConfig {
                sandbox: Some("landlock".into()),
                writable: Some(vec!["~/.cargo/registry".into(), "/opt/cache".into()]),
                network: Some(true),
                ..FileConfig::default()
            },
            files: Vec::new(),
        };
        let from_files = Settings::from_parts(&Overrides::default(), files.clone()).unwrap();
        let home = PathBuf::from(std::env::var_os("HOME").expect("HOME is set in tests"));
        assert_eq!(
            (
                from_files.toolbox.sandbox,
                from_files.toolbox.writable,
                from_files.toolbox.network
            ),
            (
                Sandbox::Only(harness_exec::Tier::Landlock),
                vec![home.join(".cargo/registry"), PathBuf::from("/opt/cache")],
                true
            )
        );
        let flags = Overrides {
            sandbox: Some(Sandbox::Only(harness_exec::Tier::Bwrap)),
            writable: vec![PathBuf::from("/flag")],
            ..Overrides::default()
        };
        let from_flags = Settings::from_parts(&flags, files).unwrap();
        assert_eq!(
            from_flags.toolbox.sandbox,
            Sandbox::Only(harness_exec::Tier::Bwrap)
        );
        assert_eq!(
            from_flags.toolbox.writable.last(),
            Some(&PathBuf::from("/flag"))
        );
        let defaults = Settings::from_parts(&Overrides::default(), Loaded::default()).unwrap();
        assert_eq!(
            (defaults.toolbox.sandbox, defaults.toolbox.network),
            (Sandbox::Auto, false)
        );
        let bad = Loaded {
            config: FileConfig {
                sandbox: Some("docker".into()),
                ..FileConfig::default()
            },
            files: Vec::new(),
        };
        let error = Settings::from_parts(&Overrides::default(), bad).unwrap_err();
        assert_eq!(
            error.to_string(),
            "in the configuration: unknown sandbox \"docker\": use one of auto, bwrap, landlock, none"
        );
    }

    #[test]
    fn flags_win_over_the_files_and_only_a_flag_lowers_the_most_a_command_may_ask_for() {
        let files = Loaded {
            config: FileConfig {
                allow: Some(vec!["git".into()]),
                deny: Some(vec!["*.secret".into()]),
                command_timeout: Some(60),
                ..FileConfig::default()
            },
            files: vec![PathBuf::from("harness.toml")],
        };
        let from_files = Settings::from_parts(&Overrides::default(), files.clone()).unwrap();
        assert_eq!(
            from_files.toolbox,
            ToolboxSettings {
                allow: vec!["git".into()],
                deny: vec!["*.secret".into()],
                command_timeout: Some(Duration::from_secs(60)),
                max_command_timeout: None,
                sandbox: Sandbox::Auto,
                writable: Vec::new(),
                network: false,
                tests: Vec::new(),
                verification: Vec::new(),
                allow_test_edits: false,
            }
        );
        assert_eq!(from_files.files, [PathBuf::from("harness.toml")]);
        let flags = Overrides {
            allow: vec!["cargo".into()],
            command_timeout: Some(5),
            max_command_timeout: Some(5),
            ..Overrides::default()
        };
        let from_flags = Settings::from_parts(&flags, files).unwrap();
        assert_eq!(from_flags.toolbox.allow, ["cargo"]);
        assert_eq!(
            from_flags.toolbox.deny,
            ["*.secret"],
            "flags add no deny rules"
        );
        assert_eq!(
            from_flags.toolbox.command_timeout,
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            from_flags.toolbox.max_command_timeout,
            Some(Duration::from_secs(5))
        );
    }

    #[test]
    fn the_policy_is_the_allowlist_when_one_is_given() {
        let blocklist = ToolboxSettings::default().policy();
        assert!(blocklist.check(&["ls".to_owned()]).is_ok());
        assert!(blocklist.check(&["sudo".to_owned()]).is_err());
        let allowlist = ToolboxSettings {
            allow: vec!["python3".into()],
            ..ToolboxSettings::default()
        }
        .policy();
        assert!(allowlist.check(&["ls".to_owned()]).is_err());
        assert!(allowlist.check(&["python3".to_owned()]).is_ok());
    }
}
