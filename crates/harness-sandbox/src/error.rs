//! The one error type of the crate.

use std::fmt;
use std::io;
use std::path::PathBuf;

use camino::{Utf8Path, Utf8PathBuf};

/// The longest candidate path accepted, in bytes (Linux's `PATH_MAX`).
///
/// Longer candidates are refused before any file system access: the walk holds one directory
/// handle per component, and a path no kernel call would accept has no business there.
pub(crate) const MAX_PATH_LEN: usize = 4096;

/// Why a path or an operation was refused.
///
/// Every message names the offending path and, where there is one, the way out, because the
/// reader is often a model that must correct its next call. Converted into an [`io::Error`],
/// every refusal made by the confinement or a rule has the kind
/// [`io::ErrorKind::PermissionDenied`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The path leads outside the workspace: through `..`, as an absolute path, or through a
    /// symbolic link. Built only by one constructor, so every escape reads the same.
    #[error("path escapes the workspace: {candidate} (use a path inside {root})")]
    Escape {
        /// The path as the caller gave it.
        candidate: String,
        /// The workspace root.
        root: Utf8PathBuf,
    },

    /// The path is inside the workspace but a deny rule covers it.
    #[error(
        "refusing to {access} {candidate}: it matches the deny rule `{rule}` \
         (the workspace protects secrets and git internals; leave this path alone)"
    )]
    Denied {
        /// The path as the caller gave it.
        candidate: String,
        /// The glob of the rule that matched, as configured.
        rule: String,
        /// What was refused.
        access: Access,
    },

    /// A deny rule refuses the place under another of its names, a link to it
    /// ([`Workspace::deny_place`](crate::Workspace::deny_place)): it is refused under every
    /// name.
    #[error(
        "refusing to {access} {candidate}: a deny rule refuses it under another of its names \
         (a link to it), so it is refused under every name; leave this path alone"
    )]
    DeniedUnderOtherName {
        /// The path as the caller gave it.
        candidate: String,
        /// What was refused.
        access: Access,
    },

    /// The file has more than one hard link: another of its names may lie outside the
    /// workspace or be a file the workspace protects, so it is neither read nor written
    /// through this one.
    #[error(
        "refusing to {access} {candidate}: the file has {links} hard links, and another of \
         its names may be outside the workspace or a file the workspace protects"
    )]
    HardLink {
        /// The path as the caller gave it.
        candidate: String,
        /// The file's link count.
        links: u64,
        /// What was refused.
        access: Access,
    },

    /// Writing would create a file through a symbolic link whose target does not exist.
    #[error(
        "refusing to write {candidate}: it goes through a dangling symbolic link and would \
         create {target}"
    )]
    DanglingSymlink {
        /// The path as the caller gave it.
        candidate: String,
        /// The workspace-relative path the write would have created.
        target: Utf8PathBuf,
    },

    /// Nothing exists at the path (or, for a write, at its parent directory).
    #[error("no such file or directory: {candidate}")]
    NotFound {
        /// The path as the caller gave it.
        candidate: String,
    },

    /// A component of the path that must be a directory is not one.
    #[error("not a directory: {candidate} (a component of the path is a file)")]
    NotADirectory {
        /// The path as the caller gave it.
        candidate: String,
    },

    /// The path, a name in a directory or a symbolic link's target is not valid UTF-8.
    #[error("path is not valid UTF-8: {path}")]
    NotUtf8 {
        /// The path, with invalid bytes replaced by U+FFFD.
        path: String,
    },

    /// The path contains a NUL byte, which no file name can hold.
    #[error("path contains a NUL byte: {candidate:?}")]
    Nul {
        /// The path as the caller gave it.
        candidate: String,
    },

    /// The path is longer than any the operating system accepts.
    #[error("path is {len} bytes long; paths are limited to {MAX_PATH_LEN} bytes")]
    TooLong {
        /// The length of the path in bytes.
        len: usize,
    },

    /// Resolving the path followed too many symbolic links, probably a loop.
    #[error("too many levels of symbolic links: {candidate}")]
    SymlinkLoop {
        /// The path as the caller gave it.
        candidate: String,
    },

    /// The workspace root cannot be used.
    #[error("workspace root {root} is not usable: {reason}")]
    InvalidRoot {
        /// The root as the caller gave it.
        root: PathBuf,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// A deny rule given to [`WorkspaceBuilder`](crate::WorkspaceBuilder) is not valid: its
    /// glob does not parse, or it can match nothing (blank, a comment, a `..`).
    #[error("invalid deny rule `{rule}`: {reason}")]
    InvalidRule {
        /// The rule as given.
        rule: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A path that must stay out of the workspace (the harness's own source tree or
    /// executable) lies inside it.
    #[error(
        "the workspace {root} contains {path}; choose a workspace that does not contain the \
         harness itself, or the agent could rewrite its own rules"
    )]
    Within {
        /// The path, canonicalized.
        path: PathBuf,
        /// The workspace root.
        root: Utf8PathBuf,
    },

    /// The operating system refused the operation.
    #[error("{candidate}: {source}")]
    Io {
        /// The path as the caller gave it.
        candidate: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// The kind of access a deny rule refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Access {
    /// Reading a file, its metadata or a directory listing.
    Read,
    /// Creating, replacing or removing a file or directory.
    Write,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::Write => "write",
        })
    }
}

