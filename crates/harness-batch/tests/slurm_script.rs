//! The `sbatch` script `harness batch --emit slurm` writes, pinned by a snapshot file next
//! to this test, and run by a real shell to show its quoting holds.
//!
//! Set `HARNESS_BLESS=1` to overwrite `snapshots/slurm.sh` with the current output after a
//! deliberate change, then review the snapshot's diff: it is what users submit.

use std::path::Path;
use std::process::Command;

use harness_batch::{SlurmOptions, Tasks, slurm_script};

/// Three task lines: a default budget, a larger one, and a line that is not a task.
const TASKS: &str = concat!(
    r#"{"id": "fix-add", "repo": "../calc", "task": "make the failing test pass", "verify": "python3 -m unittest -q"}"#,
    "\n",
    r#"{"id": "port-parser", "repo": "https://example.invalid/parser.git", "ref": "v2", "task": "port it", "timeout": 3600}"#,
    "\n\n",
    r#"{"id": "typo", "repo": "../calc", "task": "fix the typo", "max_steps": "ten"}"#,
    "\n",
);

#[test]
fn the_script_matches_the_snapshot() {
    let snapshot = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/slurm.sh");
    let tasks = Tasks::parse(Path::new("/srv/evals/tasks.jsonl"), TASKS);
    let actual = slurm_script(
        &tasks,
        &SlurmOptions {
            program: Path::new("/opt/harness/bin/harness"),
            tasks: tasks.path(),
            out: Path::new("/srv/evals/out"),
            jobs: Some(2),
        },
    )
    .expect("a script");
    if std::env::var_os("HARNESS_BLESS").is_some() {
        std::fs::write(&snapshot, &actual).expect("the snapshot is writable");
    }
    let expected = std::fs::read_to_string(&snapshot).unwrap_or_else(|error| {
        panic!("{}: {error}; run with HARNESS_BLESS=1", snapshot.display())
    });
    assert!(
        actual == expected,
        "the Slurm script changed; if that is intended, rerun with HARNESS_BLESS=1 and review \
         the snapshot's diff.\n--- actual\n{actual}"
    );
}

/// The script's command, run by `sh` with `printf` standing in for the harness, hands the
/// harness each path as one word, however it is spelled.
#[test]
fn a_shell_gives_the_harness_each_path_as_one_word() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let odd = dir.path().join("my evals $HOME `x` it's");
    let tasks = Tasks::parse(&odd.join("tasks.jsonl"), TASKS);
    let out = dir.path().join("out-100%");
    // A program that prints each argument on a line of its own.
    let program = dir.path().join("print args");
    std::fs::write(&program, "#!/bin/sh\nprintf '%s\\n' \"$@\"\n").expect("write the stand-in");
    let made = Command::new("chmod")
        .arg("+x")
        .arg(&program)
        .status()
        .expect("chmod runs");
    assert!(made.success());
    let script = slurm_script(
        &tasks,
        &SlurmOptions {
            program: &program,
            tasks: tasks.path(),
            out: &out,
            jobs: None,
        },
    )
    .expect("a script");
    let path = dir.path().join("job.sh");
    std::fs::write(&path, &script).expect("write the script");
    let output = Command::new("sh")
        .arg(&path)
        .env("SLURM_ARRAY_TASK_ID", "1")
        .output()
        .expect("sh runs");
    assert!(output.status.success(), "{output:?}");
    let words: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        words,
        [
            "batch".to_owned(),
            tasks.path().display().to_string(),
            "--out".to_owned(),
            out.display().to_string(),
            "--resume".to_owned(),
        ]
    );
}
