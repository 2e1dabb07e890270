//! Run a command for a coding agent: an argv, never a shell, bounded in time
//! and output, and leaving nothing behind.
//!
//! This first part holds what needs no process: the bounded, ANSI-free
//! capture of output, the command policy, the scrubbed environment and
//! secret redaction. The runner comes next.

// The crate-private parts the runner uses are unused until it comes.
#![allow(dead_code)]

#[cfg(not(target_os = "linux"))]
compile_error!("harness-exec supports Linux only: it follows processes through pidfds and /proc");

mod ansi;
mod capture;
mod env;
mod policy;
mod redact;
mod resolve;
mod wrappers;

pub use env::{EnvPolicy, is_secret_name};
pub use policy::{Policy, Refusal};
pub use redact::{REDACTED, Redactor, redact};
