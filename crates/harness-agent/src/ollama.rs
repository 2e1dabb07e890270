//! [`ChatClient`] for [`harness_ollama::Client`]: Ollama's API and OpenAI-compatible servers.

use harness_ollama::{ChatResponse, Client, FinishReason, Message};
use serde_json::Value;

use crate::chat::{ChatClient, ChatError, Reply};

impl ChatClient for Client {
    fn chat(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, ChatError> {
        Ok(reply_of(Client::chat(self, messages, tools, on_text)?))
    }

    fn chat_resampled(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
        resample: u32,
    ) -> Result<Reply, ChatError> {
        Ok(reply_of(Client::chat_resampled(
            self, messages, tools, on_text, resample,
        )?))
    }

    fn context_window(&self) -> Result<u32, ChatError> {
        Ok(self.context_length()?)
    }
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
        tool_calls: response.tool_calls,
        prompt_tokens: response.usage.prompt_tokens,
        completion_tokens: response.usage.completion_tokens,
    }
}

#[cfg(test)]
mod tests {
    use harness_ollama::{Repetition, Usage};

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
}
