//! [`Error`]: why the workspace could not be served, or a run tool's call failed.

/// Why [`Workspace`](super::Workspace) could not open or serve its workspace, or why a run
/// tool's call failed (its text, with its causes, is then the call's error result).
///
/// The wrapped errors are transparent: their message and causes are the message and causes
/// of this error, word for word what `harness run` says of the same failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The workspace, the settings, the toolbox, the session's run, or a run tool's run or
    /// operation.
    #[error(transparent)]
    App(#[from] harness_app::Error),
    /// The workspace has uncommitted changes, or a recorded run could not be read.
    #[error(transparent)]
    Undo(#[from] harness_undo::Error),
    /// A run's transcript could not be created.
    #[error(transparent)]
    Transcript(#[from] harness_agent::TranscriptError),
    /// A tool could not be offered (its schema is no JSON object).
    #[error(transparent)]
    Tool(#[from] crate::Error),
    /// The protocol could not be served on stdin and stdout.
    #[error("serving MCP on stdin/stdout")]
    Serve(#[source] crate::Error),
    /// A run tool's arguments do not fit its schema.
    #[error("invalid arguments for {tool}: {message}")]
    InvalidArguments {
        /// The run tool.
        tool: String,
        /// What serde found wrong.
        message: String,
    },
    /// A run tool's answer could not be written as JSON.
    #[error("{what}")]
    Json {
        /// What was being written.
        what: &'static str,
        /// Why it could not be.
        #[source]
        source: serde_json::Error,
    },
}

/// `error` and each of its causes, joined by `": "`: the text a failed call answers with.
pub(super) fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}
