//! A scripted model fixes the fixture's failing test: the run is verified, reviewable,
//! undoable and redoable.

use serde_json::json;

use crate::support::{Model, Repo, Run, Turn, program};

pub(crate) const VERIFY: &str = "python3 -m unittest -q";

pub(crate) fn fix_script() -> Vec<Turn> {
    vec![
        Turn::call("read_file", json!({"path": "calc.py"})),
        Turn::call(
            "edit_file",
            json!({"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}),
        ),
        Turn::call(
            "run_command",
            json!({"argv": ["python3", "-m", "unittest", "-q"]}),
        ),
        Turn::Text("Fixed add in calc.py: it subtracted. The tests pass."),
    ]
}

#[test]
fn a_scripted_fix_is_verified_then_diffed_undone_and_redone() {
    let repo = Repo::from_fixture("calc");
    let before = repo.snapshot();
    let model = Model::start();
    model.script(fix_script());

    let run = repo.harness(&[
        "run",
        "--host",
        &model.url(),
        "--verify",
        VERIFY,
        "make the failing test pass",
    ]);
    // The head start's run of the tests was quick, so they ran again right after the edit,
    // and their pass ended the run: the model's own run of them was never asked for.
    run.assert_exit(0).assert_stdout_has(&[
        "▸ read_file calc.py",
        "▸ edit_file calc.py  +1 −1",
        "(check 1, after an edit, as the check is quick)",
        "✔ verification passed  exit=0",
        "outcome:       verified — `python3 -m unittest -q` exited 0 (the check after step 2)",
        "ran 1 time to check the model's work; the last run passed (exit 0)",
        "files changed: calc.py (+1 −1)",
    ]);
    assert!(
        !run.stdout
            .contains("▸ run_command python3 -m unittest -q  exit=0"),
        "{run}"
    );

    // Commands ran without writing Python bytecode caches, which an edit within the same
    // second could leave stale.
    assert!(!repo.root.join("__pycache__").exists());

    // The verification really ran, after the edit, and passed.
    let verifications = repo.records("verification");
    assert_eq!(verifications.len(), 1, "{verifications:?}");
    assert_eq!(
        verifications[0]["argv"],
        json!(["python3", "-m", "unittest", "-q"])
    );
    assert_eq!(verifications[0]["passed"], true);
    let output = verifications[0]["output"].as_str().unwrap();
    assert!(
        output.starts_with("exit=0\n") && output.contains("OK"),
        "{output}"
    );
    let outcome = repo.records("outcome");
    assert_eq!(outcome[0]["outcome"], "verified");
    // Before the model's first turn the same command ran once, and failed: the head start.
    let head_start: Vec<_> = repo
        .records("tool")
        .into_iter()
        .filter(|record| record["step"] == 0)
        .collect();
    let head_start_calls: Vec<&str> = head_start
        .iter()
        .map(|record| {
            record["summary"]
                .as_str()
                .unwrap()
                .split("  ")
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(
        head_start_calls,
        [
            "list_dir .",
            "run_command python3 -m unittest -q",
            "read_file test_calc.py",
            "read_file README.md",
            "read_file calc.py"
        ],
        "the listing, the tests' output, the file the failure names, then the other files"
    );
    assert!(
        head_start[1]["result"]
            .as_str()
            .unwrap()
            .starts_with("exit=1\n")
    );

    // The model read the file inside a tool message. The check after its edit passed, so
    // the harness did not ask the model again.
    let chats = model.chats();
    assert_eq!(chats.len(), 2);
    let messages = chats[1]["messages"].as_array().unwrap();
    let read = messages.last().unwrap();
    assert_eq!(read["role"], "tool");
    assert!(read["content"].as_str().unwrap().contains("return a - b"));

    // harness diff shows exactly the fix, as git itself sees it.
    let diff = repo.harness(&["diff"]);
    diff.assert_exit(0);
    let changed: Vec<&str> = diff
        .stdout
        .lines()
        .filter(|line| {
            (line.starts_with('+') || line.starts_with('-'))
                && !line.starts_with("+++")
                && !line.starts_with("---")
        })
        .collect();
    assert_eq!(
        changed,
        ["-    return a - b", "+    return a + b"],
        "{}",
        diff.stdout
    );
    assert!(
        diff.stdout.contains("--- a/calc.py\n+++ b/calc.py\n"),
        "{}",
        diff.stdout
    );
    assert_eq!(
        diff.stdout.matches("diff --git").count(),
        1,
        "one file changed"
    );
    repo.harness(&["diff", "--stat"])
        .assert_exit(0)
        .assert_stdout_has(&["M  calc.py  +1 −1\n1 file changed, +1 −1\n"]);

    // harness undo restores the repository byte for byte; harness redo brings the fix back.
    repo.harness(&["undo"])
        .assert_exit(0)
        .assert_stdout_has(&["restored 1 file: calc.py"]);
    assert_eq!(repo.snapshot(), before);
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    // A second undo has nothing to do, and leaves the first one's redo in place.
    repo.harness(&["undo"])
        .assert_exit(0)
        .assert_stdout_has(&["already as it was before run", "nothing to undo"]);
    repo.harness(&["redo"])
        .assert_exit(0)
        .assert_stdout_has(&["restored 1 file: calc.py"]);
    assert!(repo.read("calc.py").contains("return a + b"));
    assert!(!repo.read("calc.py").contains("return a - b"));

    // The run is listed, and its transcript reads back.
    repo.harness(&["runs"])
        .assert_exit(0)
        .assert_stdout_has(&["verified", "make the failing test pass"]);
    repo.harness(&["show"]).assert_exit(0).assert_stdout_has(&[
        "task: make the failing test pass",
        "edit_file calc.py  +1 −1",
        "verification 1: `python3 -m unittest -q` passed",
        "; after an edit, as the check is quick)",
        "outcome: verified",
    ]);

    // And accept commits it.
    repo.harness(&["accept"])
        .assert_exit(0)
        .assert_stdout_has(&["committed run"]);
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    assert!(repo.git(&["show", "HEAD:calc.py"]).contains("return a + b"));
}

#[test]
fn the_boundary_statement_opens_every_run_once() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    model.script(vec![Turn::Text("Nothing to do.")]);
    let run = repo.harness(&["run", "--host", &model.url(), "look around"]);
    run.assert_exit(1);
    let statement = "Path confinement and a command policy stop accidents, not an adversary";
    let program = program();
    assert_eq!(run.stdout.matches(statement).count(), 1, "{run}");
    assert!(run.stdout.find(statement) < run.stdout.find("look around").or(Some(usize::MAX)));
    run.assert_stdout_has(&[
        "workspace:  ",
        "policy:     a blocklist of accidents",
        &format!("isolation:  bwrap ({program} sandbox explain --sandbox bwrap); network: none"),
        "model:      qwen2.5-coder:7b via Ollama at http://127.0.0.1:",
        "verify:     none",
        "outcome:       unverified",
        "none was given, so nothing checked the model's claim",
        &format!("{program} diff "),
        &format!("{program} undo "),
    ]);
    assert!(
        run.stdout
            .trim_end()
            .lines()
            .last()
            .unwrap_or_default()
            .contains(" show "),
        "the summary's last line is the transcript's command\n{run}"
    );
    // Not a terminal: no spinner, and (NO_COLOR or not) no escape codes.
    assert!(!run.stdout.contains("waiting for the model"), "{run}");
    assert!(!run.stdout.contains('\x1b'), "{run}");
}

#[test]
fn json_output_is_one_event_per_line() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    model.script(fix_script());
    let run = repo.harness(&[
        "run",
        "--json",
        "--host",
        &model.url(),
        "--verify",
        VERIFY,
        "fix it",
    ]);
    run.assert_exit(0);
    let events: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?}: {e}")))
        .collect();
    assert_eq!(events[0]["event"], "run");
    assert!(
        events[0]["boundary"]
            .as_str()
            .unwrap()
            .contains("not an adversary")
    );
    // Where bubblewrap works (here, and on CI), `auto` runs every command under it.
    assert_eq!(events[0]["isolation"], "bwrap");
    let last = events.last().unwrap();
    assert_eq!(last["event"], "summary");
    assert_eq!(last["outcome"], "verified");
    assert_eq!(last["exit_code"], 0);
    assert_eq!(
        last["files_changed"],
        json!([{"path": "calc.py", "added": 1, "removed": 1}])
    );
    assert!(
        last["commands"]["undo"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{} undo ", program()))
    );
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    for kind in [
        "started",
        "tool_finished",
        "checkpoint",
        "verification_finished",
        "finished",
    ] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
}

#[test]
fn configuration_comes_from_harness_toml_and_flags_win() {
    let repo = Repo::from_fixture("calc");
    repo.file(
        "harness.toml",
        "model = \"from-config\"\nverify = \"python3 -m unittest -q\"\n",
    );
    repo.git(&["add", "harness.toml"]);
    repo.git(&["commit", "--quiet", "-m", "config"]);
    // A repository's file chooses the model once the user trusts it (crate::trust).
    repo.harness(&["trust"]).assert_exit(0);
    let model = Model::start();
    model.script(vec![
        Turn::Text("Done."),
        Turn::Text("Done."),
        Turn::Text("Done."),
        Turn::Text("Done."),
    ]);
    let run = repo.harness(&["run", "--attempts", "1", "--host", &model.url(), "fix it"]);
    run.assert_exit(1)
        .assert_stdout_has(&["verify:     python3 -m unittest -q", "verification failed"]);
    assert_eq!(model.chats()[0]["model"], "from-config");
    // Steady sampling and a bounded answer, whatever the server's defaults.
    assert_eq!(model.chats()[0]["options"]["temperature"], 0.2);
    assert_eq!(model.chats()[0]["options"]["num_predict"], 1024);

    let model = Model::start();
    model.script(vec![Turn::Text("Done.")]);
    let run = repo.harness(&[
        "run",
        "--attempts",
        "1",
        "--host",
        &model.url(),
        "--model",
        "from-flag",
        "--verify",
        "true",
        "fix it",
    ]);
    run.assert_exit(0);
    assert_eq!(model.chats()[0]["model"], "from-flag");
}

#[test]
fn the_model_cannot_rewrite_the_configuration_of_its_next_run() {
    let repo = Repo::from_fixture("calc");
    repo.file("harness.toml", "max_steps = 10\n");
    repo.git(&["add", "harness.toml"]);
    repo.git(&["commit", "--quiet", "-m", "config"]);
    let model = Model::start();
    model.script(vec![
        Turn::call(
            "write_file",
            json!({"path": "harness.toml", "content": "allow = [\"sh\"]\n", "overwrite": true}),
        ),
        Turn::Text("Done."),
    ]);
    repo.harness(&["run", "--host", &model.url(), "t"])
        .assert_exit(1);
    assert_eq!(repo.read("harness.toml"), "max_steps = 10\n");
    let tool = &repo
        .records("tool")
        .into_iter()
        .find(|r| r["tool"] == "write_file")
        .unwrap();
    assert_eq!(tool["is_error"], true);
}

#[test]
fn the_user_configuration_applies_and_the_projects_file_and_the_flags_win_over_it() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    // The user's file names the server: a run without --host reaching the stub proves it
    // was read. Its budgets reach the loop too: no head start, two failed calls end a run.
    let user = repo.outer.join("home/.config/harness");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("config.toml"),
        format!(
            "host = \"{}\"\nmodel = \"from-user\"\nhead_start_chars = 0\nmax_failed_calls = 2\n",
            model.url()
        ),
    )
    .unwrap();
    repo.file("harness.toml", "model = \"from-project\"\n");
    repo.git(&["add", "harness.toml"]);
    repo.git(&["commit", "--quiet", "-m", "config"]);
    repo.harness(&["trust"]).assert_exit(0);
    model.script(vec![
        Turn::call("no_such_tool", json!({})),
        Turn::call("read_file", json!({"path": "/etc/hostname"})),
        Turn::Text("never asked"),
    ]);

    let run = repo.harness(&["run", "--attempts", "1", "t"]);
    run.assert_exit(1).assert_stdout_has(&[
        "model:      from-project via Ollama",
        "config/harness/config.toml, ",
        "outcome:       stuck — 2 tool calls in a row failed",
    ]);
    assert!(
        run.stdout
            .contains(&format!("{}", repo.root.join("harness.toml").display()))
    );
    assert_eq!(
        model.chats().len(),
        2,
        "the run ended after the second failed call"
    );
    assert_eq!(model.chats()[0]["model"], "from-project");
    assert!(
        repo.records("tool")
            .iter()
            .all(|record| record["step"] != 0),
        "head_start_chars = 0 turns the head start off"
    );

    let model_of_flag = Model::start();
    model_of_flag.script(vec![Turn::Text("Done.")]);
    repo.harness(&[
        "run",
        "--attempts",
        "1",
        "--host",
        &model_of_flag.url(),
        "--model",
        "from-flag",
        "t",
    ])
    .assert_exit(1)
    .assert_stdout_has(&["outcome:       unverified"]);
    assert_eq!(model_of_flag.chats()[0]["model"], "from-flag");
    assert_eq!(model.chats().len(), 2, "--host won over the user's host");
}

