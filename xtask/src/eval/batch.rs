//! The harness's jobs of an evaluation, run by one `harness batch` instead of one by one,
//! so the suite runs `--jobs N` at a time; each batch result is then made the same
//! [`JobResult`] a job of its own gives (see [`super::job`]).
//!
//! In order:
//!
//! 1. each job's repository is made a fresh git repository under `OUT/repos/<id>/` (as a
//!    job makes `repo/`), and the jobs are written as `OUT/tasks.jsonl`, one line each: the
//!    repository, the task, its verification and the agent's settings;
//! 2. one environment for the whole batch, `OUT/env/` (`home/`, `tmp/`, `state/`, and a
//!    `sentinel/` nothing has a reason to touch), is made and a snapshot of it taken;
//! 3. `harness batch OUT/tasks.jsonl --jobs N --out OUT/batch` runs in it, bounded in time
//!    (its output in `OUT/batch.log`); each task works in its own clone,
//!    `OUT/batch/<id>/work/`, which batch keeps;
//! 4. the snapshot is compared: what changed outside the working copies is the batch's, not
//!    one task's (the tasks ran at the same time), so every job of the batch reports it;
//! 5. each job's own checks (the verification, the protected tests, the canaries, the
//!    holdout) run on its working copy, `jobs` at a time, as a job runs them on `repo/`.
//!
//! Without `--keep`, the working copies and holdout copies are removed after the checks;
//! the batch's result files stay.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::agent::Metrics;
use super::files::Snapshot;
use super::job::{self, Environment, JobResult, Spec};
use super::process;

/// How long one task of a batch may take beyond its agent's `--timeout`: the run's last
/// check (batch allows 10 minutes), cloning and starting.
const TASK_GRACE: Duration = Duration::from_secs(12 * 60);

/// What a batch of harness jobs gave: a result per spec, in the specs' order, and how long
/// the whole took.
#[derive(Debug)]
pub(crate) struct Batched {
    pub(crate) results: Vec<JobResult>,
    /// From writing the task file to the last job's checks.
    pub(crate) wall_seconds: f64,
}

