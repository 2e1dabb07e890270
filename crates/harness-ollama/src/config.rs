//! What a [`Client`](crate::Client) is told: server, model, sampling, timeouts, retries.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::Error;

/// The model used when none is configured: a 7B coding model that calls tools reliably
/// and runs on a laptop (about 4.7 GB; `ollama pull qwen2.5-coder:7b`).
pub const DEFAULT_MODEL: &str = "qwen2.5-coder:7b";

/// Where Ollama listens unless `OLLAMA_HOST` says otherwise.
pub const DEFAULT_OLLAMA_URL: &str = "http://127.0.0.1:11434";

/// Where an OpenAI-compatible server is looked for unless told otherwise: the default
/// address of llama.cpp's `llama-server`.
pub const DEFAULT_OPENAI_URL: &str = "http://127.0.0.1:8080";

/// The context length used when neither the configuration nor the server gives one.
pub const FALLBACK_CONTEXT_LENGTH: u32 = 8192;

/// The repeat penalty sent unless configured otherwise: Ollama's own default, and the usual
/// setting for coding models; llama.cpp's server defaults to none (1.0), under which small
/// models fall into loops more often.
pub const DEFAULT_REPEAT_PENALTY: f64 = 1.1;

/// Which API the server speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Api {
    /// Ollama's native API: `/api/chat` streaming newline-delimited JSON.
    #[default]
    Ollama,
    /// The OpenAI-compatible API: `/v1/chat/completions` streaming server-sent events,
    /// served by llama.cpp's `llama-server`, vLLM, LM Studio and Ollama's own `/v1`.
    OpenAi,
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Api::Ollama => "Ollama",
            Api::OpenAi => "OpenAI-compatible",
        })
    }
}

impl FromStr for Api {
    type Err = Error;

    /// Parses `ollama` or `openai` (any case), the spellings of a `--api` flag.
    fn from_str(value: &str) -> Result<Api, Error> {
        match value.to_ascii_lowercase().as_str() {
            "ollama" => Ok(Api::Ollama),
            "openai" => Ok(Api::OpenAi),
            _ => Err(Error::UnknownApi {
                value: value.to_owned(),
            }),
        }
    }
}

/// What to do with a tool call the model wrote as text instead of as a structured call.
///
/// Small local models often write `{"name": "read_file", "arguments": {...}}` into their
/// answer, frequently inside a ```` ```json ```` fence, instead of calling the tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TextToolCalls {
    /// When an answer has no structured tool call, return each JSON object in its text whose
    /// `name` is an offered tool and whose `arguments` is an object as a tool call marked
    /// [`CallOrigin::RecoveredFromText`](crate::CallOrigin::RecoveredFromText).
    #[default]
    Recover,
    /// Leave such text as text.
    LeaveAsText,
}

/// What form the model's replies take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReplyFormat {
    /// Whatever the model writes: text, and tool calls in the server's own way.
    #[default]
    Free,
    /// Each reply is constrained, by the server, to a JSON schema built from the tools
    /// offered: one call of one of them (`{"name": ..., "arguments": {...}}`, its
    /// arguments valid for that tool's parameters) or a final answer
    /// (`{"answer": "..."}`). The server samples only tokens that keep the reply valid, so
    /// a malformed call cannot happen. The tools are described in the system message
    /// instead of sent as `tools`; replies come back as the same
    /// [`ChatResponse`](crate::ChatResponse) as free ones. See
    /// [`Client::probe_constrained_replies`](crate::Client::probe_constrained_replies) for
    /// whether a server can.
    Constrained,
}

/// What to do when an answer keeps repeating the same text, as small models sometimes do
/// until the output limit (minutes on a laptop).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RepeatedOutput {
    /// Cut the request as soon as the end of the text is the same unit (a few words, lines or
    /// a paragraph) written over and over, exactly, for long enough that legitimate code does
    /// not (see [`FinishReason::Repetition`](crate::FinishReason::Repetition)).
    #[default]
    Cut,
    /// Let the model go on until it stops or reaches the output limit.
    Allow,
}

