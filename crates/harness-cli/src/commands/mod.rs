//! One module per subcommand, each with its clap definition and an `exec` function that hands
//! off to the libraries.

use std::process::ExitCode;

use clap::Subcommand;

mod tool;

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    Tool(tool::ToolCommand),
}

/// Runs `command`. An `Err` is a usage or configuration problem (exit status 2); the exit
/// status of everything else is the subcommand's.
pub(crate) fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Tool(command) => tool::exec(command),
    }
}
