//! After `run` returns, no process it started is alive: after a timeout,
//! after a normal exit with work left in the background, and for processes
//! that left the process group. Without the subreaper (see `subreaper.rs`).

mod support;

use std::thread;
use std::time::Duration;

use harness_exec::Status;
use support::{NO_HANG, alive, pid_on_line, run};

const DOUBLE_FORK: &str = r#"
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        print(os.getpid(), flush=True)
        if len(sys.argv) > 1:
            devnull = os.open("/dev/null", os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
        time.sleep(100)
    os._exit(0)
os.wait()
time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 0)
"#;

#[test]
fn no_orphan_after_a_timeout() {
    let outcome = run(
        &["sh", "-c", "sleep 100 & echo $!; wait"],
        Duration::from_millis(500),
    );
    assert_eq!(
        outcome.status(),
        Status::TimedOut(Duration::from_millis(500))
    );
    let grandchild = pid_on_line(&outcome, 0);
    assert!(
        !alive(grandchild),
        "the background sleep {grandchild} survived the timeout"
    );
}

/// A background process that holds a gigabyte and ignores SIGTERM: only the
/// SIGKILL ends it, and then it takes a while to tear down its memory.
const HOLDER: &str = "python3 -c \"import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
held = b'x' * (1 << 30)
print(os.getpid(), flush=True)
time.sleep(100)\" & wait";

/// Killing is not enough: `run` must wait until the killed processes are gone.
/// The direct child is reaped with `waitpid`, but a grandchild is not, so a
/// runner that signals it and returns at once leaves it running.
#[test]
fn a_killed_process_is_gone_not_just_signalled_when_run_returns() {
    let outcome = run(&["sh", "-c", HOLDER], Duration::from_secs(5));
    assert_eq!(outcome.status(), Status::TimedOut(Duration::from_secs(5)));
    let holder = pid_on_line(&outcome, 0);
    assert!(
        !alive(holder),
        "the process {holder} was still tearing down its memory when run returned"
    );
}

#[test]
fn no_orphan_after_a_timeout_of_a_setsid_descendant() {
    let outcome = run(
        &["sh", "-c", "setsid sleep 100 & echo $!; wait"],
        Duration::from_millis(500),
    );
    assert_eq!(
        outcome.status(),
        Status::TimedOut(Duration::from_millis(500))
    );
    let escaped = pid_on_line(&outcome, 0);
    assert!(
        !alive(escaped),
        "the setsid sleep {escaped} survived the timeout"
    );
}

#[test]
fn no_orphan_after_a_timeout_of_a_double_forked_daemon() {
    let outcome = run(
        &["python3", "-c", DOUBLE_FORK, "keep-output", "100"],
        Duration::from_millis(800),
    );
    assert_eq!(
        outcome.status(),
        Status::TimedOut(Duration::from_millis(800))
    );
    let daemon = pid_on_line(&outcome, 0);
    assert!(!alive(daemon), "the daemon {daemon} survived the timeout");
}

#[test]
fn no_orphan_after_a_double_forked_daemon_when_the_command_exits() {
    // The daemon closes its output, as daemons do: the run ends with the
    // command, and the daemon goes with it.
    let outcome = run(
        &["python3", "-c", DOUBLE_FORK, "close-output"],
        Duration::from_secs(30),
    );
    assert_eq!(outcome.status(), Status::Exited(0));
    let daemon = pid_on_line(&outcome, 0);
    assert!(!alive(daemon), "the daemon {daemon} survived the run");
    assert!(outcome.duration() < NO_HANG, "{:?}", outcome.duration());
}

#[test]
fn a_background_process_holding_the_pipe_neither_delays_nor_times_out_the_run() {
    let outcome = run(
        &["sh", "-c", "sleep 100 & echo $!; echo started"],
        Duration::from_secs(30),
    );
    assert_eq!(outcome.status(), Status::Exited(0));
    assert!(
        outcome.output().ends_with("started\n"),
        "{}",
        outcome.output()
    );
    assert!(outcome.duration() < NO_HANG, "{:?}", outcome.duration());
    let background = pid_on_line(&outcome, 0);
    assert!(
        !alive(background),
        "the background sleep {background} survived the run"
    );
}

#[test]
fn output_written_by_a_background_process_during_the_drain_is_kept() {
    let outcome = run(
        &["sh", "-c", "(sleep 0.05; echo late) & echo early"],
        Duration::from_secs(30),
    );
    assert_eq!(outcome.status(), Status::Exited(0));
    assert_eq!(outcome.output(), "early\nlate\n");
}

