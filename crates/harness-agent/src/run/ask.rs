//! Asking the model: on a thread of its own, so that a stop request and the time limit take
//! effect while it answers; and the budgets checked before each step.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use super::steering::MAX_RESAMPLE;
use super::{Answer, Run, count};
use crate::chat::{ChatError, Reply};
use crate::context;
use crate::event::Event;
use crate::model::Message;
use crate::outcome::Outcome;
use crate::plain;
use crate::reply_limit::reply_limit;

/// The system prompt and the task: never elided.
const KEPT_HEAD: usize = 2;

/// How often the loop looks at the stop signal and the clock while the model is answering.
const POLL: Duration = Duration::from_millis(50);

/// What the model thread sends the loop.
enum FromModel {
    Text(String),
    Done(Result<Reply, ChatError>),
}

impl Run<'_> {
    /// Asks the model, on a thread of its own, while watching the stop signal and the clock.
    ///
    /// A model answer cannot be cut short from inside the client, and a small local model
    /// may take minutes: waiting here instead means Ctrl-C and the time limit take effect at
    /// once. An abandoned request finishes, unread, in the background.
    pub(super) fn ask(&mut self) -> Answer {
        self.log.event(&Event::Waiting {
            step: self.counts.step,
        });
        let (sender, receiver) = mpsc::channel();
        let chat = Arc::clone(&self.setup.chat);
        let messages = if self.setup.edit_format.offers_tools() {
            self.messages.clone()
        } else {
            plain::conversation(&self.messages)
        };
        let tools = self.tools.clone();
        let reply_tokens = self.reply_tokens(&messages);
        // A later attempt is sampled differently from its first request on, and a retry
        // within it differently again.
        let resample = (self.steering.resample + self.attempt.number - 1).min(MAX_RESAMPLE);
        let asked = Instant::now();
        let spawned = thread::Builder::new()
            .name("harness-model".to_owned())
            .spawn(move || {
                let texts = sender.clone();
                let mut on_text = |text: &str| {
                    // The loop may have stopped listening: the text is then unwanted.
                    let _ = texts.send(FromModel::Text(text.to_owned()));
                };
                let answer =
                    chat.chat_limited(&messages, &tools, &mut on_text, resample, reply_tokens);
                let _ = sender.send(FromModel::Done(answer));
            });
        if let Err(error) = spawned {
            return Answer::Failed(ChatError::new(format!(
                "cannot start a thread to ask the model: {error}"
            )));
        }
        loop {
            match receiver.recv_timeout(POLL) {
                Ok(FromModel::Text(text)) => self.log.event(&Event::Text {
                    step: self.counts.step,
                    text: &text,
                }),
                Ok(FromModel::Done(Ok(reply))) => return Answer::Reply(reply, asked.elapsed()),
                Ok(FromModel::Done(Err(error))) => return Answer::Failed(error),
                Err(RecvTimeoutError::Timeout) => {
                    if self.setup.stop.is_requested() {
                        return Answer::Stopped;
                    }
                    if self.started.elapsed() >= self.setup.budgets.max_duration {
                        return Answer::OutOfTime;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Answer::Failed(ChatError::new(
                        "the model client stopped without an answer (it panicked)",
                    ));
                }
            }
        }
    }

    /// The reply limit of the next answer, `messages` its prompt ([`reply_limit`]): sized
    /// to the longest file read so far that the tools let the model rewrite whole.
    fn reply_tokens(&self, messages: &[Message]) -> u32 {
        let base = self.setup.budgets.answer_reserve_tokens;
        let Ok(window) = self.setup.chat.context_window() else {
            return base;
        };
        let toolbox = &self.setup.toolbox;
        let rewrite_lines = toolbox.limits().rewrite_lines;
        let longest = self
            .work
            .read
            .iter()
            .filter_map(|path| toolbox.workspace().read_to_string(path).ok())
            .filter(|text| text.lines().count() <= rewrite_lines)
            .map(|text| text.len().div_ceil(context::CHARS_PER_TOKEN))
            .max()
            .unwrap_or(0);
        let prompt = context::estimate_tokens(messages, self.tools_chars);
        reply_limit(base, longest, window, prompt)
    }

    /// Keeps the conversation inside `limit` tokens ([`context::fit`]), telling when older
    /// results were elided.
    pub(super) fn fit_context(&mut self, limit: usize) {
        let elided = context::fit(&mut self.messages, KEPT_HEAD, self.tools_chars, limit);
        if elided > 0 {
            self.log.event(&Event::ContextTrimmed {
                step: self.counts.step,
                elided,
            });
        }
    }

    /// Counts and reports the answer `reply`, which took `took`.
    pub(super) fn answered(&mut self, reply: &Reply, took: Duration) {
        tracing::debug!(
            step = self.counts.step,
            tool_calls = reply.tool_calls.len(),
            seconds = took.as_secs_f64(),
            "the model answered"
        );
        self.counts.prompt_tokens += reply.prompt_tokens.unwrap_or(0);
        self.counts.completion_tokens += reply.completion_tokens.unwrap_or(0);
        self.log.event(&Event::Replied {
            step: self.counts.step,
            tool_calls: reply.tool_calls.len(),
            prompt_tokens: reply.prompt_tokens,
            completion_tokens: reply.completion_tokens,
            seconds: took.as_secs_f64(),
            reply,
        });
    }

    /// The outcome of a budget that ran out or a stop that was asked for, if any.
    pub(super) fn budget_exhausted(&self) -> Option<(Outcome, String)> {
        if self.setup.stop.is_requested() {
            return Some(self.interrupted());
        }
        if self.started.elapsed() >= self.setup.budgets.max_duration {
            return Some(self.out_of_time());
        }
        if self.counts.step - self.attempt.steps_before >= self.setup.budgets.max_steps {
            return Some((
                Outcome::StepLimit,
                format!(
                    "the model took {} without finishing (the limit)",
                    count(u64::from(self.setup.budgets.max_steps), "step")
                ),
            ));
        }
        match self.setup.budgets.max_tokens {
            Some(max) if self.counts.prompt_tokens + self.counts.completion_tokens >= max => {
                Some((
                    Outcome::TokenLimit,
                    format!(
                        "the run used {} tokens, over its budget of {max}",
                        self.counts.prompt_tokens + self.counts.completion_tokens
                    ),
                ))
            }
            _ => None,
        }
    }

    pub(super) fn interrupted(&self) -> (Outcome, String) {
        (
            Outcome::Interrupted,
            "the run was stopped on request".to_owned(),
        )
    }

    pub(super) fn out_of_time(&self) -> (Outcome, String) {
        (
            Outcome::TimeLimit,
            format!(
                "the run took longer than its limit of {} s",
                self.setup.budgets.max_duration.as_secs()
            ),
        )
    }

    /// The time the run has left before its limit: the most any command it runs may take.
    pub(super) fn time_left(&self) -> Duration {
        self.setup
            .budgets
            .max_duration
            .saturating_sub(self.started.elapsed())
    }
}
