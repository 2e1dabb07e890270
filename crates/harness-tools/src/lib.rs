//! The tools a coding model calls: read, write and edit files, list and search the workspace,
//! run commands. Each call is validated before anything runs, confined to one workspace,
//! bounded, and redacted before the model reads the result.
//!
//! A [`Toolbox`] owns the pieces the tools go through: the [`Workspace`](harness_sandbox::Workspace)
//! every path is resolved in, the [`Runner`](harness_exec::Runner) and
//! [`Policy`](harness_exec::Policy) every command goes through, and the
//! [`Redactor`](harness_exec::Redactor) every result goes through. [`Toolbox::specs`] is what
//! the model is offered; [`Toolbox::call`] takes a call as the model sent it and returns a
//! [`ToolResult`].
//!
//! ```
//! use harness_sandbox::Workspace;
//! use harness_tools::{Detail, Toolbox};
//! use serde_json::json;
//!
//! # let directory = tempfile::tempdir().expect("a temporary directory");
//! let toolbox = Toolbox::new(Workspace::new(directory.path()).expect("an existing directory"));
//!
//! let created = toolbox.call("write_file", &json!({"path": "calc.py", "content": "x = 1 - 2\n"}));
//! assert!(!created.is_error() && created.may_have_changed_workspace());
//!
//! let edited = toolbox.call(
//!     "edit_file",
//!     &json!({"path": "calc.py", "old_text": "1 - 2", "new_text": "1 + 2"}),
//! );
//! assert_eq!(
//!     edited.text(),
//!     "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x = 1 - 2\n+x = 1 + 2\n"
//! );
//! assert_eq!(edited.summary().to_string(), "edit_file calc.py  +1 −1");
//!
//! let read = toolbox.call("read_file", &json!({"path": "calc.py"}));
//! assert_eq!(read.text(), "     1\tx = 1 + 2\n");
//!
//! // Failures are results the model reads, starting with `Error:`.
//! let escape = toolbox.call("read_file", &json!({"path": "../../etc/passwd"}));
//! assert!(escape.is_error());
//! assert!(escape.text().starts_with("Error: path escapes the workspace: ../../etc/passwd"));
//!
//! let refused = toolbox.call("run_command", &json!({"argv": ["sudo", "ls"]}));
//! assert!(refused.text().starts_with("Error: command refused: "));
//!
//! let invalid = toolbox.call("list_dir", &json!({"depth": 9}));
//! assert_eq!(invalid.text(), "Error: list_dir: \"depth\" must be at most 5, got 9");
//! assert_eq!(invalid.summary().detail(), &Detail::Failed);
//! ```
//!
//! # The tools
//!
//! | tool | does | through |
//! |---|---|---|
//! | `read_file` | numbered lines, capped (400 lines or 32 KiB) with a note naming the `start_line` to read on | [`harness_edit::Editor::view`] |
//! | `write_file` | creates a file (and its directories); replaces an existing one only with `"overwrite": true`, and only one of at most [`Limits::rewrite_lines`] lines; returns the diff | [`harness_edit::Editor::write`] |
//! | `edit_file` | replaces text that occurs exactly once; returns the diff | [`harness_edit::Editor::replace`] |
//! | `list_dir` | workspace-relative paths, directories ending in `/`, 2 levels unless `depth` says otherwise, at most 200 | a walk through the workspace's directory handles ([`harness_sandbox::WorkspaceDir`]) |
//! | `search_text` | `path:line: text` for each line matching a Rust regex, at most 100, lines cut to 200 characters around the match | the same walk, files read through the same handles |
//! | `run_command` | runs an argv (no shell) in the workspace root; the exit status and the output, cut in the middle | [`harness_exec::Runner`] |
//!
//! The caps are [`Limits`]; each cut ends with a note saying what was left out and how to see
//! it.
//!
//! # How a call is handled
//!
//! 1. The arguments (a JSON object, or a string holding one) are validated against the tool's
//!    schema with [`harness_schema::parse_call`]. An unknown tool or invalid arguments end the
//!    call here, with the schema's message.
//! 2. The tool runs. Every path goes through the workspace, which refuses escapes (`..`,
//!    absolute paths elsewhere, symbolic links out), the files its deny rules protect
//!    (`.env`, keys, the user's rules in `.gitignore` syntax; `.git/` for writing) and files
//!    with more than one hard link. Every command goes through the runner, which applies the
//!    policy, the timeout and the output limit.
//!    With a [`SyntaxCheck`], a write of a language it knows must parse, or have been
//!    broken before it.
//! 3. The text and the summary are redacted: each secret is shown as a marker,
//!    `[REDACTED:<rule>:<n>]`, the same value always as the same marker.
//!
//! Where the model writes, markers go back: `write_file` and `edit_file` write each marker
//! this toolbox showed as the value it stands for (so a file read redacted and written back
//! whole keeps its secrets, and an `old_text` holding a marker matches the file's real
//! text). Refused: a marker of the harness's own secrets (its secret-named variables), and
//! marker-like text the toolbox did not give out where the file holds a secret, which
//! would put a marker where the secret was. Marker-like text anywhere else is written as
//! sent. `run_command` refuses a command that holds a marker: a command line is the
//! model's own, and commands are never given a hidden value.
//!
//! # Results
//!
//! A [`ToolResult`] holds the text for the model; whether the call failed (its text then
//! starts with `Error:` and says what to do instead); whether the workspace may have changed
//! (after a write or an edit that changed a file, and after every `run_command`), so the caller
//! knows when to checkpoint; and a [`Summary`] for the display, such as
//! `edit_file src/lib.rs  +3 −1` or `run_command pytest -q  exit=1 0.8s`.
//!
//! A command that exits non-zero is not a failure: its exit status and output are what the
//! model needs. A timeout or an interrupt is.
//!
//! # Listing and searching
//!
//! `list_dir` and `search_text` walk the workspace as git would see it: what the `.gitignore`,
//! `.ignore` and `.git/info/exclude` files inside the workspace ignore is left out, whether or
//! not the workspace is a git repository (ignore files outside it, above the root or the
//! user's global excludes, do not count), and so are `.git` itself and whatever the
//! workspace's read rules deny, names included. Hidden files are listed. Symbolic links are
//! listed but never followed, and never searched. Every directory is listed and every file
//! read through the handle of the directory holding it, opened from its parent without
//! following a link, so a directory swapped for a link while the walk runs cannot show what
//! is outside. `search_text` skips binary files (a NUL byte in the first 8 KiB), files over
//! 8 MiB and files with more than one hard link, and says how many it skipped for their size
//! or their links.
//!
//! When a listing is capped, the shallowest entries are kept, so one large subdirectory
//! cannot hide its siblings.
//!
//! # Where each part is done
//!
//! | what | file (under `src/`) |
//! |---|---|
//! | a call is read (schema, forgiving coercions) and dispatched; its result redacted | `toolbox.rs` ([`Toolbox::call`]) |
//! | a toolbox is configured; the caps of one call | `builder.rs` ([`ToolboxBuilder`]), `limits.rs` ([`Limits`]) |
//! | `read_file`, `write_file`, `edit_file`; markers written back as their values | `files.rs` |
//! | `list_dir`, `search_text`, and the walk they share | `list.rs`, `search.rs`, `walk.rs` |
//! | `run_command` (and its refusal of markers) | `command.rs` |
//! | what a result says, and its summary | `result.rs`, `failure.rs` |
//! | what a write must parse as, before it is written | `syntax.rs` ([`SyntaxCheck`]), with the order of the checks in `guards.rs` |
//! | where the source files define their functions, classes and types | `symbols/` ([`SymbolIndex`], a scanner per language) |
//! | which code is test code, refused to the file tools | `test_code.rs` ([`TestCode`]), with the Python files a runner loads its own code from in `python_modules.rs` |
//! | what a verification loads, judged against a run's changes | `verification_inputs.rs` ([`VerificationInputs`]) |
//!
//! # What this crate does not do
//!
//! It does not decide what is safe: confinement is the workspace's, the command policy the
//! runner's, and neither is a sandbox, since a command the policy allows can do anything the
//! user can. It keeps no history either: undoing what a tool did is `harness-undo`'s job.

mod builder;
mod command;
mod failure;
mod files;
mod guards;
mod limits;
mod list;
mod python_modules;
mod result;
mod search;
mod symbols;
mod syntax;
mod test_code;
mod toolbox;
mod verification_inputs;
mod walk;

pub use builder::ToolboxBuilder;
pub use harness_exec::Status;
pub use limits::Limits;
pub use result::{Detail, Summary, ToolResult};
pub use symbols::{Definition, DefinitionKind, SymbolIndex, SymbolLimits};
pub use syntax::SyntaxCheck;
pub use test_code::{CONVENTIONAL as CONVENTIONAL_TESTS, TestCode, TestCodeError};
pub use toolbox::Toolbox;
pub use verification_inputs::{Change, ChangeKind, Finding, Role, VerificationInputs};
