//! A finished run's summary in words: [`SummaryText`] turns [`RunSummary`]'s facts into the
//! lines a person reads at the end of a run (its outcome, verification and cost, the files
//! it changed, what needs the user's eye, the commands to review, undo or keep it, and the
//! warnings), coloured by a [`Style`]. The `harness` command prints them; so can any front
//! end that runs a task (one summary per task of a batch, or per turn of a session).

use std::path::Path;
use std::time::Duration;

use harness_agent::Outcome;

use super::{Style, count};
use crate::shown;
use crate::shown::{Shown, Visible};
use crate::summary::{RunSummary, follow_ups, ignored_word};

/// [`RunSummary`]'s facts in words, for the workspace at `root`.
pub struct SummaryText<'a> {
    facts: &'a RunSummary<'a>,
    root: &'a Path,
    /// What a command line the user may paste starts with (`harness`, or the path of the
    /// executable).
    program: &'a str,
}

impl<'a> SummaryText<'a> {
    /// The words of `facts`, whose run worked in `root`; every command line printed starts
    /// with `program`.
    pub fn new(facts: &'a RunSummary<'a>, root: &'a Path, program: &'a str) -> SummaryText<'a> {
        SummaryText {
            facts,
            root,
            program,
        }
    }

    /// The summary's lines, in order: the run's facts, then what needs the user's eye
    /// (yellow, or red for changed test code), the commands to review, undo or keep it,
    /// and the warnings.
    pub fn lines(&self, style: Style) -> Vec<Shown> {
        let mut lines = vec![self.opening(style)];
        let notes = [
            self.ignored_line(),
            self.not_undoable_line(),
            self.too_large_line(),
            crate::review::access_line_for(&self.facts.access_given_back),
        ];
        for line in notes.iter().flatten() {
            lines.push(shown!("  {}", style.yellow(line)));
        }
        if let Some(line) = self.tests_changed_line() {
            lines.push(shown!("  {}", style.red(&line)));
        }
        for (label, command) in self.commands() {
            lines.push(shown!("  {:<14} {}", format!("{label}:"), command));
        }
        for warning in self.facts.warnings() {
            let warning = shown!("warning: {}", Shown::text(warning));
            lines.push(shown!("  {}", style.yellow(&warning)));
        }
        // The boundary statement is not repeated here: the header printed it as the run
        // began, where it can still change the user's mind, and twice per run reads as noise.
        lines
    }

    /// The commands that review, undo, keep or show the run, each with its label, ready to
    /// paste.
    pub fn commands(&self) -> [(&'static str, String); 4] {
        follow_ups(&self.facts.run, self.root)
            .map(|(label, rest)| (label, format!("{} {rest}", self.program)))
    }

    /// The block that opens the summary: outcome, verification, cost, workspace and the
    /// files changed.
    fn opening(&self, style: Style) -> Shown {
        let report = self.facts.report;
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
            self.facts.verification(),
            report.steps,
            match report.attempts {
                1 => String::new(),
                attempts => format!(" in {attempts} attempts, each but the last reverted"),
            },
            count(report.tool_calls as u64, "tool call"),
            report.prompt_tokens,
            report.completion_tokens,
            duration(report.duration),
            self.root.display(),
            self.changed_line(),
        )
    }

    /// The outcome in its colour: green when verified, yellow when unverified, red else.
    fn outcome(&self, style: Style) -> Shown {
        let outcome = Shown::line(&self.facts.report.outcome.to_string());
        match self.facts.report.outcome {
            Outcome::Verified => style.green(&outcome),
            Outcome::Unverified => style.yellow(&outcome),
            _ => style.red(&outcome),
        }
    }

    /// The files changed, each with lines added and removed, the first few named.
    fn changed_line(&self) -> Shown {
        let ignored_count = self.facts.ignored.as_ref().map_or(0, |i| i.all().len());
        match &self.facts.changed {
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
                        format!("{} diff --stat", self.program)
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
        if self.facts.too_large.is_empty() {
            return None;
        }
        let one = self.facts.too_large.len() == 1;
        Some(shown!(
            "too large:     {} {} larger than {} MiB, so no snapshot holds {}: undo puts \
             back what was there before the run (a new file stays), redo cannot bring {} \
             back, and accept refuses until {} gone",
            crate::review::named_paths(&self.facts.too_large),
            if one { "is" } else { "are" },
            harness_undo::LARGEST_RECORDED_FILE >> 20,
            if one { "it" } else { "them" },
            if one { "it" } else { "them" },
            if one { "it is" } else { "they are" },
        ))
    }

    /// `test code:     changed by a command: ...`: why a verified run is not counted done.
    fn tests_changed_line(&self) -> Option<Shown> {
        if self.facts.tests_changed.is_empty() {
            return None;
        }
        let files: Vec<Shown> = self
            .facts
            .tests_changed
            .iter()
            .map(|p| Shown::line(p))
            .collect();
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
        let changes = match &self.facts.ignored {
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
        let (count, first) = &self.facts.not_undoable;
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
