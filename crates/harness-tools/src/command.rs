//! `run_command`: one argv through the runner, in the workspace root.

use std::time::Duration;

use camino::Utf8Path;
use harness_exec::{RunOptions, Runner, Status};
use harness_schema::{RunCommand, ToolName};

use crate::result::{Detail, Summary, ToolResult};

/// Runs `args.argv` in `root` with the runner's policy, environment and output limit.
///
/// Every call, refused or not, may have changed the workspace.
///
/// A `timeout_s` above `max_timeout` is lowered to it, and the text says so; without one the
/// runner's default applies. The result text is the runner's: `exit=CODE` and the output, or an
/// `Error:` line for a refusal, a missing program, a timeout or an interrupt. A non-zero exit is
/// not an error.
pub(crate) fn run_command(
    runner: &Runner,
    root: &Utf8Path,
    args: &RunCommand,
    max_timeout: Duration,
) -> ToolResult {
    let command_line = shell_words::join(&args.argv);
    let mut options = RunOptions::new(root.as_std_path());
    let mut lowered = None;
    if let Some(seconds) = args.timeout_s {
        let requested = Duration::from_secs(seconds);
        if requested > max_timeout {
            lowered = Some(seconds);
        }
        options = options.timeout(requested.min(max_timeout));
    }
    match runner.run(&args.argv, &options) {
        Ok(outcome) => {
            let mut text = outcome.to_model_text();
            if let Some(seconds) = lowered {
                text.push_str(&format!(
                    "\n[timeout_s {seconds} was lowered to the maximum of {}s]",
                    max_timeout.as_secs_f64()
                ));
            }
            let status = outcome.status();
            let detail = Detail::Ran {
                status,
                duration: outcome.duration(),
            };
            let result = ToolResult::success(
                Summary::new(ToolName::RunCommand.as_str(), &command_line, detail),
                text,
            )
            .changing(true);
            match status {
                Status::TimedOut(_) | Status::Interrupted => result.failed(),
                _ => result,
            }
        }
        // Even a refused command counts as a possible change: the caller checkpoints after
        // every run_command, and an empty checkpoint costs less than a missed one.
        Err(error) => ToolResult::failure(
            ToolName::RunCommand.as_str(),
            &command_line,
            &error.to_string(),
        )
        .changing(true),
    }
}
