//! `harness tool` is the model's call, exactly (issue 11, class 4): every guard is tried both
//! ways, once by a scripted model in `harness run` and once by hand with `harness tool`, in
//! the same repository with the same user and project configuration, and both must give
//! the same result, word for word, and that result must be the refusal the guard promises.
//! A third way, a real MCP client through `harness mcp` (`mcp.rs`), must read the same too.

use std::fs;

use serde_json::{Value, json};

use crate::support::{Model, Repo, Turn};

/// One guard, tried with one call.
struct Case {
    /// What is tried, for the failure message.
    name: &'static str,
    tool: &'static str,
    arguments: Value,
    /// True if and only if the guard makes the call fail.
    refused: bool,
    /// What the result must say, so that a guard missing from both ways is noticed too.
    says: &'static str,
}

fn case(name: &'static str, tool: &'static str, arguments: Value, says: &'static str) -> Case {
    Case {
        name,
        tool,
        arguments,
        refused: true,
        says,
    }
}

/// The secret a variable of the caller holds: redacted wherever it shows.
const CALLER_SECRET: (&str, &str) = ("HARNESS_TEST_API_TOKEN", "s3cr3t-of-the-caller");

/// A repository with something to guard: a file outside the workspace and a symbolic link
/// to it, a `.env`, files the configurations deny, and a file holding a password.
fn guarded_repo(project_config: &str, user_config: &str) -> Repo {
    let repo = Repo::from_fixture("calc");
    fs::write(repo.outer.join("outside.txt"), "outside secret\n").expect("a file outside");
    std::os::unix::fs::symlink("../outside.txt", repo.root.join("link-out")).expect("a link out");
    fs::create_dir(repo.outer.join("outside-dir")).expect("a directory outside");
    fs::write(repo.outer.join("outside-dir/inner.txt"), "outside secret\n").expect("a file");
    std::os::unix::fs::symlink("../outside-dir", repo.root.join("dir-out")).expect("a link");
    std::os::unix::fs::symlink("../not-yet.txt", repo.root.join("dangling")).expect("a link");
    fs::create_dir(repo.outer.join("work-evil")).expect("a sibling with the same prefix");
    fs::write(repo.outer.join("work-evil/f.txt"), "outside secret\n").expect("a file");
    repo.file(".env", "API_KEY=abc123\n");
    repo.file("keys.secret", "denied by the project\n");
    repo.file("private.txt", "denied by the user\n");
    repo.file("settings.ini", "password = hunter22\n");
    repo.file("notes.txt", &format!("the token is {}\n", CALLER_SECRET.1));
    repo.file("harness.toml", project_config);
    repo.commit_all("things to guard");
    repo.user_config(user_config);
    repo
}

/// The settings every scenario adds to its project configuration: no head start (only the
/// cases are called) and room for every case to fail in a row.
const RUN_SETTINGS: &str = "head_start_chars = 0\nmax_failed_calls = 100\nmax_steps = 100\n";

/// Runs every case through a scripted model, then by hand, and compares.
fn assert_same_both_ways(repo: &Repo, cases: &[Case]) {
    let model = Model::start();
    let mut turns: Vec<Turn> = cases
        .iter()
        .map(|case| Turn::call(case.tool, case.arguments.clone()))
        .collect();
    turns.push(Turn::Text("Done."));
    model.script(turns);
    repo.harness_with_env(
        &["run", "--host", &model.url(), "try every guard"],
        &[CALLER_SECRET],
    )
    .assert_exit(1)
    .assert_stdout_has(&["outcome:       unverified"]);
    let by_model: Vec<Value> = repo
        .records("tool")
        .into_iter()
        .filter(|record| record["step"] != 0)
        .collect();
    assert_eq!(by_model.len(), cases.len(), "every case was called once");

    for (case, record) in cases.iter().zip(&by_model) {
        assert_eq!(record["tool"], case.tool, "{}", case.name);
        let arguments = case.arguments.to_string();
        let by_hand = repo.harness_with_env(&["tool", case.tool, &arguments], &[CALLER_SECRET]);
        by_hand.assert_exit(if case.refused { 1 } else { 0 });
        assert_eq!(
            record["is_error"], case.refused,
            "{}: the run's call\n{record}",
            case.name
        );
        let model_read = record["result"].as_str().expect("a result");
        // Marker numbers count what each process redacted; the texts must agree otherwise.
        assert_eq!(
            harness_exec::plain_markers(by_hand.stdout.trim_end_matches('\n')),
            harness_exec::plain_markers(model_read.trim_end_matches('\n')),
            "{}: `harness tool` and the model's call differ",
            case.name
        );
        assert!(
            model_read.contains(case.says),
            "{}: expected {:?} in\n{model_read}",
            case.name,
            case.says
        );
        assert!(
            !model_read.contains("outside secret")
                && !model_read.contains("abc123")
                && !model_read.contains("hunter22")
                && !model_read.contains(CALLER_SECRET.1),
            "{}: a secret got through\n{model_read}",
            case.name
        );
    }
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "no call changed the repository"
    );
    assert_same_over_mcp(repo, cases, &by_model);
}

