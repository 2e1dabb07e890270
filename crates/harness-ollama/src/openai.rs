//! The OpenAI-compatible API: the `/v1/chat/completions` request and its server-sent-event
//! stream, and the bodies of `/v1/models` and llama.cpp's `/props`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::Error;
use crate::config::Config;
use crate::message::{CallOrigin, Message, ToolCall};
use crate::request::{self, Dialect};
use crate::response::{FinishReason, Usage};
use crate::stream::{ChatFormat, Ending, Events, parse_record, reported_error};

pub(crate) const CHAT: &str = "/v1/chat/completions";
pub(crate) const MODELS: &str = "/v1/models";
/// llama.cpp's `llama-server` only: the server's settings, its context length among them.
pub(crate) const PROPS: &str = "/props";

/// The fields of a chat request that are not part of the OpenAI API, which a strict server
/// may refuse: sent only until one is refused.
const EXTENSIONS: &[&str] = &["repeat_penalty"];

/// The body of a streamed `/v1/chat/completions` request.
pub(crate) fn chat_body(config: &Config, messages: &[Message], tools: &[Value]) -> Value {
    let mut body = json!({
        "model": config.model,
        "stream": true,
        // Without it, the token counts never arrive.
        "stream_options": {"include_usage": true},
    });
    request::add_conversation::<Request>(&mut body, config, messages, tools);
    body
}

/// How the OpenAI API writes what both APIs send: options at the top of the body, a call's
/// arguments as a JSON string, a result tied to its call by id, the reply's schema in
/// `response_format`.
struct Request;

impl Dialect for Request {
    const MAX_TOKENS: &'static str = "max_tokens";

    fn options(body: &mut Value) -> &mut Value {
        body
    }

    fn call(call: &ToolCall) -> Value {
        json!({
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": arguments_text(&call.arguments)},
        })
    }

    fn result_link(message: &Message) -> Option<(&'static str, &str)> {
        Some(("tool_call_id", message.tool_call_id.as_deref()?))
    }

    fn constrain(body: &mut Value, schema: Value) {
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": schema},
        });
    }
}

/// Removes the fields outside the OpenAI API from a chat request; true if and only if it
/// had any.
pub(crate) fn remove_extensions(body: &mut Value) -> bool {
    let Some(fields) = body.as_object_mut() else {
        return false;
    };
    let before = fields.len();
    fields.retain(|name, _| !EXTENSIONS.contains(&name.as_str()));
    fields.len() < before
}

/// True if and only if an error message names a field outside the OpenAI API, as a strict
/// server's refusal does (`Unrecognized request argument supplied: repeat_penalty`, or a
/// validation error locating it).
pub(crate) fn names_an_extension(message: &str) -> bool {
    EXTENSIONS.iter().any(|name| message.contains(name))
}

/// Arguments go over this API as a JSON string; a string kept from a malformed call goes back
/// as it was.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

/// The OpenAI-compatible reading of a streamed `/v1/chat/completions` answer, event by
/// event.
#[derive(Debug, Default)]
pub(crate) struct Chunks {
    /// Tool calls by their `index`: each delta adds to one of them.
    calls: BTreeMap<u64, PartialCall>,
    /// The bytes of every call's argument fragments so far, for the reply's limit.
    argument_bytes: usize,
    finish_reason: Option<String>,
    usage: Usage,
    /// Whether `data: [DONE]` arrived.
    done: bool,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    /// The argument fragments so far, concatenated.
    arguments: String,
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
    /// llama.cpp's `llama-server` adds its timings to the last chunk.
    timings: Option<Timings>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
    tool_calls: Option<Vec<DeltaCall>>,
}

#[derive(Deserialize)]
struct DeltaCall {
    index: Option<u64>,
    id: Option<String>,
    function: Option<DeltaFunction>,
}

#[derive(Deserialize)]
struct DeltaFunction {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct Timings {
    prompt_n: Option<u64>,
    prompt_ms: Option<f64>,
    predicted_n: Option<u64>,
    predicted_ms: Option<f64>,
}

impl ChatFormat for Chunks {
    type Framing = Events;

