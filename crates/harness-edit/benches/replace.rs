//! A one-line replace in a 200,000-line file, with its diff, against GNU
//! `diff -u` of the same two versions run as a process in the same run.
//!
//! `cargo bench -p harness-edit` prints one side-by-side report. The editor's
//! figure is the whole operation through the workspace: read the file, check
//! it, find the only match, build the new text, diff it, and write it
//! atomically (temporary file, fsync, rename). `diff -u` only reads the two
//! files and diffs them, so the comparison is conservative for the editor.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::fs;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness_edit::Editor;
use harness_sandbox::Workspace;

const LINES: usize = 200_000;
const CHANGED: usize = LINES / 2;
const RUNS: usize = 41;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let line = |i: usize| format!("    let v{i:06} = compute({i});\n");
    let old_line = line(CHANGED);
    let new_line = old_line.replace("compute", "recompute");
    let old: String = (0..LINES).map(line).collect();
    let new = old.replacen(&old_line, &new_line, 1);
    fs::write(dir.path().join("a.txt"), &old).unwrap();
    fs::write(dir.path().join("b.txt"), &new).unwrap();
    let work = dir.path().join("work");
    fs::create_dir(&work).unwrap();
    fs::write(work.join("big.txt"), &old).unwrap();

    let workspace = Workspace::new(&work).unwrap();
    let editor = Editor::new(&workspace);

    // Alternate A -> B and B -> A, so every run is the same one-line change.
    let mut forward = true;
    let mut diff_len = 0;
    let mut edit = || {
        let (from, to) = if forward {
            (&old_line, &new_line)
        } else {
            (&new_line, &old_line)
        };
        forward = !forward;
        let change = editor.replace("big.txt", from, to).unwrap();
        assert_eq!((change.added(), change.removed()), (1, 1));
        diff_len = change.diff().len();
    };
    let gnu = || {
        let output = Command::new("diff")
            .arg("-u")
            .arg(dir.path().join("a.txt"))
            .arg(dir.path().join("b.txt"))
            .stdin(Stdio::null())
            .output()
            .expect("GNU diff on PATH");
        // Exit status 1: the files differ.
        assert_eq!(output.status.code(), Some(1));
        assert!(output.stdout.len() > 100);
    };
    let (edit, gnu) = interleaved(&mut edit, gnu);

    println!();
    println!(
        "one-line replace in a {LINES}-line file ({:.1} MB), median of {RUNS} runs",
        old.len() as f64 / 1e6
    );
    println!("{:<44} {:>10} {:>10}", "", "median", "min");
    row("harness-edit Editor::replace (with diff)", &edit);
    row("GNU diff -u of the same two versions", &gnu);
    println!(
        "ratio (editor / diff -u, medians): {:.2}x   [target <= 1.0x]; diff: {diff_len} bytes",
        median(&edit).as_secs_f64() / median(&gnu).as_secs_f64()
    );
}

/// Times `a` and `b` in turns (first one first, then the other), so that
/// load from anything else running on the machine falls on both alike.
fn interleaved(mut a: impl FnMut(), mut b: impl FnMut()) -> (Vec<Duration>, Vec<Duration>) {
    // Warm-up: page cache, allocator, lazy statics.
    a();
    b();
    let time = |run: &mut dyn FnMut()| {
        let start = Instant::now();
        run();
        start.elapsed()
    };
    let (mut times_a, mut times_b) = (Vec::new(), Vec::new());
    for i in 0..RUNS {
        if i % 2 == 0 {
            times_a.push(time(&mut a));
            times_b.push(time(&mut b));
        } else {
            times_b.push(time(&mut b));
            times_a.push(time(&mut a));
        }
    }
    times_a.sort();
    times_b.sort();
    (times_a, times_b)
}

fn median(times: &[Duration]) -> Duration {
    times[times.len() / 2]
}

fn row(name: &str, times: &[Duration]) {
    println!(
        "{name:<44} {:>8.2}ms {:>8.2}ms",
        median(times).as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3
    );
}
