//! `harness tool`: the real binary against temporary workspaces.

mod util;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{TempWorkspace, harness};
use harness_testkit::escapes::{Escapes, PATH_TOOLS, call};

#[test]
fn a_successful_tool_exits_0_and_prints_the_result() {
    let workspace = TempWorkspace::new();
    workspace.file("a.txt", "hello\n");
    let run = workspace.tool("read_file", r#"{"path": "a.txt"}"#);
    run.assert_exit(0);
    assert_eq!(run.stdout, "     1\thello\n");
    assert_eq!(run.stderr, "");
}

#[test]
fn a_tool_error_exits_1_and_prints_the_error() {
    let workspace = TempWorkspace::new();
    let run = workspace.tool("read_file", r#"{"path": "missing.txt"}"#);
    run.assert_exit(1);
    assert!(
        run.stdout
            .starts_with("Error: no such file or directory: missing.txt"),
        "{run:?}"
    );
    assert_eq!(run.stderr, "");
}

#[test]
fn arguments_are_validated_as_the_model_s_are() {
    let workspace = TempWorkspace::new();
    let invalid = workspace.tool("list_dir", r#"{"depth": 9}"#);
    invalid.assert_exit(1);
    assert_eq!(
        invalid.stdout,
        "Error: list_dir: \"depth\" must be at most 5, got 9\n"
    );
    let not_json = workspace.tool("list_dir", "{depth: 9}");
    not_json.assert_exit(1);
    assert!(
        not_json
            .stdout
            .starts_with("Error: list_dir: the arguments are a string that is not valid JSON"),
        "{not_json:?}"
    );
    let unknown = workspace.tool("rm_rf", "{}");
    unknown.assert_exit(1);
    assert!(
        unknown.stdout.starts_with("Error: unknown tool \"rm_rf\""),
        "{unknown:?}"
    );
}

#[test]
fn the_arguments_default_to_an_empty_object() {
    let workspace = TempWorkspace::new();
    workspace.file("a.txt", "");
    let run = harness(&["tool", "--workspace", workspace.path_str(), "list_dir"]);
    run.assert_exit(0);
    assert_eq!(run.stdout, "a.txt\n");
}

#[test]
fn the_workspace_defaults_to_the_current_directory() {
    let workspace = TempWorkspace::new();
    workspace.file("here.txt", "");
    let run = workspace.run_in(&["tool", "list_dir", "{}"]);
    run.assert_exit(0);
    assert_eq!(run.stdout, "here.txt\n");
}

macro_rules! usage_errors {
    ($($name:ident: $args:expr => $stderr:expr,)*) => {$(
        #[test]
        fn $name() {
            let run = harness(&$args);
            run.assert_exit(2);
            assert_eq!(run.stdout, "");
            assert!(run.stderr.contains($stderr), "{run:?}");
        }
    )*};
}

usage_errors! {
    no_tool_name_is_bad_usage: ["tool"] => "the following required arguments were not provided",
    an_unknown_flag_is_bad_usage: ["tool", "--frobnicate", "list_dir"] => "unexpected argument '--frobnicate'",
    a_zero_timeout_is_bad_usage: ["tool", "--timeout", "0", "list_dir"] => "invalid value '0' for '--timeout <S>'",
    list_with_a_name_is_bad_usage: ["tool", "--list", "read_file"] => "cannot be used with",
    no_subcommand_is_bad_usage: [] => "Usage: harness",
    the_filesystem_root_is_refused_as_for_a_run: ["tool", "--workspace", "/", "list_dir"]
        => "refusing / as the workspace: it is the root of the filesystem",
    the_harness_source_tree_is_refused_as_for_a_run: ["tool", "--workspace", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."), "list_dir"]
        => "it contains the harness (its own source tree",
    a_missing_workspace_is_bad_usage: ["tool", "--workspace", "/nonexistent/harness-test", "list_dir"]
        => "harness: cannot use /nonexistent/harness-test as the workspace: it must be an existing directory",
}

#[test]
fn a_file_as_workspace_is_bad_usage() {
    let workspace = TempWorkspace::new();
    workspace.file("a.txt", "");
    let file = workspace.path("a.txt");
    let run = harness(&[
        "tool",
        "--workspace",
        file.to_str().expect("UTF-8"),
        "list_dir",
    ]);
    run.assert_exit(2);
    assert!(run.stderr.contains("it is not a directory"), "{run:?}");
}

#[test]
fn help_exits_0() {
    let run = harness(&["tool", "--help"]);
    run.assert_exit(0);
    assert!(
        run.stdout
            .contains("Exit status:\n  0    the tool succeeded\n  1    the tool returned an error")
    );
}

#[test]
fn list_prints_the_schema_catalogue() {
    let run = harness(&["tool", "--list"]);
    run.assert_exit(0);
    let printed: Value = serde_json::from_str(&run.stdout).expect("the list is JSON");
    let catalogue = serde_json::to_value(harness_schema::catalogue()).expect("specs serialize");
    assert_eq!(printed, catalogue);
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    // Closed before the child writes, so its first write fails with EPIPE.
    drop(reader);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["tool", "--list"])
        .stdout(writer)
        .output()
        .expect("run harness");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

macro_rules! every_escape_is_refused {
    ($($name:ident: $tool:expr,)*) => {$(
        #[test]
        fn $name() {
            let escapes = Escapes::new();
            let before = escapes.outside();
            for class in escapes.classes() {
                let arguments = call($tool, &class.path).to_string();
                let run = harness(&[
                    "tool",
                    "--workspace",
                    escapes.work.to_str().expect("UTF-8"),
                    $tool,
                    &arguments,
                ]);
                run.assert_exit(1);
                assert!(
                    run.stdout.starts_with("Error: path escapes the workspace: "),
                    "{} {}: {run:?}",
                    $tool,
                    class.name
                );
                assert!(!run.stdout.contains("outside secret"), "{}", class.name);
            }
            assert_eq!(escapes.outside(), before, "{} changed something outside", $tool);
        }
    )*};
}

every_escape_is_refused! {
    read_file_refuses_every_escape: "read_file",
    write_file_refuses_every_escape: "write_file",
    edit_file_refuses_every_escape: "edit_file",
    list_dir_refuses_every_escape: "list_dir",
    search_text_refuses_every_escape: "search_text",
}

#[test]
fn the_escape_table_covers_every_path_tool() {
    assert_eq!(PATH_TOOLS.len(), 5);
    assert_eq!(Escapes::new().classes().len(), 6);
}

#[test]
fn read_file_of_dot_env_is_refused() {
    let workspace = TempWorkspace::new();
    workspace.file(".env", "API_KEY=abc123\n");
    let run = workspace.tool("read_file", r#"{"path": ".env"}"#);
    run.assert_exit(1);
    assert!(
        run.stdout
            .starts_with("Error: refusing to read .env: it matches the deny rule `.env`"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("abc123"));
}

#[test]
fn dot_env_is_absent_from_list_dir_and_search_text() {
    let workspace = TempWorkspace::new();
    workspace
        .file(".env", "API_KEY=abc123\n")
        .file("app.py", "load('API_KEY')\n");
    let listing = workspace.tool("list_dir", "{}");
    listing.assert_exit(0);
    assert_eq!(listing.stdout, "app.py\n");
    let found = workspace.tool("search_text", r#"{"pattern": "API_KEY"}"#);
    found.assert_exit(0);
    assert_eq!(found.stdout, "app.py:1: load('API_KEY')\n");
}

#[test]
fn run_command_of_sudo_ls_is_refused() {
    let workspace = TempWorkspace::new();
    let run = workspace.tool("run_command", r#"{"argv": ["sudo", "ls"]}"#);
    run.assert_exit(1);
    assert!(
        run.stdout
            .starts_with("Error: command refused: `sudo` is not allowed"),
        "{run:?}"
    );
}

#[test]
fn command_output_is_redacted() {
    let workspace = TempWorkspace::new();
    let run = workspace.tool("run_command", r#"{"argv": ["echo", "API_KEY=abc123"]}"#);
    run.assert_exit(0);
    assert_eq!(
        harness_exec::plain_markers(&run.stdout),
        "exit=0\nAPI_KEY=[REDACTED]\n"
    );
}

#[test]
fn file_contents_are_redacted() {
    let workspace = TempWorkspace::new();
    workspace.file("settings.ini", "password = hunter22\n");
    let run = workspace.tool("read_file", r#"{"path": "settings.ini"}"#);
    run.assert_exit(0);
    assert_eq!(
        harness_exec::plain_markers(&run.stdout),
        "     1\tpassword = [REDACTED]\n"
    );
}

#[test]
fn the_values_of_secret_variables_of_the_caller_are_redacted() {
    let workspace = TempWorkspace::new();
    workspace.file("notes.txt", "the value is s3cr3t-from-env\n");
    let run = workspace.tool_with_env(
        "read_file",
        r#"{"path": "notes.txt"}"#,
        ("HARNESS_TEST_API_TOKEN", "s3cr3t-from-env"),
    );
    run.assert_exit(0);
    assert_eq!(
        harness_exec::plain_markers(&run.stdout),
        "     1\tthe value is [REDACTED]\n"
    );
}

#[test]
fn a_non_zero_exit_is_still_a_successful_tool_call() {
    let workspace = TempWorkspace::new();
    let run = workspace.tool("run_command", r#"{"argv": ["sh", "-c", "exit 4"]}"#);
    run.assert_exit(0);
    assert_eq!(run.stdout, "exit=4\n");
}

#[test]
fn allow_switches_to_an_allowlist() {
    let workspace = TempWorkspace::new();
    let path = workspace.path_str();
    let allowed = harness(&[
        "tool",
        "--workspace",
        path,
        "--allow",
        "echo",
        "--allow",
        "true",
        "run_command",
        r#"{"argv": ["echo", "hi"]}"#,
    ]);
    allowed.assert_exit(0);
    assert_eq!(allowed.stdout, "exit=0\nhi\n");
    let refused = harness(&[
        "tool",
        "--workspace",
        path,
        "--allow",
        "echo",
        "run_command",
        r#"{"argv": ["ls"]}"#,
    ]);
    refused.assert_exit(1);
    assert!(
        refused.stdout.starts_with("Error: command refused: "),
        "{refused:?}"
    );
    let blocklist = harness(&[
        "tool",
        "--workspace",
        path,
        "run_command",
        r#"{"argv": ["ls"]}"#,
    ]);
    blocklist.assert_exit(0);
}

#[test]
fn timeout_bounds_every_command() {
    let workspace = TempWorkspace::new();
    let path = workspace.path_str();
    let started = Instant::now();
    let asked = harness(&[
        "tool",
        "--workspace",
        path,
        "--timeout",
        "1",
        "run_command",
        r#"{"argv": ["sleep", "30"], "timeout_s": 100}"#,
    ]);
    asked.assert_exit(1);
    assert_eq!(
        asked.stdout,
        "Error: command exceeded 1s and was killed.\n[timeout_s 100 was lowered to the maximum of 1s]\n"
    );
    let default = harness(&[
        "tool",
        "--workspace",
        path,
        "--timeout",
        "1",
        "run_command",
        r#"{"argv": ["sleep", "30"]}"#,
    ]);
    default.assert_exit(1);
    assert_eq!(
        default.stdout,
        "Error: command exceeded 1s and was killed.\n"
    );
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "a command was not stopped"
    );
}

#[test]
fn writes_go_through_the_same_tools() {
    let workspace = TempWorkspace::new();
    let created = workspace.tool(
        "write_file",
        &json!({"path": "a/b.txt", "content": "one\n"}).to_string(),
    );
    created.assert_exit(0);
    assert_eq!(
        created.stdout,
        "--- /dev/null\n+++ b/a/b.txt\n@@ -0,0 +1 @@\n+one\n"
    );
    let again = workspace.tool(
        "write_file",
        &json!({"path": "a/b.txt", "content": "two\n"}).to_string(),
    );
    again.assert_exit(1);
    let edited = workspace.tool(
        "edit_file",
        &json!({"path": "a/b.txt", "old_text": "one", "new_text": "two"}).to_string(),
    );
    edited.assert_exit(0);
    assert_eq!(workspace.read("a/b.txt"), "two\n");
}
