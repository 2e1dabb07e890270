//! [`WorkspaceBuilder`]: deny rules and write policy, then [`Workspace`].

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::rules::{DEFAULT_DENY, DEFAULT_DENY_WRITE, Rules};
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
///     .deny_write("Cargo.lock") // readable, but the agent may not change it
///     .build()?;
/// assert!(workspace.is_read_denied("data/app.sqlite"));
/// assert!(workspace.is_write_denied("Cargo.lock"));
/// assert!(workspace.is_read_denied(".env")); // the defaults still apply
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct WorkspaceBuilder {
    root: PathBuf,
    deny: Vec<String>,
    deny_write: Vec<String>,
    allow_hard_link_writes: bool,
    allow_dangling_symlink_writes: bool,
}

impl WorkspaceBuilder {
    /// Starts from the default rules (see the crate documentation) and the default write
    /// policy: no writing through hard links or dangling symbolic links.
    pub fn new(root: impl AsRef<Path>) -> WorkspaceBuilder {
        let own = |rules: &[&str]| rules.iter().map(|rule| rule.to_string()).collect();
        WorkspaceBuilder {
            root: root.as_ref().to_owned(),
            deny: own(DEFAULT_DENY),
            deny_write: own(DEFAULT_DENY_WRITE),
            allow_hard_link_writes: false,
            allow_dangling_symlink_writes: false,
        }
    }

    /// Refuses reading and writing paths that match `glob`.
    ///
    /// A glob without `/` matches a name at any depth (`*.key` matches `a/b/c.key`); one
    /// with `/` matches the whole workspace-relative path (`config/*.toml`, or
    /// `**/config/*.toml` for any depth). `*` does not cross `/`. A rule that matches a
    /// directory covers everything under it.
    pub fn deny(&mut self, glob: impl Into<String>) -> &mut WorkspaceBuilder {
        self.deny.push(glob.into());
        self
    }

    /// Refuses writing (creating, replacing, removing) paths that match `glob`; reading
    /// stays allowed. Globs as for [`WorkspaceBuilder::deny`].
    pub fn deny_write(&mut self, glob: impl Into<String>) -> &mut WorkspaceBuilder {
        self.deny_write.push(glob.into());
        self
    }

    /// Drops every rule added so far, the defaults included.
    pub fn clear_rules(&mut self) -> &mut WorkspaceBuilder {
        self.deny.clear();
        self.deny_write.clear();
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
    /// [`Error::InvalidRule`] for a glob that does not parse, then the errors of
    /// [`Workspace::new`].
    pub fn build(&self) -> Result<Workspace, Error> {
        let rules = Rules::new(&self.deny, &self.deny_write)?;
        Workspace::open(
            &self.root,
            rules,
            self.allow_hard_link_writes,
            self.allow_dangling_symlink_writes,
        )
    }
}
