//! `harness run` from its start to its first model request, on a repository of 100,000 files
//! and on one of 10, side by side in one run, with `git status --porcelain` on the large one
//! as the baseline any git-aware tool pays (issue 15: < 200 ms on 100,000 files).
//!
//! The model is a stub server that answers every chat with "Done." at once; the time is
//! taken when its first chat request arrives. Before that request the harness resolves its
//! settings, checks that the tree is clean, asks the server about the model, records the
//! pre-run state (the first run in a workspace also copies it into the store), and gives
//! the model its head start (the listing, and the verification command's output).
//! `cargo bench -p harness-cli --bench first_request`; `HARNESS_FIRST_REQUEST_FILES` sets
//! the size of the large repository.

#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use harness_stub_server::StubServer;

use common::{git, stub_model};

mod common;

/// Runs of `harness run` per repository, taken in turns.
const ROUNDS: usize = 7;

fn main() {
    let files: usize = std::env::var("HARNESS_FIRST_REQUEST_FILES")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(100_000);
    let directory = tempfile::tempdir().unwrap();
    let home = directory.path().join("home");
    fs::create_dir_all(&home).unwrap();
    let large = directory.path().join("large");
    let small = directory.path().join("small");
    println!("generating a repository of {files} files…");
    generate(&large, files);
    generate(&small, 10);
    let server = stub_model(Duration::ZERO);

    // The first run in a workspace also copies its files into the harness's store.
    let first_large = first_request(&large, &home, &server);
    let first_small = first_request(&small, &home, &server);
    let (mut on_large, mut on_small, mut status) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        on_large.push(first_request(&large, &home, &server));
        on_small.push(first_request(&small, &home, &server));
        status.push(time(|| {
            let output = git(&large)
                .args(["status", "--porcelain"])
                .output()
                .unwrap();
            assert!(output.status.success() && output.stdout.is_empty());
        }));
    }

    let baseline = median(&mut status);
    println!(
        "\n`harness run` to its first model request (median of {ROUNDS}, then the first run)\n"
    );
    println!("{:<46} {:>10} {:>12}", "", "median", "first run");
    println!(
        "{:<46} {:>7.1} ms {:>9.1} ms",
        format!("{files} files"),
        ms(median(&mut on_large)),
        ms(first_large)
    );
    println!(
        "{:<46} {:>7.1} ms {:>9.1} ms",
        "10 files",
        ms(median(&mut on_small)),
        ms(first_small)
    );
    println!(
        "{:<46} {:>7.1} ms",
        format!("baseline: git status --porcelain, {files} files"),
        ms(baseline)
    );
    println!("\ntarget: under 200 ms on 100,000 files");
}

/// A stub Ollama server whose model has tools and a 32,768-token context, and says "Done."
/// to every chat.
/// Starts `harness run` in `root` and returns how long it took until the server had its
/// first chat request; the run is then left to finish.
fn first_request(root: &Path, home: &Path, server: &StubServer) -> Duration {
    let before = server.requests_to("/api/chat").len();
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args([
            "run",
            "--host",
            &server.url(),
            "--verify",
            "true",
            "say done",
        ])
        .current_dir(root)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let took = loop {
        if server.requests_to("/api/chat").len() > before {
            break started.elapsed();
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("harness run ended ({status}) before asking the model");
        }
        thread::sleep(Duration::from_micros(200));
    };
    let status = child.wait().unwrap();
    assert!(status.success(), "harness run: {status}");
    took
}

/// A committed repository of `files` small files, 100 to a directory.
fn generate(root: &Path, files: usize) {
    fs::create_dir_all(root).unwrap();
    assert!(git(root).args(["init", "-q"]).status().unwrap().success());
    for i in 0..files {
        let path = root.join(format!(
            "d{:03}/s{:02}/f{}.txt",
            i / 1000,
            i / 100 % 10,
            i % 100
        ));
        if i % 100 == 0 {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
        }
        fs::write(path, format!("file {i}\n")).unwrap();
    }
    for args in [&["add", "--all"][..], &["commit", "-q", "-m", "generated"]] {
        assert!(
            git(root).args(args).status().unwrap().success(),
            "git {args:?}"
        );
    }
    // Let git refresh the index's stat data once, as any user's git would.
    git(root)
        .args(["status", "--porcelain"])
        .stdout(Stdio::null())
        .status()
        .unwrap();
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
