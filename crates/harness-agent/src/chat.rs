//! The seam between the loop and a model: [`ChatClient`], what it is asked and what it answers.

use serde_json::Value;

use crate::model::{CallOrigin, Message, ToolCall};

/// A model the loop can talk to: a conversation and the tools offered go in, the model's
/// answer comes out, its text streamed piece by piece as it is generated.
///
/// An adapter over an HTTP client implements it for real servers (the command line's, over
/// `harness-ollama`: Ollama's API and OpenAI-compatible ones); `FakeChat` (feature
/// `test-support`) replays a script for tests. The loop calls it from a thread of its own,
/// so that a stop request never has to wait for a slow answer: hence `Send + Sync`.
pub trait ChatClient: Send + Sync {
    /// Sends `messages` and the `tools` offered (JSON tool definitions, in the shape both
    /// Ollama and OpenAI-compatible servers take) and returns the complete answer, passing
    /// its text to `on_text` as it arrives.
    ///
    /// # Errors
    ///
    /// A [`ChatError`] when the server cannot be reached or its answer cannot be read; the
    /// loop ends the run with the outcome [`Outcome::ModelError`](crate::Outcome::ModelError).
    fn chat(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, ChatError>;

    /// Like [`ChatClient::chat`], asked again after an answer that could not be used: the
    /// `resample`-th retry in a row (from 1) should sample differently (a higher
    /// temperature, another seed), since a model asked the same way at a low temperature
    /// answers the same way. The default ignores `resample`.
    ///
    /// # Errors
    ///
    /// As [`ChatClient::chat`].
    fn chat_resampled(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
        resample: u32,
    ) -> Result<Reply, ChatError> {
        let _ = resample;
        self.chat(messages, tools, on_text)
    }

    /// Like [`ChatClient::chat_resampled`], the answer allowed up to `reply_tokens`
    /// tokens, in place of the client's own limit: the loop sizes it to what the answer
    /// may have to hold (a file written back whole). The default ignores `reply_tokens`.
    ///
    /// # Errors
    ///
    /// As [`ChatClient::chat`].
    fn chat_limited(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
        resample: u32,
        reply_tokens: u32,
    ) -> Result<Reply, ChatError> {
        let _ = reply_tokens;
        self.chat_resampled(messages, tools, on_text, resample)
    }

    /// The context window, in tokens, that the conversation must fit in.
    ///
    /// # Errors
    ///
    /// A [`ChatError`] when the server cannot say (it is unreachable, for one).
    fn context_window(&self) -> Result<u32, ChatError>;
}

/// The model's answer to one request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reply {
    /// The whole text, as streamed.
    pub text: String,
    /// The tools the model called, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Tokens of the prompt, as the server counted them.
    pub prompt_tokens: Option<u64>,
    /// Tokens generated, as the server counted them.
    pub completion_tokens: Option<u64>,
    /// True if and only if the answer was cut off by the output limit or the context window.
    pub cut_off: bool,
}

impl Reply {
    /// An answer with text only: the model says it is done.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            ..Reply::default()
        }
    }

    /// An answer that calls the given tools, each a name and its arguments, in order.
    pub fn calls<I, S>(calls: I) -> Reply
    where
        I: IntoIterator<Item = (S, Value)>,
        S: Into<String>,
    {
        let tool_calls = calls
            .into_iter()
            .enumerate()
            .map(|(position, (name, arguments))| ToolCall {
                id: format!("call_{position}"),
                name: name.into(),
                arguments,
                origin: CallOrigin::Structured,
            })
            .collect();
        Reply {
            tool_calls,
            ..Reply::default()
        }
    }

    /// An answer calling one tool.
    pub fn call(name: &str, arguments: Value) -> Reply {
        Reply::calls([(name, arguments)])
    }

    /// The same answer with token counts.
    pub fn with_tokens(mut self, prompt: u64, completion: u64) -> Reply {
        self.prompt_tokens = Some(prompt);
        self.completion_tokens = Some(completion);
        self
    }

    /// The assistant message that goes into the conversation.
    ///
    /// Calls the model wrote as JSON in its text go in as calls, without that text, so the
    /// model does not see each call twice and sees them the way its chat template shows
    /// tool calls.
    pub(crate) fn to_message(&self) -> Message {
        let recovered = self
            .tool_calls
            .iter()
            .any(|call| call.origin == CallOrigin::RecoveredFromText);
        let content = if recovered { "" } else { self.text.as_str() };
        Message::assistant(content, self.tool_calls.clone())
    }
}

/// Why the model could not be asked or its answer not read.
///
/// It keeps the underlying error, whose message says what to do ("no Ollama server at
/// http://127.0.0.1:11434: start it with \"ollama serve\" or set OLLAMA_HOST").
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ChatError(Box<dyn std::error::Error + Send + Sync>);

impl ChatError {
    /// Wraps the error a model client returned.
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> ChatError {
        ChatError(error.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_are_numbered_in_order() {
        let reply = Reply::calls([("read_file", json!({"path": "a"})), ("list_dir", json!({}))]);
        let ids: Vec<&str> = reply.tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["call_0", "call_1"]);
        assert_eq!(reply.tool_calls[1].name, "list_dir");
        assert!(reply.text.is_empty());
    }

    #[test]
    fn the_message_drops_the_text_of_calls_recovered_from_it() {
        let mut reply = Reply::call("read_file", json!({"path": "a"}));
        reply.text = "{\"name\": \"read_file\"}".to_owned();
        assert_eq!(reply.to_message().content, reply.text);
        reply.tool_calls[0].origin = CallOrigin::RecoveredFromText;
        let message = reply.to_message();
        assert_eq!(message.content, "");
        assert_eq!(message.tool_calls, reply.tool_calls);
    }

    #[test]
    fn a_chat_error_reads_as_its_cause() {
        let error = ChatError::new("no server at http://127.0.0.1:1");
        assert_eq!(error.to_string(), "no server at http://127.0.0.1:1");
    }
}
