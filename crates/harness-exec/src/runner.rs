//! The runner: checks a command, starts it, watches it, and leaves nothing
//! behind.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, PipeReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{EventfdFlags, eventfd};
use rustix::pipe::fcntl_setpipe_size;
use rustix::process::{Pid, PidfdFlags, pidfd_open};

use crate::capture::{Capture, CapturedText};
use crate::env::{EnvPolicy, lookup};
use crate::error::Error;
use crate::interrupt::Interrupter;
use crate::isolation::{Isolation, Repaired, SetAside, repair, set_aside};
use crate::limits::Limits;
use crate::outcome::{Outcome, Status};
use crate::policy::{Lookup, Policy};
use crate::pre_exec::prepare_child;
use crate::redact::Redactor;
use crate::resolve::{Resolved, resolve};
use crate::supervise::{Ending, Watched, watch};
use crate::tree::{Marker, Tree, is_marker, reap_registered, spawn_registered};

/// The timeout of a call that does not set one.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest timeout a call may ask for, unless the runner sets another.
const DEFAULT_MAX_TIMEOUT: Duration = Duration::from_secs(600);

/// The size asked for the output pipe: 1 MiB.
const PIPE_SIZE: usize = 1_048_576;

/// Stands for a timeout too large for the clock: a century is forever, for
/// a command.
const FOREVER: Duration = Duration::from_secs(3_155_760_000);

/// The output kept by default: 8 KiB of text.
const DEFAULT_OUTPUT_LIMIT: usize = 8 * 1024;

/// Runs commands: an argv, never a shell, bounded in time and output.
///
/// Configure once, then call [`Runner::run`] for each command; a runner can
/// be shared between threads and run several commands at once.
///
/// ```
/// use std::time::Duration;
/// use harness_exec::{Policy, Runner};
///
/// let runner = Runner::new()
///     .timeout(Duration::from_secs(60))
///     .max_timeout(Duration::from_secs(300))
///     .output_limit(16 * 1024)
///     .policy(Policy::allowlist(["cargo", "git"]));
/// # let _ = runner;
/// ```
#[derive(Clone, Debug)]
pub struct Runner {
    /// The timeout of a call that sets none.
    timeout: Duration,
    /// The longest timeout a call may set.
    max_timeout: Duration,
    /// Bytes of output text kept: half head, half tail.
    output_limit: usize,
    /// What may run.
    policy: Policy,
    /// Which variables commands receive.
    env: EnvPolicy,
    /// The variables commands' environments are chosen from.
    parent_env: Vec<(OsString, OsString)>,
    /// Applied to every output.
    redactor: Redactor,
    /// Set in every command before it starts.
    limits: Limits,
    /// The tier commands run under.
    isolation: Isolation,
    /// Shared with every `Interrupter` handed out, and with clones.
    interrupter: Interrupter,
}

/// Where and for how long one command runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// The working directory.
    cwd: PathBuf,
    /// The timeout, or `None` for the runner's default.
    timeout: Option<Duration>,
}

impl RunOptions {
    /// Run in `cwd` (the workspace, or a directory inside it), with the
    /// runner's default timeout.
    pub fn new(cwd: impl Into<PathBuf>) -> RunOptions {
        RunOptions {
            cwd: cwd.into(),
            timeout: None,
        }
    }

    /// Kill the command and everything it started after `timeout`; at most
    /// the runner's [`Runner::max_timeout`].
    pub fn timeout(mut self, timeout: Duration) -> RunOptions {
        self.timeout = Some(timeout);
        self
    }
}

impl Default for Runner {
    fn default() -> Runner {
        Runner::new()
    }
}

impl Runner {
    /// A runner with a 30 s timeout (600 s at most), an 8 KiB output limit,
    /// the blocklist policy, a scrubbed environment taken from this process's
    /// environment (read once, now), redaction of this process's
    /// secret-named variables' values, core dumps off, and no isolation.
    pub fn new() -> Runner {
        Runner {
            timeout: DEFAULT_TIMEOUT,
            max_timeout: DEFAULT_MAX_TIMEOUT,
            output_limit: DEFAULT_OUTPUT_LIMIT,
            policy: Policy::blocklist(),
            env: EnvPolicy::scrubbed(),
            parent_env: Vec::new(),
            redactor: Redactor::new(),
            limits: Limits::new(),
            isolation: Isolation::none(),
            interrupter: Interrupter::default(),
        }
        .parent_env(std::env::vars_os())
    }

