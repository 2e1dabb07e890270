//! The one error type of the crate.

use std::time::Duration;

use serde_json::Value;

use crate::config::Api;

/// Everything that can go wrong talking to a model server.
///
/// Each message names what failed (the address, the model, the offending line) and says
/// how to fix it, because a person or a model has to act on it. Transport failures,
/// answers with an error status, bodies that break the API's format, and timeouts are
/// separate variants, so a caller can tell "the server is not there" from "the server
/// said no" from "the server said something we cannot read" from "the server is slow".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server address (`OLLAMA_HOST` or a base URL) cannot be understood.
    #[error("invalid server address {value:?}: {reason}")]
    InvalidAddress {
        /// The address as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },

    /// An API name other than `ollama` or `openai`.
    #[error("unknown API {value:?}: use \"ollama\" or \"openai\"")]
    UnknownApi {
        /// The name as given.
        value: String,
    },

    /// Nothing listens at the server's address (retried first, see [`Retry`](crate::Retry)).
    #[error("{}", refused_message(*api, url))]
    ConnectionRefused {
        /// The API the server was expected to speak.
        api: Api,
        /// The server's base URL.
        url: String,
    },

    /// The server could not be reached for another reason: name resolution, TLS, a reset
    /// connection, or no answer within the connect timeout.
    #[error("cannot reach {url}: {detail}")]
    Unreachable {
        /// The URL requested.
        url: String,
        /// What the network layer reported.
        detail: String,
    },

    /// The server does not have the model.
    #[error("{}", model_not_found_message(*api, model, installed))]
    ModelNotFound {
        /// The API the server speaks.
        api: Api,
        /// The model asked for.
        model: String,
        /// The models the server has, when it could list them.
        installed: Vec<String>,
    },

    /// The model cannot call tools.
    #[error(
        "model {model:?} does not support tools: {}",
        tool_models_advice(with_tools)
    )]
    ToolsUnsupported {
        /// The model asked for.
        model: String,
        /// Installed models that report tool support.
        with_tools: Vec<String>,
    },

    /// The server has no such endpoint: usually the wrong API or base URL.
    #[error("{}", endpoint_not_found_message(*api, url, message))]
    EndpointNotFound {
        /// The API the client speaks.
        api: Api,
        /// The URL requested.
        url: String,
        /// The server's message.
        message: String,
    },

    /// The server answered with an error status.
    #[error("{url} answered {status}: {message}")]
    Status {
        /// The URL requested.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// The server's message, taken from its error body.
        message: String,
    },

    /// The server refused a request for constrained replies
    /// ([`ReplyFormat::Constrained`](crate::ReplyFormat::Constrained)): it does not
    /// constrain output to a JSON schema, or not to this one.
    #[error(
        "{url} refused constrained replies ({message}): use free replies with this server, or \
         a server that constrains output to a JSON schema (Ollama 0.5 or later, llama.cpp's \
         llama-server, vLLM)"
    )]
    ConstrainedRepliesRefused {
        /// The URL requested.
        url: String,
        /// The server's message.
        message: String,
    },

    /// The server reported an error in the middle of a stream.
    #[error("{url} reported an error in the middle of its answer: {message}")]
    StreamError {
        /// The URL requested.
        url: String,
        /// The server's message.
        message: String,
    },

    /// A response body does not have the shape the API documents.
    #[error(
        "{url} sent a response this client cannot read ({detail}): is it really an {api} server?"
    )]
    BadResponse {
        /// The API the client speaks.
        api: Api,
        /// The URL requested.
        url: String,
        /// What is wrong with the body.
        detail: String,
    },

    /// A line of a streamed answer is not valid JSON, or not the JSON the API documents.
    #[error("{url} sent a malformed stream line ({detail}): {line}")]
    MalformedLine {
        /// The URL requested.
        url: String,
        /// The line, shortened to its first 200 characters.
        line: String,
        /// What is wrong with it.
        detail: String,
    },

    /// A reply went past one of its [`ReplyLimits`](crate::ReplyLimits): the server is broken
    /// or hostile, and what it sent was dropped rather than held.
    #[error(
        "the reply from {url} went past the limit of {limit}: the server is broken or is not a \
         model server, so the reply was dropped; check the server and its log"
    )]
    ReplyTooLarge {
        /// The URL requested.
        url: String,
        /// The limit it went past.
        limit: Limit,
    },

    /// The stream ended before the server's final chunk.
    #[error(
        "the answer from {url} ended before its final chunk ({detail}): the server may have \
         stopped or crashed; check its log, then retry"
    )]
    StreamCut {
        /// The URL requested.
        url: String,
        /// How it ended.
        detail: String,
    },

    /// No byte arrived for the idle timeout.
    #[error(
        "no data from {url} for {} s: the model may still be loading, or the prompt is long \
         for this machine; raise the idle timeout",
        timeout.as_secs()
    )]
    IdleTimeout {
        /// The URL requested.
        url: String,
        /// The idle timeout that expired.
        timeout: Duration,
    },

    /// The request took longer than the total timeout.
    #[error(
        "the request to {url} took longer than the total timeout of {} s: raise it, or ask for \
         shorter answers",
        timeout.as_secs()
    )]
    TotalTimeout {
        /// The URL requested.
        url: String,
        /// The total timeout that expired.
        timeout: Duration,
    },
}

