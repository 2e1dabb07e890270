//! Validation errors rewritten for the model that made the call.
//!
//! The validator reports structured errors: a kind (`required`, `type`, `maximum`, …) and the
//! location in the arguments. Each becomes one line that names the argument, says what it must
//! be (with an example when the schema has one) and shows what was sent, e.g.
//! `"depth" must be at most 5, got 9`. Kinds our schemas never produce still get a line, from
//! the validator's own message, so nothing is dropped.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::{Location, LocationSegment};
use jsonschema::{JsonType, ValidationError, Validator};
use serde_json::Value;

/// How many characters of a model-supplied value an error message shows.
const SHOWN_CHARS: usize = 80;

/// How many problems one error message lists; the rest are counted. A call with thousands of
/// unknown arguments must not answer with thousands of lines in the model's context.
const MAX_PROBLEMS: usize = 20;

/// Every problem the validator finds in `arguments`, one line each, in the validator's order,
/// at most [`MAX_PROBLEMS`] of them and then a line counting the rest.
///
/// `schema` is the schema `validator` was compiled from; `argument_names` are its top-level
/// properties in declared order, listed when the model sends an unknown one.
pub(crate) fn problems(
    validator: &Validator,
    schema: &Value,
    argument_names: &[&str],
    arguments: &Value,
) -> Vec<String> {
    let mut lines: Vec<String> = validator
        .iter_errors(arguments)
        .flat_map(|error| describe(schema, argument_names, &error))
        .collect();
    if lines.len() > MAX_PROBLEMS {
        let rest = lines.len() - MAX_PROBLEMS;
        lines.truncate(MAX_PROBLEMS);
        lines.push(format!("… and {rest} more problems like these"));
    }
    lines
}

/// The lines for one validation error; several when one error names several unknown arguments.
fn describe(schema: &Value, argument_names: &[&str], error: &ValidationError<'_>) -> Vec<String> {
    let path = error.instance_path();
    let at_root = path.as_str().is_empty();
    let subject = subject(path);
    let here = subschema(schema, path);
    let example = example(here);
    let got = shown(error.instance());
    let line = match error.kind() {
        ValidationErrorKind::Required { property } if at_root => {
            format!("missing required argument {}", shown(property))
        }
        ValidationErrorKind::Required { property } => {
            format!("{subject} is missing required property {}", shown(property))
        }
        ValidationErrorKind::AdditionalProperties { unexpected } if at_root => {
            let expected = argument_names.join(", ");
            return unexpected
                .iter()
                .map(|name| format!("unknown argument {} (expected: {expected})", quoted(name)))
                .collect();
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            return unexpected
                .iter()
                .map(|name| format!("{subject} has unknown property {}", quoted(name)))
                .collect();
        }
        ValidationErrorKind::Type { kind } => format!(
            "{subject} must be {}{example}, got {}",
            expected_type(kind, here),
            typed(error.instance()),
        ),
        ValidationErrorKind::Enum { options } => {
            // The meta-schema, checked when the schema compiles, makes `enum` an array.
            let allowed: Vec<String> = options
                .as_array()
                .into_iter()
                .flatten()
                .map(shown)
                .collect();
            format!("{subject} must be one of {}, got {got}", allowed.join(", "))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("{subject} must be {}, got {got}", shown(expected_value))
        }
        ValidationErrorKind::Minimum { limit } => {
            format!("{subject} must be at least {limit}{example}, got {got}")
        }
        ValidationErrorKind::Maximum { limit } => {
            format!("{subject} must be at most {limit}{example}, got {got}")
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("{subject} must be greater than {limit}{example}, got {got}")
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("{subject} must be less than {limit}{example}, got {got}")
        }
        ValidationErrorKind::MinLength { limit: 1 } => format!("{subject} must not be empty"),
        ValidationErrorKind::MinLength { limit } => {
            format!("{subject} must be at least {limit} characters long, got {got}")
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("{subject} must be at most {limit} characters long, got {got}")
        }
        ValidationErrorKind::MinItems { limit } => format!(
            "{subject} must have at least {}{example}, got {got}",
            items(*limit)
        ),
        ValidationErrorKind::MaxItems { limit } => format!(
            "{subject} must have at most {}{example}, got {got}",
            items(*limit)
        ),
        // Everything else (patterns, formats, combinators, …) keeps the validator's wording.
        _ => format!("{subject} is invalid: {error}"),
    };
    vec![line]
}

/// How a message names the failing location: `"argv"`, `"argv[1]"`, or the arguments as a whole.
fn subject(path: &Location) -> String {
    let mut name = String::new();
    for segment in path.iter() {
        match segment {
            LocationSegment::Property(property) if name.is_empty() => name.push_str(&property),
            LocationSegment::Property(property) => {
                name.push('.');
                name.push_str(&property);
            }
            LocationSegment::Index(index) => name.push_str(&format!("[{index}]")),
        }
    }
    if name.is_empty() {
        "the arguments".to_owned()
    } else {
        quoted(&name)
    }
}

