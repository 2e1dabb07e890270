//! Calls that fail validation never run: each comes back as an `Error:` result with the
//! schema's message.

use harness_tools::Detail;
use serde_json::{Value, json};

use crate::support::Fixture;

macro_rules! schema_errors {
    ($($name:ident: $tool:expr, $arguments:expr => $text:expr,)*) => {$(
        #[test]
        fn $name() {
            let fixture = Fixture::new();
            let result = fixture.call($tool, $arguments);
            assert_eq!(result.text(), $text);
            assert!(result.is_error());
            assert!(!result.may_have_changed_workspace());
            assert_eq!(result.summary().tool(), $tool);
            assert_eq!(result.summary().target(), "");
            assert_eq!(result.summary().detail(), &Detail::Failed);
            // Nothing ran: the workspace is still empty.
            assert_eq!(std::fs::read_dir(&fixture.root).expect("the root").count(), 0);
        }
    )*};
}

schema_errors! {
    read_file_without_a_path: "read_file", json!({})
        => "Error: read_file: missing required argument \"path\"",
    read_file_with_line_zero: "read_file", json!({"path": "a", "start_line": 0})
        => "Error: read_file: \"start_line\" must be at least 1, got 0",
    write_file_without_content: "write_file", json!({"path": "a.txt"})
        => "Error: write_file: missing required argument \"content\"",
    write_file_with_a_string_overwrite: "write_file", json!({"path": "a.txt", "content": "", "overwrite": "yes"})
        => "Error: write_file: \"overwrite\" must be a boolean, got string \"yes\"",
    edit_file_without_old_text: "edit_file", json!({"path": "a.txt", "new_text": "x"})
        => "Error: edit_file: missing required argument \"old_text\"",
    list_dir_too_deep: "list_dir", json!({"depth": 9})
        => "Error: list_dir: \"depth\" must be at most 5, got 9",
    search_text_with_an_unknown_argument: "search_text", json!({"pattern": "x", "regex": true})
        => "Error: search_text: unknown argument \"regex\" (expected: pattern, path, glob)",
    run_command_with_a_shell_command_line: "run_command", json!({"argv": "touch pwned && ls"})
        => "Error: run_command: \"argv\" must be an array of strings, e.g. [\"pytest\", \"-q\"], got string \"touch pwned && ls\"",
    run_command_with_a_quoted_command_line: "run_command", json!({"argv": "touch 'a b'"})
        => "Error: run_command: \"argv\" must be an array of strings, e.g. [\"pytest\", \"-q\"], got string \"touch 'a b'\"",
    run_command_with_an_empty_argv: "run_command", json!({"argv": []})
        => "Error: run_command: \"argv\" must have at least 1 item, e.g. [\"pytest\", \"-q\"], got []",
    an_unknown_tool: "delete_everything", json!({})
        => "Error: unknown tool \"delete_everything\"; the available tools are: read_file, write_file, edit_file, list_dir, search_text, run_command",
    arguments_that_are_not_an_object: "list_dir", json!([1])
        => "Error: list_dir: the arguments must be a JSON object such as {\"path\": \"src\", \"depth\": 2}, got an array",
}

#[test]
fn a_slip_with_one_reading_runs_and_the_result_says_how_it_was_read() {
    let fixture = Fixture::new();
    let result = fixture.call(
        "run_command",
        json!({"argv": "touch made", "timeout_s": "5"}),
    );
    assert!(!result.is_error(), "{}", result.text());
    assert!(fixture.path("made").exists());
    assert!(
        result.text().ends_with(
            "[Note: \"argv\" was sent as \"touch made\" and read as [\"touch\",\"made\"]; \
             \"timeout_s\" was sent as \"5\" and read as 5. Send each argument as its schema says.]"
        ),
        "{}",
        result.text()
    );
    let exact = fixture.call("run_command", json!({"argv": ["true"]}));
    assert!(!exact.text().contains("[Note:"), "{}", exact.text());
}