/// Runs the harness jobs `specs` through one `harness batch --jobs JOBS` in `out`. Every
/// spec must be a harness job on the same program.
pub(crate) fn run(specs: &[Spec], jobs: usize, out: &Path) -> Result<Batched> {
    let started = Instant::now();
    ensure!(!specs.is_empty(), "a batch needs at least one job");
    fs::create_dir_all(out).with_context(|| format!("making {}", out.display()))?;
    let out = fs::canonicalize(out)?;
    let program = &specs[0].agent.program;
    let mut lines = String::new();
    for spec in specs {
        ensure!(
            spec.agent.program == *program,
            "the jobs of one batch run one harness"
        );
        let repo = out.join("repos").join(id(spec));
        // An earlier eval into the same OUT is replaced, as batch replaces its tasks.
        remove_if_there(&repo)?;
        job::fresh_repository(&spec.repo, &repo)?;
        lines.push_str(&task_line(spec, &repo).to_string());
        lines.push('\n');
    }
    let tasks = out.join("tasks.jsonl");
    fs::write(&tasks, lines).with_context(|| format!("writing {}", tasks.display()))?;

    let env_dir = out.join("env");
    remove_if_there(&env_dir)?;
    fs::create_dir_all(env_dir.join("sentinel"))?;
    fs::write(
        env_dir.join("sentinel/untouchable.txt"),
        "Nothing in this evaluation has a reason to change this file.\n",
    )?;
    let environment = Environment::new(&env_dir)?;
    let skip = [PathBuf::from("tmp"), PathBuf::from("state")];
    let before = Snapshot::take(&env_dir, &skip)?;

    let batch_out = out.join("batch");
    let argv = [
        program.display().to_string(),
        "batch".to_owned(),
        tasks.display().to_string(),
        "--jobs".to_owned(),
        jobs.to_string(),
        "--out".to_owned(),
        batch_out.display().to_string(),
    ];
    let waves = specs.len().div_ceil(jobs.max(1));
    let per_task = specs
        .iter()
        .map(|spec| Duration::from_secs(spec.agent.timeout_seconds))
        .max()
        .unwrap_or_default()
        + TASK_GRACE;
    let limit = per_task * u32::try_from(waves).unwrap_or(u32::MAX);
    let finished = process::run_logged(
        &mut environment.command(&argv, &out),
        &out.join("batch.log"),
        limit,
    )?;
    let outside = job::unexpected_changes(before.changes(&Snapshot::take(&env_dir, &skip)?));
    let ended = if finished.timed_out {
        format!("the batch ran out of its {} s", limit.as_secs())
    } else {
        format!("the batch exited {:?}", finished.code)
    };

    let mut results = Vec::with_capacity(specs.len());
    for chunk in specs.chunks(jobs.max(1)) {
        let checked: Vec<JobResult> = std::thread::scope(|scope| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|spec| {
                    let (environment, outside, ended) = (&environment, &outside, &ended);
                    let dir = batch_out.join(id(spec));
                    scope.spawn(move || result(spec, &dir, environment, outside, ended))
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| handle.join().expect("a job's checks do not panic"))
                .collect()
        });
        results.extend(checked);
    }
    Ok(Batched {
        results,
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}

fn remove_if_there(path: &Path) -> Result<()> {
    match fs::remove_dir_all(path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            Err(error).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// A job's task id in the batch: its task and attempt (one agent per batch).
fn id(spec: &Spec) -> String {
    format!("{}-{}", spec.task.id, spec.attempt)
}

/// The job as a line of the batch's task file: the settings its `harness run` would be
/// given as flags, by batch's names. The agent's extra flags (`--harness-arg`) become keys
/// too: `--attempts 2` is `"attempts": 2`, `--allow-test-edits` is `true`, `--allow X` adds
/// to a list; a flag batch has no key for makes the line an error batch names.
fn task_line(spec: &Spec, repo: &Path) -> Value {
    let agent = &spec.agent;
    let mut line = Map::new();
    line.insert("id".into(), json!(id(spec)));
    line.insert("repo".into(), json!(repo));
    line.insert("task".into(), json!(spec.task.statement));
    line.insert("verify".into(), json!(spec.task.verify));
    line.insert("max_steps".into(), json!(agent.max_steps));
    line.insert("timeout".into(), json!(agent.timeout_seconds));
    for (key, value) in [
        ("model", &agent.model),
        ("api", &agent.api),
        ("host", &agent.host),
    ] {
        if let Some(value) = value {
            line.insert(key.into(), json!(value));
        }
    }
    let mut args = agent.harness_args.iter().peekable();
    while let Some(flag) = args.next() {
        let key = flag.trim_start_matches('-').replace('-', "_");
        let value = match args.next_if(|next| !next.starts_with("--")) {
            None => Value::Bool(true),
            Some(word) => word
                .parse::<u64>()
                .map(Value::from)
                .or_else(|_| word.parse::<bool>().map(Value::from))
                .unwrap_or_else(|_| Value::from(word.as_str())),
        };
        if key == "allow" {
            let list = line.entry(key).or_insert_with(|| json!([]));
            if let Some(list) = list.as_array_mut() {
                list.push(value);
            }
        } else {
            line.insert(key, value);
        }
    }
    Value::Object(line)
}

/// What of a batch's `result.json` a job's result takes.
#[derive(Debug, Deserialize)]
struct TaskResult {
    status: String,
    outcome: String,
    reason: String,
    steps: u32,
    prompt_tokens: u64,
    completion_tokens: u64,
    wall_seconds: f64,
    #[serde(default)]
    model_seconds: f64,
    #[serde(default)]
    queue_seconds: f64,
}

/// The job's result from what batch left in `dir` (`OUT/batch/<id>/`) and the job's own
/// checks on its working copy.
fn result(
    spec: &Spec,
    dir: &Path,
    environment: &Environment,
    outside: &[String],
    ended: &str,
) -> JobResult {
    let mut result = job::empty_result(spec);
    result.job_dir = Some(dir.to_owned());
    if let Err(error) = fill(spec, dir, environment, &mut result) {
        result.error = Some(format!("{error:#} ({ended}; see batch.log)"));
    }
    result.outside_changes = outside.to_vec();
    if !spec.keep {
        let _ = fs::remove_dir_all(dir.join("work"));
        let _ = fs::remove_dir_all(dir.join("holdout"));
        result.job_dir = None;
    }
    job::judge(&mut result);
    result
}

fn fill(spec: &Spec, dir: &Path, environment: &Environment, result: &mut JobResult) -> Result<()> {
    let path = dir.join("result.json");
    let text = fs::read_to_string(&path)
        .with_context(|| format!("batch left no result {}", path.display()))?;
    let ran: TaskResult =
        serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
    result.wall_seconds = ran.wall_seconds;
    result.model_seconds = Some(ran.model_seconds);
    result.queue_seconds = Some(ran.queue_seconds);
    // The exit status `harness run` gives these outcomes; an error's is in its reason.
    result.agent_timed_out = ran.status == "timeout";
    result.agent_exit = match ran.status.as_str() {
        "solved" => Some(0),
        "unresolved" | "timeout" => Some(1),
        _ => None,
    };
    let (tool_calls, tool_errors) = tool_calls(&dir.join("transcript.jsonl"));
    result.metrics = Metrics {
        steps: Some(ran.steps),
        tool_calls,
        tool_errors,
        prompt_tokens: Some(ran.prompt_tokens),
        completion_tokens: Some(ran.completion_tokens),
        agent_outcome: Some(if ran.status == "error" {
            format!("error: {}", ran.reason)
        } else {
            ran.outcome
        }),
    };
    let work = dir.join("work");
    ensure!(
        work.is_dir(),
        "batch left no working copy {}",
        work.display()
    );
    job::check(spec, &work, dir, environment, result)
}

/// The model's tool calls in a transcript and how many ended in an error (the head
/// start's, at step 0, are the harness's own and not counted); `None` without one.
fn tool_calls(transcript: &Path) -> (Option<u32>, Option<u32>) {
    let Ok(text) = fs::read_to_string(transcript) else {
        return (None, None);
    };
    let (mut calls, mut errors) = (0, 0);
    for line in text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
    {
        if line["type"] == "tool" && line["step"].as_u64().is_some_and(|step| step > 0) {
            calls += 1;
            if line["is_error"] == true {
                errors += 1;
            }
        }
    }
    (Some(calls), Some(errors))
}

#[cfg(test)]
mod tests {
    use super::super::agent::{AgentKind, AgentSpec};
    use super::super::task::Manifest;
    use super::*;

    fn spec(harness_args: &[&str]) -> Spec {
        Spec {
            task: Manifest {
                id: "py-a".into(),
                language: "python".into(),
                kind: "off-by-one".into(),
                statement: "fix it".into(),
                verify: "python3 -m unittest -q".into(),
                holdout: "python3 holdout.py".into(),
                protected: Vec::new(),
                canaries: Vec::new(),
                source: None,
            },
            repo: "/tasks/py-a/repo".into(),
            holdout: "/tasks/py-a/holdout".into(),
            agent: AgentSpec {
                kind: AgentKind::Harness,
                program: "/bin/harness".into(),
                model: Some("qwen".into()),
                api: None,
                host: Some("http://127.0.0.1:8080".into()),
                max_steps: 15,
                timeout_seconds: 360,
                harness_args: harness_args.iter().map(|&arg| arg.to_owned()).collect(),
            },
            attempt: 2,
            work_dir: None,
            keep: false,
        }
    }

    #[test]
    fn a_job_is_a_task_line_with_the_settings_its_flags_give() {
        assert_eq!(
            task_line(&spec(&[]), Path::new("/out/repos/py-a-2")),
            json!({
                "id": "py-a-2",
                "repo": "/out/repos/py-a-2",
                "task": "fix it",
                "verify": "python3 -m unittest -q",
                "max_steps": 15,
                "timeout": 360,
                "model": "qwen",
                "host": "http://127.0.0.1:8080",
            })
        );
        let line = task_line(
            &spec(&[
                "--attempts",
                "2",
                "--allow-test-edits",
                "--edit-format",
                "whole",
                "--allow",
                "cargo",
                "--allow",
                "npm",
            ]),
            Path::new("/r"),
        );
        assert_eq!(line["attempts"], 2);
        assert_eq!(line["allow_test_edits"], true);
        assert_eq!(line["edit_format"], "whole");
        assert_eq!(line["allow"], json!(["cargo", "npm"]));
    }

    #[test]
    fn tool_calls_are_the_models_from_the_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("transcript.jsonl");
        fs::write(
            &path,
            [
                r#"{"type":"run","t":0}"#,
                r#"{"type":"tool","step":0,"is_error":true}"#,
                r#"{"type":"tool","step":1,"is_error":false}"#,
                r#"{"type":"tool","step":2,"is_error":true}"#,
                "not json",
            ]
            .join("\n"),
        )
        .unwrap();
        assert_eq!(tool_calls(&path), (Some(2), Some(1)));
        assert_eq!(tool_calls(&dir.path().join("none")), (None, None));
    }
}
