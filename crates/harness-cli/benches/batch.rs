//! `harness batch` against a model server that answers every request after a fixed delay
//! and serves any number at once (a stand-in for a GPU server): tasks per hour at
//! `--jobs 1` and `--jobs 4` side by side on the same 16 tasks, and, with the server
//! answering at once, the harness's own overhead per task (clone, store, start, check,
//! collect) on a repository of 10 files. Issue 47's targets: at least 3.5 times the tasks
//! per hour from `--jobs 1` to `--jobs 4`; under 1 s of overhead per task.
//!
//! `cargo bench -p harness-cli --bench batch`; `HARNESS_BATCH_DELAY_MS` sets the delay
//! (default 3000), `HARNESS_BATCH_TASKS` the number of tasks (default 16).

#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness_stub_server::StubServer;
use serde_json::json;

use common::{git, stub_model};

mod common;

fn main() {
    let delay = Duration::from_millis(env_number("HARNESS_BATCH_DELAY_MS", 3000));
    let tasks = env_number("HARNESS_BATCH_TASKS", 16) as usize;
    let directory = tempfile::tempdir().unwrap();
    let home = directory.path().join("home");
    fs::create_dir_all(&home).unwrap();
    let repo = directory.path().join("repo");
    generate(&repo, 10);

    let slow = stub_model(delay);
    let at_once = stub_model(Duration::ZERO);
    let slow_file = task_file(directory.path(), "slow", tasks, &slow);
    let at_once_file = task_file(directory.path(), "at-once", tasks, &at_once);

    let one = batch(&slow_file, 1, &directory.path().join("out-1"), &home);
    let four = batch(&slow_file, 4, &directory.path().join("out-4"), &home);
    let overhead = batch(&at_once_file, 1, &directory.path().join("out-0"), &home);

    let per_hour = |took: Duration| tasks as f64 * 3600.0 / took.as_secs_f64();
    println!(
        "\n{tasks} tasks, each one model request answered after {} ms\n",
        delay.as_millis()
    );
    println!("{:<40} {:>10} {:>14}", "", "wall", "tasks / hour");
    println!(
        "{:<40} {:>8.1} s {:>14.0}",
        "--jobs 1",
        one.as_secs_f64(),
        per_hour(one)
    );
    println!(
        "{:<40} {:>8.1} s {:>14.0}",
        "--jobs 4",
        four.as_secs_f64(),
        per_hour(four)
    );
    println!(
        "{:<40} {:>9.2}×",
        "scaling, --jobs 4 over --jobs 1",
        per_hour(four) / per_hour(one)
    );
    println!(
        "\nthe harness's own time per task, the server answering at once, --jobs 1: {:.0} ms",
        overhead.as_secs_f64() * 1000.0 / tasks as f64
    );
    println!("\ntargets: scaling at least 3.5×; under 1 s per task");
}

/// Runs `harness batch FILE --jobs JOBS --out OUT` and returns how long it took; every
/// task must have a result.
fn batch(file: &Path, jobs: usize, out: &Path, home: &Path) -> Duration {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("batch")
        .arg(file)
        .args(["--jobs", &jobs.to_string(), "--out"])
        .arg(out)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(
        output.status.success(),
        "harness batch: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout)
    );
    took
}

/// `count` tasks on the repository `repo` beside the file, each asking `server`, with
/// one attempt and one check, so that one model request and one check make a task.
fn task_file(
    directory: &Path,
    name: &str,
    count: usize,
    server: &StubServer,
) -> std::path::PathBuf {
    let lines: Vec<String> = (0..count)
        .map(|i| {
            json!({
                "id": format!("{name}-{i:02}"),
                "repo": "repo",
                "task": "say done",
                "verify": "true",
                "host": server.url(),
                "attempts": 1,
                "max_checks": 1,
            })
            .to_string()
        })
        .collect();
    let path = directory.join(format!("{name}.jsonl"));
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// A committed repository of `files` small files.
fn generate(root: &Path, files: usize) {
    fs::create_dir_all(root).unwrap();
    assert!(git(root).args(["init", "-q"]).status().unwrap().success());
    for i in 0..files {
        fs::write(root.join(format!("f{i}.txt")), format!("file {i}\n")).unwrap();
    }
    for args in [&["add", "--all"][..], &["commit", "-q", "-m", "generated"]] {
        assert!(
            git(root).args(args).status().unwrap().success(),
            "git {args:?}"
        );
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}
