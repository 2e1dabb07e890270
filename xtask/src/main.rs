//! Developer chores for the harness workspace, run as `cargo xtask <task>`.
//!
//! Each task is a small module with a `run` function; `main` only dispatches.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task> [args]

tasks:
  help          print this message
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None | Some("help" | "-h" | "--help") => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprint!("error: unknown task {other:?}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
