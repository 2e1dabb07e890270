//! `harness batch`: a task file run by the real binary, each task in its own clone, each
//! with a scripted model server of its own (so two tasks running at once never share a
//! script), against a real git repository that stands for the user's checkout.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use harness_stub_server::Reply;
use serde_json::{Value, json};

use crate::end_to_end::{VERIFY, fix_script};
use crate::support::{Model, Repo, Turn};

/// A task line for the fixture's repository (`work`, beside the task file), asking
/// `model`, with one attempt and one check so a failed check ends the run.
pub(crate) fn task(id: &str, repo: &str, model: &Model) -> Value {
    json!({
        "id": id,
        "repo": repo,
        "task": "make the failing test pass",
        "verify": VERIFY,
        "host": model.url(),
        "attempts": 1,
        "max_checks": 1,
    })
}

/// Writes `lines` as the task file `outer/tasks.jsonl`; returns its path.
fn task_file(repo: &Repo, lines: &[String]) -> String {
    let path = repo.outer.join("tasks.jsonl");
    fs::write(&path, lines.join("\n") + "\n").expect("write the task file");
    path.display().to_string()
}

pub(crate) fn read_json(path: &Path) -> Value {
    let text =
        fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).expect("JSON")
}

pub(crate) fn results_ids(out: &Path) -> Vec<(String, u64, String)> {
    fs::read_to_string(out.join("results.jsonl"))
        .expect("results.jsonl")
        .lines()
        .map(|line| {
            let result: Value = serde_json::from_str(line).expect("a JSON line");
            (
                result["id"].as_str().expect("an id").to_owned(),
                result["index"].as_u64().expect("an index"),
                result["status"].as_str().expect("a status").to_owned(),
            )
        })
        .collect()
}

/// The workspaces of the undo stores under the test's home.
fn store_workspaces(repo: &Repo) -> BTreeSet<PathBuf> {
    let stores = repo.outer.join("home/.local/state/harness");
    fs::read_dir(stores)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| fs::read_to_string(entry.path().join("harness-workspace")).ok())
        .map(|text| PathBuf::from(text.trim()))
        .collect()
}

