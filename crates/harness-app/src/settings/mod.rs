//! Settings: `~/.config/harness/config.toml` for the user, `harness.toml` in the workspace
//! for the project, and the flags. Flags win over both, the project's file over the user's,
//! within what a project file may choose.
//!
//! [`Settings::resolve`] is the one way settings are decided, for `harness run` and for
//! `harness tool` alike, so a call made by hand meets exactly the guards a model's call
//! meets; [`Settings::budgets`] and [`Settings::model_client`] turn them into a run's limits
//! and its model, for `harness run` and `harness mcp`'s `run_task` alike.
//!
//! # What a repository's `harness.toml` may choose
//!
//! A repository is someone else's code, and its `harness.toml` is written by whoever wrote
//! it. Following direnv's and mise's `allow`/`trust` and VS Code's workspace trust, a
//! project file chooses on its own only what cannot lower the user's protection nor send
//! the user's files anywhere; the rest applies only once the user trusts that file's exact
//! content (`harness trust`, see `crate::trust`). Decided in this order:
//!
//! 1. Always, trusted or not: `deny` (more refusals), `tests` (more protected test code),
//!    the budgets (`timeout`, `command_timeout`, `max_steps`, `attempts`, `max_checks`,
//!    `max_failed_calls`, `max_tokens`), `head_start_chars`, `quick_check`, `context_length`,
//!    `temperature`, `edit_format`, `replies` and `verify`. None of them widens what the
//!    tools or commands may reach, and none changes where anything is sent. `verify` is
//!    among them because the verification command runs exactly as every command of a run
//!    does (the same policy, isolation tier, hidden paths and environment), and the
//!    repository already decides what its tests do; its output, like every tool result,
//!    goes only to the model server the user chose.
//! 2. Always, but only as far as it narrows: `allow` replaces the user's allowlist by the
//!    programs both name (and is ignored if they share none); without a user allowlist it
//!    applies if each program it names is one the blocklist would let run, checked alone,
//!    and is a name, not a path. `sandbox` applies if it is at least as strict as the
//!    user's (bwrap, then auto, then landlock, then none).
//! 3. Only when the user trusts the content: `host`, `api` and `model` (they decide where
//!    the task, the files read and every command's output are sent: a model name picks the
//!    provider behind a gateway), `writable`, `network = true`, `allow_test_edits = true`,
//!    a weaker `sandbox` and a wider `allow`. Untrusted, each is ignored, and the run's
//!    header names it, says why, and prints the command that trusts the file.
//! 4. A `!` rule in the project's `deny` re-includes only what the project's own rules
//!    excluded, trusted or not: the project's rules are a list of their own
//!    (`WorkspaceBuilder::deny_list`), so they add refusals to the user's and the built-in
//!    ones and lift none of them. The user's file is the user's word; a repository that
//!    needs a file the user denies asks the user to change their configuration.
//!
//! The header's `config:` line says whether the project file is trusted, and its
//! `settings:` line which of flag, user, project or default each setting that matters for
//! safety or for where data goes came from.
//!
//! The files: the files read and how they merge in [`files`]; what an untrusted project
//! file may choose in [`admit`]; where each setting came from in [`origins`]; the flags in
//! [`overrides`]; what confines the tools in [`confinement`]; how replies are asked for in
//! [`replies`].

mod admit;
mod confinement;
mod files;
mod origins;
mod overrides;
mod replies;

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness_agent::{Budgets, EditFormat, Verification};
use harness_ollama::{Api, Client, DEFAULT_MODEL};

use self::admit::admit;
pub use self::admit::{Ignored, needs_trust};
pub use self::confinement::ToolboxSettings;
use self::files::merge;
pub use self::files::{FileConfig, Loaded, Project, WORKSPACE_FILE, load};
pub use self::origins::Origin;
pub use self::overrides::Overrides;
pub use self::replies::Replies;
use crate::Error;
use crate::trust::Trust;

