//! Running a prepared run and finishing it: the loop over the session's checkpoints
//! ([`run`]), the end recorded in the undo store ([`finish`]), and what a summary of it
//! needs ([`Finished`]), returned typed: a front end shows the events through its own
//! [`Observer`] and renders the result.

use std::path::PathBuf;
use std::sync::Arc;

use harness_agent::{Agent, ChatClient, Observer, Outcome, RunReport, StopSignal, Transcript};
use harness_ollama::Client;
use harness_tools::Toolbox;
use harness_undo::{Diff, DiffTarget, IgnoredChanges, Session};

use crate::checkpoints::SessionCheckpoints;
use crate::conversation;
use crate::model::ServerChat;
use crate::probe::ModelProbe;
use crate::settings::Settings;
use crate::verification;

/// The loop, over the model (as the probe found it), the toolbox and the settings, writing
/// `transcript`, stopped by `stop`.
pub fn agent<'a>(
    client: Client,
    model: &ModelProbe,
    toolbox: &'a Toolbox,
    settings: &Settings,
    transcript: Transcript,
    stop: StopSignal,
) -> Agent<'a> {
    agent_over(
        server_chat(client),
        model,
        toolbox,
        settings,
        transcript,
        stop,
    )
}

/// The loop's view of `client`: what [`agent`] asks, for a front end that wraps it (a
/// batch counts its requests' time and caps how many run at once) before
/// [`agent_over`].
pub fn server_chat(client: Client) -> Arc<dyn ChatClient> {
    Arc::new(ServerChat::new(client))
}

/// Like [`agent`], asking `chat`, which should be [`server_chat`]'s client or wrap it.
/// The one place a run's agent is built.
pub fn agent_over<'a>(
    chat: Arc<dyn ChatClient>,
    model: &ModelProbe,
    toolbox: &'a Toolbox,
    settings: &Settings,
    transcript: Transcript,
    stop: StopSignal,
) -> Agent<'a> {
    let agent = Agent::new(chat, toolbox)
        .budgets(settings.budgets())
        .transcript(transcript)
        .edit_format(model.edit_format)
        .stop_signal(stop);
    match settings.verification.clone() {
        Some(verification) => agent.verification(verification).verification_inputs(
            settings.toolbox.verification_inputs(),
            settings.toolbox.allow_test_edits,
        ),
        None => agent,
    }
}

/// Runs `task` with `agent` over the checkpoints of `session`, telling `observer` of each
/// event. A follow-up's agent starts from the conversation of the runs before it in its
/// chain.
pub fn run(
    agent: Agent<'_>,
    task: &str,
    observer: &mut dyn Observer,
    session: &mut Session,
) -> RunReport {
    let agent = agent.earlier(conversation::earlier(session));
    agent.run(task, observer, &mut SessionCheckpoints(session))
}

/// Records the end of the run `session` in the undo store, as `report` says it went.
///
/// # Errors
///
/// A store that cannot be written: the run happened all the same.
pub fn finish(session: &mut Session, report: &RunReport) -> Result<(), harness_undo::Error> {
    session.finish(undo_outcome(report.outcome), report.steps)
}

/// What the run `session` recorded left behind, for a summary: what changed since it
/// began, what no snapshot holds, and the test code a command changed.
#[derive(Debug)]
pub struct Finished {
    /// The run's id.
    pub run: String,
    /// The diff of the working tree against the state before the run.
    pub changed: Result<Diff, harness_undo::Error>,
    /// Paths commands changed that undo cannot put back (ignored ones too large to save at
    /// the start, directories too deep to record): how many, and the first.
    pub not_undoable: (usize, Vec<PathBuf>),
    /// Ignored files the run made, changed or deleted (undo puts them back).
    pub ignored: Result<IgnoredChanges, harness_undo::Error>,
    /// Files too large to record that the run wrote.
    pub too_large: Vec<PathBuf>,
    /// The paths whose owner got back the access a command took.
    pub access_given_back: Vec<PathBuf>,
    /// Test files changed although the tools may not change them: by a command.
    pub tests_changed: Vec<String>,
}

impl Finished {
    /// What `session`, whose run has just ended under `settings`, left behind.
    pub fn of(session: &mut Session, settings: &Settings) -> Finished {
        let changed = session.diff(DiffTarget::WorkingTree);
        Finished {
            run: session.id().to_string(),
            tests_changed: verification::tests_changed(settings, changed.as_ref().ok()),
            changed,
            // Best effort: a summary that cannot list them says nothing false.
            not_undoable: session.unrecorded_ignored_changes().unwrap_or_default(),
            ignored: session.ignored_changes(),
            too_large: session.too_large(),
            access_given_back: session.access_given_back(),
        }
    }
}

/// How the undo record calls an outcome.
fn undo_outcome(outcome: Outcome) -> harness_undo::Outcome {
    match outcome {
        Outcome::Verified => harness_undo::Outcome::Succeeded,
        Outcome::VerificationFailed | Outcome::Unverified | Outcome::TestsChanged => {
            harness_undo::Outcome::Failed
        }
        _ => harness_undo::Outcome::Interrupted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_map_onto_the_undo_record() {
        assert_eq!(
            undo_outcome(Outcome::Verified),
            harness_undo::Outcome::Succeeded
        );
        assert_eq!(
            undo_outcome(Outcome::Unverified),
            harness_undo::Outcome::Failed
        );
        assert_eq!(
            undo_outcome(Outcome::VerificationFailed),
            harness_undo::Outcome::Failed
        );
        assert_eq!(
            undo_outcome(Outcome::Stuck),
            harness_undo::Outcome::Interrupted
        );
    }
}
