//! Integration tests of `harness-sandbox`, in one binary so the suite links once.
//!
//! Everything here runs against real temporary directories.

#![cfg(unix)] // The fixtures create symbolic links and FIFOs with Unix APIs.

mod allowed;
mod deny;
mod dirs;
mod escapes;
mod hard_links;
mod operations;
mod properties;
mod races;
mod refusals;
mod root;
mod support;
