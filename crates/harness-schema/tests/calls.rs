//! Tool calls as a model sends them, through the public `parse_call`: for every tool, valid
//! minimal and maximal calls, each kind of mistake, range boundaries, and the forms arguments
//! arrive in.

use harness_schema::{
    EditFile, ListDir, ReadFile, RunCommand, SearchText, ToolArgs, WriteFile, parse_call,
};
use serde_json::{Value, json};

/// The message `parse_call` refuses the call with; fails the test if it accepts it.
fn refusal(tool: &str, arguments: &Value) -> String {
    match parse_call(tool, arguments) {
        Ok(args) => panic!("{tool} accepted {arguments}: {args:?}"),
        Err(error) => error.to_string(),
    }
}

/// The typed arguments `parse_call` returns; fails the test if it refuses the call.
fn accepted(tool: &str, arguments: &Value) -> ToolArgs {
    parse_call(tool, arguments)
        .unwrap_or_else(|error| panic!("{tool} refused {arguments}:\n{error}"))
}

/// `test_name: tool {arguments} => "message",` — the call is refused with exactly this message.
macro_rules! refused {
    ($($test:ident: $tool:literal $arguments:tt => $message:expr,)*) => {
        $(
            #[test]
            fn $test() {
                assert_eq!(refusal($tool, &json!($arguments)), $message);
            }
        )*
    };
}

/// `test_name: tool {arguments} => expected,` — the call is accepted as exactly `expected`.
macro_rules! accepted {
    ($($test:ident: $tool:literal $arguments:tt => $expected:expr,)*) => {
        $(
            #[test]
            fn $test() {
                assert_eq!(accepted($tool, &json!($arguments)), $expected);
            }
        )*
    };
}

fn text(value: &str) -> String {
    value.to_owned()
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| text(word)).collect()
}

mod read_file {
    use super::*;

    accepted! {
        minimal: "read_file" {"path": "src/main.rs"} => ToolArgs::ReadFile(ReadFile {
            path: text("src/main.rs"), start_line: None, end_line: None,
        }),
        maximal_at_the_range_ends: "read_file" {"path": "a", "start_line": 1, "end_line": 4_294_967_295_u64}
            => ToolArgs::ReadFile(ReadFile {
                path: text("a"), start_line: Some(1), end_line: Some(u32::MAX),
            }),
        line_numbers_written_as_whole_floats: "read_file" {"path": "a", "start_line": 2.0, "end_line": 3.0}
            => ToolArgs::ReadFile(ReadFile {
                path: text("a"), start_line: Some(2), end_line: Some(3),
            }),
    }

    refused! {
        missing_path: "read_file" {"start_line": 3}
            => r#"read_file: missing required argument "path""#,
        path_not_a_string: "read_file" {"path": 5}
            => r#"read_file: "path" must be a string, got number 5"#,
        start_line_not_an_integer: "read_file" {"path": "a", "start_line": "10"}
            => r#"read_file: "start_line" must be an integer, got string "10""#,
        end_line_not_an_integer: "read_file" {"path": "a", "end_line": 1.5}
            => r#"read_file: "end_line" must be an integer, got number 1.5"#,
        unknown_argument: "read_file" {"path": "a", "line": 3}
            => r#"read_file: unknown argument "line" (expected: path, start_line, end_line)"#,
        empty_path: "read_file" {"path": ""}
            => r#"read_file: "path" must not be empty"#,
        start_line_zero: "read_file" {"path": "a", "start_line": 0}
            => r#"read_file: "start_line" must be at least 1, got 0"#,
        end_line_zero: "read_file" {"path": "a", "end_line": 0}
            => r#"read_file: "end_line" must be at least 1, got 0"#,
        start_line_past_u32: "read_file" {"path": "a", "start_line": 4_294_967_296_u64}
            => r#"read_file: "start_line" must be at most 4294967295, got 4294967296"#,
        end_line_past_u32: "read_file" {"path": "a", "end_line": 4_294_967_296_u64}
            => r#"read_file: "end_line" must be at most 4294967295, got 4294967296"#,
    }
}

mod write_file {
    use super::*;