/// A small model's usual answer: no tool call, the fixed file in a fenced block under its
/// name. With the default edit format it is applied through the tools, shown as a diff,
/// checkpointed, verified, and undone like any edit; with `--edit-format tools` it changes
/// nothing.
/// `--attempts 2`: the first attempt makes a wrong fix and a stray file and runs out of
/// steps; both are reverted, the second attempt starts afresh and is verified, and the run
/// is still one run to diff and undo, back to the user's own uncommitted edit.
#[test]
fn max_checks_is_how_many_failed_checks_end_an_attempt() {
    let repo = Repo::from_fixture("calc");
    for (max_checks, requests) in [("1", 1), ("2", 2)] {
        let model = Model::start();
        model.script((0..4).map(|_| Turn::Text("Done.")).collect());
        let run = repo.harness(&[
            "run",
            "--host",
            &model.url(),
            "--verify",
            VERIFY,
            "--attempts",
            "1",
            "--max-checks",
            max_checks,
            "fix it",
        ]);
        run.assert_exit(1)
            .assert_stdout_has(&["verification failed"]);
        assert_eq!(model.chats().len(), requests, "--max-checks {max_checks}");
    }
}

#[test]
fn a_failed_attempt_is_reverted_and_the_next_is_verified_then_undone_as_one_run() {
    let repo = Repo::from_fixture("calc");
    repo.file("README.md", "the user's uncommitted words\n");
    let before = repo.snapshot();
    // Checks on "done" only, as the user's configuration asks: the attempts are counted by
    // their steps.
    repo.user_config("quick_check = false\n");
    let model = Model::start();
    model.script(vec![
        Turn::call(
            "edit_file",
            json!({"path": "calc.py", "old_text": "return a - b", "new_text": "return a * b"}),
        ),
        Turn::call(
            "write_file",
            json!({"path": "scratch.py", "content": "x = 1\n"}),
        ),
        Turn::call("read_file", json!({"path": "calc.py"})),
        Turn::call(
            "edit_file",
            json!({"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}),
        ),
        Turn::call(
            "run_command",
            json!({"argv": ["python3", "-m", "unittest", "-q"]}),
        ),
    ]);

    let run = repo.harness(&[
        "run",
        "--host",
        &model.url(),
        "--verify",
        VERIFY,
        "--allow-dirty",
        "--max-steps",
        "3",
        "--attempts",
        "2",
        "make the failing test pass",
    ]);
    run.assert_exit(0).assert_stdout_has(&[
        "↺ attempt 2 of 2: the last one ended step limit",
        "its changes were reverted (2 paths)",
        "outcome:       verified",
        "steps:         5 in 2 attempts, each but the last reverted",
        "files changed: calc.py (+1 −1)",
    ]);
    assert!(repo.read("calc.py").contains("return a + b"));
    assert!(!repo.root.join("scratch.py").exists());

    // The second attempt began a new conversation, told how the first ended, without it.
    let chats = model.chats();
    assert_eq!(chats.len(), 5);
    let second = chats[3]["messages"].to_string();
    assert!(second.contains("This is attempt 2 of 2"), "{second}");
    assert!(second.contains("ran out of steps"), "{second}");
    assert!(!second.contains("scratch.py"), "{second}");
    // The head start, the harness's own step 0, ran once: the second attempt opened with
    // the first one's messages, word for word, and one message of its own.
    let head_starts = repo
        .records("tool")
        .into_iter()
        .filter(|record| record["step"] == 0)
        .count();
    assert_eq!(head_starts, 5, "five calls, for the first attempt only");
    let opening = chats[0]["messages"].as_array().expect("messages");
    let reopened = chats[3]["messages"].as_array().expect("messages");
    assert_eq!(reopened.len(), opening.len());
    assert_eq!(reopened[..opening.len() - 1], opening[..opening.len() - 1]);
    let attempts = repo.records("attempt");
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    assert_eq!(attempts[0]["previous"], "step_limit");
    assert_eq!(repo.records("outcome")[0]["attempts"], 2);
    repo.harness(&["show"])
        .assert_exit(0)
        .assert_stdout_has(&["↺ attempt 2: the last one ended step limit"]);

    // One run: its diff is the last attempt's, its undo brings back the user's edit.
    repo.harness(&["diff", "--stat"])
        .assert_exit(0)
        .assert_stdout_has(&["M  calc.py  +1 −1\n1 file changed, +1 −1\n"]);
    repo.harness(&["undo"]).assert_exit(0);
    assert_eq!(repo.snapshot(), before);
}

#[test]
fn a_whole_file_in_the_answer_is_applied_verified_and_undone_like_a_tool_edit() {
    let repo = Repo::from_fixture("calc");
    let before = repo.snapshot();
    let fixed = repo.read("calc.py").replace("return a - b", "return a + b");
    let answer: &'static str = Box::leak(
        format!("The bug is in add.\n\ncalc.py\n```python\n{}```\n", fixed).into_boxed_str(),
    );

    let model = Model::start();
    model.script(vec![Turn::Text(answer)]);
    let run = repo.harness(&[
        "run",
        "--attempts",
        "1",
        "--host",
        &model.url(),
        "--verify",
        VERIFY,
        "fix add",
    ]);
    run.assert_exit(0).assert_stdout_has(&[
        "edits:      tool calls, or whole files and search/replace blocks written into answers",
        "▸ write_file calc.py  +1 −1",
        "+    return a + b",
        "verification passed",
        "files changed: calc.py (+1 −1)",
    ]);
    assert_eq!(repo.read("calc.py"), fixed);
    let tools = repo.records("tool");
    let block = tools.last().expect("the block's call is recorded");
    assert_eq!(block["origin"], "edit_block");
    assert_eq!(block["tool"], "write_file");
    repo.harness(&["undo"]).assert_exit(0);
    assert_eq!(repo.snapshot(), before);

    let model = Model::start();
    model.script(vec![
        Turn::Text(answer),
        Turn::Text(answer),
        Turn::Text(answer),
    ]);
    let run = repo.harness(&[
        "run",
        "--attempts",
        "1",
        "--host",
        &model.url(),
        "--verify",
        VERIFY,
        "--edit-format",
        "tools",
        "fix add",
    ]);
    run.assert_exit(1)
        .assert_stdout_has(&["edits:      tool calls only"]);
    assert_eq!(repo.snapshot(), before);
}

/// A model that cannot fix the code "fixes" the test: the file tools refuse, and when a
/// command does it anyway, the passing verification is not counted as done.
#[test]
fn test_code_is_not_the_tools_to_change_and_a_command_that_changes_it_is_not_done() {
    let repo = Repo::from_fixture("calc");
    let before = repo.snapshot();
    let weaken =
        json!({"path": "test_calc.py", "old_text": "add(2, 3), 5", "new_text": "add(2, 3), -1"});
    let run = one_attempt(
        &repo,
        vec![
            Turn::call("edit_file", weaken.clone()),
            Turn::Text("Done."),
            Turn::Text("Done."),
            Turn::Text("Done."),
        ],
        VERIFY,
        &[],
    );
    run.assert_exit(1).assert_stdout_has(&[
        "▸ edit_file test_calc.py  error",
        "test_calc.py is a test file, and the harness does not let the tools change test code",
    ]);
    assert_eq!(repo.snapshot(), before, "{run}");

    // A command gets past the file tools: reported, and not counted as done.
    let run = one_attempt(
        &repo,
        vec![
            Turn::call(
                "run_command",
                json!({"argv": ["sed", "-i", "s/add(2, 3), 5/add(2, 3), -1/", "test_calc.py"]}),
            ),
            Turn::Text("Done."),
        ],
        VERIFY,
        &[],
    );
    run.assert_exit(1).assert_stdout_has(&[
        "✘ verification does not count  exit=0",
        "outcome:       tests changed",
        "test_calc.py changed",
        "test code:     changed by a command: test_calc.py",
        "the run is not counted as done (exit 1)",
    ]);
    repo.harness(&["undo"]).assert_exit(0);
    assert_eq!(repo.snapshot(), before);

    // With --allow-test-edits the tools may change it, and nothing is flagged.
    let run = one_attempt(
        &repo,
        vec![Turn::call("edit_file", weaken), Turn::Text("Done.")],
        VERIFY,
        &["--allow-test-edits"],
    );
    run.assert_exit(0);
    assert!(!run.stdout.contains("test code:"), "{run}");
}

#[test]
fn the_check_script_the_verification_runs_is_test_code_whatever_its_name() {
    // A check no ecosystem's convention names: `sh check_calc.sh`, as a shell project has.
    let repo = Repo::from_fixture("calc");
    repo.file("check_calc.sh", "#!/bin/sh\npython3 -m unittest -q\n");
    repo.commit_all("a check script");
    let before = repo.snapshot();
    let run = one_attempt(
        &repo,
        vec![
            Turn::call(
                "write_file",
                json!({"path": "check_calc.sh", "content": "exit 0\n", "overwrite": true}),
            ),
            Turn::Text("Done."),
            Turn::Text("Done."),
            Turn::Text("Done."),
        ],
        "sh check_calc.sh",
        &[],
    );
    run.assert_exit(1).assert_stdout_has(&[
        "▸ write_file check_calc.sh  error",
        "check_calc.sh is a test file, and the harness does not let the tools change test code",
    ]);
    assert_eq!(repo.snapshot(), before, "{run}");

    // A command that empties it gets past the tools: the pass is not counted as done.
    let run = one_attempt(
        &repo,
        vec![
            Turn::call(
                "run_command",
                json!({"argv": ["sed", "-i", "s/python3 -m unittest -q/true/", "check_calc.sh"]}),
            ),
            Turn::Text("Done."),
        ],
        "sh check_calc.sh",
        &[],
    );
    run.assert_exit(1).assert_stdout_has(&[
        "✘ verification does not count  exit=0",
        "outcome:       tests changed",
        "check_calc.sh changed",
        "test code:     changed by a command: check_calc.sh",
        "the run is not counted as done (exit 1)",
    ]);
    repo.harness(&["undo"]).assert_exit(0);
    assert_eq!(repo.snapshot(), before);
}

/// `harness run --attempts 1 --verify VERIFY EXTRA… "fix add"` in `repo`, the model
/// answering with `turns`.
fn one_attempt(repo: &Repo, turns: Vec<Turn>, verify: &str, extra: &[&str]) -> Run {
    let model = Model::start();
    model.script(turns);
    let url = model.url();
    let mut args = vec!["run", "--attempts", "1", "--host", &url, "--verify", verify];
    args.extend_from_slice(extra);
    args.push("fix add");
    repo.harness(&args)
}

/// Issue #44: every command the harness prints works as printed. After `cargo xtask demo`
/// the binary sits in `target/` and `harness` is not on `PATH`: the summary's undo line must
/// then name the binary itself, and where `PATH` does lead to it, may say `harness`.
#[test]
fn the_printed_undo_line_works_as_printed_with_or_without_harness_on_path() {
    for on_path in [false, true] {
        let repo = Repo::from_fixture("calc");
        let original = repo.read("calc.py");
        let bin = repo.outer.join("bin");
        std::fs::create_dir(&bin).unwrap();
        if on_path {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_harness"), bin.join("harness")).unwrap();
        }
        // The system's directories, for git, python3 and bwrap; never target/.
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
        let vars = [("PATH", path.as_str())];
        let model = Model::start();
        model.script(fix_script());
        let run = repo.harness_with_env(
            &["run", "--host", &model.url(), "--verify", VERIFY, "fix add"],
            &vars,
        );
        run.assert_exit(0);
        assert_ne!(repo.read("calc.py"), original);
        let undo = run
            .stdout
            .lines()
            .find_map(|line| line.trim_start().strip_prefix("undo:"))
            .unwrap_or_else(|| panic!("no undo line\n{run}"))
            .trim();
        let wanted = if on_path {
            "harness".to_owned()
        } else {
            program()
        };
        assert!(
            undo.starts_with(&format!("{wanted} undo ")),
            "on PATH: {on_path}: {undo}"
        );

        // Pasted into a shell with the same PATH, from another directory.
        let pasted = format!("cd / && {undo}");
        repo.shell(&pasted, &vars).assert_exit(0);
        assert_eq!(repo.read("calc.py"), original, "on PATH: {on_path}");
    }
}
