//! Running a command of the evaluation: in its own process group, its output in a file,
//! killed with everything it started when its time is up.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rustix::process::{Pid, Signal, kill_process_group};

/// How a command ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Finished {
    /// Its exit code; `None` when a signal ended it or its time ran out.
    pub(crate) code: Option<i32>,
    /// True if and only if it was killed because its time ran out.
    pub(crate) timed_out: bool,
    /// From start to end.
    pub(crate) seconds: f64,
}

impl Finished {
    /// True if and only if it exited 0 in time.
    pub(crate) fn passed(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }
}

/// Runs `command` with stdin closed and stdout and stderr appended to `log`, for at most
/// `limit`.
pub(crate) fn run_logged(command: &mut Command, log: &Path, limit: Duration) -> Result<Finished> {
    let file = File::options()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("opening {}", log.display()))?;
    let stderr = file.try_clone()?;
    run(command.stdout(file).stderr(stderr), limit)
}

/// Runs `command` (its stdout and stderr as set by the caller) with stdin closed, for at
/// most `limit`.
pub(crate) fn run(command: &mut Command, limit: Duration) -> Result<Finished> {
    use std::os::unix::process::CommandExt;

    let program = command.get_program().to_string_lossy().into_owned();
    let started = Instant::now();
    // Its own process group, so a timeout kills what it started too (a test runner's
    // workers, a compiler), not only the command itself.
    let mut child = command
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .with_context(|| format!("starting {program}"))?;
    let group = i32::try_from(child.id())
        .ok()
        .and_then(Pid::from_raw)
        .context("a child process has a positive id")?;
    let deadline = started + limit;
    loop {
        if let Some(status) = child.try_wait()? {
            // Whatever it left running in its group goes with it.
            let _ = kill_process_group(group, Signal::KILL);
            return Ok(Finished {
                code: status.code(),
                timed_out: false,
                seconds: started.elapsed().as_secs_f64(),
            });
        }
        if Instant::now() >= deadline {
            let _ = kill_process_group(group, Signal::KILL);
            let _ = child.wait();
            return Ok(Finished {
                code: None,
                timed_out: true,
                seconds: started.elapsed().as_secs_f64(),
            });
        }
        thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_and_output_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let finished = run_logged(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            &log,
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!(finished.code, Some(3));
        assert!(!finished.passed() && !finished.timed_out);
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("out") && text.contains("err"), "{text}");
        assert!(
            run(&mut Command::new("true"), Duration::from_secs(30))
                .unwrap()
                .passed()
        );
    }

    #[test]
    fn a_command_out_of_time_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("late");
        let script = format!("(sleep 2; touch {}) & sleep 30", marker.display());
        let finished = run(
            Command::new("sh").args(["-c", &script]),
            Duration::from_millis(300),
        )
        .unwrap();
        assert!(finished.timed_out && !finished.passed());
        assert!(finished.seconds < 10.0, "{finished:?}");
        thread::sleep(Duration::from_millis(2500));
        assert!(
            !marker.exists(),
            "the background child outlived the timeout"
        );
    }
}
