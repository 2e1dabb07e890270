//! [`parse_call`]: the one way from what a model sent to arguments a tool may act on.

use std::borrow::Cow;

use serde_json::Value;

use crate::catalogue::{catalogue, find};
use crate::coerce::{Coercion, coerce};
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
    parse(name, arguments, false).map(|parsed| parsed.args)
}

/// A call read by [`parse_call_forgiving`]: its arguments, and what was read another way
/// than it was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The typed arguments.
    pub args: ToolArgs,
    /// Each argument that had one unambiguous reading of its type, and was read so.
    pub coerced: Vec<Coercion>,
}

/// [`parse_call`], except that an argument a small model commonly sends slightly wrong (a
/// boolean or a number as a string, a number as text, a command line as one string where
/// its words are expected) is read the one way it can be read, and reported in
/// [`Parsed::coerced`]. An argument with more than one reading (a command line with quotes,
/// `$`, globs or operators) is still an error.
///
/// # Errors
///
/// As [`parse_call`], for what is left after the coercions.
///
/// # Example
///
/// ```
/// use harness_schema::{parse_call_forgiving, ToolArgs};
/// use serde_json::json;
///
/// let parsed = parse_call_forgiving("run_command", &json!({"argv": "pytest -q", "timeout_s": "60"}))?;
/// let ToolArgs::RunCommand(run) = &parsed.args else { unreachable!() };
/// assert_eq!((run.argv.as_slice(), run.timeout_s), (&["pytest".to_owned(), "-q".to_owned()][..], Some(60)));
/// assert_eq!(parsed.coerced[0].to_string(), r#""argv" was sent as "pytest -q" and read as ["pytest","-q"]"#);
///
/// assert!(parse_call_forgiving("run_command", &json!({"argv": "ls | wc -l"})).is_err());
/// # Ok::<(), harness_schema::ArgumentError>(())
/// ```
pub fn parse_call_forgiving(name: &str, arguments: &Value) -> Result<Parsed, ArgumentError> {
    parse(name, arguments, true)
}

fn parse(name: &str, arguments: &Value, forgive: bool) -> Result<Parsed, ArgumentError> {
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
    let mut object = match arguments {
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
    let mut coerced = Vec::new();
    if forgive {
        let mut owned = object.into_owned();
        if let Value::Object(fields) = &mut owned {
            coerced = coerce(definition, fields);
        }
        object = Cow::Owned(owned);
    }
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
    let args = (definition.parse)(&object).map_err(|error| ArgumentError::InvalidArguments {
        tool,
        problems: vec![format!(
            "the arguments do not fit the tool's fields: {error}"
        )],
    })?;
    Ok(Parsed { args, coerced })
}
