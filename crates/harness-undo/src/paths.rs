//! Paths and files as git stores them: bytes, `/`-separated, relative to the
//! top level, with the executable bit as the one permission.
//!
//! # Platform behavior
//!
//! On Unix every byte string is a path, so conversions are exact, and the
//! executable bit is the owner's. Elsewhere paths that are not UTF-8 are shown
//! with replacement characters and no file counts as executable.

pub(crate) use imp::{from_bytes, is_executable, to_bytes};

#[cfg(unix)]
mod imp {
    use std::ffi::OsStr;
    use std::fs::Metadata;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};

    /// The path git stores as `bytes`.
    pub(crate) fn from_bytes(bytes: &[u8]) -> PathBuf {
        PathBuf::from(OsStr::from_bytes(bytes))
    }

    /// The bytes git stores for `path` (a symlink's target, say).
    pub(crate) fn to_bytes(path: &Path) -> Vec<u8> {
        path.as_os_str().as_bytes().to_vec()
    }

    /// True if and only if the owner may execute the file.
    pub(crate) fn is_executable(metadata: &Metadata) -> bool {
        metadata.permissions().mode() & 0o100 != 0
    }
}

#[cfg(not(unix))]
// Not compiled where mutation testing runs (Linux), so its mutants could not
// fail a test; `mutants::skip` (a no-op attribute) tells cargo-mutants.
#[cfg_attr(test, mutants::skip)]
mod imp {
    use std::fs::Metadata;
    use std::path::{Path, PathBuf};

    pub(crate) fn from_bytes(bytes: &[u8]) -> PathBuf {
        PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
    }

    pub(crate) fn to_bytes(path: &Path) -> Vec<u8> {
        path.to_string_lossy().as_bytes().to_vec()
    }

    pub(crate) fn is_executable(_: &Metadata) -> bool {
        false
    }
}

#[cfg(all(test, unix))] // The exact conversions are Unix's.
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};

    #[test]
    fn bytes_and_paths_convert_exactly() {
        assert_eq!(from_bytes(b"a/b c"), PathBuf::from("a/b c"));
        assert_eq!(from_bytes(b"caf\xe9").as_os_str().as_bytes(), b"caf\xe9");
        assert_eq!(to_bytes(Path::new("../x y")), b"../x y");
    }

    #[test]
    fn only_the_owners_execute_bit_counts() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        for (mode, executable) in [
            (0o644, false),
            (0o755, true),
            (0o700, true),
            (0o655, false),
            (0o611, false),
        ] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
            let metadata = std::fs::metadata(&file).unwrap();
            assert_eq!(is_executable(&metadata), executable, "{mode:o}");
        }
    }
}
