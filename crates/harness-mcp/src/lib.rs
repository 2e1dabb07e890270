//! The harness served over the [Model Context Protocol]: a stdio server that offers an MCP
//! client (Claude Desktop, Claude Code, Cursor, Zed, ...) the tools a [`Backend`] defines, and
//! hands every call to it.
//!
//! This crate is composition and protocol only, on the official Rust SDK ([`rmcp`]). It does
//! not confine anything itself and knows nothing of workspaces, commands or models: the
//! backend (the `harness` binary's, over its one toolbox) decides what a call does, and this
//! crate carries it to and from the client. So there is one code path: an MCP call meets
//! exactly the settings, confinement, policy and redaction a model's call in `harness run`
//! meets, because it is the same call.
//!
//! What it does guarantee, whatever the backend:
//!
//! - A call's failure is a tool result with `isError: true` and the backend's text (the
//!   model-fixable message), never a protocol error, so the client shows it.
//! - A malformed message (invalid JSON, an unknown method, a line over 16 MiB) gets a
//!   JSON-RPC error or is dropped, and the server keeps serving; end of input ends it cleanly.
//! - The backend's work runs off the protocol loop (it may run a command for minutes), so a
//!   `ping` or a `notifications/cancelled` is still read while it works; a cancellation is
//!   passed to the backend through [`Call::on_cancel`], and progress it reports through
//!   [`Call::progress`] reaches the client as `notifications/progress` when the client asked
//!   for it (a `progressToken`).
//!
//! # Example
//!
//! ```no_run
//! use harness_mcp::{Backend, Call, Reply, Server, ToolDef};
//! use serde_json::{Value, json};
//!
//! struct Echo;
//!
//! impl Backend for Echo {
//!     fn tools(&self) -> Vec<ToolDef> {
//!         let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
//!         vec![ToolDef::new("echo", "Says the text back.", schema).expect("an object")]
//!     }
//!
//!     fn call(&self, name: &str, arguments: Value, call: &Call) -> Reply {
//!         call.progress("echoing");
//!         match (name, arguments.get("text").and_then(Value::as_str)) {
//!             ("echo", Some(text)) => Reply::success(text),
//!             ("echo", None) => Reply::error("Error: \"text\" is required"),
//!             (other, _) => Reply::error(format!("Error: unknown tool `{other}`")),
//!         }
//!     }
//! }
//!
//! # fn main() -> Result<(), harness_mcp::Error> {
//! // Serves on stdin and stdout until the client closes stdin.
//! Server::new(Echo, "echo-server", "0.1.0").serve_stdio()
//! # }
//! ```
//!
//! [Model Context Protocol]: https://modelcontextprotocol.io

mod backend;
mod error;
mod server;

pub use backend::{Backend, Call, Reply, ToolDef};
pub use error::Error;
pub use server::Server;
