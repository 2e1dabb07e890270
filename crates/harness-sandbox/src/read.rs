//! Confined reading: [`Workspace::read`], [`Workspace::read_to_string`],
//! [`Workspace::metadata`], [`Workspace::read_dir`].

use std::io::{self, Read};

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::OpenOptions;

use crate::entry::{DirEntry, FileType, Metadata};
use crate::error::{Access, Error};
use crate::walk::End;
use crate::workspace::Workspace;

#[cfg(unix)]
const NONBLOCK: i32 = rustix::fs::OFlags::NONBLOCK.bits() as i32;

impl Workspace {
    /// Reads the whole file at `candidate`.
    ///
    /// Only regular files are read: a FIFO or a device could block forever or never end.
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
        let io = |error| Error::io(candidate, error);
        let mut options = OpenOptions::new();
        // No link is followed: the walk resolved them all, so a link here was swapped in
        // after the walk, and opening it fails instead of reading its target.
        options.read(true).follow(FollowSymlinks::No);
        // Opened for reading, a FIFO blocks until a writer appears; without blocking, the
        // open returns and the check below refuses it.
        #[cfg(unix)]
        cap_std::fs::OpenOptionsExt::custom_flags(&mut options, NONBLOCK);
        let mut file = located.dir().open_with(name, &options).map_err(io)?;
        // Judge what was opened, not what the walk saw: the name may have changed since.
        if !file.metadata().map_err(io)?.is_file() {
            let message = "not a regular file";
            return Err(Error::io_message(
                candidate,
                io::ErrorKind::InvalidInput,
                message,
            ));
        }
        let mut contents = Vec::new();
        file.read_to_end(&mut contents).map_err(io)?;
        Ok(contents)
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
    /// Those of [`Workspace::check`] for [`Access::Read`], and [`Error::NotFound`].
    pub fn metadata(&self, candidate: &str) -> Result<Metadata, Error> {
        let located = self.locate_for(candidate, Access::Read)?;
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
    /// Entries are listed whatever the deny rules say about them (a listing shows names,
    /// not contents); use [`Workspace::is_read_denied`] to hide them.
    ///
    /// # Errors
    ///
    /// Those of [`Workspace::check`] for [`Access::Read`]; [`Error::NotFound`];
    /// [`Error::NotADirectory`] for a file; [`Error::NotUtf8`] for an entry whose name is
    /// not UTF-8.
    pub fn read_dir(&self, candidate: &str) -> Result<Vec<DirEntry>, Error> {
        let located = self.locate_for(candidate, Access::Read)?;
        match located.end() {
            End::Dir => {}
            End::Entry(_) => {
                return Err(Error::NotADirectory {
                    candidate: candidate.to_owned(),
                });
            }
            End::Missing(_) => {
                return Err(Error::NotFound {
                    candidate: candidate.to_owned(),
                });
            }
        }
        let io = |error| Error::io(candidate, error);
        let mut entries = Vec::new();
        // The std-path flavour of the handle, so a name that is not UTF-8 can be shown.
        for entry in located.dir().as_cap_std().entries().map_err(io)? {
            let entry = entry.map_err(io)?;
            let name = entry
                .file_name()
                .into_string()
                .map_err(|name| Error::NotUtf8 {
                    path: name.to_string_lossy().into_owned(),
                })?;
            let file_type = FileType::of(entry.file_type().map_err(io)?);
            entries.push(DirEntry::new(name, file_type));
        }
        entries.sort_by(|a, b| a.name().cmp(b.name()));
        Ok(entries)
    }
}
