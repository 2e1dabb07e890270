//! `harness mcp` driven by a real MCP client, the official Python SDK from PyPI (issue 16):
//! the tools listed with the schemas of `harness tool --list`, every tool called, a refused
//! command, malformed requests (through the SDK and raw on the wire), and the start checks
//! of `harness run`. `same_call.rs` runs its whole guard corpus through MCP too.
//!
//! The client is looked for in `HARNESS_MCP_PYTHON`, else `~/.cache/harness/mcp-venv`
//! (`.ci/run` installs it there). Without it these tests skip, saying so, except under
//! `HARNESS_CI_ALL_TIERS=1` (CI), where they fail.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::end_to_end::{VERIFY, fix_script};
use crate::support::{Model, Repo, Turn, source_root};

/// The Python interpreter that has the `mcp` SDK, or `None` (after saying why) when the
/// tests may skip.
pub(crate) fn client_python() -> Option<PathBuf> {
    let python = std::env::var_os("HARNESS_MCP_PYTHON")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|home| PathBuf::from(home).join(".cache/harness/mcp-venv/bin/python3"))
        })?;
    let works = Command::new(&python)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|output| output.status.success());
    if works {
        return Some(python);
    }
    let message = format!(
        "the MCP client (Python `mcp` SDK) is not installed at {}: python3 -m venv \
         ~/.cache/harness/mcp-venv && ~/.cache/harness/mcp-venv/bin/pip install mcp",
        python.display()
    );
    crate::support::skip(&message);
    None
}

/// What the client saw of one `harness mcp ARGS` session in `repo`, in `mode` (`session`
/// calls `calls` through the SDK, `raw` sends malformed lines); `None` when skipped.
pub(crate) fn drive(repo: &Repo, mode: &str, args: &[&str], calls: &[Value]) -> Option<Value> {
    drive_with_env(repo, mode, args, calls, &[])
}