/// One of the bounds on what a reply may hold, with its value: see
/// [`ReplyLimits`](crate::ReplyLimits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// The bytes of the reply's text.
    Text(usize),
    /// The bytes of its tool calls' arguments, all together.
    Arguments(usize),
    /// The number of its tool calls.
    ToolCalls(usize),
    /// The bytes of one record of the stream.
    Line(usize),
    /// The bytes of the whole body.
    Body(u64),
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Limit::Text(bytes) => write!(f, "{} of text", size(bytes as u64)),
            Limit::Arguments(bytes) => {
                write!(f, "{} of tool-call arguments", size(bytes as u64))
            }
            Limit::ToolCalls(1) => f.write_str("1 tool call"),
            Limit::ToolCalls(count) => write!(f, "{count} tool calls"),
            Limit::Line(bytes) => write!(f, "{} in one line", size(bytes as u64)),
            Limit::Body(bytes) => write!(f, "{} in all", size(bytes)),
        }
    }
}

/// A size in the largest binary unit that divides it, for a limit's message.
fn size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else if bytes == 1 {
        "1 byte".to_owned()
    } else {
        format!("{bytes} bytes")
    }
}

impl Error {
    /// True if and only if the server could not be reached at all, so nothing was asked.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            Error::ConnectionRefused { .. } | Error::Unreachable { .. }
        )
    }
}

fn refused_message(api: Api, url: &str) -> String {
    match api {
        Api::Ollama => {
            format!("no Ollama server at {url}: start it with \"ollama serve\" or set OLLAMA_HOST")
        }
        Api::OpenAi => format!(
            "no OpenAI-compatible server at {url}: start it (llama-server, vLLM, LM Studio, ...) \
             or pass the base URL it listens on"
        ),
    }
}

fn model_not_found_message(api: Api, model: &str, installed: &[String]) -> String {
    let listing = if installed.is_empty() {
        "none are installed".to_owned()
    } else {
        format!("installed: {}", installed.join(", "))
    };
    match api {
        Api::Ollama => {
            format!("model \"{model}\" is not installed: run \"ollama pull {model}\" ({listing})")
        }
        Api::OpenAi => format!(
            "the server does not serve model \"{model}\": pick one it serves ({})",
            if installed.is_empty() {
                "it lists none".to_owned()
            } else {
                installed.join(", ")
            }
        ),
    }
}

fn tool_models_advice(with_tools: &[String]) -> String {
    if with_tools.is_empty() {
        "no installed model reports tool support; pull one that does, e.g. \
         \"ollama pull qwen2.5-coder:7b\""
            .to_owned()
    } else {
        format!("use one that does: {}", with_tools.join(", "))
    }
}