    accepted! {
        minimal_with_empty_content: "write_file" {"path": "a.txt", "content": ""}
            => ToolArgs::WriteFile(WriteFile {
                path: text("a.txt"), content: text(""), overwrite: false,
            }),
        maximal: "write_file" {"path": "a.txt", "content": "hi\n", "overwrite": true}
            => ToolArgs::WriteFile(WriteFile {
                path: text("a.txt"), content: text("hi\n"), overwrite: true,
            }),
        overwrite_false_spelled_out: "write_file" {"path": "a", "content": "x", "overwrite": false}
            => ToolArgs::WriteFile(WriteFile {
                path: text("a"), content: text("x"), overwrite: false,
            }),
    }

    refused! {
        missing_path: "write_file" {"content": "x"}
            => r#"write_file: missing required argument "path""#,
        missing_content: "write_file" {"path": "a"}
            => r#"write_file: missing required argument "content""#,
        path_not_a_string: "write_file" {"path": null, "content": "x"}
            => r#"write_file: "path" must be a string, got null"#,
        content_not_a_string: "write_file" {"path": "a", "content": ["line 1", "line 2"]}
            => r#"write_file: "content" must be a string, got array ["line 1", "line 2"]"#,
        overwrite_not_a_boolean: "write_file" {"path": "a", "content": "x", "overwrite": "true"}
            => r#"write_file: "overwrite" must be a boolean, got string "true""#,
        unknown_argument: "write_file" {"path": "a", "content": "x", "mode": "0644"}
            => r#"write_file: unknown argument "mode" (expected: path, content, overwrite)"#,
        empty_path: "write_file" {"path": "", "content": "x"}
            => r#"write_file: "path" must not be empty"#,
    }
}

mod edit_file {
    use super::*;

    accepted! {
        minimal_and_new_text_may_be_empty: "edit_file"
            {"path": "a.rs", "old_text": "x", "new_text": ""}
            => ToolArgs::EditFile(EditFile {
                path: text("a.rs"), old_text: text("x"), new_text: text(""), replace_all: false,
            }),
        maximal_replaces_every_occurrence: "edit_file"
            {"path": "a.rs", "old_text": "x", "new_text": "y", "replace_all": true}
            => ToolArgs::EditFile(EditFile {
                path: text("a.rs"), old_text: text("x"), new_text: text("y"), replace_all: true,
            }),
    }

    refused! {
        missing_old_text: "edit_file" {"path": "a.rs", "new_text": "y"}
            => r#"edit_file: missing required argument "old_text""#,
        missing_new_text: "edit_file" {"path": "a.rs", "old_text": "x"}
            => r#"edit_file: missing required argument "new_text""#,
        missing_path: "edit_file" {"old_text": "x", "new_text": "y"}
            => r#"edit_file: missing required argument "path""#,
        path_not_a_string: "edit_file" {"path": true, "old_text": "x", "new_text": "y"}
            => r#"edit_file: "path" must be a string, got boolean true"#,
        old_text_not_a_string: "edit_file" {"path": "a", "old_text": {"line": 3}, "new_text": "y"}
            => r#"edit_file: "old_text" must be a string, got object {"line": 3}"#,
        new_text_not_a_string: "edit_file" {"path": "a", "old_text": "x", "new_text": null}
            => r#"edit_file: "new_text" must be a string, got null"#,
        unknown_argument: "edit_file" {"path": "a", "old_text": "x", "new_text": "y", "all": true}
            => r#"edit_file: unknown argument "all" (expected: path, old_text, new_text, replace_all)"#,
        replace_all_not_a_boolean: "edit_file" {"path": "a", "old_text": "x", "new_text": "y", "replace_all": 1}
            => r#"edit_file: "replace_all" must be a boolean, got number 1"#,
        empty_old_text: "edit_file" {"path": "a", "old_text": "", "new_text": "y"}
            => r#"edit_file: "old_text" must not be empty"#,
        empty_path: "edit_file" {"path": "", "old_text": "x", "new_text": "y"}
            => r#"edit_file: "path" must not be empty"#,
    }
}

mod list_dir {
    use super::*;

    accepted! {
        minimal_needs_nothing: "list_dir" {}
            => ToolArgs::ListDir(ListDir { path: None, depth: None }),
        maximal_at_the_deepest: "list_dir" {"path": "src", "depth": 5}
            => ToolArgs::ListDir(ListDir { path: Some(text("src")), depth: Some(5) }),
        shallowest: "list_dir" {"depth": 1}
            => ToolArgs::ListDir(ListDir { path: None, depth: Some(1) }),
        one_character_path: "list_dir" {"path": "."}
            => ToolArgs::ListDir(ListDir { path: Some(text(".")), depth: None }),
    }

