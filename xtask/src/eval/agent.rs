//! The agents an evaluation runs, side by side on the same server and model: the harness
//! itself, and the peers Aider and mini-swe-agent. For each: the command line of one
//! task, what in its home directory is its own state, and how its logs are read.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which agent runs a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum AgentKind {
    /// `harness run --json`.
    Harness,
    /// Aider (PyPI `aider-chat`), with `--auto-test --test-cmd VERIFY`.
    Aider,
    /// mini-swe-agent (PyPI `mini-swe-agent`): bash only.
    MiniSweAgent,
}

impl AgentKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            AgentKind::Harness => "harness",
            AgentKind::Aider => "aider",
            AgentKind::MiniSweAgent => "mini-swe-agent",
        }
    }

    /// Paths under the job directory, relative to it, that are the agent's own state
    /// (caches, settings, history), not changes a task made outside its repository.
    pub(crate) fn own_state(self) -> Vec<PathBuf> {
        let own: &[&str] = match self {
            AgentKind::Harness => &[],
            AgentKind::Aider => &["home/.aider", "home/.cache", "home/.local"],
            AgentKind::MiniSweAgent => &["home/.config", "home/.cache", "home/.local"],
        };
        own.iter().map(PathBuf::from).collect()
    }
}

impl fmt::Display for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AgentKind {
    type Err = anyhow::Error;

    fn from_str(text: &str) -> Result<AgentKind> {
        match text {
            "harness" => Ok(AgentKind::Harness),
            "aider" => Ok(AgentKind::Aider),
            "mini-swe-agent" | "mini" => Ok(AgentKind::MiniSweAgent),
            other => Err(anyhow!(
                "unknown agent {other:?}: use harness, aider or mini-swe-agent"
            )),
        }
    }
}

/// How to run an agent: the program and the model server it talks to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AgentSpec {
    pub(crate) kind: AgentKind,
    /// The executable: the `harness` binary, or the peer's program in its virtual
    /// environment.
    pub(crate) program: PathBuf,
    /// The model, as the server names it; the harness has a default, the peers do not.
    pub(crate) model: Option<String>,
    /// `ollama` or `openai` (OpenAI-compatible).
    pub(crate) api: Option<String>,
    /// The server's base URL, without `/v1`.
    pub(crate) host: Option<String>,
    /// The most model turns.
    pub(crate) max_steps: u32,
    /// The most seconds the agent may take.
    pub(crate) timeout_seconds: u64,
    /// More flags for `harness run` (the harness only), e.g. `--attempts 2`: to compare
    /// its settings side by side.
    #[serde(default)]
    pub(crate) harness_args: Vec<String>,
}

/// Where a job's agent works and leaves its logs.
#[derive(Clone, Debug)]
pub(crate) struct Places {
    /// The repository.
    pub(crate) repo: PathBuf,
    /// The job's directory, holding the logs.
    pub(crate) job: PathBuf,
}

/// What an agent's logs say about its run; `None` where the agent does not report it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Metrics {
    pub(crate) steps: Option<u32>,
    pub(crate) tool_calls: Option<u32>,
    pub(crate) tool_errors: Option<u32>,
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) completion_tokens: Option<u64>,
    /// The agent's own verdict: the harness's outcome (`verified`, `step_limit`, …).
    pub(crate) agent_outcome: Option<String>,
}

