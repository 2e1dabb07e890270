//! What the loop and a model say to each other: the [`Message`]s of a conversation and the
//! [`ToolCall`]s inside them, the loop's own types on its side of the [`ChatClient`] seam.
//!
//! A client of a real server (Ollama's API, an OpenAI-compatible one) converts these to its
//! own types; the loop never sees a client's. They are also what a transcript holds, so their
//! JSON is part of the transcript format: the serde attributes below are that format, and
//! transcripts written before these types lived here read as they did.
//!
//! [`ChatClient`]: crate::ChatClient

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The person, or the program standing for them.
    User,
    /// The model.
    Assistant,
    /// The result of a tool call.
    Tool,
}

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text; may be empty for an assistant message that only calls tools.
    pub content: String,
    /// The tools an assistant message called.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the [`ToolCall::id`] it answers (the OpenAI-compatible API needs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For a tool result: the name of the tool that produced it (Ollama's API uses it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Message {
        Message::plain(Role::System, content.into())
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Message {
        Message::plain(Role::User, content.into())
    }

    /// An assistant message with text and the tools it called.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Message {
        Message {
            tool_calls,
            ..Message::plain(Role::Assistant, content.into())
        }
    }

    /// The result of `call`, to send back to the model.
    pub fn tool_result(call: &ToolCall, content: impl Into<String>) -> Message {
        Message {
            tool_call_id: Some(call.id.clone()),
            tool_name: Some(call.name.clone()),
            ..Message::plain(Role::Tool, content.into())
        }
    }

    fn plain(role: Role, content: String) -> Message {
        Message {
            role,
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
        }
    }
}

/// A call of one tool, as the model asked for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The server's id for the call, or `call_N` (N its position in the answer) when the
    /// server gives none; tool results refer to it.
    pub id: String,
    /// The tool's name, as the model wrote it; the toolbox checks it.
    pub name: String,
    /// The arguments, normally a JSON object. When the model wrote arguments that are not
    /// valid JSON, this is that string, unchanged, so the model can be shown what it wrote.
    pub arguments: Value,
    /// Whether the server returned it as a call or it was made from the model's text.
    pub origin: CallOrigin,
}

/// Where a [`ToolCall`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallOrigin {
    /// The server returned a structured tool call.
    Structured,
    /// The model wrote the call as JSON in its text, and the client recovered it.
    RecoveredFromText,
    /// The model wrote the call as a reply constrained to a JSON schema.
    Constrained,
    /// The model wrote the edit into its answer as a block (a whole file under its path, or
    /// a search/replace block), which the loop turned into this call.
    EditBlock,
    /// No model made it: a client of the tools called them itself (an MCP client).
    Client,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_result_refers_to_its_call_by_id_and_name() {
        let call = ToolCall {
            id: "call_7".to_owned(),
            name: "read_file".to_owned(),
            arguments: json!({"path": "a.rs"}),
            origin: CallOrigin::Structured,
        };
        let result = Message::tool_result(&call, "fn main() {}");
        assert_eq!(result.role, Role::Tool);
        assert_eq!(result.tool_call_id.as_deref(), Some("call_7"));
        assert_eq!(result.tool_name.as_deref(), Some("read_file"));
        assert_eq!(result.content, "fn main() {}");
    }

    #[test]
    fn messages_and_calls_serialize_as_transcripts_hold_them() {
        let value = serde_json::to_value(Message::user("hi")).unwrap();
        assert_eq!(value, json!({"role": "user", "content": "hi"}));
        let call = ToolCall {
            id: "block_2_0".to_owned(),
            name: "write_file".to_owned(),
            arguments: json!({"path": "a"}),
            origin: CallOrigin::RecoveredFromText,
        };
        let value = serde_json::to_value(Message::tool_result(&call, "ok")).unwrap();
        assert_eq!(
            value,
            json!({"role": "tool", "content": "ok", "tool_call_id": "block_2_0", "tool_name": "write_file"})
        );
        let value = serde_json::to_value(Message::assistant("", vec![call])).unwrap();
        assert_eq!(
            value,
            json!({"role": "assistant", "content": "", "tool_calls": [{
                "id": "block_2_0", "name": "write_file", "arguments": {"path": "a"},
                "origin": "recovered_from_text"
            }]})
        );
    }
}