/// The most tries at a task unless the flags or a configuration file say otherwise: a cap.
/// What decides is the run's budget: an attempt follows one that ended unverified only while
/// the time and tokens left are at least what an attempt took on average
/// ([`Budgets::attempts`]), so a run given 360 s uses them when it has not verified. A later
/// attempt opens with the first one's head start, which the model server has already
/// evaluated, so it costs its own answers. Eight, as measured on the nine tasks
/// Qwen2.5-Coder-1.5B failed in one suite run (2026-12-05, docs/data/eval/2026-12-05-h8.json):
/// eight attempts solved 3 of them (at the second, third and fifth attempt), with a median
/// wall of 187.5 s, inside the suite's 360 s; a solved task stops at its first pass, so the
/// cap costs only tasks that are not solved. (With three, the earlier default, those runs
/// stopped at 12-80 s of their 360 s.)
pub const DEFAULT_ATTEMPTS: u32 = 8;

/// Failed checks of the verification that end an attempt unless the flags or a
/// configuration file say otherwise. Measured on the task suite with Qwen2.5-Coder-1.5B
/// (2026-12-03, docs/data/eval/2026-12-03-after.json and 2026-12-03-checks1.json): ending
/// an attempt at its first failed check, so the next starts afresh, took the median wall
/// per task from 345 s to 121 s and the runs at the time limit from 8 of 16 to none, and
/// solved 7 of 16 where three checks solved 5.
/// A small model that failed a check mostly repeats itself; a fresh sample does not.
pub const DEFAULT_MAX_CHECKS: u32 = 1;

/// The settings of one command: flags over configuration files over defaults.
#[derive(Clone, Debug)]
pub struct Settings {
    /// What the model's tools may do: shared by `harness run` and `harness tool`.
    pub toolbox: ToolboxSettings,
    /// The model.
    pub model: String,
    /// The model server's address; `None` for the API's default.
    pub host: Option<String>,
    /// The model server's API.
    pub api: Api,
    /// The command that decides whether a run succeeded.
    pub verification: Option<Verification>,
    /// The longest a whole run may take.
    pub timeout: Duration,
    /// The most model turns.
    pub max_steps: u32,
    /// Failed tool calls in a row that end a run.
    pub max_failed_calls: u32,
    /// Prompt and generated tokens a run may use.
    pub max_tokens: Option<u64>,
    /// Characters of the head start shown to the model; 0 turns it off.
    pub head_start_chars: usize,
    /// Whether a quick verification runs after every step that edited a file
    /// ([`Budgets::quick_check`]).
    pub quick_check: bool,
    /// Attempts at the task, each after reverting the one before.
    pub attempts: u32,
    /// Failed checks of the verification that end an attempt.
    pub max_checks: u32,
    /// The model's context window, when the configuration sets it.
    pub context_length: Option<u32>,
    /// Sampling temperature.
    pub temperature: f64,
    /// Which edits written into an answer, instead of a tool call, are applied.
    pub edit_format: EditFormat,
    /// How the model is asked to reply.
    pub replies: Replies,
    /// The configuration files that were read, in order.
    pub files: Vec<PathBuf>,
    /// The project's file and whether the user trusts its content, when there is one.
    pub project: Option<(PathBuf, Trust)>,
    /// Where each setting that matters for safety or for where data goes came from.
    pub origins: Vec<Origin>,
    /// What the project's file set that was not applied, because it is not trusted.
    pub ignored: Vec<Ignored>,
}

impl Settings {
    /// The settings for the workspace `root` (canonical): the user's file, the project's
    /// file over it, `flags` over both, then the defaults.
    ///
    /// # Errors
    ///
    /// A file that cannot be read or parsed, an unknown key, a zero limit, an unknown API
    /// or a verification command that cannot be split, each named.
    pub fn resolve(root: &Path, flags: &Overrides) -> Result<Settings, Error> {
        let loaded = load(root)?;
        Settings::from_parts(flags, loaded)
    }

