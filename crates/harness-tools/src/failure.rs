//! [`Failure`]: why a tool call failed, in words a model can act on.
//!
//! The crates below us word their own errors for a model already; this module adds the advice
//! some of them leave out (a missing file says where to look), and renames what they call their
//! operations to the tools the model can call.

use harness_sandbox::Error as SandboxError;

/// A failed call's message, without the `Error: ` prefix that [`crate::ToolResult`] adds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Failure(String);

impl Failure {
    pub(crate) fn new(message: impl Into<String>) -> Failure {
        Failure(message.into())
    }

    pub(crate) fn message(&self) -> &str {
        &self.0
    }
}

/// The workspace's refusal, with what to do instead where its message does not say.
///
/// An escape already names the workspace to stay in and a deny rule says to leave the path
/// alone; the others get a hint here.
pub(crate) fn sandbox(error: &SandboxError) -> Failure {
    let advice = match error {
        SandboxError::NotFound { .. } | SandboxError::NotADirectory { .. } => {
            "; list_dir shows which files and directories exist"
        }
        // Reached through a read: writing and editing read the file first.
        SandboxError::HardLink { .. } => "; leave this file as it is",
        SandboxError::DanglingSymlink { .. } => "; use a path that is not a symbolic link",
        SandboxError::SymlinkLoop { .. } => "; use the path of the file itself, without the links",
        SandboxError::Nul { .. } | SandboxError::TooLong { .. } | SandboxError::NotUtf8 { .. } => {
            "; give a plain relative path such as \"src/main.rs\""
        }
        _ => "",
    };
    Failure(format!("{error}{advice}"))
}
