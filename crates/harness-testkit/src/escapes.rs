//! The escape classes of the file tools, laid out on disk, and the calls that try them.
//!
//! Used by the toolbox's own tests and by every front end that serves the tools
//! (`harness tool`, `harness mcp`), so all check the same escapes against the same tree.
//!
//! ```text
//! <temporary>/
//!   work/                      the workspace
//!     inside.txt               "inside\n"
//!     link-file -> <temporary>/outside/secret.txt
//!     link-dir  -> <temporary>/outside
//!     dangling  -> <temporary>/outside/missing.txt
//!   work-evil/f.txt            "evil secret\n": a sibling whose name starts with "work"
//!   outside/secret.txt         "outside secret\n"
//!   outside/sub/deep.txt       "outside secret\n"
//! ```

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// A workspace with an outside to escape to.
pub struct Escapes {
    /// Holds the tree; removed on drop.
    _temporary: tempfile::TempDir,
    /// `<temporary>`, canonical.
    pub top: PathBuf,
    /// `<temporary>/work`, the workspace.
    pub work: PathBuf,
}

/// An escape class and the path that tries it.
pub struct Class {
    /// The class, as #2 names it.
    pub name: &'static str,
    /// The path a model would send.
    pub path: String,
}

impl Default for Escapes {
    fn default() -> Escapes {
        Escapes::new()
    }
}

impl Escapes {
    /// Lays the tree out in a new temporary directory.
    ///
    /// # Panics
    ///
    /// When the temporary directory cannot be made: a test cannot go on without it.
    pub fn new() -> Escapes {
        let temporary = tempfile::tempdir().expect("a temporary directory");
        let top = fs::canonicalize(temporary.path()).expect("the temporary directory exists");
        let work = top.join("work");
        let outside = top.join("outside");
        fs::create_dir_all(outside.join("sub")).expect("create outside/sub");
        fs::create_dir_all(top.join("work-evil")).expect("create work-evil");
        fs::create_dir_all(&work).expect("create work");
        fs::write(outside.join("secret.txt"), "outside secret\n").expect("write");
        fs::write(outside.join("sub/deep.txt"), "outside secret\n").expect("write");
        fs::write(top.join("work-evil/f.txt"), "evil secret\n").expect("write");
        fs::write(work.join("inside.txt"), "inside\n").expect("write");
        let link = |target: PathBuf, name: &str| {
            std::os::unix::fs::symlink(target, work.join(name)).expect("create a symlink");
        };
        link(outside.join("secret.txt"), "link-file");
        link(outside.clone(), "link-dir");
        link(outside.join("missing.txt"), "dangling");
        Escapes {
            _temporary: temporary,
            top,
            work,
        }
    }

    /// Every escape class of #2, with the path that tries it.
    pub fn classes(&self) -> Vec<Class> {
        let absolute = |path: &str| self.top.join(path).display().to_string();
        let class = |name, path: String| Class { name, path };
        vec![
            class("relative traversal", "../outside/secret.txt".into()),
            class("absolute outside", absolute("outside/secret.txt")),
            class("symlink to a file outside", "link-file".into()),
            class(
                "symlink to a dir outside as a middle component",
                "link-dir/secret.txt".into(),
            ),
            class("sibling prefix", absolute("work-evil/f.txt")),
            class("dangling symlink out", "dangling".into()),
        ]
    }

    /// Every file and symbolic link outside the workspace, with its content (or link target).
    pub fn outside(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut found = BTreeMap::new();
        for name in ["outside", "work-evil"] {
            snapshot(&self.top.join(name), &mut found);
        }
        found
    }
}

/// The arguments with which `tool` tries to reach `path`: for a write, with overwrite.
pub fn call(tool: &str, path: &str) -> Value {
    match tool {
        "read_file" => json!({"path": path}),
        "write_file" => json!({"path": path, "content": "pwned\n", "overwrite": true}),
        "edit_file" => json!({"path": path, "old_text": "secret", "new_text": "pwned"}),
        "list_dir" => json!({"path": path}),
        "search_text" => json!({"pattern": "secret", "path": path}),
        other => panic!("{other} takes no path"),
    }
}

/// The tools that take a path.
pub const PATH_TOOLS: [&str; 5] = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "search_text",
];

fn snapshot(path: &Path, found: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let metadata = fs::symlink_metadata(path).expect("a path of the snapshot");
    if metadata.is_dir() {
        for entry in fs::read_dir(path).expect("read a directory") {
            snapshot(&entry.expect("an entry").path(), found);
        }
    } else if metadata.is_symlink() {
        let target = fs::read_link(path).expect("read a link");
        found.insert(
            path.to_owned(),
            target.into_os_string().into_encoded_bytes(),
        );
    } else {
        found.insert(path.to_owned(), fs::read(path).expect("read a file"));
    }
}
