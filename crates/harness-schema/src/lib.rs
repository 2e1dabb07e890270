//! The contract between a model and the harness's tools: what each tool's arguments are, and a
//! check of what the model sent before anything runs.
//!
//! For every tool the model can call ([`catalogue`]), a [`ToolSpec`] holds the name, a
//! description that teaches the model how to call it, and the JSON Schema of its arguments.
//! A spec serializes to the entry Ollama and OpenAI-compatible servers accept in `tools`.
//! [`parse_call`] checks a call against its schema and returns typed [`ToolArgs`], or an
//! [`ArgumentError`] worded so the model can fix its next call.
//!
//! # Example
//!
//! ```
//! use harness_schema::{catalogue, parse_call, EditFile, ToolArgs};
//! use serde_json::json;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // What goes into the request's `tools` array.
//! let tools = serde_json::to_value(catalogue())?;
//! assert_eq!(tools[2]["function"]["name"], "edit_file");
//! assert_eq!(tools[2]["function"]["parameters"]["additionalProperties"], false);
//!
//! // A call from the model: arguments may also arrive as a string holding the JSON object.
//! let args = parse_call(
//!     "edit_file",
//!     &json!(r#"{"path": "src/lib.rs", "old_text": "a + b", "new_text": "a - b"}"#),
//! )?;
//! let ToolArgs::EditFile(EditFile { path, old_text, new_text, .. }) = args else {
//!     unreachable!("edit_file arguments are EditFile");
//! };
//! assert_eq!((path.as_str(), old_text.as_str(), new_text.as_str()), ("src/lib.rs", "a + b", "a - b"));
//!
//! // A broken call: every problem, one per line, each naming the tool.
//! let error = parse_call("edit_file", &json!({"path": "src/lib.rs", "line": 3}))
//!     .expect_err("old_text and new_text are missing, line is unknown");
//! assert_eq!(
//!     error.to_string(),
//!     "edit_file: missing required argument \"old_text\"\n\
//!      edit_file: missing required argument \"new_text\"\n\
//!      edit_file: unknown argument \"line\" (expected: path, old_text, new_text, replace_all)"
//! );
//! # Ok(())
//! # }
//! ```
//!
//! # The tools
//!
//! | tool | arguments (`?` optional) |
//! |---|---|
//! | `read_file` | `path`, `start_line?`, `end_line?` (1-based, inclusive, ≥ 1) |
//! | `write_file` | `path`, `content`, `overwrite?` (default `false`) |
//! | `edit_file` | `path`, `old_text` (must match exactly once), `new_text`; optional `replace_all` (every match) |
//! | `list_dir` | `path?`, `depth?` (1 to 5) |
//! | `search_text` | `pattern` (a regex), `path?`, `glob?` |
//! | `run_command` | `argv` (array of at least one string), `timeout_s?` (1 to 600) |
//!
//! Paths, `old_text`, `pattern` and `glob` must not be empty; `content` and `new_text` may be.
//!
//! # Accepted arguments
//!
//! - A JSON object, as Ollama's `/api/chat` delivers `tool_calls[].function.arguments`.
//! - A string holding a JSON object, as `/v1/chat/completions` delivers them.
//!
//! Anything else is refused: a number, an array, `null`, a string holding something other than
//! an object (an empty string included). [`parse_call`] guesses nothing: `"argv": "pytest -q"`
//! is an error asking for `["pytest", "-q"]`. [`parse_call_forgiving`] (what the toolbox uses)
//! reads a slip that has exactly one reading and reports it: `"true"` for a boolean, `"60"`
//! for a number, `42` for text, and a command line of plain words for `argv`. A command line
//! with quotes, escapes, `$`, globs or operators is still an error, because only a shell
//! would know what it meant, and guessing would run something the model did not write.
//!
//! # Error messages
//!
//! Each line starts with the tool name and names the argument, what it must be, and what was
//! sent: `list_dir: "depth" must be at most 5, got 9`. An unknown argument lists the expected
//! ones; a wrong type names the expected type and shows an example where the schema has one.
//! All problems of a call are reported at once (the first 20, then a count of the rest).
//!
//! # The schema is the source of truth
//!
//! Validation is done by the [`jsonschema`](https://docs.rs/jsonschema) crate against the same
//! schema the model was shown, compiled once per process on first use. Only then are the
//! values moved into the typed structs with serde. Tests keep the two in step: every schema
//! property is a struct field and the other way round, and a property is required in the schema
//! exactly when its field is not optional. A property test checks that every call the schema
//! accepts also deserializes.
//!
//! # What this crate does not do
//!
//! It runs no tool and touches no file: whether a path stays inside the workspace, a regex
//! compiles or a command is allowed is for the crates that act on the arguments. It never
//! fetches a schema: ours are built in, and the validator is built without network support.

mod args;
mod catalogue;
mod coerce;
mod error;
mod name;
mod parse;
mod render;
mod spec;

pub use args::{EditFile, ListDir, ReadFile, RunCommand, SearchText, ToolArgs, WriteFile};
pub use catalogue::catalogue;
pub use coerce::Coercion;
pub use error::ArgumentError;
pub use name::ToolName;
pub use parse::{Parsed, parse_call, parse_call_forgiving};
pub use spec::ToolSpec;
