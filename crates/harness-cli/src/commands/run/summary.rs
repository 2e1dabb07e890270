//! What the run did, shown at the end: its outcome and verification, its cost, the files
//! it changed, what undo cannot take back, and the commands to review, undo or keep it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness_agent::{Outcome, RunReport};
use harness_app::{ChangedFile, Finished};
use serde_json::json;

use crate::boundary;
use crate::display::{Out, Style};
use crate::exit;
use crate::shown::{Shown, Visible, shown};

/// What the run did, printed at the end.
pub(super) struct Summary<'a> {
    report: &'a RunReport,
    run: String,
    root: &'a Path,
    /// Changed files with lines added and removed, or why they could not be listed.
    changed: Result<Vec<ChangedFile>, String>,
    finish_error: Option<String>,
    /// Paths commands changed that undo cannot put back (ignored ones too large to save at
    /// the start, directories too deep to record): how many, and the first.
    not_undoable: (usize, Vec<PathBuf>),
    /// Ignored files the run made, changed or deleted (undo puts them back), or why they
    /// could not be listed.
    ignored: Result<harness_undo::IgnoredChanges, String>,
    /// Files too large to record that the run wrote.
    too_large: Vec<PathBuf>,
    /// The line naming paths whose owner got back the access a command took.
    access: Option<Shown>,
    /// Test files changed although the tools may not change them: by a command.
    tests_changed: Vec<String>,
}

