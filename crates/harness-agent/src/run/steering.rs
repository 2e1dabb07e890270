//! Steering a model that is stuck: an empty answer is asked again, the same answer twice is
//! sampled differently or ends the attempt, and corrections are counted.

use super::{Run, count};
use crate::chat::Reply;
use crate::outcome::Outcome;

/// The most retries in a row that are sampled differently
/// ([`ChatClient::chat_resampled`](crate::ChatClient::chat_resampled)): three steps take the
/// default temperature of 0.2 to 0.5.
pub(super) const MAX_RESAMPLE: u32 = 3;

/// The most empty answers in a row that are asked again rather than taken as they are.
const MAX_EMPTY_IN_ROW: u32 = 2;

/// Answers in one attempt that the model was told how to put right, after which the attempt
/// ends when another is left: a fresh attempt, from the opening and sampled differently,
/// does better than a third correction. (Measured with Qwen2.5-Coder-1.5B over 56 suite
/// runs of three attempts, 2026-12-04: of the 17 attempts that went on past a second
/// correction, none was verified; of those past one, 4 of 33.)
const CORRECTIONS_PER_ATTEMPT: u32 = 2;

impl Run<'_> {
    /// An answer with no text and no call says nothing, not "done": the same request is
    /// asked again at once, sampled differently, up to [`MAX_EMPTY_IN_ROW`] times in a
    /// row; then the answer is taken as it is. Nothing is added to the conversation, so the
    /// server has the whole prompt evaluated already. (Measured with Qwen2.5-Coder-1.5B on
    /// the task suite: the first request of every second attempt, at temperature 0.5 and
    /// seed 1, was answered with the end of the message and nothing else; taken for done,
    /// each cost a check and a turn.)
    pub(super) fn empty_answer(&mut self, reply: &Reply) -> bool {
        let empty = reply.text.trim().is_empty() && reply.tool_calls.is_empty() && !reply.cut_off;
        if !empty || self.steering.empty_in_row >= MAX_EMPTY_IN_ROW {
            self.steering.empty_in_row = 0;
            return false;
        }
        self.steering.empty_in_row += 1;
        self.steering.resample = (self.steering.resample + 1).min(MAX_RESAMPLE);
        tracing::info!(
            step = self.counts.step,
            resample = self.steering.resample,
            "the model answered nothing: asked again, sampled differently"
        );
        true
    }

    /// Ends the attempt when the model gave, without a tool call, the answer it gave the
    /// turn before and another attempt is left: a fresh attempt, from the opening and
    /// sampled differently, is likelier to go otherwise than asking again. (Measured with
    /// Qwen2.5-Coder-1.5B on the task suite: once its answer is in the conversation twice,
    /// it gave it again word for word even at a temperature of 0.8, each time 10-40 s.)
    /// On the last attempt the next request is sampled differently instead
    /// ([`Run::note_repeated_answer`]).
    pub(super) fn same_answer_again(&self, reply: &Reply) -> Option<(Outcome, String)> {
        let repeated = reply.tool_calls.is_empty() && self.steering.resample > 0;
        (repeated && self.another_attempt_left()).then(|| {
            (
                Outcome::Stuck,
                "the model gave the same answer as the turn before".to_owned(),
            )
        })
    }

    /// Ends the attempt when the model was told [`CORRECTIONS_PER_ATTEMPT`] times how to
    /// put its answer right and another attempt is left.
    pub(super) fn corrected_enough(&self) -> Option<(Outcome, String)> {
        (self.steering.corrections >= CORRECTIONS_PER_ATTEMPT && self.another_attempt_left()).then(
            || {
                (
                    Outcome::Stuck,
                    format!(
                        "the model was told {} in this attempt how to put its answer right",
                        count(u64::from(self.steering.corrections), "time")
                    ),
                )
            },
        )
    }

    /// Counts answers that are the same as the one before (the same text and calls): at a
    /// low temperature a small model asked nearly the same thing gives the same answer, turn
    /// after turn, until the run is stuck; the next request is then sampled differently.
    pub(super) fn note_repeated_answer(&mut self, reply: &Reply) {
        let answer = (
            reply.text.trim().to_owned(),
            reply
                .tool_calls
                .iter()
                .map(|call| (call.name.clone(), call.arguments.clone()))
                .collect::<Vec<_>>(),
        );
        self.steering.resample = if self.steering.last_answer.as_ref() == Some(&answer) {
            (self.steering.resample + 1).min(MAX_RESAMPLE)
        } else {
            0
        };
        if self.steering.resample > 0 {
            tracing::info!(
                step = self.counts.step,
                resample = self.steering.resample,
                "the model gave the same answer again: the next request is sampled differently"
            );
        }
        self.steering.last_answer = Some(answer);
    }

    /// Tells the model how to put its answer right: one of the attempt's corrections
    /// ([`CORRECTIONS_PER_ATTEMPT`]).
    pub(super) fn nudge(&mut self, message: String) {
        self.steering.corrections += 1;
        self.tell(message);
    }
}
