//! `harness`: a coding agent confined to a workspace, and the tools it uses, by hand.
//!
//! This binary is thin: it parses arguments, calls `harness-app` and prints what it returns.
//! Settings, the confinement plan and toolbox, the model probe, preparing, running and
//! finishing a run and the operations on recorded runs are `harness-app`'s: this binary and
//! the MCP server (`harness-mcp`, which `commands/mcp.rs` starts) are front ends over it.
//! Each subcommand lives in its own file under `commands/`; the terminal display of a run is
//! in `display`, the review lines only the commands print (what an undo repaired, the
//! commands to paste next) in `review`, how commands are isolated, in words, in
//! `isolation`. The words both front ends say (the boundary statement, a diff's stat, what
//! an undo restored) and the sanitizer every printed text goes through (`Shown`) are
//! `harness-app`'s, named in `boundary`, `review` and `shown`.
//!
//! Exit statuses: the table in `exit.rs`, from which every help text is written.

use std::io;
use std::process::ExitCode;

use clap::Parser;

mod boundary;
mod cli;
mod commands;
mod display;
mod exit;
mod isolation;
mod program;
mod review;
mod shown;
mod signals;

fn main() -> ExitCode {
    // Usage errors exit here with status 2, `--help` with 0.
    let cli = cli::Cli::parse();
    init_logging(cli.verbose);
    signals::reset_inherited();
    if cli.command.runs_commands() {
        // Before any thread: the reaper forks. Without it a command still runs, but
        // under landlock and none outlives a harness killed with SIGKILL.
        if let Err(error) = harness_exec::run_under_reaper() {
            tracing::warn!(
                "cannot leave a reaper behind ({error}): if the harness is killed with \
                 SIGKILL, a running command goes on"
            );
        }
    }
    match commands::run(cli.command, <cli::Cli as clap::CommandFactory>::command) {
        Ok(code) => code,
        // The reader went away (`harness runs | head -1`): nothing more to say.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            // The one place an error is printed. It may quote a path or a command, so it is
            // sanitized as one line: no message of ours spans lines, and a newline in a path
            // cannot print a line of its own. If stderr is gone too, there is no one to tell.
            let mut message = format!("harness: {}", program::in_message(&format!("{error:#}")));
            if is_disk_full(&error) {
                message.push_str(
                    "; the disk is full: free some space (a large file a command of the run \
                     made, say) and run the same command again",
                );
            }
            let message = shown::Shown::line(&message);
            let _ = display::Out::stderr().line(&message);
            exit::for_error(&error)
        }
    }
}

/// Logs to stderr at the level `-v` asks for; without it, warnings only, and `RUST_LOG`
/// still works. Logs quote paths and commands, so they are sanitized too, and have no
/// colours (which sanitizing would show as escapes).
fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(display::log_writer)
        .with_ansi(false)
        .with_target(false)
        .try_init();
}

/// True if and only if `error` was caused by a full disk.
fn is_disk_full(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|error| error.kind() == io::ErrorKind::StorageFull)
            || cause
                .downcast_ref::<harness_undo::Error>()
                .is_some_and(harness_undo::Error::is_disk_full)
            || cause
                .downcast_ref::<harness_app::Error>()
                .is_some_and(harness_app::Error::is_disk_full)
    })
}

/// True if and only if `error` was caused by writing to a closed pipe.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|error| error.kind() == io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_found_anywhere_in_the_chain_and_nothing_else_is_taken_for_one() {
        let full = anyhow::Error::from(io::Error::from_raw_os_error(28)).context("write");
        assert!(is_disk_full(&full));
        let denied =
            anyhow::Error::from(io::Error::from(io::ErrorKind::PermissionDenied)).context("write");
        assert!(!is_disk_full(&denied));
        assert!(!is_disk_full(&anyhow::anyhow!("No space left on device")));
    }
}
