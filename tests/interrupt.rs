//! Ctrl-C: once stops cleanly after the current tool call, twice stops at once; either way
//! the run can be undone.

use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{Model, Repo, Run, Turn};

/// Sends SIGINT to `pid`, as Ctrl-C in a terminal would.
fn interrupt(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// Waits until the stub has been asked `count` chats, or 20 s.
fn wait_for_chats(model: &Model, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while model.chats().len() < count {
        assert!(
            Instant::now() < deadline,
            "the harness never asked the model"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn interrupted_run(presses: usize) -> (Repo, Run) {
    let repo = Repo::from_fixture("calc");
    let before = repo.snapshot();
    let model = Model::start();
    model.script(vec![
        Turn::Calls(vec![
            (
                "edit_file",
                json!({"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}),
            ),
            // Ignores SIGINT, as some test runners do, so the first Ctrl-C takes a moment
            // (the runner escalates to SIGTERM after 1 s) and a second one can come first.
            (
                "run_command",
                json!({"argv": ["sh", "-c", "trap '' INT; sleep 8"], "timeout_s": 60}),
            ),
        ]),
        Turn::Text("never reached"),
    ]);
    let child = repo.spawn(&["run", "--host", &model.url(), "t"]);
    wait_for_chats(&model, 1);
    // Give the edit and the start of `sleep` a moment; either way the outcome is the same.
    std::thread::sleep(Duration::from_millis(500));
    let began = Instant::now();
    for _ in 0..presses {
        interrupt(child.id());
        std::thread::sleep(Duration::from_millis(200));
    }
    let run = Run::of(child.wait_with_output().expect("harness ends"));
    assert!(
        began.elapsed() < Duration::from_secs(7),
        "stopped without waiting for the command"
    );
    assert_eq!(model.chats().len(), 1, "the model was not asked again");
    repo.harness(&["undo"]).assert_exit(0);
    assert_eq!(repo.snapshot(), before, "the run is undone");
    (repo, run)
}

#[test]
fn the_first_ctrl_c_stops_cleanly_with_the_transcript_written() {
    let (repo, run) = interrupted_run(1);
    run.assert_exit(130)
        .assert_stdout_has(&["outcome:       interrupted"]);
    run.assert_stderr_has(&["stopping after the current tool call"]);
    let outcome = repo.records("outcome");
    assert_eq!(outcome[0]["outcome"], "interrupted");
    repo.harness(&["runs"])
        .assert_exit(0)
        .assert_stdout_has(&["interrupted"]);
}

#[test]
fn the_second_ctrl_c_stops_at_once_and_the_run_can_still_be_undone() {
    let (_repo, run) = interrupted_run(2);
    run.assert_exit(130).assert_stderr_has(&["stopped at once"]);
}

/// A command deaf to every signal that can be ignored, with a child deaf too, each a
/// `sleep` of `token` seconds, which no other process on the machine sleeps ([`token`]).
fn deaf(token: &str) -> String {
    format!("trap '' INT TERM HUP; (trap '' INT TERM HUP; sleep {token}) & sleep {token}")
}

/// The `run_command` call of [`deaf`]`(token)`, allowed 120 s.
fn deaf_call(token: &str) -> String {
    json!({"argv": ["sh", "-c", deaf(token)], "timeout_s": 120}).to_string()
}

/// `harness tool` making `call` under `sandbox`, the tool's own limit as long as the call's.
fn deaf_tool<'a>(sandbox: &'a str, call: &'a str) -> [&'a str; 7] {
    [
        "tool",
        "--sandbox",
        sandbox,
        "--timeout",
        "120",
        "run_command",
        call,
    ]
}

/// A length of sleep no other test or process uses: found in `/proc/*/cmdline`, it names
/// the processes of one command whatever PID namespace they run in.
fn token() -> String {
    static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let count = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("3000.{}{count:03}", std::process::id())
}

/// The pids, as this machine's `/proc` sees them, of the running processes that sleep
/// `token` seconds.
fn sleeping(token: &str) -> Vec<String> {
    let wanted = format!("sleep\0{token}\0");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| cmdline.ends_with(wanted.as_bytes()))
        })
        .filter(|pid| is_alive(pid))
        .collect()
}

/// Waits until both sleeps of [`deaf`] run (at most 20 s).
fn wait_for_sleepers(token: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while sleeping(token).len() < 2 {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// True if process `pid` is running (neither gone nor a zombie).
fn is_alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'))
}

/// Sends `signal` (a `kill` name: INT, TERM, HUP) to `pid`.
fn signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// Asserts that no process of [`deaf`] with `token` is left once the harness has ended.
fn assert_none_outlived(token: &str, case: &str) {
    let left = sleeping(token);
    for pid in &left {
        // Killed, so that a failing test leaves nothing behind.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", pid])
            .status();
    }
    assert!(left.is_empty(), "{case}: {left:?} outlived the harness");
}

/// Once [`deaf`]'s sleeps of `token` run in the harness `child`, sends it signal `name`
/// `presses` times, then asserts that it exited 130 and left none of them running.
fn stop_and_check(child: Child, token: &str, name: &str, presses: usize, case: &str) {
    wait_for_sleepers(token);
    for _ in 0..presses {
        signal(child.id(), name);
        std::thread::sleep(Duration::from_millis(200));
    }
    let run = Run::of(child.wait_with_output().expect("harness ends"));
    assert_eq!(run.code, Some(130), "{case}\n{run}");
    assert_none_outlived(token, case);
}

/// Under Landlock and with no tier nothing but the harness ends a command it started
/// (under bwrap, `--die-with-parent` does too): whatever signal stops `harness tool`, under
/// every tier, its command and the command's children are gone when it has exited.
#[test]
fn no_command_of_harness_tool_outlives_a_signal_that_stops_it() {
    for sandbox in ["bwrap", "landlock", "none"] {
        // Ctrl-C, Ctrl-\, `kill`, a closed terminal, and a signal no one thinks of.
        for (name, presses) in [
            ("INT", 1),
            ("INT", 2),
            ("QUIT", 1),
            ("TERM", 1),
            ("HUP", 1),
            ("USR1", 1),
        ] {
            let token = token();
            let call = deaf_call(&token);
            let repo = Repo::from_fixture("calc");
            let child = repo.spawn(&deaf_tool(sandbox, &call));
            let case = format!("{sandbox}, SIG{name} ×{presses}");
            stop_and_check(child, &token, name, presses, &case);
        }
    }
}

#[test]
fn no_command_of_harness_run_outlives_a_second_ctrl_c_or_a_sigterm() {
    for (name, presses) in [("INT", 2), ("TERM", 1)] {
        let token = token();
        let repo = Repo::from_fixture("calc");
        let model = Model::start();
        model.script(vec![
            Turn::Calls(vec![(
                "run_command",
                json!({"argv": ["sh", "-c", deaf(&token)], "timeout_s": 120}),
            )]),
            Turn::Text("never reached"),
        ]);
        let child = repo.spawn(&["run", "--sandbox", "landlock", "--host", &model.url(), "t"]);
        stop_and_check(
            child,
            &token,
            name,
            presses,
            &format!("SIG{name} ×{presses}"),
        );
    }
}

#[test]
fn no_command_of_harness_mcp_outlives_a_sigterm() {
    use std::io::Write as _;

    let token = token();
    let repo = Repo::from_fixture("calc");
    let mut child = repo.spawn_with_stdin(&["mcp", "--sandbox", "landlock"]);
    let mut stdin = child.stdin.take().expect("stdin");
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "run_command",
            "arguments": {"argv": ["sh", "-c", deaf(&token)], "timeout_s": 120}}}),
    ] {
        writeln!(stdin, "{message}").expect("write");
    }
    stdin.flush().expect("flush");
    wait_for_sleepers(&token);
    signal(child.id(), "TERM");
    let run = Run::of(child.wait_with_output().expect("harness ends"));
    drop(stdin);
    assert_eq!(run.code, Some(130), "{run}");
    assert_none_outlived(&token, "mcp, SIGTERM");
}

