//! The local runner: up to `jobs` tasks at once, each as a child process of the same
//! program running `PROGRAM batch TASKS --index I --out OUT` (the index contract), so a
//! task that crashes the harness or is killed takes nothing else down: the parent writes
//! its `error` result and the batch goes on. Each child is in a process group of its own,
//! its output in `OUT/<id>/harness.log`.
//!
//! Decided in this order for each task:
//!
//! 1. A line that is not a task is reported ([`LocalReport::bad_lines`]) and not run.
//! 2. With `resume`, a task with a readable `result.json` is not run again.
//! 3. Otherwise its old `result.json`, if any, is removed and its child started.
//! 4. A child that exits 0 wrote its result. Any other end (a crash, a signal, an exit
//!    status that says the result could not be written) is an `error` result the parent
//!    writes, naming how the child ended.
//! 5. When the stop flag is raised, every running child's process group gets `SIGTERM`,
//!    then `SIGKILL` after a grace period; those tasks get no result (a `--resume` runs
//!    them), and the finished ones keep theirs.
//!
//! At the end the results are collected into `results.jsonl` and the summary.

use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, kill_process_group, waitid};

use crate::Error;
use crate::collect::{Collected, collect};
use crate::error::LineError;
use crate::result::{self, LOG_FILE, RESULT_FILE, Status, TaskResult};
use crate::spec::Tasks;

/// How long stopped children have, after `SIGTERM`, to kill their commands and exit.
const GRACE: Duration = Duration::from_secs(3);
/// How often the children are looked at.
const POLL: Duration = Duration::from_millis(50);

/// A local batch run: what to run, where, how many at once.
pub struct Local<'a> {
    /// The tasks.
    pub tasks: &'a Tasks,
    /// The output directory.
    pub out: &'a Path,
    /// Tasks run at once, at least 1.
    pub jobs: usize,
    /// Model requests at once across the tasks, passed on to each child as
    /// `--max-inflight`; `None`: no cap.
    pub max_inflight: Option<usize>,
    /// Skip the tasks that have a result.
    pub resume: bool,
    /// The program each task's child runs: the `harness` binary.
    pub program: &'a Path,
    /// Raised (by Ctrl-C), the batch stops.
    pub stop: &'a AtomicBool,
}

/// Where the batch is, told after each task that finished.
#[derive(Debug)]
pub struct Progress<'a> {
    /// The task that finished.
    pub finished: &'a TaskResult,
    /// Tasks with a result, those kept by `--resume` included.
    pub done: usize,
    /// Tasks in the batch (the task lines that are tasks).
    pub total: usize,
    /// Children running now.
    pub running: usize,
    /// Tasks solved so far.
    pub solved: usize,
    /// Since the batch began.
    pub elapsed: Duration,
    /// How much longer it may take, from the pace so far; `None` before the first result
    /// of this run.
    pub estimate: Option<Duration>,
}

/// How a local batch went.
#[derive(Debug)]
pub struct LocalReport {
    /// The results collected at the end, with the summary.
    pub collected: Collected,
    /// The lines of the task file that are not tasks.
    pub bad_lines: Vec<LineError>,
    /// Tasks kept from an earlier run by `--resume`.
    pub resumed: usize,
    /// True if and only if the stop flag ended the batch early.
    pub stopped: bool,
}

/// Runs the batch, telling `progress` of each finished task.
///
/// # Errors
///
/// The output directory cannot be made, or the results cannot be collected. A task that
/// fails, even to start, is not an error: it has an `error` result.
pub fn run_local(
    batch: &Local<'_>,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<LocalReport, Error> {
    result::create_out_dir(batch.out)?;
    let tasks_path = absolute(batch.tasks.path());
    let mut state = State::new();
    let mut queue = state.queue(batch);
    let mut running: Vec<Job> = Vec::new();
    loop {
        if batch.stop.load(Ordering::SeqCst) {
            stop_all(&mut running);
            break;
        }
        while running.len() < batch.jobs.max(1) {
            let Some((index, id)) = queue.pop_front() else {
                break;
            };
            match Job::start(batch, &tasks_path, index, &id) {
                Ok(job) => running.push(job),
                Err(error) => {
                    let failed = keep(batch.out, TaskResult::error(&id, index, error.chain(), 0.0));
                    state.tell(progress, &failed, running.len(), queue.len());
                }
            }
        }
        if running.is_empty() && queue.is_empty() {
            break;
        }
        let ended;
        (running, ended) = reap(running, batch.out);
        for result in ended {
            state.tell(progress, &result, running.len(), queue.len());
        }
        std::thread::sleep(POLL);
    }
    Ok(LocalReport {
        collected: collect(batch.out)?,
        bad_lines: batch.tasks.errors().cloned().collect(),
        resumed: state.resumed,
        stopped: batch.stop.load(Ordering::SeqCst),
    })
}