#[test]
fn a_batch_runs_each_task_in_its_own_clone_and_a_bad_line_stops_nothing() {
    let repo = Repo::from_fixture("calc");
    let head = repo.git(&["rev-parse", "HEAD"]);
    let before = repo.snapshot();
    let solver = Model::start();
    solver.script(fix_script());
    let quitter = Model::start();
    quitter.script(vec![Turn::Text("Done.")]);
    let nobody = Model::start();
    let lines = [
        task("solved", "work", &solver).to_string(),
        task("unresolved", "work", &quitter).to_string(),
        r#"{"id": "bad", "repo": "work", "task": "t", "max_steps": "ten"}"#.to_owned(),
        task("missing", "no-such-repo", &nobody).to_string(),
    ];
    let tasks = task_file(&repo, &lines);
    let out = repo.outer.join("out");
    let out_arg = out.display().to_string();

    let run = repo.harness(&["batch", &tasks, "--jobs", "2", "--out", &out_arg]);
    run.assert_exit(2)
        .assert_stderr_has(&[
            "harness: tasks.jsonl:3: \"max_steps\": invalid type: string \"ten\", expected u32; the line is skipped",
            "] missing: error after ",
            "] solved: solved (verified) after ",
            "[3/3] ",
        ])
        .assert_stdout_has(&["3 tasks: 1 solved, 1 unresolved, 1 error, 0 timeout (33% solved)"]);
    // The boundary is stated once for the batch, and in each task's log.
    let statement = "Path confinement and a command policy stop accidents, not an adversary";
    assert_eq!(run.stderr.matches(statement).count(), 1, "{run}");
    let log = fs::read_to_string(out.join("solved/harness.log")).unwrap();
    assert!(log.starts_with(statement), "{log}");

    // Each good task has its files; the solved one's patch is the fix.
    let solved = read_json(&out.join("solved/result.json"));
    assert_eq!(solved["status"], "solved", "{solved}");
    assert_eq!(solved["outcome"], "verified");
    assert_eq!(
        solved["diff"],
        json!({"files": 1, "added": 1, "removed": 1})
    );
    // Read and edit: the quick check after the edit passed.
    assert!(solved["steps"].as_u64().unwrap() >= 2);
    assert!(solved["prompt_tokens"].as_u64().unwrap() > 0);
    let patch = fs::read_to_string(out.join("solved/patch.diff")).unwrap();
    assert!(patch.contains("+    return a + b"), "{patch}");
    let transcript = fs::read_to_string(out.join("solved/transcript.jsonl")).unwrap();
    assert!(transcript.contains("\"verified\""), "{transcript}");
    let unresolved = read_json(&out.join("unresolved/result.json"));
    assert_eq!(unresolved["status"], "unresolved", "{unresolved}");
    assert_eq!(unresolved["outcome"], "verification failed");
    assert!(out.join("unresolved/transcript.jsonl").is_file());
    assert_eq!(
        fs::read_to_string(out.join("unresolved/patch.diff")).unwrap(),
        ""
    );
    let missing = read_json(&out.join("missing/result.json"));
    assert_eq!(missing["status"], "error");
    assert!(
        missing["error"]
            .as_str()
            .unwrap()
            .contains("no-such-repo does not exist"),
        "{missing}"
    );
    assert!(!out.join("bad").exists());

    // results.jsonl in the file's order, and the summary.
    assert_eq!(
        results_ids(&out),
        [
            ("solved".to_owned(), 0, "solved".to_owned()),
            ("unresolved".to_owned(), 1, "unresolved".to_owned()),
            ("missing".to_owned(), 3, "error".to_owned()),
        ]
    );
    let summary = read_json(&out.join("summary.json"));
    assert_eq!(
        (
            &summary["tasks"],
            &summary["solved"],
            &summary["unresolved"],
            &summary["error"]
        ),
        (&json!(3), &json!(1), &json!(1), &json!(1))
    );
    let markdown = fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(markdown.contains("| solved | 1 |"), "{markdown}");

    // The user's checkout is untouched; two tasks on it had two clones and two stores.
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(repo.snapshot(), before);
    let solved_work = fs::canonicalize(out.join("solved/work")).unwrap();
    let unresolved_work = fs::canonicalize(out.join("unresolved/work")).unwrap();
    assert!(
        fs::read_to_string(solved_work.join("calc.py"))
            .unwrap()
            .contains("a + b")
    );
    assert!(
        fs::read_to_string(unresolved_work.join("calc.py"))
            .unwrap()
            .contains("a - b")
    );
    assert_eq!(
        store_workspaces(&repo),
        BTreeSet::from([solved_work, unresolved_work])
    );

    // --resume runs nothing again: no model is asked, the results stay.
    let results = fs::read_to_string(out.join("results.jsonl")).unwrap();
    let chats = (solver.chats().len(), quitter.chats().len());
    repo.harness(&[
        "batch", &tasks, "--jobs", "2", "--out", &out_arg, "--resume",
    ])
    .assert_exit(2)
    .assert_stderr_has(&["3 tasks kept from an earlier run (--resume)"]);
    assert_eq!((solver.chats().len(), quitter.chats().len()), chats);
    assert_eq!(
        fs::read_to_string(out.join("results.jsonl")).unwrap(),
        results
    );

    // collect rebuilds the same results.jsonl from the per-task results.
    fs::remove_file(out.join("results.jsonl")).unwrap();
    fs::remove_file(out.join("summary.json")).unwrap();
    repo.harness(&["batch", "collect", &out_arg])
        .assert_exit(0)
        .assert_stdout_has(&["3 tasks: 1 solved, 1 unresolved, 1 error"]);
    assert_eq!(
        fs::read_to_string(out.join("results.jsonl")).unwrap(),
        results
    );
    assert_eq!(read_json(&out.join("summary.json")), summary);
}

