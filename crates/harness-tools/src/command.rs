//! `run_command`: one argv through the runner, in the workspace root.

use std::time::Duration;

use camino::Utf8Path;
use harness_exec::{RunOptions, Runner, Status, has_marker};
use harness_schema::{RunCommand, ToolName};

use crate::result::{Detail, Summary, ToolResult};

/// How long a command may run: the default of a call that sets none, the most a call may
/// ask for, and the caller's own limit (a run's time left), which no timeout passes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timeouts {
    pub(crate) default: Duration,
    pub(crate) max: Duration,
    pub(crate) limit: Option<Duration>,
}

/// A refusal of a command that holds a redaction marker, `None` for any other.
///
/// The file tools put a marker's value back; commands do not, on purpose: a command line is
/// composed by the model, and a value put into it goes wherever the command sends it (a
/// `curl` to any host, a log, another file). Run as sent, the marker would be written where
/// the value was (`sed -i s/…/[REDACTED:…]/`, `echo KEY=[REDACTED:…] > .env`) or compared
/// with text that never holds it. Either way the command would not do what the model means,
/// so it is refused with a message that says so.
pub(crate) fn refuse_markers(args: &RunCommand) -> Option<ToolResult> {
    let marked = args.argv.iter().find(|arg| has_marker(arg))?;
    let message = format!(
        "the command holds a redaction marker ({}): markers stand for secrets the harness \
         hid from you, and commands are never given them, so the command would write or \
         compare the marker itself. Change files holding secrets with edit_file or \
         write_file, which put the values back, or write the command so that it does not \
         need the value",
        shell_words::quote(marked)
    );
    Some(ToolResult::failure(
        ToolName::RunCommand.as_str(),
        &shell_words::join(&args.argv),
        &message,
    ))
}

/// Runs `args.argv` in `root` with the runner's policy, environment and output limit.
///
/// Every call, refused or not, may have changed the workspace.
///
/// A `timeout_s` above the maximum is lowered to it; without one the default applies; and
/// either is lowered to the caller's limit (rounded up to a whole second, at least one). The
/// text says what was lowered. The result text is the runner's: `exit=CODE` and the output,
/// or an `Error:` line for a refusal, a missing program, a timeout or an interrupt. A non-zero
/// exit is not an error.
pub(crate) fn run_command(
    runner: &Runner,
    root: &Utf8Path,
    args: &RunCommand,
    timeouts: Timeouts,
) -> ToolResult {
    let command_line = shell_words::join(&args.argv);
    let requested = args.timeout_s.map(Duration::from_secs);
    let lowered = requested.filter(|requested| *requested > timeouts.max);
    let timeout = requested.unwrap_or(timeouts.default).min(timeouts.max);
    // What the caller has left bounds every command, whatever the call asked for.
    let left = timeouts
        .limit
        .map(whole_seconds)
        .filter(|left| *left < timeout);
    let options = RunOptions::new(root.as_std_path()).timeout(left.unwrap_or(timeout));
    match runner.run(&args.argv, &options) {
        Ok(outcome) => {
            let mut text = outcome.to_model_text();
            if let Some(requested) = lowered {
                text.push_str(&format!(
                    "\n[timeout_s {} was lowered to the maximum of {}s]",
                    requested.as_secs(),
                    timeouts.max.as_secs_f64()
                ));
            }
            let status = outcome.status();
            if let (Some(left), Status::TimedOut(_)) = (left, status) {
                text.push_str(&format!(
                    "\n[stopped at the {}s the run had left]",
                    left.as_secs()
                ));
            }
            let detail = Detail::Ran {
                status,
                duration: outcome.duration(),
            };
            let result = ToolResult::success(
                Summary::new(ToolName::RunCommand.as_str(), &command_line, detail),
                text,
            )
            .changing(true)
            .putting_back(put_back(&outcome));
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

/// One line for each path the runner moved aside or put back after the command.
fn put_back(outcome: &harness_exec::Outcome) -> Vec<String> {
    let moved = outcome.set_aside().iter().map(|set_aside| {
        let done = match &set_aside.moved_to {
            Ok(to) => format!("moved to {}", to.display()),
            Err(error) => format!("could NOT be moved aside ({error})"),
        };
        format!(
            "the command made {}, which commands may not write; {done}",
            set_aside.created.display()
        )
    });
    // A record cut short is no change of the command's, nor is git's index refreshed by a
    // `git status`: the model reads them in the text.
    let repaired = outcome.repaired().iter().filter(|repaired| {
        !matches!(
            repaired.change,
            harness_exec::Change::NotRecorded | harness_exec::Change::Index
        )
    });
    moved.chain(repaired.map(ToString::to_string)).collect()
}

/// `limit` rounded up to a whole second, at least one: the unit of `timeout_s`, and a
/// command given no time at all would not start.
fn whole_seconds(limit: Duration) -> Duration {
    let seconds = limit.as_secs() + u64::from(limit.subsec_nanos() > 0);
    Duration::from_secs(seconds.max(1))
}
