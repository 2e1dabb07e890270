//! What a task left: `OUT/<id>/result.json` ([`TaskResult`]), `OUT/<id>/patch.diff` (the
//! run's diff against the state before it) and `OUT/<id>/transcript.jsonl` (a copy of the
//! run's transcript), each written atomically. `result.json` is written last: it is the
//! mark that the task is finished, which `--resume` and `collect` read.

use std::fmt;
use std::path::{Path, PathBuf};

use harness_agent::Outcome;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::atomic::write_atomic;

/// The result file's name in a task's directory.
pub const RESULT_FILE: &str = "result.json";
/// The diff file's name in a task's directory.
pub const PATCH_FILE: &str = "patch.diff";
/// The transcript's name in a task's directory.
pub const TRANSCRIPT_FILE: &str = "transcript.jsonl";
/// The working copy's name in a task's directory.
pub const WORK_DIR: &str = "work";
/// What a task's process printed, in a task's directory (local runs).
pub const LOG_FILE: &str = "harness.log";

/// How one task ended, as `result.json` holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// The task's id.
    pub id: String,
    /// Its index in the task file, from 0: `collect` orders results by it.
    pub index: usize,
    /// Solved, unresolved, error or timeout.
    pub status: Status,
    /// The run's outcome, as `harness run` words it (`verified`, `verification failed`,
    /// ...); `error` when no run took place.
    pub outcome: String,
    /// Why, in one sentence.
    pub reason: String,
    /// Model turns taken.
    pub steps: u32,
    /// Prompt tokens, as the server counted them.
    pub prompt_tokens: u64,
    /// Generated tokens.
    pub completion_tokens: u64,
    /// From the start of the task (the clone included) to its result.
    pub wall_seconds: f64,
    /// Inside model requests, from sending one to its answer's end (streaming included):
    /// part of `wall_seconds`.
    #[serde(default)]
    pub model_seconds: f64,
    /// Waiting for a model slot before a request (`--max-inflight`): part of
    /// `wall_seconds`, not of `model_seconds`; 0 without a cap.
    #[serde(default)]
    pub queue_seconds: f64,
    /// What the run changed.
    pub diff: DiffStat,
    /// The run's id in its working copy's undo store, when a run began.
    pub run: Option<String>,
    /// What went wrong, when the status is `error`.
    pub error: Option<String>,
}

impl TaskResult {
    /// The result of a task that ended in `error` before or outside a run.
    pub fn error(id: &str, index: usize, error: String, wall_seconds: f64) -> TaskResult {
        TaskResult {
            id: id.to_owned(),
            index,
            status: Status::Error,
            outcome: "error".to_owned(),
            reason: error.clone(),
            steps: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            wall_seconds,
            model_seconds: 0.0,
            queue_seconds: 0.0,
            diff: DiffStat::default(),
            run: None,
            error: Some(error),
        }
    }

    /// This result as one line of JSON.
    pub fn to_line(&self) -> String {
        // Strings, numbers and an enum with names: it always serializes.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// How a task ended, in four words a batch counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Verified: the verification command exited 0, and no command changed test code.
    Solved,
    /// The run ended unverified: the check failed, there was none, a budget other than
    /// time ran out, or the model got stuck.
    Unresolved,
    /// No run, or not a whole one: the repository, the settings, the model server or the
    /// harness itself failed.
    Error,
    /// The run used its time.
    Timeout,
}

impl Status {
    /// Every status, in the order a summary lists them.
    pub const ALL: [Status; 4] = [
        Status::Solved,
        Status::Unresolved,
        Status::Error,
        Status::Timeout,
    ];

    /// The status of a run that ended with `outcome`; `tests_unchanged` is false when a
    /// command changed test code, which makes a verified run not count, as in `harness run`.
    pub fn of(outcome: Outcome, tests_unchanged: bool) -> Status {
        match outcome {
            Outcome::Verified if tests_unchanged => Status::Solved,
            Outcome::TimeLimit => Status::Timeout,
            Outcome::ModelError | Outcome::Interrupted => Status::Error,
            _ => Status::Unresolved,
        }
    }

