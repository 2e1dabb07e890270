//! Confined reading: [`Workspace::read`], [`Workspace::read_to_string`],
//! [`Workspace::metadata`], [`Workspace::read_dir`]; opening a directory to walk is in `dir`.

use std::io::{self, Read};

use cap_fs_ext::{FollowSymlinks, MetadataExt, OpenOptionsFollowExt};
use cap_std::fs::OpenOptions;
use cap_std::fs_utf8::Dir;

use crate::entry::{DirEntry, Metadata};
use crate::error::{Access, Error};
use crate::walk::{End, FollowFinal};
use crate::workspace::Workspace;

#[cfg(unix)]
const NONBLOCK: i32 = rustix::fs::OFlags::NONBLOCK.bits() as i32;

impl Workspace {
    /// Reads the whole file at `candidate`.
    ///
    /// Only regular files are read: a FIFO or a device could block forever or never end. A
    /// file with more than one hard link is refused ([`Error::HardLink`]), judged on the file
    /// that was opened, so a link swapped in after the check is refused too.
    ///
    /// # Errors
    ///
    /// Those of [`Workspace::check`] for [`Access::Read`]; [`Error::NotFound`]; an
    /// [`Error::Io`] of kind `IsADirectory` for a directory or `InvalidInput` for anything
    /// else that is not a regular file.
    pub fn read(&self, candidate: &str) -> Result<Vec<u8>, Error> {
        let located = self.locate_for(candidate, Access::Read)?;
        let name = match located.end() {
            End::Entry(_) => &located.below_dir()[0],
            End::Dir => {
                let message = "is a directory; list it instead";
                return Err(Error::io_message(
                    candidate,
                    io::ErrorKind::IsADirectory,
                    message,
                ));
            }
            End::Missing(_) => {
                return Err(Error::NotFound {
                    candidate: candidate.to_owned(),
                });
            }
        };
        self.read_in(located.dir(), name, candidate)
    }

    /// Reads the whole file at `candidate` as UTF-8 text.
    ///
    /// # Errors
    ///
    /// Those of [`Workspace::read`], and an [`Error::Io`] of kind `InvalidData` when the
    /// file is not UTF-8.
    pub fn read_to_string(&self, candidate: &str) -> Result<String, Error> {
        let contents = self.read(candidate)?;
        String::from_utf8(contents).map_err(|_| {
            Error::io_message(
                candidate,
                io::ErrorKind::InvalidData,
                "the file is not UTF-8 text",
            )
        })
    }

    /// The metadata of the file or directory at `candidate`, following symbolic links.
    ///
    /// # Errors
    ///
    /// Those of [`Workspace::resolve`]; [`Error::Denied`] when a read rule covers the path;
    /// [`Error::NotFound`].
    pub fn metadata(&self, candidate: &str) -> Result<Metadata, Error> {
        // The rules, but not the hard-link refusal: a file's size and type are not its
        // contents.
        let located = self.locate(candidate, FollowFinal::Yes)?;
        self.apply_rules(&located, candidate, Access::Read)?;
        match located.end() {
            End::Entry(metadata) => Ok(Metadata::of(metadata)),
            End::Dir => {
                let metadata = located
                    .dir()
                    .dir_metadata()
                    .map_err(|error| Error::io(candidate, error))?;
                Ok(Metadata::of(&metadata))
            }
            End::Missing(_) => Err(Error::NotFound {
                candidate: candidate.to_owned(),
            }),
        }
    }

    /// The entries of the directory at `candidate`, sorted by name, without `.` and `..`.
    ///
    /// Entries a read rule refuses are left out: a listing does not show the names of what
    /// the rules protect. The same as `open_dir(candidate)?.entries()`
    /// ([`Workspace::open_dir`]).
    ///
    /// # Errors
    ///
    /// Those of [`Workspace::open_dir`]; [`Error::NotUtf8`] for an entry whose name is not
    /// UTF-8.
    pub fn read_dir(&self, candidate: &str) -> Result<Vec<DirEntry>, Error> {
        self.open_dir(candidate)?.entries()
    }

    /// Opens `name` in `dir` (whose workspace-relative path is what `candidate` resolved to)
    /// and reads it: a regular file with one link, opened without following a link.
    pub(crate) fn read_in(&self, dir: &Dir, name: &str, candidate: &str) -> Result<Vec<u8>, Error> {
        let io = |error| Error::io(candidate, error);
        let mut options = OpenOptions::new();
        // No link is followed: the walk resolved them all, so a link here was swapped in
        // after the walk, and opening it fails instead of reading its target.
        options.read(true).follow(FollowSymlinks::No);
        // Opened for reading, a FIFO blocks until a writer appears; without blocking, the
        // open returns and the check below refuses it.
        #[cfg(unix)]
        cap_std::fs::OpenOptionsExt::custom_flags(&mut options, NONBLOCK);
        let mut file = dir.open_with(name, &options).map_err(io)?;
        // Judge what was opened, not what the walk saw: the name may have changed since.
        let metadata = file.metadata().map_err(io)?;
        if !metadata.is_file() {
            let message = "not a regular file";
            return Err(Error::io_message(
                candidate,
                io::ErrorKind::InvalidInput,
                message,
            ));
        }
        // Counted on the open file: a name swapped for a hard link after the walk is
        // refused too. (Not one swapped back and forth between the open and this count:
        // no call opens a file and counts its links at once.)
        self.refuse_hard_link(candidate, Access::Read, metadata.nlink())?;
        let mut contents = Vec::new();
        file.read_to_end(&mut contents).map_err(io)?;
        Ok(contents)
    }
}
