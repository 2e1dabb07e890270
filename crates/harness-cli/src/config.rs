//! Configuration files: `~/.config/harness/config.toml` for the user, `harness.toml` in the
//! workspace for the project. Flags win over both, the project's file over the user's.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

/// The name of the project's configuration file, at the workspace root.
pub(crate) const WORKSPACE_FILE: &str = "harness.toml";

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
/// max_steps = 40
/// max_failed_calls = 5                # failed tool calls in a row that end the run
/// max_tokens = 200000                 # prompt + generated tokens; default: no limit
/// head_start_chars = 6000             # what the model is shown first; 0 turns it off
/// context_length = 16384              # tokens; default: what the server reports
/// temperature = 0.2                   # sampling; default 0.2
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
    pub(crate) max_failed_calls: Option<u32>,
    pub(crate) max_tokens: Option<u64>,
    pub(crate) head_start_chars: Option<usize>,
    pub(crate) context_length: Option<u32>,
    pub(crate) temperature: Option<f64>,
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
    let files = [user_file(), Some(workspace.join(WORKSPACE_FILE))];
    for path in files.into_iter().flatten() {
        if let Some(config) = read(&path)? {
            loaded.config = merge(loaded.config, config);
            loaded.files.push(path);
        }
    }
    Ok(loaded)
}

/// `$XDG_CONFIG_HOME/harness/config.toml`, else `~/.config/harness/config.toml`.
fn user_file() -> Option<PathBuf> {
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
        max_failed_calls: over.max_failed_calls.or(base.max_failed_calls),
        max_tokens: over.max_tokens.or(base.max_tokens),
        head_start_chars: over.head_start_chars.or(base.head_start_chars),
        context_length: over.context_length.or(base.context_length),
        temperature: over.temperature.or(base.temperature),
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
}
