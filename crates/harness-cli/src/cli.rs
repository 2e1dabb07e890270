//! The command line: the top-level parser and its subcommands.

use clap::Parser;

use crate::commands::Command;
use crate::exit;

/// A coding agent confined to a workspace.
///
/// `harness run` gives a task to a local model, which reads, edits and creates files and
/// runs commands in a git repository through confined tools. Every change is a diff you can
/// review (`harness diff`), undo (`harness undo`) or commit (`harness accept`); a run counts
/// as done only when its verification command (`--verify`) exits 0.
///
/// Path confinement and a command policy stop accidents, not an adversary: use a container,
/// VM or separate user for untrusted input (`harness sandbox explain`).
#[derive(Debug, Parser)]
#[command(
    name = "harness",
    version,
    verbatim_doc_comment,
    after_help = format!(
        "{}\n\n`harness tool` gives these their own meanings: see `harness tool --help`.",
        exit::help(exit::Help::Run)
    )
)]
pub(crate) struct Cli {
    /// Log what the harness does on stderr (-v: info, -vv: debug, -vvv: trace).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,

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