fn endpoint_not_found_message(api: Api, url: &str, message: &str) -> String {
    match api {
        Api::Ollama => format!(
            "{url} does not exist ({message}): is this an Ollama server? For llama.cpp's \
             llama-server, vLLM or LM Studio use the OpenAI-compatible API"
        ),
        Api::OpenAi => format!(
            "{url} does not exist ({message}): check the base URL (the server's root, or its \
             /v1) and that it is an OpenAI-compatible server"
        ),
    }
}

/// The message in an error body: `{"error": "..."}` (Ollama), `{"error": {"message": ...}}`
/// (OpenAI-compatible), `{"message"|"detail": ...}`, or else the text itself, shortened.
pub(crate) fn server_message(body: &[u8]) -> String {
    if let Ok(value) = serde_json::from_slice::<Value>(body)
        && let Some(field) = ["error", "message", "detail"]
            .iter()
            .find_map(|key| value.get(key))
    {
        return error_text(field);
    }
    let text = excerpt(String::from_utf8_lossy(body).trim().as_bytes());
    if text.is_empty() {
        "the body is empty".to_owned()
    } else {
        text
    }
}

/// The text of an `error` field: a string, or an object with a `message`.
pub(crate) fn error_text(error: &Value) -> String {
    match error {
        Value::String(message) => message.clone(),
        Value::Object(fields) => match fields.get("message") {
            Some(Value::String(message)) => message.clone(),
            _ => error.to_string(),
        },
        other => other.to_string(),
    }
}

/// The first 200 characters of a line, for an error message.
pub(crate) fn excerpt(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    match text.char_indices().nth(200) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_messages_are_found_in_every_usual_shape() {
        assert_eq!(
            server_message(br#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(
            server_message(br#"{"error":{"message":"bad","code":400}}"#),
            "bad"
        );
        assert_eq!(server_message(br#"{"message":"nope"}"#), "nope");
        assert_eq!(server_message(br#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(server_message(br#"{"other":1}"#), r#"{"other":1}"#);
        assert_eq!(
            server_message(b"  404 page not found\n"),
            "404 page not found"
        );
        assert_eq!(server_message(b""), "the body is empty");
    }

    #[test]
    fn error_fields_read_as_text() {
        assert_eq!(error_text(&json!("boom")), "boom");
        assert_eq!(error_text(&json!({"message": "boom", "code": 1})), "boom");
        assert_eq!(error_text(&json!({"code": 1})), r#"{"code":1}"#);
        assert_eq!(error_text(&json!(7)), "7");
    }

    #[test]
    fn limits_name_their_size_in_the_largest_unit_that_divides_it() {
        assert_eq!(Limit::Text(8 * 1024 * 1024).to_string(), "8 MiB of text");
        assert_eq!(
            Limit::Arguments(1536).to_string(),
            "1536 bytes of tool-call arguments"
        );
        assert_eq!(Limit::Line(2048).to_string(), "2 KiB in one line");
        assert_eq!(Limit::Body(1).to_string(), "1 byte in all");
        assert_eq!(Limit::Body(0).to_string(), "0 bytes in all");
        assert_eq!(Limit::Text(1536 * 1024).to_string(), "1536 KiB of text");
        assert_eq!(
            Limit::Line(1024 * 1024 + 1).to_string(),
            "1048577 bytes in one line"
        );
        assert_eq!(Limit::ToolCalls(1).to_string(), "1 tool call");
        assert_eq!(Limit::ToolCalls(128).to_string(), "128 tool calls");
    }

    #[test]
    fn excerpts_keep_200_characters_on_a_character_boundary() {
        assert_eq!(
            excerpt("é".repeat(201).as_bytes()),
            format!("{}...", "é".repeat(200))
        );
        assert_eq!(excerpt("é".repeat(200).as_bytes()), "é".repeat(200));
    }
}
