//! How a run ended: [`Outcome`] and the [`RunReport`] around it.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How a run ended. Only [`Outcome::Verified`] means the task is done: the verification
/// command exited 0 after the model said it had finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// The model said it was done and the verification command exited 0.
    Verified,
    /// The model said it was done, but the verification command failed every time it ran.
    VerificationFailed,
    /// The model said it was done and there was no verification command: nothing checked
    /// its claim.
    Unverified,
    /// The verification command exited 0, but what it loads besides the code under test
    /// (tests, snapshots, the runner's configuration, the runner itself) changed since the
    /// run began, so the pass does not show the code was fixed
    /// ([`VerificationInputs`](harness_tools::VerificationInputs)). The reason names what
    /// changed.
    TestsChanged,
    /// The run used its steps ([`Budgets::max_steps`](crate::Budgets::max_steps)).
    StepLimit,
    /// The run used its time ([`Budgets::max_duration`](crate::Budgets::max_duration)).
    TimeLimit,
    /// The run used its tokens ([`Budgets::max_tokens`](crate::Budgets::max_tokens)).
    TokenLimit,
    /// The model repeated the same call, or its calls kept failing, until the run was ended.
    Stuck,
    /// The model server could not be reached or its answer could not be read.
    ModelError,
    /// A stop was requested ([`StopSignal`](crate::StopSignal)).
    Interrupted,
}

impl Outcome {
    /// True if and only if the task was checked and done: [`Outcome::Verified`].
    pub fn is_verified(self) -> bool {
        self == Outcome::Verified
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Verified => "verified",
            Outcome::VerificationFailed => "verification failed",
            Outcome::Unverified => "unverified",
            Outcome::TestsChanged => "tests changed",
            Outcome::StepLimit => "step limit",
            Outcome::TimeLimit => "time limit",
            Outcome::TokenLimit => "token limit",
            Outcome::Stuck => "stuck",
            Outcome::ModelError => "model error",
            Outcome::Interrupted => "interrupted",
        })
    }
}

/// What a run did, for the summary a person reads and the last line of a transcript.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunReport {
    /// How it ended.
    pub outcome: Outcome,
    /// Why, in one sentence: "the verification command exited 0", "no scripted reply", …
    pub reason: String,
    /// Model turns taken, over every attempt.
    pub steps: u32,
    /// Attempts made at the task (see [`Budgets::attempts`](crate::Budgets::attempts)); 1
    /// in transcripts from before there were more.
    #[serde(default = "one")]
    pub attempts: u32,
    /// Tool calls made by the model (the head start's not counted).
    pub tool_calls: u32,
    /// Prompt tokens over all requests, as the servers counted them.
    pub prompt_tokens: u64,
    /// Generated tokens over all requests.
    pub completion_tokens: u64,
    /// From the start of the run to its outcome.
    #[serde(
        rename = "seconds",
        serialize_with = "seconds",
        deserialize_with = "from_seconds"
    )]
    pub duration: Duration,
    /// The verification command and how its runs went; `None` without one.
    pub verification: Option<VerificationReport>,
    /// Checkpoints taken.
    pub checkpoints: u32,
    /// The model's last text: its summary, when it said it was done.
    pub final_text: String,
    /// Where the transcript is, if one was written.
    pub transcript: Option<PathBuf>,
    /// What went wrong around the run without ending it: a checkpoint or a transcript line
    /// that could not be written.
    pub warnings: Vec<String>,
}

impl RunReport {
    /// The report of a run of tool calls that no model made and nothing verified (an MCP
    /// client's own calls): `outcome` and `reason`, the number of calls, how long it took.
    pub fn of_calls(outcome: Outcome, reason: String, calls: u32, duration: Duration) -> RunReport {
        RunReport {
            outcome,
            reason,
            steps: calls,
            attempts: 1,
            tool_calls: calls,
            prompt_tokens: 0,
            completion_tokens: 0,
            duration,
            verification: None,
            checkpoints: 0,
            final_text: String::new(),
            transcript: None,
            warnings: Vec::new(),
        }
    }
}

/// How the verification command ran in one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct VerificationReport {
    /// The command, as given.
    pub command: String,
    /// How many times it ran to check the model's work (the head start's run not
    /// counted).
    pub runs: u32,
    /// True if and only if its last run exited 0 and nothing it loads besides the code
    /// under test had changed.
    pub passed: bool,
    /// What the verification loads besides the code under test that had changed since the
    /// run began, at its last run (one line each); empty in transcripts from before this
    /// was judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
}

pub(crate) fn one() -> u32 {
    1
}

fn seconds<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(duration.as_secs_f64())
}

/// The inverse of [`seconds`], for reading a report back; a negative or non-finite number
/// is not a duration, so it is an error rather than a panic.
fn from_seconds<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    let seconds = f64::deserialize(deserializer)?;
    Duration::try_from_secs_f64(seconds).map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_read_as_words_and_serialize_as_identifiers() {
        let all = [
            (Outcome::Verified, "verified", "verified"),
            (
                Outcome::VerificationFailed,
                "verification failed",
                "verification_failed",
            ),
            (Outcome::Unverified, "unverified", "unverified"),
            (Outcome::TestsChanged, "tests changed", "tests_changed"),
            (Outcome::StepLimit, "step limit", "step_limit"),
            (Outcome::TimeLimit, "time limit", "time_limit"),
            (Outcome::TokenLimit, "token limit", "token_limit"),
            (Outcome::Stuck, "stuck", "stuck"),
            (Outcome::ModelError, "model error", "model_error"),
            (Outcome::Interrupted, "interrupted", "interrupted"),
        ];
        for (outcome, words, identifier) in all {
            assert_eq!(outcome.to_string(), words);
            assert_eq!(serde_json::to_value(outcome).unwrap(), identifier);
            assert_eq!(outcome.is_verified(), outcome == Outcome::Verified);
        }
    }
}
