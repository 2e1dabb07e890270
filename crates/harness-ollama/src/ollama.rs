//! Ollama's native API: the `/api/chat` request and its newline-delimited JSON stream, and
//! the bodies of `/api/show`, `/api/tags` and `/api/version`.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::Error;
use crate::config::{Config, ReplyFormat};
use crate::constrained;
use crate::message::{CallOrigin, Message, Role, ToolCall};
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
    let mut options = Map::new();
    options.insert("num_ctx".to_owned(), json!(context_length));
    if let Some(temperature) = config.temperature {
        options.insert("temperature".to_owned(), json!(temperature));
    }
    if let Some(seed) = config.seed {
        options.insert("seed".to_owned(), json!(seed));
    }
    if let Some(limit) = config.max_output_tokens {
        options.insert("num_predict".to_owned(), json!(limit));
    }
    let penalties = [
        ("repeat_penalty", config.repeat_penalty),
        ("frequency_penalty", config.frequency_penalty),
        ("presence_penalty", config.presence_penalty),
    ];
    for (name, penalty) in penalties {
        if let Some(penalty) = penalty {
            options.insert(name.to_owned(), json!(penalty));
        }
    }
    let mut body = json!({"model": config.model, "stream": true, "options": options});
    match config.reply_format {
        ReplyFormat::Free => {
            body["messages"] = messages.iter().map(message_json).collect();
            if !tools.is_empty() {
                body["tools"] = json!(tools);
            }
        }
        ReplyFormat::Constrained => {
            let messages = constrained::with_instructions(messages, tools);
            body["messages"] = messages.iter().map(message_json).collect();
            body["format"] = constrained::reply_schema(tools);
        }
    }
    if let Some(keep_alive) = &config.keep_alive {
        body["keep_alive"] = json!(keep_alive);
    }
    body
}

fn message_json(message: &Message) -> Value {
    let mut value = json!({"role": message.role, "content": message.content});
    if !message.tool_calls.is_empty() {
        value["tool_calls"] = message
            .tool_calls
            .iter()
            .map(|call| json!({"function": {"name": call.name, "arguments": call.arguments}}))
            .collect();
    }
    if let (Role::Tool, Some(name)) = (message.role, &message.tool_name) {
        value["tool_name"] = json!(name);
    }
    value
}

