//! `harness show`: a run's transcript, for a person.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use harness_agent::Transcript;
use harness_app::render::{Facts, View};

use crate::commands::RunSelector;
use crate::display::Out;
use crate::shown::shown;

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
    let style = crate::display::stdout_style();
    out.line(&shown!("{} {}", style.bold(&shown!("run")), session.id()))?;
    if let Some(follows) = harness_app::render::follows_line(&session.info()) {
        out.line(&follows)?;
    }
    // Each record as the run showed it live, in its replayed view (`harness_app::render::Facts`).
    let mut facts = Facts::new(
        style,
        View::Replay { full: command.full },
        crate::program::program(),
    );
    for line in &lines {
        for shown in facts.lines(&line.record) {
            out.line(&shown)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