/// `SIGKILL` gives no process a chance to stop its commands, and the kernel's out-of-memory
/// killer sends it too. The harness runs under a reaper, its parent, that stays behind:
/// whichever of the two is killed so, under every tier, no command outlives it.
#[test]
fn no_command_outlives_a_harness_killed_with_sigkill() {
    for sandbox in ["bwrap", "landlock", "none"] {
        for killed in ["harness", "reaper"] {
            let token = token();
            let call = deaf_call(&token);
            let repo = Repo::from_fixture("calc");
            let child = repo.spawn(&deaf_tool(sandbox, &call));
            let case = format!("{sandbox}, SIGKILL to the {killed}");
            wait_for_sleepers(&token);
            let harness = only_child(child.id());
            let victim = if killed == "harness" {
                harness
            } else {
                child.id()
            };
            signal(victim, "KILL");
            let run = Run::of(child.wait_with_output().expect("the reaper ends"));
            assert_eq!(run.code, None, "{case}: killed by a signal\n{run}");
            // Killed, the reaper leaves the harness its SIGTERM to act on: its commands get
            // the grace period it gives them.
            let deadline = Instant::now() + Duration::from_secs(10);
            while !sleeping(&token).is_empty() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            assert_none_outlived(&token, &case);
        }
    }
}

