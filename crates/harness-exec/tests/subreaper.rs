//! With this process a child subreaper, processes that left the process group
//! *and* cleared their environment are still found, and the runner reaps
//! what is re-parented to it.
//!
//! The subreaper is process-wide, so these tests live in their own test
//! binary, and each of them stays correct while the others run beside it in
//! other threads, except one: an unmarked orphan belongs to any run older
//! than it, so that test runs alone.

mod support;

use std::sync::{Once, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread;
use std::time::{Duration, Instant};

use harness_exec::{RunOptions, Runner, Status, enable_subreaper};
use support::{NO_HANG, alive, exists, pid_on_line, run};

/// Held shared by the tests that may run side by side, exclusively by the
/// one that may not.
static ALONE: RwLock<()> = RwLock::new(());

fn subreaper() -> RwLockReadGuard<'static, ()> {
    enable();
    ALONE.read().unwrap_or_else(PoisonError::into_inner)
}

fn subreaper_alone() -> RwLockWriteGuard<'static, ()> {
    enable();
    ALONE.write().unwrap_or_else(PoisonError::into_inner)
}

fn enable() {
    static ENABLE: Once = Once::new();
    ENABLE.call_once(|| enable_subreaper().expect("PR_SET_CHILD_SUBREAPER"));
}

#[test]
fn an_escapee_without_group_or_marker_is_killed_and_reaped() {
    let _shared = subreaper();
    let script = "setsid env -i sleep 100 >/dev/null 2>&1 & echo $!";
    let outcome = run(&["sh", "-c", script], Duration::from_secs(30));
    assert_eq!(outcome.status(), Status::Exited(0));
    let escaped = pid_on_line(&outcome, 0);
    // Re-parented to this process, it must be reaped too, not left a zombie.
    assert!(
        !exists(escaped),
        "the escapee {escaped} is still there (alive: {})",
        alive(escaped)
    );
}

#[test]
fn an_escapee_without_group_or_marker_is_killed_at_the_timeout() {
    let _shared = subreaper();
    let script = "sh -c 'setsid env -i sleep 100 & echo $!'; sleep 100";
    let outcome = run(&["sh", "-c", script], Duration::from_millis(500));
    assert_eq!(
        outcome.status(),
        Status::TimedOut(Duration::from_millis(500))
    );
    let escaped = pid_on_line(&outcome, 0);
    assert!(
        !exists(escaped),
        "the escapee {escaped} is still there (alive: {})",
        alive(escaped)
    );
}

#[test]
fn an_orphan_that_exits_by_itself_is_reaped() {
    let _shared = subreaper();
    // The inner shell outlives the outer one, then exits on its own while
    // the run drains its output: it becomes a zombie child of this process.
    let script = "sh -c 'echo $$; exec sleep 0.1' & exit 0";
    let outcome = run(&["sh", "-c", script], Duration::from_secs(30));
    assert_eq!(outcome.status(), Status::Exited(0));
    let orphan = pid_on_line(&outcome, 0);
    assert!(!exists(orphan), "the orphan {orphan} was left a zombie");
}

/// Runs `true` again and again until `until`: each run sweeps for orphans.
fn sweep_until(until: Instant) {
    let dir = tempfile::tempdir().expect("tempdir");
    let runner = Runner::new();
    while Instant::now() < until {
        let outcome = runner
            .run(&["true"], &RunOptions::new(dir.path()))
            .expect("runs");
        assert!(outcome.is_success());
    }
}

#[test]
fn the_direct_child_of_another_run_is_left_alone() {
    let _shared = subreaper();
    // An older run ends, and sweeps, while a newer run's direct child is
    // running without a marker (`env -i`): only the registry of running
    // children tells the sweep that it is no orphan.
    let older = thread::spawn(|| run(&["sleep", "0.5"], Duration::from_secs(30)));
    thread::sleep(Duration::from_millis(100));
    let outcome = run(&["env", "-i", "/bin/sleep", "1"], Duration::from_secs(30));
    assert!(older.join().expect("no panic").is_success());
    assert_eq!(outcome.status(), Status::Exited(0));
}

#[test]
fn the_orphans_of_another_run_are_not_protected_by_its_marker() {
    let _alone = subreaper_alone();
    // The worker is orphaned (re-parented to this process) while its run
    // goes on, and an older run ends and sweeps meanwhile. The worker carries
    // its own run's real marker, but a marker proves nothing (a process can
    // read another's environment and copy it): the sweep kills the orphan.
    let older = thread::spawn(|| run(&["sleep", "0.6"], Duration::from_secs(30)));
    thread::sleep(Duration::from_millis(100));
    let script = "sh -c \"sh -c 'sleep 1; echo survived' &\"; sleep 1.5; echo done";
    let outcome = run(&["sh", "-c", script], Duration::from_secs(30));
    assert!(older.join().expect("no panic").is_success());
    assert_eq!(outcome.output(), "done\n");
}

