//! Ollama's native API: the `/api/chat` request and its newline-delimited JSON stream, and
//! the bodies of `/api/show`, `/api/tags` and `/api/version`.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::Error;
use crate::config::Config;
use crate::message::{CallOrigin, Message, ToolCall};
use crate::request::{self, Dialect};
use crate::response::{FinishReason, ModelInfo, Usage};
use crate::stream::{ChatFormat, Ending, Lines, parse_record, reported_error};

pub(crate) const CHAT: &str = "/api/chat";
pub(crate) const SHOW: &str = "/api/show";
pub(crate) const TAGS: &str = "/api/tags";
pub(crate) const VERSION: &str = "/api/version";

/// The body of a streamed `/api/chat` request.
pub(crate) fn chat_body(
    config: &Config,
    context_length: u32,
    messages: &[Message],
    tools: &[Value],
) -> Value {
    let mut body = json!({
        "model": config.model,
        "stream": true,
        "options": {"num_ctx": context_length},
    });
    request::add_conversation::<Request>(&mut body, config, messages, tools);
    if let Some(keep_alive) = &config.keep_alive {
        body["keep_alive"] = json!(keep_alive);
    }
    body
}

/// How Ollama writes what both APIs send: options in `options`, a call's arguments as
/// JSON, a result tied to its tool by name, the reply's schema as `format`.
struct Request;

impl Dialect for Request {
    const MAX_TOKENS: &'static str = "num_predict";

    fn options(body: &mut Value) -> &mut Value {
        &mut body["options"]
    }

    fn call(call: &ToolCall) -> Value {
        json!({"function": {"name": call.name, "arguments": call.arguments}})
    }

    fn result_link(message: &Message) -> Option<(&'static str, &str)> {
        Some(("tool_name", message.tool_name.as_deref()?))
    }

    fn constrain(body: &mut Value, schema: Value) {
        body["format"] = schema;
    }
}

/// Ollama's reading of a streamed `/api/chat` answer, line by line.
#[derive(Debug, Default)]
pub(crate) struct Chunks {
    tool_calls: Vec<ToolCall>,
    /// The bytes of the calls' arguments as JSON text, for the reply's limit.
    argument_bytes: usize,
    /// The final chunk's facts, once a chunk with `"done": true` arrived.
    done: Option<(FinishReason, Usage)>,
}

/// One line of the stream. Every chunk carries a piece of the message; the last one
/// has `done` and the statistics.
#[derive(Deserialize)]
struct Chunk {
    message: Option<ChunkMessage>,
    #[serde(default)]
    done: bool,
    done_reason: Option<String>,
    prompt_eval_count: Option<u64>,
    eval_count: Option<u64>,
    total_duration: Option<u64>,
    load_duration: Option<u64>,
    prompt_eval_duration: Option<u64>,
    eval_duration: Option<u64>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkMessage {
    content: Option<String>,
    tool_calls: Option<Vec<WireCall>>,
}

#[derive(Deserialize)]
struct WireCall {
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

impl ChatFormat for Chunks {
    type Framing = Lines;

    fn take_record(&mut self, url: &str, line: &[u8]) -> Result<Option<String>, Error> {
        if self.done.is_some() || line.trim_ascii().is_empty() {
            return Ok(None);
        }
        let chunk: Chunk = parse_record(url, line)?;
        reported_error(url, chunk.error)?;
        let mut text = None;
        if let Some(message) = chunk.message {
            text = message.content.filter(|text| !text.is_empty());
            for call in message.tool_calls.unwrap_or_default() {
                let position = self.tool_calls.len();
                let arguments = call.function.arguments.unwrap_or_else(|| json!({}));
                self.argument_bytes = self.argument_bytes.saturating_add(json_len(&arguments));
                self.tool_calls.push(ToolCall {
                    id: call.id.unwrap_or_else(|| format!("call_{position}")),
                    name: call.function.name,
                    arguments,
                    origin: CallOrigin::Structured,
                });
            }
        }
        if chunk.done {
            let usage = Usage {
                prompt_tokens: chunk.prompt_eval_count,
                completion_tokens: chunk.eval_count,
                prompt_duration: chunk.prompt_eval_duration.map(Duration::from_nanos),
                generation_duration: chunk.eval_duration.map(Duration::from_nanos),
                load_duration: chunk.load_duration.map(Duration::from_nanos),
                total_duration: chunk.total_duration.map(Duration::from_nanos),
            };
            self.done = Some((FinishReason::from_wire(chunk.done_reason.as_deref()), usage));
        }
        Ok(text)
    }

    fn finish(self) -> Result<Ending, String> {
        let Some((finish, usage)) = self.done else {
            return Err("no chunk with \"done\": true arrived".to_owned());
        };
        Ok(Ending {
            tool_calls: self.tool_calls,
            finish,
            usage,
        })
    }
    fn cut_short(self) -> Vec<ToolCall> {
        self.tool_calls
    }

