//! `harness man`: the man page, in roff, written from the same clap definitions as `--help`.

use std::io;
use std::process::ExitCode;

use clap::Args;

use crate::display::Out;
use crate::shown::Shown;

/// Print the man page (roff): `harness man > ~/.local/share/man/man1/harness.1`.
///
/// The page of `harness` itself, then one of each subcommand (`harness-run(1)`, ...), as
/// `man` reads them one after the other.
#[derive(Debug, Args)]
pub(crate) struct ManCommand {}

/// `parser` is the program's whole command line.
pub(crate) fn exec(_command: ManCommand, parser: clap::Command) -> anyhow::Result<ExitCode> {
    let page = render(parser)?;
    // Written from our own definitions, but through the one printer all the same.
    Out::stdout().print(&Shown::text(&String::from_utf8_lossy(&page)))?;
    Ok(ExitCode::SUCCESS)
}

/// The page of `harness`, followed by a page per subcommand (named `harness-SUBCOMMAND`).
fn render(command: clap::Command) -> io::Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut page)?;
    // clap's own `help` subcommand has no page of its own: `harness help X` is `X --help`.
    for sub in command
        .get_subcommands()
        .filter(|sub| sub.get_name() != "help")
    {
        // clap takes only static names without its `string` feature; a dozen short names
        // leaked once, by a process that prints a page and exits, cost nothing.
        let name: &'static str = format!("harness-{}", sub.get_name()).leak();
        let sub = sub.clone().name(name).bin_name(name);
        clap_mangen::Man::new(sub).render(&mut page)?;
    }
    Ok(page)
}
