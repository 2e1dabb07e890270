//! What the server answers: the reply to a chat, and facts about a model.

use std::time::Duration;

use crate::message::{CallOrigin, Message, ToolCall};
use crate::repetition::Repetition;

/// The model's complete answer to one [`Client::chat`](crate::Client::chat).
#[derive(Clone, Debug, PartialEq)]
pub struct ChatResponse {
    /// The whole text, as streamed to the callback.
    pub content: String,
    /// The tools the model called, in order: structured calls, or else calls recovered from
    /// the text (see [`TextToolCalls`](crate::TextToolCalls)).
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    pub finish: FinishReason,
    /// Token counts and timings, as far as the server reports them.
    pub usage: Usage,
}

impl ChatResponse {
    /// The assistant message to append to the conversation before the tool results.
    ///
    /// When the calls were written as text (recovered from it, or a constrained reply), the
    /// message carries the calls and not the text they were written in, so the model does
    /// not see each call twice, and sees it in the form its chat template gives tool calls.
    pub fn to_message(&self) -> Message {
        let recovered = self
            .tool_calls
            .iter()
            .any(|call| call.origin != CallOrigin::Structured);
        let content = if recovered {
            String::new()
        } else {
            self.content.clone()
        };
        Message::assistant(content, self.tool_calls.clone())
    }
}

/// Why the model stopped, as the server reports it (`done_reason` or `finish_reason`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FinishReason {
    /// It finished its answer (`stop`).
    Stop,
    /// It hit the output limit or the context length (`length`): the answer is cut short.
    Length,
    /// It stopped to call tools (`tool_calls`).
    ToolCalls,
    /// The client cut the answer because it kept repeating the same text (see
    /// [`RepeatedOutput`](crate::RepeatedOutput)): [`ChatResponse::content`] ends after the
    /// first copy, the callback saw the copies that came before the cut, and no token counts
    /// arrived. Tell the model what it repeated (the [`Repetition`]'s `Display` says it) and
    /// ask again.
    Repetition(Repetition),
    /// Another reason, as the server spelled it.
    Other(String),
    /// The server gave no reason.
    Unknown,
}

impl FinishReason {
    pub(crate) fn from_wire(reason: Option<&str>) -> FinishReason {
        match reason {
            None | Some("") => FinishReason::Unknown,
            Some("stop") => FinishReason::Stop,
            Some("length") => FinishReason::Length,
            Some("tool_calls") => FinishReason::ToolCalls,
            Some(other) => FinishReason::Other(other.to_owned()),
        }
    }
}

/// Token counts and timings of one answer. Ollama reports all of them; OpenAI-compatible
/// servers report the counts (`usage`), and llama.cpp's `llama-server` the durations too
/// (`timings`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens of the prompt the server read (`prompt_eval_count`, `prompt_tokens`). A server
    /// that caches the start of the prompt may count only the part it read anew.
    pub prompt_tokens: Option<u64>,
    /// Tokens the model generated (`eval_count`, `completion_tokens`).
    pub completion_tokens: Option<u64>,
    /// Time spent reading the prompt.
    pub prompt_duration: Option<Duration>,
    /// Time spent generating.
    pub generation_duration: Option<Duration>,
    /// Time spent loading the model (Ollama only).
    pub load_duration: Option<Duration>,
    /// Time for the whole request, as the server measured it (Ollama only).
    pub total_duration: Option<Duration>,
}

impl Usage {
    /// Prompt tokens read per second, when both the count and the time are known.
    pub fn prompt_tokens_per_second(&self) -> Option<f64> {
        rate(self.prompt_tokens, self.prompt_duration)
    }

    /// Tokens generated per second, when both the count and the time are known.
    pub fn generation_tokens_per_second(&self) -> Option<f64> {
        rate(self.completion_tokens, self.generation_duration)
    }
}

fn rate(tokens: Option<u64>, duration: Option<Duration>) -> Option<f64> {
    let tokens = tokens? as f64;
    let seconds = duration?.as_secs_f64();
    // A zero duration means the server did not measure, not an infinite rate.
    (seconds > 0.0).then_some(tokens / seconds)
}