    fn take_record(&mut self, url: &str, data: &[u8]) -> Result<Option<String>, Error> {
        if self.done {
            return Ok(None);
        }
        if data.trim_ascii() == b"[DONE]" {
            self.done = true;
            return Ok(None);
        }
        let chunk: Chunk = parse_record(url, data)?;
        reported_error(url, chunk.error)?;
        let mut text = None;
        // One choice is asked for; a server sending more would be answering another request.
        if let Some(choice) = chunk.choices.into_iter().next() {
            if let Some(delta) = choice.delta {
                text = delta.content.filter(|text| !text.is_empty());
                for (position, fragment) in
                    delta.tool_calls.unwrap_or_default().into_iter().enumerate()
                {
                    self.take_call_fragment(position, fragment);
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
        }
        if let Some(usage) = chunk.usage {
            self.usage.prompt_tokens = usage.prompt_tokens;
            self.usage.completion_tokens = usage.completion_tokens;
        }
        if let Some(timings) = chunk.timings {
            self.usage.prompt_duration = timings.prompt_ms.and_then(millis);
            self.usage.generation_duration = timings.predicted_ms.and_then(millis);
            self.usage.prompt_tokens = self.usage.prompt_tokens.or(timings.prompt_n);
            self.usage.completion_tokens = self.usage.completion_tokens.or(timings.predicted_n);
        }
        Ok(text)
    }

    /// Complete means `data: [DONE]` arrived, or at least a `finish_reason` did: a server that
    /// closes the stream after the last choice without `[DONE]` has still said everything.
    fn finish(self) -> Result<Ending, String> {
        if !self.done && self.finish_reason.is_none() {
            return Err("neither a finish_reason nor data: [DONE] arrived".to_owned());
        }
        Ok(Ending {
            finish: FinishReason::from_wire(self.finish_reason.as_deref()),
            usage: self.usage,
            tool_calls: assembled(self.calls),
        })
    }

    fn cut_short(self) -> Vec<ToolCall> {
        assembled(self.calls)
    }

    fn calls_held(&self) -> (usize, usize) {
        (self.calls.len(), self.argument_bytes)
    }
}

impl Chunks {
    /// Adds one delta to its call: the first delta names the call, the following ones carry
    /// fragments of its arguments. A fragment without an `index` belongs to the call at its
    /// position in the delta.
    fn take_call_fragment(&mut self, position: usize, fragment: DeltaCall) {
        let index = fragment.index.unwrap_or(position as u64);
        let call = self.calls.entry(index).or_default();
        if call.id.is_none() {
            call.id = fragment.id.filter(|id| !id.is_empty());
        }
        if let Some(function) = fragment.function {
            // Some servers repeat the name in every delta; the first one counts.
            if call.name.is_empty() {
                call.name = function.name.unwrap_or_default();
            }
            let fragment = function.arguments.unwrap_or_default();
            self.argument_bytes = self.argument_bytes.saturating_add(fragment.len());
            call.arguments.push_str(&fragment);
        }
    }
}

/// The calls assembled from their fragments, in the order of their indexes.
fn assembled(calls: BTreeMap<u64, PartialCall>) -> Vec<ToolCall> {
    calls
        .into_values()
        .enumerate()
        .map(|(position, call)| ToolCall {
            id: call.id.unwrap_or_else(|| format!("call_{position}")),
            name: call.name,
            arguments: parse_arguments(call.arguments),
            origin: CallOrigin::Structured,
        })
        .collect()
}

/// Arguments as a JSON value: `{}` when empty, the raw text when it is not valid JSON.
fn parse_arguments(text: String) -> Value {
    if text.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

fn millis(milliseconds: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(milliseconds / 1000.0).ok()
}

/// One entry of a `/v1/models` body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ServedModel {
    pub(crate) id: String,
    pub(crate) context_length: Option<u32>,
}

/// Reads a `/v1/models` body. Context lengths are not part of the API, but servers add
/// them: `max_model_len` (vLLM), `context_length`, or llama.cpp's `meta.n_ctx` (the
/// server's) or `meta.n_ctx_train` (the model's, from older versions).
pub(crate) fn served_models(body: &[u8]) -> Result<Vec<ServedModel>, String> {
    #[derive(Deserialize)]
    struct List {
        data: Vec<Entry>,
    }
    #[derive(Deserialize)]
    struct Entry {
        id: String,
        max_model_len: Option<u64>,
        context_length: Option<u64>,
        meta: Option<Meta>,
    }
    #[derive(Deserialize)]
    struct Meta {
        n_ctx: Option<u64>,
        n_ctx_train: Option<u64>,
    }
    let list: List = serde_json::from_slice(body).map_err(|error| error.to_string())?;
    Ok(list
        .data
        .into_iter()
        .map(|entry| ServedModel {
            id: entry.id,
            context_length: entry
                .max_model_len
                .or(entry.context_length)
                .or(entry.meta.and_then(|meta| meta.n_ctx.or(meta.n_ctx_train)))
                .map(saturating_u32),
        })
        .collect())
}

/// What llama.cpp's `/props` says: the context length the server was started with, and
/// whether the model's chat template takes tools.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ServerProps {
    pub(crate) context_length: Option<u32>,
    pub(crate) supports_tools: Option<bool>,
}

/// Reads llama.cpp's `/props` body; anything else reads as knowing nothing.
pub(crate) fn server_props(body: &[u8]) -> ServerProps {
    let Ok(props) = serde_json::from_slice::<Value>(body) else {
        return ServerProps::default();
    };
    ServerProps {
        context_length: props
            .pointer("/default_generation_settings/n_ctx")
            .and_then(Value::as_u64)
            .map(saturating_u32),
        supports_tools: props
            .pointer("/chat_template_caps/supports_tools")
            .and_then(Value::as_bool),
    }
}

fn saturating_u32(value: u64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Api;
    use crate::format_cases::openai as run;
    use crate::request::tests::{a_conversation, a_tool, every_option};

    #[test]
    fn timings_alone_give_the_counts() {
        let body = b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"timings\":{\"prompt_n\":5,\"predicted_n\":2}}\n\n";
        let usage = run(body).0.unwrap().usage;
        assert_eq!(
            (usage.prompt_tokens, usage.completion_tokens),
            (Some(5), Some(2))
        );
        assert_eq!(usage.prompt_duration, None);
    }

    #[test]
    fn tool_call_fragments_are_assembled_by_index() {
        let body = br#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"list_dir","arguments":"{\"pa"}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"read_file","arguments":" \"a.rs\"}"}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"index":1,"id":"","function":{"arguments":"th\":\".\"}"}}]}}]}

data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

"#;
        let response = run(body).0.unwrap();
        assert_eq!(response.finish, FinishReason::ToolCalls);
        let calls: Vec<(&str, &str, Value)> = response
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone()))
            .collect();
        assert_eq!(
            calls,
            [
                ("call_a", "read_file", json!({"path": "a.rs"})),
                ("call_b", "list_dir", json!({"path": "."})),
            ]
        );
    }

