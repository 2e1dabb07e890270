//! What each isolation tier costs per command: `true` run 200 times, and a
//! small `python3 -m unittest` suite 10 times, under `none`, `landlock` and
//! `bwrap`, side by side in one run.
//!
//! `cargo bench -p harness-exec --bench isolation` prints the median time per
//! command under each tier and what a tier adds over `none`. Targets: Landlock
//! adds at most 2 ms per command, bwrap at most 10 ms (median).

#![allow(clippy::print_stdout, missing_docs)]

use std::time::{Duration, Instant};

use harness_exec::{Confinement, Isolation, RunOptions, Runner, Tier, preflight};

const TRUE_RUNS: usize = 200;
const UNITTEST_RUNS: usize = 10;

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = dir.path().canonicalize().expect("canonical");
    std::fs::create_dir_all(workspace.join("tests")).expect("tests");
    let suite = (0..20)
        .map(|i| {
            format!(
                "    def test_{i}(self):\n        self.assertEqual({i} + 1, {})\n",
                i + 1
            )
        })
        .collect::<String>();
    std::fs::write(
        workspace.join("test_suite.py"),
        format!("import unittest\n\nclass T(unittest.TestCase):\n{suite}"),
    )
    .expect("suite");

    let tiers: Vec<Tier> = [Tier::None, Tier::Landlock, Tier::Bwrap]
        .into_iter()
        .filter(|&tier| match preflight::probe(tier) {
            Ok(()) => true,
            Err(unavailable) => {
                println!("skipped: {unavailable}");
                false
            }
        })
        .collect();
    println!("harness-exec: median wall time per command, by isolation tier\n");
    println!(
        "{:<36} {:>10} {:>14} {:>8}",
        "command × runs / tier", "median", "over none", "ratio"
    );
    for (argv, runs) in [
        (&["true"][..], TRUE_RUNS),
        (&["python3", "-m", "unittest", "-q"][..], UNITTEST_RUNS),
    ] {
        let runners: Vec<Runner> = tiers
            .iter()
            .map(|&tier| {
                Runner::new().isolation(Isolation::new(tier, Confinement::new(&workspace)))
            })
            .collect();
        let options = RunOptions::new(&workspace).timeout(Duration::from_secs(60));
        // Taken in turns, so that a load that comes and goes weighs on every tier alike.
        let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); tiers.len()];
        for _ in 0..runs {
            for (index, runner) in runners.iter().enumerate() {
                let started = Instant::now();
                let outcome = runner.run(argv, &options).expect("runs");
                assert!(
                    outcome.is_success(),
                    "{argv:?} under {}: {}",
                    tiers[index],
                    outcome.to_model_text()
                );
                times[index].push(started.elapsed());
            }
        }
        let medians: Vec<Duration> = times
            .iter_mut()
            .map(|times| {
                times.sort();
                times[times.len() / 2]
            })
            .collect();
        let base = medians[0].as_secs_f64();
        for (tier, median) in tiers.iter().zip(&medians) {
            let median = median.as_secs_f64();
            println!(
                "{:<36} {:>8.2}ms {:>+12.2}ms {:>8.2}",
                format!("{} ×{runs} / {tier}", argv.join(" ")),
                median * 1e3,
                (median - base) * 1e3,
                median / base
            );
        }
    }
}
