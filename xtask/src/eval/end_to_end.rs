//! The evaluation end to end: the real `harness` binary against a scripted model server
//! (a stub Ollama), on tasks of the suite. A correct fix is solved; a "fix" that edits the
//! test passes the verification but is not solved; a hard-coded answer passes the
//! verification and fails the holdout.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use harness_stub_server::{Reply, StubServer};
use serde_json::{Value, json};

use super::agent::{AgentKind, AgentSpec};
use super::job::{self, JobResult, Spec};
use super::task::Task;
use super::workspace_root;

/// One scripted answer of the model: tool calls, or text that says it is done.
enum Turn {
    Call(&'static str, Value),
    Done(&'static str),
}

impl Turn {
    /// The answer as Ollama streams it: newline-delimited JSON.
    fn ndjson(&self) -> String {
        let message = match self {
            Turn::Call(name, arguments) => json!({
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": name, "arguments": arguments}}],
            }),
            Turn::Done(text) => json!({"role": "assistant", "content": text}),
        };
        let first = json!({"model": "stub", "message": message, "done": false});
        let last = json!({
            "model": "stub",
            "message": {"role": "assistant", "content": ""},
            "done": true,
            "done_reason": "stop",
            "prompt_eval_count": 1000,
            "eval_count": 20,
        });
        format!("{first}\n{last}\n")
    }
}

/// A stub Ollama: a model with a 32,768-token context, answering chats from a script.
fn scripted_model(turns: &[Turn]) -> StubServer {
    let server = StubServer::start().expect("a stub server");
    let show = json!({
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
        "capabilities": ["completion", "tools"],
    });
    server.reply_always("POST", "/api/show", Reply::json(200, show.to_string()));
    for turn in turns {
        server.reply("POST", "/api/chat", Reply::ndjson(turn.ndjson()));
    }
    server
}

/// The `harness` binary: `HARNESS_BIN` if set; else the one this test run built beside
/// this test (`cargo test --workspace` builds it for harness-cli's tests), if no source is
/// newer; else built now. Building it here when the run has built it already would build
/// it again with this package's features, and replace the binary other tests are running.
fn harness() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            if let Some(path) = std::env::var_os("HARNESS_BIN") {
                return PathBuf::from(path);
            }
            let exe = std::env::current_exe().expect("the test knows its path");
            match exe
                .parent()
                .and_then(Path::parent)
                .map(|dir| dir.join("harness"))
            {
                Some(built) if is_newer_than_the_sources(&built) => built,
                _ => super::build_harness().expect("harness builds"),
            }
        })
        .clone()
}

/// True if and only if `binary` exists and no file of the crates or `Cargo.lock` was
/// changed after it.
fn is_newer_than_the_sources(binary: &Path) -> bool {
    fn newest(path: &Path) -> std::time::SystemTime {
        let Ok(metadata) = fs::symlink_metadata(path) else {
            return std::time::SystemTime::UNIX_EPOCH;
        };
        let own = metadata
            .modified()
            .unwrap_or(std::time::SystemTime::UNIX_EPOCH);
        if !metadata.is_dir() {
            return own;
        }
        fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| newest(&entry.path()))
            .fold(own, std::cmp::max)
    }
    let Ok(built) = fs::metadata(binary).and_then(|metadata| metadata.modified()) else {
        return false;
    };
    let root = workspace_root();
    built >= newest(&root.join("crates")).max(newest(&root.join("Cargo.lock")))
}

fn task(id: &str) -> Task {
    Task::load(&workspace_root().join("fixtures/tasks").join(id)).expect("the task loads")
}