/// The part of `schema` that describes the value at `path`, if the schema describes it.
fn subschema<'a>(schema: &'a Value, path: &Location) -> Option<&'a Value> {
    path.iter().try_fold(schema, |here, segment| match segment {
        LocationSegment::Property(property) => here.get("properties")?.get(property.as_ref()),
        LocationSegment::Index(_) => here.get("items"),
    })
}

/// `, e.g. <first example>` when the schema at the location has `examples`, else nothing.
fn example(here: Option<&Value>) -> String {
    match here
        .and_then(|schema| schema.get("examples"))
        .and_then(|examples| examples.get(0))
    {
        Some(example) => format!(", e.g. {}", spaced(example)),
        None => String::new(),
    }
}

/// What a `type` keyword asks for, in words: `an integer`, `an array of strings`, `null or a string`.
fn expected_type(kind: &TypeKind, here: Option<&Value>) -> String {
    match kind {
        TypeKind::Single(JsonType::Array) => {
            let items = here
                .and_then(|schema| schema.get("items"))
                .and_then(|items| items.get("type"))
                .and_then(Value::as_str);
            match items {
                Some(item_type) => format!("an array of {item_type}s"),
                None => "an array".to_owned(),
            }
        }
        TypeKind::Single(single) => with_article(*single).to_owned(),
        TypeKind::Multiple(set) => set
            .iter()
            .map(with_article)
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

fn with_article(json_type: JsonType) -> &'static str {
    match json_type {
        JsonType::Null => "null",
        JsonType::Boolean => "a boolean",
        JsonType::Integer => "an integer",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "an array",
        JsonType::Object => "an object",
    }
}

fn items(count: u64) -> String {
    if count == 1 {
        "1 item".to_owned()
    } else {
        format!("{count} items")
    }
}

/// A value with its JSON type, so a model sees why it was refused: `string "pytest -q"`.
fn typed(value: &Value) -> String {
    let type_name = match value {
        Value::Null => return "null".to_owned(),
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    format!("{type_name} {}", shown(value))
}

/// The name of a value's JSON type with its article, as in "got an array".
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `text` as a JSON string, shortened like [`shown`].
pub(crate) fn quoted(text: &str) -> String {
    shown(&Value::from(text))
}

/// A model-supplied value as JSON, cut after [`SHOWN_CHARS`] characters so one huge argument
/// cannot flood the error.
pub(crate) fn shown(value: &Value) -> String {
    let json = spaced(value);
    match json.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &json[..cut]),
        None => json,
    }
}

