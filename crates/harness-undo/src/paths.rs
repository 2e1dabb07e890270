//! Paths as git stores them (bytes, `/`-separated, relative to the top level).

use std::path::PathBuf;

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
    fn imp(bytes: &[u8]) -> PathBuf {
        PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
    }
    imp(bytes)
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
