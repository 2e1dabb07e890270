//! [`ArgumentError`]: why a tool call was refused, worded for the model that made it.

use thiserror::Error;

use crate::render::quoted;

/// A tool call that was refused before anything ran.
///
/// The message is written for the model to read and fix its next call: it starts with the tool
/// name and says what to send instead. [`ArgumentError::InvalidArguments`] puts each problem on
/// its own line, so one reply can fix them all.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ArgumentError {
    /// No tool has this name.
    #[error("unknown tool {}; the available tools are: {}", quoted(name), available.join(", "))]
    UnknownTool {
        /// The name the model sent.
        name: String,
        /// The names it could have used.
        available: Vec<&'static str>,
    },
    /// The arguments were neither a JSON object nor a string holding one.
    #[error("{tool}: the arguments must be a JSON object such as {example}, got {got}")]
    NotAnObject {
        /// The tool called.
        tool: &'static str,
        /// What was sent instead, e.g. `an array` or `a string holding a number`.
        got: String,
        /// A valid call of this tool.
        example: &'static str,
    },
    /// The arguments were a string, but not valid JSON.
    #[error(
        "{tool}: the arguments are a string that is not valid JSON ({reason}); \
         send a JSON object such as {example}"
    )]
    InvalidJson {
        /// The tool called.
        tool: &'static str,
        /// Why the JSON parser stopped, with line and column.
        reason: String,
        /// A valid call of this tool.
        example: &'static str,
    },
    /// The arguments were an object, but broke the tool's schema.
    #[error("{}", lines(tool, problems))]
    InvalidArguments {
        /// The tool called.
        tool: &'static str,
        /// Each problem found, e.g. `missing required argument "old_text"`. Never empty.
        problems: Vec<String>,
    },
}

/// One line per problem, each starting with the tool name.
fn lines(tool: &str, problems: &[String]) -> String {
    let lines: Vec<String> = problems
        .iter()
        .map(|problem| format!("{tool}: {problem}"))
        .collect();
    lines.join("\n")
}
