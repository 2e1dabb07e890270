//! The chat request both APIs send, written once: the conversation, the tools (offered to
//! call, or described in the instructions with the reply held to a schema), and the
//! sampling options. A [`Dialect`] is what one API writes its own way; `ollama::chat_body`
//! and `openai::chat_body` add the fields only their API has.

use serde_json::{Value, json};

use crate::config::{Config, ReplyFormat};
use crate::constrained;
use crate::message::{Message, Role, ToolCall};

/// What one chat API writes its own way in a request.
pub(crate) trait Dialect {
    /// The name of the option that bounds the tokens generated: `num_predict`, `max_tokens`.
    const MAX_TOKENS: &'static str;

    /// Where the sampling options go: the body itself, or an object in it.
    fn options(body: &mut Value) -> &mut Value;

    /// A tool call the model made, as the conversation sent back carries it.
    fn call(call: &ToolCall) -> Value;

    /// The field that ties a tool's result to its call, and its value, when the message
    /// has one: the tool's name (Ollama), or the call's id (OpenAI).
    fn result_link(message: &Message) -> Option<(&'static str, &str)>;

    /// Asks for a reply that holds to `schema`.
    fn constrain(body: &mut Value, schema: Value);
}

/// Adds to `body` the conversation `messages`, the `tools` the model may call (as
/// `config.reply_format` says), and the sampling options `config` sets.
pub(crate) fn add_conversation<D: Dialect>(
    body: &mut Value,
    config: &Config,
    messages: &[Message],
    tools: &[Value],
) {
    match config.reply_format {
        ReplyFormat::Free => {
            body["messages"] = messages.iter().map(message::<D>).collect();
            if !tools.is_empty() {
                body["tools"] = json!(tools);
            }
        }
        ReplyFormat::Constrained => {
            let messages = constrained::with_instructions(messages, tools);
            body["messages"] = messages.iter().map(message::<D>).collect();
            D::constrain(body, constrained::reply_schema(tools));
        }
    }
    let sampling = [
        ("temperature", config.temperature.map(|value| json!(value))),
        ("seed", config.seed.map(|value| json!(value))),
        (
            D::MAX_TOKENS,
            config.max_output_tokens.map(|value| json!(value)),
        ),
        (
            "repeat_penalty",
            config.repeat_penalty.map(|value| json!(value)),
        ),
        (
            "frequency_penalty",
            config.frequency_penalty.map(|value| json!(value)),
        ),
        (
            "presence_penalty",
            config.presence_penalty.map(|value| json!(value)),
        ),
    ];
    let options = D::options(body);
    for (name, value) in sampling {
        if let Some(value) = value {
            options[name] = value;
        }
    }
}

/// One message of the conversation.
fn message<D: Dialect>(message: &Message) -> Value {
    let mut value = json!({"role": message.role, "content": message.content});
    if !message.tool_calls.is_empty() {
        value["tool_calls"] = message.tool_calls.iter().map(D::call).collect();
    }
    if let (Role::Tool, Some((field, link))) = (message.role, D::result_link(message)) {
        value[field] = json!(link);
    }
    value
}

/// What the request tests of both APIs send.
#[cfg(test)]
pub(crate) mod tests {
    use serde_json::{Value, json};

    use crate::config::{Api, Config};
    use crate::message::{CallOrigin, Message, ToolCall};

    /// A configuration for `api` that sets every sampling option and `keep_alive`.
    pub(crate) fn every_option(api: Api) -> Config {
        let mut config = Config::new(api, "qwen");
        config.temperature = Some(0.5);
        config.seed = Some(7);
        config.max_output_tokens = Some(256);
        config.repeat_penalty = Some(1.05);
        config.frequency_penalty = Some(0.5);
        config.presence_penalty = Some(-0.5);
        config.keep_alive = Some("30m".to_owned());
        config
    }

    /// A system prompt, two calls of `read_file` (the second's arguments malformed, kept
    /// as their text) and the first one's result.
    pub(crate) fn a_conversation() -> [Message; 3] {
        let good = ToolCall {
            id: "call_0".to_owned(),
            name: "read_file".to_owned(),
            arguments: json!({"path": "a"}),
            origin: CallOrigin::Structured,
        };
        let malformed = ToolCall {
            id: "call_1".to_owned(),
            arguments: json!("{oops"),
            origin: CallOrigin::RecoveredFromText,
            ..good.clone()
        };
        [
            Message::system("be brief"),
            Message::assistant("", vec![good.clone(), malformed]),
            Message::tool_result(&good, "contents"),
        ]
    }

    /// The tool offered.
    pub(crate) fn a_tool() -> Value {
        json!({"type": "function", "function": {"name": "read_file"}})
    }
}