#[test]
fn an_index_runs_exactly_that_task_line() {
    let repo = Repo::from_fixture("calc");
    let quitter = Model::start();
    quitter.script(vec![Turn::Text("Done.")]);
    let unused = Model::start();
    let lines = [
        task("first", "work", &unused).to_string(),
        task("second", "work", &quitter).to_string(),
        "{\"id\": \"bad\"}".to_owned(),
        task("missing", "no-such-repo", &unused).to_string(),
    ];
    let tasks = task_file(&repo, &lines);

    // The results go inside the user's checkout, as the default --out does when the
    // batch is started there: the checkout's status stays clean.
    let out = repo.root.join("batch-out");
    let run = repo.harness(&[
        "batch",
        &tasks,
        "--index",
        "1",
        "--out",
        &out.display().to_string(),
    ]);
    run.assert_exit(0);
    let printed: Value = serde_json::from_str(run.stdout.trim()).expect("one JSON line");
    assert_eq!(printed["id"], "second");
    assert_eq!(printed["status"], "unresolved");
    assert_eq!(read_json(&out.join("second/result.json")), printed);
    let mut written: Vec<_> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    written.sort();
    assert_eq!(written, [".gitignore", "second"]);
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    assert!(unused.chats().is_empty());

    // An engine that runs the index again with --resume keeps its result, asking nothing.
    let chats = quitter.chats().len();
    let again = repo.harness(&[
        "batch",
        &tasks,
        "--index",
        "1",
        "--resume",
        "--out",
        &out.display().to_string(),
    ]);
    again.assert_exit(0);
    assert_eq!(again.stdout, run.stdout);
    assert_eq!(quitter.chats().len(), chats);

    // An engine's variable names the index; a failed task still exits 0: it has a result.
    let engine = repo.outer.join("by-engine");
    let engine_arg = engine.display().to_string();
    repo.harness_with_env(
        &["batch", &tasks, "--out", &engine_arg],
        &[("JOB_COMPLETION_INDEX", "3")],
    )
    .assert_exit(0);
    assert_eq!(
        read_json(&engine.join("missing/result.json"))["status"],
        "error"
    );
    repo.harness_with_env(
        &["batch", &tasks, "--out", &engine_arg],
        &[("SLURM_ARRAY_TASK_ID", "2")],
    )
    .assert_exit(2)
    .assert_stderr_has(&["tasks.jsonl:3: \"repo\": missing field `repo`"]);
    repo.harness(&["batch", &tasks, "--index", "4", "--out", &engine_arg])
        .assert_exit(2)
        .assert_stderr_has(&["there is no task 4: the task file has 4, numbered from 0"]);
    assert!(!engine.join("bad").exists());
}

#[test]
fn a_task_whose_process_is_killed_is_an_error_and_the_batch_goes_on() {
    let repo = Repo::from_fixture("calc");
    let slow = Model::start();
    slow.server.reply(
        "POST",
        "/api/chat",
        Reply::ndjson("").delay_first_byte(Duration::from_secs(20)),
    );
    let solver = Model::start();
    solver.script(fix_script());
    let lines = [
        task("killed", "work", &slow).to_string(),
        task("after", "work", &solver).to_string(),
    ];
    let tasks = task_file(&repo, &lines);
    let out = repo.outer.join("out");
    let batch = repo.spawn(&[
        "batch",
        &tasks,
        "--jobs",
        "1",
        "--out",
        &out.display().to_string(),
    ]);

    // Once the slow task asks its model, its process (the child that runs `--index 0`,
    // not the runner) is killed.
    wait_until(|| !slow.chats().is_empty());
    let task_process = descendants(batch.id())
        .into_iter()
        .find(|(_, line)| line.contains("--index"))
        .expect("the task's process is running");
    let kill = std::process::Command::new("kill")
        .args(["-KILL", &task_process.0.to_string()])
        .status()
        .unwrap();
    assert!(kill.success());

    let output = batch.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let killed = read_json(&out.join("killed/result.json"));
    assert_eq!(killed["status"], "error");
    assert!(
        killed["error"]
            .as_str()
            .unwrap()
            .contains("killed by signal 9"),
        "{killed}"
    );
    assert_eq!(
        read_json(&out.join("after/result.json"))["status"],
        "solved"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

#[test]
fn ctrl_c_stops_every_task_and_keeps_the_finished_results() {
    let repo = Repo::from_fixture("calc");
    let slow = Model::start();
    slow.server.reply(
        "POST",
        "/api/chat",
        Reply::ndjson("").delay_first_byte(Duration::from_secs(20)),
    );
    let unused = Model::start();
    let lines = [
        task("quick", "no-such-repo", &unused).to_string(),
        task("slow", "work", &slow).to_string(),
        task("never", "work", &unused).to_string(),
    ];
    let tasks = task_file(&repo, &lines);
    let out = repo.outer.join("out");
    let out_arg = out.display().to_string();
    let batch = repo.spawn(&["batch", &tasks, "--jobs", "1", "--out", &out_arg]);

    wait_until(|| !slow.chats().is_empty());
    let task_processes: Vec<i32> = descendants(batch.id())
        .into_iter()
        .filter(|(_, line)| line.contains("--index"))
        .map(|(pid, _)| pid)
        .collect();
    assert!(!task_processes.is_empty());
    let interrupt = std::process::Command::new("kill")
        .args(["-INT", &batch.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupt.success());

    let output = batch.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("stopping every task; finished results are kept"),
        "{stderr}"
    );
    assert_eq!(read_json(&out.join("quick/result.json"))["status"], "error");
    assert!(!out.join("slow/result.json").exists());
    assert!(!out.join("never").exists());
    assert_eq!(
        results_ids(&out),
        [("quick".to_owned(), 0, "error".to_owned())]
    );
    // No task's process outlives the batch (one the batch's end left for init to reap
    // may stay a zombie for a moment).
    wait_until(|| task_processes.iter().all(|pid| !is_running(*pid)));

    // --resume runs what the stop left, and only that.
    repo.harness(&[
        "batch", &tasks, "--jobs", "1", "--out", &out_arg, "--resume",
    ])
    .assert_exit(0)
    .assert_stderr_has(&["1 tasks kept from an earlier run (--resume)"]);
    let ids: Vec<String> = results_ids(&out).into_iter().map(|(id, _, _)| id).collect();
    assert_eq!(ids, ["quick", "slow", "never"]);
}

/// Waits for `ready`, at most 60 s.
fn wait_until(ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// True if and only if the process `pid` exists and is not a zombie.
fn is_running(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .next()?
                .to_owned();
            Some(state != "Z")
        })
        .unwrap_or(false)
}

/// Every process below `pid`, parents first, with its command line.
fn descendants(pid: u32) -> Vec<(i32, String)> {
    let processes: Vec<(i32, i32, String)> = fs::read_dir("/proc")
        .expect("/proc lists the processes")
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = fs::read_to_string(entry.path().join("stat")).ok()?;
            // The parent's pid is the second field after the command's closing parenthesis.
            let parent: i32 = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            let line = fs::read(entry.path().join("cmdline")).ok()?;
            Some((
                pid,
                parent,
                String::from_utf8_lossy(&line).replace('\0', " "),
            ))
        })
        .collect();
    let mut found = Vec::new();
    let mut parents = vec![pid as i32];
    while let Some(parent) = parents.pop() {
        for (pid, _, line) in processes.iter().filter(|(_, p, _)| *p == parent) {
            found.push((*pid, line.clone()));
            parents.insert(0, *pid);
        }
    }
    found
}

