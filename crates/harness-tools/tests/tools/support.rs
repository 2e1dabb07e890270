//! A workspace in a temporary directory, and a toolbox over it.

use std::fs;
use std::path::{Path, PathBuf};

use harness_exec::Redactor;
use harness_sandbox::Workspace;
use harness_tools::{Limits, ToolResult, Toolbox, ToolboxBuilder};
use serde_json::Value;

/// A temporary workspace.
pub(crate) struct Fixture {
    /// Removed on drop.
    _temporary: tempfile::TempDir,
    /// The workspace root, canonical.
    pub(crate) root: PathBuf,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let temporary = tempfile::tempdir().expect("a temporary directory");
        let root = fs::canonicalize(temporary.path()).expect("it exists");
        Fixture {
            _temporary: temporary,
            root,
        }
    }

    /// Creates the file `relative` with `contents`, and its directories.
    pub(crate) fn file(&self, relative: &str, contents: impl AsRef<[u8]>) -> &Fixture {
        let path = self.root.join(relative);
        fs::create_dir_all(path.parent().expect("a file has a parent")).expect("create dirs");
        fs::write(path, contents).expect("write a fixture file");
        self
    }

    /// Creates the directory `relative`.
    pub(crate) fn dir(&self, relative: &str) -> &Fixture {
        fs::create_dir_all(self.root.join(relative)).expect("create a fixture directory");
        self
    }

    /// The content of `relative`.
    pub(crate) fn read(&self, relative: &str) -> String {
        fs::read_to_string(self.root.join(relative)).expect("read a fixture file")
    }

    pub(crate) fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// A builder over the workspace, redacting with the built-in patterns only (so the tests do
    /// not depend on this process's environment).
    pub(crate) fn builder(&self) -> ToolboxBuilder {
        Toolbox::builder(self.workspace()).redactor(Redactor::new())
    }

    pub(crate) fn workspace(&self) -> Workspace {
        Workspace::new(&self.root).expect("the fixture root is a directory")
    }

    /// A toolbox with the defaults, and the given limits.
    pub(crate) fn toolbox_with(&self, limits: Limits) -> Toolbox {
        self.builder().limits(limits).build()
    }

    /// Calls `tool` with `arguments` on a default toolbox.
    pub(crate) fn call(&self, tool: &str, arguments: Value) -> ToolResult {
        self.builder().build().call(tool, &arguments)
    }
}

/// Asserts that `result` is a failure whose text starts with `prefix`.
#[track_caller]
pub(crate) fn assert_error(result: &ToolResult, prefix: &str) {
    assert!(
        result.is_error(),
        "expected an error, got {:?}",
        result.text()
    );
    assert!(
        result.text().starts_with(prefix),
        "expected a text starting with {prefix:?}, got {:?}",
        result.text()
    );
}

/// Asserts that `result` succeeded, and returns its text.
#[track_caller]
pub(crate) fn ok(result: &ToolResult) -> &str {
    assert!(
        !result.is_error(),
        "expected success, got {:?}",
        result.text()
    );
    assert!(!result.text().starts_with("Error:"), "{:?}", result.text());
    result.text()
}

#[allow(dead_code)]
pub(crate) fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}
