//! Shows how a workspace answers model-supplied paths.
//!
//! ```sh
//! cargo run -p harness-sandbox --example confine -- <root> <path>...
//! cargo run -p harness-sandbox --example confine -- . src/lib.rs ../../etc/passwd .env
//! ```
//!
//! For each path it prints where the path resolves and whether it may be read, or why it
//! is refused: the same messages a model would get back from a tool.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use harness_sandbox::{Access, Workspace};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(root) = args.next() else {
        eprintln!("usage: confine <root> <path>...");
        return ExitCode::from(2);
    };
    let workspace = match Workspace::new(&root) {
        Ok(workspace) => workspace,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("workspace: {}", workspace.root());
    for candidate in args {
        match workspace.check(&candidate, Access::Read) {
            Ok(resolved) => println!("ok      {candidate} -> {resolved}"),
            Err(error) => println!("refused {candidate}: {error}"),
        }
    }
    ExitCode::SUCCESS
}
