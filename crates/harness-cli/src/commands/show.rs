//! `harness show`: a run's transcript, for a person.

use std::io;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use harness_agent::Transcript;
use serde_json::Value;

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
    let records = Transcript::read(&path)?;
    let style = Style::for_stdout();
    out.line(&shown!("{} {}", style.bold(&shown!("run")), session.id()))?;
    for record in &records {
        render(&mut out, record, style, command.full)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints one record of the transcript. Every string in it came from the model, a file, a
/// command or the task, so each is shown through [`Shown`].
fn render(out: &mut Out, record: &Value, style: Style, full: bool) -> io::Result<()> {
    let text = |key: &str| record[key].as_str().unwrap_or_default().to_owned();
    // A line of its own: the field cannot start another.
    let field = |key: &str| Shown::line(&text(key));
    match record["type"].as_str().unwrap_or_default() {
        "run" => {
            out.line(&shown!("task: {}", field("task")))?;
            out.line(&shown!("workspace: {}", field("workspace")))?;
            match record["verification"].as_str() {
                Some(command) => out.line(&shown!("verification: {}", command))?,
                None => out.line(&shown!("verification: none"))?,
            }
        }
        "message" if record["role"] == "system" => {
            let chars = text("content").chars().count();
            out.line(&style.dim(&shown!("[system prompt, {} characters]", chars)))?;
        }
        "message" => out.line(&shown!(
            "{}: {}",
            field("role"),
            Shown::text(&text("content"))
        ))?,
        "reply" => {
            let tokens = match (
                record["prompt_tokens"].as_u64(),
                record["completion_tokens"].as_u64(),
            ) {
                (Some(prompt), Some(completion)) => shown!(", {}+{} tokens", prompt, completion),
                _ => Shown::default(),
            };
            let seconds = record["seconds"].as_f64().unwrap_or_default();
            let heading = shown!(
                "step {} ({}s{})",
                record["step"],
                format!("{seconds:.1}"),
                tokens
            );
            out.line(&shown!("\n{}", style.bold(&heading)))?;
            let content = text("content");
            if !content.trim().is_empty() {
                out.line(&Shown::text(content.trim_end()))?;
            }
        }
        "tool" => {
            let summary = field("summary");
            let line = if record["is_error"] == true {
                style.red(&summary)
            } else {
                summary
            };
            let step = record["step"].as_u64().unwrap_or_default();
            let marker = if step == 0 { "▹ (head start)" } else { "▸" };
            out.line(&shown!("{} {}", marker, line))?;
            if full || record["is_error"] == true {
                for line in Shown::text(&text("result")).lines() {
                    out.line(&shown!("    {}", style.dim(&line)))?;
                }
            }
        }
        "nudge" => out.line(&style.yellow(&shown!("! {}", Shown::text(&text("content")))))?,
        "trim" => out.line(&style.dim(&shown!("· elided {} older results", record["elided"])))?,
        "checkpoint" => match record["error"].as_str() {
            Some(error) => out.line(&style.yellow(&shown!("! {}", Shown::text(error))))?,
            None => out.line(&style.dim(&shown!("· checkpoint {}", record["number"])))?,
        },
        "verification" => {
            let passed = record["passed"] == true;
            let line = shown!(
                "verification {}: `{}` {} ({})",
                record["attempt"],
                field("command"),
                if passed { "passed" } else { "failed" },
                field("detail")
            );
            out.line(&if passed {
                style.green(&line)
            } else {
                style.red(&line)
            })?;
            if full || !passed {
                for line in Shown::text(&text("output")).lines() {
                    out.line(&shown!("    {}", style.dim(&line)))?;
                }
            }
        }
        "outcome" => {
            out.line(&shown!(
                "\n{} {} — {} ({} steps, {} tool calls, {}+{} tokens, {}s)",
                style.bold(&shown!("outcome:")),
                text("outcome").replace('_', " "),
                field("reason"),
                record["steps"],
                record["tool_calls"],
                record["prompt_tokens"],
                record["completion_tokens"],
                format!("{:.1}", record["seconds"].as_f64().unwrap_or_default())
            ))?;
        }
        _ => {}
    }
    Ok(())
}
