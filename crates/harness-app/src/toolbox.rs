//! The confinement plan, and the toolbox built from it: what the model's tools and commands
//! may not touch, assembled once ([`Plan::check`]) from the settings' deny rules and what
//! the other parts know must be kept from commands (the undo stores, the user's
//! configuration and trust file, where git takes each submodule's configuration, hooks and
//! file system monitor from). Every front end builds its toolbox here: the same workspace
//! checks, deny rules, protected files, command policy, timeouts, environment and
//! redaction, so a call made by hand is refused exactly when the model's would be.

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness_exec::preflight::{self, Choice, Sandbox};
use harness_exec::{Confinement, EnvPolicy, Isolation, Policy, Runner};
use harness_sandbox::Workspace;
use harness_tools::{SyntaxCheck, TestCode, Toolbox};

use crate::settings::{Overrides, Settings, ToolboxSettings, WORKSPACE_FILE};
use crate::{Error, guard, paths};

/// What the harness hides from the model and its commands in the workspace `root`, for
/// the undo records ([`harness_undo::BeginOptions::hidden`], [`harness_undo::Session::hide`]):
/// whatever the deny rules `deny` (with the built-in ones: `.env`, keys) refuse to read.
/// The records of these paths stay in the harness's store, out of the workspace's `.git`,
/// where a command could read them back with `git show`.
///
/// A rule that is not valid is left out here: the toolbox refuses it on its own, and the
/// built-in rules still hide what they hide.
pub(crate) fn hidden(root: &Path, deny: &[String]) -> harness_undo::Hidden {
    let mut builder = Workspace::builder(root);
    for rule in deny {
        if harness_sandbox::WorkspaceBuilder::check_rule(rule).is_ok() {
            builder.deny(rule.clone());
        }
    }
    let workspace = match builder.build() {
        Ok(workspace) => workspace,
        // The root cannot be opened, so the rules cannot be judged: everything is kept
        // out of the workspace's copies (undo reads the store all the same).
        Err(_) => return harness_undo::Hidden::new(|_| true),
    };
    harness_undo::Hidden::new(move |path| workspace.is_read_denied(path))
}

/// [`hidden`] with the deny rules of the configuration of `root` (flags add none); the
/// built-in rules alone when it cannot be read (the command that needs it says why).
pub fn hidden_by_configuration(root: &Path) -> harness_undo::Hidden {
    let deny = Settings::resolve(root, &Overrides::default())
        .map(|settings| settings.toolbox.deny)
        .unwrap_or_default();
    hidden(root, &deny)
}

/// The toolbox over the workspace `root` (from [`crate::workspace_root`]), confined by `settings`,
/// and the isolation tier its commands (the verification command's too) run under:
/// [`Plan::check`], then [`Plan::build`].
///
/// # Errors
///
/// Those of [`Plan::check`] and [`Plan::build`].
pub fn build(root: &Path, settings: &ToolboxSettings) -> Result<(Toolbox, Choice), Error> {
    Plan::check(root, settings)?.build()
}

/// A toolbox checked for every refusal but the isolation tier's, and not built yet: what is
/// left is to choose the tier (which starts bwrap, to see that it works) and to walk for
/// the paths the deny rules hide from commands, which on a large tree take long enough that
/// `harness run` does them beside its clean-tree check.
pub struct Plan {
    workspace: Workspace,
    sandbox: Sandbox,
    confinement: Confinement,
    tests: Option<TestCode>,
    policy: Policy,
    timeout: Option<Duration>,
    max_timeout: Option<Duration>,
}

impl Plan {
    /// Checks everything that can refuse the toolbox.
    ///
    /// # Errors
    ///
    /// A deny rule that is not valid, a root that cannot be opened, one that holds the
    /// harness itself, or a `tests` glob that is not valid.
    pub fn check(root: &Path, settings: &ToolboxSettings) -> Result<Plan, Error> {
        let workspace = workspace(root, settings)?;
        guard::refuse_own_harness(&workspace)?;
        let confinement = confinement(root, settings);
        let tests = settings
            .test_code()
            .map_err(|source| Error::Tests { source })?;
        Ok(Plan {
            workspace,
            sandbox: settings.sandbox,
            confinement,
            tests,
            policy: settings.policy(),
            timeout: settings.command_timeout,
            max_timeout: settings.max_command_timeout,
        })
    }

    /// This plan, with `places` hidden from commands but for the workspace where one holds
    /// it ([`Confinement::hide_around`]): a batch's output directory, where the other tasks'
    /// working copies and results lie, and its task file. A place that does not exist when
    /// a command starts is ignored. The file tools reach nothing outside the workspace
    /// already; under the `none` tier nothing is hidden from commands.
    pub fn hide_around(mut self, places: &[PathBuf]) -> Plan {
        for place in places {
            self.confinement = self.confinement.hide_around(place);
        }
        self
    }

