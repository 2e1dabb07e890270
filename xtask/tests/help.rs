//! Every task answers `--help` and `-h` with its own usage and exits 0, as `harness` does
//! for its subcommands (issue #44: `cargo xtask mutate --help` was an error, and
//! `cargo xtask local-model --help` printed the usage of every task).

use std::process::Command;

/// Every task `cargo xtask help` lists.
const TASKS: &[&str] = &[
    "mutate",
    "local-model",
    "demo",
    "docs",
    "eval",
    "eval-task",
    "eval-report",
    "structure",
    "reap",
    "help",
];

fn xtask(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .expect("xtask runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn every_task_answers_help_with_its_own_usage_and_exit_0() {
    let (_, all, _) = xtask(&["help"]);
    for task in TASKS {
        assert!(
            all.contains(&format!("\n  {task}")),
            "help lacks {task}:\n{all}"
        );
        for flag in ["--help", "-h"] {
            let (code, stdout, stderr) = xtask(&[task, flag]);
            assert_eq!(code, Some(0), "{task} {flag}: {stderr}");
            assert!(
                stdout.starts_with(&format!("usage: cargo xtask {task}")),
                "{task} {flag}:\n{stdout}"
            );
            let others = TASKS
                .iter()
                .filter(|other| *other != task && !other.starts_with(&format!("{task}-")))
                .filter(|other| stdout.contains(&format!("\n  {other} ")));
            assert_eq!(
                others.count(),
                0,
                "{task} {flag} shows other tasks:\n{stdout}"
            );
        }
    }
}

#[test]
fn help_after_what_a_task_passes_on_is_not_its_own() {
    // `demo -- --help` asks `harness run`, not the demo: the demo must not answer it. It
    // then starts a demo, so only the parse is checked, with an argument that fails first.
    let (code, stdout, stderr) = xtask(&["demo", "--bogus", "--", "--help"]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("unknown argument \"--bogus\""), "{stderr}");
}
