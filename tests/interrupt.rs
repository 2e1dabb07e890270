//! Ctrl-C: once stops cleanly after the current tool call, twice stops at once; either way
//! the run can be undone.

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
