//! A temporary workspace and the `harness` binary run against it, as ripgrep's tests do.

use std::fmt;
use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

/// A temporary directory used as the workspace; removed on drop.
pub(crate) struct TempWorkspace {
    /// Holds the directory.
    _temporary: tempfile::TempDir,
    /// The directory, canonical.
    root: PathBuf,
}

impl TempWorkspace {
    pub(crate) fn new() -> TempWorkspace {
        let temporary = tempfile::tempdir().expect("a temporary directory");
        let root = fs::canonicalize(temporary.path()).expect("it exists");
        TempWorkspace {
            _temporary: temporary,
            root,
        }
    }

    /// Creates the file `relative` with `contents`, and its directories.
    pub(crate) fn file(&self, relative: &str, contents: &str) -> &TempWorkspace {
        let path = self.root.join(relative);
        fs::create_dir_all(path.parent().expect("a file has a parent")).expect("create dirs");
        fs::write(path, contents).expect("write a fixture file");
        self
    }

    pub(crate) fn read(&self, relative: &str) -> String {
        fs::read_to_string(self.root.join(relative)).expect("read a file")
    }

    pub(crate) fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    pub(crate) fn path_str(&self) -> &str {
        self.root.to_str().expect("temporary paths are UTF-8")
    }

    /// `harness tool --workspace <root> NAME ARGUMENTS`.
    pub(crate) fn tool(&self, name: &str, arguments: &str) -> Run {
        harness(&["tool", "--workspace", self.path_str(), name, arguments])
    }

    /// [`TempWorkspace::tool`] with one more environment variable.
    pub(crate) fn tool_with_env(&self, name: &str, arguments: &str, var: (&str, &str)) -> Run {
        let mut command = command(&["tool", "--workspace", self.path_str(), name, arguments]);
        Run::of(command.env(var.0, var.1))
    }

    /// `harness ARGS`, run from the workspace.
    pub(crate) fn run_in(&self, args: &[&str]) -> Run {
        Run::of(command(args).current_dir(&self.root))
    }
}

/// `harness ARGS`, run from the test's directory.
pub(crate) fn harness(args: &[&str]) -> Run {
    Run::of(&mut command(args))
}

fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_harness"));
    command.args(args);
    command
}

/// What a run of `harness` did.
pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    fn of(command: &mut Command) -> Run {
        let Output {
            status,
            stdout,
            stderr,
        } = command.output().expect("run the harness binary");
        Run {
            code: status.code(),
            stdout: String::from_utf8(stdout).expect("UTF-8 stdout"),
            stderr: String::from_utf8(stderr).expect("UTF-8 stderr"),
        }
    }

    #[track_caller]
    pub(crate) fn assert_exit(&self, code: i32) {
        assert_eq!(self.code, Some(code), "{self:?}");
    }
}

impl fmt::Debug for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}
