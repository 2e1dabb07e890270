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
fn the_orphans_of_another_run_are_left_to_it() {
    let _shared = subreaper();
    // The worker is orphaned (re-parented to this process) while its run
    // goes on, and an older run ends and sweeps meanwhile; the worker carries
    // its own run's marker, so the sweep leaves it.
    let older = thread::spawn(|| run(&["sleep", "0.6"], Duration::from_secs(30)));
    thread::sleep(Duration::from_millis(100));
    let script = "sh -c \"sh -c 'sleep 1; echo survived' &\"; sleep 1.5";
    let outcome = run(&["sh", "-c", script], Duration::from_secs(30));
    assert!(older.join().expect("no panic").is_success());
    assert_eq!(
        outcome.output(),
        "survived
"
    );
    assert!(outcome.duration() < NO_HANG);
}

#[test]
fn an_unmarked_orphan_older_than_a_run_is_not_that_runs() {
    let _alone = subreaper_alone();
    // The worker clears its environment and is orphaned while its run goes
    // on; the sweeping runs all start after it, so none of them takes it for
    // its own. Its own run kills it at the end.
    let script =
        "sh -c \"env -i sh -c 'sleep 1; echo survived' &\"; sleep 0.2; echo started; sleep 1.3";
    let sweeper = thread::spawn(|| {
        thread::sleep(Duration::from_millis(100));
        sweep_until(Instant::now() + Duration::from_millis(1400));
    });
    let outcome = run(&["sh", "-c", script], Duration::from_secs(30));
    sweeper.join().expect("no panic");
    assert_eq!(outcome.output(), "started\nsurvived\n");
}
