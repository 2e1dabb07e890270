//! [`ChatClient`] for [`harness_ollama::Client`]: Ollama's API and OpenAI-compatible servers.

use harness_ollama::{Client, FinishReason, Message};
use serde_json::Value;

use crate::chat::{ChatClient, ChatError, Reply};

impl ChatClient for Client {
    fn chat(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, ChatError> {
        let response = Client::chat(self, messages, tools, on_text)?;
        Ok(Reply {
            cut_off: response.finish == FinishReason::Length,
            text: response.content,
            tool_calls: response.tool_calls,
            prompt_tokens: response.usage.prompt_tokens,
            completion_tokens: response.usage.completion_tokens,
        })
    }

    fn context_window(&self) -> Result<u32, ChatError> {
        Ok(self.context_length()?)
    }
}
