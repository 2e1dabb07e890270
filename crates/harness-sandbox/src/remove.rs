//! Confined removal: [`Workspace::remove_file`].

use std::io;

use crate::error::{Access, Error};
use crate::walk::{End, FollowFinal};
use crate::workspace::Workspace;

impl Workspace {
    /// Removes the file at `candidate`. A symbolic link is removed itself, not its target,
    /// so the link's own path is what the deny rules judge.
    ///
    /// # Errors
    ///
    /// Those of [`Workspace::resolve`]; [`Error::Denied`] when a write rule covers the path;
    /// [`Error::NotFound`]; an [`Error::Io`] of kind `IsADirectory` for a directory.
    pub fn remove_file(&self, candidate: &str) -> Result<(), Error> {
        let located = self.locate(candidate, FollowFinal::No)?;
        self.apply_rules(&located, candidate, Access::Write)?;
        match located.end() {
            End::Entry(_) => located
                .dir()
                .remove_file(&located.below_dir()[0])
                .map_err(|error| Error::io(candidate, error)),
            End::Missing(_) => Err(Error::NotFound {
                candidate: candidate.to_owned(),
            }),
            End::Dir => Err(Error::io_message(
                candidate,
                io::ErrorKind::IsADirectory,
                "is a directory",
            )),
        }
    }
}