/// How often and how patiently to retry a request that the server did not take.
///
/// Only two failures are retried, both before any answer was received: a refused
/// connection (the server is starting) and `503 Service Unavailable` (the server is
/// loading). Nothing is retried once a stream has begun. (Apart from this policy, a request
/// whose kept-alive connection turns out closed, with no answer, is sent again at once on a
/// fresh connection, twice at most.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retry {
    /// Retries after the first attempt; `0` disables retrying.
    pub max_retries: u32,
    /// The wait before the first retry; it doubles for each later one.
    pub first_backoff: Duration,
    /// The longest wait between two attempts.
    pub max_backoff: Duration,
}

impl Retry {
    /// No retries at all.
    pub const NONE: Retry = Retry {
        max_retries: 0,
        first_backoff: Duration::ZERO,
        max_backoff: Duration::ZERO,
    };

    /// Up to `max_retries` retries, waiting `first_backoff`, then twice as long each time,
    /// but never longer than `max_backoff`.
    pub const fn new(max_retries: u32, first_backoff: Duration, max_backoff: Duration) -> Retry {
        Retry {
            max_retries,
            first_backoff,
            max_backoff,
        }
    }

    /// The wait before retry number `retry` (counting from 0).
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry).unwrap_or(u32::MAX);
        self.first_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }
}

impl Default for Retry {
    /// Five retries, waiting 0.25 s, 0.5 s, 1 s, 2 s and 4 s: about 8 s in all, long
    /// enough for `ollama serve` to start.
    fn default() -> Retry {
        Retry::new(5, Duration::from_millis(250), Duration::from_secs(4))
    }
}

/// How much one reply may hold, so a broken or hostile server cannot exhaust memory.
///
/// Each limit is far above what a real model writes and far below trouble. A reply is at most
/// the model's context length in tokens; 128 Ki tokens (the longest context of today's local
/// coding models) at about 4 bytes a token is 512 KiB, and the limits on text and arguments
/// leave a margin of 16 over that (8 MiB), for long tokens (runs of spaces, escaped JSON) and
/// a whole-file rewrite of a large file. Past any limit the reply is dropped with
/// [`Error::ReplyTooLarge`](crate::Error::ReplyTooLarge) naming it, and the connection closed,
/// which stops the server generating. The thinking text of a reasoning model
/// (`thinking`, `reasoning_content`) is never kept, so only the line and body limits apply to
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplyLimits {
    /// The most bytes of text one reply may have: [`ReplyLimits::DEFAULT_TEXT_BYTES`].
    pub text_bytes: usize,
    /// The most bytes of tool-call arguments one reply may have, all its calls together, as
    /// JSON text: [`ReplyLimits::DEFAULT_ARGUMENTS_BYTES`].
    pub arguments_bytes: usize,
    /// The most tool calls one reply may make: [`ReplyLimits::DEFAULT_TOOL_CALLS`].
    pub tool_calls: usize,
    /// The longest record of a stream (a line of newline-delimited JSON, the data of a
    /// server-sent event): [`ReplyLimits::DEFAULT_LINE_BYTES`].
    pub line_bytes: usize,
    /// The most bytes of one streamed body, framing, thinking text and keep-alives included:
    /// [`ReplyLimits::DEFAULT_BODY_BYTES`].
    pub body_bytes: u64,
}

impl ReplyLimits {
    /// 8 MiB of text: 16 times the 512 KiB of a 128 Ki-token reply.
    pub const DEFAULT_TEXT_BYTES: usize = 8 * 1024 * 1024;
    /// 8 MiB of arguments: a whole-file rewrite of a file of several megabytes fits, escaped.
    pub const DEFAULT_ARGUMENTS_BYTES: usize = 8 * 1024 * 1024;
    /// 128 calls: models make a handful at a time; dozens in one reply is already unusual.
    pub const DEFAULT_TOOL_CALLS: usize = 128;
    /// 16 MiB: a record carries at most one whole call (Ollama sends each call in one line),
    /// so it must hold the arguments limit and the JSON around it.
    pub const DEFAULT_LINE_BYTES: usize = 16 * 1024 * 1024;
    /// 256 MiB: a stream wraps every token in a chunk of a few hundred bytes (the id, the
    /// model's name, timings), so a 128 Ki-token reply streams some 40 MB; the rest is margin.
    /// Nothing of it is held beyond the other limits: this bounds the time and bandwidth a
    /// server may take while sending nothing that counts.
    pub const DEFAULT_BODY_BYTES: u64 = 256 * 1024 * 1024;
}

