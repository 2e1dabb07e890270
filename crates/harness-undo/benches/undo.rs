//! Side-by-side timings on a generated repository of 100,000 files.
//!
//! Targets (issues #4 and #13): `begin`'s clean-tree check no slower than
//! `git status --porcelain` measured in the same run (≤ 1.0×), a checkpoint
//! of one changed file, its copy into the store included, in at most 50 ms,
//! and the first begin in a workspace with its whole copy of HEAD's tree into
//! the store at most 1.5× a begin that finds the tree there already (which is
//! begin without the copy: the store's part of it is one lookup).
//!
//! ```text
//! cargo bench -p harness-undo
//! HARNESS_UNDO_BENCH_FILES=10000 cargo bench -p harness-undo   # another size
//! HARNESS_UNDO_BENCH_DIR=/some/disk cargo bench -p harness-undo # another filesystem
//! ```
//!
//! The repository lives in the system's temporary directory (a real disk on
//! most machines) unless `HARNESS_UNDO_BENCH_DIR` says otherwise. Each
//! measurement runs several times, interleaved with its baseline so both see
//! the same machine load, and the report shows median, minimum and maximum.

#![allow(clippy::print_stdout)] // A benchmark reports on stdout.
#![allow(clippy::unwrap_used)] // A benchmark program: a failed unwrap is a failed run.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness_undo::{BeginOptions, Force, Session, Tracking, check_clean};

