//! `parse_call_forgiving`: each unambiguous slip of a small model is read and reported, the
//! strict `parse_call` still refuses it, and whatever is left invalid is still an error.

use harness_schema::{ListDir, RunCommand, ToolArgs, WriteFile, parse_call, parse_call_forgiving};
use serde_json::json;

#[test]
fn slips_with_one_reading_are_read_and_reported_and_parse_call_still_refuses_them() {
    let cases = [
        (
            "run_command",
            json!({"argv": "pytest -q", "timeout_s": "60"}),
            ToolArgs::RunCommand(RunCommand {
                argv: vec!["pytest".into(), "-q".into()],
                timeout_s: Some(60),
            }),
            vec!["argv", "timeout_s"],
        ),
        (
            "write_file",
            json!({"path": "a.txt", "content": 42, "overwrite": "true"}),
            ToolArgs::WriteFile(WriteFile {
                path: "a.txt".into(),
                content: "42".into(),
                overwrite: true,
            }),
            vec!["content", "overwrite"],
        ),
        (
            "list_dir",
            json!({"depth": "2"}),
            ToolArgs::ListDir(ListDir {
                path: None,
                depth: Some(2),
            }),
            vec!["depth"],
        ),
    ];
    for (tool, arguments, expected, names) in cases {
        let parsed = parse_call_forgiving(tool, &arguments).expect("forgiven");
        assert_eq!(parsed.args, expected, "{tool} {arguments}");
        let coerced: Vec<&str> = parsed.coerced.iter().map(|c| c.argument).collect();
        assert_eq!(coerced, names, "{tool} {arguments}");
        assert!(
            parse_call(tool, &arguments).is_err(),
            "strict: {tool} {arguments}"
        );
    }
    // Arguments sent right are not reported.
    let right = parse_call_forgiving("run_command", &json!({"argv": ["ls"]})).unwrap();
    assert!(right.coerced.is_empty());
}

#[test]
fn what_is_still_wrong_after_reading_is_an_error_and_ambiguity_is_never_guessed() {
    for (tool, arguments, says) in [
        ("list_dir", json!({"depth": "9"}), "depth"),
        (
            "run_command",
            json!({"argv": "ls | wc -l"}),
            "must be an array of strings",
        ),
        (
            "run_command",
            json!({"argv": "echo 'a b'"}),
            "must be an array of strings",
        ),
        (
            "write_file",
            json!({"path": "a", "content": "x", "overwrite": "yes"}),
            "overwrite",
        ),
        (
            "read_file",
            json!({"path": "a", "start_line": "-1"}),
            "start_line",
        ),
    ] {
        let error = parse_call_forgiving(tool, &arguments).expect_err("still wrong");
        assert!(
            error.to_string().contains(says),
            "{tool} {arguments}: {error}"
        );
    }
}
