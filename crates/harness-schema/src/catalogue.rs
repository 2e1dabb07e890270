//! The six tools, declared once each: name, description, arguments, example, typed struct.
//!
//! The descriptions are the contract the model learns from. They state ranges and examples in
//! prose as well as in schema keywords because a server may pass on only part of a schema:
//! Ollama reads `tools` into fixed Go structs that keep little more than each property's
//! `type`, `description` and `enum` (the exact set depends on its version), so `minimum`,
//! `maximum`, `minItems` and `examples` may never reach the model.

use std::sync::LazyLock;

use serde::Deserialize;

use crate::spec::{Argument, Definition, Kind, ToolSpec};
use crate::{EditFile, ListDir, ReadFile, RunCommand, SearchText, ToolArgs, ToolName, WriteFile};

/// Every tool the model can call, in the order it is offered: the `tools` array of a chat
/// request is `serde_json::to_value(catalogue())`.
///
/// # Example
///
/// ```
/// let names: Vec<&str> = harness_schema::catalogue().iter().map(|spec| spec.name()).collect();
/// assert_eq!(
///     names,
///     ["read_file", "write_file", "edit_file", "list_dir", "search_text", "run_command"]
/// );
/// ```
pub fn catalogue() -> &'static [ToolSpec] {
    CATALOGUE.as_slice()
}

/// The spec named `name`, if there is one. Exact match only: a misspelled name is the model's
/// to fix, not ours to guess.
pub(crate) fn find(name: &str) -> Option<&'static ToolSpec> {
    catalogue().iter().find(|spec| spec.name() == name)
}

static CATALOGUE: LazyLock<[ToolSpec; 6]> =
    LazyLock::new(|| DEFINITIONS.each_ref().map(ToolSpec::new));

/// The `path` argument of every tool but `run_command`.
const fn path(description: &'static str, required: bool) -> Argument {
    Argument {
        name: "path",
        description,
        required,
        kind: Kind::NonEmptyString,
    }
}

/// Upper bound for a line number: the largest a `u32` holds, so every accepted value fits.
const MAX_LINE: u64 = u32::MAX as u64;

