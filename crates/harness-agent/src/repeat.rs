//! Stuck detection: the same tool call, with the same arguments, over and over; and the
//! same refusal, from the same call or from others.

use serde_json::Value;

/// At this many times the same refusal comes in one attempt, the request changes: the model
/// is told what was refused and to do what the refusal says instead, and the next answer is
/// sampled differently.
pub(crate) const REFUSAL_RETOLD: u32 = 2;

/// At this many times the same refusal comes in one attempt, the attempt ends as stuck; a
/// call already refused so [`REFUSAL_RETOLD`] times is not run again. (Issue 49: five
/// identical refused writes in a row, about 255 s, before an attempt ended stuck. In the
/// task suite's transcripts of 2026-12-07 with Qwen2.5-Coder-1.5B, a rewrite of a protected
/// test was refused in 4 steps in a row on one task, and in 2 on another.)
pub(crate) const REFUSAL_STOP: u32 = 3;

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

/// Counts the refusals of one attempt: a call that failed ([`is_error`]), by what it was told.
///
/// Two refusals are the same when their messages are the same but for blanks (runs of
/// spaces, tabs and newlines count as one space), whichever calls got them: a model that
/// sends the refused edit again with other whitespace, or another edit of the same
/// protected file, meets the same wall. A call is the same call when it names the same tool
/// with the same arguments but for the blanks in their strings.
///
/// [`is_error`]: harness_tools::ToolResult::is_error
#[derive(Debug, Default)]
pub(crate) struct Refusals {
    /// Each refusal so far, its message with blanks squeezed, and how many times it came.
    seen: Vec<(String, u32)>,
    /// Each call refused so far, squeezed, with the refusal it got (squeezed).
    calls: Vec<((String, Value), String)>,
}

impl Refusals {
    /// How many times the refusal that `name` with `arguments` got before has come, if this
    /// very call was refused before (0 if it was not).
    pub(crate) fn times_before(&self, name: &str, arguments: &Value) -> u32 {
        let call = (name.to_owned(), squeezed_value(normalized(arguments)));
        self.calls
            .iter()
            .find(|(refused, _)| *refused == call)
            .and_then(|(_, message)| self.seen.iter().find(|(seen, _)| seen == message))
            .map_or(0, |(_, times)| *times)
    }

    /// Records that `name` with `arguments` was refused with `message`; returns how many
    /// times that refusal has now come (1 for a new one).
    pub(crate) fn record(&mut self, name: &str, arguments: &Value, message: &str) -> u32 {
        let message = squeezed(message);
        let call = (name.to_owned(), squeezed_value(normalized(arguments)));
        if !self.calls.iter().any(|(refused, _)| *refused == call) {
            self.calls.push((call, message.clone()));
        }
        match self.seen.iter_mut().find(|(seen, _)| *seen == message) {
            Some((_, times)) => {
                *times += 1;
                *times
            }
            None => {
                self.seen.push((message, 1));
                1
            }
        }
    }
}

/// `text` with each run of blanks as one space, and none at either end.
fn squeezed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `value` with every string in it [`squeezed`].
fn squeezed_value(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(squeezed(&text)),
        Value::Array(items) => Value::Array(items.into_iter().map(squeezed_value).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(key, value)| (key, squeezed_value(value)))
                .collect(),
        ),
        other => other,
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

    #[test]
    fn the_same_refusal_counts_up_whatever_the_call_and_its_blanks() {
        let mut refusals = Refusals::default();
        let refused = "Error: refusing to change t.py: t.py is a test file";
        let edit = json!({"path": "t.py", "old_text": "a  =\n1", "new_text": "a = 2"});
        assert_eq!(refusals.times_before("edit_file", &edit), 0);
        assert_eq!(refusals.record("edit_file", &edit, refused), 1);
        // The same call with other blanks, as a string of JSON, and the message re-wrapped.
        let respaced = json!(r#"{"new_text": "a =  2", "path": "t.py", "old_text": "a =\n  1"}"#);
        assert_eq!(refusals.times_before("edit_file", &respaced), 1);
        let rewrapped = "Error: refusing to change t.py:\n  t.py is a test file\n";
        assert_eq!(refusals.record("edit_file", &respaced, rewrapped), 2);
        // Another call meeting the same refusal counts with it, and is known as refused.
        let other = json!({"path": "t.py", "content": "x"});
        assert_eq!(refusals.times_before("write_file", &other), 0);
        assert_eq!(refusals.record("write_file", &other, refused), 3);
        assert_eq!(refusals.times_before("write_file", &other), 3);
        assert_eq!(refusals.times_before("edit_file", &edit), 3);
        // A different refusal is counted apart.
        assert_eq!(
            refusals.record("read_file", &json!({"path": "m"}), "Error: no m"),
            1
        );
        assert_eq!(refusals.times_before("read_file", &json!({"path": "m"})), 1);
    }
}