    /// The timeout of calls that set none (default 30 s; capped by
    /// [`Runner::max_timeout`]).
    pub fn timeout(mut self, timeout: Duration) -> Runner {
        self.timeout = timeout;
        self
    }

    /// The longest timeout a call may ask for (default 600 s); a call asking
    /// for more gets [`Error::TimeoutTooLong`].
    pub fn max_timeout(mut self, max_timeout: Duration) -> Runner {
        self.max_timeout = max_timeout;
        self
    }

    /// Bytes of output text kept (default 8 KiB): the first half and the last
    /// half; the middle of a longer output is cut.
    pub fn output_limit(mut self, bytes: usize) -> Runner {
        self.output_limit = bytes;
        self
    }

    /// The command policy (default: [`Policy::blocklist`]).
    pub fn policy(mut self, policy: Policy) -> Runner {
        self.policy = policy;
        self
    }

    /// Which variables commands receive (default: [`EnvPolicy::scrubbed`]).
    pub fn env(mut self, env: EnvPolicy) -> Runner {
        self.env = env;
        self
    }

    /// The variables commands' environments are chosen from, instead of this
    /// process's environment. The redactor is rebuilt from them with
    /// [`Redactor::from_vars`]; call [`Runner::redactor`] afterwards to
    /// replace it.
    pub fn parent_env<I, K, V>(mut self, vars: I) -> Runner
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.parent_env = vars
            .into_iter()
            .map(|(name, value)| (name.into(), value.into()))
            .collect();
        self.redactor =
            Redactor::from_vars(self.parent_env.iter().map(|(name, value)| (name, value)));
        self
    }

    /// The redactor applied to every output.
    pub fn redactor(mut self, redactor: Redactor) -> Runner {
        self.redactor = redactor;
        self
    }

    /// Gives out and puts back the markers of `redactor` (see
    /// [`Redactor::sharing_markers_with`]), keeping this runner's own secret values.
    pub fn share_markers(mut self, redactor: &Redactor) -> Runner {
        self.redactor = self.redactor.sharing_markers_with(redactor);
        self
    }

    /// Resource limits for commands (default: core dumps off only).
    pub fn limits(mut self, limits: Limits) -> Runner {
        self.limits = limits;
        self
    }

    /// The isolation tier commands run under (default: [`Isolation::none`]).
    pub fn isolation(mut self, isolation: Isolation) -> Runner {
        self.isolation = isolation;
        self
    }

    /// A handle that interrupts the commands this runner (and its clones) is
    /// running; see [`Interrupter`].
    pub fn interrupter(&self) -> Interrupter {
        self.interrupter.clone()
    }

    /// Runs `argv` (the program, then its arguments) in `options`' working
    /// directory, and returns when it has ended and every process it started
    /// is gone.
    ///
    /// The program runs directly, never through a shell, with stdin from
    /// `/dev/null`, stdout and stderr merged into one pipe, in a new session
    /// (its own process group, without a controlling terminal), with the
    /// scrubbed environment and the resource limits. At the
    /// timeout its process group and every process it started get `SIGTERM`,
    /// then `SIGKILL` 1 s later. When the program exits, its output is read
    /// for at most 250 ms more, then whatever it left running is killed.
    ///
    /// # Errors
    ///
    /// Before anything starts: an empty argv, a timeout above the maximum, a
    /// working directory that is not one, a refusal by the policy, a program
    /// not found or not executable. Then: a program the system cannot start,
    /// or a failure of the runner itself. A command that ran and failed,
    /// crashed or timed out is an `Ok` [`Outcome`].
    pub fn run<S: AsRef<OsStr>>(&self, argv: &[S], options: &RunOptions) -> Result<Outcome, Error> {
        let started = Instant::now();
        let Some((program, args)) = argv.split_first() else {
            return Err(Error::EmptyCommand);
        };
        let program = program.as_ref();
        let timeout = self.timeout_for(options)?;
        let cwd = checked_working_directory(&options.cwd)?;
        let marker = Marker::new().map_err(Error::io("choosing the run's marker"))?;
        let env = self.child_env(&marker);
        let lookup = Lookup {
            search_path: lookup(&env, "PATH").map(OsStr::to_owned),
            cwd: cwd.clone(),
            home: lookup(&env, "HOME").map(OsStr::to_owned),
        };
        self.policy.check_in(argv, &lookup)?;
        let executable = match resolve(program, lookup.search_path.as_deref(), &cwd) {
            Resolved::Executable(path) => path,
            Resolved::NotExecutable(path) => {
                return Err(Error::NotExecutable {
                    program: display(program),
                    path,
                });
            }
            Resolved::NotFound => {
                return Err(Error::NotFound {
                    program: display(program),
                });
            }
        };

        let (output, writer) = io::pipe().map_err(Error::io("creating the output pipe"))?;
        // A larger pipe lets a fast writer go on while the watcher is busy,
        // and the watcher read more at once: fewer wake-ups per gigabyte.
        // Without it (a lower `pipe-max-size`), the default 64 KiB still works.
        let coalesce = fcntl_setpipe_size(&output, PIPE_SIZE).is_ok_and(coalesces);
        let prepared = self.isolation.prepare(&executable, program, args, &cwd)?;
        let protected = prepared.protected;
        let mut command = prepared.command;
        command
            .current_dir(&cwd)
            .env_clear()
            .envs(env)
            .envs(prepared.env)
            .stdin(Stdio::null())
            .stdout(
                writer
                    .try_clone()
                    .map_err(Error::io("creating the output pipe"))?,
            )
            .stderr(writer);
        prepare_child(
            &mut command,
            self.limits.for_child_of_this_process(),
            prepared.ruleset.as_ref(),
            prepared.seccomp_filter.clone(),
            prepared.ignore_interrupt,
        );
        let (pid, child) = spawn_registered(|| {
            let child = command.spawn()?;
            let pid = Pid::from_raw(child.id() as i32).expect("a child's pid is positive");
            Ok((pid, child))
        })
        .map_err(|source| Error::Spawn {
            program: display(program),
            source,
        })?;
        // The command still holds our copies of the pipe's write end: without
        // closing them, the output would never end.
        drop(command);

        let mut capture = Capture::new(self.output_limit);
        let mut exit = None;
        let ending = {
            let running = Running {
                child,
                pid,
                tree: Arc::new(Tree::new(pid, &marker)),
                exit: &mut exit,
            };
            let watching = Watching {
                output: &output,
                coalesce,
                deadline: deadline(started, timeout),
            };
            self.supervise(&running, &watching, &mut capture)
            // `running` is dropped here, whichever way: the run is over.
        };
        let exit = exit.expect("dropping the run's guard reaped the child");
        let ending = ending?;
        let exit = exit.map_err(Error::io("waiting for the command"))?;
        let status = match ending {
            Ending::TimedOut => Status::TimedOut(timeout),
            Ending::Interrupted => Status::Interrupted,
            Ending::Exited => status_of(exit),
        };
        // Every process of the command is gone: nothing can write after this.
        let set_aside = set_aside(&protected);
        // After what was made in a kept path's place is moved aside: the kept one may
        // come back there.
        let repaired = protected.record.as_ref().map(repair).unwrap_or_default();
        Ok(self.outcome(
            status,
            started.elapsed(),
            capture.finish(),
            set_aside,
            repaired,
        ))
    }

    /// Watches the started command until it has ended, interruptible
    /// meanwhile.
    fn supervise(
        &self,
        running: &Running<'_>,
        watching: &Watching<'_>,
        capture: &mut Capture,
    ) -> Result<Ending, Error> {
        let pidfd = pidfd_open(running.pid, PidfdFlags::empty()).map_err(|errno| {
            Error::io("watching the command (pidfds need Linux 5.3 or newer)")(errno.into())
        })?;
        let interrupts = Arc::new(
            eventfd(0, EventfdFlags::CLOEXEC)
                .map_err(|errno| Error::io("preparing for interrupts")(errno.into()))?,
        );
        let _interruptible = self
            .interrupter
            .register(Arc::clone(&running.tree), Arc::clone(&interrupts));
        let watched = Watched {
            output: watching.output,
            pidfd: &pidfd,
            interrupts: &interrupts,
            tree: &running.tree,
            coalesce: watching.coalesce,
        };
        watch(&watched, watching.deadline, capture).map_err(Error::io("reading the output"))
    }

    /// The timeout of a call with `options`.
    fn timeout_for(&self, options: &RunOptions) -> Result<Duration, Error> {
        match options.timeout {
            Some(requested) if requested > self.max_timeout => Err(Error::TimeoutTooLong {
                requested,
                maximum: self.max_timeout,
            }),
            Some(requested) => Ok(requested),
            None => Ok(self.timeout.min(self.max_timeout)),
        }
    }

    /// The environment of a command: the scrubbed variables, the markers of
    /// the runs this process is part of, and the new run's marker.
    fn child_env(&self, marker: &Marker) -> Vec<(OsString, OsString)> {
        let mut env = self.env.child_env(&self.parent_env);
        env.retain(|(name, _)| !is_marker(name));
        env.extend(
            self.parent_env
                .iter()
                .filter(|(name, _)| is_marker(name))
                .cloned(),
        );
        env.push((marker.name().into(), "1".into()));
        env
    }

    /// The outcome, with the output redacted and its cut marked.
    fn outcome(
        &self,
        status: Status,
        duration: Duration,
        text: CapturedText,
        set_aside: Vec<SetAside>,
        repaired: Vec<Repaired>,
    ) -> Outcome {
        let mut output = self.redactor.redact(&text.head).into_owned();
        if let Some(cut) = text.cut {
            if !output.is_empty() && !output.ends_with('\n') {
                output.push('\n');
            }
            output.push_str(&cut.marker());
            output.push('\n');
            output.push_str(&self.redactor.redact(&text.tail));
        }
        Outcome {
            status,
            duration,
            output,
            truncated: text.cut.is_some(),
            total_bytes: text.total_bytes,
            total_lines: text.total_lines,
            set_aside,
            repaired,
        }
    }
}

