//! Constrained replies: a JSON schema that admits exactly one call of an offered tool or a
//! final answer, the instructions that tell the model so, and the reading of such a reply.
//!
//! A server that constrains decoding to a schema (Ollama's `format`, llama.cpp's and vLLM's
//! `response_format`) samples only tokens that keep the reply valid, so a small model cannot
//! write a malformed call, or prose where a call belongs. The reply is one of:
//!
//! ```json
//! {"name": "read_file", "arguments": {"path": "src/lib.rs"}}
//! {"answer": "The tests pass now."}
//! ```
//!
//! The tools are then not sent as `tools` (llama.cpp refuses a grammar together with tools,
//! and a chat template's own call syntax could not be written under the schema anyway): they
//! are described in a system message instead.

use serde_json::{Map, Value, json};

use crate::message::{CallOrigin, Message, Role, ToolCall};
use crate::recover::tool_names;
use crate::response::ChatResponse;

/// The key of the final-answer form of a reply.
const ANSWER: &str = "answer";

/// The schema of one reply: a call of one of `tools`, with that tool's parameters as its
/// arguments, or a final answer.
pub(crate) fn reply_schema(tools: &[Value]) -> Value {
    let mut forms: Vec<Value> = tools
        .iter()
        .filter_map(|tool| {
            let function = tool.get("function").unwrap_or(tool);
            let name = function.get("name")?.as_str()?;
            let parameters = function
                .get("parameters")
                .filter(|parameters| parameters.is_object())
                .cloned()
                .unwrap_or_else(|| json!({"type": "object"}));
            Some(json!({
                "type": "object",
                "properties": {"name": {"const": name}, "arguments": parameters},
                "required": ["name", "arguments"],
                "additionalProperties": false,
            }))
        })
        .collect();
    forms.push(json!({
        "type": "object",
        "properties": {ANSWER: {"type": "string"}},
        "required": [ANSWER],
        "additionalProperties": false,
    }));
    json!({"anyOf": forms})
}

/// The conversation with the reply format and the tools explained in its system message
/// (added first when it has none).
pub(crate) fn with_instructions(messages: &[Message], tools: &[Value]) -> Vec<Message> {
    let instructions = instructions(tools);
    let mut messages = messages.to_vec();
    match messages.first_mut() {
        Some(first) if first.role == Role::System => {
            first.content = format!("{}\n\n{instructions}", first.content);
        }
        _ => messages.insert(0, Message::system(instructions)),
    }
    messages
}

/// Reads a constrained reply into the answer: a call becomes its one tool call (marked
/// [`CallOrigin::Constrained`]), a final answer becomes the text. Anything else (a server
/// that ignored the schema) is left as it was, for the recovery of calls written as text.
/// True if and only if the reply was one of the two forms.
pub(crate) fn read_reply(response: &mut ChatResponse, tools: &[Value]) -> bool {
    if !response.tool_calls.is_empty() {
        return false;
    }
    let Ok(Value::Object(mut reply)) = serde_json::from_str::<Value>(response.content.trim())
    else {
        return false;
    };
    if let Some(Value::String(answer)) = reply.get(ANSWER)
        && reply.len() == 1
    {
        response.content = answer.clone();
        return true;
    }
    let offered = tool_names(tools);
    let name = match reply.get("name") {
        Some(Value::String(name)) if offered.contains(&name.as_str()) => name.clone(),
        _ => return false,
    };
    let Some(Value::Object(arguments)) = reply.remove("arguments") else {
        return false;
    };
    response.tool_calls = vec![ToolCall {
        id: "call_0".to_owned(),
        name,
        arguments: Value::Object(arguments),
        origin: CallOrigin::Constrained,
    }];
    true
}

/// True if and only if an error status answering a constrained request refuses the
/// constraint: a client error (or a server error: llama.cpp may fail converting a schema)
/// whose message names it, as `invalid format` (Ollama before 0.5), `response_format type
/// must be ...`, `JSON schema conversion failed`, `grammar` errors do.
pub(crate) fn is_refusal(status: u16, message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    matches!(status, 400 | 422 | 500 | 501)
        && ["format", "schema", "grammar"]
            .iter()
            .any(|word| names_word(&message, word))
}

/// True if and only if `word` stands in `text` as a word of its own or the end of a snake
/// case name (`response_format`), not inside another word (`information`).
fn names_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        !text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphabetic())
    })
}