/// JSON with a space after each `,` and `:` between elements, as people write it:
/// `["pytest", "-q"]` rather than `["pytest","-q"]`.
fn spaced(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(spaced).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(members) => {
            let members: Vec<String> = members
                .iter()
                .map(|(key, member)| format!("{}: {}", Value::from(key.as_str()), spaced(member)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        scalar => scalar.to_string(),
    }
}

#[cfg(test)]
mod tests {
    //! The rendering of every error kind, through a test-only schema that uses the keywords our
    //! six tools do not (`enum`, `const`, exclusive bounds, nested objects, …).

    use std::sync::LazyLock;

    use serde_json::{Value, json};

    use super::{MAX_PROBLEMS, SHOWN_CHARS, problems, shown};
    use crate::spec::compile;

    static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
        json!({
            "type": "object",
            "properties": {
                "color": {"enum": ["red", "green"]},
                "mode": {"const": "fast"},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "count": {"type": "integer", "minimum": 2, "maximum": 3, "examples": [2]},
                "name": {"type": "string", "minLength": 3, "maxLength": 5},
                "tags": {"type": "array", "minItems": 2, "maxItems": 3},
                "one": {"type": "array", "maxItems": 1},
                "maybe": {"type": ["string", "null"]},
                "code": {"type": "string", "pattern": "^[a-z]+$"},
                "inner": {
                    "type": "object",
                    "properties": {
                        "x": {"type": "integer"},
                        "list": {
                            "type": "array",
                            "items": {"type": "object", "properties": {"y": {"type": "string"}}}
                        }
                    },
                    "required": ["x"],
                    "additionalProperties": false
                }
            },
            "additionalProperties": false
        })
    });

    const NAMES: &[&str] = &[
        "color", "mode", "ratio", "count", "name", "tags", "one", "maybe",
    ];

    fn lines(arguments: &Value) -> Vec<String> {
        problems(&compile(&SCHEMA), &SCHEMA, NAMES, arguments)
    }

    macro_rules! rendered {
        ($($test:ident: $arguments:tt => [$($line:expr),* $(,)?],)*) => {
            $(
                #[test]
                fn $test() {
                    assert_eq!(lines(&json!($arguments)), [$($line),*] as [&str; _]);
                }
            )*
        };
    }

    rendered! {
        valid_arguments_have_no_problems: {"color": "red", "count": 2, "inner": {"x": 1}} => [],
        enum_lists_the_allowed_values: {"color": "blue"}
            => [r#""color" must be one of "red", "green", got "blue""#],
        const_names_the_one_value: {"mode": "slow"}
            => [r#""mode" must be "fast", got "slow""#],
        exclusive_minimum: {"ratio": 0} => [r#""ratio" must be greater than 0, got 0"#],
        exclusive_maximum: {"ratio": 1} => [r#""ratio" must be less than 1, got 1"#],
        minimum_with_the_schema_example: {"count": 1}
            => [r#""count" must be at least 2, e.g. 2, got 1"#],
        maximum_with_the_schema_example: {"count": 4}
            => [r#""count" must be at most 3, e.g. 2, got 4"#],
        type_with_the_schema_example: {"count": "two"}
            => [r#""count" must be an integer, e.g. 2, got string "two""#],
        min_length_above_one_counts_characters: {"name": "ab"}
            => [r#""name" must be at least 3 characters long, got "ab""#],
        max_length: {"name": "abcdef"}
            => [r#""name" must be at most 5 characters long, got "abcdef""#],
        min_items_plural: {"tags": [1]} => [r#""tags" must have at least 2 items, got [1]"#],
        max_items_plural: {"tags": [1, 2, 3, 4]}
            => [r#""tags" must have at most 3 items, got [1, 2, 3, 4]"#],
        max_items_singular: {"one": [1, 2]} => [r#""one" must have at most 1 item, got [1, 2]"#],
        array_without_item_type: {"tags": "a b"} => [r#""tags" must be an array, got string "a b""#],
        several_allowed_types: {"maybe": 1} => [r#""maybe" must be null or a string, got number 1"#],
        other_kinds_keep_the_validator_wording: {"code": "ABC"}
            => [r#""code" is invalid: "ABC" does not match "^[a-z]+$""#],
        nested_required_and_unknown_properties: {"inner": {"z": 1}}
            => [r#""inner" has unknown property "z""#, r#""inner" is missing required property "x""#],
        nested_paths_use_dots_and_indexes: {"inner": {"x": 1, "list": [{"y": "ok"}, {"y": 2}]}}
            => [r#""inner.list[1].y" must be a string, got number 2"#],
        unknown_top_level_arguments_list_the_expected_ones: {"colour": "red"}
            => ["unknown argument \"colour\" (expected: color, mode, ratio, count, name, tags, one, maybe)"],
        arguments_that_are_not_an_object: 5 => ["the arguments must be an object, got number 5"],
    }

    /// An object with `count` unknown arguments `a00`, `a01`, ….
    fn unknown_arguments(count: usize) -> Value {
        Value::Object(
            (0..count)
                .map(|index| (format!("a{index:02}"), json!(1)))
                .collect(),
        )
    }

    #[test]
    fn problems_up_to_the_limit_are_all_listed() {
        let lines = lines(&unknown_arguments(MAX_PROBLEMS));
        assert_eq!(lines.len(), MAX_PROBLEMS);
        assert!(
            lines[MAX_PROBLEMS - 1].starts_with("unknown argument \"a19\""),
            "{lines:?}"
        );
    }

    #[test]
    fn problems_past_the_limit_are_counted() {
        let lines = lines(&unknown_arguments(MAX_PROBLEMS + 3));
        assert_eq!(lines.len(), MAX_PROBLEMS + 1);
        assert!(
            lines[MAX_PROBLEMS - 1].starts_with("unknown argument \"a19\""),
            "{lines:?}"
        );
        assert_eq!(lines[MAX_PROBLEMS], "… and 3 more problems like these");
    }

    #[test]
    fn required_at_the_top_level_is_a_missing_argument() {
        let schema = json!({"type": "object", "properties": {"a": {}}, "required": ["a"]});
        let lines = problems(&compile(&schema), &schema, &["a"], &json!({}));
        assert_eq!(lines, [r#"missing required argument "a""#]);
    }

    #[test]
    fn shown_values_are_cut_after_a_fixed_number_of_characters() {
        // The JSON text of a string is the string plus two quotes.
        let fits = Value::from("x".repeat(SHOWN_CHARS - 2));
        assert_eq!(shown(&fits), format!("\"{}\"", "x".repeat(SHOWN_CHARS - 2)));
        let one_over = Value::from("x".repeat(SHOWN_CHARS - 1));
        assert_eq!(
            shown(&one_over),
            format!("\"{}…", "x".repeat(SHOWN_CHARS - 1))
        );
    }

    #[test]
    fn shown_values_are_cut_on_a_character_boundary() {
        let wide = Value::from("é".repeat(200));
        assert_eq!(shown(&wide), format!("\"{}…", "é".repeat(SHOWN_CHARS - 1)));
    }

    #[test]
    fn shown_objects_and_arrays_read_like_hand_written_json() {
        let value = json!({"argv": ["a", 1], "ok": true, "none": null});
        assert_eq!(
            shown(&value),
            r#"{"argv": ["a", 1], "none": null, "ok": true}"#
        );
    }

    #[test]
    fn kind_of_names_every_json_type() {
        let names: Vec<&str> = [
            json!(null),
            json!(true),
            json!(1),
            json!("s"),
            json!([]),
            json!({}),
        ]
        .iter()
        .map(super::kind_of)
        .collect();
        assert_eq!(
            names,
            [
                "null",
                "a boolean",
                "a number",
                "a string",
                "an array",
                "an object"
            ]
        );
    }
}
