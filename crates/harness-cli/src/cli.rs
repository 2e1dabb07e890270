//! The command line: the top-level parser and its subcommands.

use clap::Parser;

use crate::commands::Command;

/// A coding agent confined to a workspace.
///
/// Exit status: 0 success; 1 a tool returned an error; 2 bad usage, or a workspace that
/// cannot be used.
#[derive(Debug, Parser)]
#[command(name = "harness", version)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}
