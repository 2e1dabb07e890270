//! End-to-end tests of the `harness` binary: real git repositories made from `fixtures/`,
//! real commands, and a stub model server on 127.0.0.1 replaying scripted conversations.
//!
//! One test binary (declared in `crates/harness-cli/Cargo.toml`) for all of them, so they
//! link once.

mod adversarial;
mod batch;
mod batch_k8s;
mod batch_slurm;
mod chain;
mod claims;
mod docs;
mod edits;
mod end_to_end;
mod floods;
mod help;
mod interrupt;
mod locate;
mod mcp;
mod records;
mod refusals;
mod replies;
mod same_call;
mod support;
mod terminal;
mod transcripts;
mod trust;
mod verified;