    /// The toolbox, its commands confined to the root, the extra writable paths and, if
    /// asked, the network, with the files the workspace's deny rules match hidden from
    /// them; and the isolation tier they run under.
    ///
    /// # Errors
    ///
    /// An explicitly asked-for isolation tier that cannot run here.
    pub fn build(self) -> Result<(Toolbox, Choice), Error> {
        let Plan {
            mut workspace,
            sandbox,
            mut confinement,
            tests,
            policy,
            timeout,
            max_timeout,
        } = self;
        // Not a `bwrap` from where these commands can write: the harness runs it unconfined.
        let choice = preflight::choose_for(sandbox, &confinement)?;
        let hidden;
        (confinement, hidden) = confinement.hide_denied(|path| workspace.is_read_denied(path));
        if hidden.truncated {
            tracing::warn!(
                "more than {} entries: deny rules hidden from commands, and refused to the file \
                 tools under the real path of a link, only in those looked at",
                harness_exec::WALK_LIMIT
            );
        }
        // What commands cannot see, the file tools refuse under every name: the target of a
        // link a rule refuses by the link's name (`.env -> config/x.env`) is otherwise
        // readable as `config/x.env`. Under `none` too: a command reads it there, but the
        // file tools' refusal is a guard of its own, the one that holds for a client of
        // `harness mcp` that uses only the file tools.
        for place in &hidden.paths {
            workspace.deny_place(place);
        }
        let isolation = Isolation::new(choice.tier, confinement);
        let mut toolbox = Toolbox::builder(workspace)
            .runner(runner().isolation(isolation))
            .policy(policy);
        if let Some(tests) = tests {
            toolbox = toolbox.protect_tests(tests);
        }
        // Every write is parsed first where its language's parser is installed, under the
        // commands' tier with the network off; without a scratch directory, unparsed.
        match SyntaxCheck::new(choice.tier) {
            Ok(syntax) => toolbox = toolbox.syntax_check(syntax),
            Err(error) => tracing::warn!("writes are not syntax-checked: {error}"),
        }
        if let Some(timeout) = timeout {
            toolbox = toolbox.timeout(timeout);
        }
        if let Some(timeout) = max_timeout {
            toolbox = toolbox.max_timeout(timeout);
        }
        Ok((toolbox.build(), choice))
    }
}

/// Makes this process adopt the commands that leave their process group (a daemon,
/// `setsid`), so they are still found and stopped. Without it they are found through their
/// environment only: cleanup is weaker, but the command still runs.
pub fn adopt_escaping_commands() {
    if let Err(error) = harness_exec::enable_subreaper() {
        tracing::warn!("cannot become a child subreaper ({error}); cleanup relies on /proc");
    }
}

/// The workspace the file tools work in, with what they may not read or write: the deny
/// rules (the project's as a list of their own) and the project's configuration file.
fn workspace(root: &Path, settings: &ToolboxSettings) -> Result<Workspace, Error> {
    let mut builder = Workspace::builder(root);
    // The model may not rewrite the configuration of its own next run.
    builder.deny_write(WORKSPACE_FILE);
    for rule in &settings.deny {
        builder.deny(rule.clone());
    }
    // A list of its own: a repository's `!` rule lifts none of the user's refusals.
    builder.deny_list(settings.project_deny.iter().cloned());
    builder.build().map_err(|source| Error::Workspace {
        root: root.to_owned(),
        source,
    })
}

/// What commands may reach beyond the workspace, and what they may not touch even there:
/// each piece the other parts know must be kept from commands, assembled here once.
fn confinement(root: &Path, settings: &ToolboxSettings) -> Confinement {
    // The configuration of the next run in this workspace stays as the user left it,
    // as its `.git` does: a command must not choose its own `verify` or `sandbox`.
    let mut confinement = Confinement::new(root)
        .protect_in_workspace(WORKSPACE_FILE)
        .network(settings.network);
    for path in &settings.writable {
        confinement = confinement.writable(path);
    }
    // The undo store stays read-only even inside a writable path (`--writable ~`).
    if let Some(stores) = harness_undo::stores_dir() {
        confinement = confinement.read_only(stores);
    }
    // So does your configuration, which says how the next run's commands are confined
    // (`sandbox = "none"`), inside `--writable ~`; one a command makes is moved aside.
    if let Some(file) = paths::user_file() {
        confinement = confinement.protect(file);
    }
    // And the trust file, which says which repository's `harness.toml` may choose the
    // model server and widen the confinement: a command must not trust one.
    if let Some(file) = paths::trust_file() {
        confinement = confinement.protect(file);
    }
    // So does where git finds each submodule's configuration, checked out or not (the
    // walk that hides denied paths finds those that exist): a `core.fsmonitor` written
    // there would run as the user at their next `git status`. Without a repository
    // there are none; the run itself says why it cannot start.
    for path in harness_undo::submodule_git_paths(root).unwrap_or_default() {
        confinement = confinement.protect(path);
    }
    // And where git's configuration has it take hooks and a file system monitor
    // from (husky's `.husky/_` in the workspace): a `post-index-change` hook there
    // runs at the user's next `git status`.
    for path in harness_undo::configured_program_paths(root).unwrap_or_default() {
        confinement = confinement.protect(path);
    }
    confinement
}

/// The runner of every command: a scrubbed environment.
fn runner() -> Runner {
    // Python writes bytecode caches keyed on a source's mtime in whole seconds and its size,
    // and an edit the harness makes within the same second that keeps the size (`a - b` to
    // `a + b`) would then run the old code. So no caches: every run reads the source.
    Runner::new().env(EnvPolicy::scrubbed().set("PYTHONDONTWRITEBYTECODE", "1"))
}
