//! What the front ends of the harness share: deciding a run's settings, confining its tools,
//! asking the model server about the model, preparing, running and finishing a run, and the
//! operations on recorded runs (diff, undo, redo, accept, list, prune), each returning typed
//! results and printing nothing. `harness-cli` (the `harness` command) and `harness-mcp`
//! (its MCP server) are front ends over this crate: they parse, call and display; so can
//! be batch runs or an interactive session.
//!
//! Where each guarantee is kept:
//!
//! - **Settings** (`settings/`): flags over the project's `harness.toml` over the user's
//!   file over defaults, and what a project file may choose without the user's trust
//!   (`settings/admit.rs`); the trust itself, recorded by the file's exact content, in
//!   `trust.rs`; where the user's files are in `paths.rs`.
//! - **Workspaces refused** (`/`, the home directory, one holding the harness): `guard.rs`.
//! - **What commands and tools may not touch** (deny rules, the undo stores, the user's
//!   configuration and trust file, git's hooks and submodule configuration), assembled once
//!   into the confinement plan: `toolbox.rs` ([`toolbox::Plan`]).
//! - **The model probe** (context window, how replies are asked for): `probe.rs`; **the
//!   model called**: `model.rs` adapts `harness-ollama`'s client to the loop's `ChatClient`.
//! - **A run**: what is active as it begins ([`RunHeader`], with its JSON object) in
//!   `header.rs`; prepared (toolbox, recorded state and probe side by side; discarded on
//!   failure) in `prepare.rs`; run over the undo session's checkpoints
//!   (`checkpoints.rs`) and finished in `run.rs`; what its summary states ([`RunSummary`], with its JSON
//!   object), in `summary.rs`; a verification the policy would refuse,
//!   and test code a command changed, in `verification.rs`.
//! - **A client's own tool calls** (an MCP session), recorded as a run: `recorder.rs`.
//! - **Recorded runs**: opened by id or as the latest in `open.rs`; reviewed and taken
//!   back in `diff.rs`, `undo.rs` (undo and redo) and `accept.rs`; listed and pruned in
//!   `runs.rs`.
//! - **What the front ends say alike**: what the harness protects and what not, in
//!   `boundary.rs`; how commands are isolated, in `isolation.rs` (which tier works
//!   here, probed, in `tiers.rs`); the words of a run's review (a diff's stat, what an undo restored or
//!   kept, what it did to ignored files) in `review.rs`; and text made safe to show, with
//!   every character a terminal would obey made visible, in `shown.rs` ([`shown::Shown`]).
//! - **How a run looks as text**, live or read back from its transcript, and its summary's
//!   words: `render/` (one renderer per fact, for every front end).
//! - **Errors**: [`Error`], whose messages are the words the `harness` command prints.
//!
//! ```
//! use harness_app::{Overrides, Settings, toolbox};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let workspace = tempfile::tempdir()?;
//! let root = harness_app::workspace_root(workspace.path())?;
//! let flags = Overrides {
//!     max_steps: Some(5),
//!     ..Overrides::default()
//! };
//! let settings = Settings::resolve(&root, &flags)?;
//! assert_eq!(settings.budgets().max_steps, 5);
//! // What the model's tools and commands may not touch, checked before anything runs.
//! let _plan = toolbox::Plan::check(&root, &settings.toolbox)?;
//! # Ok(())
//! # }
//! ```

mod accept;
pub mod boundary;
mod checkpoints;
mod conversation;
mod diff;
mod error;
mod guard;
mod header;
pub mod isolation;
mod model;
mod open;
mod paths;
mod prepare;
pub mod probe;
mod recorder;
pub mod render;
pub mod review;
mod run;
mod runs;
pub mod settings;
pub mod shown;
mod summary;
pub mod tiers;
pub mod toolbox;
pub mod trust;
mod undo;
mod verification;

pub use accept::accept;
pub use diff::{RunDiff, chain_diff, chain_steps, diff};
pub use error::Error;
pub use guard::workspace_root;
pub use header::RunHeader;
pub use open::open_run;
pub use prepare::{Follow, Prepared, Request, begin, prepare};
pub use recorder::Recorder;
pub use run::{Finished, agent, agent_over, finish, run, server_chat};
pub use runs::{Listed, StoreState, list, prune, store_of, stores};
pub use settings::{Overrides, Replies, Settings};
pub use summary::{ChangedFile, RunSummary, follow_ups, ignored_word};
pub use undo::{redo, undo, undo_chain};
pub use verification::refuse_unrunnable_verification;

/// `text` quoted for a POSIX shell when it needs to be.
pub fn quote(text: &str) -> String {
    shell_words::quote(text).into_owned()
}