impl AgentSpec {
    /// The command line of the agent on one task: program and arguments. The process runs
    /// in the repository.
    pub(crate) fn argv(
        &self,
        statement: &str,
        verify: &str,
        protected: &[String],
        files: &[String],
        places: &Places,
    ) -> Result<Vec<String>> {
        let mut argv = vec![self.program.display().to_string()];
        match self.kind {
            AgentKind::Harness => {
                argv.extend(["run".into(), "--json".into(), "--workspace".into()]);
                argv.push(places.repo.display().to_string());
                argv.extend(["--verify".into(), verify.to_owned()]);
                argv.extend(["--max-steps".into(), self.max_steps.to_string()]);
                argv.extend(["--timeout".into(), self.timeout_seconds.to_string()]);
                for (flag, value) in [
                    ("--model", &self.model),
                    ("--api", &self.api),
                    ("--host", &self.host),
                ] {
                    if let Some(value) = value {
                        argv.extend([flag.to_owned(), value.clone()]);
                    }
                }
                argv.extend(self.harness_args.iter().cloned());
                argv.push(statement.to_owned());
            }
            AgentKind::Aider => {
                argv.extend(["--model".into(), self.litellm_model()?]);
                if self.is_openai() {
                    argv.extend(["--openai-api-base".into(), self.openai_base()?]);
                    argv.extend(["--openai-api-key".into(), "local".into()]);
                }
                argv.extend(
                    [
                        "--yes-always",
                        "--no-auto-commits",
                        "--no-dirty-commits",
                        "--no-gitignore",
                        "--no-check-update",
                        "--no-analytics",
                        "--no-show-model-warnings",
                        "--no-pretty",
                        "--no-fancy-input",
                        "--auto-test",
                    ]
                    .map(String::from),
                );
                argv.extend(["--test-cmd".into(), verify.to_owned()]);
                argv.extend(["--message".into(), statement.to_owned()]);
                // Tests as read-only context, every other file editable: what a person
                // would add to the chat for a task this small.
                for file in protected {
                    argv.extend(["--read".into(), file.clone()]);
                }
                argv.extend(
                    files
                        .iter()
                        .filter(|file| !protected.contains(file))
                        .cloned(),
                );
            }
            AgentKind::MiniSweAgent => {
                argv.extend(["--yolo".into(), "--exit-immediately".into()]);
                argv.extend(["--model".into(), self.litellm_model()?]);
                argv.extend(["--cost-limit".into(), "0".into()]);
                argv.extend(["--config".into(), "mini.yaml".into()]);
                let base = if self.is_openai() {
                    self.openai_base()?
                } else {
                    self.host()?.trim_end_matches('/').to_owned()
                };
                argv.extend([
                    "--config".into(),
                    format!("model.model_kwargs.api_base={base}"),
                ]);
                argv.extend([
                    "--config".into(),
                    format!("agent.step_limit={}", self.max_steps),
                ]);
                argv.extend([
                    "--output".into(),
                    places.job.join("mini.traj.json").display().to_string(),
                ]);
                // It has no verification flag: the task says what checks it.
                argv.extend([
                    "--task".into(),
                    format!("{statement}\n\nThe task is done when `{verify}` exits 0."),
                ]);
            }
        }
        Ok(argv)
    }

    /// Environment variables the agent needs beyond the job's.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        let mut env = Vec::new();
        match self.kind {
            AgentKind::Harness => {}
            AgentKind::Aider | AgentKind::MiniSweAgent => {
                // A local server wants no key; litellm wants one to be set.
                env.push(("OPENAI_API_KEY".into(), "local".into()));
                if !self.is_openai()
                    && let Some(host) = &self.host
                {
                    env.push(("OLLAMA_API_BASE".into(), host.clone()));
                }
                if self.kind == AgentKind::MiniSweAgent {
                    // No first-run questions, and no price list for a local model.
                    env.push(("MSWEA_CONFIGURED".into(), "true".into()));
                    env.push(("MSWEA_COST_TRACKING".into(), "ignore_errors".into()));
                }
            }
        }
        env
    }

    /// Reads the agent's logs after its run.
    pub(crate) fn metrics(&self, places: &Places) -> Metrics {
        match self.kind {
            AgentKind::Harness => harness_metrics(
                &fs::read_to_string(places.job.join("agent.stdout")).unwrap_or_default(),
            ),
            AgentKind::Aider => aider_metrics(
                &fs::read_to_string(places.job.join("agent.stdout")).unwrap_or_default(),
            ),
            AgentKind::MiniSweAgent => mini_metrics(
                &fs::read_to_string(places.job.join("mini.traj.json")).unwrap_or_default(),
            ),
        }
    }

    fn is_openai(&self) -> bool {
        self.api.as_deref() != Some("ollama")
    }

    /// The model as litellm (under both peers) names it: `openai/M` or `ollama_chat/M`.
    fn litellm_model(&self) -> Result<String> {
        let Some(model) = &self.model else {
            bail!(
                "{} needs --model: the name the server gives the model",
                self.kind
            );
        };
        let prefix = if self.is_openai() {
            "openai"
        } else {
            "ollama_chat"
        };
        Ok(format!("{prefix}/{model}"))
    }

    fn host(&self) -> Result<&str> {
        match &self.host {
            Some(host) => Ok(host),
            None => bail!("{} needs --host: the server's address", self.kind),
        }
    }

    /// The OpenAI-compatible base URL: the host with `/v1`.
    fn openai_base(&self) -> Result<String> {
        let host = self.host()?.trim_end_matches('/');
        Ok(if host.ends_with("/v1") {
            host.to_owned()
        } else {
            format!("{host}/v1")
        })
    }
}