#[test]
fn the_help_shows_examples_the_schema_and_the_batch_s_exit_statuses() {
    let repo = Repo::from_fixture("calc");
    repo.harness(&["batch", "--help"])
        .assert_exit(0)
        .assert_stdout_has(&[
            "docs/batch-task.schema.json",
            "harness batch tasks.jsonl --jobs 2 --out results",
            "harness batch collect results",
            "JOB_COMPLETION_INDEX",
            "  0    every task has a result, whatever its outcome",
            "  2    usage error: a task file that cannot be read, a line that is not a task",
            "  130  interrupted: the finished tasks keep their results",
        ]);
    let help = repo.harness(&["batch", "--help"]);
    assert!(!help.stdout.contains("\n  3 "), "{}", help.stdout);
    repo.harness(&["batch"])
        .assert_exit(2)
        .assert_stderr_has(&["<TASKS>"]);
}

/// Nothing shared between tasks: with the output directory and the task file outside `/tmp`
/// (whose private copy under bwrap would hide them anyway), a task's command, under bwrap
/// and under Landlock, reads nothing of a task solved before it (its working copy, result,
/// patch, and its undo store's snapshots and transcript), of the batch's results or of the
/// task file (the other tasks' verification), and writes none of it; and its own working
/// copy works as ever.
#[test]
fn a_task_s_commands_reach_nothing_of_the_other_tasks() {
    let repo = Repo::from_fixture("calc");
    let outside_tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let base = fs::canonicalize(outside_tmp.path()).expect("canonical");
    let out = base.join("out");
    let solver = Model::start();
    solver.script(fix_script());
    let tiers = ["bwrap", "landlock"];
    let peekers: Vec<Model> = tiers.iter().map(|_| Model::start()).collect();
    let tasks = base.join("tasks.jsonl");
    let stores = repo.outer.join("home/.local/state/harness");
    let peek = |out: &Path| {
        let theirs = [
            out.join("solved/result.json"),
            out.join("solved/patch.diff"),
            out.join("solved/work/calc.py"),
            out.join("results.jsonl"),
            tasks.clone(),
        ];
        let names: Vec<String> = theirs.iter().map(|p| p.display().to_string()).collect();
        format!(
            "cat {all}; echo tampered >> {result}; echo x > {new}; echo own-work > mine.txt; \
             cat mine.txt; git status --porcelain; ls {stores}; cat {stores}/*/harness/runs/*/*",
            all = names.join(" "),
            result = names[0],
            new = out.join("solved/new").display(),
            stores = stores.display(),
        )
    };
    for model in &peekers {
        model.script(vec![
            Turn::call("run_command", json!({"argv": ["sh", "-c", peek(&out)]})),
            Turn::Text("Done."),
        ]);
    }
    let root = repo.root.display().to_string();
    let mut lines = vec![task("solved", &root, &solver).to_string()];
    for (model, tier) in peekers.iter().zip(tiers) {
        let mut line = task(&format!("peek-{tier}"), &root, model);
        line["sandbox"] = json!(tier);
        line["task"] = json!("look around");
        lines.push(line.to_string());
    }
    fs::write(&tasks, lines.join("\n") + "\n").expect("the task file");
    let (tasks_arg, out_arg) = (tasks.display().to_string(), out.display().to_string());

    // The solved task's files, and the batch's results, are there before the others start.
    repo.harness(&["batch", &tasks_arg, "--index", "0", "--out", &out_arg])
        .assert_exit(0);
    repo.harness(&["batch", "collect", &out_arg]).assert_exit(0);
    let result = fs::read_to_string(out.join("solved/result.json")).expect("result");
    assert!(result.contains("\"solved\""), "{result}");
    for (index, (model, tier)) in peekers.iter().zip(tiers).enumerate() {
        let index = (index + 1).to_string();
        repo.harness(&["batch", &tasks_arg, "--index", &index, "--out", &out_arg])
            .assert_exit(0);
        let chats = model.chats();
        let seen = chats
            .get(1)
            .and_then(|chat| chat["messages"].as_array())
            .and_then(|messages| messages.last())
            .map(|message| message["content"].to_string())
            .unwrap_or_else(|| panic!("{tier}: no second request: {chats:?}"));
        assert!(seen.contains("own-work"), "{tier}: own file\n{seen}");
        assert!(seen.contains("?? mine.txt"), "{tier}: git status\n{seen}");
        for theirs in [
            "return a + b",
            "\\\"solved\\\"",
            "verified",
            "make the failing test pass",
            "harness-workspace",
            ".git",
        ] {
            assert!(!seen.contains(theirs), "{tier}: {theirs} read\n{seen}");
        }
        assert_eq!(
            fs::read_to_string(out.join("solved/result.json")).expect("result"),
            result,
            "{tier}"
        );
        assert!(!out.join("solved/new").exists(), "{tier}");
        let own = read_json(&out.join(format!("peek-{tier}/result.json")));
        assert_eq!(own["status"], "unresolved", "{tier}: {own}");
    }
}

