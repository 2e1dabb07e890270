//! Recorded runs in words: the table of a workspace's runs ([`runs_table`]), what a prune
//! did ([`pruned_lines`]), every workspace's store ([`stores_table`]) and a size a person
//! reads ([`human_size`]). `harness runs` prints them; a session lists runs the same way.

use harness_undo::{Pruned, StoreInfo};

use crate::runs::{Listed, StoreState};
use crate::shown;
use crate::shown::Shown;

/// The runs, oldest first, one line each under a heading: id, outcome, steps, state and
/// the first line of the task (its first 60 characters); a follow-up's, marked `↳`, names
/// the run it follows.
pub fn runs_table(runs: &[Listed]) -> Vec<Shown> {
    let mut lines = vec![shown!(
        "{:<19}  {:<19}  {:>5}  {:<8}  task",
        "run",
        "outcome",
        "steps",
        "state"
    )];
    for run in runs {
        let steps = run
            .info
            .steps
            .map_or_else(|| "-".to_owned(), |steps| steps.to_string());
        let task: String = run
            .info
            .task
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(60)
            .collect();
        // A follow-up says which run it follows, so the chain reads down the table.
        let task = match super::follows_line(&run.info) {
            Some(follows) => format!("↳ {task}  ({})", follows.as_str()),
            None => task,
        };
        lines.push(shown!(
            "{:<19}  {:<19}  {:>5}  {:<8}  {}",
            run.info.id,
            run.outcome,
            steps,
            run.state,
            task
        ));
    }
    lines
}

/// The runs a prune kept because they are in progress, and those it removed.
pub fn pruned_lines(pruned: &Pruned) -> Vec<Shown> {
    let mut lines: Vec<Shown> = pruned
        .in_progress
        .iter()
        .map(|run| {
            shown!(
                "kept run {}: it is in progress (a harness process has it open)",
                run.id
            )
        })
        .collect();
    let ids: Vec<String> = pruned
        .removed
        .iter()
        .map(|run| match run.outcome {
            Some(_) => run.id.to_string(),
            // Its process ended before the run did: killed, or the machine stopped.
            None => format!("{} (unfinished)", run.id),
        })
        .collect();
    lines.push(shown!(
        "pruned {} run{}{}{}",
        ids.len(),
        if ids.len() == 1 { "" } else { "s" },
        if ids.is_empty() { "" } else { ": " },
        ids.join(", ")
    ));
    lines
}

/// Every workspace's undo store, with its size, runs and state, under a heading; when a
/// workspace is gone and `remove_missing` was not asked, how to remove its store, as a
/// command line that starts with `program`.
pub fn stores_table(
    stores: &[(StoreInfo, StoreState)],
    remove_missing: bool,
    program: &str,
) -> Vec<Shown> {
    let mut lines = vec![shown!(
        "{:>9}  {:>4}  {:<16}  workspace  (store)",
        "size",
        "runs",
        "state"
    )];
    for (store, state) in stores {
        let state = match state {
            StoreState::InUse => "in use",
            StoreState::Removed => "removed",
            StoreState::RunInProgress => "run in progress",
            StoreState::WorkspaceGone => "workspace gone",
        };
        lines.push(shown!(
            "{:>9}  {:>4}  {:<16}  {}  ({})",
            human_size(store.bytes),
            store.runs,
            state,
            store.workspace.display(),
            store.dir.display()
        ));
    }
    if !remove_missing && stores.iter().any(|(store, _)| !store.workspace_exists) {
        lines.push(shown!(
            "remove the stores of workspaces that are gone: {} runs --stores --remove-missing",
            program
        ));
    }
    lines
}

/// `bytes` in B, KiB, MiB or GiB.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_the_largest_unit_below_them() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(3 << 30), "3.0 GiB");
    }
}
