//! The harness served over the [Model Context Protocol]: a stdio server that offers an MCP
//! client (Claude Desktop, Claude Code, Cursor, Zed, ...) the tools a [`Backend`] defines, and
//! hands every call to it.
//!
//! Two layers. The protocol (`backend.rs`, `server.rs`), on the official Rust SDK
//! ([`rmcp`]), confines nothing itself and knows nothing of workspaces, commands or models:
//! a [`Backend`] decides what a call does, and the [`Server`] carries it to and from the
//! client; it can be used alone. The harness's own backend, [`Workspace`] (`workspace/`),
//! is the MCP front end over `harness-app`: the model's tools over one workspace, built
//! from the same settings and confinement plan as `harness run`'s, and the run tools
//! (`workspace/runs.rs`) that run, diff, undo, redo and list runs through `harness-app`'s
//! operations. So there is one code path: an MCP call meets exactly the settings,
//! confinement, policy and redaction a model's call in `harness run` meets, because it is
//! the same call. `harness mcp` (in `harness-cli`) parses the flags, opens a [`Workspace`],
//! says what it serves on stderr and calls [`Workspace::serve_stdio`]; this crate writes
//! nothing to the terminal.
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
pub mod workspace;

pub use backend::{Backend, Call, Reply, ToolDef};
pub use error::Error;
pub use server::Server;
pub use workspace::{Options, Workspace};
