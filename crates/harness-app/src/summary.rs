//! What a finished run's summary states: [`RunSummary`], the facts of [`Finished`] and the
//! [`RunReport`] made ready to show (the files changed with their line counts, what undo
//! cannot take back, the verification sentence) and their JSON object; and the commands
//! that follow a run up (review, undo, keep, show). A front end words the text lines,
//! colours and prints them; this file prints nothing.

use std::path::{Path, PathBuf};

use harness_agent::RunReport;
use harness_undo::{Diff, IgnoredChange, IgnoredChanges};
use serde_json::json;

use crate::run::Finished;
use crate::{boundary, quote};

/// What a finished run did, ready for a front end to show: built from its [`RunReport`]
/// and what it left behind ([`Finished`]).
#[derive(Debug)]
pub struct RunSummary<'a> {
    /// How the run ended: outcome, reason, verification, cost, warnings.
    pub report: &'a RunReport,
    /// The run's id.
    pub run: String,
    /// Changed files with lines added and removed, or why they could not be listed.
    pub changed: Result<Vec<ChangedFile>, String>,
    /// Why recording the run's end failed, if it did.
    pub finish_error: Option<String>,
    /// Paths commands changed that undo cannot put back (ignored ones too large to save at
    /// the start, directories too deep to record): how many, and the first.
    pub not_undoable: (usize, Vec<PathBuf>),
    /// Ignored files the run made, changed or deleted (undo puts them back), or why they
    /// could not be listed.
    pub ignored: Result<IgnoredChanges, String>,
    /// Files too large to record that the run wrote.
    pub too_large: Vec<PathBuf>,
    /// The paths whose owner got back the access a command took.
    pub access_given_back: Vec<PathBuf>,
    /// Test files changed although the tools may not change them: by a command.
    pub tests_changed: Vec<String>,
}

impl<'a> RunSummary<'a> {
    /// The summary of the run that ended as `report` said (`recorded` says how recording
    /// its end went), from what it left behind.
    pub fn new(
        report: &'a RunReport,
        recorded: Result<(), harness_undo::Error>,
        finished: Finished,
    ) -> RunSummary<'a> {
        RunSummary {
            report,
            run: finished.run,
            changed: ChangedFile::all(&finished.changed),
            finish_error: recorded.err().map(|error| error.to_string()),
            not_undoable: finished.not_undoable,
            ignored: finished.ignored.map_err(|error| error.to_string()),
            too_large: finished.too_large,
            access_given_back: finished.access_given_back,
            tests_changed: finished.tests_changed,
        }
    }

    /// What checked the model's work, in one sentence: nothing, a command that never ran,
    /// or how its last run went.
    pub fn verification(&self) -> String {
        match &self.report.verification {
            None => "none was given, so nothing checked the model's claim that it was done; \
                     pass --verify CMD"
                .to_owned(),
            Some(v) if v.runs == 0 => format!(
                "`{}` never ran after the model's work: the model did not say it was done",
                v.command
            ),
            Some(v) => format!(
                "`{}` ran {} time{} to check the model's work; the last run {}",
                v.command,
                v.runs,
                if v.runs == 1 { "" } else { "s" },
                if v.passed {
                    "passed (exit 0)"
                } else if !v.changed.is_empty() {
                    "exited 0 but does not count: what it loads besides the code under test \
                     changed since the run began"
                } else {
                    "failed"
                }
            ),
        }
    }

    /// The warnings to show: the run's, then why recording its end failed.
    pub fn warnings(&self) -> impl Iterator<Item = &String> {
        self.report.warnings.iter().chain(&self.finish_error)
    }

    /// The summary as one JSON object (the last line of `harness run --json`), with what
    /// is the front end's own: the exit code it gives and its follow-up command lines.
    pub fn to_json(&self, exit_code: u8, commands: &[(&str, String)]) -> serde_json::Value {
        let commands: serde_json::Map<String, serde_json::Value> = commands
            .iter()
            .map(|(label, command)| ((*label).to_owned(), json!(command)))
            .collect();
        let changed = match &self.changed {
            Ok(files) => json!(
                files
                    .iter()
                    .map(|file| json!({"path": file.path, "added": file.added, "removed": file.removed}))
                    .collect::<Vec<_>>()
            ),
            Err(error) => json!({"error": error}),
        };
        json!({
            "event": "summary",
            "run": self.run,
            "outcome": self.report.outcome,
            "reason": self.report.reason,
            "attempts": self.report.attempts,
            "exit_code": exit_code,
            "tests_changed": self.tests_changed,
            "verification": self.verification(),
            "files_changed": changed,
            "not_undoable": {
                "count": self.not_undoable.0,
                "first": self.not_undoable.1.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            },
            "ignored": match &self.ignored {
                Ok(changes) => json!(
                    changes
                        .all()
                        .iter()
                        .map(|(path, change)| json!({"path": path.display().to_string(), "change": ignored_word(*change)}))
                        .collect::<Vec<_>>()
                ),
                Err(error) => json!({"error": error}),
            },
            "too_large": self.too_large.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "commands": commands,
            "warnings": self.warnings().collect::<Vec<_>>(),
            "boundary": boundary::STATEMENT,
        })
    }
}