/// [`drive`], with extra variables in the server's environment.
pub(crate) fn drive_with_env(
    repo: &Repo,
    mode: &str,
    args: &[&str],
    calls: &[Value],
    vars: &[(&str, &str)],
) -> Option<Value> {
    let python = client_python()?;
    let mut env = json!({
        "HOME": repo.outer.join("home"),
        "PATH": std::env::var("PATH").unwrap_or_default(),
        "NO_COLOR": "1",
    });
    for (name, value) in vars {
        env[*name] = json!(value);
    }
    let stderr = repo.outer.join("mcp-stderr.txt");
    let mut server_args = vec!["mcp"];
    server_args.extend_from_slice(args);
    let plan = json!({
        "command": env!("CARGO_BIN_EXE_harness"),
        "args": server_args,
        "env": env,
        "cwd": repo.root,
        "stderr": stderr,
        "calls": calls,
    });
    let plan_path = repo.outer.join("mcp-plan.json");
    fs::write(&plan_path, plan.to_string()).expect("write the plan");
    let output = Command::new(python)
        .arg(source_root().join("tests/mcp_client.py"))
        .arg(mode)
        .arg(&plan_path)
        .output()
        .expect("the client runs");
    let server_stderr = fs::read_to_string(&stderr).unwrap_or_default();
    assert!(
        output.status.success(),
        "the MCP client failed\n{}\nserver stderr:\n{server_stderr}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        !server_stderr.contains("panicked"),
        "the server panicked\n{server_stderr}"
    );
    let mut report: Value = serde_json::from_slice(&output.stdout).expect("the report is JSON");
    report["server_stderr"] = json!(server_stderr);
    Some(report)
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

/// The `index`th call's result: its text, after checking it was a tool result with
/// `isError` as `is_error` says (never a protocol error).
fn result(report: &Value, index: usize, is_error: bool) -> String {
    let call = &report["calls"][index];
    assert_eq!(
        call["is_error"], is_error,
        "call {index}: expected isError {is_error}\n{call}"
    );
    call["text"].as_str().expect("a text result").to_owned()
}

#[test]
fn the_client_is_offered_the_tools_of_harness_tool_with_their_schemas() {
    let repo = Repo::from_fixture("calc");
    let Some(report) = drive(&repo, "session", &[], &[]) else {
        return;
    };
    let listed = repo.harness(&["tool", "--list"]);
    listed.assert_exit(0);
    let specs: Value = serde_json::from_str(&listed.stdout).expect("the list is JSON");
    let expected: Vec<Value> = specs
        .as_array()
        .expect("a list")
        .iter()
        .map(|spec| {
            json!({
                "name": spec["function"]["name"],
                "description": spec["function"]["description"],
                "inputSchema": spec["function"]["parameters"],
            })
        })
        .collect();
    assert!(expected.len() >= 6, "{expected:?}");
    let tools = report["tools"].as_array().expect("tools");
    // The toolbox's tools first, exactly as `harness tool --list` has them; then the runs.
    assert_eq!(tools[..expected.len()], expected[..]);
    let runs: Vec<&str> = tools[expected.len()..]
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(
        runs,
        ["run_task", "diff_run", "undo_run", "redo_run", "list_runs"]
    );
    assert_eq!(report["server"], "harness");
    let instructions = report["instructions"].as_str().expect("instructions");
    assert!(instructions.contains("stop accidents, not an adversary"));
}

#[test]
fn every_tool_works_through_the_client_and_a_refusal_is_a_tool_error() {
    let repo = Repo::from_fixture("calc");
    let calls = [
        call("list_dir", json!({"path": "."})),
        call("read_file", json!({"path": "calc.py"})),
        call("search_text", json!({"pattern": "def add"})),
        call("write_file", json!({"path": "new.txt", "content": "one\n"})),
        call(
            "edit_file",
            json!({"path": "new.txt", "old_text": "one", "new_text": "two"}),
        ),
        call("run_command", json!({"argv": ["cat", "new.txt"]})),
        call("run_command", json!({"argv": ["sudo", "ls"]})),
        call("read_file", json!({"path": "../../etc/passwd"})),
    ];
    let Some(report) = drive(&repo, "session", &[], &calls) else {
        return;
    };
    assert!(result(&report, 0, false).contains("calc.py"));
    assert!(result(&report, 1, false).contains("def add"));
    assert!(result(&report, 2, false).contains("calc.py"));
    assert!(result(&report, 3, false).contains("new.txt"));
    assert!(result(&report, 4, false).contains("+two"));
    assert!(result(&report, 5, false).contains("two"));
    assert_eq!(repo.read("new.txt"), "two\n");
    assert!(
        result(&report, 6, true).contains("command refused: `sudo` is not allowed"),
        "{report}"
    );
    assert!(result(&report, 7, true).contains("path escapes the workspace"));
}

#[test]
fn malformed_calls_are_tool_errors_the_model_can_fix_and_the_server_keeps_serving() {
    let repo = Repo::from_fixture("calc");
    let huge = "a".repeat(1 << 20);
    let calls = [
        call("no_such_tool", json!({})),
        call("read_file", json!({"path": 42})),
        call("read_file", json!({})),
        call("read_file", json!({"path": "calc.py", "surprise": true})),
        call("read_file", json!({"path": huge})),
        call("write_file", json!({"path": "big.txt", "content": huge})),
        json!({"name": "list_dir"}),
        call("read_file", json!({"path": "calc.py"})),
    ];
    let Some(report) = drive(&repo, "session", &[], &calls) else {
        return;
    };
    assert!(result(&report, 0, true).contains("unknown tool \"no_such_tool\""));
    assert!(result(&report, 1, true).contains("\"path\""));
    assert!(result(&report, 2, true).contains("\"path\""));
    assert!(result(&report, 3, true).contains("surprise"));
    let huge_path = result(&report, 4, true);
    assert!(huge_path.len() < 4096, "the error does not echo it whole");
    // A huge content is refused or written whole, never cut.
    let huge_content = &report["calls"][5];
    if huge_content["is_error"] == false {
        assert_eq!(repo.read("big.txt").len(), 1 << 20);
    }
    assert!(
        result(&report, 6, false).contains("calc.py"),
        "no arguments: {{}}"
    );
    assert!(result(&report, 7, false).contains("def add"));
}

#[test]
fn malformed_input_on_the_wire_gets_an_error_or_is_ignored_and_eof_ends_the_session_cleanly() {
    let repo = Repo::from_fixture("calc");
    let Some(report) = drive(&repo, "raw", &[], &[]) else {
        return;
    };
    assert!(
        report["initialize"]["result"]["serverInfo"].is_object(),
        "{report}"
    );
    // Each of the malformed requests before the ping that has an id was answered with an
    // error, and the ping after them still was.
    let errors: Vec<&Value> = report["before_ping"]
        .as_array()
        .expect("responses")
        .iter()
        .filter(|message| message.get("error").is_some())
        .collect();
    assert!(
        errors.iter().any(|message| message["id"] == 3),
        "the unknown method is answered: {report}"
    );
    assert!(report["ping"]["result"].is_object(), "{report}");
    assert!(
        report["after"]["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("calc.py")),
        "{report}"
    );
    assert_eq!(report["exit"], 0, "{report}");
}

#[test]
fn the_server_refuses_the_workspaces_harness_run_refuses_and_keeps_stdout_for_the_protocol() {
    // A dirty tree, unless --allow-dirty.
    let repo = Repo::from_fixture("calc");
    repo.file("calc.py", "changed\n");
    repo.harness(&["mcp"])
        .assert_exit(2)
        .assert_stderr_has(&["uncommitted"]);
    // The root of the filesystem, the home directory and the harness's own source.
    repo.harness(&["mcp", "--workspace", "/"])
        .assert_exit(2)
        .assert_stderr_has(&["root of the filesystem"]);
    repo.harness(&[
        "mcp",
        "--workspace",
        &repo.outer.join("home").display().to_string(),
    ])
    .assert_exit(2)
    .assert_stderr_has(&["home directory"]);
    repo.harness(&["mcp", "--workspace", &source_root().display().to_string()])
        .assert_exit(2)
        .assert_stderr_has(&["contains the harness"]);
    // With --allow-dirty it serves, the boundary statement on stderr, nothing but the
    // protocol on stdout (stdin is empty: it ends at once).
    let served = repo.harness(&["mcp", "--allow-dirty"]);
    served
        .assert_exit(0)
        .assert_stderr_has(&["stop accidents, not an adversary", "isolation:"]);
    assert_eq!(served.stdout, "", "stdout carries the protocol only");
}

#[test]
fn run_task_is_a_verified_run_reported_step_by_step_and_undo_run_restores_the_tree_exactly() {
    let repo = Repo::from_fixture("calc");
    let before = repo.snapshot();
    let model = Model::start();
    model.script(fix_script());
    let calls = [
        call(
            "run_task",
            json!({"task": "make the failing test pass", "verify": VERIFY}),
        ),
        call("diff_run", json!({"stat": true})),
        call("list_runs", json!({})),
        call("undo_run", json!({})),
    ];
    let Some(report) = drive(&repo, "session", &["--host", &model.url()], &calls) else {
        return;
    };
    let names: Vec<&str> = report["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    for name in ["run_task", "undo_run", "redo_run", "diff_run", "list_runs"] {
        assert!(names.contains(&name), "{name} is offered: {names:?}");
    }
    let run: Value = serde_json::from_str(&result(&report, 0, false)).expect("a JSON summary");
    assert_eq!(run["outcome"], "verified", "{run}");
    assert_eq!(run["verification"]["passed"], true, "{run}");
    assert!(
        run["diff"]
            .as_str()
            .is_some_and(|diff| diff.contains("+    return a + b")),
        "{run}"
    );
    let id = run["run"].as_str().expect("the run's id").to_owned();
    // One progress notification per step of the run.
    let progress = report["calls"][0]["progress"].as_array().expect("progress");
    assert_eq!(
        progress.len() as u64,
        run["steps"].as_u64().expect("steps"),
        "{progress:?}"
    );
    assert!(
        progress[0]
            .as_str()
            .is_some_and(|text| text.starts_with("step 1:"))
    );
    assert!(result(&report, 1, false).contains("calc.py"));
    assert!(result(&report, 2, false).contains(&id));
    assert!(result(&report, 3, false).contains(&format!("undid run {id}")));
    assert_eq!(
        repo.snapshot(),
        before,
        "undo_run restored the tree byte for byte"
    );

    // The run is recorded like any other: `harness show` replays it, and redo_run brings
    // the work back.
    repo.harness(&["show", &id])
        .assert_exit(0)
        .assert_stdout_has(&["edit_file", "passed (exit=0"]);
    let Some(redone) = drive(
        &repo,
        "session",
        &[],
        &[call("redo_run", json!({"run": id}))],
    ) else {
        return;
    };
    assert!(result(&redone, 0, false).contains("redid run"));
    assert!(repo.read("calc.py").contains("return a + b"));
}

#[test]
fn a_run_task_that_is_not_verified_or_cannot_start_is_a_tool_error_saying_why() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    model.script(vec![Turn::Text("Done.")]);
    let calls = [
        call("run_task", json!({"task": "do nothing", "verify": VERIFY})),
        call("run_task", json!({"task": "no verify"})),
        call("run_task", json!({"task": "t", "verify": "sudo true"})),
        call("undo_run", json!({"run": "not-a-run"})),
        call(
            "write_file",
            json!({"path": "mine.txt", "content": "the client's\n"}),
        ),
        call("run_task", json!({"task": "t", "verify": VERIFY})),
    ];
    let Some(report) = drive(&repo, "session", &["--host", &model.url()], &calls) else {
        return;
    };
    let run: Value = serde_json::from_str(&result(&report, 0, true)).expect("a JSON summary");
    assert_ne!(run["outcome"], "verified", "{run}");
    assert!(result(&report, 1, true).contains("verify"));
    assert!(result(&report, 2, true).contains("would be refused"));
    assert!(result(&report, 3, true).starts_with("Error: "));
    // The client's own change makes the tree dirty: a run is refused as `harness run`
    // refuses it, and the change is left alone.
    result(&report, 4, false);
    assert!(
        result(&report, 5, true).contains("uncommitted change"),
        "{report}"
    );
    assert_eq!(repo.read("mine.txt"), "the client's\n");
}

#[test]
fn the_clients_own_calls_are_recorded_as_a_run_that_harness_show_replays_and_harness_undo_takes_back()
 {
    let repo = Repo::from_fixture("calc");
    let before = repo.snapshot();
    let calls = [
        call(
            "write_file",
            json!({"path": "notes.txt", "content": "one\n"}),
        ),
        call(
            "edit_file",
            json!({"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}),
        ),
        call("read_file", json!({"path": "../../etc/passwd"})),
        call("list_runs", json!({})),
    ];
    let Some(report) = drive(&repo, "session", &[], &calls) else {
        return;
    };
    result(&report, 2, true);
    result(&report, 3, false);
    let stderr = report["server_stderr"].as_str().expect("stderr");
    let id = stderr
        .split("recorded:   as run ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the run's id is named at the start")
        .to_owned();
    let tools = repo.records("tool");
    let names: Vec<&str> = tools.iter().filter_map(|r| r["tool"].as_str()).collect();
    // The run tools' calls too, so the transcript shows everything the client did.
    assert_eq!(
        names,
        ["write_file", "edit_file", "read_file", "list_runs"],
        "{tools:?}"
    );
    assert_eq!(tools[2]["is_error"], true);
    assert_eq!(repo.records("outcome")[0]["outcome"], "unverified");
    repo.harness(&["show", &id])
        .assert_exit(0)
        .assert_stdout_has(&[
            "write_file notes.txt",
            "edit_file calc.py",
            "path escapes the workspace",
        ]);
    repo.harness(&["runs"])
        .assert_exit(0)
        .assert_stdout_has(&[&id, "MCP session"]);
    repo.harness(&["undo", &id]).assert_exit(0);
    assert_eq!(
        repo.snapshot(),
        before,
        "undo took the client's calls back exactly"
    );
}

#[test]
fn a_file_git_ignores_that_the_client_overwrites_is_saved_first_and_undo_brings_it_back() {
    let repo = Repo::from_fixture("calc");
    repo.file(".gitignore", "local.cfg\n");
    repo.commit_all("ignore local.cfg");
    repo.file("local.cfg", "user_setting = 42\n");
    let before = repo.snapshot();
    let calls = [call(
        "write_file",
        json!({"path": "local.cfg", "content": "overwritten\n", "overwrite": true}),
    )];
    let Some(report) = drive(&repo, "session", &[], &calls) else {
        return;
    };
    result(&report, 0, false);
    assert_eq!(repo.read("local.cfg"), "overwritten\n");
    let stderr = report["server_stderr"].as_str().expect("stderr");
    let id = stderr
        .split("recorded:   as run ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the run's id is named at the start")
        .to_owned();
    repo.harness(&["undo", &id]).assert_exit(0);
    assert_eq!(
        repo.snapshot(),
        before,
        "the ignored file is back, byte for byte"
    );
}

/// An ignored file too large to save first (64 MiB and more) is not overwritten: no undo
/// could bring it back.
#[test]
fn an_ignored_file_too_large_to_save_first_is_not_overwritten_by_the_client() {
    let repo = Repo::from_fixture("calc");
    repo.file(".gitignore", "data.bin\n");
    repo.commit_all("ignore data.bin");
    let size = harness_undo::LARGEST_RECORDED_FILE + 1;
    fs::File::create(repo.root.join("data.bin"))
        .and_then(|file| file.set_len(size))
        .expect("a sparse file");
    let calls = [call(
        "write_file",
        json!({"path": "data.bin", "content": "overwritten\n", "overwrite": true}),
    )];
    let Some(report) = drive(&repo, "session", &[], &calls) else {
        return;
    };
    let text = result(&report, 0, true);
    assert!(
        text.starts_with("Error: data.bin was not changed") && text.contains("larger than 64 MiB"),
        "{text}"
    );
    let left = fs::metadata(repo.root.join("data.bin")).expect("still there");
    assert_eq!(left.len(), size, "the file is as it was");
}

#[test]
fn a_cancelled_run_task_stops_its_command_and_the_run_as_ctrl_c_does() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    model.script(vec![
        Turn::call("run_command", json!({"argv": ["sleep", "60"]})),
        Turn::call("read_file", json!({"path": "calc.py"})),
        Turn::Text("Done."),
    ]);
    let calls = [
        call("run_task", json!({"task": "wait", "verify": VERIFY})),
        call("list_runs", json!({})),
    ];
    let Some(report) = drive(&repo, "cancel", &["--host", &model.url()], &calls) else {
        return;
    };
    let after = report["after_cancel"].as_array().expect("answers");
    // No answer to the cancelled request (the protocol says so); the ping is answered
    // while the run stops, and the next call once it has.
    assert!(after.iter().all(|message| message["id"] != 1), "{report}");
    assert!(after.iter().any(|message| message["id"] == 2), "{report}");
    let seconds = report["seconds_to_stop"].as_f64().expect("seconds");
    assert!(
        seconds < 30.0,
        "the 60 s command was interrupted: {seconds}s"
    );
    let listed = after.last().expect("the list")["result"]["content"][0]["text"]
        .as_str()
        .expect("text")
        .to_owned();
    let runs: Value = serde_json::from_str(&listed).expect("JSON");
    let task = runs
        .as_array()
        .expect("runs")
        .iter()
        .find(|run| run["task"] == "wait")
        .expect("the run is recorded");
    assert_eq!(task["outcome"], "interrupted", "{runs}");
    assert_eq!(report["exit"], 0);
    // It stopped after the interrupted command: the model's later calls never ran (the
    // head start, step 0, reads files of its own).
    assert!(
        repo.records("tool")
            .iter()
            .all(|record| record["step"] == 0 || record["tool"] != "read_file"),
        "the run went on after the cancellation: {:?}",
        repo.transcript()
    );
}

/// Issue #45, class 5, through the binary and a real MCP client: a file read redacted and
/// written back whole keeps its secret (the marker the read showed is put back), a marker
/// the session never showed is refused where the secret was, and a command holding the
/// marker is refused.
#[test]
fn a_secret_read_redacted_and_written_back_is_kept_through_the_client() {
    let repo = Repo::from_fixture("calc");
    let key = "k8#Qz!x2Lp9wR4vT";
    repo.file(
        "settings.py",
        &format!("SECRET_KEY = '{key}'\nDEBUG = True\n"),
    );
    repo.commit_all("settings");
    let calls = [
        call("read_file", json!({"path": "settings.py"})),
        call(
            "write_file",
            json!({
                "path": "settings.py",
                "content": "SECRET_KEY = '{{marker:0}}'\nDEBUG = False\n",
                "overwrite": true,
            }),
        ),
        call(
            "write_file",
            json!({
                "path": "settings.py",
                "content": "SECRET_KEY = '[REDACTED]'\nDEBUG = False\n",
                "overwrite": true,
            }),
        ),
        call(
            "run_command",
            json!({"argv": ["sed", "-i", "s/{{marker:0}}/x/", "settings.py"]}),
        ),
    ];
    let Some(report) = drive(&repo, "session", &[], &calls) else {
        return;
    };
    let shown = result(&report, 0, false);
    assert!(!shown.contains(key), "{shown}");
    assert!(shown.contains("SECRET_KEY = '[REDACTED:"), "{shown}");
    let diff = result(&report, 1, false);
    assert!(!diff.contains(key), "{diff}");
    assert!(diff.contains("+DEBUG = False"), "{diff}");
    assert!(
        !diff.contains("-SECRET_KEY"),
        "the key did not change: {diff}"
    );
    assert!(
        result(&report, 2, true).contains("stands where settings.py holds a secret"),
        "{report}"
    );
    assert!(
        result(&report, 3, true).contains("redaction marker"),
        "{report}"
    );
    assert_eq!(
        repo.read("settings.py"),
        format!("SECRET_KEY = '{key}'\nDEBUG = False\n")
    );
}

/// `undo_run` answers with what `harness undo` prints of ignored files: those it removed
/// and restored, one too large to have been saved that it could NOT restore, and one the
/// user changed after the run, which it left.
#[test]
fn undo_run_tells_what_it_did_to_ignored_files_in_the_words_of_harness_undo() {
    let repo = Repo::from_fixture("calc");
    repo.file(".gitignore", "__pycache__/\n*.local\nbig.bin\n");
    repo.commit_all("ignore local files");
    repo.file("keep.local", "v1\n");
    repo.file("notes.local", "v1\n");
    fs::File::create(repo.root.join("big.bin"))
        .and_then(|file| file.set_len(harness_undo::LARGEST_SAVED_IGNORED_FILE + 1))
        .expect("a sparse file");
    let model = Model::start();
    let mut script = vec![Turn::call(
        "run_command",
        json!({"argv": ["sh", "-c",
            "printf planted > planted.local && printf run > keep.local && printf x >> big.bin"]}),
    )];
    script.extend(fix_script());
    model.script(script);
    // What the commands wrote is put back before the check; what the check writes is the
    // run's too, and undo's to take back.
    let verify =
        format!("sh -c '{VERIFY} && printf check > planted.local && printf check > keep.local'");
    let calls = [call(
        "run_task",
        json!({"task": "make the failing test pass", "verify": verify}),
    )];
    let Some(report) = drive(&repo, "session", &["--host", &model.url()], &calls) else {
        return;
    };
    // Not verified: the check may have run big.bin, which could not be put back.
    let run: Value = serde_json::from_str(&result(&report, 0, true)).expect("a JSON summary");
    assert_eq!(run["outcome"], "unverified", "{run}");
    let id = run["run"].as_str().expect("the run's id").to_owned();
    // The user, after the run (past the kernel's file clock, a tick behind).
    std::thread::sleep(std::time::Duration::from_millis(60));
    repo.file("notes.local", "user v2\n");
    // The run's change to calc.py is still there: a session on a dirty tree.
    let undo = [call("undo_run", json!({"run": id}))];
    let Some(undone) = drive(&repo, "session", &["--allow-dirty"], &undo) else {
        return;
    };
    let text = result(&undone, 0, false);
    for line in [
        "ignored files (git does not record them): removed 1: planted.local; restored 1: \
         keep.local",
        "warning: NOT restored: big.bin (ignored; too large to save at the start",
        "note: notes.local (ignored) changed after the run, not by it: left as it is",
    ] {
        assert!(text.contains(line), "{line:?} in:\n{text}");
    }
    assert!(!repo.root.join("planted.local").exists(), "{text}");
    assert_eq!(repo.read("keep.local"), "v1\n");
    assert_eq!(repo.read("notes.local"), "user v2\n");
    // The CLI says the same of the same state: redo, then undo again by `harness undo`.
    repo.harness(&["redo", &id]).assert_exit(0);
    repo.harness(&["undo", &id])
        .assert_exit(0)
        .assert_stdout_has(&["; restored 1: keep.local", "NOT restored: big.bin"]);
}