/// Whether a server constrains replies to a JSON schema, as
/// [`Client::probe_constrained_replies`](crate::Client::probe_constrained_replies) found out.
///
/// Its `Display` says it in a few words, for a banner.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConstraintSupport {
    /// The server took a constrained request and the reply was JSON.
    Supported,
    /// The server refused the request with the constraint.
    Refused {
        /// The server's message.
        message: String,
    },
    /// The server took the request but the reply was not JSON: it ignores the constraint.
    Ignored {
        /// The beginning of the reply.
        reply: String,
    },
}

impl ConstraintSupport {
    /// True if and only if the server constrains replies.
    pub fn is_supported(&self) -> bool {
        *self == ConstraintSupport::Supported
    }
}

impl std::fmt::Display for ConstraintSupport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConstraintSupport::Supported => f.write_str("constrained replies: supported"),
            ConstraintSupport::Refused { message } => {
                write!(f, "constrained replies: refused by the server ({message})")
            }
            ConstraintSupport::Ignored { reply } => write!(
                f,
                "constrained replies: ignored by the server (it replied {:?})",
                reply.chars().take(40).collect::<String>()
            ),
        }
    }
}

/// What the server says about a model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModelInfo {
    /// The model's name.
    pub name: String,
    /// The longest context the model, or the server running it, supports, in tokens: the
    /// model's trained length from Ollama, the server's configured length from llama.cpp.
    pub context_length: Option<u32>,
    /// What the model can do, as Ollama lists it (`completion`, `tools`, `vision`, ...);
    /// empty when the server does not say.
    pub capabilities: Vec<String>,
}

impl ModelInfo {
    /// Whether the model can call tools: `None` when the server does not say.
    pub fn supports_tools(&self) -> Option<bool> {
        if self.capabilities.is_empty() {
            None
        } else {
            Some(self.capabilities.iter().any(|c| c == "tools"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_reasons_map_from_both_apis() {
        assert_eq!(FinishReason::from_wire(Some("stop")), FinishReason::Stop);
        assert_eq!(
            FinishReason::from_wire(Some("length")),
            FinishReason::Length
        );
        assert_eq!(
            FinishReason::from_wire(Some("tool_calls")),
            FinishReason::ToolCalls
        );
        assert_eq!(
            FinishReason::from_wire(Some("load")),
            FinishReason::Other("load".to_owned())
        );
        assert_eq!(FinishReason::from_wire(Some("")), FinishReason::Unknown);
        assert_eq!(FinishReason::from_wire(None), FinishReason::Unknown);
    }

    #[test]
    fn rates_need_a_count_and_a_positive_duration() {
        let usage = Usage {
            prompt_tokens: Some(100),
            prompt_duration: Some(Duration::from_secs(2)),
            completion_tokens: Some(30),
            generation_duration: Some(Duration::ZERO),
            ..Usage::default()
        };
        assert_eq!(usage.prompt_tokens_per_second(), Some(50.0));
        assert_eq!(usage.generation_tokens_per_second(), None);
        assert_eq!(Usage::default().prompt_tokens_per_second(), None);
    }

    #[test]
    fn the_message_of_an_answer_keeps_its_text_unless_the_calls_came_from_it() {
        let call = |origin| ToolCall {
            id: "call_0".to_owned(),
            name: "read_file".to_owned(),
            arguments: serde_json::json!({"path": "a"}),
            origin,
        };
        let mut response = ChatResponse {
            content: "Reading a.".to_owned(),
            tool_calls: vec![call(CallOrigin::Structured)],
            finish: FinishReason::Stop,
            usage: Usage::default(),
        };
        let message = response.to_message();
        assert_eq!(message.role, crate::Role::Assistant);
        assert_eq!(message.content, "Reading a.");
        assert_eq!(message.tool_calls, response.tool_calls);

        response.tool_calls = vec![call(CallOrigin::RecoveredFromText)];
        let message = response.to_message();
        assert_eq!(message.content, "");
        assert_eq!(message.tool_calls, response.tool_calls);
    }

    #[test]
    fn tool_support_is_unknown_without_capabilities() {
        let mut info = ModelInfo::default();
        assert_eq!(info.supports_tools(), None);
        info.capabilities = vec!["completion".to_owned()];
        assert_eq!(info.supports_tools(), Some(false));
        info.capabilities.push("tools".to_owned());
        assert_eq!(info.supports_tools(), Some(true));
    }
}
