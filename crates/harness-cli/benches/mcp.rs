//! `read_file` over MCP on a warm `harness mcp` against spawning `harness tool` per call,
//! side by side in one run (issue 16: ≤ 1 ms median over MCP, ≥ 50× faster).
//!
//! The client speaks JSON-RPC over the server's pipes itself, line by line, so what is
//! measured is the server's round trip: read the request, validate, confine, read the
//! file, answer. `cargo bench -p harness-cli --bench mcp`.

#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Round trips over MCP, and `harness tool` spawns (fewer: each costs a process).
const MCP_CALLS: usize = 2_000;
const SPAWNS: usize = 50;

fn main() {
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path().join("work");
    let home = directory.path().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let text: String = (1..=200)
        .map(|n| format!("line {n} of the file\n"))
        .collect();
    std::fs::write(root.join("file.txt"), text).unwrap();
    git(&root, &["init", "--quiet"]);
    git(&root, &["add", "--all"]);
    git(
        &root,
        &[
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "commit",
            "--quiet",
            "-m",
            "b",
        ],
    );

    let over_mcp = mcp_round_trips(&root, &home);
    let spawned = tool_spawns(&root, &home);
    let (mcp, tool) = (median(over_mcp), median(spawned));
    println!(
        "read_file over MCP (warm server): median {:.3} ms over {MCP_CALLS} calls (target ≤ 1 ms)",
        ms(mcp)
    );
    println!(
        "read_file by spawning `harness tool`: median {:.3} ms over {SPAWNS} calls",
        ms(tool)
    );
    println!(
        "MCP is {:.0}× faster (target ≥ 50×)",
        tool.as_secs_f64() / mcp.as_secs_f64()
    );
}

fn mcp_round_trips(root: &Path, home: &Path) -> Vec<Duration> {
    let mut server = harness(root, home)
        .args(["mcp", "--workspace"])
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = server.stdin.take().unwrap();
    let mut output = BufReader::new(server.stdout.take().unwrap());
    let mut line = String::new();
    let mut ask = |request: String, line: &mut String| {
        input.write_all(request.as_bytes()).unwrap();
        input.write_all(b"\n").unwrap();
        input.flush().unwrap();
        if request.contains("\"id\"") {
            line.clear();
            output.read_line(line).unwrap();
        }
    };
    ask(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#.to_owned(),
        &mut line,
    );
    ask(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        &mut line,
    );
    let mut times = Vec::with_capacity(MCP_CALLS);
    for id in 1..=MCP_CALLS {
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"read_file","arguments":{{"path":"file.txt"}}}}}}"#
        );
        let started = Instant::now();
        ask(request, &mut line);
        times.push(started.elapsed());
        assert!(line.contains("line 200 of the file"), "{line}");
    }
    drop(input);
    server.wait().unwrap();
    times
}

fn tool_spawns(root: &Path, home: &Path) -> Vec<Duration> {
    (0..SPAWNS)
        .map(|_| {
            let started = Instant::now();
            let output = harness(root, home)
                .args(["tool", "--workspace"])
                .arg(root)
                .args(["read_file", r#"{"path": "file.txt"}"#])
                .output()
                .unwrap();
            let took = started.elapsed();
            assert!(String::from_utf8_lossy(&output.stdout).contains("line 200 of the file"));
            took
        })
        .collect()
}

fn harness(root: &Path, home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_harness"));
    command
        .current_dir(root)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME");
    command
}

fn git(root: &Path, args: &[&str]) {
    assert!(
        Command::new("git")
            .args(args)
            .current_dir(root)
            .status()
            .unwrap()
            .success()
    );
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
