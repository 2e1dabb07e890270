//! A batch in words, for a person: [`progress_line`] as each task finishes and
//! [`table`] at the end. Every line is [`Shown`]: a task's id, outcome and error came
//! from a task file, a model or a command, and are made safe to show.

use std::path::Path;
use std::time::Duration;

use harness_app::render::count;
use harness_app::shown;
use harness_app::shown::Shown;

use crate::collect::{Collected, RESULTS_FILE};
use crate::local::Progress;

/// `[2/4] fix-add: solved (verified) after 3 steps, 1.2 s · 1 running, 1 solved, 0:02
/// elapsed, about 0:02 left`; an error says what went wrong instead of the outcome.
pub fn progress_line(progress: &Progress<'_>) -> Shown {
    let task = progress.finished;
    let how = match &task.error {
        Some(error) => format!("after {:.1} s: {error}", task.wall_seconds),
        None => format!(
            "({}) after {}, {:.1} s",
            task.outcome,
            count(u64::from(task.steps), "step"),
            task.wall_seconds
        ),
    };
    let left = progress
        .estimate
        .map_or_else(String::new, |left| format!(", about {} left", clock(left)));
    shown!(
        "[{}/{}] {}: {} {} · {} running, {} solved, {} elapsed{}",
        progress.done,
        progress.total,
        task.id,
        task.status,
        how,
        progress.running,
        progress.solved,
        clock(progress.elapsed),
        left
    )
}

/// The results as a table, one row per task, then the counts and where the files are
/// (`out`, the batch's output directory).
pub fn table(collected: &Collected, out: &Path) -> Vec<Shown> {
    let width = collected
        .results
        .iter()
        .map(|r| r.id.len())
        .max()
        .unwrap_or(2)
        .max(2);
    let mut lines = vec![Shown::line(&format!(
        "{:<width$}  {:<10}  {:>5}  {:>7}  outcome",
        "id", "status", "steps", "wall s"
    ))];
    for r in &collected.results {
        lines.push(Shown::line(&format!(
            "{:<width$}  {:<10}  {:>5}  {:>7.1}  {}",
            r.id, r.status, r.steps, r.wall_seconds, r.outcome
        )));
    }
    let s = &collected.summary;
    lines.push(shown!(
        "{} tasks: {} solved, {} unresolved, {} error, {} timeout ({}% solved); results in {}",
        s.tasks,
        s.solved,
        s.unresolved,
        s.error,
        s.timeout,
        format!("{:.0}", s.solved_rate * 100.0),
        out.join(RESULTS_FILE).display()
    ));
    lines
}

/// `m:ss`.
fn clock(duration: Duration) -> String {
    let seconds = duration.as_secs();
    format!("{}:{:02}", seconds / 60, seconds % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_reads_minutes_and_seconds() {
        assert_eq!(clock(Duration::from_secs(0)), "0:00");
        assert_eq!(clock(Duration::from_secs(125)), "2:05");
    }
}