fn main() {
    let files: usize = env_number("HARNESS_UNDO_BENCH_FILES", 100_000);
    let parent =
        std::env::var_os("HARNESS_UNDO_BENCH_DIR").map_or_else(std::env::temp_dir, Into::into);
    let dir = tempfile::tempdir_in(&parent).unwrap();
    let root = dir.path().canonicalize().unwrap().join("repo");
    fs::create_dir(&root).unwrap();
    // The store goes beside the repository, on the same disk, and away with it.
    // Set before any thread starts.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("XDG_STATE_HOME", dir.path().join("state"));
    }

    let started = Instant::now();
    let dirs = generate(&root, files);
    println!(
        "harness-undo benchmark: {files} files in {dirs} directories under {} (generated in {:.1} s)",
        root.display(),
        started.elapsed().as_secs_f64()
    );
    // Other work on the machine moves every figure; say how much there was.
    if let Ok(load) = fs::read_to_string("/proc/loadavg") {
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        println!(
            "load average {} on {cpus} CPUs",
            load.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    println!();

    let mut report = Report::default();

    // The clean-tree check against plain `git status`, interleaved.
    let mut git_status = Vec::new();
    let mut ours = Vec::new();
    let mut libgit2 = Vec::new();
    for _ in 0..11 {
        git_status.push(time(|| {
            let output = git(&root).args(["status", "--porcelain"]).output().unwrap();
            assert!(
                output.status.success() && output.stdout.is_empty(),
                "the tree must be clean"
            );
        }));
        ours.push(time(|| check_clean(&root).unwrap()));
        libgit2.push(time(|| libgit2_status(&root)));
    }
    let baseline = median(&git_status);
    report.row(
        "git status --porcelain (git CLI, baseline)",
        &git_status,
        String::new(),
    );
    report.row(
        "check_clean: begin's clean-tree check",
        &ours,
        format!(
            "{:.2}x git status (target <= 1.00x)",
            ratio(median(&ours), baseline)
        ),
    );
    report.row(
        "libgit2 status (reference, not used)",
        &libgit2,
        format!("{:.2}x git status", ratio(median(&libgit2), baseline)),
    );

    // Begin with change notes, then one changed file per checkpoint. The
    // first begin in a workspace copies HEAD's whole tree into the store;
    // later ones find it there and copy nothing.
    let mut session = None;
    let first = vec![time(|| {
        session = Some(Session::begin(&root, BeginOptions::default()).unwrap());
    })];
    report.row(
        "Session::begin, clean tree, first in this workspace",
        &first,
        String::new(),
    );
    // The copy into the store runs meanwhile; the first command waits for it.
    let copy = vec![time(|| {
        session.as_mut().unwrap().wait_for_store().unwrap();
    })];
    report.row(
        "  then the wait for its store copy (100,000 blobs)",
        &copy,
        "runs during the model's first turn".into(),
    );
    let mut begins = Vec::new();
    for _ in 0..5 {
        drop(session.take());
        begins.push(time(|| {
            let mut begun = Session::begin(&root, BeginOptions::default()).unwrap();
            // Finding the tree in the store already costs a lookup.
            begun.wait_for_store().unwrap();
            session = Some(begun);
        }));
    }
    report.row(
        "Session::begin + store wait, store has the tree",
        &begins,
        "baseline: begin without the copy".into(),
    );
    let whole = vec![first[0] + copy[0]];
    report.row(
        "first begin + its whole store copy",
        &whole,
        format!(
            "{:.2}x the baseline (target <= 1.5x): {}",
            ratio(whole[0], median(&begins)),
            verdict(ratio(whole[0], median(&begins)) <= 1.5)
        ),
    );
    let mut session = session.unwrap();
    let watched = checkpoints(&root, &mut session, 25, 0);
    report.row(
        "checkpoint of one changed file (Watch), incl. the store write",
        &watched,
        format!(
            "target <= 50 ms: {}",
            verdict(median(&watched) <= Duration::from_millis(50))
        ),
    );

    let options = BeginOptions {
        allow_dirty: true,
        tracking: Tracking::FullScan,
        ..BeginOptions::default()
    };
    let mut scanning = Session::begin(&root, options).unwrap();
    let scanned = checkpoints(&root, &mut scanning, 5, 1000);
    report.row(
        "checkpoint of one changed file (FullScan)",
        &scanned,
        "the fallback".into(),
    );

    let undo = vec![time(|| {
        session.undo(Force::Yes).unwrap();
    })];
    report.row("undo of 30 changed files (full scan)", &undo, String::new());

    report.print();
}

/// Writes `files` files in directories of 100 and commits them; returns the
/// number of directories.
fn generate(root: &Path, files: usize) -> usize {
    let status = git(root).args(["init", "-q"]).status().unwrap();
    assert!(status.success());
    let mut dirs = 0;
    for i in 0..files {
        let path = file_path(root, i);
        if i % 100 == 0 {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            dirs += 1;
        }
        fs::write(path, format!("file {i}\n")).unwrap();
    }
    for args in [&["add", "--all"][..], &["commit", "-q", "-m", "generated"]] {
        let status = git(root).args(args).status().unwrap();
        assert!(status.success(), "git {args:?}");
    }
    // Let git refresh the index's stat data once, as any user's git would.
    git(root)
        .args(["status", "--porcelain"])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    dirs + dirs / 10 + 1
}

/// The path of generated file number `i`: 100 files a directory, 10
/// directories a top-level directory.
fn file_path(root: &Path, i: usize) -> std::path::PathBuf {
    root.join(format!(
        "d{:03}/s{:02}/f{}.txt",
        i / 1000,
        i / 100 % 10,
        i % 100
    ))
}

/// Times `count` checkpoints, each after changing one file (spread over the tree).
fn checkpoints(root: &Path, session: &mut Session, count: usize, offset: usize) -> Vec<Duration> {
    let files = env_number("HARNESS_UNDO_BENCH_FILES", 100_000);
    (0..count)
        .map(|i| {
            let n = offset + i;
            let path = file_path(root, (n * 7919 + 13) % files);
            fs::write(&path, format!("changed by step {n}\n")).unwrap();
            time(|| {
                session.checkpoint("one file").unwrap().unwrap();
            })
        })
        .collect()
}

fn libgit2_status(root: &Path) {
    let repo = git2::Repository::open(root).unwrap();
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(false);
    assert!(repo.statuses(Some(&mut options)).unwrap().is_empty());
}

/// git with no global or system configuration and a fixed identity.
fn git(root: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.org")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.org");
    command
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn median(samples: &[Duration]) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[derive(Default)]
struct Report {
    rows: Vec<(String, Vec<Duration>, String)>,
}

impl Report {
    fn row(&mut self, name: &str, samples: &[Duration], note: String) {
        self.rows.push((name.to_string(), samples.to_vec(), note));
    }

    fn print(&self) {
        let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
        println!(
            "{:<62} {:>10} {:>10} {:>10} {:>5}  note",
            "operation", "median", "min", "max", "runs"
        );
        for (name, samples, note) in &self.rows {
            let min = samples.iter().min().copied().unwrap_or_default();
            let max = samples.iter().max().copied().unwrap_or_default();
            println!(
                "{name:<62} {:>10} {:>10} {:>10} {:>5}  {note}",
                ms(median(samples)),
                ms(min),
                ms(max),
                samples.len()
            );
        }
    }
}
