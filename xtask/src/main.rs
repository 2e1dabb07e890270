//! Developer chores for the harness workspace, run as `cargo xtask <task>`.
//!
//! Each task is a small module with a `run` function; `main` only dispatches
//! and turns an error into a message and an exit status.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod mutate;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task> [args]

tasks:
  mutate [-p CRATE]... [--jobs N] [--timeout SECS]
                run cargo-mutants on the safety crates (all of them unless -p is
                given) and print one table; fails when any mutant is missed
  help          print this message
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (task, rest) = match args.split_first() {
        Some((task, rest)) => (task.as_str(), rest),
        None => ("help", &[][..]),
    };
    let result = match task {
        "mutate" => mutate::run(rest),
        "help" | "-h" | "--help" => {
            print!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        other => {
            eprint!("error: unknown task {other:?}\n\n{USAGE}");
            Ok(ExitCode::from(2))
        }
    };
    result.unwrap_or_else(|err| {
        eprintln!("error: {err:#}");
        ExitCode::FAILURE
    })
}
