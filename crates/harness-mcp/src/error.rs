//! [`Error`]: why a server could not start or serve.

/// Why a [`Server`](crate::Server) could not serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool's input schema was not a JSON object, which MCP requires.
    #[error("the input schema of the tool `{tool}` is not a JSON object")]
    SchemaNotAnObject {
        /// The tool's name.
        tool: String,
    },
    /// The async runtime that carries the protocol could not be started.
    #[error("cannot start the MCP server's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The client did not complete the MCP handshake (it closed stdin first, or sent
    /// something other than `initialize`).
    #[error("the MCP client did not initialize the session: {0}")]
    Handshake(String),
    /// The protocol loop ended abnormally.
    #[error("the MCP server stopped: {0}")]
    Stopped(String),
}
