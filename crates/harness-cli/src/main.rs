//! `harness`: a coding agent confined to a workspace, and the tools it uses, by hand.
//!
//! This binary is thin: it parses arguments, builds the library objects and prints what they
//! return. Each subcommand lives in its own file under `commands/`.
//!
//! Exit status: 0 on success, 1 when a called tool returned an error, 2 for bad usage or a
//! workspace that cannot be used.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

mod cli;
mod commands;

fn main() -> ExitCode {
    // Usage errors exit here with status 2, `--help` with 0.
    let cli = cli::Cli::parse();
    match commands::run(cli.command) {
        Ok(code) => code,
        // The reader went away (`harness tool --list | head -1`): nothing more to say.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            // The one place an error is printed. If stderr is gone too, there is no one to tell.
            let _ = writeln!(io::stderr().lock(), "harness: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// True if and only if `error` was caused by writing to a closed pipe.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|error| error.kind() == io::ErrorKind::BrokenPipe)
    })
}
