//! Arguments a small model commonly sends slightly wrong, read the one way they can be read.
//!
//! A boolean or a number sent as a string (`"true"`, `"60"`), a number where text is
//! expected, and a command line sent as one string where the words are expected
//! (`"pytest -q"` for `["pytest", "-q"]`) each have exactly one reading, so
//! [`parse_call_forgiving`](crate::parse_call_forgiving) takes it and says so in a
//! [`Coercion`]. Anything with more than one reading is left for the schema to refuse: a
//! command line with quotes, escapes, globs or shell operators is never split, because
//! splitting it would guess at what a shell would have done.

use std::fmt;

use serde_json::{Map, Value};

use crate::spec::{Definition, Kind};

/// One argument that was read another way than it was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coercion {
    /// The argument.
    pub argument: &'static str,
    /// What was sent, as JSON.
    pub sent: String,
    /// What it was read as, as JSON.
    pub read_as: String,
}

impl fmt::Display for Coercion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "\"{}\" was sent as {} and read as {}",
            self.argument, self.sent, self.read_as
        )
    }
}

/// Rewrites, in `object`, each argument of `definition` that has one unambiguous reading of
/// the type its schema wants, and returns what was rewritten.
pub(crate) fn coerce(definition: &Definition, object: &mut Map<String, Value>) -> Vec<Coercion> {
    let mut coerced = Vec::new();
    for argument in definition.arguments {
        let Some(value) = object.get_mut(argument.name) else {
            continue;
        };
        if let Some(read) = reading(&argument.kind, value) {
            coerced.push(Coercion {
                argument: argument.name,
                sent: value.to_string(),
                read_as: read.to_string(),
            });
            *value = read;
        }
    }
    coerced
}

/// The one reading of `value` as `kind`, when it is not one already and has exactly one.
fn reading(kind: &Kind, value: &Value) -> Option<Value> {
    match (kind, value) {
        (Kind::Boolean, Value::String(text)) => match text.trim() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        // Digits only (a leading `+` aside): `u64`'s parser refuses signs, points, exponents
        // and units, which have other readings.
        (Kind::Integer { .. }, Value::String(text)) => {
            text.trim().parse::<u64>().ok().map(Value::from)
        }
        (Kind::String | Kind::NonEmptyString, Value::Number(number)) => {
            Some(Value::String(number.to_string()))
        }
        (Kind::NonEmptyStringArray { .. }, Value::String(line)) => words(line),
        _ => None,
    }
}

/// The words of a command line that no shell would read differently from a plain split on
/// whitespace: no quotes, escapes, variables, globs, redirections or operators.
fn words(line: &str) -> Option<Value> {
    const SHELL: &[char] = &[
        '"', '\'', '\\', '`', '$', '|', '&', ';', '<', '>', '(', ')', '{', '}', '[', ']', '*', '?',
        '~', '#', '!', '\n',
    ];
    let words: Vec<Value> = line
        .split_whitespace()
        .map(|word| Value::String(word.to_owned()))
        .collect();
    (!words.is_empty() && !line.contains(SHELL)).then_some(Value::Array(words))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(kind: &Kind, value: Value) -> Option<Value> {
        reading(kind, &value)
    }

    const INTEGER: Kind = Kind::Integer {
        minimum: 1,
        maximum: 600,
    };
    const ARGV: Kind = Kind::NonEmptyStringArray {
        example: &["pytest"],
    };

    #[test]
    fn each_unambiguous_reading_is_taken() {
        assert_eq!(read(&Kind::Boolean, json!("true")), Some(json!(true)));
        assert_eq!(read(&Kind::Boolean, json!(" false ")), Some(json!(false)));
        assert_eq!(read(&INTEGER, json!("60")), Some(json!(60)));
        assert_eq!(read(&INTEGER, json!(" 7 ")), Some(json!(7)));
        assert_eq!(read(&Kind::String, json!(42)), Some(json!("42")));
        assert_eq!(read(&Kind::NonEmptyString, json!(1.5)), Some(json!("1.5")));
        assert_eq!(
            read(&ARGV, json!("pytest -q")),
            Some(json!(["pytest", "-q"]))
        );
        assert_eq!(read(&ARGV, json!("  ls  ")), Some(json!(["ls"])));
        assert_eq!(
            read(&ARGV, json!("cargo test -- parse")),
            Some(json!(["cargo", "test", "--", "parse"]))
        );
    }

    #[test]
    fn anything_with_another_reading_or_already_right_is_left_alone() {
        for (kind, value) in [
            (&Kind::Boolean, json!("yes")),
            (&Kind::Boolean, json!("True")),
            (&Kind::Boolean, json!(1)),
            (&Kind::Boolean, json!(true)),
            (&INTEGER, json!("")),
            (&INTEGER, json!("-3")),
            (&INTEGER, json!("1e3")),
            (&INTEGER, json!("60s")),
            (&INTEGER, json!(2.5)),
            (&INTEGER, json!(5.0)),
            (&INTEGER, json!(60)),
            (&Kind::String, json!(true)),
            (&Kind::String, json!("x")),
            (&ARGV, json!("")),
            (&ARGV, json!("   ")),
            (&ARGV, json!("echo 'a b'")),
            (&ARGV, json!("echo \"a b\"")),
            (&ARGV, json!("ls | wc -l")),
            (&ARGV, json!("make && make test")),
            (&ARGV, json!("echo $HOME")),
            (&ARGV, json!("rm *.pyc")),
            (&ARGV, json!("cat a\\ b")),
            (&ARGV, json!("python3 -c print(1)")),
            (&ARGV, json!("ls ~")),
            (&ARGV, json!("echo a # b")),
            (&ARGV, json!("a\nb")),
            (&ARGV, json!(["pytest"])),
        ] {
            assert_eq!(reading(kind, &value), None, "{kind:?} {value}");
        }
    }

    #[test]
    fn a_coercion_says_what_was_sent_and_how_it_was_read() {
        let coercion = Coercion {
            argument: "argv",
            sent: json!("pytest -q").to_string(),
            read_as: json!(["pytest", "-q"]).to_string(),
        };
        assert_eq!(
            coercion.to_string(),
            r#""argv" was sent as "pytest -q" and read as ["pytest","-q"]"#
        );
    }
}
