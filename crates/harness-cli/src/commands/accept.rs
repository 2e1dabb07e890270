//! `harness accept`: keep a run's work as one commit.

use std::process::ExitCode;

use clap::Args;

use crate::commands::RunSelector;
use crate::display::Out;
use crate::shown::shown;

/// Keep a run's work: commit it onto the current branch.
///
/// One commit, naming the task and the run. Uncommitted work from before the run stays
/// uncommitted; commit hooks do not run.
#[derive(Debug, Args)]
pub(crate) struct AcceptCommand {
    #[command(flatten)]
    selector: RunSelector,
}

pub(crate) fn exec(command: AcceptCommand) -> anyhow::Result<ExitCode> {
    let mut session = command.selector.open()?;
    let accepted = harness_app::accept(&mut session)?;
    let subject = accepted.message.lines().next().unwrap_or_default();
    Out::stdout().line(&shown!(
        "committed run {} as {}: {}",
        session.id(),
        accepted.commit,
        subject
    ))?;
    Ok(ExitCode::SUCCESS)
}
