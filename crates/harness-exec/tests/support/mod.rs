//! Helpers shared by the integration tests: real processes, real directories.

#![allow(dead_code)]

use std::time::Duration;

use harness_exec::{Outcome, RunOptions, Runner, Tier, preflight};

/// A scratch working directory and options to run in it with `timeout`.
pub(crate) fn scratch(timeout: Duration) -> (tempfile::TempDir, RunOptions) {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = RunOptions::new(dir.path()).timeout(timeout);
    (dir, options)
}

/// Runs `argv` with a fresh runner, in a scratch directory.
pub(crate) fn run(argv: &[&str], timeout: Duration) -> Outcome {
    let (_dir, options) = scratch(timeout);
    Runner::new().run(argv, &options).expect("the command runs")
}

/// True if and only if process `pid` exists and has not exited. A zombie has
/// exited: only its exit status waits for its parent (which, for an orphan,
/// may be an init that never reaps).
pub(crate) fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z" | "X") | None)
        }
        Err(_) => false,
    }
}

/// True if and only if `/proc/<pid>` exists at all (alive or a zombie).
pub(crate) fn exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The pid printed on line `line` of the output.
pub(crate) fn pid_on_line(outcome: &Outcome, line: usize) -> u32 {
    let text = outcome.output().lines().nth(line).unwrap_or_default();
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("line {line} is not a pid: {:?}", outcome.output()))
}

/// A generous bound for "did not hang": the bugs these tests guard against
/// would hang until a 30 s timeout.
pub(crate) const NO_HANG: Duration = Duration::from_secs(10);

/// The real tiers this machine can run (all of them on CI, where
/// `HARNESS_CI_ALL_TIERS=1` makes a tier that cannot run a failure); a tier
/// skipped here says why on stderr.
#[allow(clippy::print_stderr)]
pub(crate) fn real_tiers() -> Vec<Tier> {
    [Tier::Bwrap, Tier::Landlock]
        .into_iter()
        .filter(|&tier| match preflight::probe(tier) {
            Ok(()) => true,
            Err(unavailable) => {
                assert!(
                    std::env::var_os("HARNESS_CI_ALL_TIERS").is_none_or(|value| value != "1"),
                    "HARNESS_CI_ALL_TIERS=1 but {unavailable}"
                );
                eprintln!("skipped: {unavailable}");
                false
            }
        })
        .collect()
}
