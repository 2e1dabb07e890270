//! `harness sandbox explain`: what the harness protects, and what it does not.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::boundary;
use crate::commands::workspace_root;
use crate::config;

/// What the sandbox protects and what it does not.
#[derive(Debug, Args)]
pub(crate) struct SandboxCommand {
    #[command(subcommand)]
    action: SandboxAction,
}

#[derive(Debug, Subcommand)]
enum SandboxAction {
    /// Print the boundary statement, and what the configuration active in a workspace does
    /// and does not protect.
    Explain {
        /// The workspace whose configuration (harness.toml) to read.
        #[arg(long, value_name = "DIR", default_value = ".")]
        workspace: PathBuf,

        /// As `harness run --allow`: explain the allowlist of these programs.
        #[arg(long = "allow", value_name = "PROGRAM")]
        allow: Vec<String>,
    },
}

pub(crate) fn exec(command: SandboxCommand) -> anyhow::Result<ExitCode> {
    let SandboxAction::Explain { workspace, allow } = command.action;
    let root = workspace_root(&workspace)?;
    let loaded = config::load(&root)?;
    let allow = if allow.is_empty() {
        loaded.config.allow.unwrap_or_default()
    } else {
        allow
    };
    print!("{}", boundary::explain(&boundary::policy(&allow)));
    let deny = loaded.config.deny.unwrap_or_default();
    if !deny.is_empty() {
        println!(
            "  protected  also denied by the configuration: {}",
            deny.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
