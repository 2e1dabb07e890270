//! [`parse_call`]: the one way from what a model sent to arguments a tool may act on.

use std::borrow::Cow;

use serde_json::Value;

use crate::catalogue::{catalogue, find};
use crate::render::{kind_of, problems};
use crate::{ArgumentError, ToolArgs};

/// Checks a tool call from a model and returns its typed arguments.
///
/// `name` is the tool the model called and `arguments` what it sent with it: a JSON object (as
/// Ollama sends it) or a string holding one (as OpenAI-compatible servers send it).
///
/// The checks, in order; the first that fails decides the error:
/// 1. `name` is a tool of the [`catalogue`], spelled exactly.
/// 2. `arguments` is an object, or a string that parses as JSON into an object. Nothing else
///    is converted: a string is never split into words, an array never taken as `argv`.
/// 3. The object satisfies the tool's schema. Every violation is reported, one per line.
/// 4. The object moves into the tool's struct. After step 3 this cannot fail unless the schema
///    and the struct disagree, which the crate's tests rule out.
///
/// # Errors
///
/// An [`ArgumentError`] whose message tells the model what to send instead.
///
/// # Example
///
/// ```
/// use harness_schema::{parse_call, RunCommand, ToolArgs};
/// use serde_json::json;
///
/// let call = parse_call("run_command", &json!({"argv": ["pytest", "-q"], "timeout_s": 60}));
/// assert_eq!(
///     call,
///     Ok(ToolArgs::RunCommand(RunCommand {
///         argv: vec!["pytest".to_owned(), "-q".to_owned()],
///         timeout_s: Some(60),
///     }))
/// );
///
/// let error = parse_call("run_command", &json!({"argv": "pytest -q"})).unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     r#"run_command: "argv" must be an array of strings, e.g. ["pytest", "-q"], got string "pytest -q""#
/// );
/// ```
pub fn parse_call(name: &str, arguments: &Value) -> Result<ToolArgs, ArgumentError> {
    let Some(spec) = find(name) else {
        return Err(ArgumentError::UnknownTool {
            name: name.to_owned(),
            available: catalogue().iter().map(|spec| spec.name()).collect(),
        });
    };
    let definition = spec.definition();
    let tool = definition.tool.as_str();
    let not_an_object = |got: String| ArgumentError::NotAnObject {
        tool,
        got,
        example: definition.example,
    };
    let object = match arguments {
        Value::Object(_) => Cow::Borrowed(arguments),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(parsed @ Value::Object(_)) => Cow::Owned(parsed),
            Ok(other) => {
                return Err(not_an_object(format!(
                    "a string holding {}",
                    kind_of(&other)
                )));
            }
            Err(error) => {
                return Err(ArgumentError::InvalidJson {
                    tool,
                    reason: error.to_string(),
                    example: definition.example,
                });
            }
        },
        other => return Err(not_an_object(kind_of(other).to_owned())),
    };
    let found = problems(
        spec.validator(),
        spec.parameters(),
        &definition.argument_names(),
        &object,
    );
    if !found.is_empty() {
        return Err(ArgumentError::InvalidArguments {
            tool,
            problems: found,
        });
    }
    (definition.parse)(&object).map_err(|error| ArgumentError::InvalidArguments {
        tool,
        problems: vec![format!(
            "the arguments do not fit the tool's fields: {error}"
        )],
    })
}
