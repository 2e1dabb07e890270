//! A client of local model servers: Ollama's native API, and the OpenAI-compatible chat
//! completions that llama.cpp's `llama-server`, vLLM, LM Studio and Ollama's `/v1` serve.
//!
//! One [`Client`] speaks either [`Api`]. It sends a conversation and the tools offered,
//! streams the answer's text to a callback as it arrives, and returns the whole answer:
//! text, tool calls, why the model stopped, token counts and timings. Every failure is an
//! [`Error`] whose message says what to do about it.
//!
//! ```no_run
//! use harness_ollama::{Api, Client, Config, Message, DEFAULT_MODEL};
//! use serde_json::json;
//!
//! let client = Client::new(Config::new(Api::Ollama, DEFAULT_MODEL))?;
//! let tools = [json!({
//!     "type": "function",
//!     "function": {
//!         "name": "read_file",
//!         "description": "Read a file of the repository",
//!         "parameters": {
//!             "type": "object",
//!             "properties": {"path": {"type": "string"}},
//!             "required": ["path"],
//!         },
//!     },
//! })];
//! let mut conversation = vec![Message::user("What does src/main.rs do?")];
//!
//! let answer = client.chat(&conversation, &tools, |text| print!("{text}"))?;
//! conversation.push(answer.to_message());
//! for call in &answer.tool_calls {
//!     let result = format!("(contents of {})", call.arguments["path"]);
//!     conversation.push(Message::tool_result(call, result));
//! }
//! # Ok::<(), harness_ollama::Error>(())
//! ```
//!
//! # Choosing the server
//!
//! [`Config::new`] takes the API and the model, and the address from `OLLAMA_HOST` for
//! Ollama (written as Ollama accepts it: `0.0.0.0`, `host:port`, `https://host/prefix`),
//! else `http://127.0.0.1:11434`, or `http://127.0.0.1:8080` for an OpenAI-compatible
//! server (llama.cpp's default). Set [`Config::host`] to choose another. A server on this
//! machine is reached directly, even when a proxy is set in the environment.
//!
//! The default model, [`DEFAULT_MODEL`] (`qwen2.5-coder:7b`), calls tools reliably and runs
//! on a laptop; smaller models work, with more tool calls written as text (below).
//!
//! # The context length
//!
//! Ollama's default context is small, and it silently drops the start of a prompt that does
//! not fit. So every Ollama request carries `num_ctx`: [`Config::context_length`], or else
//! the model's own length from `/api/show`, never more than [`Config::max_context_length`].
//! [`Client::context_length`] returns that number, so the caller can budget its prompts.
//!
//! # Streaming
//!
//! Answers are always streamed: newline-delimited JSON from Ollama, server-sent events from
//! OpenAI-compatible servers, both decoded incrementally. Tool calls are collected as they
//! come; OpenAI-style fragments of their arguments are assembled by index. An answer is
//! complete only when its final chunk arrives (`"done": true`; a `finish_reason` or
//! `data: [DONE]`), or when the client cuts it for repeating itself (below): a body that
//! ends sooner is [`Error::StreamCut`], a line that is not JSON
//! [`Error::MalformedLine`], an error reported mid-stream [`Error::StreamError`]. A reasoning
//! model's separate thinking text (`thinking`, `reasoning_content`) is not passed on.
//!
//! What one reply may hold is bounded by [`Config::reply_limits`] ([`ReplyLimits`]): its
//! text, its tool calls and their arguments, one line of the stream, the whole body. A
//! broken or hostile server that sends past a limit gets [`Error::ReplyTooLarge`] naming
//! it ([`Limit`]), and the connection is closed; the client never holds more than the
//! limits, nor passes on more text than the text limit.
//!
//! # Tool calls written as text
//!
//! Small models often write a call as JSON in their answer (`{"name": "read_file",
//! "arguments": {...}}`, bare, fenced in ```` ```json ````, or in a `<tool_call>` tag) instead
//! of calling the tool. When an answer has no structured call, each JSON object in its text
//! whose `name` is an offered tool and whose `arguments` is an object becomes a
//! [`ToolCall`] marked [`CallOrigin::RecoveredFromText`]; the text stays as it was. Anything
//! else stays text. [`TextToolCalls::LeaveAsText`] turns this off.
//!
//! # Constrained replies
//!
//! Where the server can constrain decoding to a JSON schema (Ollama 0.5 and later with
//! `format`, llama.cpp's `llama-server`, vLLM and LM Studio with `response_format`),
//! [`ReplyFormat::Constrained`] makes every reply one call of an offered tool, its arguments
//! valid for that tool's parameters, or a final answer, by construction: the schema is built
//! from the tools passed to [`Client::chat`], which are then described in the system message
//! instead of sent as `tools`. The reply comes back as the same [`ChatResponse`]: a call as
//! its one tool call (marked [`CallOrigin::Constrained`]), an answer as the text. A server
//! that refuses the constraint is [`Error::ConstrainedRepliesRefused`];
//! [`Client::probe_constrained_replies`] finds out beforehand, with one tiny request:
//!
//! ```no_run
//! use harness_ollama::{Api, Client, Config, FinishReason, Message, ReplyFormat};
//!
//! let mut config = Config::new(Api::OpenAi, "qwen2.5-coder-1.5b");
//! let support = Client::new(config.clone())?.probe_constrained_replies()?;
//! if support.is_supported() {
//!     config.reply_format = ReplyFormat::Constrained;
//! }
//! let client = Client::new(config)?;
//! let mut conversation = vec![Message::user("Make the failing test pass.")];
//! let answer = client.chat(&conversation, &[], |_| {})?;
//! conversation.push(answer.to_message());
//! if let FinishReason::Repetition(repetition) = &answer.finish {
//!     // "your answer repeated the same 3 lines 5 times in a row and was cut off: ..."
//!     conversation.push(Message::user(format!("{repetition}. Do not repeat yourself.")));
//! }
//! # Ok::<(), harness_ollama::Error>(())
//! ```
//!
//! # Answers that repeat themselves
//!
//! A small model sometimes falls into a loop, writing the same lines again and again until
//! the output limit, minutes on a laptop. The text is watched as it streams: once its end is
//! one unit (words, lines, a paragraph) written over and over, exactly, at least three times
//! and over 600 bytes, the request is cut (closing the connection stops the server) and the
//! answer returned with [`FinishReason::Repetition`], its text kept up to the end of the
//! first copy and the [`Repetition`] saying what repeated, so the caller can tell the model
//! and go on. Similar lines that differ in a name or a number (tests, tables, imports) never
//! count. [`RepeatedOutput::Allow`] turns this off.
//!
//! Loops are also made less likely: every request carries a repeat penalty
//! ([`Config::repeat_penalty`], by default [`DEFAULT_REPEAT_PENALTY`]), and the OpenAI
//! penalties when set ([`Config::frequency_penalty`], [`Config::presence_penalty`]). The
//! repeat penalty is not part of the OpenAI API: an OpenAI-compatible server that refuses
//! it by name is asked again at once without it, and not sent it again.
//!
//! # Faults, timeouts and retries
//!
//! A refused connection and `503 Service Unavailable` are retried with a growing wait (see
//! [`Retry`]), since both mean the server is starting. A request whose reused connection the
//! server had closed (llama.cpp's server does so after a streamed answer) is sent again at
//! once on a fresh one. Nothing else is retried, and nothing at all once an answer has begun. The connect timeout is short (5 s); the idle timeout,
//! the longest silence, is long (10 min), since a model's cold load and a long prompt come
//! before the first byte; the total timeout bounds a whole request (30 min).
//!
//! A missing model is [`Error::ModelNotFound`], listing the installed ones; a model without
//! tool support is [`Error::ToolsUnsupported`], naming installed ones that have it (with
//! constrained replies no tools are sent, so such a model can still call them); a wrong
//! endpoint (often the wrong [`Api`]) is [`Error::EndpointNotFound`]; any other error status
//! is [`Error::Status`] with the server's own message.
//!
//! This crate does not know what the tools do, does not run them, and keeps no conversation:
//! the caller owns the loop.

mod address;
mod client;
mod config;
mod constrained;
mod error;
#[cfg(test)]
mod format_cases;
mod message;
mod ollama;
mod openai;
mod recover;
mod repetition;
mod request;
mod response;
mod stream;
mod transport;

pub use client::Client;
pub use config::{
    Api, Config, DEFAULT_MODEL, DEFAULT_OLLAMA_URL, DEFAULT_OPENAI_URL, DEFAULT_REPEAT_PENALTY,
    FALLBACK_CONTEXT_LENGTH, RepeatedOutput, ReplyFormat, ReplyLimits, Retry, TextToolCalls,
};
pub use error::{Error, Limit};
pub use message::{CallOrigin, Message, Role, ToolCall};
pub use repetition::Repetition;
pub use response::{ChatResponse, ConstraintSupport, FinishReason, ModelInfo, Usage};