    fn calls_held(&self) -> (usize, usize) {
        (self.tool_calls.len(), self.argument_bytes)
    }
}

/// The length of a value written as compact JSON, counted without writing it anywhere.
fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(bytes.len());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` cannot fail, and the counter never does.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Reads an `/api/show` body.
pub(crate) fn model_info(model: &str, body: &[u8]) -> Result<ModelInfo, String> {
    #[derive(Deserialize)]
    struct Show {
        #[serde(default)]
        model_info: Map<String, Value>,
        #[serde(default)]
        capabilities: Vec<String>,
    }
    let show: Show = serde_json::from_slice(body).map_err(|error| error.to_string())?;
    // The key is named after the architecture: `llama.context_length`, `qwen2.context_length`.
    let key = show
        .model_info
        .get("general.architecture")
        .and_then(Value::as_str)
        .map(|architecture| format!("{architecture}.context_length"));
    let context_length = key
        .and_then(|key| show.model_info.get(&key))
        .or_else(|| {
            show.model_info
                .iter()
                .find(|(key, _)| key.ends_with(".context_length"))
                .map(|(_, value)| value)
        })
        .and_then(Value::as_u64)
        .map(|length| u32::try_from(length).unwrap_or(u32::MAX));
    Ok(ModelInfo {
        name: model.to_owned(),
        context_length,
        capabilities: show.capabilities,
    })
}

/// Reads an `/api/tags` body: the installed models' names.
pub(crate) fn model_names(body: &[u8]) -> Result<Vec<String>, String> {
    #[derive(Deserialize)]
    struct Tags {
        models: Vec<Tag>,
    }
    #[derive(Deserialize)]
    struct Tag {
        name: String,
    }
    let tags: Tags = serde_json::from_slice(body).map_err(|error| error.to_string())?;
    Ok(tags.models.into_iter().map(|tag| tag.name).collect())
}

/// Reads an `/api/version` body.
pub(crate) fn version(body: &[u8]) -> Result<String, String> {
    #[derive(Deserialize)]
    struct Version {
        version: String,
    }
    serde_json::from_slice::<Version>(body)
        .map(|v| v.version)
        .map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Api, DEFAULT_REPEAT_PENALTY};
    use crate::format_cases::ollama as run;
    use crate::request::tests::{a_conversation, a_tool, every_option};

    #[test]
    fn tool_calls_are_collected_with_ids_given_or_made() {
        let body = br#"{"message":{"content":"","tool_calls":[{"id":"abc","function":{"name":"a","arguments":{"x":1}}}]},"done":false}
{"message":{"content":"","tool_calls":[{"function":{"name":"b"}}]},"done":true}
"#;
        let calls = run(body).0.unwrap().tool_calls;
        assert_eq!(calls.len(), 2);
        assert_eq!((calls[0].id.as_str(), calls[0].name.as_str()), ("abc", "a"));
        assert_eq!(calls[0].arguments, json!({"x": 1}));
        assert_eq!(
            (calls[1].id.as_str(), calls[1].name.as_str()),
            ("call_1", "b")
        );
        assert_eq!(calls[1].arguments, json!({}));
        assert_eq!(calls[1].origin, CallOrigin::Structured);
    }

    #[test]
    fn the_malformed_line_is_quoted_shortened() {
        let line = format!("{}\n", "x".repeat(300));
        let error = run(line.as_bytes()).0.unwrap_err();
        let Error::MalformedLine { line, .. } = error else {
            panic!("{error:?}")
        };
        assert_eq!(line, format!("{}...", "x".repeat(200)));
    }

    #[test]
    fn the_request_carries_num_ctx_options_tools_and_keep_alive() {
        let config = every_option(Api::Ollama);
        let tool = a_tool();
        let body = chat_body(
            &config,
            8192,
            &a_conversation(),
            std::slice::from_ref(&tool),
        );
        assert_eq!(
            body,
            // In the order `chat_body` writes them: the sampling options go in `options`.
            json!({
                "model": "qwen",
                "stream": true,
                "options": {
                    "num_ctx": 8192, "temperature": 0.5, "seed": 7, "num_predict": 256,
                    "repeat_penalty": 1.05, "frequency_penalty": 0.5, "presence_penalty": -0.5,
                },
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"function": {"name": "read_file", "arguments": {"path": "a"}}},
                        {"function": {"name": "read_file", "arguments": "{oops"}},
                    ]},
                    {"role": "tool", "content": "contents", "tool_name": "read_file"},
                ],
                "tools": [tool],
                "keep_alive": "30m",
            })
        );
    }

    #[test]
    fn without_tools_or_options_only_num_ctx_and_the_default_repeat_penalty_are_sent() {
        let mut config = Config::new(Api::Ollama, "m");
        let body = chat_body(&config, 2048, &[Message::user("hi")], &[]);
        assert_eq!(
            body["options"],
            json!({"num_ctx": 2048, "repeat_penalty": DEFAULT_REPEAT_PENALTY})
        );
        config.repeat_penalty = None;
        let body = chat_body(&config, 2048, &[Message::user("hi")], &[]);
        assert_eq!(body["options"], json!({"num_ctx": 2048}));
        assert!(body.get("tools").is_none());
        assert!(body.get("keep_alive").is_none());
    }

    #[test]
    fn show_gives_the_architecture_context_length_and_capabilities() {
        let body = br#"{"model_info":{"general.architecture":"qwen2","llama.context_length":1,"qwen2.context_length":32768},"capabilities":["completion","tools"]}"#;
        let info = model_info("q", body).unwrap();
        assert_eq!(info.context_length, Some(32768));
        assert_eq!(info.supports_tools(), Some(true));
        let without_architecture = br#"{"model_info":{"x.context_length":4096}}"#;
        assert_eq!(
            model_info("q", without_architecture)
                .unwrap()
                .context_length,
            Some(4096)
        );
        assert_eq!(model_info("q", b"{}").unwrap().context_length, None);
        assert!(model_info("q", b"\"a string\"").is_err());
    }

    #[test]
    fn tags_and_version_bodies_are_read() {
        let tags = br#"{"models":[{"name":"a:latest","size":1},{"name":"b:7b"}]}"#;
        assert_eq!(model_names(tags).unwrap(), ["a:latest", "b:7b"]);
        assert!(model_names(b"{}").is_err());
        assert_eq!(version(br#"{"version":"0.9.0"}"#).unwrap(), "0.9.0");
        assert!(version(b"0.9.0").is_err());
    }
}
