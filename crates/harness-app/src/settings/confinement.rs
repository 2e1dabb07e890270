//! What confines the model's tools, as the settings decide it: the deny rules, the command
//! policy, the isolation tier, the command timeouts and the test code the tools may not
//! change.

use std::path::PathBuf;
use std::time::Duration;

use harness_exec::{Policy, Sandbox};
use harness_tools::{TestCode, TestCodeError, VerificationInputs};

/// What confines the model's tools: the deny rules, the command policy and the command
/// timeouts. [`crate::toolbox::build`] turns it into the toolbox, the same way for every command.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolboxSettings {
    /// Programs allowed to run; empty for the blocklist.
    pub allow: Vec<String>,
    /// Files the tools may neither read nor write, beyond the built-in rules: the user's.
    pub deny: Vec<String>,
    /// The project's deny rules, a list of their own: its `!` lifts none of the user's.
    pub project_deny: Vec<String>,
    /// The timeout of a command whose call sets none; `None` for the toolbox's default.
    pub command_timeout: Option<Duration>,
    /// The most a call may ask for; `None` for the toolbox's default.
    pub max_command_timeout: Option<Duration>,
    /// The isolation tier commands run under: `auto` unless asked otherwise.
    pub sandbox: Sandbox,
    /// Paths commands may write beyond the workspace (build caches).
    pub writable: Vec<PathBuf>,
    /// Whether commands may use the network.
    pub network: bool,
    /// Globs of test files beyond the conventional ones.
    pub tests: Vec<String>,
    /// The verification command's words: the checks it runs are test code too
    /// ([`TestCode::with_checks_run_by`]).
    pub verification: Vec<String>,
    /// Whether the file tools may change test code.
    pub allow_test_edits: bool,
}

impl ToolboxSettings {
    /// The test code the file tools may not change: `None` when they may.
    ///
    /// # Errors
    ///
    /// A `tests` glob that is not valid.
    pub fn test_code(&self) -> Result<Option<TestCode>, TestCodeError> {
        if self.allow_test_edits {
            return Ok(None);
        }
        let globs: Vec<&str> = self.tests.iter().map(String::as_str).collect();
        Ok(Some(
            TestCode::new(&globs)?.with_checks_run_by(&self.verification),
        ))
    }

    /// What the verification loads besides the code under test: the conventions, the
    /// configuration's test globs, and what the verification command names. Judged at each
    /// passing verification whether or not the file tools may change tests.
    pub fn verification_inputs(&self) -> VerificationInputs {
        let globs: Vec<&str> = self.tests.iter().map(String::as_str).collect();
        // A glob that does not parse was refused with the configuration; the conventions
        // still hold without it.
        let tests = TestCode::new(&globs).unwrap_or_else(|_| TestCode::conventional());
        VerificationInputs::new(tests, &self.verification)
    }

    /// The command policy: the allowlist if one was given, else the blocklist.
    pub fn policy(&self) -> Policy {
        if self.allow.is_empty() {
            Policy::blocklist()
        } else {
            Policy::allowlist(self.allow.clone())
        }
    }
}
