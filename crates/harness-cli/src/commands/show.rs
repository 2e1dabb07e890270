//! `harness show`: a run's transcript, for a person.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use harness_agent::Transcript;
use serde_json::Value;

use crate::commands::RunSelector;
use crate::display::Style;

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
    let mut out = io::stdout().lock();
    if command.json {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read the transcript {}", path.display()))?;
        out.write_all(text.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let records = Transcript::read(&path)?;
    let style = Style::for_stdout();
    writeln!(out, "{} {}", style.bold("run"), session.id())?;
    for record in &records {
        render(&mut out, record, style, command.full)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn render(out: &mut impl Write, record: &Value, style: Style, full: bool) -> io::Result<()> {
    let text = |key: &str| record[key].as_str().unwrap_or_default().to_owned();
    match record["type"].as_str().unwrap_or_default() {
        "run" => {
            writeln!(out, "task: {}", text("task"))?;
            writeln!(out, "workspace: {}", text("workspace"))?;
            match record["verification"].as_str() {
                Some(command) => writeln!(out, "verification: {command}")?,
                None => writeln!(out, "verification: none")?,
            }
        }
        "message" if record["role"] == "system" => {
            let chars = text("content").chars().count();
            writeln!(
                out,
                "{}",
                style.dim(&format!("[system prompt, {chars} characters]"))
            )?;
        }
        "message" => writeln!(out, "{}: {}", text("role"), text("content"))?,
        "reply" => {
            let tokens = match (
                record["prompt_tokens"].as_u64(),
                record["completion_tokens"].as_u64(),
            ) {
                (Some(prompt), Some(completion)) => format!(", {prompt}+{completion} tokens"),
                _ => String::new(),
            };
            let seconds = record["seconds"].as_f64().unwrap_or_default();
            let heading = format!("step {} ({seconds:.1}s{tokens})", record["step"]);
            writeln!(out, "\n{}", style.bold(&heading))?;
            let content = text("content");
            if !content.trim().is_empty() {
                writeln!(out, "{}", content.trim_end())?;
            }
        }
        "tool" => {
            let summary = text("summary");
            let line = if record["is_error"] == true {
                style.red(&summary)
            } else {
                summary
            };
            let step = record["step"].as_u64().unwrap_or_default();
            let marker = if step == 0 { "▹ (head start)" } else { "▸" };
            writeln!(out, "{marker} {line}")?;
            if full || record["is_error"] == true {
                for line in text("result").lines() {
                    writeln!(out, "    {}", style.dim(line))?;
                }
            }
        }
        "nudge" => writeln!(out, "{}", style.yellow(&format!("! {}", text("content"))))?,
        "trim" => writeln!(
            out,
            "{}",
            style.dim(&format!("· elided {} older results", record["elided"]))
        )?,
        "checkpoint" => match record["error"].as_str() {
            Some(error) => writeln!(out, "{}", style.yellow(&format!("! {error}")))?,
            None => writeln!(
                out,
                "{}",
                style.dim(&format!("· checkpoint {}", record["number"]))
            )?,
        },
        "verification" => {
            let passed = record["passed"] == true;
            let line = format!(
                "verification {}: `{}` {} ({})",
                record["attempt"],
                text("command"),
                if passed { "passed" } else { "failed" },
                text("detail")
            );
            writeln!(
                out,
                "{}",
                if passed {
                    style.green(&line)
                } else {
                    style.red(&line)
                }
            )?;
            if full || !passed {
                for line in text("output").lines() {
                    writeln!(out, "    {}", style.dim(line))?;
                }
            }
        }
        "outcome" => {
            writeln!(
                out,
                "\n{} {} — {} ({} steps, {} tool calls, {}+{} tokens, {:.1}s)",
                style.bold("outcome:"),
                text("outcome").replace('_', " "),
                text("reason"),
                record["steps"],
                record["tool_calls"],
                record["prompt_tokens"],
                record["completion_tokens"],
                record["seconds"].as_f64().unwrap_or_default()
            )?;
        }
        _ => {}
    }
    Ok(())
}
