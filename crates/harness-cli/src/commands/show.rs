//! `harness show`: a run's transcript, for a person.

use std::io;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use harness_agent::{Record, Role, Transcript};

use crate::commands::RunSelector;
use crate::display::{Out, Style};
use crate::shown::{Shown, shown};

/// Show a run's transcript.
///
/// The task, what the model said, each tool call and how it went, each verification, and
/// the outcome. Secrets were redacted before it was written.
#[derive(Debug, Args)]
pub(crate) struct ShowCommand {
    #[command(flatten)]
    selector: RunSelector,

    /// Also print every tool result, as the model read it.
    #[arg(long)]
    full: bool,

    /// Print the transcript's JSON lines as they are.
    #[arg(long, conflicts_with = "full")]
    json: bool,
}

pub(crate) fn exec(command: ShowCommand) -> anyhow::Result<ExitCode> {
    let session = command.selector.open()?;
    let path = session.transcript_path();
    let mut out = Out::stdout();
    if command.json {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read the transcript {}", path.display()))?;
        out.json_text(&text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let lines = Transcript::read(&path)?;
    let style = Style::for_stdout();
    out.line(&shown!("{} {}", style.bold(&shown!("run")), session.id()))?;
    for line in &lines {
        render(&mut out, &line.record, style, command.full)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints one record of the transcript. Every string in it came from the model, a file, a
/// command or the task, so each is shown through [`Shown`].
fn render(out: &mut Out, record: &Record, style: Style, full: bool) -> io::Result<()> {
    match record {
        Record::Run {
            task,
            workspace,
            verification,
            ..
        } => {
            out.line(&shown!("task: {}", Shown::line(task)))?;
            out.line(&shown!("workspace: {}", Shown::line(workspace)))?;
            match verification {
                Some(command) => out.line(&shown!("verification: {}", Shown::line(command)))?,
                None => out.line(&shown!("verification: none"))?,
            }
        }
        Record::Message(message) if message.role == Role::System => {
            let chars = message.content.chars().count();
            out.line(&style.dim(&shown!("[system prompt, {} characters]", chars)))?;
        }
        Record::Message(message) => out.line(&shown!(
            "{}: {}",
            role(message.role),
            Shown::text(&message.content)
        ))?,
        Record::Reply {
            step,
            content,
            prompt_tokens,
            completion_tokens,
            seconds,
            ..
        } => {
            let tokens = match (prompt_tokens, completion_tokens) {
                (Some(prompt), Some(completion)) => shown!(", {}+{} tokens", prompt, completion),
                _ => Shown::default(),
            };
            let heading = shown!("step {} ({}s{})", step, format!("{seconds:.1}"), tokens);
            out.line(&shown!("\n{}", style.bold(&heading)))?;
            if !content.trim().is_empty() {
                out.line(&Shown::text(content.trim_end()))?;
            }
        }
        Record::Tool {
            step,
            summary,
            is_error,
            result,
            ..
        } => {
            let summary = Shown::line(summary);
            let line = if *is_error {
                style.red(&summary)
            } else {
                summary
            };
            let marker = if *step == 0 {
                "▹ (head start)"
            } else {
                "▸"
            };
            out.line(&shown!("{} {}", marker, line))?;
            if full || *is_error {
                for line in Shown::text(result).lines() {
                    out.line(&shown!("    {}", style.dim(&line)))?;
                }
            }
        }
        Record::Nudge { content, .. } => {
            out.line(&style.yellow(&shown!("! {}", Shown::text(content))))?;
        }
        Record::Trim { elided, .. } => {
            out.line(&style.dim(&shown!("· elided {} older results", elided)))?;
        }
        Record::Checkpoint { number, .. } => {
            out.line(&style.dim(&shown!("· checkpoint {}", number)))?;
        }
        Record::CheckpointFailed { error, .. } => {
            out.line(&style.yellow(&shown!("! {}", Shown::text(error))))?;
        }
        Record::Tampered {
            command, findings, ..
        } => {
            out.line(&style.yellow(&shown!(
                "! the command `{}` changed what undo relies on, which is not allowed:",
                Shown::line(command)
            )))?;
            for finding in findings {
                out.line(&style.yellow(&shown!("    {}", Shown::line(finding))))?;
            }
        }
        Record::Verification {
            attempt,
            command,
            passed,
            detail,
            output,
            changed,
            ..
        } => {
            let verdict = match (passed, changed.is_empty()) {
                (true, _) => "passed".to_owned(),
                (false, true) => "failed".to_owned(),
                (false, false) => format!(
                    "does not count: what it loads besides the code under test changed: {}",
                    changed.join("; ")
                ),
            };
            let line = shown!(
                "verification {}: `{}` {} ({})",
                attempt,
                Shown::line(command),
                Shown::line(&verdict),
                Shown::line(detail)
            );
            out.line(&if *passed {
                style.green(&line)
            } else {
                style.red(&line)
            })?;
            if full || !passed {
                for line in Shown::text(output).lines() {
                    out.line(&shown!("    {}", style.dim(&line)))?;
                }
            }
        }
        Record::Attempt {
            attempt,
            previous,
            reason,
            reverted,
        } => {
            out.line(&style.bold(&shown!(
                "\n↺ attempt {}: the last one ended {} ({}); its changes were reverted ({})",
                attempt,
                previous,
                Shown::line(reason),
                crate::display::count(*reverted as u64, "path")
            )))?;
        }
        Record::Outcome(report) => {
            out.line(&shown!(
                "\n{} {} — {} ({}, {}, {}+{} tokens, {}s)",
                style.bold(&shown!("outcome:")),
                report.outcome,
                Shown::line(&report.reason),
                crate::display::count(u64::from(report.steps), "step"),
                crate::display::count(report.tool_calls as u64, "tool call"),
                report.prompt_tokens,
                report.completion_tokens,
                format!("{:.1}", report.duration.as_secs_f64())
            ))?;
        }
        // A kind of record newer than this renderer: shown by name rather than dropped.
        other => out.line(&style.dim(&shown!("· a {} record", other.kind())))?,
    }
    Ok(())
}

/// The name of who wrote a message, as the transcript shows it.
fn role(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}
