//! What can go wrong in a batch outside a task's own run: [`Error`]; and a line of the
//! task file that is not a task, [`LineError`].

use std::fmt;
use std::path::PathBuf;

/// An error of the batch runner: reading the task file, making a task's working copy,
/// preparing its run, writing or reading its result, starting its process.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The task file cannot be read.
    #[error("cannot read the task file {}", path.display())]
    ReadTasks {
        /// The task file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line of the task file is not a task.
    #[error("{0}")]
    BadLine(LineError),
    /// `--index` (or the engine's variable) names no line of the task file.
    #[error("there is no task {index}: the task file has {count}, numbered from 0")]
    NoSuchIndex {
        /// The index asked for.
        index: usize,
        /// How many task lines the file has.
        count: usize,
    },
    /// Neither `--index` nor an engine's index variable was given.
    #[error(
        "no task index: pass --index I, or run under an engine that sets \
         JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm)"
    )]
    NoIndex,
    /// An engine's index variable that is not a number.
    #[error("{name}={value:?} is not a task index: it must be a number from 0")]
    BadIndexVariable {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
    /// A task's local repository does not exist.
    #[error("the repository {} does not exist (a relative path is taken from the task file's directory)", path.display())]
    NoRepository {
        /// The path, as resolved.
        path: PathBuf,
    },
    /// A git command that makes a working copy failed.
    #[error("`git {command}` failed: {stderr}")]
    Git {
        /// The git command line, after `git`.
        command: String,
        /// What git said, or how it could not be started.
        stderr: String,
    },
    /// Preparing or running the task through the harness failed.
    #[error(transparent)]
    App(#[from] harness_app::Error),
    /// The run's transcript cannot be created.
    #[error(transparent)]
    Transcript(#[from] harness_agent::TranscriptError),
    /// A file of the batch cannot be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file of the batch cannot be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A model slot (`OUT/.model-slots/`, see [`crate::ModelSlots`]) cannot be made or
    /// locked.
    #[error("cannot take the model slot {}: the output directory must be on a filesystem that supports flock", path.display())]
    ModelSlot {
        /// The slot file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A `result.json` that does not hold a result.
    #[error("{} is not a task result", path.display())]
    BadResult {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// A task's process cannot be started.
    #[error("cannot start {}", program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A task file with no task lines: a job array needs at least one index.
    #[error("{} has no task lines: there is nothing to run", path.display())]
    NoTasks {
        /// The task file.
        path: PathBuf,
    },
    /// A path a script would name that is not UTF-8: the script is text.
    #[error("{} is not UTF-8, so a script cannot name it: rename it", path.display())]
    NotUtf8 {
        /// The path.
        path: PathBuf,
    },
    /// An output directory whose path an `#SBATCH` line cannot hold: sbatch reads those
    /// lines without a shell, so a blank, a quote or a backslash would split or mangle it.
    #[error(
        "the output directory {path:?} has a blank, a quote, a backslash or a control \
         character, which an #SBATCH line cannot hold: choose an --out without them"
    )]
    SbatchPath {
        /// The output directory.
        path: PathBuf,
    },
    /// A task file too large for the ConfigMap `--emit k8s` would carry it in.
    #[error(
        "{} is {bytes} bytes as a ConfigMap, over Kubernetes' 1 MiB limit for one: split it \
         into task files of fewer lines and emit one Job for each",
        path.display()
    )]
    TooLargeForConfigMap {
        /// The task file.
        path: PathBuf,
        /// The ConfigMap's size.
        bytes: usize,
    },
    /// The task was stopped before it finished; no result was written, so a rerun (or
    /// `--resume`) runs it again.
    #[error("the task was stopped before it finished; no result was written")]
    Interrupted,
}

impl Error {
    /// The message with every cause after it, on one line: what a result's `error` holds.
    pub fn chain(&self) -> String {
        let mut message = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            let text = cause.to_string();
            // A transparent variant's source says what its message already said.
            if !message.ends_with(&text) {
                message.push_str(": ");
                message.push_str(&text);
            }
            source = cause.source();
        }
        message
    }
}

/// A line of the task file that is not a task: `tasks.jsonl:3: "verify": ...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    /// The task file's name.
    pub file: String,
    /// The line, from 1.
    pub line: usize,
    /// The field that is wrong, when one is.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.file, self.line)?;
        if let Some(field) = &self.field {
            write!(f, "{field:?}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for LineError {}
