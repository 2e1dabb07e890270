//! Exit statuses: what `harness` tells the shell, and scripts, about how things went.

use std::process::ExitCode;

use harness_agent::Outcome;

/// The task was done and checked: the verification command exited 0.
pub(crate) const VERIFIED: u8 = 0;
/// The run ended without a passing verification.
pub(crate) const NOT_VERIFIED: u8 = 1;
/// Bad usage or configuration, or a workspace that cannot be used.
pub(crate) const USAGE: u8 = 2;
/// The model server could not be reached, lacks the model, or answered unreadably.
pub(crate) const MODEL_SERVER: u8 = 3;
/// Stopped with Ctrl-C (128 + SIGINT, as shells report it).
pub(crate) const INTERRUPTED: u8 = 130;

/// The exit status of a run that ended with `outcome`.
pub(crate) fn for_outcome(outcome: Outcome) -> ExitCode {
    ExitCode::from(match outcome {
        Outcome::Verified => VERIFIED,
        Outcome::ModelError => MODEL_SERVER,
        Outcome::Interrupted => INTERRUPTED,
        _ => NOT_VERIFIED,
    })
}

/// The exit status of an error that ended a command before or outside a run: a model server
/// problem is 3, anything else a usage or configuration error.
pub(crate) fn for_error(error: &anyhow::Error) -> ExitCode {
    let model_server = error
        .chain()
        .any(|cause| cause.is::<harness_ollama::Error>());
    ExitCode::from(if model_server { MODEL_SERVER } else { USAGE })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_map_to_the_documented_statuses() {
        let cases = [
            (Outcome::Verified, 0),
            (Outcome::VerificationFailed, 1),
            (Outcome::Unverified, 1),
            (Outcome::StepLimit, 1),
            (Outcome::TimeLimit, 1),
            (Outcome::TokenLimit, 1),
            (Outcome::Stuck, 1),
            (Outcome::ModelError, 3),
            (Outcome::Interrupted, 130),
        ];
        for (outcome, code) in cases {
            assert_eq!(for_outcome(outcome), ExitCode::from(code), "{outcome}");
        }
    }

    #[test]
    fn a_model_server_error_anywhere_in_the_chain_is_3() {
        let server = harness_ollama::Error::UnknownApi {
            value: "x".to_owned(),
        };
        let error = anyhow::Error::new(server).context("asking the model");
        assert_eq!(for_error(&error), ExitCode::from(3));
        assert_eq!(for_error(&anyhow::anyhow!("bad flag")), ExitCode::from(2));
    }
}
