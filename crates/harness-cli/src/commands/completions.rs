//! `harness completions SHELL`: a completion script for a shell, written from the same clap
//! definitions the parser uses, so it always offers the subcommands and flags that exist.

use std::process::ExitCode;

use clap::Args;
use clap_complete::Shell;

use crate::display::Out;
use crate::shown::Shown;

/// Print a completion script for SHELL.
///
/// Install it where the shell looks, e.g.:
///   bash: harness completions bash > ~/.local/share/bash-completion/completions/harness
///   zsh:  harness completions zsh > ~/.zfunc/_harness   (with ~/.zfunc in fpath)
///   fish: harness completions fish > ~/.config/fish/completions/harness.fish
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub(crate) struct CompletionsCommand {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_name = "SHELL")]
    shell: Shell,
}

/// `parser` is the program's whole command line.
pub(crate) fn exec(
    command: CompletionsCommand,
    mut parser: clap::Command,
) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(command.shell, &mut parser, "harness", &mut script);
    // Written from our own definitions, but through the one printer all the same.
    Out::stdout().print(&Shown::text(&String::from_utf8_lossy(&script)))?;
    Ok(ExitCode::SUCCESS)
}