static DEFINITIONS: [Definition; 6] = [
    Definition {
        tool: ToolName::ReadFile,
        description: "Read a text file in the workspace. Returns its lines numbered from 1. \
            A long file is cut off with a note saying how to read the rest: pass start_line \
            and end_line (1-based, inclusive) to read a range.",
        arguments: &[
            path(
                "Path of the file, relative to the workspace root, e.g. \"src/main.rs\".",
                true,
            ),
            Argument {
                name: "start_line",
                description: "First line to return, counting from 1. Omit to start at line 1.",
                required: false,
                kind: Kind::Integer {
                    minimum: 1,
                    maximum: MAX_LINE,
                },
            },
            Argument {
                name: "end_line",
                description: "Last line to return, inclusive, counting from 1. \
                    Omit to read to the end of the file.",
                required: false,
                kind: Kind::Integer {
                    minimum: 1,
                    maximum: MAX_LINE,
                },
            },
        ],
        example: r#"{"path": "src/main.rs"}"#,
        parse: |arguments| ReadFile::deserialize(arguments).map(ToolArgs::ReadFile),
    },
    Definition {
        tool: ToolName::WriteFile,
        description: "Create a new file with the given content; missing parent directories \
            are created. An existing file is refused unless overwrite is true. To change part \
            of an existing file, use edit_file instead: rewriting a whole file silently drops \
            anything you did not repeat. Returns the diff of the change.",
        arguments: &[
            path(
                "Path of the file to create, relative to the workspace root.",
                true,
            ),
            Argument {
                name: "content",
                description: "The complete content of the file.",
                required: true,
                kind: Kind::String,
            },
            Argument {
                name: "overwrite",
                description: "true to replace an existing file entirely. Default false.",
                required: false,
                kind: Kind::Boolean,
            },
        ],
        example: r#"{"path": "notes/todo.md", "content": "- write tests\n"}"#,
        parse: |arguments| WriteFile::deserialize(arguments).map(ToolArgs::WriteFile),
    },
    Definition {
        tool: ToolName::EditFile,
        description: "Replace one piece of text in an existing file. old_text must occur \
            exactly once in the file, character for character, whitespace and indentation \
            included: copy it from read_file output without the line numbers, and include \
            enough surrounding lines to make it unique. To rename something everywhere in \
            the file, set replace_all to true. Returns the diff of the change.",
        arguments: &[
            path(
                "Path of the file to edit, relative to the workspace root.",
                true,
            ),
            Argument {
                name: "old_text",
                description: "The exact text to replace. It must occur exactly once in the file.",
                required: true,
                kind: Kind::NonEmptyString,
            },
            Argument {
                name: "new_text",
                description: "The text to put in its place. Empty to delete old_text.",
                required: true,
                kind: Kind::String,
            },
            Argument {
                name: "replace_all",
                description: "true to replace every occurrence of old_text, not just one. \
                    Default false.",
                required: false,
                kind: Kind::Boolean,
            },
        ],
        example: r#"{"path": "src/lib.rs", "old_text": "let x = 1;", "new_text": "let x = 2;"}"#,
        parse: |arguments| EditFile::deserialize(arguments).map(ToolArgs::EditFile),
    },
    Definition {
        tool: ToolName::ListDir,
        description: "List the files and directories under a directory, skipping what \
            .gitignore ignores. The listing is capped at a number of entries; to see more, \
            list a subdirectory or lower the depth.",
        arguments: &[
            path(
                "Directory to list, relative to the workspace root. Omit for the root.",
                false,
            ),
            Argument {
                name: "depth",
                description: "How many levels deep to list, from 1 to 5. Omit for the default.",
                required: false,
                kind: Kind::Integer {
                    minimum: 1,
                    maximum: ListDir::MAX_DEPTH as u64,
                },
            },
        ],
        example: r#"{"path": "src", "depth": 2}"#,
        parse: |arguments| ListDir::deserialize(arguments).map(ToolArgs::ListDir),
    },
    Definition {
        tool: ToolName::SearchText,
        description: "Search file contents for a regular expression, skipping what \
            .gitignore ignores. Each match is one line, \"file:line: text\"; the number of \
            matches is capped, so narrow the search with path or glob when there are many.",
        arguments: &[
            Argument {
                name: "pattern",
                description: "Regular expression to search for (Rust regex syntax), \
                    e.g. \"fn main\" or \"TODO|FIXME\".",
                required: true,
                kind: Kind::NonEmptyString,
            },
            path(
                "File or directory to search, relative to the workspace root. \
                    Omit to search the whole workspace.",
                false,
            ),
            Argument {
                name: "glob",
                description: "Search only files whose path matches this glob, \
                    e.g. \"*.rs\" or \"tests/**/*.py\".",
                required: false,
                kind: Kind::NonEmptyString,
            },
        ],
        example: r#"{"pattern": "fn main", "glob": "*.rs"}"#,
        parse: |arguments| SearchText::deserialize(arguments).map(ToolArgs::SearchText),
    },
    Definition {
        tool: ToolName::RunCommand,
        description: "Run a program in the workspace directory and return its exit status \
            and output (stdout and stderr together; long output is cut in the middle). There \
            is no shell: pipes, redirections, &&, globs and $VARIABLES do not work. Pass the \
            program and each argument as separate strings. Commands the policy forbids are \
            refused. The command is killed when its timeout expires.",
        arguments: &[
            Argument {
                name: "argv",
                description: "The program and its arguments, one string each, \
                    e.g. [\"pytest\", \"-q\"] or [\"cargo\", \"test\", \"--\", \"parse\"].",
                required: true,
                kind: Kind::NonEmptyStringArray {
                    example: &["pytest", "-q"],
                },
            },
            Argument {
                name: "timeout_s",
                description: "Seconds before the command is killed, from 1 to 600. Omit for \
                    the default. The harness may lower it to its configured maximum.",
                required: false,
                kind: Kind::Integer {
                    minimum: 1,
                    maximum: RunCommand::MAX_TIMEOUT_S,
                },
            },
        ],
        example: r#"{"argv": ["pytest", "-q"]}"#,
        parse: |arguments| RunCommand::deserialize(arguments).map(ToolArgs::RunCommand),
    },
];

#[cfg(test)]
mod tests {
    //! The schemas and the typed structs agree, property for field.

    use std::collections::BTreeSet;

    use serde_json::{Value, json};

    use super::{DEFINITIONS, catalogue, find};
    use crate::{
        EditFile, ListDir, ReadFile, RunCommand, SearchText, ToolArgs, WriteFile, parse_call,
    };

