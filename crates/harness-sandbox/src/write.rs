//! Confined, atomic writing: [`Workspace::write`] and [`Workspace::create_new`].
//!
//! Both write the contents to a temporary file in the target's directory and then publish
//! it under the target's name in one step, so no reader ever sees half a file and a crash
//! leaves the old file (or none) in place.

use std::io::{self, Write};
use std::process;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{OpenOptions, Permissions};
use cap_std::fs_utf8::Dir;

use crate::error::{Access, Error};
use crate::walk::End;
use crate::workspace::Workspace;

impl Workspace {
    /// Replaces the contents of the file at `candidate`, or creates it; its directory must
    /// exist.
    ///
    /// Atomic: the contents go to a temporary file in the same directory, which is then
    /// renamed over the target. An existing file keeps its permissions, and is replaced even
    /// when they make it read-only, as an editor's atomic save does. A symbolic link at
    /// `candidate` is followed, and its target is replaced.
    ///
    /// # Errors
    ///
    /// Those of [`Workspace::check`] for [`Access::Write`]; [`Error::NotFound`] when the
    /// directory does not exist; an [`Error::Io`] of kind `IsADirectory` for a directory.
    pub fn write(&self, candidate: &str, contents: impl AsRef<[u8]>) -> Result<(), Error> {
        let located = self.locate_for(candidate, Access::Write)?;
        let permissions = match located.end() {
            End::Entry(metadata) => Some(metadata.permissions()),
            End::Missing(1) => None,
            End::Missing(_) => {
                return Err(Error::NotFound {
                    candidate: candidate.to_owned(),
                });
            }
            End::Dir => {
                return Err(Error::io_message(
                    candidate,
                    io::ErrorKind::IsADirectory,
                    "is a directory",
                ));
            }
        };
        let name = &located.below_dir()[0];
        publish(
            located.dir(),
            name,
            contents.as_ref(),
            permissions,
            Publish::Replace,
        )
        .map_err(|error| Error::io(candidate, error))
    }

    /// Creates the file at `candidate` with `contents`, failing if anything exists there;
    /// its directory must exist (see [`Workspace::create_dir_all`]).
    ///
    /// Atomic: the contents go to a temporary file that is then hard-linked under the new
    /// name, which fails if the name was taken meanwhile.
    ///
    /// # Errors
    ///
    /// Those of [`Workspace::check`] for [`Access::Write`]; an [`Error::Io`] of kind
    /// `AlreadyExists` when something exists at `candidate`; [`Error::NotFound`] when the
    /// directory does not exist.
    pub fn create_new(&self, candidate: &str, contents: impl AsRef<[u8]>) -> Result<(), Error> {
        let located = self.locate_for(candidate, Access::Write)?;
        match located.end() {
            End::Missing(1) => {}
            End::Missing(_) => {
                return Err(Error::NotFound {
                    candidate: candidate.to_owned(),
                });
            }
            End::Entry(_) | End::Dir => {
                return Err(Error::io_message(
                    candidate,
                    io::ErrorKind::AlreadyExists,
                    "already exists; edit it or write it instead",
                ));
            }
        }
        let name = &located.below_dir()[0];
        publish(
            located.dir(),
            name,
            contents.as_ref(),
            None,
            Publish::NoClobber,
        )
        .map_err(|error| Error::io(candidate, error))
    }
}

/// How a finished temporary file takes the target's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Publish {
    /// Rename it over the target, replacing whatever is there.
    Replace,
    /// Hard-link it under the target's name, failing if the name is taken, then remove it.
    NoClobber,
}

/// Writes `contents` to a temporary file in `dir`, then publishes it as `name`. The
/// temporary file never outlives the call.
pub(crate) fn publish(
    dir: &Dir,
    name: &str,
    contents: &[u8],
    permissions: Option<Permissions>,
    how: Publish,
) -> io::Result<()> {
    let temporary = temporary_name();
    let result = write_new(dir, &temporary, contents, permissions).and_then(|()| match how {
        Publish::Replace => dir.rename(&temporary, dir, name),
        Publish::NoClobber => dir.hard_link(&temporary, dir, name),
    });
    // After a rename there is nothing left to remove, and trying is harmless.
    let _ = dir.remove_file(&temporary);
    result
}

/// Creates `name` in `dir` (it must not exist), writes and flushes `contents` to disk.
fn write_new(
    dir: &Dir,
    name: &str,
    contents: &[u8],
    permissions: Option<Permissions>,
) -> io::Result<()> {
    let mut file = dir.open_with(name, OpenOptions::new().write(true).create_new(true))?;
    // Set before writing: the bits are those of the file being replaced, and setting them
    // on our own descriptor works even when they make the file read-only.
    if let Some(permissions) = permissions {
        file.set_permissions(permissions)?;
    }
    file.write_all(contents)?;
    file.sync_all()
}

/// A name no other writer uses: this process's id and a counter, hidden by a leading dot.
fn temporary_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".harness-sandbox-{}-{count}.tmp", process::id())
}

#[cfg(test)]
mod tests {
    use camino::Utf8PathBuf;

    use super::*;

    fn temporary_dir() -> (tempfile::TempDir, Dir) {
        let temporary = tempfile::tempdir().expect("a temporary directory");
        let path = Utf8PathBuf::try_from(temporary.path().to_owned()).expect("UTF-8 temp dir");
        let dir = Dir::open_ambient_dir(&path, cap_std::ambient_authority()).expect("open it");
        (temporary, dir)
    }

    fn names(dir: &Dir) -> Vec<String> {
        let mut names: Vec<String> = dir
            .entries()
            .expect("list")
            .map(|entry| entry.expect("entry").file_name().expect("UTF-8"))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn temporary_names_are_hidden_unique_and_name_this_process() {
        let (first, second) = (temporary_name(), temporary_name());
        assert_ne!(first, second);
        let prefix = format!(".harness-sandbox-{}-", process::id());
        assert!(
            first.starts_with(&prefix) && first.ends_with(".tmp"),
            "{first}"
        );
    }

    #[test]
    fn a_failed_rename_leaves_no_temporary_file() {
        let (_temporary, dir) = temporary_dir();
        dir.create_dir("target").expect("a directory in the way");
        dir.write("target/inside", "x")
            .expect("not empty, so rename cannot replace it");
        let error = publish(&dir, "target", b"new", None, Publish::Replace).expect_err("rename");
        assert_ne!(error.kind(), io::ErrorKind::NotFound, "{error}");
        assert_eq!(names(&dir), ["target"]);
    }

    #[test]
    fn a_taken_name_refuses_no_clobber_and_leaves_no_temporary_file() {
        let (_temporary, dir) = temporary_dir();
        dir.write("taken", "old").expect("a file");
        let error = publish(&dir, "taken", b"new", None, Publish::NoClobber).expect_err("taken");
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(names(&dir), ["taken"]);
        assert_eq!(dir.read_to_string("taken").expect("read"), "old");
    }
}