/// The third way: every case called by a real MCP client through `harness mcp`, in one
/// session, must read word for word what the model read (issue 16: one code path).
fn assert_same_over_mcp(repo: &Repo, cases: &[Case], by_model: &[Value]) {
    let calls: Vec<Value> = cases
        .iter()
        .map(|case| json!({"name": case.tool, "arguments": case.arguments}))
        .collect();
    let Some(report) = crate::mcp::drive_with_env(repo, "session", &[], &calls, &[CALLER_SECRET])
    else {
        return;
    };
    for ((case, record), over_mcp) in cases
        .iter()
        .zip(by_model)
        .zip(report["calls"].as_array().expect("one result per call"))
    {
        assert_eq!(
            over_mcp["is_error"], case.refused,
            "{}: over MCP\n{over_mcp}",
            case.name
        );
        assert_eq!(
            over_mcp["text"], record["result"],
            "{}: the MCP client and the model read different results",
            case.name
        );
    }
    assert_eq!(report["calls"].as_array().map(Vec::len), Some(cases.len()));
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "no call over MCP changed the repository"
    );
}

/// The guards that do not depend on the command policy: confinement, the built-in and
/// configured deny rules, the protected files, argument validation, redaction and the
/// environment commands get.
fn confinement_cases(repo: &Repo) -> Vec<Case> {
    let escapes = "path escapes the workspace";
    vec![
        case(
            "a relative path out",
            "read_file",
            json!({"path": "../outside.txt"}),
            escapes,
        ),
        case(
            "an absolute path out",
            "read_file",
            json!({"path": "/etc/hostname"}),
            escapes,
        ),
        case(
            "a symbolic link out",
            "read_file",
            json!({"path": "link-out"}),
            escapes,
        ),
        case(
            "a symbolic link to a directory out, in the middle of a path",
            "read_file",
            json!({"path": "dir-out/inner.txt"}),
            escapes,
        ),
        case(
            "a sibling directory with the workspace's name as a prefix",
            "read_file",
            json!({"path": format!("{}-evil/f.txt", repo.root.display())}),
            escapes,
        ),
        case(
            "a write through a dangling symbolic link out",
            "write_file",
            json!({"path": "dangling", "content": "x\n"}),
            escapes,
        ),
        case("list_dir out", "list_dir", json!({"path": ".."}), escapes),
        case(
            "search_text out",
            "search_text",
            json!({"pattern": "secret", "path": "dir-out"}),
            escapes,
        ),
        case(
            "edit_file out",
            "edit_file",
            json!({"path": "../outside.txt", "old_text": "secret", "new_text": "x"}),
            escapes,
        ),
        case(
            "a write through a path out",
            "write_file",
            json!({"path": "../new.txt", "content": "x\n"}),
            escapes,
        ),
        case(
            "the built-in deny rule for .env",
            "read_file",
            json!({"path": ".env"}),
            "deny rule `.env`",
        ),
        case(
            "a deny rule of the project's configuration",
            "read_file",
            json!({"path": "keys.secret"}),
            "deny rule",
        ),
        case(
            "a deny rule of the project's configuration, for search_text",
            "search_text",
            json!({"pattern": "denied", "path": "keys.secret"}),
            "deny rule",
        ),
        case(
            "a deny rule of the user's configuration",
            "read_file",
            json!({"path": "private.txt"}),
            "deny rule",
        ),
        case(
            "a deny rule of the user's configuration, for edit_file",
            "edit_file",
            json!({"path": "private.txt", "old_text": "user", "new_text": "model"}),
            "deny rule",
        ),
        case(
            "the project's configuration is protected",
            "write_file",
            json!({"path": "harness.toml", "content": "allow = [\"sh\"]\n", "overwrite": true}),
            "harness.toml",
        ),
        case(
            "the project's configuration cannot be edited either",
            "edit_file",
            json!({"path": "harness.toml", "old_text": "max_steps", "new_text": "max_stepz"}),
            "harness.toml",
        ),
        case(
            ".git/ is protected",
            "write_file",
            json!({"path": ".git/config", "content": "[core]\n", "overwrite": true}),
            ".git",
        ),
        case(
            "arguments are validated against the schema",
            "list_dir",
            json!({"depth": 9}),
            "\"depth\" must be at most 5, got 9",
        ),
        case(
            "an unknown tool",
            "rm_rf",
            json!({"path": "."}),
            "unknown tool",
        ),
        Case {
            refused: false,
            ..case(
                "a password in a file is redacted",
                "read_file",
                json!({"path": "settings.ini"}),
                "password = [REDACTED:generic-secret:",
            )
        },
        Case {
            refused: false,
            ..case(
                "the value of a secret variable of the caller is redacted",
                "read_file",
                json!({"path": "notes.txt"}),
                "the token is [REDACTED:secret-variable:",
            )
        },
    ]
}