    /// Its name in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Status::Solved => "solved",
            Status::Unresolved => "unresolved",
            Status::Error => "error",
            Status::Timeout => "timeout",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The size of a run's diff.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffStat {
    /// Files changed.
    pub files: usize,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

/// Makes the output directory `out`, with a `.gitignore` that ignores all of it: run from
/// inside a repository (the default `--out` is relative), the batch's clones and results
/// would otherwise show in that checkout's `git status`, and a `git add -A` there would
/// take in every clone as an embedded repository.
///
/// # Errors
///
/// The directory or its `.gitignore` cannot be written.
pub fn create_out_dir(out: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(out).map_err(|source| Error::Write {
        path: out.to_owned(),
        source,
    })?;
    let ignore = out.join(".gitignore");
    if ignore.exists() {
        return Ok(());
    }
    write_atomic(
        &ignore,
        b"# Written by harness batch: its results are not source.\n*\n",
    )
}

/// `OUT/<id>`: where the task `id` writes.
pub fn task_dir(out: &Path, id: &str) -> PathBuf {
    out.join(id)
}

/// Writes a task's files into its directory `dir`: `patch`, a copy of `transcript` when a
/// run wrote one, then `result`.
///
/// # Errors
///
/// The directory cannot be made, the transcript read, or a file written.
pub(crate) fn write(
    dir: &Path,
    result: &TaskResult,
    patch: &str,
    transcript: Option<&Path>,
) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Write {
        path: dir.to_owned(),
        source,
    })?;
    write_atomic(&dir.join(PATCH_FILE), patch.as_bytes())?;
    if let Some(transcript) = transcript {
        let bytes = std::fs::read(transcript).map_err(|source| Error::Read {
            path: transcript.to_owned(),
            source,
        })?;
        write_atomic(&dir.join(TRANSCRIPT_FILE), &bytes)?;
    }
    let mut json = serde_json::to_string_pretty(result).unwrap_or_default();
    json.push('\n');
    write_atomic(&dir.join(RESULT_FILE), json.as_bytes())
}

/// The result in the task directory `dir`, if it has one.
///
/// # Errors
///
/// A `result.json` that cannot be read or is not a result.
pub fn read(dir: &Path) -> Result<Option<TaskResult>, Error> {
    let path = dir.join(RESULT_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(Error::Read { path, source }),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|source| Error::BadResult { path, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_map_onto_the_four_statuses() {
        let cases = [
            (Outcome::Verified, true, Status::Solved),
            (Outcome::Verified, false, Status::Unresolved),
            (Outcome::VerificationFailed, true, Status::Unresolved),
            (Outcome::Unverified, true, Status::Unresolved),
            (Outcome::StepLimit, true, Status::Unresolved),
            (Outcome::Stuck, true, Status::Unresolved),
            (Outcome::TimeLimit, true, Status::Timeout),
            (Outcome::ModelError, true, Status::Error),
            (Outcome::Interrupted, true, Status::Error),
        ];
        for (outcome, unchanged, status) in cases {
            assert_eq!(Status::of(outcome, unchanged), status, "{outcome}");
        }
    }

    #[test]
    fn a_result_written_reads_back_the_same_after_its_patch_and_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let transcript = dir.path().join("source.jsonl");
        std::fs::write(&transcript, "{\"type\":\"task\"}\n").unwrap();
        let task = dir.path().join("t1");
        let result = TaskResult::error("t1", 0, "no repository".to_owned(), 0.5);
        assert_eq!(read(&task).unwrap(), None);
        write(&task, &result, "diff --git a/x b/x\n", Some(&transcript)).unwrap();
        assert_eq!(read(&task).unwrap(), Some(result));
        assert_eq!(
            std::fs::read_to_string(task.join(TRANSCRIPT_FILE)).unwrap(),
            "{\"type\":\"task\"}\n"
        );
        assert_eq!(
            std::fs::read_to_string(task.join(PATCH_FILE)).unwrap(),
            "diff --git a/x b/x\n"
        );
    }

    #[test]
    fn a_result_file_that_is_not_one_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(RESULT_FILE), "{}").unwrap();
        let error = read(dir.path()).unwrap_err();
        assert!(error.to_string().contains("result.json"), "{error}");
    }

    #[test]
    fn statuses_are_named_in_json_as_in_their_names() {
        for status in Status::ALL {
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                serde_json::json!(status.name())
            );
        }
    }
}
