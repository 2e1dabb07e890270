//! The model on a server as the loop's [`ChatClient`]: [`ServerChat`] adapts
//! [`harness_ollama::Client`] (Ollama's API and OpenAI-compatible servers) to the seam
//! `harness-agent` defines, converting the loop's messages and calls to the client's and its
//! answers back. `harness-agent` does not depend on the HTTP client; this is the one place
//! the two meet, wired in by [`agent`](crate::agent).

use harness_agent::{CallOrigin, ChatClient, ChatError, Message, Reply, Role, ToolCall};
use harness_ollama::{ChatResponse, Client, FinishReason};
use serde_json::Value;

/// A [`harness_ollama::Client`] the loop can ask.
pub(crate) struct ServerChat(Client);

impl ServerChat {
    /// The loop's view of `client`.
    pub(crate) fn new(client: Client) -> ServerChat {
        ServerChat(client)
    }
}

impl ChatClient for ServerChat {
    fn chat(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, ChatError> {
        let messages = client_messages(messages);
        let response = self.0.chat(&messages, tools, on_text).map_err(chat_error)?;
        Ok(reply_of(response))
    }

    fn chat_resampled(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
        resample: u32,
    ) -> Result<Reply, ChatError> {
        let messages = client_messages(messages);
        let response = self
            .0
            .chat_resampled(&messages, tools, on_text, resample)
            .map_err(chat_error)?;
        Ok(reply_of(response))
    }

    fn chat_limited(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
        resample: u32,
        reply_tokens: u32,
    ) -> Result<Reply, ChatError> {
        let messages = client_messages(messages);
        let response = self
            .0
            .chat_within(&messages, tools, on_text, resample, reply_tokens)
            .map_err(chat_error)?;
        Ok(reply_of(response))
    }

    fn context_window(&self) -> Result<u32, ChatError> {
        self.0.context_length().map_err(chat_error)
    }
}

/// The client's error as the loop's: its message unchanged, since it says what to do
/// ("no Ollama server at …: start it with \"ollama serve\" or set OLLAMA_HOST").
fn chat_error(error: harness_ollama::Error) -> ChatError {
    ChatError::new(error)
}

/// The loop's view of an answer.
fn reply_of(response: ChatResponse) -> Reply {
    Reply {
        // An answer cut because it repeated itself is cut off too: never taken for "done",
        // so the verification does not run on a model that was looping.
        cut_off: matches!(
            response.finish,
            FinishReason::Length | FinishReason::Repetition(_)
        ),
        text: response.content,
        tool_calls: response.tool_calls.into_iter().map(loop_call).collect(),
        prompt_tokens: response.usage.prompt_tokens,
        completion_tokens: response.usage.completion_tokens,
    }
}

/// The conversation in the client's types.
fn client_messages(messages: &[Message]) -> Vec<harness_ollama::Message> {
    messages
        .iter()
        .map(|message| harness_ollama::Message {
            role: match message.role {
                Role::System => harness_ollama::Role::System,
                Role::User => harness_ollama::Role::User,
                Role::Assistant => harness_ollama::Role::Assistant,
                Role::Tool => harness_ollama::Role::Tool,
            },
            content: message.content.clone(),
            tool_calls: message.tool_calls.iter().map(client_call).collect(),
            tool_call_id: message.tool_call_id.clone(),
            tool_name: message.tool_name.clone(),
        })
        .collect()
}

/// A call of the loop's conversation in the client's types.
fn client_call(call: &ToolCall) -> harness_ollama::ToolCall {
    harness_ollama::ToolCall {
        id: call.id.clone(),
        name: call.name.clone(),
        arguments: call.arguments.clone(),
        origin: match call.origin {
            CallOrigin::Structured => harness_ollama::CallOrigin::Structured,
            CallOrigin::RecoveredFromText => harness_ollama::CallOrigin::RecoveredFromText,
            CallOrigin::Constrained => harness_ollama::CallOrigin::Constrained,
            CallOrigin::EditBlock => harness_ollama::CallOrigin::EditBlock,
            CallOrigin::Client => harness_ollama::CallOrigin::Client,
        },
    }
}

/// A call the client read in the loop's types.
fn loop_call(call: harness_ollama::ToolCall) -> ToolCall {
    ToolCall {
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        origin: match call.origin {
            harness_ollama::CallOrigin::Structured => CallOrigin::Structured,
            harness_ollama::CallOrigin::RecoveredFromText => CallOrigin::RecoveredFromText,
            harness_ollama::CallOrigin::Constrained => CallOrigin::Constrained,
            harness_ollama::CallOrigin::EditBlock => CallOrigin::EditBlock,
            harness_ollama::CallOrigin::Client => CallOrigin::Client,
        },
    }
}

#[cfg(test)]
mod tests {
    use harness_ollama::{Repetition, Usage};
    use serde_json::json;

    use super::*;

    fn answer(finish: FinishReason) -> ChatResponse {
        ChatResponse {
            content: "text".into(),
            tool_calls: Vec::new(),
            finish,
            usage: Usage::default(),
        }
    }

    #[test]
    fn an_answer_cut_for_length_or_for_repeating_itself_is_cut_off_and_no_other() {
        assert!(reply_of(answer(FinishReason::Length)).cut_off);
        assert!(reply_of(answer(FinishReason::Repetition(Repetition::new("x\n", 5)))).cut_off);
        assert!(!reply_of(answer(FinishReason::Stop)).cut_off);
        assert!(!reply_of(answer(FinishReason::ToolCalls)).cut_off);
        assert_eq!(reply_of(answer(FinishReason::Stop)).text, "text");
    }

    #[test]
    fn messages_and_calls_cross_the_seam_unchanged_both_ways() {
        let origins = [
            CallOrigin::Structured,
            CallOrigin::RecoveredFromText,
            CallOrigin::Constrained,
            CallOrigin::EditBlock,
            CallOrigin::Client,
        ];
        let calls: Vec<ToolCall> = origins
            .iter()
            .enumerate()
            .map(|(position, &origin)| ToolCall {
                id: format!("call_{position}"),
                name: "read_file".to_owned(),
                arguments: json!({"path": position.to_string()}),
                origin,
            })
            .collect();
        let conversation = [
            Message::system("s"),
            Message::user("u"),
            Message::assistant("a", calls.clone()),
            Message::tool_result(&calls[0], "r"),
        ];
        let sent = client_messages(&conversation);
        // Both sides serialize alike, so the same JSON shows nothing was lost or renamed.
        assert_eq!(
            serde_json::to_value(&sent).unwrap(),
            serde_json::to_value(conversation).unwrap()
        );
        let back: Vec<ToolCall> = sent[2].tool_calls.iter().cloned().map(loop_call).collect();
        assert_eq!(back, calls);
    }

    #[test]
    fn a_client_error_reads_the_same_through_the_seam() {
        let error = harness_ollama::Error::UnknownApi {
            value: "x".to_owned(),
        };
        let message = error.to_string();
        assert_eq!(chat_error(error).to_string(), message);
    }
}
