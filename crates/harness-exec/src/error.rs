//! Why a command could not be run: [`Error`], and [`Unavailable`], why an isolation tier
//! cannot run on this machine. This module uses no other but the policy's refusal and the
//! tier's name, so every module can return its errors.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use crate::policy::Refusal;
use crate::tier::Tier;

/// Why a command could not be run.
///
/// A command that ran and failed is not an error: it is an
/// [`Outcome`](crate::Outcome) with a non-zero exit, a signal or a timeout.
/// Each message names the offending input and says what to do, so it can be
/// shown to the model as it is, with [`Error::to_model_text`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The argv was empty.
    #[error("the command is empty: give the program to run as the first element")]
    EmptyCommand,
    /// No program by that name exists (on `PATH`, for a bare name).
    #[error("command not found: {program}")]
    NotFound {
        /// The program as given.
        program: String,
    },
    /// The program exists but cannot be executed.
    #[error(
        "command not executable: {program} ({} is a directory or lacks execute permission; \
         run it through its interpreter, e.g. `sh {program}`)",
        path.display()
    )]
    NotExecutable {
        /// The program as given.
        program: String,
        /// The file it resolved to.
        path: PathBuf,
    },
    /// The policy refused the command.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The timeout asked for is above the runner's maximum.
    #[error(
        "a timeout of {}s is longer than the maximum of {}s: ask for at most {}s",
        requested.as_secs_f64(),
        maximum.as_secs_f64(),
        maximum.as_secs_f64()
    )]
    TimeoutTooLong {
        /// The timeout asked for.
        requested: Duration,
        /// The runner's maximum.
        maximum: Duration,
    },
    /// The working directory does not exist or is not a directory.
    #[error("working directory {} cannot be used: {source}", path.display())]
    WorkingDirectory {
        /// The directory given.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// The program was found but the system could not start it (a missing
    /// `#!` interpreter, a bad executable format, too many processes).
    #[error("could not start {program}: {source}")]
    Spawn {
        /// The program as given.
        program: String,
        /// What went wrong.
        source: io::Error,
    },
    /// The isolation tier cannot run on this machine.
    #[error(transparent)]
    Isolation(#[from] Unavailable),
    /// The runner itself failed (creating a pipe, watching the process).
    #[error("running the command failed while {context}: {source}")]
    Io {
        /// What the runner was doing.
        context: &'static str,
        /// What went wrong.
        source: io::Error,
    },
}

impl Error {
    /// The error as text for the model: `Error: ` and the message, e.g.
    /// `Error: command not found: pytest`.
    pub fn to_model_text(&self) -> String {
        format!("Error: {self}")
    }

    pub(crate) fn io(context: &'static str) -> impl FnOnce(io::Error) -> Error {
        move |source| Error::Io { context, source }
    }
}

/// Why a tier cannot run on this machine, and how to make it run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the {tier} sandbox cannot run here: {reason}; to fix: {fix}")]
pub struct Unavailable {
    tier: Tier,
    reason: String,
    fix: String,
}

impl Unavailable {
    pub(crate) fn new(tier: Tier, reason: impl Into<String>, fix: impl Into<String>) -> Self {
        Unavailable {
            tier,
            reason: reason.into(),
            fix: fix.into(),
        }
    }

    /// The tier that cannot run.
    pub fn tier(&self) -> Tier {
        self.tier
    }

    /// Why it cannot run.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// How to make it run.
    pub fn fix(&self) -> &str {
        &self.fix
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_input_and_the_fix() {
        let cases = [
            (
                Error::NotFound {
                    program: "pytest".into(),
                },
                "Error: command not found: pytest",
            ),
            (
                Error::NotExecutable {
                    program: "./run.sh".into(),
                    path: "/w/run.sh".into(),
                },
                "Error: command not executable: ./run.sh (/w/run.sh is a directory or lacks execute permission; \
                 run it through its interpreter, e.g. `sh ./run.sh`)",
            ),
            (
                Error::TimeoutTooLong {
                    requested: Duration::from_secs(900),
                    maximum: Duration::from_secs(600),
                },
                "Error: a timeout of 900s is longer than the maximum of 600s: ask for at most 600s",
            ),
            (
                Error::EmptyCommand,
                "Error: the command is empty: give the program to run as the first element",
            ),
            (
                Error::io("reading output")(io::Error::other("broken")),
                "Error: running the command failed while reading output: broken",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_model_text(), text);
        }
    }
}