/// The one way to build [`Error::Escape`].
#[cold]
pub(crate) fn escape(candidate: &str, root: &Utf8Path) -> Error {
    Error::Escape {
        candidate: candidate.to_owned(),
        root: root.to_owned(),
    }
}

impl Error {
    /// Wraps an I/O error, turning `NotFound` into [`Error::NotFound`] so callers match one
    /// variant whatever call noticed the absence.
    pub(crate) fn io(candidate: &str, source: io::Error) -> Error {
        match source.kind() {
            io::ErrorKind::NotFound => Error::NotFound {
                candidate: candidate.to_owned(),
            },
            _ => Error::Io {
                candidate: candidate.to_owned(),
                source,
            },
        }
    }

    /// An [`Error::Io`] with a message of our own, for refusals the OS did not make.
    pub(crate) fn io_message(candidate: &str, kind: io::ErrorKind, message: &str) -> Error {
        Error::Io {
            candidate: candidate.to_owned(),
            source: io::Error::new(kind, message.to_owned()),
        }
    }

    fn kind(&self) -> io::ErrorKind {
        match self {
            Error::Escape { .. }
            | Error::Denied { .. }
            | Error::DeniedUnderOtherName { .. }
            | Error::HardLink { .. }
            | Error::DanglingSymlink { .. }
            | Error::Within { .. } => io::ErrorKind::PermissionDenied,
            Error::NotFound { .. } => io::ErrorKind::NotFound,
            Error::NotADirectory { .. } => io::ErrorKind::NotADirectory,
            Error::NotUtf8 { .. }
            | Error::Nul { .. }
            | Error::TooLong { .. }
            | Error::InvalidRoot { .. }
            | Error::InvalidRule { .. } => io::ErrorKind::InvalidInput,
            Error::SymlinkLoop { .. } => io::ErrorKind::Other,
            Error::Io { source, .. } => source.kind(),
        }
    }
}

impl From<Error> for io::Error {
    /// Keeps the message; confinement and rule refusals become
    /// [`io::ErrorKind::PermissionDenied`].
    fn from(error: Error) -> io::Error {
        io::Error::new(error.kind(), error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! kinds {
        ($($name:ident: $error:expr => $kind:ident,)*) => {$(
            #[test]
            fn $name() {
                let error: io::Error = $error.into();
                assert_eq!(error.kind(), io::ErrorKind::$kind);
            }
        )*};
    }

    fn c() -> String {
        "some/path".to_owned()
    }

    kinds! {
        escape_is_permission_denied: escape("../x", Utf8Path::new("/w")) => PermissionDenied,
        denied_is_permission_denied:
            Error::Denied { candidate: c(), rule: ".env".into(), access: Access::Read } => PermissionDenied,
        denied_under_other_name_is_permission_denied:
            Error::DeniedUnderOtherName { candidate: c(), access: Access::Read } => PermissionDenied,
        hard_link_is_permission_denied:
            Error::HardLink { candidate: c(), links: 2, access: Access::Read } => PermissionDenied,
        dangling_is_permission_denied:
            Error::DanglingSymlink { candidate: c(), target: "t".into() } => PermissionDenied,
        within_is_permission_denied:
            Error::Within { path: "/w/x".into(), root: "/w".into() } => PermissionDenied,
        not_found_is_not_found: Error::NotFound { candidate: c() } => NotFound,
        not_a_directory_is_not_a_directory: Error::NotADirectory { candidate: c() } => NotADirectory,
        not_utf8_is_invalid_input: Error::NotUtf8 { path: c() } => InvalidInput,
        nul_is_invalid_input: Error::Nul { candidate: c() } => InvalidInput,
        too_long_is_invalid_input: Error::TooLong { len: 5000 } => InvalidInput,
        invalid_root_is_invalid_input:
            Error::InvalidRoot { root: "/r".into(), reason: "it is not a directory" } => InvalidInput,
        invalid_rule_is_invalid_input:
            Error::InvalidRule { rule: "[".into(), reason: "unclosed".into() } => InvalidInput,
        loop_is_other: Error::SymlinkLoop { candidate: c() } => Other,
        io_keeps_its_kind:
            Error::Io { candidate: c(), source: io::ErrorKind::IsADirectory.into() } => IsADirectory,
    }

    #[test]
    fn escape_message_names_the_candidate_and_the_root() {
        let message = escape("../../etc/passwd", Utf8Path::new("/tmp/work")).to_string();
        assert_eq!(
            message,
            "path escapes the workspace: ../../etc/passwd (use a path inside /tmp/work)"
        );
    }

    #[test]
    fn converted_error_keeps_the_message() {
        let error: io::Error = escape("/etc/passwd", Utf8Path::new("/w")).into();
        assert!(
            error
                .to_string()
                .contains("path escapes the workspace: /etc/passwd")
        );
    }

    #[test]
    fn io_turns_not_found_into_the_not_found_variant() {
        let error = Error::io("a/b", io::ErrorKind::NotFound.into());
        assert!(matches!(error, Error::NotFound { candidate } if candidate == "a/b"));
        let error = Error::io("a/b", io::ErrorKind::IsADirectory.into());
        assert!(matches!(error, Error::Io { candidate, .. } if candidate == "a/b"));
    }

    #[test]
    fn access_displays_as_a_verb() {
        assert_eq!(Access::Read.to_string(), "read");
        assert_eq!(Access::Write.to_string(), "write");
    }
}
