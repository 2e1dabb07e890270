//! Gathering a batch's results: every `OUT/*/result.json`, written by a local run or by
//! an engine's jobs one index at a time, into `OUT/results.jsonl` (in the task file's
//! order) and a summary, `OUT/summary.json` and `OUT/summary.md`, each written atomically.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::Error;
use crate::atomic::write_atomic;
use crate::result::{self, Status, TaskResult};

/// The results file's name in the output directory.
pub const RESULTS_FILE: &str = "results.jsonl";
/// The JSON summary's name in the output directory.
pub const SUMMARY_JSON: &str = "summary.json";
/// The markdown summary's name in the output directory.
pub const SUMMARY_MD: &str = "summary.md";

/// A batch's results, gathered.
#[derive(Clone, Debug)]
pub struct Collected {
    /// Every result, by index in the task file.
    pub results: Vec<TaskResult>,
    /// What they add up to.
    pub summary: Summary,
    /// The `result.json` files that could not be read, each with why: left out.
    pub unreadable: Vec<String>,
}

/// What a batch's results add up to: `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Tasks with a result.
    pub tasks: usize,
    /// Verified.
    pub solved: usize,
    /// Ended unverified.
    pub unresolved: usize,
    /// No run, or the harness failed.
    pub error: usize,
    /// Used their time.
    pub timeout: usize,
    /// Solved over tasks, from 0 to 1; 0 without tasks.
    pub solved_rate: f64,
    /// The tasks' wall time, added up.
    pub wall_seconds_total: f64,
    /// The tasks' mean wall time; 0 without tasks.
    pub wall_seconds_mean: f64,
    /// The tasks' time inside model requests, added up.
    pub model_seconds_total: f64,
    /// The tasks' time waiting for a model slot (`--max-inflight`), added up.
    pub queue_seconds_total: f64,
    /// Prompt tokens over every task.
    pub prompt_tokens: u64,
    /// Generated tokens over every task.
    pub completion_tokens: u64,
}

impl Summary {
    /// What `results` add up to.
    pub fn of(results: &[TaskResult]) -> Summary {
        let count = |status| results.iter().filter(|r| r.status == status).count();
        let tasks = results.len();
        let wall_seconds_total: f64 = results.iter().map(|r| r.wall_seconds).sum();
        let per_task = |total: f64| {
            if tasks == 0 {
                0.0
            } else {
                total / tasks as f64
            }
        };
        Summary {
            tasks,
            solved: count(Status::Solved),
            unresolved: count(Status::Unresolved),
            error: count(Status::Error),
            timeout: count(Status::Timeout),
            solved_rate: per_task(count(Status::Solved) as f64),
            wall_seconds_total,
            wall_seconds_mean: per_task(wall_seconds_total),
            model_seconds_total: results.iter().map(|r| r.model_seconds).sum(),
            queue_seconds_total: results.iter().map(|r| r.queue_seconds).sum(),
            prompt_tokens: results.iter().map(|r| r.prompt_tokens).sum(),
            completion_tokens: results.iter().map(|r| r.completion_tokens).sum(),
        }
    }

    /// How many tasks ended with `status`.
    pub fn count(&self, status: Status) -> usize {
        match status {
            Status::Solved => self.solved,
            Status::Unresolved => self.unresolved,
            Status::Error => self.error,
            Status::Timeout => self.timeout,
        }
    }
}

/// Reads every `OUT/*/result.json` and writes `results.jsonl`, `summary.json` and
/// `summary.md` into `out`.
///
/// # Errors
///
/// `out` cannot be listed, or a file cannot be written. A result file that cannot be read
/// is not an error: it is listed in [`Collected::unreadable`].
pub fn collect(out: &Path) -> Result<Collected, Error> {
    let listing = std::fs::read_dir(out).map_err(|source| Error::Read {
        path: out.to_owned(),
        source,
    })?;
    let mut results = Vec::new();
    let mut unreadable = Vec::new();
    for entry in listing.filter_map(Result::ok) {
        if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            continue;
        }
        match result::read(&entry.path()) {
            Ok(Some(result)) => results.push(result),
            Ok(None) => {}
            Err(error) => unreadable.push(error.chain()),
        }
    }
    results.sort_by(|a, b| (a.index, &a.id).cmp(&(b.index, &b.id)));
    let summary = Summary::of(&results);

    let lines: String = results.iter().map(|r| r.to_line() + "\n").collect();
    write_atomic(&out.join(RESULTS_FILE), lines.as_bytes())?;
    let mut json = serde_json::to_string_pretty(&summary).unwrap_or_default();
    json.push('\n');
    write_atomic(&out.join(SUMMARY_JSON), json.as_bytes())?;
    write_atomic(
        &out.join(SUMMARY_MD),
        markdown(&summary, &results).as_bytes(),
    )?;
    Ok(Collected {
        results,
        summary,
        unreadable,
    })
}

