//! [`Workspace`]: the root, path resolution, and the checks every operation shares.
//!
//! The file operations live in their own modules (`read`, `write`, `create`, `remove`),
//! each an `impl Workspace` block built on [`crate::walk`].

use std::io;
use std::path::{Component, Path};

use camino::{Utf8Path, Utf8PathBuf};
use cap_fs_ext::MetadataExt;
use cap_std::fs_utf8::Dir;

use crate::builder::{Policy, WorkspaceBuilder};
use crate::error::{Access, Error};
use crate::rules::{Kind, Rules};
use crate::walk::{self, End, FollowFinal, Located};

/// A directory that model-supplied paths are confined to.
///
/// Build one with [`Workspace::new`] (the default rules) or [`Workspace::builder`]. Every
/// method takes a candidate path as the model sent it: relative paths are taken from the
/// root, absolute ones must be spelled under [`Workspace::root`]. See the crate
/// documentation for the full rules.
#[derive(Debug)]
pub struct Workspace {
    /// The canonical root, for messages, absolute results and absolute candidates.
    root: Utf8PathBuf,
    /// The root's handle: every operation starts here, never from `root`.
    pub(crate) dir: Dir,
    /// The deny rules.
    rules: Rules,
    /// Hard links and dangling links: what is allowed beyond the rules.
    policy: Policy,
    /// The places refused under every name ([`Workspace::deny_place`]), as
    /// workspace-relative names.
    places: Vec<Vec<String>>,
}

impl Workspace {
    /// Opens the workspace at `root` with the default rules.
    ///
    /// The root must exist and be a directory (it is never created); it is canonicalized,
    /// and must be valid UTF-8.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRoot`] when the root does not exist or is not a directory,
    /// [`Error::NotUtf8`] when its canonical path is not UTF-8, [`Error::Io`] otherwise.
    pub fn new(root: impl AsRef<Path>) -> Result<Workspace, Error> {
        Workspace::builder(root).build()
    }

    /// Starts configuring a workspace at `root`: deny rules, hard links, dangling links.
    pub fn builder(root: impl AsRef<Path>) -> WorkspaceBuilder {
        WorkspaceBuilder::new(root)
    }

    /// Opens the root; called by [`WorkspaceBuilder::build`].
    pub(crate) fn open(root: &Path, rules: Rules, policy: Policy) -> Result<Workspace, Error> {
        let invalid = |reason| Error::InvalidRoot {
            root: root.to_owned(),
            reason,
        };
        let canonical = std::fs::canonicalize(root).map_err(|error| match error.kind() {
            io::ErrorKind::NotFound => invalid("it does not exist (a workspace is never created)"),
            _ => Error::Io {
                candidate: root.display().to_string(),
                source: error,
            },
        })?;
        let canonical = Utf8PathBuf::try_from(canonical).map_err(|error| Error::NotUtf8 {
            path: error.as_path().to_string_lossy().into_owned(),
        })?;
        let dir =
            Dir::open_ambient_dir(&canonical, cap_std::ambient_authority()).map_err(|error| {
                match error.kind() {
                    io::ErrorKind::NotADirectory => invalid("it is not a directory"),
                    _ => Error::io(canonical.as_str(), error),
                }
            })?;
        Ok(Workspace {
            root: canonical,
            dir,
            rules,
            policy,
            places: Vec::new(),
        })
    }

    /// The canonical absolute path of the root.
    pub fn root(&self) -> &Utf8Path {
        &self.root
    }

    /// The absolute path `candidate` names inside the workspace, with every `.`, `..` and
    /// symbolic link resolved.
    ///
    /// A path that does not exist yet resolves through its deepest existing ancestor; `..`
    /// in the missing part only cancels a missing name and cannot climb out. Deny rules are
    /// not consulted (use [`Workspace::check`]).
    ///
    /// The answer describes the file system as it was during the call; the file operations
    /// do not rely on it, they walk the path again with open handles.
    ///
    /// # Errors
    ///
    /// [`Error::Escape`] when the path leads outside the root at any point, plus the errors
    /// of a walk: [`Error::Nul`], [`Error::TooLong`], [`Error::NotADirectory`],
    /// [`Error::SymlinkLoop`], [`Error::NotUtf8`], [`Error::Io`].
    pub fn resolve(&self, candidate: &str) -> Result<Utf8PathBuf, Error> {
        let located = self.locate(candidate, FollowFinal::Yes)?;
        Ok(self.absolute(&located))
    }

