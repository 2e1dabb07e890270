//! Tool calls that the model wrote as text, recovered as tool calls.
//!
//! Small models asked to call tools often answer with the call as JSON in their text, bare,
//! in a ```` ```json ```` fence, or inside a `<tool_call>` tag, instead of as a structured
//! call; Qwen2.5-Coder does so against llama.cpp's server. Such an answer would otherwise end
//! the agent's turn with nothing done.
//!
//! They also write such JSON with the quotes inside a string left unescaped (a Python
//! docstring's `"""` in an `edit_file`'s `new_text`), which no JSON parser reads. When no
//! call in the text parses, [`lenient_call`] reads one the way it was meant if it can: each
//! key of the arguments once, its string value running to the next `", "key": ` or to the
//! object's end, `\n` and `\"` unescaped and a bare `"` kept as written; Python's `True`,
//! `False` and `None`, which the same models write for JSON's literals, read as those, and
//! a value opened and closed with Python's triple quotes as the text between them.

use serde_json::{Map, Value};

use crate::message::{CallOrigin, ToolCall};

/// How many `{` are tried as the start of a JSON object: bounds the work on long text.
const MAX_ATTEMPTS: usize = 256;

/// The tool calls written in `text`: every JSON object in it whose `name` is one of
/// `offered` and whose `arguments` is an object, in the order written.
///
/// The text is scanned for `{`; from each, one JSON value is parsed. A call found is
/// taken whole and the scan resumes after it; anything else (prose, an object of another
/// shape, invalid JSON) is skipped, one character at a time, so a call nested in another
/// object is still found.
pub(crate) fn tool_calls_in_text(text: &str, offered: &[&str]) -> Vec<ToolCall> {
    let mut calls = Vec::new();
    let mut from = 0;
    for _ in 0..MAX_ATTEMPTS {
        let Some(offset) = text[from..].find('{') else {
            break;
        };
        let start = from + offset;
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(Value::Object(object))) => match as_call(object, offered) {
                Some((name, arguments)) => {
                    calls.push(ToolCall {
                        id: format!("call_{}", calls.len()),
                        name,
                        arguments,
                        origin: CallOrigin::RecoveredFromText,
                    });
                    from = start + values.byte_offset();
                }
                None => from = start + 1,
            },
            _ => from = start + 1,
        }
    }
    if calls.is_empty()
        && let Some((name, arguments)) = lenient_call(text, offered)
    {
        calls.push(ToolCall {
            id: "call_0".to_owned(),
            name,
            arguments,
            origin: CallOrigin::RecoveredFromText,
        });
    }
    calls
}