#[test]
fn an_orphan_older_than_a_run_is_still_killed_by_it() {
    let _alone = subreaper_alone();
    // The worker clears its environment and is orphaned while its run goes
    // on; runs that start after it sweep, and its age does not protect it:
    // only the direct child of a run in progress is left alone.
    let script =
        "sh -c \"env -i sh -c 'sleep 1; echo survived' &\"; sleep 0.2; echo started; sleep 1.3";
    let sweeper = thread::spawn(|| {
        thread::sleep(Duration::from_millis(400));
        sweep_until(Instant::now() + Duration::from_millis(100));
    });
    let outcome = run(&["sh", "-c", script], Duration::from_secs(30));
    sweeper.join().expect("no panic");
    assert_eq!(outcome.output(), "started\n");
}

/// The timeout of the timed-out variants: long enough for a loaded machine
/// to start the detached process (python included) and print its pid.
const DETACH_TIMEOUT: Duration = Duration::from_secs(3);

/// A script that detaches a process in a new session with only the
/// environment `env` (`env -i`), waits until it has written its pid to
/// `pid`, prints that pid, then runs `then`.
///
/// The detached process is an orphan of this process from its start, and any
/// other run that ends meanwhile kills it, maybe before it has written its
/// pid: the tests that wait for an orphan's pid run alone.
fn detached(env: &str, then: &str) -> String {
    format!(
        "env -i {env} setsid -f sh -c 'echo $$ > pid; exec sleep 1000' >/dev/null 2>&1; \
         until [ -s pid ]; do sleep 0.01; done; cat pid; {then}"
    )
}

/// Runs `script` twice: ending on its own while the detached process lives,
/// and timed out; asserts the detached process is gone (killed and reaped)
/// when `run` returns.
fn assert_no_survivor(script: impl Fn(&str) -> String) {
    let exits = run(&["sh", "-c", &script("true")], Duration::from_secs(30));
    assert_eq!(exits.status(), Status::Exited(0), "{}", exits.output());
    let timed_out = run(&["sh", "-c", &script("sleep 100")], DETACH_TIMEOUT);
    assert_eq!(
        timed_out.status(),
        Status::TimedOut(DETACH_TIMEOUT),
        "{}",
        timed_out.output()
    );
    for outcome in [exits, timed_out] {
        let escaped = pid_on_line(&outcome, 0);
        assert!(
            !exists(escaped),
            "the detached process {escaped} survived the run (alive: {})",
            alive(escaped)
        );
    }
}

/// The script line that puts this run's own marker name in `$M`.
const OWN_MARKER: &str = "M=$(env | sed -n 's/^\\(HARNESS_EXEC_RUN_[^=]*\\)=1$/\\1/p' | tail -n 1)";

macro_rules! forged {
    ($($name:ident: $env:expr;)*) => {$(
        #[test]
        fn $name() {
            let _alone = subreaper_alone();
            assert_no_survivor(|then| format!("{OWN_MARKER}; {}", detached($env, then)));
        }
    )*};
}

forged! {
    // The issue's example: any marker-shaped name.
    a_forged_marker_does_not_protect_a_detached_process: "HARNESS_EXEC_RUN_x=1";
    a_well_formed_forged_marker_does_not_protect: "HARNESS_EXEC_RUN_0123456789abcdef0123456789abcdef=1";
    several_forged_markers_do_not_protect: "HARNESS_EXEC_RUN_a=1 HARNESS_EXEC_RUN_b=1 HARNESS_EXEC_RUN_=1";
    the_own_marker_altered_does_not_protect: "${M}0=1 ${M%?}=1";
    the_own_marker_with_another_value_does_not_protect: "$M=2";
    an_empty_environment_does_not_protect: "";
}

#[test]
fn the_marker_of_a_finished_run_does_not_protect() {
    let _alone = subreaper_alone();
    let finished = run(
        &["sh", "-c", &format!("{OWN_MARKER}; echo $M")],
        Duration::from_secs(30),
    );
    let marker = finished.output().trim().to_owned();
    assert!(marker.starts_with("HARNESS_EXEC_RUN_"), "{marker:?}");
    assert_no_survivor(|then| detached(&format!("{marker}=1"), then));
}

