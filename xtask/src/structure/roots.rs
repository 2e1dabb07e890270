//! The crate roots as a map: the files a root's `//!` names, and whether it says where the
//! first finds are ([`super::FIRST_FINDS`]).

use std::path::Path;

use anyhow::Result;

use super::{FIND_REACH, rust_files};

/// The `//!` lines of a crate root, without their markers, joined by newlines.
pub(super) fn root_docs(text: &str) -> String {
    text.lines()
        .filter_map(|line| line.trim_start().strip_prefix("//!"))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The source files `docs` names in backticks: `name.rs` or `dir/name.rs`, relative to
/// `src/`. A path from elsewhere (`src/main.rs` as an example of a model's path, or
/// `../tests/x.rs`) is not the crate's map and is left out.
pub(super) fn named_files(docs: &str) -> Vec<String> {
    let mut files = Vec::new();
    for (i, span) in docs.split('`').enumerate() {
        // The odd pieces are inside backticks.
        let is_name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.');
        if i % 2 == 1
            && span.ends_with(".rs")
            && span.chars().all(is_name)
            && !span.starts_with("src/")
            && !span.contains("..")
            && !files.iter().any(|file| file == span)
        {
            files.push(span.to_owned());
        }
    }
    files
}

/// Whether `docs` says `phrase` and, within [`FIND_REACH`] characters after it, names a file
/// that exists under `src` ([`names_a_file`]).
pub(super) fn says_where(docs: &str, phrase: &str, src: &Path) -> bool {
    let flat = docs.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = flat.to_lowercase();
    lower.match_indices(&phrase.to_lowercase()).any(|(at, _)| {
        let after: String = flat[at..].chars().take(phrase.len() + FIND_REACH).collect();
        named_files(&after)
            .iter()
            .any(|file| names_a_file(src, file).unwrap_or(false))
    })
}

/// Whether `file` is a file under `src`: `src/file`, or a file whose path ends with it (a
/// root that says "`ignored/` (`list.rs` lists …)" names `ignored/list.rs`).
pub(super) fn names_a_file(src: &Path, file: &str) -> Result<bool> {
    if src.join(file).is_file() {
        return Ok(true);
    }
    Ok(rust_files(src)?.iter().any(|path| {
        path.strip_prefix(src)
            .is_ok_and(|relative| relative.ends_with(file))
    }))
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    #[test]
    fn a_crate_root_names_its_files_and_where_the_first_finds_are() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let src = dir.path();
        fs::create_dir_all(src.join("run")).expect("run/");
        for file in ["tree.rs", "run/ask.rs"] {
            fs::write(src.join(file), "").expect("a source file");
        }
        let docs = root_docs(
            "//! A model's path (`src/main.rs`, `../x.rs`) is no file of ours.\n\
             //! | a process tree is killed | `tree.rs` |\n\
             //! - Where the model is\n//!   called: under `run/` (`ask.rs`); `gone.rs`, `tree.rs`.\n\
             fn main() {}\n",
        );
        assert_eq!(named_files(&docs), ["tree.rs", "ask.rs", "gone.rs"]);
        let exists = |file: &str| names_a_file(src, file).expect("src is readable");
        assert!(exists("tree.rs") && exists("ask.rs") && exists("run/ask.rs"));
        assert!(!exists("gone.rs") && !exists("un/ask.rs.bak"));
        assert!(says_where(&docs, "a process tree is killed", src));
        assert!(says_where(&docs, "where the model is called", src));
        assert!(!says_where(&docs, "where a snapshot is stored", src));
        // Said, but with no file of the crate's after it.
        let vague = root_docs("//! Where a snapshot is stored: in the store (`gone.rs`).\n");
        assert!(!says_where(&vague, "where a snapshot is stored", src));
    }
}