/// A started command. Dropping it, whichever way [`Runner::run`] is left,
/// kills what is left of the run and reaps the direct child into `exit`.
/// It outlives the run's [`Interrupter`] registration, so that no signal
/// reaches a reused process group.
struct Running<'a> {
    /// The direct child.
    child: Child,
    /// Its pid, which is also its process group's id.
    pid: Pid,
    /// Every process of the run; shared with the interrupter.
    tree: Arc<Tree>,
    /// Where the direct child's exit status goes once it is reaped.
    exit: &'a mut Option<io::Result<ExitStatus>>,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.tree.kill();
        let child = &mut self.child;
        *self.exit = Some(reap_registered(self.pid, || child.wait()));
    }
}

/// The parts of a run [`Runner::supervise`] needs besides the process.
struct Watching<'a> {
    /// The read end of the output pipe.
    output: &'a PipeReader,
    /// Whether the pipe is large enough to coalesce wake-ups.
    coalesce: bool,
    /// When the command times out.
    deadline: Instant,
}

/// True if and only if a pipe of `size` bytes lets the watcher coalesce
/// wake-ups: the size asked for was granted.
fn coalesces(size: usize) -> bool {
    size >= PIPE_SIZE
}

/// The moment a run started at `started` times out.
fn deadline(started: Instant, timeout: Duration) -> Instant {
    started
        .checked_add(timeout)
        .unwrap_or_else(|| started + FOREVER)
}