    /// The budgets of a run under these settings.
    pub fn budgets(&self) -> Budgets {
        Budgets {
            max_steps: self.max_steps,
            max_duration: self.timeout,
            max_failed_calls: self.max_failed_calls,
            max_tokens: self.max_tokens,
            head_start_chars: self.head_start_chars,
            quick_check: self.quick_check.then_some(Budgets::QUICK_CHECK),
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
    pub fn model_client(&self) -> Result<Client, Error> {
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
        Client::new(config).map_err(|error| Error::ModelAddress {
            message: error.to_string(),
        })
    }

    /// The files read, the project's marked with whether its content is trusted; `none`
    /// without any.
    pub fn files_line(&self) -> String {
        if self.files.is_empty() {
            return "none".to_owned();
        }
        let files: Vec<String> = self
            .files
            .iter()
            .map(|file| match &self.project {
                Some((path, trust)) if path == file => {
                    format!("{} ({})", file.display(), trust.describe())
                }
                _ => file.display().to_string(),
            })
            .collect();
        files.join(", ")
    }

    /// Where each setting that matters for safety or for where data goes came from:
    /// `host: user, model: project, ...`.
    pub fn origins_line(&self) -> String {
        let origins: Vec<String> = self
            .origins
            .iter()
            .map(|origin| format!("{}: {}", origin.key, origin.from))
            .collect();
        origins.join(", ")
    }

    /// One line per ignored setting of the project's file: what it said, why it was
    /// ignored, and the command that trusts the file, ready to paste: `command` writes a
    /// command line of the front end from its arguments (`trust --workspace DIR`).
    pub fn ignored_lines(&self, command: impl Fn(&str) -> String) -> Vec<String> {
        let Some((path, trust)) = &self.project else {
            return Vec::new();
        };
        let root = path.parent().unwrap_or(path);
        self.ignored
            .iter()
            .map(|ignored| {
                format!(
                    "{} = {} in {}: ignored, as {}, and the file is {}. If you trust its \
                     content: {}",
                    ignored.key,
                    ignored.value,
                    path.display(),
                    ignored.why,
                    trust.describe(),
                    command(&format!(
                        "trust --workspace {}",
                        crate::quote(&root.display().to_string())
                    ))
                )
            })
            .collect()
    }

    pub(crate) fn from_parts(flags: &Overrides, loaded: Loaded) -> Result<Settings, Error> {
        let user = loaded.user;
        let (admitted, ignored, project_deny, project) = match loaded.project {
            Some(project) => {
                let (admitted, ignored) = admit(&project, &user)?;
                let deny = project.config.deny.clone().unwrap_or_default();
                (admitted, ignored, deny, Some((project.path, project.trust)))
            }
            None => (FileConfig::default(), Vec::new(), Vec::new(), None),
        };
        let origins = origins::origins(flags, &user, &admitted, &project_deny);
        let files = merge(user, admitted);
        refuse_zero_limits(&files)?;
        // In this order, so that of two bad values the same one is named as before.
        let api = api(flags, &files)?;
        let verification = flags
            .verify
            .clone()
            .or_else(|| files.verify.clone())
            .map(|text| Verification::parse(&text))
            .transpose()?;
        let toolbox = ToolboxSettings::from_parts(flags, &files, project_deny, &verification)?;
        let edit_format = edit_format(flags, &files)?;
        let replies = replies(flags, &files)?;
        let defaults = Budgets::default();
        Ok(Settings {
            toolbox,
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
            quick_check: files.quick_check.unwrap_or(true),
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
            project,
            origins,
            ignored,
        })
    }
}

/// The model server's API: the flag's, else the files', else Ollama's.
fn api(flags: &Overrides, files: &FileConfig) -> Result<Api, Error> {
    match flags.api.as_deref().or(files.api.as_deref()) {
        None => Ok(Api::Ollama),
        Some(name) => name.parse().map_err(|_| Error::UnknownApi {
            name: name.to_owned(),
        }),
    }
}

/// Which edits written into an answer are applied: the flag's, else the files', else auto.
fn edit_format(flags: &Overrides, files: &FileConfig) -> Result<EditFormat, Error> {
    match (flags.edit_format, files.edit_format.as_deref()) {
        (Some(format), _) => Ok(format),
        (None, Some(name)) => EditFormat::parse(name).ok_or_else(|| Error::UnknownEditFormat {
            name: name.to_owned(),
        }),
        (None, None) => Ok(EditFormat::default()),
    }
}

/// How the model is asked to reply: the flag's, else the files', else auto.
fn replies(flags: &Overrides, files: &FileConfig) -> Result<Replies, Error> {
    match (flags.replies, files.replies.as_deref()) {
        (Some(replies), _) => Ok(replies),
        (None, Some(name)) => Replies::parse(name).ok_or_else(|| Error::UnknownReplies {
            name: name.to_owned(),
        }),
        (None, None) => Ok(Replies::default()),
    }
}

/// A limit of 0 in a configuration file would end every run before its first step (or
/// every command at once): refused, naming the key. The flags cannot be 0 (clap checks).
fn refuse_zero_limits(files: &FileConfig) -> Result<(), Error> {
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
        Some((key, _)) => Err(Error::ZeroLimit { key }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use harness_exec::Sandbox;

    use super::files::read;
    use super::*;
    use crate::trust;

    /// The error and its sources, as the `harness` command prints them (`anyhow`'s `{:#}`).
    fn chain(error: &dyn std::error::Error) -> String {
        let mut text = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    }

    #[test]
    fn an_unknown_key_names_the_file_and_the_key() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join(WORKSPACE_FILE);
        fs::write(&path, "model = \"m\"\nmodle = \"typo\"\n").unwrap();
        let error = chain(&read(&path).unwrap_err());
        assert!(error.contains(&path.display().to_string()), "{error}");
        assert!(error.contains("modle"), "{error}");
    }

    #[test]
    fn an_invalid_deny_rule_names_the_file_and_the_rule() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join(WORKSPACE_FILE);
        fs::write(&path, "deny = [\"secrets/\", \"src/[\"]\n").unwrap();
        let error = chain(&read(&path).unwrap_err());
        assert!(error.contains(&path.display().to_string()), "{error}");
        assert!(error.contains("invalid deny rule `src/[`"), "{error}");
        fs::write(
            &path,
            "deny = [\"secrets/\", \"/private\", \"!keep.txt\"]\n",
        )
        .unwrap();
        assert!(read(&path).unwrap().is_some());
    }

    /// A project file with `text`, trusted or not, over the user's `user`.
    fn resolved(user: &str, text: &str, trust: Trust) -> Settings {
        let loaded = Loaded {
            user: toml::from_str(user).unwrap(),
            project: Some(Project {
                path: PathBuf::from("/w/harness.toml"),
                config: toml::from_str(text).unwrap(),
                trust,
                sha256: trust::digest(text.as_bytes()),
            }),
            files: vec![PathBuf::from("/w/harness.toml")],
        };
        Settings::from_parts(&Overrides::default(), loaded).unwrap()
    }

    fn ignored_keys(settings: &Settings) -> Vec<&'static str> {
        settings.ignored.iter().map(|ignored| ignored.key).collect()
    }

