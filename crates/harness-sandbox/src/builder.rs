//! [`WorkspaceBuilder`]: deny rules and write policy, then [`Workspace`].

use std::path::{Path, PathBuf};

use crate::error::{Access, Error};
use crate::rules::{self, DEFAULT_DENY, DEFAULT_DENY_WRITE, Rules};
use crate::workspace::Workspace;

/// Configures a [`Workspace`] before opening it.
///
/// ```
/// # fn main() -> Result<(), harness_sandbox::Error> {
/// # let dir = tempfile::tempdir().expect("a temporary directory");
/// use harness_sandbox::Workspace;
///
/// let workspace = Workspace::builder(dir.path())
///     .deny("*.sqlite")         // no reading or writing of databases, at any depth
///     .deny("/secrets/")        // nor of anything in the directory `secrets` at the root
///     .deny("!fixtures/*.sqlite") // except these (a `!` lifts only rules given to `deny`)
///     .deny_write("Cargo.lock") // readable, but the agent may not change it
///     .build()?;
/// assert!(workspace.is_read_denied("data/app.sqlite"));
/// assert!(!workspace.is_read_denied("fixtures/small.sqlite"));
/// assert!(workspace.is_read_denied("secrets/db/prod.txt"));
/// assert!(!workspace.is_read_denied("src/secrets/db.txt"));
/// assert!(workspace.is_write_denied("Cargo.lock"));
/// assert!(workspace.is_read_denied(".env")); // the defaults still apply
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct WorkspaceBuilder {
    /// The root to open.
    root: PathBuf,
    /// The built-in read rules, a set of their own so that no `!` of `deny` lifts them.
    protected: Vec<String>,
    /// The built-in write rules, likewise.
    protected_write: Vec<String>,
    /// The caller's read rules.
    deny: Vec<String>,
    /// The caller's write rules.
    deny_write: Vec<String>,
    /// Read rules given as lists of their own ([`WorkspaceBuilder::deny_list`]), in order.
    lists: Vec<Vec<String>>,
    /// Whether a read may open a file that has other hard links.
    allow_hard_link_reads: bool,
    /// Whether a write may replace a file that has other hard links.
    allow_hard_link_writes: bool,
    /// Whether a write may create the target of a dangling symbolic link.
    allow_dangling_symlink_writes: bool,
}

impl WorkspaceBuilder {
    /// Starts from the default rules (see the crate documentation) and the default policy:
    /// no reading or writing through hard links, no writing through dangling symbolic links.
    pub fn new(root: impl AsRef<Path>) -> WorkspaceBuilder {
        let own = |rules: &[&str]| rules.iter().map(|rule| rule.to_string()).collect();
        WorkspaceBuilder {
            root: root.as_ref().to_owned(),
            protected: own(DEFAULT_DENY),
            protected_write: own(DEFAULT_DENY_WRITE),
            deny: Vec::new(),
            deny_write: Vec::new(),
            lists: Vec::new(),
            allow_hard_link_reads: false,
            allow_hard_link_writes: false,
            allow_dangling_symlink_writes: false,
        }
    }

    /// Refuses reading and writing paths that `rule` matches: one line of a `.gitignore`
    /// file (see "Deny rules" in the crate documentation).
    ///
    /// `secrets/` is every directory named `secrets` and everything in it, `/private` only
    /// the one at the root, `*.key` a name at any depth, `config/*.toml` a path from the
    /// root, `**` any number of directories; a `!` rule re-includes what an earlier rule
    /// given here excluded, but never a path under an excluded directory nor one a built-in
    /// rule protects.
    pub fn deny(&mut self, rule: impl Into<String>) -> &mut WorkspaceBuilder {
        self.deny.push(rule.into());
        self
    }

    /// Refuses writing (creating, replacing, removing) paths that `rule` matches; reading
    /// stays allowed. Rules as for [`WorkspaceBuilder::deny`], in a list of their own: a `!`
    /// here lifts only what an earlier `deny_write` rule excluded.
    pub fn deny_write(&mut self, rule: impl Into<String>) -> &mut WorkspaceBuilder {
        self.deny_write.push(rule.into());
        self
    }