#[test]
fn a_setsid_process_left_behind_is_killed_when_the_command_exits() {
    let outcome = run(
        &["sh", "-c", "setsid sleep 100 >/dev/null 2>&1 & echo $!"],
        Duration::from_secs(30),
    );
    assert_eq!(outcome.status(), Status::Exited(0));
    let escaped = pid_on_line(&outcome, 0);
    assert!(
        !alive(escaped),
        "the setsid sleep {escaped} survived the run"
    );
}

#[test]
fn a_group_member_that_cleared_its_environment_is_killed() {
    let script = "env -i sleep 100 >/dev/null 2>&1 & echo $!";
    let outcome = run(&["sh", "-c", script], Duration::from_secs(30));
    let unmarked = pid_on_line(&outcome, 0);
    assert!(
        !alive(unmarked),
        "the unmarked sleep {unmarked} in the group survived"
    );
}

#[test]
fn a_fork_storm_is_stopped() {
    // Forks as fast as it can until the timeout; every process goes.
    let script = "echo $$; while :; do (sleep 100 &) ; done";
    let outcome = run(&["sh", "-c", script], Duration::from_millis(500));
    assert_eq!(
        outcome.status(),
        Status::TimedOut(Duration::from_millis(500))
    );
    let storm = pid_on_line(&outcome, 0);
    assert!(!alive(storm));
    let survivors = std::fs::read_dir("/proc")
        .expect("proc")
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| alive(pid))
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let group = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(2));
            group == Some(&storm.to_string())
        })
        .count();
    assert_eq!(survivors, 0, "processes of the storm's group survived");
}

#[test]
fn other_children_of_this_process_are_left_alone() {
    // Without the subreaper, a run never touches a child it did not start,
    // even an unmarked one started while it runs.
    let running = thread::spawn(|| run(&["sleep", "0.5"], Duration::from_secs(30)));
    thread::sleep(Duration::from_millis(100));
    let mut bystander = std::process::Command::new("sleep")
        .arg("30")
        .env_clear()
        .spawn()
        .expect("spawn");
    let outcome = running.join().expect("no panic");
    let alive_after = bystander.try_wait().expect("try_wait").is_none();
    bystander.kill().expect("kill");
    bystander.wait().expect("reap");
    assert!(outcome.is_success());
    assert!(alive_after, "the bystander was killed");
}

#[test]
fn a_descendant_of_an_escapee_that_cleared_its_environment_is_killed() {
    // Without the subreaper: the marked escapee (new session) waits for a
    // child that cleared its environment. The child is found as the
    // escapee's descendant; once the escapee is killed, it would be
    // re-parented to init, unmarked, out of reach.
    let script = "setsid sh -c 'env -i sh -c \"echo \\$\\$ > pid; exec sleep 1000\" & wait' \
                  >/dev/null 2>&1 & until [ -s pid ]; do sleep 0.01; done; cat pid";
    for (then, timeout) in [
        ("", Duration::from_secs(30)),
        ("; sleep 100", Duration::from_secs(3)),
    ] {
        let outcome = run(&["sh", "-c", &format!("{script}{then}")], timeout);
        let unmarked = pid_on_line(&outcome, 0);
        assert!(
            !alive(unmarked),
            "the unmarked descendant {unmarked} survived ({:?})",
            outcome.status()
        );
    }
}

/// Ignores SIGTERM and holds memory (so that it takes a while to die once
/// killed), then writes its pid to `pid`.
const TERM_IGNORING_HOLDER: &str = "import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
held = b'x' * (256 << 20)
open('pid', 'w').write(str(os.getpid()))
time.sleep(1000)";

#[test]
fn a_descendant_that_ignores_sigterm_and_loses_its_marked_parent_is_killed() {
    // Without the subreaper: at the timeout SIGTERM ends the marked escapee,
    // which re-parents its unmarked child (it ignores SIGTERM) to init, out
    // of the tree. Found once, it is the run's: it must be gone, not just
    // signalled, when `run` returns.
    let script = "setsid sh -c 'env -i python3 -c \"$0\" & wait' \"$1\" >/dev/null 2>&1 & \
                  until [ -s pid ]; do sleep 0.01; done; cat pid; echo; sleep 100";
    let outcome = run(
        &["sh", "-c", script, "sh", TERM_IGNORING_HOLDER],
        Duration::from_secs(3),
    );
    assert_eq!(outcome.status(), Status::TimedOut(Duration::from_secs(3)));
    let unmarked = pid_on_line(&outcome, 0);
    let survived = alive(unmarked);
    if survived {
        // Leave nothing behind for the other tests.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &unmarked.to_string()])
            .status();
    }
    assert!(!survived, "{unmarked} survived the timeout");
}
