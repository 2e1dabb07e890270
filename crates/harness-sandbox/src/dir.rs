//! [`WorkspaceDir`]: an open directory of the workspace, to walk a tree through handles.
//!
//! A walker that lists a directory by its path (`opendir("a/b")`) lets the kernel resolve
//! every name again, so a directory swapped for a symbolic link between the walker's check
//! and its listing redirects it, outside the workspace too. A [`WorkspaceDir`] is the open
//! directory itself: its children are listed, opened and read from its handle, one name at
//! a time, without following links, and judged by the deny rules on the way.

use std::io;

use camino::Utf8PathBuf;
use cap_fs_ext::DirExtUtf8;
use cap_std::fs_utf8::Dir;

use crate::entry::{DirEntry, FileType, Metadata};
use crate::error::{Access, Error};
use crate::rules::Kind;
use crate::walk::End;
use crate::workspace::Workspace;

/// An open directory of a [`Workspace`], from [`Workspace::open_dir`].
///
/// Every method takes one name in this directory (no `/`, not `.` or `..`) and acts
/// through the handle: a symbolic link is never followed (a link named by
/// [`WorkspaceDir::open_dir`] or [`WorkspaceDir::read`] is refused), the deny rules judge the
/// entry's workspace-relative path, and a file with other hard links is not read. Renaming
/// or replacing the directory's path meanwhile does not change what the handle lists.
///
/// ```
/// # fn main() -> Result<(), harness_sandbox::Error> {
/// # let dir = tempfile::tempdir().expect("a temporary directory");
/// use harness_sandbox::{FileType, Workspace};
///
/// let workspace = Workspace::new(dir.path())?;
/// workspace.create_dir_all("src")?;
/// workspace.write("src/lib.rs", "pub fn f() {}\n")?;
/// std::fs::write(dir.path().join("src/.env"), "TOKEN=1\n").expect("a secret");
///
/// let src = workspace.open_dir("src")?;
/// let entries = src.entries()?; // `.env` is left out: a read rule protects it
/// assert_eq!(entries.len(), 1);
/// assert_eq!((entries[0].name(), entries[0].file_type()), ("lib.rs", FileType::File));
/// assert_eq!(src.path(), "src/");
/// assert_eq!(src.read("lib.rs")?, b"pub fn f() {}\n");
/// assert!(src.read(".env").is_err());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct WorkspaceDir<'ws> {
    /// The workspace, for its rules and policy.
    workspace: &'ws Workspace,
    /// The directory's own handle.
    dir: Dir,
    /// Its resolved path relative to the root, one name per component (none for the root).
    names: Vec<String>,
}

impl Workspace {
    /// Opens the directory at `candidate`, resolved as every operation resolves a path, to
    /// list, open and read its entries through its handle.
    ///
    /// # Errors
    ///
    /// Those of [`Workspace::check`] for [`Access::Read`]; [`Error::NotFound`];
    /// [`Error::NotADirectory`] for a file.
    pub fn open_dir(&self, candidate: &str) -> Result<WorkspaceDir<'_>, Error> {
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
        let dir = located
            .dir()
            .try_clone()
            .map_err(|error| Error::io(candidate, error))?;
        Ok(WorkspaceDir {
            workspace: self,
            dir,
            names: located.names_slice().to_vec(),
        })
    }
}

impl<'ws> WorkspaceDir<'ws> {
    /// The directory's workspace-relative path as a prefix for its entries' paths: empty for
    /// the root, otherwise ending in `/` (`src/`).
    pub fn path(&self) -> String {
        self.names.iter().map(|name| format!("{name}/")).collect()
    }

    /// The directory's entries, sorted by name, without `.` and `..`; entries a read rule
    /// refuses are left out.
    ///
    /// # Errors
    ///
    /// [`Error::NotUtf8`] for an entry whose name is not UTF-8; [`Error::Io`] when the
    /// directory cannot be listed.
    pub fn entries(&self) -> Result<Vec<DirEntry>, Error> {
        let io = |error| Error::io(&self.path(), error);
        let mut entries = Vec::new();
        // The std-path flavour of the handle, so a name that is not UTF-8 can be shown.
        for entry in self.dir.as_cap_std().entries().map_err(io)? {
            let entry = entry.map_err(io)?;
            let name = entry
                .file_name()
                .into_string()
                .map_err(|name| Error::NotUtf8 {
                    path: format!("{}{}", self.path(), name.to_string_lossy()),
                })?;
            let file_type = FileType::of(entry.file_type().map_err(io)?);
            let kind = match file_type {
                FileType::Dir => Kind::Dir,
                _ => Kind::NotDir,
            };
            if self.refuse(&name, kind).is_err() {
                continue;
            }
            entries.push(DirEntry::new(name, file_type));
        }
        entries.sort_by(|a, b| a.name().cmp(b.name()));
        Ok(entries)
    }

    /// Opens the subdirectory `name`, which must be a directory itself, not a link to one.
    ///
    /// # Errors
    ///
    /// [`Error::Denied`] when a read rule covers it; [`Error::NotFound`]; an [`Error::Io`]
    /// for a name that is not a single name, a link or anything but a directory.
    pub fn open_dir(&self, name: &str) -> Result<WorkspaceDir<'ws>, Error> {
        self.refuse(name, Kind::Dir)?;
        let dir = self
            .dir
            .open_dir_nofollow(name)
            .map_err(|error| Error::io(&self.child(name), error))?;
        let mut names = self.names.clone();
        names.push(name.to_owned());
        Ok(WorkspaceDir {
            workspace: self.workspace,
            dir,
            names,
        })
    }

    /// The metadata of the entry `name`, not following a link.
    ///
    /// # Errors
    ///
    /// [`Error::Denied`] when a read rule covers it; [`Error::NotFound`]; an [`Error::Io`]
    /// for a name that is not a single name.
    pub fn metadata(&self, name: &str) -> Result<Metadata, Error> {
        self.refuse(name, Kind::Unknown)?;
        let metadata = self
            .dir
            .symlink_metadata(name)
            .map_err(|error| Error::io(&self.child(name), error))?;
        Ok(Metadata::of(&metadata))
    }

    /// Reads the file `name`, as [`Workspace::read`] reads a file: a regular file, not a
    /// link, with no other hard link.
    ///
    /// # Errors
    ///
    /// [`Error::Denied`] when a read rule covers it; [`Error::HardLink`]; [`Error::NotFound`];
    /// an [`Error::Io`] for a name that is not a single name, a link, or anything but a
    /// regular file.
    pub fn read(&self, name: &str) -> Result<Vec<u8>, Error> {
        self.refuse(name, Kind::NotDir)?;
        self.workspace.read_in(&self.dir, name, &self.child(name))
    }

    /// Refuses a name that is not one plain name, or one a read rule covers (judged as
    /// `kind`).
    fn refuse(&self, name: &str, kind: Kind) -> Result<(), Error> {
        let child = self.child(name);
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
            return Err(Error::io_message(
                &child,
                io::ErrorKind::InvalidInput,
                "not a single name in the directory",
            ));
        }
        let mut names = self.names.clone();
        names.push(name.to_owned());
        self.workspace
            .refuse_denied(&child, Access::Read, &names, kind)
    }

    /// The workspace-relative path of `name`, for messages.
    fn child(&self, name: &str) -> String {
        let mut path = Utf8PathBuf::from(self.path());
        path.push(name);
        path.into_string()
    }
}
