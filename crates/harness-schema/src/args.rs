//! The typed arguments a validated call turns into.
//!
//! Each struct mirrors one tool's schema in `catalogue.rs`: one field per property, `Option` (or
//! a defaulted `bool`) exactly for the properties not in `required`. The schema is checked
//! first and is the source of truth; serde only moves the already-valid values into fields.
//! Tests in `catalogue.rs` hold the two together: a struct literal with every field set must
//! serialize to exactly the schema's properties, every tool's maximal valid call must
//! deserialize into that literal, and removing a property from a valid call must fail
//! deserialization exactly when the schema lists it as required.

use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};

use crate::ToolName;

/// A validated tool call: which tool, with its typed arguments.
///
/// Made by [`parse_call`](crate::parse_call). Not `#[non_exhaustive]` on purpose: a new tool
/// should break every `match` that dispatches calls, so no tool is silently ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ToolArgs {
    /// `read_file`.
    ReadFile(ReadFile),
    /// `write_file`.
    WriteFile(WriteFile),
    /// `edit_file`.
    EditFile(EditFile),
    /// `list_dir`.
    ListDir(ListDir),
    /// `search_text`.
    SearchText(SearchText),
    /// `run_command`.
    RunCommand(RunCommand),
}

impl ToolArgs {
    /// The tool these arguments are for.
    pub fn tool(&self) -> ToolName {
        match self {
            ToolArgs::ReadFile(_) => ToolName::ReadFile,
            ToolArgs::WriteFile(_) => ToolName::WriteFile,
            ToolArgs::EditFile(_) => ToolName::EditFile,
            ToolArgs::ListDir(_) => ToolName::ListDir,
            ToolArgs::SearchText(_) => ToolName::SearchText,
            ToolArgs::RunCommand(_) => ToolName::RunCommand,
        }
    }

    /// The name of the tool these arguments are for, e.g. `read_file`.
    pub fn name(&self) -> &'static str {
        self.tool().as_str()
    }
}

/// Arguments of `read_file`: a file, optionally a range of its lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFile {
    /// The file, relative to the workspace root. Never empty.
    pub path: String,
    /// First line to show, 1-based.
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub start_line: Option<u32>,
    /// Last line to show, 1-based and inclusive. It may be smaller than `start_line`: the
    /// schema cannot compare two arguments, so the tool reports that case.
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub end_line: Option<u32>,
}

/// Arguments of `write_file`: a new file and its whole content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteFile {
    /// The file, relative to the workspace root. Never empty.
    pub path: String,
    /// The complete content; may be empty.
    pub content: String,
    /// Replace an existing file. `false` when the model left it out.
    #[serde(default, skip_serializing_if = "is_false")]
    pub overwrite: bool,
}

/// Arguments of `edit_file`: replace one exact, unique piece of text, or every occurrence
/// of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditFile {
    /// The file, relative to the workspace root. Never empty.
    pub path: String,
    /// The text to replace, which must occur exactly once unless `replace_all`. Never empty.
    pub old_text: String,
    /// The replacement; empty deletes `old_text`.
    pub new_text: String,
    /// Replace every occurrence (a rename) rather than the only one. `false` when the model
    /// left it out.
    #[serde(default, skip_serializing_if = "is_false")]
    pub replace_all: bool,
}

/// Arguments of `list_dir`: a directory and how deep to list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListDir {
    /// The directory, relative to the workspace root; `None` for the root. Never empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Levels to list, in `1..=`[`ListDir::MAX_DEPTH`].
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub depth: Option<u32>,
}

impl ListDir {
    /// The deepest listing the schema accepts.
    pub const MAX_DEPTH: u32 = 5;
}

/// Arguments of `search_text`: a regular expression, where to look, which files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchText {
    /// The regular expression. Never empty; not yet compiled (the tool does that, and reports
    /// a syntax error itself).
    pub pattern: String,
    /// File or directory to search, relative to the workspace root; `None` for the whole
    /// workspace. Never empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Only files whose path matches this glob. Never empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
}

/// Arguments of `run_command`: a program and its arguments, never a shell line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunCommand {
    /// The program and its arguments, one string each. At least one element.
    pub argv: Vec<String>,
    /// Seconds before the command is killed, in `1..=`[`RunCommand::MAX_TIMEOUT_S`]. The runner
    /// may clamp it further to its own configured maximum.
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_s: Option<u64>,
}