/// `summary.md`: the counts, then one row per task.
pub fn markdown(summary: &Summary, results: &[TaskResult]) -> String {
    let mut text = String::from("# Batch summary\n\n| status | tasks |\n|---|---|\n");
    for status in Status::ALL {
        let _ = writeln!(text, "| {status} | {} |", summary.count(status));
    }
    let _ = write!(
        text,
        "\n{} tasks, {} solved ({:.0}%); wall time {:.1} s in all, {:.1} s per task, \
         of which {:.1} s in model requests and {:.1} s waiting for a model slot; \
         tokens {} prompt, {} generated.\n\n",
        summary.tasks,
        summary.solved,
        summary.solved_rate * 100.0,
        summary.wall_seconds_total,
        summary.wall_seconds_mean,
        summary.model_seconds_total,
        summary.queue_seconds_total,
        summary.prompt_tokens,
        summary.completion_tokens,
    );
    text.push_str("| id | status | outcome | steps | wall s | model s | queue s | files | +/- |\n");
    text.push_str("|---|---|---|---|---|---|---|---|---|\n");
    for r in results {
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {} | +{} −{} |",
            r.id,
            r.status,
            r.outcome.replace('|', "/"),
            r.steps,
            r.wall_seconds,
            r.model_seconds,
            r.queue_seconds,
            r.diff.files,
            r.diff.added,
            r.diff.removed
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, index: usize, status: Status, wall_seconds: f64) -> TaskResult {
        TaskResult {
            status,
            prompt_tokens: 100,
            completion_tokens: 10,
            model_seconds: wall_seconds / 2.0,
            queue_seconds: 0.5,
            ..TaskResult::error(id, index, String::new(), wall_seconds)
        }
    }

    #[test]
    fn results_are_gathered_in_the_task_file_s_order_and_added_up() {
        let out = tempfile::tempdir().unwrap();
        for r in [
            result("zeta", 0, Status::Solved, 1.0),
            result("alpha", 2, Status::Unresolved, 2.0),
            result("mid", 1, Status::Solved, 3.0),
        ] {
            result::write(&out.path().join(&r.id), &r, "", None).unwrap();
        }
        std::fs::create_dir(out.path().join("no-result-yet")).unwrap();
        let collected = collect(out.path()).unwrap();
        let ids: Vec<&str> = collected.results.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["zeta", "mid", "alpha"]);
        let summary = &collected.summary;
        assert_eq!(
            (summary.tasks, summary.solved, summary.unresolved),
            (3, 2, 1)
        );
        assert!((summary.solved_rate - 2.0 / 3.0).abs() < 1e-9);
        assert!((summary.wall_seconds_mean - 2.0).abs() < 1e-9);
        assert_eq!(summary.prompt_tokens, 300);
        assert!((summary.model_seconds_total - 3.0).abs() < 1e-9);
        assert!((summary.queue_seconds_total - 1.5).abs() < 1e-9);

        let lines = std::fs::read_to_string(out.path().join(RESULTS_FILE)).unwrap();
        let first: TaskResult = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
        assert_eq!(first, collected.results[0]);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.path().join(SUMMARY_JSON)).unwrap())
                .unwrap();
        assert_eq!(json["solved"], 2);
        let md = std::fs::read_to_string(out.path().join(SUMMARY_MD)).unwrap();
        assert!(md.contains("| solved | 2 |"), "{md}");
        assert!(md.contains("| mid | solved |"), "{md}");
    }

    #[test]
    fn a_result_written_before_model_time_was_counted_reads_as_none_spent() {
        let mut old = serde_json::to_value(result("old", 0, Status::Solved, 1.0)).unwrap();
        let fields = old.as_object_mut().unwrap();
        fields.remove("model_seconds");
        fields.remove("queue_seconds");
        let read: TaskResult = serde_json::from_value(old).unwrap();
        assert_eq!((read.model_seconds, read.queue_seconds), (0.0, 0.0));
    }

    #[test]
    fn a_result_that_cannot_be_read_is_listed_and_left_out() {
        let out = tempfile::tempdir().unwrap();
        std::fs::create_dir(out.path().join("broken")).unwrap();
        std::fs::write(out.path().join("broken/result.json"), "{").unwrap();
        let collected = collect(out.path()).unwrap();
        assert!(collected.results.is_empty());
        assert_eq!(collected.unreadable.len(), 1);
        assert!(
            collected.unreadable[0].contains("broken"),
            "{:?}",
            collected.unreadable
        );
        assert_eq!(collected.summary.solved_rate, 0.0);
    }
}