/// The jobs of `running` still running, and the results of those that ended.
fn reap(running: Vec<Job>, out: &Path) -> (Vec<Job>, Vec<TaskResult>) {
    let mut still = Vec::with_capacity(running.len());
    let mut ended = Vec::new();
    for mut job in running {
        match has_exited(&job.child) {
            Ok(true) => {
                // Its group's id is still its own until it is waited for: kill what it
                // left running first, so the signal cannot reach a group that took the id.
                signal_group(&job.child, Signal::KILL);
                match job.child.wait() {
                    Ok(status) => ended.push(job.ended(out, status)),
                    Err(error) => {
                        tracing::warn!(id = %job.id, "cannot wait for the task's process: {error}");
                    }
                }
            }
            Ok(false) => still.push(job),
            Err(error) => {
                tracing::warn!(id = %job.id, "cannot wait for the task's process: {error}");
                still.push(job);
            }
        }
    }
    (still, ended)
}

/// True if and only if `child` has exited. It is left unwaited for, so its pid, and so the
/// id of the process group it leads, cannot be given to another process yet.
fn has_exited(child: &Child) -> std::io::Result<bool> {
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    Ok(waitid(WaitId::Pid(Pid::from_child(child)), options)?.is_some())
}

/// The counts the progress line shows.
struct State {
    started: Instant,
    /// Tasks in the batch.
    total: usize,
    /// Tasks with a result.
    done: usize,
    /// Tasks solved.
    solved: usize,
    /// Tasks kept from an earlier run: not part of this run's pace.
    resumed: usize,
}

impl State {
    fn new() -> State {
        State {
            started: Instant::now(),
            total: 0,
            done: 0,
            solved: 0,
            resumed: 0,
        }
    }

    /// The tasks to run, by index and id: every task line, but those with a result
    /// under `resume`, which are counted as done.
    fn queue(&mut self, batch: &Local<'_>) -> VecDeque<(usize, String)> {
        let mut queue = VecDeque::new();
        for entry in batch.tasks.entries() {
            let Ok(spec) = &entry.parsed else { continue };
            self.total += 1;
            match result::read(&result::task_dir(batch.out, &spec.id)) {
                Ok(Some(kept)) if batch.resume => {
                    self.resumed += 1;
                    self.count(&kept);
                }
                _ => queue.push_back((entry.index, spec.id.clone())),
            }
        }
        queue
    }

    fn count(&mut self, result: &TaskResult) {
        self.done += 1;
        if result.status == Status::Solved {
            self.solved += 1;
        }
    }