/// The one child of process `pid` (the harness, of its reaper), whichever thread forked it.
fn only_child(pid: u32) -> u32 {
    let mut children = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("threads") {
        let listed = std::fs::read_to_string(task.expect("a thread").path().join("children"))
            .unwrap_or_default();
        children.extend(
            listed
                .split_whitespace()
                .map(|child| child.parse::<u32>().expect("pid")),
        );
    }
    assert_eq!(children.len(), 1, "one child, the harness: {children:?}");
    children[0]
}

/// A parent that ignores `SIGCHLD` passes that on across `exec`, and the kernel then reaps
/// every child at once: before the harness set it back, each wait failed with "No child
/// processes" and no command or sandbox probe could run.
#[test]
fn a_harness_started_ignoring_sigchld_still_runs_and_waits_for_its_commands() {
    const IGNORING_SIGCHLD: &str = "import os, signal, sys; \
        signal.signal(signal.SIGCHLD, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])";
    for sandbox in ["bwrap", "landlock", "none"] {
        let repo = Repo::from_fixture("calc");
        let call = json!({"argv": ["sh", "-c", "echo ran; exit 3"]}).to_string();
        let run = repo.harness_through(
            &["python3", "-c", IGNORING_SIGCHLD],
            &["tool", "--sandbox", sandbox, "run_command", &call],
        );
        assert!(
            run.stdout.starts_with("exit=3\nran\n"),
            "{sandbox}: {} / {}",
            run.stdout,
            run.stderr
        );
    }
}

/// A parent's blocked signals pass on across `exec`: before the harness emptied its mask,
/// a harness started with `SIGINT` and `SIGTERM` blocked never saw Ctrl-C or `kill`, and
/// its command ran on.
#[test]
fn a_harness_started_with_ending_signals_blocked_still_stops_on_them() {
    const BLOCKING: &str = "import os, signal, sys; \
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT, signal.SIGTERM]); \
        os.execv(sys.argv[1], sys.argv[1:])";
    for (sandbox, name) in [("none", "INT"), ("landlock", "TERM")] {
        let token = token();
        let call = deaf_call(&token);
        let repo = Repo::from_fixture("calc");
        let child = repo.spawn_through(&["python3", "-c", BLOCKING], &deaf_tool(sandbox, &call));
        let case = format!("{sandbox}, SIG{name} blocked by the parent");
        stop_and_check(child, &token, name, 1, &case);
    }
}
