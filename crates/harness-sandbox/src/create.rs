//! Confined directory creation: [`Workspace::create_dir_all`].

use cap_fs_ext::DirExtUtf8;

use crate::error::{Access, Error};
use crate::walk::End;
use crate::workspace::Workspace;

impl Workspace {
    /// Creates the directory at `candidate` and every missing parent; succeeds when it
    /// already exists.
    ///
    /// Each directory is created and then opened without following links, one name at a
    /// time, from the deepest existing directory's handle.
    ///
    /// # Errors
    ///
    /// Those of [`Workspace::check`] for [`Access::Write`]; [`Error::NotADirectory`] when
    /// a file is in the way.
    pub fn create_dir_all(&self, candidate: &str) -> Result<(), Error> {
        let located = self.locate_for(candidate, Access::Write)?;
        if let End::Entry(_) = located.end() {
            return Err(Error::NotADirectory {
                candidate: candidate.to_owned(),
            });
        }
        let io = |error| Error::io(candidate, error);
        let mut opened = None;
        for name in located.below_dir() {
            let parent = opened.as_ref().unwrap_or(located.dir());
            parent.create_dir(name).map_err(io)?;
            opened = Some(parent.open_dir_nofollow(name).map_err(io)?);
        }
        Ok(())
    }
}