#[test]
fn every_confinement_guard_refuses_harness_tool_as_it_refuses_the_model() {
    let repo = guarded_repo(
        &format!("{RUN_SETTINGS}deny = [\"*.secret\"]\n"),
        "deny = [\"private.txt\"]\n",
    );
    let mut cases = confinement_cases(&repo);
    cases.extend([
        case(
            "the blocklist",
            "run_command",
            json!({"argv": ["sudo", "ls"]}),
            "command refused: `sudo` is not allowed",
        ),
        case(
            "the blocklist behind a launcher",
            "run_command",
            json!({"argv": ["env", "sudo", "ls"]}),
            "command refused",
        ),
        case(
            "the blocklist behind nice",
            "run_command",
            json!({"argv": ["nice", "sudo", "ls"]}),
            "command refused",
        ),
        Case {
            refused: false,
            ..case(
                "commands get the scrubbed environment, with no bytecode caches",
                "run_command",
                json!({"argv": ["sh", "-c", "echo \"pyc=$PYTHONDONTWRITEBYTECODE passed=${HARNESS_TEST_API_TOKEN:-no}\""]}),
                "pyc=1 passed=no",
            )
        },
    ]);
    assert_same_both_ways(&repo, &cases);
}

#[test]
fn the_configured_allowlist_and_command_timeout_bind_harness_tool_as_they_bind_the_model() {
    let repo = guarded_repo(
        &format!("{RUN_SETTINGS}allow = [\"python3\", \"sleep\"]\ncommand_timeout = 1\n"),
        "",
    );
    let cases = [
        case(
            "a program the allowlist leaves out",
            "run_command",
            json!({"argv": ["ls"]}),
            "command refused: ",
        ),
        case(
            "a program the allowlist leaves out, in a shell",
            "run_command",
            json!({"argv": ["sh", "-c", "ls"]}),
            "command refused: ",
        ),
        case(
            "the configured command timeout",
            "run_command",
            json!({"argv": ["sleep", "20"]}),
            "command exceeded 1s and was killed",
        ),
        Case {
            refused: false,
            ..case(
                "a program the allowlist names",
                "run_command",
                json!({"argv": ["python3", "-c", "print('allowed')"]}),
                "exit=0\nallowed",
            )
        },
    ];
    assert_same_both_ways(&repo, &cases);
}

#[test]
fn a_bad_configuration_stops_harness_tool_as_it_stops_a_run() {
    for (config, says) in [
        ("command_timeout = 0\n", "`command_timeout = 0`"),
        ("allow = [\"python3\"]\nmax_stepz = 3\n", "max_stepz"),
    ] {
        let repo = Repo::from_fixture("calc");
        repo.file("harness.toml", config);
        repo.commit_all("a bad configuration");
        let run = repo.harness(&["run", "--host", "http://127.0.0.1:9", "t"]);
        run.assert_exit(2).assert_stderr_has(&[says]);
        let tool = repo.harness(&["tool", "list_dir", "{}"]);
        tool.assert_exit(2);
        assert_eq!(tool.stdout, "", "the tool was not called");
        assert_eq!(tool.stderr, run.stderr, "the same message both ways");
    }
}