/// How a reaped child ended.
fn status_of(exit: ExitStatus) -> Status {
    match (exit.code(), exit.signal()) {
        (Some(code), _) => Status::Exited(code),
        (None, Some(signal)) => Status::Signaled(signal),
        (None, None) => unreachable!("a reaped child either exited or was killed by a signal"),
    }
}

/// `cwd` made absolute, if it is a directory a command can run in.
fn checked_working_directory(cwd: &Path) -> Result<PathBuf, Error> {
    let error = |source| Error::WorkingDirectory {
        path: cwd.to_owned(),
        source,
    };
    // Absolute, so that the policy compares `rm`'s targets with the home
    // directory from where the command really runs.
    let canonical = fs::canonicalize(cwd).map_err(error)?;
    if !canonical.is_dir() {
        return Err(error(io::Error::new(
            io::ErrorKind::NotADirectory,
            "not a directory",
        )));
    }
    Ok(canonical)
}

fn display(program: &OsStr) -> String {
    program.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_bounded_by_the_maximum() {
        let runner = Runner::new()
            .timeout(Duration::from_secs(50))
            .max_timeout(Duration::from_secs(40));
        let options = RunOptions::new("/");
        assert_eq!(
            runner.timeout_for(&options).expect("default"),
            Duration::from_secs(40)
        );
        let exact = options.clone().timeout(Duration::from_secs(40));
        assert_eq!(
            runner.timeout_for(&exact).expect("at the maximum"),
            Duration::from_secs(40)
        );
        let over = options.clone().timeout(Duration::from_millis(40_001));
        assert!(matches!(
            runner.timeout_for(&over),
            Err(Error::TimeoutTooLong { .. })
        ));
        let runner = Runner::new().timeout(Duration::from_secs(5));
        assert_eq!(
            runner.timeout_for(&options).expect("default"),
            Duration::from_secs(5)
        );
    }

    #[test]
    fn defaults() {
        let runner = Runner::new();
        assert_eq!(runner.timeout, Duration::from_secs(30));
        assert_eq!(runner.max_timeout, Duration::from_secs(600));
        assert_eq!(runner.output_limit, 8192);
        assert_eq!(Runner::default().timeout, Duration::from_secs(30));
    }

    #[test]
    fn a_huge_timeout_does_not_overflow_the_clock() {
        let now = Instant::now();
        assert_eq!(deadline(now, Duration::MAX), now + FOREVER);
        assert_eq!(
            deadline(now, Duration::from_secs(1)),
            now + Duration::from_secs(1)
        );
    }

    #[test]
    fn only_a_pipe_of_the_size_asked_for_coalesces() {
        assert!(coalesces(PIPE_SIZE));
        assert!(coalesces(2 * PIPE_SIZE));
        assert!(!coalesces(PIPE_SIZE - 1));
    }

    #[test]
    fn every_setter_keeps_the_others() {
        let runner = Runner::new()
            .output_limit(5)
            .timeout(Duration::from_secs(7))
            .max_timeout(Duration::from_secs(9))
            .policy(Policy::allowlist(["ls"]))
            .env(EnvPolicy::scrubbed())
            .redactor(Redactor::new())
            .limits(Limits::new())
            .isolation(Isolation::none());
        assert_eq!(runner.output_limit, 5);
        assert_eq!(runner.timeout, Duration::from_secs(7));
        assert_eq!(runner.max_timeout, Duration::from_secs(9));
    }

    #[test]
    fn exit_statuses() {
        assert_eq!(status_of(ExitStatus::from_raw(3 << 8)), Status::Exited(3));
        assert_eq!(status_of(ExitStatus::from_raw(9)), Status::Signaled(9));
    }

    #[test]
    fn markers_of_enclosing_runs_are_passed_on() {
        let outer = Marker::new().expect("random");
        let runner =
            Runner::new().parent_env([(outer.name(), "1"), ("PATH", "/bin"), ("OTHER", "x")]);
        let inner = Marker::new().expect("random");
        let env = runner.child_env(&inner);
        let names: Vec<&OsStr> = env.iter().map(|(name, _)| name.as_os_str()).collect();
        assert_eq!(
            names,
            [
                OsStr::new("PATH"),
                OsStr::new(outer.name()),
                OsStr::new(inner.name())
            ]
        );
    }

    #[test]
    fn a_marker_passed_by_pattern_is_not_doubled() {
        let outer = Marker::new().expect("random");
        let runner = Runner::new()
            .parent_env([(outer.name(), "1")])
            .env(EnvPolicy::scrubbed().pass("HARNESS_*"));
        let env = runner.child_env(&Marker::new().expect("random"));
        assert_eq!(
            env.iter().filter(|(name, _)| name == outer.name()).count(),
            1
        );
    }
}