    /// Refuses reading and writing paths that `rules` match, as a list of its own: a `!` in
    /// it re-includes only what an earlier rule of the same list excluded, never what
    /// [`WorkspaceBuilder::deny`], a built-in rule or another list refuses. For rules from a
    /// source that may add refusals but must not lift anyone else's: a repository's
    /// configuration beside the user's.
    ///
    /// ```
    /// # fn main() -> Result<(), harness_sandbox::Error> {
    /// # let dir = tempfile::tempdir().expect("a temporary directory");
    /// use harness_sandbox::Workspace;
    ///
    /// let workspace = Workspace::builder(dir.path())
    ///     .deny("*.sqlite")                          // the user's word
    ///     .deny_list(["build/", "!app.sqlite"])      // the project's: adds, lifts nothing
    ///     .build()?;
    /// assert!(workspace.is_read_denied("app.sqlite"));
    /// assert!(workspace.is_read_denied("build/out.o"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn deny_list<I, S>(&mut self, rules: I) -> &mut WorkspaceBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.lists.push(rules.into_iter().map(Into::into).collect());
        self
    }

    /// Drops every rule added so far, the defaults included.
    pub fn clear_rules(&mut self) -> &mut WorkspaceBuilder {
        self.protected.clear();
        self.protected_write.clear();
        self.deny.clear();
        self.deny_write.clear();
        self.lists.clear();
        self
    }

    /// Checks one rule as [`WorkspaceBuilder::build`] would, without building anything: for
    /// reporting a bad rule of a configuration file as soon as it is read.
    ///
    /// ```
    /// use harness_sandbox::WorkspaceBuilder;
    ///
    /// assert!(WorkspaceBuilder::check_rule("secrets/").is_ok());
    /// let error = WorkspaceBuilder::check_rule("src/[").expect_err("an unclosed class");
    /// assert!(error.to_string().starts_with("invalid deny rule `src/[`: "));
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRule`], naming the rule and what is wrong with it.
    pub fn check_rule(rule: &str) -> Result<(), Error> {
        rules::check(rule)
    }

    /// Whether a read may open a file that has more than one hard link (default: no). Another
    /// name of the same file may be outside the workspace, or one a deny rule protects (a
    /// link to `.env` named `notes.txt`), and nothing in the file says which.
    pub fn allow_hard_link_reads(&mut self, allow: bool) -> &mut WorkspaceBuilder {
        self.allow_hard_link_reads = allow;
        self
    }

    /// Whether a write may replace a file that has more than one hard link (default: no).
    /// Writes replace the file by renaming a new one over it, so the other names keep the
    /// old content either way; refusing tells the caller the link would be broken.
    pub fn allow_hard_link_writes(&mut self, allow: bool) -> &mut WorkspaceBuilder {
        self.allow_hard_link_writes = allow;
        self
    }

    /// Whether creating a file or directory may create the (missing, inside the workspace)
    /// target of a dangling symbolic link (default: no).
    pub fn allow_dangling_symlink_writes(&mut self, allow: bool) -> &mut WorkspaceBuilder {
        self.allow_dangling_symlink_writes = allow;
        self
    }

    /// Compiles the rules and opens the root.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRule`] for a rule that is not valid, then the errors of
    /// [`Workspace::new`].
    pub fn build(&self) -> Result<Workspace, Error> {
        for rule in self
            .deny
            .iter()
            .chain(&self.deny_write)
            .chain(self.lists.iter().flatten())
        {
            rules::refuse_absolute_within(rule, &self.root)?;
        }
        let mut lists: Vec<(Access, &[String])> = vec![
            (Access::Read, &self.protected),
            (Access::Write, &self.protected_write),
            (Access::Read, &self.deny),
            (Access::Write, &self.deny_write),
        ];
        lists.extend(
            self.lists
                .iter()
                .map(|list| (Access::Read, list.as_slice())),
        );
        let rules = Rules::new(&lists)?;
        Workspace::open(
            &self.root,
            rules,
            Policy {
                allow_hard_link_reads: self.allow_hard_link_reads,
                allow_hard_link_writes: self.allow_hard_link_writes,
                allow_dangling_symlink_writes: self.allow_dangling_symlink_writes,
            },
        )
    }
}

/// What a workspace allows beyond its rules; see the builder's methods of the same names.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Policy {
    /// [`WorkspaceBuilder::allow_hard_link_reads`].
    pub(crate) allow_hard_link_reads: bool,
    /// [`WorkspaceBuilder::allow_hard_link_writes`].
    pub(crate) allow_hard_link_writes: bool,
    /// [`WorkspaceBuilder::allow_dangling_symlink_writes`].
    pub(crate) allow_dangling_symlink_writes: bool,
}
