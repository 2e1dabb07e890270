//! Exit statuses: what `harness` tells the shell, and scripts, about how things went.
//!
//! [`STATUSES`] is the one table of them: the help texts of `harness`, `harness run` and
//! `harness tool` are written from it, and a test holds the table of docs/usage.md to it.

use std::fmt::Write as _;
use std::process::ExitCode;

use harness_agent::Outcome;

/// The task was done and checked: the verification command exited 0.
pub(crate) const VERIFIED: u8 = 0;
/// The run ended without a passing verification.
pub(crate) const NOT_VERIFIED: u8 = 1;
/// Bad usage or configuration, or a workspace that cannot be used.
pub(crate) const USAGE: u8 = 2;
/// The model server could not be reached, lacks the model, or answered unreadably.
pub(crate) const MODEL_SERVER: u8 = 3;
/// Stopped by Ctrl-C or another ending signal (128 + SIGINT, as shells report Ctrl-C).
pub(crate) const INTERRUPTED: u8 = 130;

/// One exit status and what it means.
#[derive(Debug)]
pub(crate) struct Status {
    /// The number the shell sees.
    pub(crate) code: u8,
    /// What it means for a run (and for every command but `harness tool`).
    pub(crate) run: &'static str,
    /// What it means for `harness tool`, which returns only some of them.
    pub(crate) tool: Option<&'static str>,
    /// What it means for `harness batch`, which returns only some of them: a task's outcome
    /// is in its result, never in the batch's exit status.
    pub(crate) batch: Option<&'static str>,
}

/// Every exit status `harness` returns.
pub(crate) const STATUSES: [Status; 5] = [
    Status {
        code: VERIFIED,
        run: "verified: the verification command exited 0",
        tool: Some("the tool succeeded"),
        batch: Some(
            "every task has a result, whatever its outcome (with --index: its result was \
             written)",
        ),
    },
    Status {
        code: NOT_VERIFIED,
        run: "not verified: verification failed, none was given, a budget (steps, time, \
              failed calls, tokens) ran out or the model got stuck, or a command changed test \
              code",
        tool: Some("the tool returned an error (its text starts with \"Error:\")"),
        batch: Some("a task has no result: it could not be written"),
    },
    Status {
        code: USAGE,
        run: "usage or configuration error, or a workspace that cannot be used (dirty, not a \
              repository, `/`, home)",
        tool: Some(
            "usage or configuration error, or a workspace that cannot be used (`/`, home, \
             the harness's own source)",
        ),
        batch: Some(
            "usage error: a task file that cannot be read, a line that is not a task (the \
             others still run), an index with no task",
        ),
    },
    Status {
        code: MODEL_SERVER,
        run: "model server problem: unreachable, model missing, an answer that cannot be read",
        tool: None,
        batch: None,
    },
    Status {
        code: INTERRUPTED,
        run: "interrupted (Ctrl-C, SIGTERM or another ending signal)",
        tool: Some(
            "interrupted (Ctrl-C, SIGTERM or another ending signal): the command was stopped",
        ),
        batch: Some(
            "interrupted: the finished tasks keep their results, the stopped ones have none \
             (--resume runs them)",
        ),
    },
];

/// Which command's help the table is written for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Help {
    /// `harness` and `harness run`.
    Run,
    /// `harness tool`.
    Tool,
    /// `harness batch`.
    Batch,
}

/// The "Exit status:" section of a command's `--help`, from [`STATUSES`].
pub(crate) fn help(which: Help) -> String {
    let mut text = String::from("Exit status:");
    for status in &STATUSES {
        let meaning = match which {
            Help::Run => Some(status.run),
            Help::Tool => status.tool,
            Help::Batch => status.batch,
        };
        if let Some(meaning) = meaning {
            let _ = write!(text, "\n  {:<4} {meaning}", status.code);
        }
    }
    text
}

/// The exit status of a run that ended with `outcome`, as a number (for `--json`).
pub(crate) fn code_for_outcome(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Verified => VERIFIED,
        Outcome::ModelError => MODEL_SERVER,
        Outcome::Interrupted => INTERRUPTED,
        _ => NOT_VERIFIED,
    }
}

/// The exit status of an error that ended a command before or outside a run: a model server
/// problem is 3, anything else a usage or configuration error.
pub(crate) fn for_error(error: &anyhow::Error) -> ExitCode {
    let model_server = error
        .chain()
        .any(|cause| cause.is::<harness_ollama::Error>());
    ExitCode::from(if model_server { MODEL_SERVER } else { USAGE })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_map_to_the_documented_statuses() {
        let cases = [
            (Outcome::Verified, 0),
            (Outcome::VerificationFailed, 1),
            (Outcome::Unverified, 1),
            (Outcome::StepLimit, 1),
            (Outcome::TimeLimit, 1),
            (Outcome::TokenLimit, 1),
            (Outcome::Stuck, 1),
            (Outcome::ModelError, 3),
            (Outcome::Interrupted, 130),
        ];
        for (outcome, code) in cases {
            assert_eq!(code_for_outcome(outcome), code, "{outcome}");
        }
    }

    #[test]
    fn the_readme_s_table_is_this_table() {
        // docs/usage.md's table; the name is older than docs/.
        let usage = include_str!("../../../docs/usage.md");
        let section = usage
            .split("## Exit status")
            .nth(1)
            .expect("docs/usage.md has an Exit status section");
        let rows: Vec<String> = section
            .lines()
            .skip_while(|line| !line.starts_with("|---"))
            .skip(1)
            .take_while(|line| line.starts_with('|'))
            .map(str::to_owned)
            .collect();
        let table: Vec<String> = STATUSES
            .iter()
            .map(|status| format!("| {} | {} |", status.code, status.run))
            .collect();
        assert_eq!(rows, table);
    }

    #[test]
    fn the_help_lists_each_status_once_with_its_meaning_for_that_command() {
        let run = help(Help::Run);
        let tool = help(Help::Tool);
        let batch = help(Help::Batch);
        for status in &STATUSES {
            match status.batch {
                Some(meaning) => {
                    assert!(batch.contains(&format!("{:<4} {meaning}", status.code)));
                }
                None => assert!(!batch.contains(&format!("\n  {} ", status.code)), "{batch}"),
            }
            let line = format!("  {:<4} {}", status.code, status.run);
            assert_eq!(run.matches(&line).count(), 1, "{run}");
            match status.tool {
                Some(meaning) => assert!(tool.contains(&format!("{:<4} {meaning}", status.code))),
                None => assert!(!tool.contains(&format!("\n  {} ", status.code)), "{tool}"),
            }
        }
    }

    #[test]
    fn a_model_server_error_anywhere_in_the_chain_is_3() {
        let server = harness_ollama::Error::UnknownApi {
            value: "x".to_owned(),
        };
        let error = anyhow::Error::new(server).context("asking the model");
        assert_eq!(for_error(&error), ExitCode::from(3));
        assert_eq!(for_error(&anyhow::anyhow!("bad flag")), ExitCode::from(2));
    }
}
