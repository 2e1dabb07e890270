//! What confines the model's tools, as the settings decide it: the deny rules, the command
//! policy, the isolation tier, the command timeouts and the test code the tools may not
//! change.

use std::path::PathBuf;
use std::time::Duration;

use harness_agent::Verification;
use harness_exec::{Policy, Sandbox};
use harness_tools::{TestCode, TestCodeError, VerificationInputs};

use super::admit::parse_sandbox;
use super::files::{FileConfig, expand_home};
use super::overrides::Overrides;
use crate::Error;

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
    /// What `flags` and the merged `files` say confines the tools, with the project's own
    /// deny rules `project_deny` and the words of `verification`, whose checks are test
    /// code too.
    pub(super) fn from_parts(
        flags: &Overrides,
        files: &FileConfig,
        project_deny: Vec<String>,
        verification: &Option<Verification>,
    ) -> Result<ToolboxSettings, Error> {
        let allow = if flags.allow.is_empty() {
            files.allow.clone().unwrap_or_default()
        } else {
            flags.allow.clone()
        };
        let seconds = |value: Option<u64>| value.map(Duration::from_secs);
        let sandbox = match (flags.sandbox, files.sandbox.as_deref()) {
            (Some(sandbox), _) => sandbox,
            (None, Some(name)) => parse_sandbox(name)?,
            (None, None) => Sandbox::Auto,
        };
        let mut writable = files
            .writable
            .iter()
            .flatten()
            .map(|path| expand_home(path))
            .collect::<Vec<_>>();
        writable.extend(flags.writable.iter().cloned());
        Ok(ToolboxSettings {
            allow,
            deny: files.deny.clone().unwrap_or_default(),
            project_deny,
            command_timeout: seconds(flags.command_timeout.or(files.command_timeout)),
            max_command_timeout: seconds(flags.max_command_timeout),
            sandbox,
            writable,
            network: flags.network || files.network.unwrap_or(false),
            tests: files.tests.clone().unwrap_or_default(),
            verification: verification
                .as_ref()
                .map(|verification| verification.argv().to_vec())
                .unwrap_or_default(),
            allow_test_edits: flags.allow_test_edits || files.allow_test_edits.unwrap_or(false),
        })
    }

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
