//! Throughput and memory of [`Runner::run`] on commands that write 1 GiB,
//! against the same commands with their output sent to `/dev/null`.
//!
//! `cargo bench -p harness-exec` prints, for each command, the best wall time
//! of three runs: raw (output to `/dev/null`), piped into `cat` (the least any
//! capture through a pipe costs), and through the runner; the runner's ratio
//! to raw, and `cat`'s. Then this process's peak resident memory (`VmHWM`).
//! Targets: a runner ratio of at most 1.5 and a peak under 32 MiB, whatever
//! the command writes.

#![allow(clippy::print_stdout, missing_docs)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness_exec::{RunOptions, Runner};

const COMMANDS: &[&str] = &["head -c 1G /dev/zero | tr '\\0' x", "head -c 1G /dev/zero"];
const ROUNDS: usize = 3;

fn main() {
    let workspace = std::env::temp_dir();
    let runner = Runner::new().max_timeout(Duration::from_secs(600));
    let options = RunOptions::new(&workspace).timeout(Duration::from_secs(600));
    let rss_before = peak_rss_kib();

    println!("harness-exec: 1 GiB of output through Runner::run vs. the same command > /dev/null");
    println!("best of {ROUNDS} runs each, taken in turns\n");
    println!(
        "{:<36} {:>9} {:>11} {:>12} {:>7} {:>11}",
        "command", "raw (s)", "| cat (s)", "runner (s)", "ratio", "cat ratio"
    );
    for command in COMMANDS {
        let raw = || {
            let status = Command::new("sh")
                .args(["-c", command])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("sh runs");
            assert!(status.success(), "{command}: {status}");
        };
        // The least any capture through a pipe costs: `cat` reading it.
        let piped = || {
            let status = Command::new("sh")
                .args(["-c", &format!("{command} | cat > /dev/null")])
                .stdin(Stdio::null())
                .status()
                .expect("sh runs");
            assert!(status.success(), "{command}: {status}");
        };
        let through_runner = || {
            let outcome = runner.run(&["sh", "-c", command], &options).expect("runs");
            assert!(outcome.is_success(), "{command}: {:?}", outcome.status());
            assert_eq!(outcome.total_bytes(), 1 << 30);
        };
        let [raw, piped, through_runner] = best_of([&raw, &piped, &through_runner]);
        let ratio = through_runner.as_secs_f64() / raw.as_secs_f64();
        let cat_ratio = piped.as_secs_f64() / raw.as_secs_f64();
        println!(
            "{command:<36} {:>9.3} {:>11.3} {:>12.3} {ratio:>7.2} {cat_ratio:>11.2}",
            raw.as_secs_f64(),
            piped.as_secs_f64(),
            through_runner.as_secs_f64()
        );
    }
    let rss_after = peak_rss_kib();
    println!(
        "\npeak RSS of this process (VmHWM): {:.1} MiB (before the runs: {:.1} MiB); target < 32 MiB",
        rss_after as f64 / 1024.0,
        rss_before as f64 / 1024.0
    );
}

/// The shortest of `ROUNDS` timed runs of each of `runs`, taken in turns so
/// that a change in the machine's load falls on all of them alike.
fn best_of<const N: usize>(runs: [&dyn Fn(); N]) -> [Duration; N] {
    let mut best = [Duration::MAX; N];
    for _ in 0..ROUNDS {
        for (run, best) in runs.iter().zip(&mut best) {
            let started = Instant::now();
            run();
            *best = (*best).min(started.elapsed());
        }
    }
    best
}

/// `VmHWM` from `/proc/self/status`, in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .expect("VmHWM listed");
    line.split_whitespace()
        .nth(1)
        .and_then(|kib| kib.parse().ok())
        .expect("VmHWM in kB")
}