impl<'a> Summary<'a> {
    /// The summary of the run that ended as `report` said (`recorded` says how recording
    /// its end went), from what it left behind.
    pub(super) fn new(
        report: &'a RunReport,
        recorded: Result<(), harness_undo::Error>,
        finished: Finished,
        root: &'a Path,
    ) -> Summary<'a> {
        Summary {
            report,
            run: finished.run,
            root,
            changed: ChangedFile::all(&finished.changed),
            finish_error: recorded.err().map(|error| error.to_string()),
            not_undoable: finished.not_undoable,
            ignored: finished.ignored.map_err(|error| error.to_string()),
            too_large: finished.too_large,
            access: crate::review::access_line_for(&finished.access_given_back),
            tests_changed: finished.tests_changed,
        }
    }

    /// The run's exit status: a verified run whose commands changed test code is not
    /// counted as done, since the tests it passed may not be the ones the user wrote.
    pub(super) fn exit_code(&self) -> u8 {
        if self.tests_changed.is_empty() {
            exit::code_for_outcome(self.report.outcome)
        } else {
            exit::NOT_VERIFIED
        }
    }

    /// The commands that review, undo, keep or show the run, each with its label.
    fn commands(&self) -> [(&'static str, String); 4] {
        harness_app::follow_ups(&self.run, self.root)
            .map(|(label, rest)| (label, crate::program::command(&rest)))
    }

    fn verification(&self) -> String {
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

    /// Prints the summary for a person: the run's facts, then what needs the user's eye
    /// (yellow, or red for changed test code), the commands to review, undo or keep it,
    /// and the warnings.
    pub(super) fn print(&self, style: Style) {
        let mut out = Out::stdout();
        let _ = out.line(&self.facts(style));
        let notes = [
            self.ignored_line(),
            self.not_undoable_line(),
            self.too_large_line(),
            self.access.clone(),
        ];
        for line in notes.iter().flatten() {
            let _ = out.line(&shown!("  {}", style.yellow(line)));
        }
        if let Some(line) = self.tests_changed_line() {
            let _ = out.line(&shown!("  {}", style.red(&line)));
        }
        for (label, command) in self.commands() {
            let _ = out.line(&shown!("  {:<14} {}", format!("{label}:"), command));
        }
        for warning in self.report.warnings.iter().chain(&self.finish_error) {
            let warning = shown!("warning: {}", Shown::text(warning));
            let _ = out.line(&shown!("  {}", style.yellow(&warning)));
        }
        // The boundary statement is not repeated here: the header printed it as the run
        // began, where it can still change the user's mind, and twice per run reads as noise.
    }

    /// The block that opens the summary: outcome, verification, cost, workspace and the
    /// files changed.
    fn facts(&self, style: Style) -> Shown {
        let report = self.report;
        shown!(
            "\n{}\n\
             \x20 outcome:       {} — {}\n\
             \x20 verification:  {}\n\
             \x20 steps:         {}{} ({})   tokens: {} prompt + {} generated   time: {}\n\
             \x20 workspace:     {}\n\
             \x20 files changed: {}",
            style.bold(&shown!("summary")),
            style.bold(&self.outcome(style)),
            report.reason,
            self.verification(),
            report.steps,
            match report.attempts {
                1 => String::new(),
                attempts => format!(" in {attempts} attempts, each but the last reverted"),
            },
            crate::display::count(report.tool_calls as u64, "tool call"),
            report.prompt_tokens,
            report.completion_tokens,
            duration(report.duration),
            self.root.display(),
            self.changed_line(),
        )
    }

    /// The outcome in its colour: green when verified, yellow when unverified, red else.
    fn outcome(&self, style: Style) -> Shown {
        let outcome = Shown::line(&self.report.outcome.to_string());
        match self.report.outcome {
            Outcome::Verified => style.green(&outcome),
            Outcome::Unverified => style.yellow(&outcome),
            _ => style.red(&outcome),
        }
    }

    /// The files changed, each with lines added and removed, the first few named.
    fn changed_line(&self) -> Shown {
        let ignored_count = self.ignored.as_ref().map_or(0, |i| i.all().len());
        match &self.changed {
            Ok(files) if files.is_empty() && ignored_count > 0 => {
                shown!("none that git records (ignored ones below)")
            }
            Ok(files) if files.is_empty() => shown!("none"),
            Ok(files) => {
                let named: Vec<Shown> = files
                    .iter()
                    .take(crate::review::NAMED_PATHS)
                    .map(|file| shown!("{} (+{} −{})", file.path, file.added, file.removed))
                    .collect();
                let mut line = Shown::join(&named, ", ");
                if files.len() > named.len() {
                    line.push(&shown!(
                        " and {} more ({} in all: {} lists them)",
                        files.len() - named.len(),
                        files.len(),
                        crate::program::command("diff --stat")
                    ));
                }
                line
            }
            Err(error) => shown!("unknown ({})", error),
        }
    }

    /// `too large:     a is larger than N MiB, ...`: files the run wrote that no snapshot
    /// holds.
    fn too_large_line(&self) -> Option<Shown> {
        if self.too_large.is_empty() {
            return None;
        }
        let one = self.too_large.len() == 1;
        Some(shown!(
            "too large:     {} {} larger than {} MiB, so no snapshot holds {}: undo puts \
             back what was there before the run (a new file stays), redo cannot bring {} \
             back, and accept refuses until {} gone",
            crate::review::named_paths(&self.too_large),
            if one { "is" } else { "are" },
            harness_undo::LARGEST_RECORDED_FILE >> 20,
            if one { "it" } else { "them" },
            if one { "it" } else { "them" },
            if one { "it is" } else { "they are" },
        ))
    }

    /// `test code:     changed by a command: ...`: why a verified run is not counted done.
    fn tests_changed_line(&self) -> Option<Shown> {
        if self.tests_changed.is_empty() {
            return None;
        }
        let files: Vec<Shown> = self.tests_changed.iter().map(|p| Shown::line(p)).collect();
        Some(shown!(
            "test code:     changed by a command: {} (the file tools may not change it); \
             a passing verification does not show the code was fixed, so the run is not \
             counted as done (exit 1): review the diff",
            Shown::join(&files, ", ")
        ))
    }

    /// `ignored:       N paths git ignores that the run made or changed: a (new), b
    /// (changed) and N-2 more (undo puts them back)`, or why they could not be listed.
    fn ignored_line(&self) -> Option<Shown> {
        const NAMED: usize = 5;
        let changes = match &self.ignored {
            Ok(changes) => changes,
            Err(error) => {
                return Some(shown!(
                    "ignored:       the files git ignores could not be compared with the \
                     start ({}): undo may not put back what commands wrote there",
                    error
                ));
            }
        };
        let all = changes.all();
        if all.is_empty() && !changes.incomplete {
            return None;
        }
        let named: Vec<Shown> = all
            .iter()
            .take(NAMED)
            .map(|(path, change)| shown!("{} ({})", path.display(), ignored_word(*change)))
            .collect();
        let more = all.len() - named.len();
        Some(shown!(
            "ignored:       {} path{} git ignores that the run's commands or checks made, \
             changed or deleted: {}{} (not in the diff; undo puts them back{}){}",
            all.len(),
            if all.len() == 1 { "" } else { "s" },
            Shown::join(&named, ", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            },
            if changes.not_restorable.is_empty() {
                ""
            } else {
                ", but those named as not undoable"
            },
            if changes.incomplete {
                format!(
                    "; more than {} ignored entries: those past them were not compared",
                    harness_undo::MOST_LISTED_IGNORED
                )
            } else {
                String::new()
            }
        ))
    }

    /// `not undoable:  N paths commands changed that undo cannot put back (...): a, b, c and
    /// N-3 more`.
    fn not_undoable_line(&self) -> Option<Shown> {
        const NAMED: usize = 5;
        let (count, first) = &self.not_undoable;
        if *count == 0 {
            return None;
        }
        let named: Vec<Shown> = first
            .iter()
            .take(NAMED)
            .map(|p| p.display().shown())
            .collect();
        let more = count - named.len();
        Some(shown!(
            "not undoable:  {} path{} commands changed that undo cannot put back (ignored and \
             too large to save at the start, or nested too deep to record): {}{} (undo leaves \
             them as they are)",
            count,
            if *count == 1 { "" } else { "s" },
            Shown::join(&named, ", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ))
    }

    /// The summary as the last line of `--json`.
    pub(super) fn to_json(&self) -> serde_json::Value {
        let commands: serde_json::Map<String, serde_json::Value> = self
            .commands()
            .into_iter()
            .map(|(label, command)| (label.to_owned(), json!(command)))
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
            "exit_code": self.exit_code(),
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
            "warnings": self.report.warnings.iter().chain(&self.finish_error).collect::<Vec<_>>(),
            "boundary": boundary::STATEMENT,
        })
    }
}

/// How an ignored path changed, in one word.
pub(crate) fn ignored_word(change: harness_undo::IgnoredChange) -> &'static str {
    match change {
        harness_undo::IgnoredChange::Created => "new",
        harness_undo::IgnoredChange::Deleted => "deleted",
        // Changed, and any kind a later harness-undo adds.
        _ => "changed",
    }
}

/// `1m 12s`, `8.3s`.
fn duration(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds < 60.0 {
        format!("{seconds:.1}s")
    } else {
        format!(
            "{}m {:02}s",
            duration.as_secs() / 60,
            duration.as_secs() % 60
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_seconds_or_minutes() {
        assert_eq!(duration(Duration::from_millis(8_340)), "8.3s");
        assert_eq!(duration(Duration::from_secs(72)), "1m 12s");
    }
}