#[test]
fn the_marker_of_a_live_run_does_not_protect() {
    let _alone = subreaper_alone();
    // Another run is in progress; a command of this run copies its marker
    // from its environment, as any process of the same user can.
    let dir = tempfile::tempdir().expect("tempdir");
    let other = {
        let dir = dir.path().to_owned();
        thread::spawn(move || {
            let script =
                format!("{OWN_MARKER}; echo $M > marker.tmp; mv marker.tmp marker; sleep 4");
            Runner::new()
                .run(&["sh", "-c", &script], &RunOptions::new(&dir))
                .expect("runs")
        })
    };
    let marker_file = dir.path().join("marker");
    let deadline = Instant::now() + NO_HANG;
    while !marker_file.exists() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
    let marker = std::fs::read_to_string(&marker_file).expect("the other run's marker");
    let marker = marker.trim();
    assert!(marker.starts_with("HARNESS_EXEC_RUN_"), "{marker:?}");
    assert_no_survivor(|then| detached(&format!("{marker}=1"), then));
    assert!(other.join().expect("no panic").is_success());
}

/// Forks, leaves the session, forks again and execs `sleep` with only a
/// forged marker in its environment; the first child exits, so the daemon
/// is orphaned at once. Prints the daemon's pid, then sleeps `argv[1]`.
const FORGED_DAEMON: &str = r#"
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        devnull = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        with open("pid.tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename("pid.tmp", "pid")
        os.execve("/bin/sleep", ["sleep", "1000"], {"HARNESS_EXEC_RUN_x": "1"})
    os._exit(0)
os.wait()
while not os.path.exists("pid"):
    time.sleep(0.01)
print(open("pid").read(), flush=True)
time.sleep(float(sys.argv[1]))
"#;

#[test]
fn a_double_forked_daemon_with_a_forged_marker_is_killed() {
    let _alone = subreaper_alone();
    for (linger, timeout, status) in [
        ("0", Duration::from_secs(30), Status::Exited(0)),
        ("100", DETACH_TIMEOUT, Status::TimedOut(DETACH_TIMEOUT)),
    ] {
        let outcome = run(&["python3", "-c", FORGED_DAEMON, linger], timeout);
        assert_eq!(outcome.status(), status, "{}", outcome.output());
        let daemon = pid_on_line(&outcome, 0);
        assert!(
            !exists(daemon),
            "the daemon {daemon} survived (alive: {})",
            alive(daemon)
        );
    }
}

/// A process whose main thread exits while another thread runs on: its
/// leader shows as a zombie, but the process is alive.
const THREAD_OUTLIVES_MAIN: &str = "import ctypes, os, threading, time
threading.Thread(target=lambda: time.sleep(1000)).start()
open('pid.tmp', 'w').write(str(os.getpid()))
os.rename('pid.tmp', 'pid')
ctypes.CDLL(None).pthread_exit(None)";

#[test]
fn a_process_whose_main_thread_exited_is_still_killed() {
    // Alone: its detached python carries a forged marker, so the sweep at the end of any
    // other test's run kills it, and on a loaded machine python can take long enough to
    // start that this happens before it writes its pid; the script then waits for the pid
    // until its timeout (seen once in a `cargo test --workspace` beside an eval).
    let _alone = subreaper_alone();
    assert_no_survivor(|then| {
        format!(
            "rm -f pid; env -i HARNESS_EXEC_RUN_x=1 setsid -f python3 -c \"{THREAD_OUTLIVES_MAIN}\" \
             >/dev/null 2>&1; until [ -s pid ]; do sleep 0.01; done; cat pid; {then}"
        )
    });
}

/// Level `$1` of a chain of processes, each in a new session with a
/// cleared environment, each waiting for the next; the last one writes its
/// pid to `pid` and sleeps.
const CHAIN: &str = "cat > chain.sh <<'EOF'
if [ \"$1\" -eq 0 ]; then echo $$ > pid; exec sleep 1000; fi
env -i setsid /bin/sh ./chain.sh $(($1 - 1)) & wait
EOF";

#[test]
fn a_deep_chain_of_escapees_goes_in_one_sweep() {
    let _alone = subreaper_alone();
    // Thirty levels: more than the 16 passes the killer makes, if each pass
    // reached only the level just orphaned.
    assert_no_survivor(|then| {
        format!(
            "{CHAIN}\nsh ./chain.sh 30 >/dev/null 2>&1 & until [ -s pid ]; do sleep 0.01; done; cat pid; {then}"
        )
    });
}
