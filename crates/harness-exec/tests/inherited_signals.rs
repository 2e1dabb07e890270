//! A command starts with every signal at its default action, whatever the runner's own
//! process ignores: a harness started where `SIGINT` is ignored (a background job of a
//! script, `nohup`, some CI runners) still gives its commands an interrupt they can
//! handle, under every tier.
//!
//! A test binary of its own, because it makes its whole process ignore `SIGINT` and
//! `SIGQUIT`.

#![allow(unsafe_code)]

use std::thread;
use std::time::Duration;

mod support;

use support::real_tiers;

use harness_exec::{Confinement, Isolation, Policy, RunOptions, Runner, Status, Tier};

#[test]
fn a_command_neither_inherits_the_signals_the_runner_ignores_nor_misses_its_interrupt() {
    // SAFETY: SIG_IGN installs no handler, and this binary runs no other test that
    // could rely on these signals.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
    }
    for tier in [Tier::None].into_iter().chain(real_tiers()) {
        // Outside /tmp, so that bwrap's private /tmp does not hide it.
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let workspace = dir.path().canonicalize().expect("canonical");
        let runner = || {
            Runner::new()
                .policy(Policy::allowlist(["sh"]))
                .isolation(Isolation::new(tier, Confinement::new(&workspace)))
        };
        let options = RunOptions::new(&workspace).timeout(Duration::from_secs(30));

        let ignored = "while read -r key value; do \
                       if [ \"$key\" = SigIgn: ]; then echo \"$value\"; fi; done < /proc/$$/status";
        let outcome = runner()
            .run(&["sh", "-c", ignored], &options)
            .expect("runs");
        assert_eq!(outcome.status(), Status::Exited(0), "{tier:?}: {outcome:?}");
        assert_eq!(
            outcome.output(),
            "0000000000000000\n",
            "{tier:?}: the command ignores no signal"
        );

        let runner = runner();
        let interrupter = runner.interrupter();
        let script = "trap 'echo got INT; exit 130' INT; touch ready; while :; do sleep 0.05; done";
        let running = {
            let options = options.clone();
            thread::spawn(move || runner.run(&["sh", "-c", script], &options).expect("runs"))
        };
        for _ in 0..500 {
            if workspace.join("ready").exists() && interrupter.interrupt() > 0 {
                break;
            }
            thread::sleep(Duration::from_millis(20));
        }
        let outcome = running.join().expect("no panic");
        assert_eq!(outcome.status(), Status::Interrupted, "{tier:?}");
        // Under bwrap too, where the command runs in a session of its own
        // (`--new-session`), outside the process group the runner started.
        assert_eq!(
            outcome.output(),
            "got INT\n",
            "{tier:?}: the command handled the interrupt its own way"
        );
    }
}