    #[test]
    fn an_untrusted_project_file_cannot_widen_access_nor_send_data_elsewhere() {
        let user = "host = \"http://mine\"\nmodel = \"mine\"\nsandbox = \"bwrap\"\n";
        let project = "host = \"http://theirs\"\napi = \"openai\"\nmodel = \"theirs\"\n\
                       writable = [\"/\"]\nnetwork = true\nallow_test_edits = true\n\
                       sandbox = \"none\"\nallow = [\"sudo\"]\nverify = \"true\"\n\
                       max_steps = 3\ntests = [\"checks/**\"]\n";
        for trust in [Trust::Untrusted, Trust::Changed] {
            let settings = resolved(user, project, trust);
            assert_eq!(
                ignored_keys(&settings),
                [
                    "host",
                    "api",
                    "model",
                    "writable",
                    "network",
                    "allow_test_edits",
                    "sandbox",
                    "allow"
                ]
            );
            assert_eq!(settings.host.as_deref(), Some("http://mine"));
            assert_eq!(settings.api, Api::Ollama);
            assert_eq!(settings.model, "mine");
            assert!(settings.toolbox.writable.is_empty());
            assert!(!settings.toolbox.network);
            assert!(!settings.toolbox.allow_test_edits);
            assert_eq!(
                settings.toolbox.sandbox,
                Sandbox::Only(harness_exec::Tier::Bwrap)
            );
            assert!(settings.toolbox.allow.is_empty(), "the blocklist stays");
            // What only narrows, and the verification command, apply.
            assert_eq!(settings.max_steps, 3);
            assert_eq!(settings.toolbox.tests, ["checks/**"]);
            assert_eq!(
                settings.verification.as_ref().map(Verification::command),
                Some("true")
            );
            let lines = settings.ignored_lines(|rest| format!("harness {rest}"));
            assert_eq!(lines.len(), 8);
            assert!(
                lines[0].starts_with("host = \"http://theirs\" in /w/harness.toml: ignored"),
                "{}",
                lines[0]
            );
            assert!(
                lines
                    .iter()
                    .all(|line| line.ends_with("harness trust --workspace /w")),
                "{lines:?}"
            );
        }
        let trusted = resolved(user, project, Trust::Trusted);
        assert!(trusted.ignored.is_empty());
        assert_eq!(trusted.host.as_deref(), Some("http://theirs"));
        assert_eq!(trusted.model, "theirs");
        assert_eq!(trusted.toolbox.writable, [PathBuf::from("/")]);
        assert!(trusted.toolbox.network && trusted.toolbox.allow_test_edits);
        assert_eq!(
            trusted.toolbox.sandbox,
            Sandbox::Only(harness_exec::Tier::None)
        );
        assert_eq!(trusted.toolbox.allow, ["sudo"]);
        let origin = |settings: &Settings, key: &str| {
            settings
                .origins
                .iter()
                .find(|origin| origin.key == key)
                .map(|origin| origin.from.clone())
                .unwrap()
        };
        let untrusted = resolved(user, project, Trust::Untrusted);
        assert_eq!(origin(&untrusted, "host"), "user");
        assert_eq!(origin(&untrusted, "verify"), "project");
        assert_eq!(origin(&untrusted, "network"), "default");
        assert_eq!(origin(&trusted, "host"), "project");
        assert_eq!(untrusted.files_line(), "/w/harness.toml (untrusted)");
        assert_eq!(
            resolved(user, project, Trust::Changed).files_line(),
            "/w/harness.toml (untrusted: changed since you trusted it)"
        );
        assert_eq!(trusted.files_line(), "/w/harness.toml (trusted)");
    }

