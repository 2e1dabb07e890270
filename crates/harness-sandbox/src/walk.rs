//! The confined entry point: every operation of [`Workspace`](crate::Workspace) starts by
//! walking its candidate path here, and acts only on the handles the walk returns.
//!
//! The walk resolves a path one component at a time, starting from a handle of the root:
//!
//! - a name is looked up in the current directory handle without following symbolic links,
//!   and a directory is opened with `O_NOFOLLOW` (through cap-std), so the kernel never
//!   resolves more than one name and never follows a link on its own;
//! - a symbolic link is read and its target's components are pushed onto the work list, so
//!   links are followed here, in user space, under the same rules as the candidate;
//! - `..` pops the handle stack; popping the root is an escape;
//! - an absolute link target is an escape, even when it names a place inside the root,
//!   exactly as `openat2(RESOLVE_BENEATH)` decides.
//!
//! The result is the resolved path (no `.`, `..` or links left) together with open handles
//! of every directory on it, so the operation that follows touches exactly what was checked:
//! a link swapped in after the walk cannot redirect it.

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};
use cap_fs_ext::DirExtUtf8;
use cap_std::fs::Metadata;
use cap_std::fs_utf8::Dir;

use crate::error::{Error, MAX_PATH_LEN, escape};

/// The most symbolic links one walk follows (Linux's `MAXSYMLINKS`).
pub(crate) const MAX_LINKS: usize = 40;

/// Whether a symbolic link in the last component is followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FollowFinal {
    /// Follow it, as `open` does.
    Yes,
    /// Stop at the link itself, as `unlink` does.
    No,
}

/// Where a walk ended.
#[derive(Debug)]
pub(crate) enum End {
    /// At a directory: the last handle of [`Located::dir`].
    Dir,
    /// At an existing entry that is not a directory (or a link that was not followed):
    /// the last name, inside [`Located::dir`]. Holds the entry's own metadata.
    Entry(Metadata),
    /// The last `n` names do not exist (yet).
    Missing(usize),
}

/// A resolved path inside the workspace, with handles of the directories along it.
#[derive(Debug)]
pub(crate) struct Located<'ws> {
    /// The workspace root's handle: the bottom of the stack.
    root: &'ws Dir,
    /// Handles of the directories on the resolved path below the root, in order. Keeping
    /// them open means `..` pops back to a handle instead of looking `..` up, so a directory
    /// moved meanwhile cannot take the walk outside.
    dirs: Vec<Dir>,
    /// The resolved path relative to the root, one name per component: the directories of
    /// `dirs`, then the end's name(s) unless the path ends at a directory.
    names: Vec<String>,
    /// What the last name is.
    end: End,
    /// True when a name that came from a symbolic link's target was missing: creating the
    /// path would create the target of a dangling link.
    dangling: bool,
    /// The other spellings of the same place the walk went through: at each symbolic
    /// link it followed, the link's own path followed by what was left to walk, as
    /// names relative to the root. A deny rule that names the place by one of them
    /// (`.env` for a link `.env -> config/settings.env`, or `config/secrets.yml` through
    /// a linked directory `config -> shared/config`) refuses it as well.
    aliases: Vec<Vec<String>>,
}

impl Located<'_> {
    /// The resolved path, relative to the root: `.` for the root itself.
    pub(crate) fn relative(&self) -> Utf8PathBuf {
        if self.names.is_empty() {
            return Utf8PathBuf::from(".");
        }
        Utf8PathBuf::from(self.names.join("/"))
    }

    /// The resolved path's components, relative to the root.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// The resolved path's components, relative to the root, as a slice.
    pub(crate) fn names_slice(&self) -> &[String] {
        &self.names
    }

    /// The other spellings of the resolved path the walk went through (see the field).
    pub(crate) fn aliases(&self) -> &[Vec<String>] {
        &self.aliases
    }

    /// What the path ends at.
    pub(crate) fn end(&self) -> &End {
        &self.end
    }

    /// True when creating the path would create the target of a dangling symbolic link.
    pub(crate) fn dangling(&self) -> bool {
        self.dangling
    }

    /// The deepest directory handle: the directory itself for [`End::Dir`], the directory
    /// holding the entry for [`End::Entry`], the deepest existing one for [`End::Missing`].
    pub(crate) fn dir(&self) -> &Dir {
        self.dirs.last().unwrap_or(self.root)
    }

    /// The names below [`Located::dir`]: the entry's name, or the missing names.
    pub(crate) fn below_dir(&self) -> &[String] {
        &self.names[self.dirs.len()..]
    }
}

/// Walks `candidate` from `root` (whose path is `root_path`, used to accept absolute
/// candidates and in messages).
pub(crate) fn locate<'ws>(
    root: &'ws Dir,
    root_path: &Utf8Path,
    candidate: &str,
    follow: FollowFinal,
) -> Result<Located<'ws>, Error> {
    if candidate.len() > MAX_PATH_LEN {
        return Err(Error::TooLong {
            len: candidate.len(),
        });
    }
    if candidate.contains('\0') {
        return Err(Error::Nul {
            candidate: candidate.to_owned(),
        });
    }
    let path = Utf8Path::new(candidate);
    // An absolute candidate must be spelled under the root; the rest is walked like a
    // relative path. Any other spelling of the same place (through a link, `/proc/self/root`)
    // is refused rather than resolved outside the root.
    let relative = if path.is_absolute() {
        path.strip_prefix(root_path)
            .map_err(|_| escape(candidate, root_path))?
    } else {
        path
    };
    let mut walker = Walker {
        candidate,
        root_path,
        follow,
        work: Vec::new(),
        links_left: MAX_LINKS,
        located: Located {
            root,
            dirs: Vec::new(),
            names: Vec::new(),
            end: End::Dir,
            dangling: false,
            aliases: Vec::new(),
        },
    };
    walker.push(relative, Origin::Candidate)?;
    while let Some(Step { component, origin }) = walker.work.pop() {
        match component {
            Component::Parent => walker.parent()?,
            Component::Name(name) => walker.name(name, origin)?,
        }
    }
    Ok(walker.located)
}

