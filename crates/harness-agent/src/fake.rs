//! [`FakeChat`]: a scripted model for tests of the loop.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::model::Message;
use serde_json::Value;

use crate::chat::{ChatClient, ChatError, Reply};

/// A model that answers from a script and records every request, so that a test can drive
/// the loop turn by turn and then check exactly what the model was shown.
///
/// Each request takes the next entry of the script: a [`Reply`], whose text is streamed
/// word by word, or an error. A request after the script's end is an error too, naming the
/// request, so a loop that asks once too often fails loudly.
///
/// ```
/// use harness_agent::{ChatClient, FakeChat, Reply};
/// use harness_agent::Message;
/// use serde_json::json;
///
/// let chat = FakeChat::new([
///     Reply::call("read_file", json!({"path": "calc.py"})),
///     Reply::text("Done."),
/// ]);
/// let first = chat.chat(&[Message::user("fix it")], &[], &mut |_| {})?;
/// assert_eq!(first.tool_calls[0].name, "read_file");
/// let mut streamed = String::new();
/// chat.chat(&[Message::user("and?")], &[], &mut |text| streamed.push_str(text))?;
/// assert_eq!(streamed, "Done.");
/// assert_eq!(chat.requests()[1].messages[0].content, "and?");
/// assert!(chat.chat(&[], &[], &mut |_| {}).is_err(), "the script is over");
/// # Ok::<(), harness_agent::ChatError>(())
/// ```
#[derive(Debug)]
pub struct FakeChat {
    /// What is left to answer, in order.
    script: Mutex<VecDeque<Scripted>>,
    /// Every request received, in order.
    requests: Mutex<Vec<Request>>,
    /// What [`ChatClient::context_window`] reports.
    context_window: u32,
}

/// One request [`FakeChat`] received.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Request {
    /// The conversation, as sent.
    pub messages: Vec<Message>,
    /// The tools offered.
    pub tools: Vec<Value>,
    /// Which retry in a row this was ([`ChatClient::chat_resampled`]), 0 for a plain chat.
    pub resample: u32,
}

/// One entry of the script.
#[derive(Debug)]
enum Scripted {
    Reply(Reply),
    Error(String),
}

impl FakeChat {
    /// A model that gives `replies` in order, with a context window of 32,768 tokens.
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> FakeChat {
        FakeChat {
            script: Mutex::new(replies.into_iter().map(Scripted::Reply).collect()),
            requests: Mutex::new(Vec::new()),
            context_window: 32_768,
        }
    }

    /// The same model, reporting a context window of `tokens`.
    pub fn with_context_window(mut self, tokens: u32) -> FakeChat {
        self.context_window = tokens;
        self
    }

    /// Adds a reply at the end of the script.
    pub fn then(self, reply: Reply) -> FakeChat {
        lock(&self.script).push_back(Scripted::Reply(reply));
        self
    }

    /// Adds, at the end of the script, a request that fails with `message`.
    pub fn then_fail(self, message: impl Into<String>) -> FakeChat {
        lock(&self.script).push_back(Scripted::Error(message.into()));
        self
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.requests).clone()
    }

    /// How many entries of the script are left.
    pub fn remaining(&self) -> usize {
        lock(&self.script).len()
    }
}

impl ChatClient for FakeChat {
    fn chat(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, ChatError> {
        self.chat_resampled(messages, tools, on_text, 0)
    }

    fn chat_resampled(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
        resample: u32,
    ) -> Result<Reply, ChatError> {
        let number = {
            let mut requests = lock(&self.requests);
            requests.push(Request {
                messages: messages.to_vec(),
                tools: tools.to_vec(),
                resample,
            });
            requests.len()
        };
        match lock(&self.script).pop_front() {
            Some(Scripted::Reply(reply)) => {
                for word in reply.text.split_inclusive(' ') {
                    on_text(word);
                }
                Ok(reply)
            }
            Some(Scripted::Error(message)) => Err(ChatError::new(message)),
            None => Err(ChatError::new(format!(
                "FakeChat: request {number} has no scripted reply"
            ))),
        }
    }

    fn context_window(&self) -> Result<u32, ChatError> {
        Ok(self.context_window)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A test that panicked while holding the lock leaves plain data, still readable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_streamed_in_pieces_that_add_up() {
        let chat = FakeChat::new([Reply::text("one two three")]);
        let mut pieces = Vec::new();
        chat.chat(&[], &[], &mut |piece| pieces.push(piece.to_owned()))
            .unwrap();
        assert_eq!(pieces, ["one ", "two ", "three"]);
    }

    #[test]
    fn scripted_failures_and_the_end_of_the_script_are_errors() {
        let chat = FakeChat::new([])
            .then_fail("connection refused")
            .then(Reply::text("late"))
            .with_context_window(100);
        assert_eq!(chat.remaining(), 2);
        let error = chat.chat(&[], &[], &mut |_| {}).unwrap_err();
        assert_eq!(error.to_string(), "connection refused");
        assert_eq!(chat.chat(&[], &[], &mut |_| {}).unwrap().text, "late");
        let error = chat.chat(&[], &[], &mut |_| {}).unwrap_err();
        assert_eq!(
            error.to_string(),
            "FakeChat: request 3 has no scripted reply"
        );
        assert_eq!(chat.context_window().unwrap(), 100);
        assert_eq!(chat.requests().len(), 3);
    }
}