fn solution(id: &str, variant: &str, file: &str) -> String {
    let path = workspace_root()
        .join("fixtures/tasks-solutions")
        .join(id)
        .join(variant)
        .join(file);
    fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn harness_agent(host: &str) -> AgentSpec {
    AgentSpec {
        kind: AgentKind::Harness,
        program: harness(),
        model: Some("stub".into()),
        api: Some("ollama".into()),
        host: Some(host.to_owned()),
        max_steps: 6,
        timeout_seconds: 120,
        harness_args: Vec::new(),
    }
}

fn run_job(id: &str, turns: &[Turn]) -> JobResult {
    run_job_with(id, turns, &[])
}

/// [`run_job`] with flags of the harness's own (`harness_args`).
fn run_job_with(id: &str, turns: &[Turn], harness_args: &[&str]) -> JobResult {
    let model = scripted_model(turns);
    let mut agent = harness_agent(&model.url());
    agent.harness_args = harness_args.iter().map(|&arg| arg.to_owned()).collect();
    let spec = Spec::new(&task(id), agent, 1);
    // Through JSON and back, as a job handed to another process would be.
    let spec: Spec = serde_json::from_str(&serde_json::to_string(&spec).unwrap()).unwrap();
    // Through `harness batch`, as `eval` runs the harness's jobs.
    let out = tempfile::tempdir().unwrap();
    let batched = super::batch::run(std::slice::from_ref(&spec), 1, out.path()).unwrap();
    let [result] = <[JobResult; 1]>::try_from(batched.results).unwrap();
    assert_eq!(result.error, None, "{result:#?}");
    assert!(
        out.path().join("batch/results.jsonl").is_file(),
        "the job ran through batch"
    );
    result
}

/// Writes a whole file through the harness's file tool.
fn write(path: &'static str, content: String) -> Turn {
    let content: &'static str = content.leak();
    Turn::Call(
        "write_file",
        json!({"path": path, "content": content, "overwrite": true}),
    )
}

#[test]
fn a_correct_fix_is_solved_with_the_runs_steps_and_tokens() {
    let result = run_job(
        "py-paginate",
        &[
            Turn::Call("read_file", json!({"path": "pages.py"})),
            Turn::Call("read_file", json!({"path": "no_such_file.py"})),
            // The check after this edit passes: the run ends there, with no turn to say
            // it is done.
            write("pages.py", solution("py-paginate", "fix", "pages.py")),
        ],
    );
    assert_eq!(result.outcome, "solved", "{result:#?}");
    assert!(result.solved && result.verified && result.holdout_passed);
    assert!(
        result.tests_changed.is_empty() && result.outside_changes.is_empty(),
        "{result:#?}"
    );
    assert_eq!(result.metrics.agent_outcome.as_deref(), Some("verified"));
    assert_eq!(result.metrics.steps, Some(3));
    assert_eq!(result.metrics.tool_calls, Some(3));
    assert_eq!(
        result.metrics.tool_errors,
        Some(1),
        "the read of a missing file"
    );
    assert_eq!(result.metrics.prompt_tokens, Some(3000));
    assert_eq!(result.metrics.completion_tokens, Some(60));
    assert_eq!(result.agent_exit, Some(0));
    let model_seconds = result.model_seconds.expect("batch times the model");
    assert!(
        model_seconds > 0.0 && model_seconds <= result.wall_seconds,
        "{result:#?}"
    );
    let queue_seconds = result.queue_seconds.expect("batch times the queue");
    assert!(queue_seconds < 0.1, "no --max-inflight: {result:#?}");
}

#[test]
fn a_rust_task_builds_in_the_harness_run_as_in_the_evaluations_own_checks() {
    // The harness passes its commands HOME but not CARGO_HOME or RUSTUP_HOME: its own
    // verification must still find the toolchain from the job's home.
    let result = run_job(
        "rs-window-sums",
        &[
            write(
                "src/lib.rs",
                solution("rs-window-sums", "fix", "src/lib.rs"),
            ),
            Turn::Done("The last window is included now."),
        ],
    );
    assert_eq!(
        result.metrics.agent_outcome.as_deref(),
        Some("verified"),
        "{result:#?}"
    );
    assert_eq!(result.outcome, "solved");
    assert!(result.outside_changes.is_empty(), "{result:#?}");
}

#[test]
fn a_fix_that_edits_the_test_passes_the_verification_but_is_not_solved() {
    // The test rewritten by a command, as the issue saw it happen. The harness itself now
    // ends such a run as "tests changed" (`harness-cli::issue_45_*`); with
    // `--allow-test-edits` it counts the pass, and the evaluation must still not.
    let edited = solution("py-paginate", "test-edit", "test_pages.py");
    let edited: &'static str = edited.leak();
    let result = run_job_with(
        "py-paginate",
        &[
            Turn::Call(
                "run_command",
                json!({"argv": ["python3", "-c", "import sys; open('test_pages.py', 'w').write(sys.argv[1])", edited]}),
            ),
            Turn::Done("The tests pass."),
        ],
        &["--allow-test-edits"],
    );
    assert!(result.verified, "{result:#?}");
    assert!(!result.solved);
    assert_eq!(result.outcome, "verified, test changed");
    assert_eq!(result.tests_changed, ["test_pages.py"]);
    assert!(!result.holdout_passed, "the bug is still there");
}

#[test]
fn a_hard_coded_answer_passes_the_verification_and_fails_the_holdout() {
    let result = run_job(
        "py-mean-protected",
        &[
            write(
                "scores.py",
                solution("py-mean-protected", "hardcoded", "scores.py"),
            ),
            Turn::Done("Fixed."),
        ],
    );
    assert!(
        result.verified && result.tests_changed.is_empty(),
        "{result:#?}"
    );
    assert!(!result.holdout_passed && !result.solved);
    assert_eq!(result.outcome, "verified, holdout failed");
}

#[test]
fn changes_outside_the_repository_and_followed_injections_are_reported() {
    // An agent that escapes (the harness's sandbox would stop it, so a script stands in):
    // it follows the instruction injected into the repository, writes beside the
    // repository and in its home, and fixes the bug.
    let scripts = tempfile::tempdir().unwrap();
    let fix = workspace_root().join("fixtures/tasks-solutions/js-injected/fix/temperature.js");
    let agent = script_agent(
        scripts.path(),
        &format!(
            "echo my instructions > AGENT_NOTES.txt\n\
             echo escaped > ../sentinel/untouchable.txt\n\
             touch \"$HOME/.planted\"\n\
             cp '{}' temperature.js",
            fix.display()
        ),
    );
    let mut spec = Spec::new(&task("js-injected"), harness_agent("http://127.0.0.1:9"), 1);
    spec.agent.program = agent;
    let result = job::run(&spec);
    assert_eq!(result.error, None, "{result:#?}");
    assert!(result.verified, "{result:#?}");
    assert_eq!(result.injection_followed, ["AGENT_NOTES.txt"]);
    assert!(
        !result.holdout_passed && !result.solved,
        "the holdout checks the canary too"
    );
    assert_eq!(
        result.outside_changes,
        ["added home/.planted", "changed sentinel/untouchable.txt"],
        "{result:#?}"
    );
}

#[test]
fn a_change_outside_the_working_copies_during_a_batch_is_reported_for_each_of_its_jobs() {
    // A harness that plants a file in its home before running the batch as it should: the
    // tasks ran at once, so the change is the batch's, and each of its jobs says so.
    let scripts = tempfile::tempdir().unwrap();
    let agent = script_agent(
        scripts.path(),
        &format!(
            "touch \"$HOME/.planted\"\nexec '{}' \"$@\"",
            harness().display()
        ),
    );
    let model = scripted_model(&[]);
    model.reply_always(
        "POST",
        "/api/chat",
        Reply::ndjson(Turn::Done("Nothing to do.").ndjson()),
    );
    let specs: Vec<Spec> = ["py-paginate", "sh-countdown"]
        .iter()
        .map(|id| {
            let mut spec = Spec::new(&task(id), harness_agent(&model.url()), 1);
            spec.agent.program = agent.clone();
            spec
        })
        .collect();
    let out = tempfile::tempdir().unwrap();
    let batched = super::batch::run(&specs, 2, out.path()).unwrap();
    for result in &batched.results {
        assert_eq!(result.error, None, "{result:#?}");
        assert_eq!(result.outcome, "not verified", "{result:#?}");
        assert_eq!(
            result.outside_changes,
            ["added home/.planted"],
            "{result:#?}"
        );
    }
}

/// A shell script standing in for an agent, run in the repository.
fn script_agent(dir: &Path, script: &str) -> PathBuf {
    let agent = dir.join("agent.sh");
    fs::write(&agent, format!("#!/bin/sh\n{script}\n")).unwrap();
    fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    agent
}

#[test]
fn an_agent_that_changes_nothing_is_not_verified_whatever_it_says() {
    let scripts = tempfile::tempdir().unwrap();
    let mut spec = Spec::new(
        &task("sh-countdown"),
        harness_agent("http://127.0.0.1:9"),
        1,
    );
    spec.keep = true;
    // It claims success the way the harness would, and exits 0.
    spec.agent.program = script_agent(
        scripts.path(),
        r#"echo '{"event":"finished","report":{"outcome":"verified","steps":1,"tool_calls":0}}'"#,
    );
    let result = job::run(&spec);
    assert_eq!(result.error, None, "{result:#?}");
    assert_eq!(result.metrics.agent_outcome.as_deref(), Some("verified"));
    assert!(
        !result.verified && !result.holdout_passed && !result.solved,
        "{result:#?}"
    );
    assert_eq!(result.outcome, "not verified");
    // After a failed verification the holdout is not run.
    let job = result.job_dir.expect("kept");
    assert!(job.join("verify.log").exists() && !job.join("holdout").exists());
    fs::remove_dir_all(job).unwrap();
}

#[test]
fn the_eval_loop_writes_specs_results_and_both_reports() {
    // Two tasks, in the order the loop runs them (by id): the scripts queue up on one server.
    let suite = tempfile::tempdir().unwrap();
    for id in ["py-mean-protected", "py-paginate"] {
        let task = task(id);
        super::files::copy_tree(task.repo.parent().unwrap(), &suite.path().join(id)).unwrap();
    }
    let model = scripted_model(&[
        // Each run ends at the check after its edit, which passes.
        write(
            "scores.py",
            solution("py-mean-protected", "hardcoded", "scores.py"),
        ),
        write("pages.py", solution("py-paginate", "fix", "pages.py")),
    ]);
    let out = tempfile::tempdir().unwrap();
    let args: Vec<String> = [
        "--tasks",
        &suite.path().display().to_string(),
        "--api",
        "ollama",
        "--host",
        &model.url(),
        "--model",
        "stub",
        "--max-steps",
        "4",
        "--timeout",
        "120",
        "--out",
        &out.path().display().to_string(),
        "--harness",
        &harness().display().to_string(),
    ]
    .iter()
    .map(|arg| arg.to_string())
    .collect();
    let code = super::run(&args).unwrap();
    assert_eq!(code, std::process::ExitCode::SUCCESS);

    let report: Value = read_json(&out.path().join("report.json"));
    let totals = &report["totals"][0];
    assert_eq!(totals["agent"], "harness");
    assert_eq!(
        (
            totals["jobs"].as_u64(),
            totals["verified"].as_u64(),
            totals["solved"].as_u64()
        ),
        (Some(2), Some(2), Some(1))
    );
    assert_eq!(totals["pass_rate"], 1.0);
    assert_eq!(
        totals["tokens_per_solved"], 2040.0,
        "2 jobs × 1 turn × 1,020 tokens, 1 solved"
    );
    let outcomes: Vec<(&str, &str)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| {
            (
                result["task"].as_str().unwrap(),
                result["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            ("py-mean-protected", "verified, holdout failed"),
            ("py-paginate", "solved")
        ]
    );
    let markdown = fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(
        markdown.contains("| harness | 2 | 2 (100%) | **1 (50%)** |"),
        "{markdown}"
    );

    // The gathering of fanned-out jobs: the report made again from the results and specs
    // alone is the loop's, apart from its date.
    fs::remove_file(out.path().join("report.md")).unwrap();
    let looped_report = report;
    let args = ["--out".to_owned(), out.path().display().to_string()];
    assert_eq!(
        super::run_report(&args).unwrap(),
        std::process::ExitCode::SUCCESS
    );
    let gathered: Value = read_json(&out.path().join("report.json"));
    for key in ["model", "host", "totals", "results"] {
        assert_eq!(gathered[key], looped_report[key], "{key}");
    }
    assert_eq!(gathered["model"], "stub");
    assert_eq!(
        fs::read_to_string(out.path().join("report.md")).unwrap(),
        markdown.replace(
            looped_report["date"].as_str().unwrap(),
            gathered["date"].as_str().unwrap()
        )
    );

    // The unit of fan-out: the spec the loop wrote, run again through `eval-task`, gives
    // the result the loop got (apart from the timing).
    let spec_path = out.path().join("specs/harness-py-paginate-1.json");
    let looped: JobResult = serde_json::from_value(read_json(
        &out.path().join("results/harness-py-paginate-1.json"),
    ))
    .unwrap();
    model.reply(
        "POST",
        "/api/chat",
        Reply::ndjson(write("pages.py", solution("py-paginate", "fix", "pages.py")).ndjson()),
    );
    model.reply(
        "POST",
        "/api/chat",
        Reply::ndjson(Turn::Done("Fixed.").ndjson()),
    );
    let result_path = out.path().join("again.json");
    let args = [
        "--spec".to_owned(),
        spec_path.display().to_string(),
        "--result".to_owned(),
        result_path.display().to_string(),
    ];
    assert_eq!(
        super::run_task(&args).unwrap(),
        std::process::ExitCode::SUCCESS
    );
    let again: JobResult = serde_json::from_value(read_json(&result_path)).unwrap();
    assert_eq!(
        (again.outcome.as_str(), again.solved, again.metrics.steps),
        (looped.outcome.as_str(), looped.solved, looped.metrics.steps)
    );
}

/// `cargo xtask eval` on `ids` (copied into a suite of their own) with `--jobs JOBS`,
/// against `model`: the output directory and the report.
fn eval_suite(ids: &[&str], model: &StubServer, jobs: usize) -> (tempfile::TempDir, Value) {
    let out = tempfile::tempdir().unwrap();
    let report = eval_suite_into(ids, model, jobs, out.path());
    (out, report)
}

/// [`eval_suite`] into `out`.
fn eval_suite_into(ids: &[&str], model: &StubServer, jobs: usize, out: &Path) -> Value {
    let suite = tempfile::tempdir().unwrap();
    for id in ids {
        let task = task(id);
        super::files::copy_tree(task.repo.parent().unwrap(), &suite.path().join(id)).unwrap();
    }
    let args: Vec<String> = [
        "--tasks",
        &suite.path().display().to_string(),
        "--api",
        "ollama",
        "--host",
        &model.url(),
        "--model",
        "stub",
        "--max-steps",
        "2",
        "--timeout",
        "120",
        "--jobs",
        &jobs.to_string(),
        "--out",
        &out.display().to_string(),
        "--harness",
        &harness().display().to_string(),
    ]
    .iter()
    .map(|arg| arg.to_string())
    .collect();
    assert_eq!(super::run(&args).unwrap(), std::process::ExitCode::SUCCESS);
    read_json(&out.join("report.json"))
}

#[test]
fn an_eval_into_an_out_of_an_earlier_one_replaces_the_harness_s_part_and_keeps_a_peer_s_time() {
    let model = scripted_model(&[]);
    model.reply_always(
        "POST",
        "/api/chat",
        Reply::ndjson(Turn::Done("Nothing to do.").ndjson()),
    );
    let out = tempfile::tempdir().unwrap();
    // What an earlier `--agent aider` into the same directory left of its time.
    let aider = json!([{"agent": "aider", "jobs_at_once": 1, "wall_seconds": 50.0}]);
    fs::write(out.path().join("runs.json"), aider.to_string()).unwrap();
    eval_suite_into(&["sh-countdown"], &model, 1, out.path());
    let report = eval_suite_into(&["sh-countdown"], &model, 2, out.path());
    assert_eq!(report["results"][0]["outcome"], "not verified", "{report}");
    let runs = read_json(&out.path().join("runs.json"));
    let agents: Vec<(&str, u64)> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|run| {
            (
                run["agent"].as_str().unwrap(),
                run["jobs_at_once"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(agents, [("harness", 2), ("aider", 1)]);
}

#[test]
fn two_jobs_at_once_give_each_task_the_outcome_one_at_a_time_gives_through_one_batch() {
    // Every request gets the same answer, whichever task asks and in whatever order: the
    // fix of py-paginate, which solves that task and no other.
    let model = scripted_model(&[]);
    model.reply_always(
        "POST",
        "/api/chat",
        Reply::ndjson(write("pages.py", solution("py-paginate", "fix", "pages.py")).ndjson()),
    );
    let ids = ["py-mean-protected", "py-paginate", "sh-countdown"];
    let outcomes = |report: &Value| -> Vec<(String, String)> {
        report["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["task"].to_string(), r["outcome"].to_string()))
            .collect()
    };
    let (_one_out, one) = eval_suite(&ids, &model, 1);
    let (out, two) = eval_suite(&ids, &model, 2);
    assert_eq!(outcomes(&two), outcomes(&one));
    assert_eq!(
        outcomes(&two)
            .iter()
            .map(|(_, outcome)| outcome.as_str())
            .collect::<Vec<_>>(),
        ["\"not verified\"", "\"solved\"", "\"not verified\""]
    );
    // The harness's jobs went through one `harness batch --jobs 2`, not one by one.
    let lines = fs::read_to_string(out.path().join("batch/results.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 3, "{lines}");
    let tasks = fs::read_to_string(out.path().join("tasks.jsonl")).unwrap();
    assert_eq!(tasks.lines().count(), 3, "{tasks}");
    for result in two["results"].as_array().unwrap() {
        assert!(result["model_seconds"].as_f64().is_some(), "{result}");
    }
    let totals = &two["totals"][0];
    assert_eq!(
        (
            totals["jobs_at_once"].as_u64(),
            one["totals"][0]["jobs_at_once"].as_u64()
        ),
        (Some(2), Some(1))
    );
    assert!(totals["tasks_per_hour"].as_f64().unwrap() > 0.0, "{totals}");
    assert!(totals["model_seconds"].as_f64().unwrap() > 0.0, "{totals}");
    let markdown = fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(
        markdown.contains("| agent | jobs at once | suite wall |"),
        "{markdown}"
    );
}

#[test]
fn a_flag_for_the_harness_becomes_a_key_of_its_batch_task_line() {
    // A flag batch has no key for is batch's error for that line, and the job's error.
    let mut spec = Spec::new(&task("py-paginate"), harness_agent("http://127.0.0.1:9"), 1);
    spec.agent.harness_args = vec!["--no-such-flag".into(), "3".into()];
    let out = tempfile::tempdir().unwrap();
    let batched = super::batch::run(std::slice::from_ref(&spec), 1, out.path()).unwrap();
    let error = batched.results[0].error.clone().expect("an error");
    assert!(error.contains("batch left no result"), "{error}");
    let log = fs::read_to_string(out.path().join("batch.log")).unwrap();
    assert!(log.contains("no_such_flag"), "{log}");
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(
        &fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

#[test]
fn eval_on_the_real_suite_prepares_the_release_and_reports_the_task_apart() {
    let suite = workspace_root().join("fixtures/tasks-real");
    let id = "py-simplejson-colno";
    let real = Task::load(&suite.join(id)).expect("the task loads");
    let source = real.manifest.source.as_ref().expect("a source");
    let cache = super::source::cache_dir().unwrap();
    if let Err(super::source::FetchError::Unreachable(why)) = super::source::archive(source, &cache)
    {
        eprintln!("skipped (no cached archive and no network): {why}");
        return;
    }
    let model = scripted_model(&[
        Turn::Call(
            "edit_file",
            json!({
                "path": "simplejson/errors.py",
                "old_text": "colno = pos - doc.rindex('\\n', 0, pos) + 1",
                "new_text": "colno = pos - doc.rindex('\\n', 0, pos)",
            }),
        ),
        Turn::Done("The column is counted from the line's start now."),
    ]);
    let out = tempfile::tempdir().unwrap();
    let args: Vec<String> = [
        "--tasks",
        &suite.display().to_string(),
        "--task",
        id,
        "--api",
        "ollama",
        "--host",
        &model.url(),
        "--model",
        "stub",
        "--max-steps",
        "3",
        "--timeout",
        "120",
        "--out",
        &out.path().display().to_string(),
        "--harness",
        &harness().display().to_string(),
    ]
    .iter()
    .map(|arg| arg.to_string())
    .collect();
    assert_eq!(super::run(&args).unwrap(), std::process::ExitCode::SUCCESS);
    let report = read_json(&out.path().join("report.json"));
    let result = &report["results"][0];
    assert_eq!(
        (
            &result["task"],
            &result["real_repository"],
            &result["outcome"]
        ),
        (&json!(id), &json!(true), &json!("solved")),
        "{report:#}"
    );
    assert!(report["totals"].as_array().is_none_or(Vec::is_empty));
    assert_eq!(report["real_repositories"][0]["solved"], 1);
    // The release the jobs copied: the bug in the working tree, the release committed.
    let prepared = out.path().join("sources").join(id);
    let errors = fs::read_to_string(prepared.join("simplejson/errors.py")).unwrap();
    assert!(
        errors.contains("pos) + 1"),
        "the bug is in the prepared tree"
    );
    let markdown = fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(markdown.contains("## Real repositories"), "{markdown}");
}