/// How long the shared model server of the `--max-inflight` tests takes per answer.
const ANSWER_DELAY: Duration = Duration::from_secs(2);
/// How often those tests look for a request that arrived: arrival times are this exact.
const LOOK: Duration = Duration::from_millis(10);

/// Runs three tasks `--jobs 3` (with `extra` flags) against one model server that takes
/// [`ANSWER_DELAY`] per answer and serves any number at once; returns the output directory
/// and the times between the chat requests' arrivals, in order.
fn three_tasks_on_one_slow_server(
    repo: &Repo,
    name: &str,
    extra: &[&str],
) -> (PathBuf, Vec<Duration>) {
    let model = Model::start();
    model.script_slow(
        vec![
            Turn::Text("Done."),
            Turn::Text("Done."),
            Turn::Text("Done."),
        ],
        ANSWER_DELAY,
    );
    let lines: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|id| task(id, "work", &model).to_string())
        .collect();
    let tasks = task_file(repo, &lines);
    let out = repo.outer.join(name);
    let out_arg = out.display().to_string();
    let mut args = vec!["batch", &tasks, "--jobs", "3", "--out", &out_arg];
    args.extend_from_slice(extra);
    let mut batch = repo.spawn(&args);
    let mut arrivals = Vec::new();
    while batch.try_wait().expect("the batch runs").is_none() {
        let seen = model.chats().len();
        arrivals.extend((arrivals.len()..seen).map(|_| Instant::now()));
        std::thread::sleep(LOOK);
    }
    let output = batch.wait_with_output().expect("the batch ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(model.chats().len(), 3);
    assert_eq!(arrivals.len(), 3, "every chat request was seen arriving");
    let gaps = arrivals.windows(2).map(|pair| pair[1] - pair[0]).collect();
    (out, gaps)
}

