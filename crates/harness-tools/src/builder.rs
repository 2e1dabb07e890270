//! [`ToolboxBuilder`]: how a [`Toolbox`] is configured.

use std::time::Duration;

use harness_exec::{Policy, Redactor, Runner};
use harness_sandbox::Workspace;

use crate::limits::Limits;
use crate::syntax::SyntaxCheck;
use crate::test_code::TestCode;
use crate::toolbox::Toolbox;

/// Configures a [`Toolbox`].
///
/// ```
/// use std::time::Duration;
/// use harness_exec::Policy;
/// use harness_sandbox::Workspace;
/// use harness_tools::{Limits, Toolbox};
///
/// # let directory = tempfile::tempdir().expect("a temporary directory");
/// let workspace = Workspace::new(directory.path()).expect("an existing directory");
/// let mut limits = Limits::default();
/// limits.list_entries = 50;
/// let toolbox = Toolbox::builder(workspace)
///     .policy(Policy::allowlist(["cargo", "git"]))
///     .timeout(Duration::from_secs(60))
///     .max_timeout(Duration::from_secs(300))
///     .limits(limits)
///     .build();
/// # let _ = toolbox;
/// ```
#[derive(Debug)]
pub struct ToolboxBuilder {
    /// The workspace the toolbox will own.
    workspace: Workspace,
    /// The runner before the settings below are applied.
    runner: Runner,
    /// The command policy.
    policy: Policy,
    /// The timeout of a command whose call sets none.
    timeout: Duration,
    /// The longest timeout a call gets.
    max_timeout: Duration,
    /// Bytes of a command's output kept.
    output_limit: usize,
    /// Applied to every result.
    redactor: Redactor,
    /// Caps on what one call shows.
    limits: Limits,
    /// Test code the file tools may not change.
    tests: Option<TestCode>,
    /// Parses what the file tools write.
    syntax: Option<SyntaxCheck>,
}

impl ToolboxBuilder {
    /// Starts from the defaults of [`Toolbox::new`].
    pub fn new(workspace: Workspace) -> ToolboxBuilder {
        ToolboxBuilder {
            workspace,
            runner: Runner::new(),
            policy: Policy::blocklist(),
            timeout: Duration::from_secs(30),
            max_timeout: Duration::from_secs(600),
            output_limit: 8 * 1024,
            redactor: Redactor::from_vars(std::env::vars_os()),
            limits: Limits::default(),
            tests: None,
            syntax: None,
        }
    }

    /// The runner commands go through, for what this builder does not set (its environment,
    /// resource limits and isolation). The policy, timeouts and output limit of this builder
    /// replace the runner's own when the toolbox is built. The runner redacts its output with
    /// its own redactor; the toolbox then redacts it again, with this builder's.
    pub fn runner(mut self, runner: Runner) -> ToolboxBuilder {
        self.runner = runner;
        self
    }

    /// Which commands may run (default: [`Policy::blocklist`]).
    pub fn policy(mut self, policy: Policy) -> ToolboxBuilder {
        self.policy = policy;
        self
    }

    /// The timeout of a `run_command` call that sets none (default 30 s; at most the maximum).
    pub fn timeout(mut self, timeout: Duration) -> ToolboxBuilder {
        self.timeout = timeout;
        self
    }

    /// The longest a command may run (default 600 s): a call asking for more gets this, and
    /// is told so.
    pub fn max_timeout(mut self, max_timeout: Duration) -> ToolboxBuilder {
        self.max_timeout = max_timeout;
        self
    }

    /// Bytes of a command's output shown (default 8 KiB): the first and the last half, the
    /// middle of a longer output cut.
    pub fn output_limit(mut self, bytes: usize) -> ToolboxBuilder {
        self.output_limit = bytes;
        self
    }

    /// What every result is redacted with, command output included (default: the built-in
    /// patterns and the values of this process's secret-named variables,
    /// `Redactor::from_vars(std::env::vars_os())`).
    pub fn redactor(mut self, redactor: Redactor) -> ToolboxBuilder {
        self.redactor = redactor;
        self
    }

    /// Caps on what one call shows or reads (default: [`Limits::default`]).
    pub fn limits(mut self, limits: Limits) -> ToolboxBuilder {
        self.limits = limits;
        self
    }

    /// Refuses every `write_file` and `edit_file` that would change `tests` (default: the
    /// tools may change any file the workspace lets them write). Commands are not
    /// stopped by this: they can change whatever the isolation tier lets them.
    pub fn protect_tests(mut self, tests: TestCode) -> ToolboxBuilder {
        self.tests = Some(tests);
        self
    }

    /// Parses the new text of every `write_file` and `edit_file` of a language `syntax`
    /// knows, and refuses one that does not parse where the file did (default: no check).
    /// A check whose scratch directory is inside the workspace is not used: its parsers
    /// never run there.
    pub fn syntax_check(mut self, syntax: SyntaxCheck) -> ToolboxBuilder {
        self.syntax = Some(syntax);
        self
    }

    /// The toolbox.
    pub fn build(self) -> Toolbox {
        let root = self.workspace.root().as_std_path();
        let syntax = self
            .syntax
            .filter(|syntax| !syntax.scratch().starts_with(root));
        let runner = self
            .runner
            .policy(self.policy)
            .timeout(self.timeout)
            .max_timeout(self.max_timeout)
            .output_limit(self.output_limit)
            // The runner's markers are the toolbox's, so that a value redacted from a
            // command's output can be written back by the file tools.
            .share_markers(&self.redactor);
        Toolbox {
            workspace: self.workspace,
            runner,
            timeout: self.timeout,
            max_timeout: self.max_timeout,
            redactor: self.redactor,
            limits: self.limits,
            tests: self.tests,
            syntax,
        }
    }
}
