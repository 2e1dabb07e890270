//! Writing a file so a reader sees the old content or the new, never a part: a temporary
//! file in the same directory (so the rename stays on one filesystem), flushed, renamed
//! over the target. A batch killed mid-write leaves no half `result.json` for `--resume`
//! or `collect` to trust.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Error;

/// Writes `bytes` to `path` atomically.
///
/// # Errors
///
/// The temporary file cannot be written, or the rename fails; the temporary file is
/// removed then.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    // Unique per process and call: two jobs, or two threads, never share a temporary file.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    let temporary = path.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let written = std::fs::File::create(&temporary)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temporary, path));
    written.map_err(|source| {
        let _ = std::fs::remove_file(&temporary);
        Error::Write {
            path: path.to_owned(),
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_replaced_whole_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        write_atomic(&path, b"old").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["result.json"]);
    }

    #[test]
    fn a_directory_that_is_not_there_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gone/result.json");
        let error = write_atomic(&path, b"x").unwrap_err();
        assert!(error.to_string().contains("gone/result.json"), "{error}");
    }
}
