//! Paths as git stores them (bytes, `/`-separated, relative to the top level).

use std::path::{Path, PathBuf};

/// The path git stores as `bytes`.
///
/// # Platform behavior
///
/// On Unix every byte string is a path, so this is exact. Elsewhere bytes that
/// are not UTF-8 are replaced.
pub(crate) fn from_bytes(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    fn imp(bytes: &[u8]) -> PathBuf {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    // Not compiled where mutation testing runs (Linux), so its mutants could
    // not fail a test. The attribute is read by cargo-mutants only.
    #[cfg_attr(any(), mutants::skip)]
    fn imp(bytes: &[u8]) -> PathBuf {
        PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
    }
    imp(bytes)
}

/// The bytes of `path`, as git would store it (a symlink's target, say).
///
/// # Platform behavior
///
/// On Unix, exact. Elsewhere the path's UTF-8 text, with replacements.
pub(crate) fn to_bytes(path: &Path) -> Vec<u8> {
    #[cfg(unix)]
    fn imp(path: &Path) -> Vec<u8> {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    #[cfg_attr(any(), mutants::skip)] // Not compiled where mutation testing runs.
    fn imp(path: &Path) -> Vec<u8> {
        path.to_string_lossy().as_bytes().to_vec()
    }
    imp(path)
}

/// True if and only if the owner may execute the file, the one permission git
/// records.
///
/// # Platform behavior
///
/// Always false where there are no Unix permissions.
pub(crate) fn is_executable(metadata: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    fn imp(metadata: &std::fs::Metadata) -> bool {
        use std::os::unix::fs::PermissionsExt;
        metadata.permissions().mode() & 0o100 != 0
    }
    #[cfg(not(unix))]
    #[cfg_attr(any(), mutants::skip)] // Not compiled where mutation testing runs.
    fn imp(_: &std::fs::Metadata) -> bool {
        false
    }
    imp(metadata)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_become_paths() {
        assert_eq!(from_bytes(b"a/b c"), PathBuf::from("a/b c"));
    }

    #[cfg(unix)] // Only Unix paths can hold bytes that are not UTF-8.
    #[test]
    fn non_utf8_bytes_survive() {
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(from_bytes(b"caf\xe9").as_os_str().as_bytes(), b"caf\xe9");
    }
}
