//! The configuration files: the user's and the project's, each read once (the bytes hashed
//! for the trust are the bytes parsed), and how one merges over the other.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::Error;
use crate::paths;
use crate::trust::{self, Trust};

/// The name of the project's configuration file, at the workspace root.
pub const WORKSPACE_FILE: &str = "harness.toml";

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
/// quick_check = true                  # a check taking up to 3 s runs after each editing step
/// context_length = 16384              # tokens; default: what the server reports
/// temperature = 0.2                   # sampling; default 0.2
/// edit_format = "auto"                # or "tools", "whole", "diff": edits written into answers
/// replies = "auto"                    # or "native", "constrained": how the model replies
/// tests = ["checks/**"]               # test files beyond each ecosystem's conventions
/// allow_test_edits = false            # true lets the file tools change test code
/// # host, api, model, writable, network, allow_test_edits and a weaker sandbox or wider
/// # allow: in a project's harness.toml, only once you trust it (`harness trust`)
/// sandbox = "auto"                    # or "bwrap", "landlock", "none"
/// writable = ["~/.cargo/registry"]    # paths commands may write beyond the workspace
/// network = false                     # true lets commands use the network
/// ```
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)] // Each field is the key of the same name, as the example shows.
pub struct FileConfig {
    pub model: Option<String>,
    pub host: Option<String>,
    pub api: Option<String>,
    pub verify: Option<String>,
    pub allow: Option<Vec<String>>,
    pub deny: Option<Vec<String>>,
    pub timeout: Option<u64>,
    pub command_timeout: Option<u64>,
    pub max_steps: Option<u32>,
    pub attempts: Option<u32>,
    pub max_checks: Option<u32>,
    pub max_failed_calls: Option<u32>,
    pub max_tokens: Option<u64>,
    pub head_start_chars: Option<usize>,
    pub quick_check: Option<bool>,
    pub context_length: Option<u32>,
    pub temperature: Option<f64>,
    pub edit_format: Option<String>,
    pub replies: Option<String>,
    pub tests: Option<Vec<String>>,
    pub allow_test_edits: Option<bool>,
    pub sandbox: Option<String>,
    pub writable: Option<Vec<String>>,
    pub network: Option<bool>,
}

/// The configuration files that apply to a workspace: the user's and the project's, each
/// as written; [`Settings::resolve`] decides what of the project's applies.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Loaded {
    /// The user's settings; all `None` without a file.
    pub user: FileConfig,
    /// The project's file, when there is one.
    pub project: Option<Project>,
    /// The files that were read, in order.
    pub files: Vec<PathBuf>,
}

/// A project's `harness.toml`, as written, and whether the user trusts its content.
#[derive(Clone, Debug, PartialEq)]
pub struct Project {
    /// Where it is.
    pub path: PathBuf,
    /// What it says.
    pub config: FileConfig,
    /// Whether the user trusts exactly these bytes in this workspace.
    pub trust: Trust,
    /// The sha256 of the bytes read, which `harness trust` records.
    pub sha256: String,
}

/// Reads the user's file and the workspace's, where they exist.
pub fn load(workspace: &Path) -> Result<Loaded, Error> {
    let mut loaded = Loaded::default();
    if let Some(path) = paths::user_file()
        && let Some((config, _)) = read(&path)?
    {
        loaded.user = config;
        loaded.files.push(path);
    }
    let path = workspace.join(WORKSPACE_FILE);
    if let Some((config, sha256)) = read(&path)? {
        let trust = trust::state(workspace, &sha256)?;
        loaded.files.push(path.clone());
        loaded.project = Some(Project {
            path,
            config,
            trust,
            sha256,
        });
    }
    Ok(loaded)
}

/// The configuration in `path` and the sha256 of the bytes it was parsed from, or `None`
/// when there is no such file. The file is read once: the bytes hashed are the bytes parsed.
pub(super) fn read(path: &Path) -> Result<Option<(FileConfig, String)>, Error> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(Error::Read {
                path: path.to_owned(),
                source: error,
            });
        }
    };
    let sha256 = trust::digest(&bytes);
    let text = String::from_utf8(bytes).map_err(|source| Error::ConfigNotUtf8 {
        path: path.to_owned(),
        source,
    })?;
    let invalid = |source: Box<dyn std::error::Error + Send + Sync>| Error::ConfigFile {
        path: path.to_owned(),
        source,
    };
    let config: FileConfig = toml::from_str(&text).map_err(|error| invalid(error.into()))?;
    // A bad deny rule is heard of at start, naming the file and the rule, not when (or
    // whether) a workspace is built from it.
    for rule in config.deny.iter().flatten() {
        harness_sandbox::WorkspaceBuilder::check_rule(rule)
            .map_err(|error| invalid(error.into()))?;
    }
    Ok(Some((config, sha256)))
}

/// `over` on top of `base`, but for `deny`, which is `base`'s: the project's deny rules
/// are a list of their own ([`ToolboxSettings::project_deny`]).
pub(super) fn merge(base: FileConfig, over: FileConfig) -> FileConfig {
    FileConfig {
        model: over.model.or(base.model),
        host: over.host.or(base.host),
        api: over.api.or(base.api),
        verify: over.verify.or(base.verify),
        allow: over.allow.or(base.allow),
        deny: base.deny,
        timeout: over.timeout.or(base.timeout),
        command_timeout: over.command_timeout.or(base.command_timeout),
        max_steps: over.max_steps.or(base.max_steps),
        attempts: over.attempts.or(base.attempts),
        max_checks: over.max_checks.or(base.max_checks),
        max_failed_calls: over.max_failed_calls.or(base.max_failed_calls),
        max_tokens: over.max_tokens.or(base.max_tokens),
        head_start_chars: over.head_start_chars.or(base.head_start_chars),
        quick_check: over.quick_check.or(base.quick_check),
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
pub(super) fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}