/// A file the run changed, with the lines it added and removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedFile {
    /// Its path, relative to the workspace.
    pub path: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

impl ChangedFile {
    /// The files `changed` lists, or why they could not be listed.
    pub fn all(changed: &Result<Diff, harness_undo::Error>) -> Result<Vec<ChangedFile>, String> {
        let diff = changed.as_ref().map_err(ToString::to_string)?;
        Ok(diff
            .files
            .iter()
            .map(|file| ChangedFile {
                path: file.path.display().to_string(),
                added: file.additions,
                removed: file.deletions,
            })
            .collect())
    }
}

/// The commands that follow up the run `run` of the workspace `root`, each with its label:
/// review its diff, undo it, keep it and show its transcript. Each is the command line
/// after the program's name, the workspace quoted for a POSIX shell.
pub fn follow_ups(run: &str, root: &Path) -> [(&'static str, String); 4] {
    let workspace = quote(&root.display().to_string());
    [
        ("review", format!("diff {run} --workspace {workspace}")),
        ("undo", format!("undo {run} --workspace {workspace}")),
        ("keep", format!("accept {run} --workspace {workspace}")),
        ("transcript", format!("show {run} --workspace {workspace}")),
    ]
}

/// How an ignored path changed, in one word: new, changed or deleted.
pub fn ignored_word(change: IgnoredChange) -> &'static str {
    match change {
        IgnoredChange::Created => "new",
        IgnoredChange::Deleted => "deleted",
        // Changed, and any kind a later harness-undo adds.
        _ => "changed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_object_holds_the_facts_and_what_the_front_end_gives() {
        let report = RunReport::of_calls(
            harness_agent::Outcome::Unverified,
            "the client closed the session".to_owned(),
            2,
            std::time::Duration::from_secs(1),
        );
        let summary = RunSummary {
            report: &report,
            run: "20250101-000000-000".to_owned(),
            changed: Ok(vec![ChangedFile {
                path: "src/lib.rs".to_owned(),
                added: 3,
                removed: 1,
            }]),
            finish_error: Some("cannot record the end".to_owned()),
            not_undoable: (7, vec![PathBuf::from("target/big")]),
            ignored: Err("cannot list them".to_owned()),
            too_large: Vec::new(),
            access_given_back: Vec::new(),
            tests_changed: Vec::new(),
        };
        let json = summary.to_json(2, &[("undo", "harness undo".to_owned())]);
        assert_eq!(json["event"], "summary");
        assert_eq!(json["exit_code"], 2);
        assert_eq!(json["commands"]["undo"], "harness undo");
        assert_eq!(
            json["files_changed"][0],
            serde_json::json!({"path": "src/lib.rs", "added": 3, "removed": 1})
        );
        assert_eq!(json["not_undoable"]["count"], 7);
        assert_eq!(json["ignored"]["error"], "cannot list them");
        assert_eq!(json["warnings"][0], "cannot record the end");
        assert!(
            summary
                .verification()
                .starts_with("none was given, so nothing checked")
        );
    }

    #[test]
    fn follow_ups_quote_the_workspace() {
        let commands = follow_ups("20250101-000000-000", Path::new("/tmp/my project"));
        assert_eq!(
            commands[0],
            (
                "review",
                "diff 20250101-000000-000 --workspace '/tmp/my project'".to_owned()
            )
        );
        assert_eq!(commands[3].0, "transcript");
    }
}
