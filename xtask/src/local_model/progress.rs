//! Progress for a person who waits: a download shown as one line per artifact, and a build
//! tool whose output goes to a log file, with one line per stage (and per 10 % of a cmake
//! build, with the time so far) on the terminal.
//!
//! A download of many files (the model comes in 22 wheels) is one artifact: one line, redrawn
//! in place on a terminal, with the total size and the time at the end; in a log, a line as it
//! starts, one per quarter and one at the end, instead of five per file.
//!
//! A first `cargo xtask demo` builds llama.cpp, whose compiler prints thousands of lines of
//! warnings; shown raw, they bury the few lines that say what is happening and how long is
//! left. On failure the log's path and its last lines are printed, so nothing is lost.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, IsTerminal, Write};
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

/// The progress of one artifact's download, which may come in several files.
pub(crate) struct Download {
    /// What is downloaded, for people: `model 1.5b`.
    label: String,
    /// The bytes of all its files.
    total: u64,
    /// The bytes downloaded or found in the cache so far.
    done: u64,
    /// `done` when the line was last drawn or printed.
    shown: u64,
    /// How many files it comes in, and how many are done.
    files: u32,
    files_done: u32,
    /// Whether standard error is a terminal, where the line is redrawn in place.
    redraw: bool,
    started: Instant,
}

impl Download {
    /// Starts the progress of `label`, `total` bytes in `files` files.
    pub(crate) fn start(label: &str, total: u64, files: u32) -> Download {
        let download = Download {
            label: label.to_owned(),
            total,
            done: 0,
            shown: 0,
            files,
            files_done: 0,
            redraw: io::stderr().is_terminal(),
            started: Instant::now(),
        };
        if download.redraw {
            download.draw();
        } else {
            let parts = match files {
                1 => String::new(),
                n => format!(" in {n} files"),
            };
            eprintln!("{label}: downloading {}{parts}", megabytes(total));
        }
        download
    }

    /// Counts `bytes` more downloaded.
    pub(crate) fn advance(&mut self, bytes: u64) {
        self.done += bytes;
        if self.redraw {
            if self.done - self.shown >= 1 << 20 {
                self.shown = self.done;
                self.draw();
            }
        } else if let Some(quarter) = self.quarter_passed() {
            self.shown = self.done;
            eprintln!("{}: {quarter}% ({})", self.label, elapsed(self.started));
        }
    }

    /// Counts one more file done.
    pub(crate) fn file_done(&mut self) {
        self.files_done += 1;
        if self.redraw {
            self.draw();
        }
    }

    /// Ends the line: the total size and the time it took.
    pub(crate) fn finish(self) {
        let line = format!(
            "{}: {} in {}",
            self.label,
            megabytes(self.done),
            elapsed(self.started)
        );
        if self.redraw {
            eprintln!("\r{line}\x1b[K");
        } else {
            eprintln!("{line}");
        }
    }

    /// The quarter (25, 50, 75) the bytes just passed, if they did.
    fn quarter_passed(&self) -> Option<u64> {
        let quarter = |bytes: u64| (bytes.saturating_mul(4) / self.total.max(1)).min(3);
        let now = quarter(self.done);
        (now > quarter(self.shown)).then_some(now * 25)
    }

    fn draw(&self) {
        let files = match self.files {
            1 => String::new(),
            n => format!(", file {} of {n}", (self.files_done + 1).min(n)),
        };
        eprint!(
            "\r{}: {} of {}{files} ({})\x1b[K",
            self.label,
            megabytes(self.done),
            megabytes(self.total),
            elapsed(self.started)
        );
    }
}

/// `1117.3 MB`.
fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
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
    fn a_download_passes_each_quarter_once_whatever_the_pieces() {
        let mut download = Download::start("test", 1000, 3);
        download.redraw = false;
        let mut quarters = Vec::new();
        for piece in [100, 100, 100, 300, 1, 399] {
            download.done += piece;
            if let Some(quarter) = download.quarter_passed() {
                quarters.push(quarter);
                download.shown = download.done;
            }
        }
        assert_eq!(quarters, [25, 50, 75]);
        assert_eq!(download.done, 1000);
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
