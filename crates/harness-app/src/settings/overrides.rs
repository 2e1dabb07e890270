//! What the flags of a command say, over the configuration files.

use std::path::PathBuf;

use harness_agent::EditFormat;
use harness_exec::Sandbox;

use super::replies::Replies;

/// What the flags of a command say. `None` (or an empty list) leaves the key to the files.
#[derive(Clone, Debug, Default)]
#[allow(missing_docs)] // Each field is the flag, or the key, of the same name.
pub struct Overrides {
    pub model: Option<String>,
    pub host: Option<String>,
    pub api: Option<String>,
    pub verify: Option<String>,
    pub allow: Vec<String>,
    pub timeout: Option<u64>,
    pub max_steps: Option<u32>,
    pub attempts: Option<u32>,
    pub max_checks: Option<u32>,
    pub command_timeout: Option<u64>,
    pub max_command_timeout: Option<u64>,
    pub sandbox: Option<Sandbox>,
    pub writable: Vec<PathBuf>,
    pub network: bool,
    pub edit_format: Option<EditFormat>,
    pub replies: Option<Replies>,
    pub allow_test_edits: bool,
}