/// One component still to visit.
#[derive(Debug)]
struct Step {
    component: Component,
    origin: Origin,
}

/// A component that needs visiting (`.` never does).
#[derive(Debug)]
enum Component {
    /// `..`.
    Parent,
    /// A name.
    Name(String),
}

/// Where a component comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// The path the caller gave.
    Candidate,
    /// A symbolic link's target.
    Link,
}

/// The state of one walk.
struct Walker<'ws, 'c> {
    /// The path as the caller gave it, for messages.
    candidate: &'c str,
    /// The root's path, for messages.
    root_path: &'c Utf8Path,
    /// Whether a link in the last component is followed.
    follow: FollowFinal,
    /// Components still to visit, the next one last.
    work: Vec<Step>,
    /// How many more links this walk may follow.
    links_left: usize,
    /// What has been resolved so far.
    located: Located<'ws>,
}

impl Walker<'_, '_> {
    /// Pushes the components of `path` so that its first component is visited next.
    fn push(&mut self, path: &Utf8Path, origin: Origin) -> Result<(), Error> {
        let start = self.work.len();
        for component in path.components() {
            let component = match component {
                Utf8Component::Normal(name) => Component::Name(name.to_owned()),
                Utf8Component::ParentDir => Component::Parent,
                Utf8Component::CurDir => continue,
                Utf8Component::RootDir | Utf8Component::Prefix(_) => {
                    return Err(escape(self.candidate, self.root_path));
                }
            };
            self.work.push(Step { component, origin });
        }
        self.work[start..].reverse();
        Ok(())
    }

    /// Visits `..`.
    fn parent(&mut self) -> Result<(), Error> {
        let located = &mut self.located;
        match located.end {
            End::Missing(count) => {
                // Inside the part that does not exist, `..` only cancels a missing name.
                located.names.pop();
                located.end = if count == 1 {
                    End::Dir
                } else {
                    End::Missing(count - 1)
                };
            }
            End::Entry(_) => return Err(self.not_a_directory()),
            End::Dir => {
                if located.dirs.pop().is_none() {
                    return Err(escape(self.candidate, self.root_path));
                }
                located.names.pop();
            }
        }
        Ok(())
    }

    /// Visits a name.
    fn name(&mut self, name: String, origin: Origin) -> Result<(), Error> {
        match self.located.end {
            End::Missing(count) => {
                self.missing(name, origin, count);
                return Ok(());
            }
            End::Entry(_) => return Err(self.not_a_directory()),
            End::Dir => {}
        }
        let dir = self.located.dir();
        let metadata = match dir.symlink_metadata(&name) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                self.missing(name, origin, 0);
                return Ok(());
            }
            Err(error) => return Err(Error::io(self.candidate, error)),
        };
        let last = self.work.is_empty();
        if metadata.is_symlink() && (self.follow == FollowFinal::Yes || !last) {
            return self.follow_link(&name);
        }
        if metadata.is_dir() {
            let handle = dir
                .open_dir_nofollow(&name)
                .map_err(|error| Error::io(self.candidate, error))?;
            self.located.dirs.push(handle);
        } else {
            self.located.end = End::Entry(metadata);
        }
        self.located.names.push(name);
        Ok(())
    }

    /// Records a name that does not exist, after `count` others that do not either.
    fn missing(&mut self, name: String, origin: Origin, count: usize) {
        self.located.names.push(name);
        self.located.end = End::Missing(count + 1);
        self.located.dangling |= origin == Origin::Link;
    }

    /// Replaces the link `name` of the current directory by its target's components,
    /// recording the spelling through the link.
    fn follow_link(&mut self, name: &str) -> Result<(), Error> {
        self.links_left = self
            .links_left
            .checked_sub(1)
            .ok_or_else(|| Error::SymlinkLoop {
                candidate: self.candidate.to_owned(),
            })?;
        let alias = self.spelling_through(name);
        self.located.aliases.push(alias);
        // The raw target: cap-std's `read_link` would refuse an absolute one with its own
        // message, and ours names the candidate.
        let target = self
            .located
            .dir()
            .as_cap_std()
            .read_link_contents(name)
            .map_err(|error| Error::io(self.candidate, error))?;
        let target = Utf8PathBuf::try_from(target).map_err(|error| Error::NotUtf8 {
            path: error.as_path().to_string_lossy().into_owned(),
        })?;
        self.push(&target, Origin::Link)
    }

    /// The path through the link `name` of the current directory: the names resolved so
    /// far, the link, then what is left to walk, with each `..` taking away the name
    /// before it (none at the root: the walk itself refuses a path that climbs above it).
    fn spelling_through(&self, name: &str) -> Vec<String> {
        let mut names = self.located.names.clone();
        names.push(name.to_owned());
        for step in self.work.iter().rev() {
            match &step.component {
                Component::Name(next) => names.push(next.clone()),
                Component::Parent => {
                    names.pop();
                }
            }
        }
        names
    }

    fn not_a_directory(&self) -> Error {
        Error::NotADirectory {
            candidate: self.candidate.to_owned(),
        }
    }
}