    /// The normalized workspace-relative path of `candidate` (`.` for the root), as
    /// [`Workspace::resolve`] resolves it: what a diff header or a message should show.
    ///
    /// # Errors
    ///
    /// Those of [`Workspace::resolve`].
    pub fn relative(&self, candidate: &str) -> Result<Utf8PathBuf, Error> {
        Ok(self.locate(candidate, FollowFinal::Yes)?.relative())
    }

    /// Resolves `candidate` like [`Workspace::resolve`] and applies every check the
    /// operations make for `access`: the deny rules, the hard-link refusal, and for
    /// [`Access::Write`] the dangling-link refusal. Returns the absolute path.
    ///
    /// For code that must hand a path to something else (a directory walker, a command)
    /// and wants the same refusals the workspace's own operations give.
    ///
    /// # Errors
    ///
    /// Those of [`Workspace::resolve`], plus [`Error::Denied`], [`Error::HardLink`] and
    /// [`Error::DanglingSymlink`].
    pub fn check(&self, candidate: &str, access: Access) -> Result<Utf8PathBuf, Error> {
        let located = self.locate_for(candidate, access)?;
        Ok(self.absolute(&located))
    }

    /// Refuses reading and writing the place `path` (a file, or a directory with
    /// everything under it) under every name, as a deny rule refuses what it matches: for
    /// a place the rules refuse only under another of its names, such as the target of a
    /// link whose own name a rule matches (`.env -> config/settings.env`), which the
    /// operations would otherwise read under its own name. A tool that finds such places
    /// (harness-exec's `hidden_in_workspace` walk does) adds them here.
    ///
    /// `path` is spelled as the operations take it (relative to the root, or absolute under
    /// it) and resolved as they resolve it: the place is where its links lead. The root
    /// itself, a path that leads outside it or one that cannot be walked is ignored.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let directory = tempfile::tempdir()?;
    /// # let root = directory.path();
    /// std::fs::create_dir(root.join("config"))?;
    /// std::fs::write(root.join("config/settings.env"), "TOKEN=1")?;
    /// std::os::unix::fs::symlink("config/settings.env", root.join(".env"))?;
    /// let mut workspace = harness_sandbox::Workspace::new(root)?;
    /// assert!(workspace.read_to_string(".env").is_err());
    /// assert!(workspace.read_to_string("config/settings.env").is_ok());
    /// workspace.deny_place("config/settings.env");
    /// assert!(workspace.read_to_string("config/settings.env").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn deny_place(&mut self, path: impl AsRef<Path>) {
        let Some(candidate) = path.as_ref().to_str() else {
            return;
        };
        let Ok(located) = self.locate(candidate, FollowFinal::Yes) else {
            return;
        };
        let names = located.names_slice().to_vec();
        if !names.is_empty() {
            self.places.push(names);
        }
    }

    /// True if and only if a read rule refuses `path`: a rule refuses the path or one of
    /// its ancestors, it is or lies under a place [`Workspace::deny_place`] refuses, or
    /// the path cannot be judged as a workspace-relative path (it has a
    /// `..` component, or is absolute and not under [`Workspace::root`]).
    ///
    /// `path` is workspace-relative, or absolute under the root. It is matched as written:
    /// symbolic links are not followed and nothing is looked up, so whether its last name
    /// is a directory is not known, and the path is refused if a rule refuses it as either
    /// (`secrets/` refuses `secrets`). The root itself is never refused. To judge a path
    /// as the operations do, resolved, use [`Workspace::check`].
    pub fn is_read_denied(&self, path: impl AsRef<Path>) -> bool {
        self.is_denied(Access::Read, path.as_ref())
    }

    /// True if and only if a write rule refuses `path`; otherwise as
    /// [`Workspace::is_read_denied`]. Every read rule is also a write rule.
    pub fn is_write_denied(&self, path: impl AsRef<Path>) -> bool {
        self.is_denied(Access::Write, path.as_ref())
    }

    /// Refuses a workspace that contains `path`.
    ///
    /// Meant for the harness's own source tree and executable at startup: an agent that can
    /// edit them can rewrite its own rules. `path` is canonicalized first; a path that does
    /// not exist contains nothing to protect and passes.
    ///
    /// # Errors
    ///
    /// [`Error::Within`] when `path` is the root or lies under it, [`Error::Io`] when it
    /// cannot be canonicalized for another reason than not existing.
    pub fn ensure_not_within(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        let canonical = match std::fs::canonicalize(path) {
            Ok(canonical) => canonical,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(error) => {
                return Err(Error::Io {
                    candidate: path.display().to_string(),
                    source: error,
                });
            }
        };
        if canonical.starts_with(&self.root) {
            return Err(Error::Within {
                path: canonical,
                root: self.root.clone(),
            });
        }
        Ok(())
    }

    /// Walks `candidate` from the root.
    pub(crate) fn locate(
        &self,
        candidate: &str,
        follow: FollowFinal,
    ) -> Result<Located<'_>, Error> {
        walk::locate(&self.dir, &self.root, candidate, follow)
    }

    /// Walks `candidate`, following a final link, and applies the checks for `access`.
    pub(crate) fn locate_for(&self, candidate: &str, access: Access) -> Result<Located<'_>, Error> {
        let located = self.locate(candidate, FollowFinal::Yes)?;
        self.apply_rules(&located, candidate, access)?;
        if let End::Entry(metadata) = located.end() {
            self.refuse_hard_link(candidate, access, metadata.nlink())?;
        }
        if access == Access::Write {
            self.refuse_dangling_write(&located, candidate)?;
        }
        Ok(located)
    }

    /// Refuses `access` to a located path when a deny rule covers it, under its resolved
    /// name or any spelling of it through a symbolic link the walk followed.
    pub(crate) fn apply_rules(
        &self,
        located: &Located<'_>,
        candidate: &str,
        access: Access,
    ) -> Result<(), Error> {
        let kind = match located.end() {
            End::Dir => Kind::Dir,
            End::Entry(_) => Kind::NotDir,
            End::Missing(_) => Kind::Unknown,
        };
        self.refuse_denied(candidate, access, located.names_slice(), kind)?;
        for alias in located.aliases() {
            self.refuse_denied(candidate, access, alias, kind)?;
        }
        Ok(())
    }

    /// Refuses `access` to the path made of `names` (a last name of `kind`) when a deny
    /// rule covers it; `candidate` is what the message names.
    pub(crate) fn refuse_denied(
        &self,
        candidate: &str,
        access: Access,
        names: &[String],
        kind: Kind,
    ) -> Result<(), Error> {
        if let Some(rule) = self.rules.refusing(access, names, kind) {
            return Err(Error::Denied {
                candidate: candidate.to_owned(),
                rule: rule.to_owned(),
                access,
            });
        }
        if self.is_denied_place(names) {
            return Err(Error::DeniedUnderOtherName {
                candidate: candidate.to_owned(),
                access,
            });
        }
        Ok(())
    }

    /// True if and only if the path of `names` is a place [`Workspace::deny_place`]
    /// refuses, or is under one.
    fn is_denied_place<S: AsRef<str>>(&self, names: &[S]) -> bool {
        self.places.iter().any(|place| {
            place.len() <= names.len()
                && place
                    .iter()
                    .zip(names)
                    .all(|(place, name)| place == name.as_ref())
        })
    }

    /// Refuses `access` to a file (not a directory) that has `links` hard links, unless
    /// configured: another of its names may be outside the workspace or protected.
    pub(crate) fn refuse_hard_link(
        &self,
        candidate: &str,
        access: Access,
        links: u64,
    ) -> Result<(), Error> {
        let allowed = match access {
            Access::Read => self.policy.allow_hard_link_reads,
            Access::Write => self.policy.allow_hard_link_writes,
        };
        if links > 1 && !allowed {
            return Err(Error::HardLink {
                candidate: candidate.to_owned(),
                links,
                access,
            });
        }
        Ok(())
    }

    /// Refuses writing through a dangling symbolic link, unless configured.
    fn refuse_dangling_write(&self, located: &Located<'_>, candidate: &str) -> Result<(), Error> {
        if located.dangling() && !self.policy.allow_dangling_symlink_writes {
            return Err(Error::DanglingSymlink {
                candidate: candidate.to_owned(),
                target: located.relative(),
            });
        }
        Ok(())
    }

    fn absolute(&self, located: &Located<'_>) -> Utf8PathBuf {
        let mut path = self.root.clone();
        path.extend(located.names());
        path
    }

    fn is_denied(&self, access: Access, path: &Path) -> bool {
        // Outside the root, an absolute path keeps its root component, refused below.
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        let mut names = Vec::new();
        for component in relative.components() {
            match component {
                Component::Normal(name) => names.push(name.to_string_lossy()),
                Component::CurDir => {}
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => return true,
            }
        }
        self.rules.refusing(access, &names, Kind::Unknown).is_some() || self.is_denied_place(&names)
    }
}