/// What the model is told about the reply format and the tools.
fn instructions(tools: &[Value]) -> String {
    let mut text = String::from(
        "Reply with exactly one JSON object and nothing else. To call a tool, write \
         {\"name\": <the tool's name>, \"arguments\": <its arguments>}; one tool per reply, \
         and you will see its result. When the task is done, write \
         {\"answer\": <your final answer>}.",
    );
    if tools.is_empty() {
        return text;
    }
    text.push_str("\n\nThe tools:");
    for tool in tools {
        let function = tool.get("function").unwrap_or(tool);
        let Some(name) = function.get("name").and_then(Value::as_str) else {
            continue;
        };
        let description = function
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        let parameters = function
            .get("parameters")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        text.push_str(&format!(
            "\n- {name}: {description} Arguments (JSON Schema): {parameters}"
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::response::{FinishReason, Usage};

    fn tools() -> Vec<Value> {
        vec![
            json!({"type": "function", "function": {
                "name": "read_file",
                "description": "Read a file.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            }}),
            json!({"type": "function", "function": {"name": "list_dir"}}),
        ]
    }

    #[test]
    fn the_schema_admits_one_call_of_each_tool_with_its_parameters_or_an_answer() {
        assert_eq!(
            reply_schema(&tools()),
            json!({"anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "name": {"const": "read_file"},
                        "arguments": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                    },
                    "required": ["name", "arguments"],
                    "additionalProperties": false,
                },
                {
                    "type": "object",
                    "properties": {"name": {"const": "list_dir"}, "arguments": {"type": "object"}},
                    "required": ["name", "arguments"],
                    "additionalProperties": false,
                },
                {
                    "type": "object",
                    "properties": {"answer": {"type": "string"}},
                    "required": ["answer"],
                    "additionalProperties": false,
                },
            ]})
        );
    }

    #[test]
    fn instructions_join_the_system_message_or_come_first() {
        let with_system = with_instructions(
            &[Message::system("Be careful."), Message::user("go")],
            &tools(),
        );
        assert_eq!(with_system.len(), 2);
        assert!(
            with_system[0]
                .content
                .starts_with("Be careful.\n\nReply with exactly one JSON object")
        );
        assert!(with_system[0].content.contains(
            "\n- read_file: Read a file. Arguments (JSON Schema): {\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"],\"type\":\"object\"}"
        ));
        assert!(
            with_system[0]
                .content
                .contains("\n- list_dir:  Arguments (JSON Schema): {}")
        );
        let without = with_instructions(&[Message::user("go")], &[]);
        assert_eq!(without[0].role, Role::System);
        assert!(!without[0].content.contains("The tools:"));
        assert_eq!(without[1], Message::user("go"));
    }

    fn reply(content: &str) -> ChatResponse {
        let mut response = ChatResponse {
            content: content.to_owned(),
            tool_calls: Vec::new(),
            finish: FinishReason::Stop,
            usage: Usage::default(),
        };
        let read = read_reply(&mut response, &tools());
        assert_eq!(
            read,
            !response.tool_calls.is_empty() || response.content != content
        );
        response
    }

    #[test]
    fn a_call_becomes_the_one_tool_call_and_keeps_its_text() {
        let text = " {\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}\n";
        let response = reply(text);
        assert_eq!(response.tool_calls.len(), 1);
        let call = &response.tool_calls[0];
        assert_eq!(
            (call.id.as_str(), call.name.as_str()),
            ("call_0", "read_file")
        );
        assert_eq!(call.arguments, json!({"path": "a.py"}));
        assert_eq!(call.origin, CallOrigin::Constrained);
        assert_eq!(response.content, text);
        assert_eq!(
            response.to_message().content,
            "",
            "the call, not its JSON, goes back"
        );
    }

    #[test]
    fn an_answer_becomes_the_text() {
        let response = reply("{\"answer\": \"Fixed: mean divides by len.\"}");
        assert!(response.tool_calls.is_empty());
        assert_eq!(response.content, "Fixed: mean divides by len.");
    }

    #[test]
    fn refusals_are_told_from_other_errors_by_status_and_wording() {
        assert!(is_refusal(
            400,
            "invalid format: expected \"json\" or a JSON schema"
        ));
        assert!(is_refusal(
            400,
            "response_format type must be text or json_object"
        ));
        assert!(is_refusal(
            500,
            "JSON schema conversion failed: unsupported keyword"
        ));
        assert!(is_refusal(422, "Grammar is not supported"));
        assert!(!is_refusal(
            400,
            "the request exceeds the available context size"
        ));
        assert!(!is_refusal(503, "loading model; format later"));
        assert!(!is_refusal(
            500,
            "model runner has unexpectedly stopped: check the server log for more information"
        ));
        assert!(is_refusal(400, "invalid JSON-schema: unknown keyword"));
        assert!(!is_refusal(404, "model not found"));
    }

    #[test]
    fn anything_else_is_left_as_it_was() {
        for text in [
            "The fix is to divide by len.",
            "{\"name\": \"delete_all\", \"arguments\": {}}",
            "{\"name\": \"read_file\", \"arguments\": \"a.py\"}",
            "{\"answer\": 42}",
            "{\"answer\": \"x\", \"name\": \"read_file\"}",
            "[{\"answer\": \"x\"}]",
            "{\"answer\": \"cut",
        ] {
            let response = reply(text);
            assert_eq!(response.content, text);
            assert!(response.tool_calls.is_empty(), "{text}");
        }
    }
}