/// Steps, calls, errors and tokens from `harness run --json`'s events: the `finished`
/// event's report, and each `tool_finished` the model's call ended in an error (the head
/// start's, at step 0, are the harness's own and not counted).
fn harness_metrics(stdout: &str) -> Metrics {
    let mut metrics = Metrics::default();
    let mut errors = 0;
    for event in stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
    {
        match event["event"].as_str() {
            Some("tool_finished")
                if event["is_error"] == true && event["step"].as_u64() != Some(0) =>
            {
                errors += 1
            }
            Some("finished") => {
                let report = &event["report"];
                metrics.steps = report["steps"].as_u64().and_then(|n| u32::try_from(n).ok());
                metrics.tool_calls = report["tool_calls"]
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok());
                metrics.prompt_tokens = report["prompt_tokens"].as_u64();
                metrics.completion_tokens = report["completion_tokens"].as_u64();
                metrics.agent_outcome = report["outcome"].as_str().map(str::to_owned);
            }
            _ => {}
        }
    }
    if metrics.agent_outcome.is_some() {
        metrics.tool_errors = Some(errors);
    }
    metrics
}

/// Aider prints `Tokens: 2.3k sent, 120 received.` after each request: their count is its
/// steps, their sums its tokens (rounded as Aider rounds them).
fn aider_metrics(stdout: &str) -> Metrics {
    let mut metrics = Metrics::default();
    let (mut requests, mut sent, mut received) = (0, 0, 0);
    for line in stdout.lines() {
        let Some(rest) = line.trim().strip_prefix("Tokens: ") else {
            continue;
        };
        let mut parts = rest.split(", ");
        let (Some(first), Some(second)) = (parts.next(), parts.next()) else {
            continue;
        };
        let (Some(s), Some(r)) = (
            first.strip_suffix(" sent").and_then(tokens),
            second
                .trim_end_matches('.')
                .split(' ')
                .next()
                .and_then(tokens),
        ) else {
            continue;
        };
        requests += 1;
        sent += s;
        received += r;
    }
    if requests > 0 {
        metrics.steps = Some(requests);
        metrics.prompt_tokens = Some(sent);
        metrics.completion_tokens = Some(received);
    }
    metrics
}

/// `2.3k` → 2300, `120` → 120, `1.1M` → 1,100,000.
fn tokens(text: &str) -> Option<u64> {
    let (number, scale) = match text.strip_suffix('k') {
        Some(number) => (number, 1_000.0),
        None => match text.strip_suffix('M') {
            Some(number) => (number, 1_000_000.0),
            None => (text, 1.0),
        },
    };
    let value: f64 = number.replace(',', "").parse().ok()?;
    // Token counts are small non-negative numbers: the cast neither truncates nor wraps.
    (value >= 0.0).then(|| (value * scale).round() as u64)
}