impl RunCommand {
    /// The longest timeout the schema accepts, in seconds.
    pub const MAX_TIMEOUT_S: u64 = 600;
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// Deserializes an optional integer that JSON may spell `3` or `3.0`.
///
/// JSON Schema counts `3.0` as an integer, so the schema accepts it; serde's own integer
/// deserializers refuse a float. Without this, a call the schema accepted could still fail here.
fn whole_number<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<u64>,
{
    let Some(number) = Option::<serde_json::Number>::deserialize(deserializer)? else {
        return Ok(None);
    };
    let whole = match number.as_u64() {
        Some(integer) => Some(integer),
        // Every float in 0..2^64 without a fraction converts to u64 exactly; the upper bound is
        // 2^64 itself, which u64::MAX as f64 would round up to and then saturate.
        None => number
            .as_f64()
            .filter(|float| {
                float.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(float)
            })
            .map(|float| float as u64),
    };
    whole
        .and_then(|integer| T::try_from(integer).ok())
        .map(Some)
        .ok_or_else(|| D::Error::custom(format!("{number} is not a whole number in range")))
}

#[cfg(test)]
mod tests {
    //! Deserialization on its own, without the schema in front: the integer fields accept
    //! exactly the JSON numbers that are whole and fit the field.

    use serde_json::{Value, json};

    use super::{ListDir, RunCommand, WriteFile};

    fn depth(arguments: Value) -> Result<Option<u32>, String> {
        serde_json::from_value::<ListDir>(arguments)
            .map(|list| list.depth)
            .map_err(|error| error.to_string())
    }

    fn timeout(arguments: Value) -> Result<Option<u64>, String> {
        serde_json::from_value::<RunCommand>(arguments)
            .map(|run| run.timeout_s)
            .map_err(|error| error.to_string())
    }

    macro_rules! whole_numbers {
        ($($test:ident: $field:ident $value:expr => $expected:expr,)*) => {
            $(
                #[test]
                fn $test() {
                    let arguments = match stringify!($field) {
                        "depth" => json!({"depth": $value}),
                        _ => json!({"argv": ["ls"], "timeout_s": $value}),
                    };
                    assert_eq!($field(arguments), $expected);
                }
            )*
        };
    }

    const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
    /// The largest f64 below 2^64: 2^64 - 2^11.
    const BELOW_TWO_POW_64: f64 = 18_446_744_073_709_549_568.0;

    whole_numbers! {
        integer: depth 3 => Ok(Some(3)),
        null_is_absent: depth Value::Null => Ok(None),
        whole_float: depth 2.0 => Ok(Some(2)),
        zero_float: depth 0.0 => Ok(Some(0)),
        fraction: depth 1.5 => Err("1.5 is not a whole number in range".to_owned()),
        negative_integer: depth -1 => Err("-1 is not a whole number in range".to_owned()),
        negative_whole_float: depth -1.0 => Err("-1.0 is not a whole number in range".to_owned()),
        past_the_field_type: depth 4_294_967_296_u64
            => Err("4294967296 is not a whole number in range".to_owned()),
        largest_u32: depth 4_294_967_295_u64 => Ok(Some(u32::MAX)),
        largest_u64: timeout u64::MAX => Ok(Some(u64::MAX)),
        largest_float_below_two_pow_64: timeout BELOW_TWO_POW_64
            => Ok(Some(18_446_744_073_709_549_568)),
        two_pow_64_does_not_saturate: timeout TWO_POW_64
            => Err("1.8446744073709552e+19 is not a whole number in range".to_owned()),
    }

    #[test]
    fn a_missing_integer_field_is_absent() {
        assert_eq!(depth(json!({})), Ok(None));
    }

    #[test]
    fn a_string_is_not_a_number() {
        let error = depth(json!({"depth": "2"})).expect_err("a string is not a number");
        assert!(error.contains("invalid type: string"), "{error}");
    }

    #[test]
    fn overwrite_false_is_left_out_when_serialized() {
        let write = |overwrite| WriteFile {
            path: "a".to_owned(),
            content: String::new(),
            overwrite,
        };
        assert_eq!(
            serde_json::to_value(write(false)).ok(),
            Some(json!({"path": "a", "content": ""}))
        );
        assert_eq!(
            serde_json::to_value(write(true)).ok(),
            Some(json!({"path": "a", "content": "", "overwrite": true}))
        );
    }
}
