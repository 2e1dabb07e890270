//! Stuck detection: the same tool call, with the same arguments, over and over.

use serde_json::Value;

/// Counts identical tool calls in a row.
///
/// Two calls are identical when they name the same tool and their arguments are the same
/// JSON value, whether they arrived as an object or as a string holding one, and whatever
/// the order of their keys.
#[derive(Debug, Default)]
pub(crate) struct Repeats {
    /// The last call: its tool and its arguments, parsed.
    last: Option<(String, Value)>,
    /// How many times in a row it was made.
    count: u32,
}

impl Repeats {
    /// Records a call and returns how many times in a row it has now been made (1 for a call
    /// unlike the one before).
    pub(crate) fn record(&mut self, name: &str, arguments: &Value) -> u32 {
        let arguments = normalized(arguments);
        match &self.last {
            Some((last_name, last_arguments))
                if last_name == name && *last_arguments == arguments =>
            {
                self.count += 1;
            }
            _ => {
                self.last = Some((name.to_owned(), arguments));
                self.count = 1;
            }
        }
        self.count
    }
}

/// Arguments as a JSON value: a string holding JSON is parsed, anything else kept.
fn normalized(arguments: &Value) -> Value {
    match arguments {
        Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| arguments.clone()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identical_calls_count_up_and_any_difference_starts_over() {
        let mut repeats = Repeats::default();
        let args = json!({"argv": ["pytest"]});
        assert_eq!(repeats.record("run_command", &args), 1);
        assert_eq!(repeats.record("run_command", &args), 2);
        assert_eq!(repeats.record("run_command", &args), 3);
        assert_eq!(
            repeats.record("run_command", &json!({"argv": ["pytest", "-q"]})),
            1
        );
        assert_eq!(
            repeats.record("run_command", &json!({"argv": ["pytest", "-q"]})),
            2
        );
        assert_eq!(
            repeats.record("read_file", &json!({"argv": ["pytest", "-q"]})),
            1
        );
    }

    #[test]
    fn arguments_compare_as_json_whatever_their_form() {
        let mut repeats = Repeats::default();
        repeats.record("read_file", &json!({"path": "a", "start_line": 1}));
        let as_text = json!(r#"{"start_line": 1, "path": "a"}"#);
        assert_eq!(repeats.record("read_file", &as_text), 2);
        let broken = json!("{not json");
        assert_eq!(repeats.record("read_file", &broken), 1);
        assert_eq!(repeats.record("read_file", &broken), 2);
    }
}