/// Ollama's reading of a streamed `/api/chat` answer, line by line.
#[derive(Debug, Default)]
pub(crate) struct Chunks {
    tool_calls: Vec<ToolCall>,
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
                self.tool_calls.push(ToolCall {
                    id: call.id.unwrap_or_else(|| format!("call_{position}")),
                    name: call.function.name,
                    arguments: call.function.arguments.unwrap_or_else(|| json!({})),
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
    use crate::response::ChatResponse;

    fn run(body: &[u8]) -> (Result<ChatResponse, Error>, Vec<String>) {
        crate::stream::decode_whole::<Chunks>("http://h/api/chat", body)
    }

    #[test]
    fn text_arrives_in_deltas_and_the_final_chunk_gives_reason_and_usage() {
        let body = br#"{"message":{"role":"assistant","content":"Hel"},"done":false}
{"message":{"role":"assistant","content":"lo"},"done":false}
{"message":{"role":"assistant","content":""},"done":true,"done_reason":"length","prompt_eval_count":26,"eval_count":2,"total_duration":5000000000,"load_duration":1000,"prompt_eval_duration":2000000000,"eval_duration":500000000}
"#;
        let (result, deltas) = run(body);
        let response = result.unwrap();
        assert_eq!(deltas, ["Hel", "lo"]);
        assert_eq!(response.content, "Hello");
        assert_eq!(response.finish, FinishReason::Length);
        assert_eq!(response.usage.prompt_tokens, Some(26));
        assert_eq!(response.usage.completion_tokens, Some(2));
        assert_eq!(response.usage.total_duration, Some(Duration::from_secs(5)));
        assert_eq!(response.usage.load_duration, Some(Duration::from_micros(1)));
        assert_eq!(response.usage.prompt_tokens_per_second(), Some(13.0));
        assert_eq!(response.usage.generation_tokens_per_second(), Some(4.0));
    }

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
    fn an_answer_cut_for_repeating_itself_keeps_the_calls_so_far() {
        let mut body = br#"{"message":{"content":"","tool_calls":[{"function":{"name":"a","arguments":{"x":1}}}]},"done":false}
"#
        .to_vec();
        for _ in 0..200 {
            body.extend_from_slice(b"{\"message\":{\"content\":\"again and \"},\"done\":false}\n");
        }
        let response = run(&body).0.unwrap();
        assert!(
            matches!(response.finish, FinishReason::Repetition(_)),
            "{:?}",
            response.finish
        );
        assert_eq!(response.content, "again and ");
        assert_eq!(response.tool_calls.len(), 1);
        assert_eq!(response.tool_calls[0].arguments, json!({"x": 1}));
        assert_eq!(response.usage, Usage::default(), "no counts arrived");
    }

    #[test]
    fn a_whole_last_line_without_its_line_break_is_used() {
        let response = run(br#"{"message":{"content":"hi"},"done":true}"#)
            .0
            .unwrap();
        assert_eq!(response.content, "hi");
    }

    #[test]
    fn lines_after_the_final_chunk_and_blank_lines_are_ignored() {
        let body = b"\n{\"message\":{\"content\":\"a\"},\"done\":true}\n\r\n{\"message\":{\"content\":\"b\"}}\nnot json\n";
        assert_eq!(run(body).0.unwrap().content, "a");
    }

    crate::stream::decoding_fails! {
        Chunks, "http://h/api/chat";
        a_line_that_is_not_json: b"{\"message\":{\"content\":\"a\"}}\nnot json\n" => Error::MalformedLine { .. },
        a_line_of_the_wrong_shape: b"{\"message\":\"text\"}\n" => Error::MalformedLine { .. },
        an_error_chunk: b"{\"error\":\"out of memory\"}\n" => Error::StreamError { .. },
        no_final_chunk: b"{\"message\":{\"content\":\"a\"},\"done\":false}\n" => Error::StreamCut { .. },
        a_body_cut_inside_a_line: b"{\"message\":{\"content\":\"a\"},\"do" => Error::StreamCut { .. },
        an_empty_body: b"" => Error::StreamCut { .. },
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
        let mut config = Config::new(Api::Ollama, "qwen2.5-coder:7b");
        config.temperature = Some(0.5);
        config.seed = Some(7);
        config.max_output_tokens = Some(256);
        config.repeat_penalty = Some(1.05);
        config.frequency_penalty = Some(0.5);
        config.presence_penalty = Some(0.25);
        config.keep_alive = Some("30m".to_owned());
        let call = ToolCall {
            id: "call_0".to_owned(),
            name: "read_file".to_owned(),
            arguments: json!({"path": "a"}),
            origin: CallOrigin::RecoveredFromText,
        };
        let messages = [
            Message::user("go"),
            Message::assistant("", vec![call.clone()]),
            Message::tool_result(&call, "text of a"),
        ];
        let tool = json!({"type": "function", "function": {"name": "read_file"}});
        let body = chat_body(&config, 8192, &messages, std::slice::from_ref(&tool));
        assert_eq!(
            body,
            json!({
                "model": "qwen2.5-coder:7b",
                "messages": [
                    {"role": "user", "content": "go"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"function": {"name": "read_file", "arguments": {"path": "a"}}}
                    ]},
                    {"role": "tool", "content": "text of a", "tool_name": "read_file"},
                ],
                "stream": true,
                "options": {
                    "num_ctx": 8192, "temperature": 0.5, "seed": 7, "num_predict": 256,
                    "repeat_penalty": 1.05, "frequency_penalty": 0.5, "presence_penalty": 0.25,
                },
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