    /// For every tool: a struct literal with every field set (the compiler insists on every
    /// field, so a new field cannot be forgotten here) and the same call as JSON.
    fn maximal_calls() -> Vec<(ToolArgs, Value)> {
        let text = str::to_owned;
        vec![
            (
                ToolArgs::ReadFile(ReadFile {
                    path: text("a.rs"),
                    start_line: Some(2),
                    end_line: Some(3),
                }),
                json!({"path": "a.rs", "start_line": 2, "end_line": 3}),
            ),
            (
                ToolArgs::WriteFile(WriteFile {
                    path: text("a.rs"),
                    content: text("fn main() {}\n"),
                    overwrite: true,
                }),
                json!({"path": "a.rs", "content": "fn main() {}\n", "overwrite": true}),
            ),
            (
                ToolArgs::EditFile(EditFile {
                    path: text("a.rs"),
                    old_text: text("main"),
                    new_text: text("start"),
                    replace_all: true,
                }),
                json!({"path": "a.rs", "old_text": "main", "new_text": "start", "replace_all": true}),
            ),
            (
                ToolArgs::ListDir(ListDir {
                    path: Some(text("src")),
                    depth: Some(3),
                }),
                json!({"path": "src", "depth": 3}),
            ),
            (
                ToolArgs::SearchText(SearchText {
                    pattern: text("fn \\w+"),
                    path: Some(text("src")),
                    glob: Some(text("*.rs")),
                }),
                json!({"pattern": "fn \\w+", "path": "src", "glob": "*.rs"}),
            ),
            (
                ToolArgs::RunCommand(RunCommand {
                    argv: vec![text("cargo"), text("test")],
                    timeout_s: Some(30),
                }),
                json!({"argv": ["cargo", "test"], "timeout_s": 30}),
            ),
        ]
    }

    fn keys(object: &Value) -> BTreeSet<&str> {
        object
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect()
    }

    #[test]
    fn the_maximal_calls_cover_every_tool_in_catalogue_order() {
        let names: Vec<&str> = maximal_calls()
            .iter()
            .map(|(args, _)| args.name())
            .collect();
        let catalogue: Vec<&str> = catalogue().iter().map(|spec| spec.name()).collect();
        assert_eq!(names, catalogue);
    }

    #[test]
    fn every_struct_field_is_a_schema_property_and_back() {
        for (args, call) in maximal_calls() {
            let spec = find(args.name()).expect("every ToolArgs variant has a spec");
            let fields = serde_json::to_value(&args).expect("arguments serialize");
            assert_eq!(fields, call, "{}: struct fields vs the call", args.name());
            assert_eq!(
                keys(&fields),
                keys(&spec.parameters()["properties"]),
                "{}: struct fields vs schema properties",
                args.name()
            );
        }
    }

    #[test]
    fn every_property_lands_in_its_own_field() {
        for (args, call) in maximal_calls() {
            assert_eq!(parse_call(args.name(), &call), Ok(args));
        }
    }

    #[test]
    fn a_field_is_optional_exactly_when_its_property_is_not_required() {
        for (args, call) in maximal_calls() {
            let spec = find(args.name()).expect("every ToolArgs variant has a spec");
            let required: BTreeSet<&str> = spec.parameters()["required"]
                .as_array()
                .expect("required is an array")
                .iter()
                .map(|name| name.as_str().expect("required names are strings"))
                .collect();
            for property in keys(&call) {
                let mut without = call.clone();
                without.as_object_mut().expect("an object").remove(property);
                let struct_accepts = (spec.definition().parse)(&without).is_ok();
                let schema_accepts = spec.validator().is_valid(&without);
                assert_eq!(
                    (struct_accepts, schema_accepts),
                    (!required.contains(property), !required.contains(property)),
                    "{} without {property}",
                    args.name()
                );
            }
        }
    }

    #[test]
    fn every_example_shown_in_errors_is_a_valid_call() {
        for definition in &DEFINITIONS {
            let example: Value =
                serde_json::from_str(definition.example).expect("examples are JSON");
            let parsed = parse_call(definition.tool.as_str(), &example);
            assert!(parsed.is_ok(), "{}: {parsed:?}", definition.tool.as_str());
        }
    }

    #[test]
    fn every_schema_is_valid_json_schema() {
        for spec in catalogue() {
            let verdict = jsonschema::meta::validate(spec.parameters());
            assert!(verdict.is_ok(), "{}: {verdict:?}", spec.name());
        }
    }

    #[test]
    fn the_argument_names_are_the_properties_in_declared_order() {
        let names: Vec<Vec<&str>> = DEFINITIONS
            .iter()
            .map(super::Definition::argument_names)
            .collect();
        assert_eq!(
            names,
            [
                vec!["path", "start_line", "end_line"],
                vec!["path", "content", "overwrite"],
                vec!["path", "old_text", "new_text", "replace_all"],
                vec!["path", "depth"],
                vec!["pattern", "path", "glob"],
                vec!["argv", "timeout_s"],
            ]
        );
    }

    #[test]
    fn find_matches_names_exactly() {
        assert_eq!(find("list_dir").map(|spec| spec.name()), Some("list_dir"));
        assert!(find("list_dirs").is_none());
        assert!(find("LIST_DIR").is_none());
    }
}