/// mini-swe-agent's trajectory records its model calls in `info.model_stats.api_calls`.
fn mini_metrics(trajectory: &str) -> Metrics {
    let mut metrics = Metrics::default();
    if let Ok(value) = serde_json::from_str::<Value>(trajectory) {
        metrics.steps = value["info"]["model_stats"]["api_calls"]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok());
        metrics.agent_outcome = value["info"]["exit_status"].as_str().map(str::to_owned);
    }
    metrics
}

/// The files a peer is given: every file of the repository git knows, sorted.
pub(crate) fn tracked_files(repo: &Path) -> Result<Vec<String>> {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["ls-files", "-z"])
        .output()?;
    if !output.status.success() {
        bail!("git ls-files failed in {}", repo.display());
    }
    let mut files: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .split('\0')
        .filter(|name| !name.is_empty() && !name.starts_with('.'))
        .map(str::to_owned)
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: AgentKind, api: &str) -> AgentSpec {
        AgentSpec {
            kind,
            program: PathBuf::from("/venv/bin/prog"),
            model: Some("qwen".into()),
            api: Some(api.into()),
            host: Some("http://127.0.0.1:8080".into()),
            max_steps: 15,
            timeout_seconds: 360,
            harness_args: Vec::new(),
        }
    }

    fn places() -> Places {
        Places {
            repo: PathBuf::from("/job/repo"),
            job: PathBuf::from("/job"),
        }
    }

    fn argv(kind: AgentKind, api: &str) -> Vec<String> {
        spec(kind, api)
            .argv(
                "fix it",
                "python3 -m unittest -q",
                &["test_a.py".into()],
                &["a.py".into(), "test_a.py".into()],
                &places(),
            )
            .unwrap()
    }

    #[test]
    fn the_harness_runs_with_json_events_the_verification_and_the_budgets() {
        assert_eq!(
            argv(AgentKind::Harness, "openai"),
            [
                "/venv/bin/prog",
                "run",
                "--json",
                "--workspace",
                "/job/repo",
                "--verify",
                "python3 -m unittest -q",
                "--max-steps",
                "15",
                "--timeout",
                "360",
                "--model",
                "qwen",
                "--api",
                "openai",
                "--host",
                "http://127.0.0.1:8080",
                "fix it",
            ]
        );
        let mut defaults = spec(AgentKind::Harness, "openai");
        (defaults.model, defaults.api, defaults.host) = (None, None, None);
        let line = defaults.argv("t", "v", &[], &[], &places()).unwrap();
        assert!(
            !line
                .iter()
                .any(|arg| arg == "--model" || arg == "--api" || arg == "--host"),
            "{line:?}"
        );
        assert!(spec(AgentKind::Harness, "openai").env().is_empty());
        // Extra flags go in before the task, which stays the last word.
        defaults.harness_args = vec!["--attempts".into(), "2".into()];
        let line = defaults.argv("t", "v", &[], &[], &places()).unwrap();
        assert_eq!(line[line.len() - 3..], ["--attempts", "2", "t"]);
    }

    #[test]
    fn aider_gets_the_same_server_and_model_auto_tests_and_reads_the_tests_only() {
        assert_eq!(
            argv(AgentKind::Aider, "openai"),
            [
                "/venv/bin/prog",
                "--model",
                "openai/qwen",
                "--openai-api-base",
                "http://127.0.0.1:8080/v1",
                "--openai-api-key",
                "local",
                "--yes-always",
                "--no-auto-commits",
                "--no-dirty-commits",
                "--no-gitignore",
                "--no-check-update",
                "--no-analytics",
                "--no-show-model-warnings",
                "--no-pretty",
                "--no-fancy-input",
                "--auto-test",
                "--test-cmd",
                "python3 -m unittest -q",
                "--message",
                "fix it",
                "--read",
                "test_a.py",
                "a.py",
            ]
        );
        let ollama = argv(AgentKind::Aider, "ollama");
        assert_eq!(ollama[1..3], ["--model", "ollama_chat/qwen"]);
        assert!(
            !ollama.iter().any(|arg| arg.starts_with("--openai")),
            "{ollama:?}"
        );
        assert!(
            spec(AgentKind::Aider, "ollama")
                .env()
                .contains(&("OLLAMA_API_BASE".into(), "http://127.0.0.1:8080".into()))
        );
    }

    #[test]
    fn mini_swe_agent_runs_unattended_on_the_same_server_with_the_step_limit() {
        assert_eq!(
            argv(AgentKind::MiniSweAgent, "openai"),
            [
                "/venv/bin/prog",
                "--yolo",
                "--exit-immediately",
                "--model",
                "openai/qwen",
                "--cost-limit",
                "0",
                "--config",
                "mini.yaml",
                "--config",
                "model.model_kwargs.api_base=http://127.0.0.1:8080/v1",
                "--config",
                "agent.step_limit=15",
                "--output",
                "/job/mini.traj.json",
                "--task",
                "fix it\n\nThe task is done when `python3 -m unittest -q` exits 0.",
            ]
        );
        let env = spec(AgentKind::MiniSweAgent, "openai").env();
        assert!(
            env.contains(&("MSWEA_CONFIGURED".into(), "true".into())),
            "{env:?}"
        );
    }

    #[test]
    fn a_peer_without_a_model_or_host_is_refused_with_the_flag_to_give() {
        let mut no_model = spec(AgentKind::Aider, "openai");
        no_model.model = None;
        let error = no_model.argv("t", "v", &[], &[], &places()).unwrap_err();
        assert!(error.to_string().contains("--model"), "{error}");
        let mut no_host = spec(AgentKind::MiniSweAgent, "openai");
        no_host.host = None;
        let error = no_host.argv("t", "v", &[], &[], &places()).unwrap_err();
        assert!(error.to_string().contains("--host"), "{error}");
    }

    #[test]
    fn agents_are_named_as_on_the_command_line() {
        for kind in [
            AgentKind::Harness,
            AgentKind::Aider,
            AgentKind::MiniSweAgent,
        ] {
            assert_eq!(kind.name().parse::<AgentKind>().unwrap(), kind);
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.name());
        }
        assert!("claude".parse::<AgentKind>().is_err());
    }

    #[test]
    fn harness_events_give_steps_tokens_and_the_models_tool_errors() {
        let events = [
            r#"{"event":"run"}"#,
            r#"{"event":"tool_finished","step":0,"is_error":true}"#,
            r#"{"event":"tool_finished","step":1,"is_error":true}"#,
            r#"{"event":"tool_finished","step":2,"is_error":false}"#,
            "not json",
            r#"{"event":"finished","report":{"outcome":"verified","steps":3,"tool_calls":2,"prompt_tokens":3000,"completion_tokens":60}}"#,
        ]
        .join("\n");
        assert_eq!(
            harness_metrics(&events),
            Metrics {
                steps: Some(3),
                tool_calls: Some(2),
                tool_errors: Some(1),
                prompt_tokens: Some(3000),
                completion_tokens: Some(60),
                agent_outcome: Some("verified".into()),
            }
        );
        assert_eq!(harness_metrics("garbage"), Metrics::default());
    }

    #[test]
    fn aider_token_lines_are_summed() {
        let out = "Tokens: 2.3k sent, 120 received.\nsomething\nTokens: 1,200 sent, 1.5k received. Cost: $0.00\n";
        let metrics = aider_metrics(out);
        assert_eq!(metrics.steps, Some(2));
        assert_eq!(metrics.prompt_tokens, Some(3500));
        assert_eq!(metrics.completion_tokens, Some(1620));
        assert_eq!(aider_metrics("no tokens here"), Metrics::default());
    }

    #[test]
    fn mini_trajectories_give_the_model_calls() {
        let metrics =
            mini_metrics(r#"{"info":{"exit_status":"Submitted","model_stats":{"api_calls":7}}}"#);
        assert_eq!(metrics.steps, Some(7));
        assert_eq!(metrics.agent_outcome.as_deref(), Some("Submitted"));
        assert_eq!(mini_metrics(""), Metrics::default());
    }
}