/// Issue #47: with `--max-inflight 1` the model server never has two requests at once,
/// and the time each task waited for the slot is in its result, apart from the model's.
#[test]
fn max_inflight_1_keeps_the_model_to_one_request_at_a_time_across_tasks() {
    let repo = Repo::from_fixture("calc");
    let (out, gaps) = three_tasks_on_one_slow_server(&repo, "capped", &["--max-inflight", "1"]);
    // A request arrives only after the one before it was answered.
    for gap in &gaps {
        assert!(
            *gap >= ANSWER_DELAY - 2 * LOOK,
            "two requests at once: {gaps:?}"
        );
    }
    for id in ["a", "b", "c"] {
        let result = read_json(&out.join(id).join("result.json"));
        assert_eq!(result["status"], "unresolved", "{result}");
        let model = result["model_seconds"].as_f64().expect("model_seconds");
        let queue = result["queue_seconds"].as_f64().expect("queue_seconds");
        let wall = result["wall_seconds"].as_f64().expect("wall_seconds");
        assert!(model >= ANSWER_DELAY.as_secs_f64() - 0.05, "{result}");
        assert!(model + queue <= wall, "{result}");
    }
    let summary = read_json(&out.join("summary.json"));
    let queued = summary["queue_seconds_total"].as_f64().expect("a total");
    // Three requests of 2 s, one at a time, started together: the second waits about
    // 2 s, the third about 4 s, less the time the tasks took to start apart.
    assert!(queued > ANSWER_DELAY.as_secs_f64(), "{summary}");
    assert!(
        summary["model_seconds_total"].as_f64().expect("a total") >= 5.8,
        "{summary}"
    );
    assert!(
        fs::read_to_string(out.join("summary.md"))
            .expect("summary.md")
            .contains("waiting for a model slot"),
    );
}

/// The other side of the test above, so that it can fail: the same tasks without the cap
/// do reach the server at once.
#[test]
fn without_max_inflight_the_tasks_ask_the_model_at_once() {
    let repo = Repo::from_fixture("calc");
    let (out, gaps) = three_tasks_on_one_slow_server(&repo, "uncapped", &[]);
    assert!(
        gaps.iter().any(|gap| *gap < ANSWER_DELAY - 2 * LOOK),
        "no two requests at once: {gaps:?}"
    );
    let summary = read_json(&out.join("summary.json"));
    assert!(
        summary["queue_seconds_total"].as_f64().expect("a total") < 0.05,
        "{summary}"
    );
    assert!(!out.join(".model-slots").exists());
}

/// A task process killed mid-request (`SIGKILL`: no handler runs) frees its model slot:
/// the kernel drops its lock, and the next task, waiting for it, goes on.
#[test]
fn a_slot_held_by_a_task_killed_mid_request_is_freed_for_the_next() {
    let repo = Repo::from_fixture("calc");
    let slow = Model::start();
    slow.server.reply(
        "POST",
        "/api/chat",
        Reply::ndjson("").delay_first_byte(Duration::from_secs(60)),
    );
    let solver = Model::start();
    solver.script(fix_script());
    let lines = [
        task("killed", "work", &slow).to_string(),
        task("after", "work", &solver).to_string(),
    ];
    let tasks = task_file(&repo, &lines);
    let out = repo.outer.join("out").display().to_string();
    let index = |i: &'static str| {
        [
            "batch",
            &tasks,
            "--index",
            i,
            "--max-inflight",
            "1",
            "--out",
            &out,
        ]
        .map(str::to_owned)
    };

    let holder_args = index("0");
    let mut holder = repo.spawn(&holder_args.each_ref().map(String::as_str));
    wait_until(|| !slow.chats().is_empty());
    let waiter_args = index("1");
    let waiter = repo.spawn(&waiter_args.each_ref().map(String::as_str));
    // The waiter asked the server about the model (its run is being prepared), then waits
    // for the slot: no chat reaches its server while the holder's request runs.
    wait_until(|| !solver.server.requests_to("/api/show").is_empty());
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        solver.chats().is_empty(),
        "the waiter asked while the slot was held"
    );

    holder.kill().expect("kill the holder");
    holder.wait().expect("the holder ends");
    let output = waiter.wait_with_output().expect("the waiter ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let after: Value = serde_json::from_str(String::from_utf8_lossy(&output.stdout).trim())
        .expect("one JSON line");
    assert_eq!(after["status"], "solved", "{after}");
    assert!(
        after["queue_seconds"].as_f64().expect("queue_seconds") > 0.5,
        "{after}"
    );
    assert!(!Path::new(&out).join("killed/result.json").exists());
}