    refused! {
        path_not_a_string: "list_dir" {"path": 1}
            => r#"list_dir: "path" must be a string, got number 1"#,
        depth_not_an_integer: "list_dir" {"depth": "2"}
            => r#"list_dir: "depth" must be an integer, got string "2""#,
        unknown_argument: "list_dir" {"recursive": true}
            => r#"list_dir: unknown argument "recursive" (expected: path, depth)"#,
        depth_zero: "list_dir" {"depth": 0}
            => r#"list_dir: "depth" must be at least 1, got 0"#,
        depth_one_too_deep: "list_dir" {"depth": 6}
            => r#"list_dir: "depth" must be at most 5, got 6"#,
        depth_far_too_deep: "list_dir" {"depth": 9}
            => r#"list_dir: "depth" must be at most 5, got 9"#,
        empty_path: "list_dir" {"path": ""}
            => r#"list_dir: "path" must not be empty"#,
    }

    #[test]
    fn the_deepest_listing_is_the_published_constant() {
        assert_eq!(ListDir::MAX_DEPTH, 5);
    }
}

mod search_text {
    use super::*;

    accepted! {
        minimal: "search_text" {"pattern": "x"}
            => ToolArgs::SearchText(SearchText { pattern: text("x"), path: None, glob: None }),
        maximal: "search_text" {"pattern": "fn main", "path": "src", "glob": "*.rs"}
            => ToolArgs::SearchText(SearchText {
                pattern: text("fn main"), path: Some(text("src")), glob: Some(text("*.rs")),
            }),
    }

    refused! {
        missing_pattern: "search_text" {"path": "src"}
            => r#"search_text: missing required argument "pattern""#,
        pattern_not_a_string: "search_text" {"pattern": 1}
            => r#"search_text: "pattern" must be a string, got number 1"#,
        path_not_a_string: "search_text" {"pattern": "x", "path": []}
            => r#"search_text: "path" must be a string, got array []"#,
        glob_not_a_string: "search_text" {"pattern": "x", "glob": ["*.rs", "*.py"]}
            => r#"search_text: "glob" must be a string, got array ["*.rs", "*.py"]"#,
        unknown_argument: "search_text" {"pattern": "x", "case_insensitive": true}
            => r#"search_text: unknown argument "case_insensitive" (expected: pattern, path, glob)"#,
        empty_pattern: "search_text" {"pattern": ""}
            => r#"search_text: "pattern" must not be empty"#,
        empty_path: "search_text" {"pattern": "x", "path": ""}
            => r#"search_text: "path" must not be empty"#,
        empty_glob: "search_text" {"pattern": "x", "glob": ""}
            => r#"search_text: "glob" must not be empty"#,
    }
}

mod run_command {
    use super::*;

    accepted! {
        minimal: "run_command" {"argv": ["ls"]}
            => ToolArgs::RunCommand(RunCommand { argv: argv(&["ls"]), timeout_s: None }),
        maximal_at_the_longest_timeout: "run_command" {"argv": ["pytest", "-q"], "timeout_s": 600}
            => ToolArgs::RunCommand(RunCommand { argv: argv(&["pytest", "-q"]), timeout_s: Some(600) }),
        shortest_timeout: "run_command" {"argv": ["ls"], "timeout_s": 1}
            => ToolArgs::RunCommand(RunCommand { argv: argv(&["ls"]), timeout_s: Some(1) }),
        empty_words_are_arguments_too: "run_command" {"argv": ["git", "commit", "-m", ""]}
            => ToolArgs::RunCommand(RunCommand { argv: argv(&["git", "commit", "-m", ""]), timeout_s: None }),
    }

