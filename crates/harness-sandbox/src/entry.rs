//! What [`Workspace::metadata`](crate::Workspace::metadata) and
//! [`Workspace::read_dir`](crate::Workspace::read_dir) return: small types of our own, so
//! cap-std stays an implementation detail.

use std::time::SystemTime;

/// The type of a file system entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileType {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (only in directory listings: [`Workspace::metadata`] follows links).
    ///
    /// [`Workspace::metadata`]: crate::Workspace::metadata
    Symlink,
    /// Anything else: a FIFO, a socket, a device.
    Other,
}

impl FileType {
    pub(crate) fn of(file_type: cap_std::fs::FileType) -> FileType {
        if file_type.is_file() {
            FileType::File
        } else if file_type.is_dir() {
            FileType::Dir
        } else if file_type.is_symlink() {
            FileType::Symlink
        } else {
            FileType::Other
        }
    }
}

/// Facts about a file or directory in the workspace.
#[derive(Clone, Debug)]
pub struct Metadata {
    file_type: FileType,
    len: u64,
    modified: Option<SystemTime>,
}

impl Metadata {
    pub(crate) fn of(metadata: &cap_std::fs::Metadata) -> Metadata {
        Metadata {
            file_type: FileType::of(metadata.file_type()),
            len: metadata.len(),
            modified: metadata
                .modified()
                .ok()
                .map(cap_std::time::SystemTime::into_std),
        }
    }

    /// The entry's type.
    pub fn file_type(&self) -> FileType {
        self.file_type
    }

    /// True if and only if the entry is a regular file.
    pub fn is_file(&self) -> bool {
        self.file_type == FileType::File
    }

    /// True if and only if the entry is a directory.
    pub fn is_dir(&self) -> bool {
        self.file_type == FileType::Dir
    }

    /// The size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True if and only if the size is zero.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The last modification time, where the platform records one.
    pub fn modified(&self) -> Option<SystemTime> {
        self.modified
    }
}

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DirEntry {
    name: String,
    file_type: FileType,
}

impl DirEntry {
    pub(crate) fn new(name: String, file_type: FileType) -> DirEntry {
        DirEntry { name, file_type }
    }

    /// The entry's name within its directory.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The entry's own type: a symbolic link is reported as [`FileType::Symlink`], not
    /// followed.
    pub fn file_type(&self) -> FileType {
        self.file_type
    }
}
