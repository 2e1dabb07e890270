//! [`Verification`]: the command whose exit status decides whether a run succeeded.

use std::time::Duration;

use harness_schema::ToolName;
use harness_tools::{Detail, Status, ToolResult, Toolbox};
use serde_json::json;

/// The run's verification command, such as `python3 -m unittest -q` or `cargo test`.
///
/// It is written as one would type it and split into words with the rules of a POSIX shell
/// (quotes and backslashes), but it never runs in a shell: pipes, `&&`, `$VAR` and globs mean
/// nothing. It runs through the toolbox's `run_command`, so through the same runner, command
/// policy, output limit and redaction as the model's own commands.
///
/// ```
/// use harness_agent::Verification;
///
/// let verification = Verification::parse("python3 -m unittest -q")?;
/// assert_eq!(verification.argv(), ["python3", "-m", "unittest", "-q"]);
/// let quoted = Verification::parse(r#"pytest -k "not slow""#)?;
/// assert_eq!(quoted.argv(), ["pytest", "-k", "not slow"]);
/// assert!(Verification::parse("pytest 'unclosed").is_err());
/// # Ok::<(), harness_agent::VerificationError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verification {
    /// The command as given.
    command: String,
    /// Its words.
    argv: Vec<String>,
    /// How long one run may take.
    timeout: Duration,
}

/// A verification command that cannot be split into words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerificationError {
    /// The command is empty, or only blanks.
    #[error(
        "the verification command is empty: give the command that checks the task, e.g. \"cargo test\""
    )]
    Empty,
    /// A quote is not closed, or the command ends with a lone backslash.
    #[error(
        "the verification command {command:?} cannot be split into words ({reason}): close its quotes"
    )]
    Unbalanced {
        /// The command as given.
        command: String,
        /// What the splitter reported.
        reason: String,
    },
}

impl Verification {
    /// The default time one run of the command may take: 10 minutes.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

    /// Splits `command` into words with shell rules.
    ///
    /// # Errors
    ///
    /// [`VerificationError`] for an empty command or unbalanced quotes.
    pub fn parse(command: &str) -> Result<Verification, VerificationError> {
        let argv = shell_words::split(command).map_err(|error| VerificationError::Unbalanced {
            command: command.to_owned(),
            reason: error.to_string(),
        })?;
        if argv.is_empty() {
            return Err(VerificationError::Empty);
        }
        Ok(Verification {
            command: command.trim().to_owned(),
            argv,
            timeout: Verification::DEFAULT_TIMEOUT,
        })
    }

    /// The same command, with runs limited to `timeout` (whole seconds, at least 1; the
    /// toolbox may lower it to its own maximum).
    pub fn with_timeout(mut self, timeout: Duration) -> Verification {
        self.timeout = timeout;
        self
    }

    /// The command as given.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Its words.
    pub fn argv(&self) -> &[String] {
        &self.argv
    }

    /// How long one run may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The arguments of the `run_command` call that runs it.
    pub(crate) fn call_arguments(&self) -> serde_json::Value {
        json!({"argv": self.argv, "timeout_s": self.timeout.as_secs().max(1)})
    }

    /// Runs the command through `toolbox`.
    pub(crate) fn run(&self, toolbox: &Toolbox, limit: Duration) -> ToolResult {
        toolbox.call_within(ToolName::RunCommand.as_str(), &self.call_arguments(), limit)
    }
}

/// True if and only if `result` is a command that ran and exited 0.
pub(crate) fn passed(result: &ToolResult) -> bool {
    matches!(
        result.summary().detail(),
        Detail::Ran {
            status: Status::Exited(0),
            ..
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_commands_are_refused() {
        assert_eq!(Verification::parse("  "), Err(VerificationError::Empty));
        assert_eq!(Verification::parse(""), Err(VerificationError::Empty));
    }

    #[test]
    fn the_error_names_the_command() {
        let error = Verification::parse("pytest 'x").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("the verification command \"pytest 'x\" cannot be split into words")
        );
    }

    #[test]
    fn the_timeout_goes_to_the_call_in_whole_seconds() {
        let verification = Verification::parse(" cargo test ").unwrap();
        assert_eq!(verification.command(), "cargo test");
        assert_eq!(verification.timeout(), Verification::DEFAULT_TIMEOUT);
        assert_eq!(
            verification.call_arguments(),
            json!({"argv": ["cargo", "test"], "timeout_s": 600})
        );
        let short = verification.with_timeout(Duration::from_millis(10));
        assert_eq!(short.call_arguments()["timeout_s"], 1);
    }
}
