//! The toolbox itself: what it offers, what it owns, how it is built.

use harness_exec::{EnvPolicy, Runner};
use serde_json::json;

use crate::support::{Fixture, ok};

#[test]
fn the_specs_are_the_schema_catalogue() {
    let toolbox = Fixture::new().builder().build();
    let names: Vec<&str> = toolbox.specs().iter().map(|spec| spec.name()).collect();
    assert_eq!(
        names,
        [
            "read_file",
            "write_file",
            "edit_file",
            "list_dir",
            "search_text",
            "run_command"
        ]
    );
    assert_eq!(
        serde_json::to_value(toolbox.specs()).expect("specs serialize"),
        serde_json::to_value(harness_schema::catalogue()).expect("specs serialize")
    );
}

#[test]
fn the_toolbox_owns_its_workspace() {
    let fixture = Fixture::new();
    let toolbox = fixture.builder().build();
    assert_eq!(toolbox.workspace().root().as_std_path(), fixture.root);
}

#[test]
fn a_given_runner_keeps_what_the_builder_does_not_set() {
    let fixture = Fixture::new();
    let runner = Runner::new().env(EnvPolicy::scrubbed().set("HARNESS_TOOLS_GREETING", "bonjour"));
    let toolbox = fixture.builder().runner(runner).build();
    let result = toolbox.call(
        "run_command",
        &json!({"argv": ["sh", "-c", "echo $HARNESS_TOOLS_GREETING"]}),
    );
    assert_eq!(ok(&result), "exit=0\nbonjour");
}

#[test]
fn the_written_path_is_the_one_the_call_writes_as_the_tool_reads_it() {
    let fixture = Fixture::new();
    let toolbox = fixture.builder().build();
    for (tool, arguments, path) in [
        (
            "write_file",
            json!({"path": "a.txt", "content": "x"}),
            Some("a.txt"),
        ),
        (
            "edit_file",
            json!({"path": "b.txt", "old_text": "x", "new_text": "y"}),
            Some("b.txt"),
        ),
        // A number sent as the path is the file the tool writes: "123".
        (
            "write_file",
            json!({"path": 123, "content": "x"}),
            Some("123"),
        ),
        ("read_file", json!({"path": "a.txt"}), None),
        ("write_file", json!({"path": "a.txt"}), None),
        ("run_command", json!({"argv": ["ls"]}), None),
    ] {
        assert_eq!(
            toolbox.written_path(tool, &arguments).as_deref(),
            path,
            "{tool} {arguments}"
        );
    }
}