impl Default for ReplyLimits {
    fn default() -> ReplyLimits {
        ReplyLimits {
            text_bytes: ReplyLimits::DEFAULT_TEXT_BYTES,
            arguments_bytes: ReplyLimits::DEFAULT_ARGUMENTS_BYTES,
            tool_calls: ReplyLimits::DEFAULT_TOOL_CALLS,
            line_bytes: ReplyLimits::DEFAULT_LINE_BYTES,
            body_bytes: ReplyLimits::DEFAULT_BODY_BYTES,
        }
    }
}

/// Everything a [`Client`](crate::Client) needs to know. Start from [`Config::new`] and
/// change the fields you care about.
///
/// ```
/// use std::time::Duration;
/// use harness_ollama::{Api, Config};
///
/// let mut config = Config::new(Api::OpenAi, "qwen2.5-coder-1.5b");
/// config.host = "http://127.0.0.1:8080".to_owned();
/// config.temperature = Some(0.0);
/// config.idle_timeout = Duration::from_secs(120);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// The API the server speaks.
    pub api: Api,
    /// The server's address, written the way `OLLAMA_HOST` is: with or without a scheme
    /// (`http` when absent), with or without a port (`11434` for Ollama, `8080` for an
    /// OpenAI-compatible server, when both scheme and port are absent; else the scheme's),
    /// optionally with a path prefix. For the OpenAI-compatible API a trailing `/v1` is
    /// accepted and means the same as none.
    pub host: String,
    /// The model's name, e.g. [`DEFAULT_MODEL`].
    pub model: String,
    /// Sent as `Authorization: Bearer <key>` when set, for servers that want one.
    pub api_key: Option<String>,
    /// The context length (tokens) to ask for. When `None`, the model's own is asked of the
    /// server (Ollama's `/api/show`; llama.cpp's `/props` or `/v1/models`), falling back to
    /// [`FALLBACK_CONTEXT_LENGTH`]. Either way it is capped by `max_context_length`.
    /// Ollama receives it as `options.num_ctx` on every request: its own default is small
    /// and silently drops the start of a longer prompt.
    pub context_length: Option<u32>,
    /// The largest context length to use, whatever the model supports: memory grows with it.
    pub max_context_length: u32,
    /// Sampling temperature (`options.temperature`, or `temperature`).
    pub temperature: Option<f64>,
    /// Sampling seed, for repeatable answers (`options.seed`, or `seed`).
    pub seed: Option<u64>,
    /// The most tokens one answer may have (`options.num_predict`, or `max_tokens`).
    pub max_output_tokens: Option<u32>,
    /// How strongly tokens seen in the last 64 are discouraged, above 1.0, against loops:
    /// [`DEFAULT_REPEAT_PENALTY`] unless set (`options.repeat_penalty`, or `repeat_penalty`,
    /// which llama.cpp's server, LM Studio and vLLM take). It is not part of the OpenAI API
    /// itself: a server that refuses it by name is asked again without it, and from then
    /// on not sent it.
    pub repeat_penalty: Option<f64>,
    /// OpenAI's penalty on tokens by how often they appeared, -2.0 to 2.0
    /// (`options.frequency_penalty`, or `frequency_penalty`). Not sent unless set: code
    /// repeats its names, and a model pushed away from them misspells them.
    pub frequency_penalty: Option<f64>,
    /// OpenAI's penalty on tokens that appeared at all, -2.0 to 2.0
    /// (`options.presence_penalty`, or `presence_penalty`). Not sent unless set.
    pub presence_penalty: Option<f64>,
    /// How long Ollama keeps the model loaded after a request, e.g. `"30m"` (`keep_alive`).
    /// Ignored by the OpenAI-compatible API.
    pub keep_alive: Option<String>,
    /// Whether tool calls written as text are recovered.
    pub text_tool_calls: TextToolCalls,
    /// Whether replies are free or constrained to one tool call or a final answer.
    pub reply_format: ReplyFormat,
    /// Whether an answer that repeats itself is cut short.
    pub repeated_output: RepeatedOutput,
    /// The longest wait for a connection to be accepted.
    pub connect_timeout: Duration,
    /// The longest wait for the next byte of an answer. Generous by default: before its first
    /// byte, a server may load the model (minutes, cold) and read the whole prompt.
    pub idle_timeout: Duration,
    /// The longest one request may take, from connecting to its last byte.
    pub total_timeout: Duration,
    /// Retries of requests the server did not take.
    pub retry: Retry,
    /// How much one reply may hold.
    pub reply_limits: ReplyLimits,
}