    /// The claim "a repository's `harness.toml` cannot set `sandbox`, `writable` or
    /// `network`": not without the user's trust of its content, however it spells them.
    #[test]
    fn a_project_file_may_not_set_how_commands_are_confined() {
        for (key, line) in [
            ("sandbox", "sandbox = \"none\"\n"),
            ("sandbox", "sandbox = \"landlock\"\n"),
            ("writable", "writable = [\"/\"]\n"),
            ("writable", "writable = [\"~\", \"/tmp\"]\n"),
            ("network", "network = true\n"),
        ] {
            for trust in [Trust::Untrusted, Trust::Changed] {
                let settings = resolved("", line, trust);
                assert_eq!(ignored_keys(&settings), [key], "{line}");
                assert_eq!(settings.toolbox.sandbox, Sandbox::Auto, "{line}");
                assert!(settings.toolbox.writable.is_empty(), "{line}");
                assert!(!settings.toolbox.network, "{line}");
            }
            let trusted = resolved("", line, Trust::Trusted);
            assert!(trusted.ignored.is_empty(), "{line}");
        }
    }

    #[test]
    fn an_untrusted_project_file_may_narrow() {
        // A stricter sandbox, or the same.
        for (yours, theirs, applies) in [
            ("auto", "bwrap", true),
            ("auto", "auto", true),
            ("auto", "landlock", false),
            ("landlock", "auto", true),
            ("landlock", "none", false),
            ("none", "landlock", true),
            ("bwrap", "auto", false),
        ] {
            let settings = resolved(
                &format!("sandbox = \"{yours}\"\n"),
                &format!("sandbox = \"{theirs}\"\n"),
                Trust::Untrusted,
            );
            assert_eq!(
                settings.toolbox.sandbox.to_string() == theirs,
                applies,
                "{yours} then {theirs}"
            );
            assert_eq!(
                settings.ignored.is_empty(),
                applies,
                "{yours} then {theirs}"
            );
        }
        // An allowlist: within yours, or within what the blocklist lets run.
        let within = resolved(
            "allow = [\"python3\", \"git\"]\n",
            "allow = [\"git\", \"curl\"]\n",
            Trust::Untrusted,
        );
        assert_eq!(within.toolbox.allow, ["git"]);
        let none_shared = resolved(
            "allow = [\"python3\"]\n",
            "allow = [\"curl\"]\n",
            Trust::Untrusted,
        );
        assert_eq!(none_shared.toolbox.allow, ["python3"]);
        assert_eq!(ignored_keys(&none_shared), ["allow"]);
        let narrower = resolved("", "allow = [\"python3\", \"git\"]\n", Trust::Untrusted);
        assert_eq!(narrower.toolbox.allow, ["python3", "git"]);
        for wider in [
            "[\"git\", \"sudo\"]",
            "[\"./tools/run\"]",
            "[\"/usr/bin/git\"]",
        ] {
            let settings = resolved("", &format!("allow = {wider}\n"), Trust::Untrusted);
            assert!(settings.toolbox.allow.is_empty(), "{wider}");
            assert_eq!(ignored_keys(&settings), ["allow"], "{wider}");
        }
        // `false` and nothing widen nothing.
        let off = resolved(
            "",
            "network = false\nallow_test_edits = false\nwritable = []\n",
            Trust::Untrusted,
        );
        assert!(off.ignored.is_empty());
        // A sandbox that is no tier is an error, applied or not.
        let loaded = Loaded {
            project: Some(Project {
                path: PathBuf::from("/w/harness.toml"),
                config: toml::from_str("sandbox = \"docker\"\n").unwrap(),
                trust: Trust::Untrusted,
                sha256: String::new(),
            }),
            ..Loaded::default()
        };
        let error = Settings::from_parts(&Overrides::default(), loaded).unwrap_err();
        assert!(
            error.to_string().contains("unknown sandbox \"docker\""),
            "{error}"
        );
    }