    #[test]
    fn calls_without_index_or_id_are_placed_by_position_and_numbered() {
        let body = br#"data: {"choices":[{"delta":{"tool_calls":[{"function":{"name":"a","arguments":"{}"}},{"function":{"name":"b"}}]},"finish_reason":"tool_calls"}]}

"#;
        let calls = run(body).0.unwrap().tool_calls;
        assert_eq!(calls[0].id, "call_0");
        assert_eq!(calls[1].id, "call_1");
        assert_eq!(calls[1].arguments, json!({}), "no arguments means none");
    }

    #[test]
    fn malformed_arguments_are_kept_as_the_raw_text() {
        let body = br#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"a","arguments":"{\"path\": "}}]},"finish_reason":"tool_calls"}]}

"#;
        let call = &run(body).0.unwrap().tool_calls[0];
        assert_eq!(call.arguments, json!("{\"path\": "));
    }

    #[test]
    fn a_finish_reason_without_done_is_complete() {
        let body = b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"length\"}]}\n\n";
        assert_eq!(run(body).0.unwrap().finish, FinishReason::Length);
    }

    #[test]
    fn the_request_carries_tools_sampling_and_the_conversation() {
        let config = every_option(Api::OpenAi);
        let tool = a_tool();
        let body = chat_body(&config, &a_conversation(), std::slice::from_ref(&tool));
        assert_eq!(
            body,
            json!({
                "model": "qwen",
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"id": "call_0", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}},
                        {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{oops"}},
                    ]},
                    {"role": "tool", "content": "contents", "tool_call_id": "call_0"},
                ],
                "stream": true,
                "stream_options": {"include_usage": true},
                "tools": [tool],
                "temperature": 0.5,
                "seed": 7,
                "max_tokens": 256,
                "repeat_penalty": 1.05,
                "frequency_penalty": 0.5,
                "presence_penalty": -0.5,
            })
        );
    }

    #[test]
    fn only_the_fields_outside_the_openai_api_are_removed() {
        let mut config = Config::new(Api::OpenAi, "qwen");
        config.frequency_penalty = Some(0.5);
        let mut body = chat_body(&config, &[Message::user("hi")], &[]);
        assert!(remove_extensions(&mut body));
        assert_eq!(body.get("repeat_penalty"), None);
        assert_eq!(body["frequency_penalty"], json!(0.5));
        assert_eq!(body["model"], json!("qwen"));
        assert!(!remove_extensions(&mut body), "nothing left to remove");
        assert!(names_an_extension(
            "Unrecognized request argument supplied: repeat_penalty"
        ));
        assert!(!names_an_extension(
            "Unrecognized request argument supplied: foo"
        ));
    }

    #[test]
    fn served_models_give_ids_and_whatever_context_length_the_server_adds() {
        let body = br#"{"object":"list","data":[
            {"id":"vllm-model","max_model_len":32768},
            {"id":"lm-studio","context_length":4096},
            {"id":"llama","meta":{"n_ctx_train":131072}},
            {"id":"llama-new","meta":{"n_ctx":8192,"n_ctx_train":32768}},
            {"id":"plain"}]}"#;
        let models = served_models(body).unwrap();
        let lengths: Vec<(&str, Option<u32>)> = models
            .iter()
            .map(|m| (m.id.as_str(), m.context_length))
            .collect();
        assert_eq!(
            lengths,
            [
                ("vllm-model", Some(32768)),
                ("lm-studio", Some(4096)),
                ("llama", Some(131_072)),
                ("llama-new", Some(8192)),
                ("plain", None)
            ]
        );
        assert!(served_models(b"{\"models\":[]}").is_err());
    }

    #[test]
    fn props_give_the_server_context_length_and_tool_support() {
        let body = br#"{"default_generation_settings":{"n_ctx":8192},"total_slots":1,
            "chat_template_caps":{"supports_tools":true,"supports_tool_calls":true}}"#;
        assert_eq!(
            server_props(body),
            ServerProps {
                context_length: Some(8192),
                supports_tools: Some(true)
            }
        );
        assert_eq!(server_props(b"{}"), ServerProps::default());
        assert_eq!(server_props(b"<html>"), ServerProps::default());
    }
}