    refused! {
        missing_argv: "run_command" {"timeout_s": 5}
            => r#"run_command: missing required argument "argv""#,
        // Never split a command line ourselves: that is a shell's job.
        argv_as_a_command_line: "run_command" {"argv": "pytest -q"}
            => r#"run_command: "argv" must be an array of strings, e.g. ["pytest", "-q"], got string "pytest -q""#,
        argv_items_not_strings: "run_command" {"argv": ["sleep", 5, null]}
            => "run_command: \"argv[1]\" must be a string, got number 5\n\
                run_command: \"argv[2]\" must be a string, got null",
        empty_argv: "run_command" {"argv": []}
            => r#"run_command: "argv" must have at least 1 item, e.g. ["pytest", "-q"], got []"#,
        timeout_not_an_integer: "run_command" {"argv": ["ls"], "timeout_s": "60"}
            => r#"run_command: "timeout_s" must be an integer, got string "60""#,
        timeout_with_a_fraction: "run_command" {"argv": ["ls"], "timeout_s": 1.5}
            => r#"run_command: "timeout_s" must be an integer, got number 1.5"#,
        unknown_argument: "run_command" {"argv": ["ls"], "shell": true}
            => r#"run_command: unknown argument "shell" (expected: argv, timeout_s)"#,
        timeout_zero: "run_command" {"argv": ["ls"], "timeout_s": 0}
            => r#"run_command: "timeout_s" must be at least 1, got 0"#,
        timeout_one_too_long: "run_command" {"argv": ["ls"], "timeout_s": 601}
            => r#"run_command: "timeout_s" must be at most 600, got 601"#,
        negative_timeout: "run_command" {"argv": ["ls"], "timeout_s": -1}
            => r#"run_command: "timeout_s" must be at least 1, got -1"#,
    }

    #[test]
    fn the_longest_timeout_is_the_published_constant() {
        assert_eq!(RunCommand::MAX_TIMEOUT_S, 600);
    }
}

mod forms {
    //! The shapes `arguments` arrives in, whatever the tool.
    use super::*;

    /// One valid call of each tool, used to check the string form of all of them.
    fn valid_calls() -> Vec<(&'static str, Value)> {
        vec![
            (
                "read_file",
                json!({"path": "a", "start_line": 1, "end_line": 2}),
            ),
            (
                "write_file",
                json!({"path": "a", "content": "x", "overwrite": true}),
            ),
            (
                "edit_file",
                json!({"path": "a", "old_text": "x", "new_text": "y"}),
            ),
            ("list_dir", json!({"path": "a", "depth": 2})),
            (
                "search_text",
                json!({"pattern": "x", "path": "a", "glob": "*.rs"}),
            ),
            (
                "run_command",
                json!({"argv": ["ls", "-l"], "timeout_s": 10}),
            ),
        ]
    }

    #[test]
    fn a_string_holding_the_object_means_the_object() {
        for (tool, object) in valid_calls() {
            let as_string = Value::String(object.to_string());
            assert_eq!(
                accepted(tool, &as_string),
                accepted(tool, &object),
                "{tool}"
            );
        }
    }

    #[test]
    fn a_string_holding_the_object_may_be_pretty_printed() {
        let pretty = "{\n  \"path\": \"a\"\n}\n";
        assert_eq!(
            accepted("read_file", &json!(pretty)),
            ToolArgs::ReadFile(ReadFile {
                path: text("a"),
                start_line: None,
                end_line: None
            })
        );
    }

    #[test]
    fn a_string_holding_a_bad_object_gets_the_same_errors_as_the_object() {
        let object = json!({"path": 5, "line": 1});
        let as_string = Value::String(object.to_string());
        assert_eq!(
            refusal("read_file", &as_string),
            refusal("read_file", &object)
        );
    }

    refused! {
        invalid_json_in_a_string: "read_file" "{\"path\": \"a\""
            => "read_file: the arguments are a string that is not valid JSON \
                (EOF while parsing an object at line 1 column 12); \
                send a JSON object such as {\"path\": \"src/main.rs\"}",
        an_empty_string: "list_dir" ""
            => "list_dir: the arguments are a string that is not valid JSON \
                (EOF while parsing a value at line 1 column 0); \
                send a JSON object such as {\"path\": \"src\", \"depth\": 2}",
        a_command_line_instead_of_json: "run_command" "pytest -q"
            => "run_command: the arguments are a string that is not valid JSON \
                (expected value at line 1 column 1); \
                send a JSON object such as {\"argv\": [\"pytest\", \"-q\"]}",
        a_number: "read_file" 3
            => r#"read_file: the arguments must be a JSON object such as {"path": "src/main.rs"}, got a number"#,
        an_array: "run_command" ["pytest", "-q"]
            => r#"run_command: the arguments must be a JSON object such as {"argv": ["pytest", "-q"]}, got an array"#,
        null: "list_dir" null
            => r#"list_dir: the arguments must be a JSON object such as {"path": "src", "depth": 2}, got null"#,
        a_boolean: "search_text" true
            => r#"search_text: the arguments must be a JSON object such as {"pattern": "fn main", "glob": "*.rs"}, got a boolean"#,
        a_string_holding_an_array: "run_command" "[\"pytest\", \"-q\"]"
            => r#"run_command: the arguments must be a JSON object such as {"argv": ["pytest", "-q"]}, got a string holding an array"#,
        a_string_holding_a_string: "write_file" "\"{}\""
            => r#"write_file: the arguments must be a JSON object such as {"path": "notes/todo.md", "content": "- write tests\n"}, got a string holding a string"#,
        a_string_holding_null: "edit_file" "null"
            => r#"edit_file: the arguments must be a JSON object such as {"path": "src/lib.rs", "old_text": "let x = 1;", "new_text": "let x = 2;"}, got a string holding null"#,
    }
}

