//! [`Budgets`]: how far one run may go before the harness stops it.

use std::time::Duration;

/// The limits of one run. Each one reached ends the run with its own
/// [`Outcome`](crate::Outcome); none of them is a failure of the harness.
///
/// ```
/// use std::time::Duration;
/// use harness_agent::Budgets;
///
/// let budgets = Budgets {
///     max_steps: 20,
///     max_duration: Duration::from_secs(600),
///     max_tokens: Some(200_000),
///     ..Budgets::default()
/// };
/// assert_eq!(budgets.max_failed_calls, 5);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budgets {
    /// The most model turns (one answer and the tool calls in it). Default 40;
    /// reaching it ends the run as [`Outcome::StepLimit`](crate::Outcome::StepLimit).
    pub max_steps: u32,
    /// The longest the run may take, from start to outcome. Default 30 minutes; reaching it
    /// ends the run as [`Outcome::TimeLimit`](crate::Outcome::TimeLimit).
    pub max_duration: Duration,
    /// The most tool calls in a row that fail (unknown tool, invalid arguments, a refusal,
    /// a tool error). Default 5; reaching it ends the run as
    /// [`Outcome::Stuck`](crate::Outcome::Stuck).
    pub max_failed_calls: u32,
    /// The most tokens, prompt and generated, over the whole run, as the server counts
    /// them. Default none; reaching it ends the run as
    /// [`Outcome::TokenLimit`](crate::Outcome::TokenLimit).
    pub max_tokens: Option<u64>,
    /// After this many identical calls in a row (same tool, same arguments) the model is
    /// told it is repeating itself. Default 3.
    pub repeat_nudge: u32,
    /// At this many identical calls in a row the run ends as
    /// [`Outcome::Stuck`](crate::Outcome::Stuck), before the call runs. Default 5.
    pub repeat_stop: u32,
    /// How many times the verification command may fail before the run ends as
    /// [`Outcome::VerificationFailed`](crate::Outcome::VerificationFailed), per attempt.
    /// A "done" while its last failure stands (nothing changed since) counts as one without
    /// running it. Default 3.
    pub max_verifications: u32,
    /// The most characters of the head start: the listing of the workspace and the output
    /// of the verification command, shown before the first turn. Default 6,000 (about
    /// 2,000 tokens); 0 turns the head start off.
    pub head_start_chars: usize,
    /// Tokens of the context window kept free for the model's answer. Default 1,024.
    pub answer_reserve_tokens: u32,
    /// The most times the task may be tried: a cap, the time and tokens decide. An attempt
    /// that ends without success but could go otherwise another time (the verification
    /// failed, the model got stuck or ran out of steps) is followed by another while the
    /// cap allows and the run's budgets last: the time left, and the tokens left under
    /// [`max_tokens`](Budgets::max_tokens), at least what the attempts so far took on
    /// average (an attempt cut off by the time limit ends unchecked, its change half made).
    /// The files are brought back to the state before the run
    /// ([`Checkpoints::revert_to_start`](crate::Checkpoints::revert_to_start)) and the model
    /// starts afresh, sampled differently, from the first attempt's opening (the system
    /// prompt, the task and the head start, word for word, so that a server that keeps
    /// evaluated prompts need not evaluate them again) followed by how the attempt before
    /// ended. Steps and checks are counted per attempt, time and tokens over the whole run.
    /// Default 1; `u32::MAX` sets no cap.
    pub attempts: u32,
    /// When the verification command's first run (the head start's, else the first check's
    /// or the model's own) took at most this long, the command runs after every step whose
    /// calls edited a file: a pass ends the attempt [`Outcome::Verified`](crate::Outcome)
    /// without another model turn; a failure is not one of the attempt's
    /// [`max_verifications`](Budgets::max_verifications), and its output, cut short, goes
    /// on that step's last tool result. A slower command runs only when the model says it
    /// is done; so does every check after a check after an edit took longer than this (that
    /// one is stopped at ten times this: the edit may have made the tests hang). Default
    /// [`Budgets::QUICK_CHECK`]; `None` turns it off.
    pub quick_check: Option<Duration>,
}

impl Budgets {
    /// The default of [`Budgets::quick_check`]: 3 s. Measured on the task suite with
    /// Qwen2.5-Coder-1.5B on 2 cores (2026-12-07, 32 runs): the head start's run of the
    /// verification took 0.01-0.64 s in 31 of them and 2.1 s in one (a cold Rust build),
    /// while a model answer with any text in it took 2.7-48 s (median 29.5 s). A check
    /// that fails costs at most this after a step; one that passes saves at least a turn.
    pub const QUICK_CHECK: Duration = Duration::from_secs(3);
}

impl Default for Budgets {
    fn default() -> Budgets {
        Budgets {
            max_steps: 40,
            max_duration: Duration::from_secs(30 * 60),
            max_failed_calls: 5,
            max_tokens: None,
            repeat_nudge: 3,
            repeat_stop: 5,
            max_verifications: 3,
            head_start_chars: 6_000,
            answer_reserve_tokens: 1_024,
            attempts: 1,
            quick_check: Some(Budgets::QUICK_CHECK),
        }
    }
}