impl Config {
    /// Settings for `model` served over `api`, with defaults for everything else.
    ///
    /// The host is `OLLAMA_HOST` for the Ollama API (else [`DEFAULT_OLLAMA_URL`]) and
    /// [`DEFAULT_OPENAI_URL`] for the OpenAI-compatible API.
    pub fn new(api: Api, model: impl Into<String>) -> Config {
        let host = match api {
            Api::Ollama => std::env::var("OLLAMA_HOST").unwrap_or_default(),
            Api::OpenAi => String::new(),
        };
        Config {
            api,
            host,
            model: model.into(),
            api_key: None,
            context_length: None,
            max_context_length: 16_384,
            temperature: None,
            seed: None,
            max_output_tokens: None,
            repeat_penalty: Some(DEFAULT_REPEAT_PENALTY),
            frequency_penalty: None,
            presence_penalty: None,
            keep_alive: None,
            text_tool_calls: TextToolCalls::Recover,
            reply_format: ReplyFormat::Free,
            repeated_output: RepeatedOutput::Cut,
            connect_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(600),
            total_timeout: Duration::from_secs(1800),
            retry: Retry::default(),
            reply_limits: ReplyLimits::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_names_parse_in_any_case_and_others_are_refused() {
        assert_eq!("ollama".parse::<Api>().unwrap(), Api::Ollama);
        assert_eq!("OpenAI".parse::<Api>().unwrap(), Api::OpenAi);
        let error = "vllm".parse::<Api>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown API \"vllm\": use \"ollama\" or \"openai\""
        );
    }

    #[test]
    fn the_reply_limits_are_the_documented_ones() {
        // `harness sandbox explain` and the security docs state these values.
        let limits = ReplyLimits::default();
        let described = [
            crate::Limit::Text(limits.text_bytes).to_string(),
            crate::Limit::Arguments(limits.arguments_bytes).to_string(),
            crate::Limit::ToolCalls(limits.tool_calls).to_string(),
            crate::Limit::Line(limits.line_bytes).to_string(),
            crate::Limit::Body(limits.body_bytes).to_string(),
        ];
        assert_eq!(
            described,
            [
                "8 MiB of text",
                "8 MiB of tool-call arguments",
                "128 tool calls",
                "16 MiB in one line",
                "256 MiB in all",
            ]
        );
        assert_eq!(Config::new(Api::OpenAi, "m").reply_limits, limits);
    }

    #[test]
    fn backoff_doubles_from_the_first_wait_up_to_the_cap() {
        let retry = Retry::new(9, Duration::from_millis(250), Duration::from_secs(4));
        let waits: Vec<u128> = (0..7).map(|n| retry.backoff(n).as_millis()).collect();
        assert_eq!(waits, [250, 500, 1000, 2000, 4000, 4000, 4000]);
        assert_eq!(retry.backoff(40), Duration::from_secs(4), "no overflow");
    }

    #[test]
    fn the_openai_default_host_ignores_ollama_host() {
        // OLLAMA_HOST may be set on a developer's machine; it must not leak into OpenAI mode.
        assert_eq!(Config::new(Api::OpenAi, "m").host, "");
        let config = Config::new(Api::Ollama, DEFAULT_MODEL);
        assert_eq!(config.model, "qwen2.5-coder:7b");
        assert_eq!(config.text_tool_calls, TextToolCalls::Recover);
    }
}