/// The one call `text` spells out as `{"name": "TOOL", "arguments": {...}}` with strings
/// that are not valid JSON (unescaped quotes), read with one reading: the arguments' keys
/// are identifiers, each once; a string value runs from its opening quote to the quote
/// before the next `, "key":` or before the object's closing `}}`; other values must be
/// valid JSON. `None` when the text holds no such call, or more than one.
fn lenient_call(text: &str, offered: &[&str]) -> Option<(String, Value)> {
    let named = text.find("\"name\"")?;
    let after_name = text[named + "\"name\"".len()..]
        .trim_start()
        .strip_prefix(':')?;
    let after_name = after_name.trim_start().strip_prefix('"')?;
    let name = &after_name[..after_name.find('"')?];
    if !offered.contains(&name) || text[named + 1..].contains("\"name\"") {
        return None;
    }
    let arguments_key = text.find("\"arguments\"")?;
    let body = text[arguments_key + "\"arguments\"".len()..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('{')?;
    let end = arguments_end(body)?;
    let body = body[..end].trim();
    let mut keys: Vec<(usize, usize, &str)> = Vec::new(); // marker start, value start, key
    let mut at = 0;
    while let Some(offset) = body[at..].find('"') {
        let start = at + offset;
        let rest = &body[start + 1..];
        let key_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let key = &rest[..key_end];
        let after = rest[key_end..].strip_prefix('"').map(str::trim_start);
        let value = after.and_then(|after| after.strip_prefix(':'));
        let before = body[..start].trim_end();
        let opens = before.is_empty() || before.ends_with(',');
        match value {
            Some(value) if !key.is_empty() && opens => {
                let value_start = body.len() - value.trim_start().len();
                keys.push((start, value_start, key));
                at = value_start;
            }
            _ => at = start + 1,
        }
    }
    if keys.is_empty() {
        return None;
    }
    let mut arguments = Map::new();
    for (number, &(_, value_start, key)) in keys.iter().enumerate() {
        let value_end = keys.get(number + 1).map_or(body.len(), |&(next, _, _)| {
            body[..next].trim_end().len() - 1
        });
        let raw = body[value_start..value_end.max(value_start)].trim();
        let value = match python_triple_quoted(raw)
            .or_else(|| raw.strip_prefix('"').and_then(|raw| raw.strip_suffix('"')))
        {
            Some(string) => Value::String(unescape(string)),
            None => python_literal(raw).or_else(|| serde_json::from_str(raw).ok())?,
        };
        if arguments.insert(key.to_owned(), value).is_some() {
            return None;
        }
    }
    Some((name.to_owned(), Value::Object(arguments)))
}

/// The text of a value written as Python's triple-quoted string, `"""text"""`, the way the
/// same models write a file's code into a call: no JSON string opens with `"""`, so this
/// is its one reading. `None` for anything else.
fn python_triple_quoted(raw: &str) -> Option<&str> {
    const TRIPLE: &str = r#"""""#;
    raw.strip_prefix(TRIPLE)?.strip_suffix(TRIPLE)
}

/// `True`, `False` or `None` as JSON: models that write Python more than JSON spell the
/// literals its way (`"overwrite": True`), and each has one reading.
fn python_literal(raw: &str) -> Option<Value> {
    match raw {
        "True" => Some(Value::Bool(true)),
        "False" => Some(Value::Bool(false)),
        "None" => Some(Value::Null),
        _ => None,
    }
}

/// Where the arguments' `}` is in `body` (what follows their `{`): the last `}` that has
/// only whitespace between it and the call's own closing `}`, as in `}}` or in a call
/// written over several lines, the way models pretty-print JSON.
fn arguments_end(body: &str) -> Option<usize> {
    let mut before = body.len();
    while let Some(close) = body[..before].rfind('}') {
        let inner = body[..close].trim_end();
        if inner.ends_with('}') {
            return Some(inner.len() - 1);
        }
        before = close;
    }
    None
}

/// A JSON string's escapes undone (`\n`, `\t`, `\"`, `\\`, `\/`, `\uXXXX`); anything else,
/// a bare `"` included, is kept as written.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(quoted @ ('"' | '\\' | '/')) => out.push(quoted),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(decoded) => out.push(decoded),
                    None => {
                        out.push_str("\\u");
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The tool names in `tools`, given in either API's shape: `{"type": "function",
/// "function": {"name": ...}}` or `{"name": ...}`.
pub(crate) fn tool_names(tools: &[Value]) -> Vec<&str> {
    tools
        .iter()
        .filter_map(|tool| {
            tool.pointer("/function/name")
                .or_else(|| tool.get("name"))
                .and_then(Value::as_str)
        })
        .collect()
}

fn as_call(mut object: Map<String, Value>, offered: &[&str]) -> Option<(String, Value)> {
    let name = object.get("name")?.as_str()?;
    if !offered.contains(&name) {
        return None;
    }
    let name = name.to_owned();
    match object.remove("arguments")? {
        arguments @ Value::Object(_) => Some((name, arguments)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const OFFERED: &[&str] = &["read_file", "write_file"];

    fn recovered(text: &str) -> Vec<(String, Value)> {
        tool_calls_in_text(text, OFFERED)
            .into_iter()
            .map(|call| {
                assert_eq!(call.origin, CallOrigin::RecoveredFromText);
                (call.name, call.arguments)
            })
            .collect()
    }

    fn one(name: &str, arguments: Value) -> Vec<(String, Value)> {
        vec![(name.to_owned(), arguments)]
    }

    macro_rules! recovers {
        ($($test:ident: $text:expr => $expected:expr;)*) => {$(
            #[test]
            fn $test() {
                assert_eq!(recovered($text), $expected, "text: {:?}", $text);
            }
        )*};
    }

    recovers! {
        a_bare_object: r#"{"name": "read_file", "arguments": {"path": "a.rs"}}"# =>
            one("read_file", json!({"path": "a.rs"}));
        a_json_fence_with_prose: "I will read it.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/lib.rs\"}}\n```\nThen edit." =>
            one("read_file", json!({"path": "src/lib.rs"}));
        a_qwen_tool_call_tag: "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"x\", \"content\": \"{}\"}}\n</tool_call>" =>
            one("write_file", json!({"path": "x", "content": "{}"}));
        two_calls_in_order: "```json\n{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}\n```\n```json\n{\"name\":\"write_file\",\"arguments\":{\"path\":\"b\",\"content\":\"\"}}\n```" =>
            vec![
                ("read_file".to_owned(), json!({"path": "a"})),
                ("write_file".to_owned(), json!({"path": "b", "content": ""})),
            ];
        a_call_nested_in_a_wrapper: r#"{"tool": {"name": "read_file", "arguments": {"path": "n"}}}"# =>
            one("read_file", json!({"path": "n"}));
        a_call_after_invalid_json: r#"{oops {"name": "read_file", "arguments": {}}"# =>
            one("read_file", json!({}));
        // Qwen's chat template shows the call format with doubled braces; small models copy it.
        doubled_braces: r#"{{"name": "read_file", "arguments": {"path": "notes.txt"}}}}"# =>
            one("read_file", json!({"path": "notes.txt"}));
        extra_fields_are_allowed: r#"{"name": "read_file", "arguments": {"path": "a"}, "id": 3}"# =>
            one("read_file", json!({"path": "a"}));
        a_tool_that_was_not_offered: r#"{"name": "delete_everything", "arguments": {}}"# => vec![];
        arguments_that_are_a_string: r#"{"name": "read_file", "arguments": "{\"path\": \"a\"}"}"# => vec![];
        arguments_missing: r#"{"name": "read_file", "parameters": {"path": "a"}}"# => vec![];
        a_name_that_is_not_a_string: r#"{"name": ["read_file"], "arguments": {}}"# => vec![];
        plain_prose: "Done: the tests pass." => vec![];
        a_cut_object: r#"{"name": "read_file", "arguments": {"path": "#  => vec![];
        code_with_braces: "fn main() { println!(\"{}\", 1); }" => vec![];
    }

    #[test]
    fn a_call_with_unescaped_quotes_is_read_only_when_it_has_one_reading() {
        // No JSON parser reads these, but each has one reading.
        assert_eq!(
            recovered(
                "```json\n{\"name\": \"write_file\", \"arguments\": {\"content\": \"def f():\\n    \"\"\"Doc.\"\"\"\\n\", \"path\": \"f.py\"}}\n```"
            ),
            one(
                "write_file",
                json!({"content": "def f():\n    \"\"\"Doc.\"\"\"\n", "path": "f.py"})
            )
        );
        assert_eq!(
            recovered(
                r#"{"name": "read_file", "arguments": {"path": "say "hi".txt", "start_line": 3}}"#
            ),
            one(
                "read_file",
                json!({"path": "say \"hi\".txt", "start_line": 3})
            )
        );
        // Pretty-printed, as models write JSON in a fenced block: the same one reading.
        assert_eq!(
            recovered(
                "```json\n{\n  \"name\": \"write_file\",\n  \"arguments\": {\n    \"content\": \"if (c === '\"') {\\n}\",\n    \"path\": \"csv.js\"\n  }\n}\n```"
            ),
            one(
                "write_file",
                json!({"content": "if (c === '\"') {\n}", "path": "csv.js"})
            )
        );
        // Python's literals, as Qwen2.5-Coder-1.5B wrote them in a call to write a docstring.
        assert_eq!(
            recovered(
                "```json\n{\"name\": \"write_file\", \"arguments\": {\"content\": \"def f():\\n    \"\"\"Doc.\"\"\"\\n\", \"overwrite\": True, \"path\": \"f.py\"}}\n```"
            ),
            one(
                "write_file",
                json!({"content": "def f():\n    \"\"\"Doc.\"\"\"\n", "overwrite": true, "path": "f.py"})
            )
        );
        assert_eq!(
            recovered(
                r#"{"name": "read_file", "arguments": {"path": "a"b", "all": False, "x": None}}"#
            ),
            one(
                "read_file",
                json!({"path": "a\"b", "all": false, "x": null})
            )
        );
        // Python's triple quotes around code with docstrings in it, the way Qwen2.5-Coder-1.5B
        // wrote an edit of stats.py: the text between them.
        assert_eq!(
            recovered(
                "```json\n{\n    \"name\": \"write_file\",\n    \"arguments\": {\n        \"content\": \"\"\"import math\n\ndef f():\n    \"\"\"Doc.\"\"\"\n    return 1\n\"\"\",\n        \"path\": \"f.py\"\n    }\n}\n```"
            ),
            one(
                "write_file",
                json!({"content": "import math\n\ndef f():\n    \"\"\"Doc.\"\"\"\n    return 1\n", "path": "f.py"})
            )
        );
        // Four quotes hold two quotes: too short to be triple quotes around anything.
        assert_eq!(
            recovered(r#"{"name": "read_file", "arguments": {"path": """", "all": False}}"#),
            one("read_file", json!({"path": "\"\"", "all": false}))
        );
        // Two calls, a key twice, or another value that is not JSON: not guessed.
        for text in [
            r#"{"name": "read_file", "arguments": {"path": "a"b"}} {"name": "read_file", "arguments": {"path": "c"d"}}"#,
            r#"{"name": "read_file", "arguments": {"path": "a"b", "path": "c"}}"#,
            r#"{"name": "read_file", "arguments": {"path": "a"b", "start_line": three}}"#,
            r#"{"name": "delete_everything", "arguments": {"path": "a"b"}}"#,
        ] {
            assert_eq!(recovered(text), vec![], "{text}");
        }
    }

    #[test]
    fn recovered_calls_are_numbered_in_order() {
        let text = r#"{"name":"read_file","arguments":{}} {"name":"read_file","arguments":{}}"#;
        let ids: Vec<String> = tool_calls_in_text(text, OFFERED)
            .into_iter()
            .map(|call| call.id)
            .collect();
        assert_eq!(ids, ["call_0", "call_1"]);
    }

    #[test]
    fn the_scan_gives_up_after_a_bounded_number_of_attempts() {
        let call = r#"{"name":"read_file","arguments":{}}"#;
        let within = format!("{}{call}", "{".repeat(MAX_ATTEMPTS - 1));
        assert_eq!(tool_calls_in_text(&within, OFFERED).len(), 1);
        let beyond = format!("{}{call}", "{".repeat(MAX_ATTEMPTS));
        assert_eq!(tool_calls_in_text(&beyond, OFFERED).len(), 0);
    }

    #[test]
    fn tool_names_come_from_either_shape() {
        let tools = [
            json!({"type": "function", "function": {"name": "read_file", "parameters": {}}}),
            json!({"name": "list_dir"}),
            json!({"type": "function"}),
        ];
        assert_eq!(tool_names(&tools), ["read_file", "list_dir"]);
    }
}
