//! The Rust source files of a crate, for tests that read a crate's own code (that nothing
//! in it prints but through its printer, for one).

use std::path::{Path, PathBuf};

/// Every `.rs` file under `directory`, at any depth.
///
/// # Panics
///
/// When a directory cannot be read: a test's own sources must be there.
pub fn rust_sources(directory: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    collect(directory, &mut files);
    files
}

fn collect(directory: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(directory).expect("read a source directory") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
}
