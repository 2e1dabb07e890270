//! Running a build tool for a person who waits: its output goes to a log file, and one line
//! per stage (and per 10 % of a cmake build, with the time so far) goes to the terminal.
//!
//! A first `cargo xtask demo` builds llama.cpp, whose compiler prints thousands of lines of
//! warnings; shown raw, they bury the few lines that say what is happening and how long is
//! left. On failure the log's path and its last lines are printed, so nothing is lost.

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// How many of a failed tool's last log lines are printed.
const TAIL: usize = 20;

/// Runs `command` as the stage `stage`, its output (stdout and stderr) appended to `log`.
pub(crate) fn run(stage: &str, log: &Path, command: &mut Command) -> Result<()> {
    if let Some(parent) = log.parent() {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("opening the log {}", log.display()))?;
    writeln!(file, "=== {stage}: {command:?}").context("writing the log")?;
    let errors = file.try_clone().context("opening the log twice")?;
    let started = Instant::now();
    eprintln!("{stage} (log: {})", log.display());
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::from(errors))
        .spawn()
        .with_context(|| format!("running {command:?}"))?;
    let mut shown = None;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = writeln!(file, "{line}");
            if let Some(percent) = build_percent(&line)
                && shown.is_none_or(|last| percent >= last + 10 || (percent == 100 && last < 100))
            {
                eprintln!("  {stage}: {percent:>3}% ({})", elapsed(started));
                shown = Some(percent);
            }
        }
    }
    let status = child
        .wait()
        .with_context(|| format!("waiting for {command:?}"))?;
    if status.success() {
        eprintln!("  {stage}: done in {}", elapsed(started));
        return Ok(());
    }
    let tail = last_lines(log, TAIL);
    bail!(
        "{stage} failed ({status}) after {}; the last lines of its log {}:\n{}",
        elapsed(started),
        log.display(),
        tail.join("\n")
    )
}

/// The log of `stage` under the cache: `<cache>/logs/<stage>.log`.
pub(crate) fn log_path(cache: &Path, stage: &str) -> PathBuf {
    cache.join("logs").join(format!("{stage}.log"))
}

/// The percentage at the start of a cmake (or make) progress line: `[ 42%] Building …`.
fn build_percent(line: &str) -> Option<u32> {
    let inside = line.strip_prefix('[')?.split_once("%]")?.0;
    inside.trim().parse().ok().filter(|percent| *percent <= 100)
}

/// `42s`, `3m 10s`.
fn elapsed(since: Instant) -> String {
    let seconds = since.elapsed().as_secs();
    if seconds < 60 {
        format!("{seconds}s")
    } else {
        format!("{}m {:02}s", seconds / 60, seconds % 60)
    }
}

/// The last `count` lines of the file at `path` (none if it cannot be read).
fn last_lines(path: &Path, count: usize) -> Vec<String> {
    let Ok(file) = File::open(path) else {
        return Vec::new();
    };
    let lines: Vec<String> = BufReader::new(file).lines().map_while(Result::ok).collect();
    lines[lines.len().saturating_sub(count)..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmake_progress_lines_give_their_percentage_and_others_none() {
        assert_eq!(
            build_percent("[ 42%] Building CXX object src/x.o"),
            Some(42)
        );
        assert_eq!(build_percent("[100%] Built target llama-server"), Some(100));
        assert_eq!(build_percent("[  3%] Linking"), Some(3));
        for other in [
            "warning: unused",
            "[xx%] no",
            "[101%] no",
            " [ 4%] indented",
            "",
        ] {
            assert_eq!(build_percent(other), None, "{other}");
        }
    }

    #[test]
    fn output_goes_to_the_log_and_a_failure_shows_its_tail() {
        let directory = tempfile::tempdir().unwrap();
        let log = log_path(directory.path(), "stage");
        run(
            "stage",
            &log,
            Command::new("sh").args(["-c", "echo '[ 50%] half'; echo noise >&2"]),
        )
        .unwrap();
        let text = fs::read_to_string(&log).unwrap();
        assert!(
            text.contains("[ 50%] half") && text.contains("noise"),
            "{text}"
        );

        let error = run(
            "stage",
            &log,
            Command::new("sh").args(["-c", "echo the cause >&2; exit 3"]),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("stage failed (exit status: 3)"),
            "{error}"
        );
        assert!(
            error.contains(&log.display().to_string()) && error.ends_with("the cause"),
            "{error}"
        );
    }
}