    #[test]
    fn the_project_s_deny_rules_are_a_list_of_their_own_trusted_or_not() {
        for trust in [Trust::Untrusted, Trust::Trusted] {
            let settings = resolved(
                "deny = [\"*.sqlite\"]\n",
                "deny = [\"!*.sqlite\", \"build/\"]\n",
                trust,
            );
            assert_eq!(settings.toolbox.deny, ["*.sqlite"]);
            assert_eq!(settings.toolbox.project_deny, ["!*.sqlite", "build/"]);
        }
    }

    #[test]
    fn a_missing_file_is_no_configuration() {
        let directory = tempfile::tempdir().unwrap();
        assert_eq!(read(&directory.path().join("none.toml")).unwrap(), None);
    }

    #[test]
    fn the_project_wins_and_keeps_its_deny_rules_apart() {
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
        assert_eq!(
            merged.deny,
            Some(vec!["a".to_owned()]),
            "the project's deny rules are a list of their own"
        );
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
        assert_eq!(only_project.deny, None);
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
    fn a_quick_check_after_each_edit_is_on_unless_a_file_turns_it_off() {
        let defaults = Settings::from_parts(&Overrides::default(), Loaded::default()).unwrap();
        assert_eq!(defaults.budgets().quick_check, Some(Budgets::QUICK_CHECK));
        let config: FileConfig = toml::from_str("quick_check = false").unwrap();
        let files = Loaded {
            user: config,
            ..Loaded::default()
        };
        let off = Settings::from_parts(&Overrides::default(), files).unwrap();
        assert_eq!(off.budgets().quick_check, None);
    }

    #[test]
    fn a_run_makes_up_to_eight_attempts_unless_told_otherwise_and_the_library_one() {
        let defaults = Settings::from_parts(&Overrides::default(), Loaded::default()).unwrap();
        assert_eq!(defaults.attempts, 8);
        assert_eq!(defaults.budgets().attempts, DEFAULT_ATTEMPTS);
        assert_eq!(Budgets::default().attempts, 1);
        let files = Loaded {
            user: FileConfig {
                attempts: Some(2),
                ..FileConfig::default()
            },
            ..Loaded::default()
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
            user: FileConfig {
                max_checks: Some(2),
                ..FileConfig::default()
            },
            ..Loaded::default()
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
            user: FileConfig {
                sandbox: Some("landlock".into()),
                writable: Some(vec!["~/.cargo/registry".into(), "/opt/cache".into()]),
                network: Some(true),
                ..FileConfig::default()
            },
            ..Loaded::default()
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
            user: FileConfig {
                sandbox: Some("docker".into()),
                ..FileConfig::default()
            },
            ..Loaded::default()
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
            user: FileConfig {
                allow: Some(vec!["git".into()]),
                deny: Some(vec!["*.secret".into()]),
                command_timeout: Some(60),
                ..FileConfig::default()
            },
            files: vec![PathBuf::from("harness.toml")],
            ..Loaded::default()
        };
        let from_files = Settings::from_parts(&Overrides::default(), files.clone()).unwrap();
        assert_eq!(
            from_files.toolbox,
            ToolboxSettings {
                allow: vec!["git".into()],
                deny: vec!["*.secret".into()],
                project_deny: Vec::new(),
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