mod names {
    use super::*;

    const AVAILABLE: &str = "the available tools are: read_file, write_file, edit_file, list_dir, search_text, run_command";

    refused! {
        unknown_tool: "delete_file" {"path": "a"}
            => format!(r#"unknown tool "delete_file"; {AVAILABLE}"#),
        names_are_matched_exactly: "Read_File" {"path": "a"}
            => format!(r#"unknown tool "Read_File"; {AVAILABLE}"#),
        empty_name: "" {}
            => format!(r#"unknown tool ""; {AVAILABLE}"#),
    }

    #[test]
    fn the_tool_name_is_checked_before_the_arguments() {
        let message = refusal("bash", &json!("not even JSON"));
        assert!(message.starts_with(r#"unknown tool "bash";"#), "{message}");
    }

    #[test]
    fn a_huge_unknown_name_is_shortened_in_the_message() {
        let name = "x".repeat(10_000);
        let message = refusal(&name, &json!({}));
        assert!(message.len() < 300, "{} bytes: {message}", message.len());
        assert!(
            message.starts_with(&format!("unknown tool \"{}…;", "x".repeat(79))),
            "{message}"
        );
    }

    #[test]
    fn every_tool_name_of_parsed_arguments_is_the_called_name() {
        let calls = [
            ("read_file", json!({"path": "a"})),
            ("write_file", json!({"path": "a", "content": ""})),
            (
                "edit_file",
                json!({"path": "a", "old_text": "x", "new_text": ""}),
            ),
            ("list_dir", json!({})),
            ("search_text", json!({"pattern": "x"})),
            ("run_command", json!({"argv": ["ls"]})),
        ];
        for (tool, arguments) in calls {
            assert_eq!(accepted(tool, &arguments).name(), tool);
        }
    }
}

mod several_errors {
    use super::*;

    refused! {
        every_problem_is_reported_one_per_line: "read_file"
            {"path": 5, "start_line": 0, "end_line": "9", "line": 1, "lines": 2}
            => "read_file: \"end_line\" must be an integer, got string \"9\"\n\
                read_file: \"path\" must be a string, got number 5\n\
                read_file: \"start_line\" must be at least 1, got 0\n\
                read_file: unknown argument \"line\" (expected: path, start_line, end_line)\n\
                read_file: unknown argument \"lines\" (expected: path, start_line, end_line)",
        missing_and_unknown_together: "edit_file" {"file": "a.rs", "old": "x", "new": "y"}
            => "edit_file: missing required argument \"path\"\n\
                edit_file: missing required argument \"old_text\"\n\
                edit_file: missing required argument \"new_text\"\n\
                edit_file: unknown argument \"file\" (expected: path, old_text, new_text, replace_all)\n\
                edit_file: unknown argument \"new\" (expected: path, old_text, new_text, replace_all)\n\
                edit_file: unknown argument \"old\" (expected: path, old_text, new_text, replace_all)",
    }

    #[test]
    fn the_problems_are_also_available_one_by_one() {
        let error = parse_call("run_command", &json!({"argv": [], "timeout_s": 0}))
            .expect_err("both arguments are out of range");
        let harness_schema::ArgumentError::InvalidArguments { tool, problems } = error else {
            panic!("expected InvalidArguments, got {error:?}");
        };
        assert_eq!(tool, "run_command");
        assert_eq!(
            problems,
            [
                r#""argv" must have at least 1 item, e.g. ["pytest", "-q"], got []"#,
                r#""timeout_s" must be at least 1, got 0"#,
            ]
        );
    }
}