#[test]
fn arguments_in_a_string_are_accepted_as_openai_servers_send_them() {
    let fixture = Fixture::new();
    fixture.file("a.txt", "hello\n");
    let result = fixture.call(
        "read_file",
        Value::String(r#"{"path": "a.txt"}"#.to_owned()),
    );
    assert_eq!(result.text(), "     1\thello\n");
}

#[test]
fn a_string_that_is_not_json_is_an_error() {
    let fixture = Fixture::new();
    let result = fixture.call("list_dir", Value::String("{path: src}".to_owned()));
    assert!(result.is_error());
    assert!(
        result
            .text()
            .starts_with("Error: list_dir: the arguments are a string that is not valid JSON"),
        "{}",
        result.text()
    );
}

#[test]
fn every_result_is_an_error_exactly_when_its_text_says_so() {
    let fixture = Fixture::new();
    fixture.file("a.txt", "a\na\n");
    let calls = [
        ("read_file", json!({"path": "a.txt"})),
        ("read_file", json!({"path": "../a.txt"})),
        ("write_file", json!({"path": "b.txt", "content": "b\n"})),
        ("write_file", json!({"path": "b.txt", "content": "b\n"})),
        (
            "edit_file",
            json!({"path": "a.txt", "old_text": "a", "new_text": "b"}),
        ),
        ("list_dir", json!({})),
        ("list_dir", json!({"path": "a.txt"})),
        ("search_text", json!({"pattern": "a"})),
        ("search_text", json!({"pattern": "("})),
        ("run_command", json!({"argv": ["false"]})),
        ("run_command", json!({"argv": ["sudo", "true"]})),
        ("nope", json!({})),
    ];
    for (tool, arguments) in calls {
        let result = fixture.call(tool, arguments.clone());
        assert_eq!(
            result.is_error(),
            result.text().starts_with("Error:"),
            "{tool} {arguments}: {:?}",
            result.text()
        );
    }
}

#[test]
fn a_path_sent_with_a_location_is_read_without_it_when_only_that_names_a_file() {
    let fixture = Fixture::new();
    fixture.file("src/calc.py", "a = 1\nb = 2\n");
    let read = fixture.call("read_file", json!({"path": "src/calc.py:2"}));
    assert!(!read.is_error(), "{}", read.text());
    assert!(
        read.text().starts_with("     1\ta = 1\n"),
        "{}",
        read.text()
    );
    assert!(
        read.text().ends_with(
            "[Note: \"path\" was sent as \"src/calc.py:2\" and read as \"src/calc.py\". \
             Send each argument as its schema says.]"
        ),
        "{}",
        read.text()
    );
    let edit = json!({"path": "src/calc.py:2:5", "old_text": "b = 2", "new_text": "b = 3"});
    let toolbox = fixture.builder().build();
    assert_eq!(
        toolbox.written_path("edit_file", &edit).as_deref(),
        Some("src/calc.py"),
        "the file saved before the edit is the file the edit changes"
    );
    let edited = toolbox.call("edit_file", &edit);
    assert!(!edited.is_error(), "{}", edited.text());
    assert_eq!(edited.summary().target(), "src/calc.py");
    assert_eq!(fixture.read("src/calc.py"), "a = 1\nb = 3\n");
}

#[test]
fn a_location_stays_part_of_the_path_where_another_reading_exists_or_none() {
    let fixture = Fixture::new();
    fixture.file("notes", "plain\n");
    fixture.file("notes:12", "with a colon\n");
    fixture.file(".env", "KEY=1\n");
    fixture.dir("src");
    // The path names a file as sent: it is that file.
    let read = fixture.call("read_file", json!({"path": "notes:12"}));
    assert_eq!(read.text(), "     1\twith a colon\n");
    // Without the location it names a directory, a refused file, or nothing.
    for path in ["src:3", ".env:1", "missing.py:3", ":3", "notes:", "notes:x"] {
        let result = fixture.call("read_file", json!({"path": path}));
        assert!(result.is_error(), "{path}: {}", result.text());
        assert!(
            !result.text().contains("[Note:"),
            "{path}: {}",
            result.text()
        );
        assert_eq!(result.summary().target(), path);
    }
    // A new file may be called anything.
    let written = fixture.call("write_file", json!({"path": "notes:3", "content": "new\n"}));
    assert!(!written.is_error(), "{}", written.text());
    assert_eq!(fixture.read("notes:3"), "new\n");
    assert_eq!(fixture.read("notes"), "plain\n");
}