    /// Counts `finished` and tells `progress`; the estimate is the pace of the tasks this
    /// run finished, over the tasks still running or queued.
    fn tell(
        &mut self,
        progress: &mut dyn FnMut(&Progress<'_>),
        finished: &TaskResult,
        running: usize,
        queued: usize,
    ) {
        self.count(finished);
        let elapsed = self.started.elapsed();
        let ran = self.done - self.resumed;
        let left = running + queued;
        let estimate = (ran > 0).then(|| elapsed.mul_f64(left as f64 / ran as f64));
        progress(&Progress {
            finished,
            done: self.done,
            total: self.total,
            running,
            solved: self.solved,
            elapsed,
            estimate,
        });
    }
}

/// A task's child process.
struct Job {
    id: String,
    index: usize,
    child: Child,
    started: Instant,
    dir: PathBuf,
}

impl Job {
    /// Starts `PROGRAM batch TASKS --index INDEX --out OUT` in a process group of its own,
    /// its output in the task's log, after removing the task's old result.
    fn start(batch: &Local<'_>, tasks_path: &Path, index: usize, id: &str) -> Result<Job, Error> {
        let dir = result::task_dir(batch.out, id);
        let made = std::fs::create_dir_all(&dir).and_then(|()| {
            match std::fs::remove_file(dir.join(RESULT_FILE)) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
                _ => Ok(()),
            }
        });
        made.map_err(|source| Error::Write {
            path: dir.clone(),
            source,
        })?;
        let log_path = dir.join(LOG_FILE);
        let log = File::create(&log_path).map_err(|source| Error::Write {
            path: log_path.clone(),
            source,
        })?;
        let log_too = log.try_clone().map_err(|source| Error::Write {
            path: log_path,
            source,
        })?;
        let mut command = Command::new(batch.program);
        command
            .arg("batch")
            .arg(tasks_path)
            .arg("--index")
            .arg(index.to_string())
            .arg("--out")
            .arg(absolute(batch.out));
        if let Some(count) = batch.max_inflight {
            command.arg("--max-inflight").arg(count.to_string());
        }
        let child = command
            // The index is the flag's: an engine's variable in our own environment names
            // another job.
            .env_remove("JOB_COMPLETION_INDEX")
            .env_remove("SLURM_ARRAY_TASK_ID")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_too)
            .process_group(0)
            .spawn()
            .map_err(|source| Error::Spawn {
                program: batch.program.to_owned(),
                source,
            })?;
        Ok(Job {
            id: id.to_owned(),
            index,
            child,
            started: Instant::now(),
            dir,
        })
    }

    /// The result of the task whose child ended with `status`: the one it wrote if it
    /// exited 0, else an `error` result written here.
    fn ended(self, out: &Path, status: ExitStatus) -> TaskResult {
        if status.success()
            && let Ok(Some(written)) = result::read(&self.dir)
        {
            return written;
        }
        let mut message = match (status.code(), status.signal()) {
            (_, Some(signal)) => {
                format!("the task's harness process was killed by signal {signal}")
            }
            (Some(code), _) => {
                format!("the task's harness process exited with status {code} without a result")
            }
            _ => format!("the task's harness process ended: {status}"),
        };
        if let Some(last) = last_line(&self.dir.join(LOG_FILE)) {
            message.push_str(&format!("; its last words: {last}"));
        }
        let failed = TaskResult::error(
            &self.id,
            self.index,
            message,
            self.started.elapsed().as_secs_f64(),
        );
        keep(out, failed)
    }
}

/// Writes `failed` as its task's result, and returns it; a result that cannot be written
/// is logged (collect will not find it).
fn keep(out: &Path, failed: TaskResult) -> TaskResult {
    let dir = result::task_dir(out, &failed.id);
    if let Err(error) = result::write(&dir, &failed, "", None) {
        tracing::warn!(id = %failed.id, "cannot write the task's result: {}", error.chain());
    }
    failed
}

/// Stops every running child: `SIGTERM` to its group (the child kills its commands and
/// exits), then `SIGKILL` to what is left after [`GRACE`].
fn stop_all(running: &mut Vec<Job>) {
    for job in running.iter() {
        signal_group(&job.child, Signal::TERM);
    }
    let deadline = Instant::now() + GRACE;
    while Instant::now() < deadline
        && running
            .iter()
            .any(|job| matches!(has_exited(&job.child), Ok(false)))
    {
        std::thread::sleep(POLL);
    }
    // None was waited for yet, so each group id is still its child's.
    for job in running.iter() {
        signal_group(&job.child, Signal::KILL);
    }
    for mut job in running.drain(..) {
        let _ = job.child.wait();
    }
}

/// Sends `signal` to `child`'s process group, which is its own.
fn signal_group(child: &Child, signal: Signal) {
    // A group already gone has nothing left to stop.
    let _ = kill_process_group(Pid::from_child(child), signal);
}

/// The last non-empty line of the file at `path`, shortened.
fn last_line(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().rev().find(|line| !line.trim().is_empty())?;
    Some(line.chars().take(300).collect())
}

/// `path` made absolute from the current directory, for a child that may start elsewhere.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}
