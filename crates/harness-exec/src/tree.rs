//! Finding and killing every process a run started, wherever it went.
//!
//! Killing the direct child is not enough: `sh -c 'server &'` leaves the
//! server running, and a daemon escapes the process group with `setsid` or a
//! double fork. A run's processes are found three ways, on Linux's `/proc`:
//!
//! 1. its **process group**: the child is started as the leader of a new
//!    group, and everything it starts stays in it unless it moves out;
//! 2. its **marker**: the child's environment carries a variable
//!    `HARNESS_EXEC_RUN_<token>=1`, unique to the run, and every descendant
//!    inherits it unless it clears its environment (the markers of enclosing
//!    runs are passed on too, so a harness running inside a harness is still
//!    found by the outer one);
//! 3. when this process is a **child subreaper** ([`enable_subreaper`]),
//!    orphans are re-parented to it instead of to init, so an unmarked
//!    process whose ancestors have exited still shows up as our child.
//!
//! Signals go through pidfds, opened and checked again before the signal is
//! sent, so a process that exits and whose pid is reused is never hit by
//! mistake.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use rustix::event::{PollFd, PollFlags};
use rustix::process::{
    Pid, PidfdFlags, Signal, WaitOptions, child_subreaper, getpid, kill_process_group, pidfd_open,
    pidfd_send_signal, set_child_subreaper, waitpid,
};

use crate::poll::poll_until;

/// The start of the name of the environment variable that marks every
/// process of a run.
const MARKER_PREFIX: &str = "HARNESS_EXEC_RUN_";

/// How many times the killer looks again for processes started while it was
/// killing: a fork bomb is down after a few passes, each killing everything
/// that existed when it looked.
const KILL_PASSES: usize = 16;

/// How long a pass waits for the processes it killed to be gone.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// Direct children of the runs in progress in this process: the subreaper
/// sweep must leave them to the run that owns them.
static RUNNING: Mutex<Vec<Pid>> = Mutex::new(Vec::new());

/// Makes this process a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`).
///
/// Orphaned descendants of the commands it runs are then re-parented to this
/// process instead of to init, and every run kills and reaps the ones it
/// finds, even those that cleared their environment. Without it, a descendant
/// that both left the process group and cleared its environment escapes.
///
/// An orphan that cleared its environment carries no sign of its run: it is
/// taken by the first run that looks, among those that started before it.
///
/// This setting is process-wide and cannot be scoped: enable it only in a
/// program that starts child processes through [`Runner`](crate::Runner)
/// alone (the harness CLI does so at startup). Any other child of such a
/// program that is not the direct child of a run in progress would be taken
/// for an orphan, killed and reaped.
///
/// # Errors
///
/// When the kernel refuses the `prctl` call (not Linux, or a seccomp filter).
pub fn enable_subreaper() -> io::Result<()> {
    set_child_subreaper(Some(getpid())).map_err(io::Error::from)
}

/// Holds the process-wide registry of running children while a child is
/// spawned and registered, so that a concurrent sweep never sees it
/// unregistered.
pub(crate) fn spawn_registered<T>(
    spawn: impl FnOnce() -> io::Result<(Pid, T)>,
) -> io::Result<(Pid, T)> {
    let mut running = running();
    let (pid, spawned) = spawn()?;
    running.push(pid);
    Ok((pid, spawned))
}

/// Removes `pid` from the registry once it has been reaped.
pub(crate) fn unregister(pid: Pid) {
    running().retain(|running| *running != pid);
}

fn running() -> std::sync::MutexGuard<'static, Vec<Pid>> {
    // A panic while the lock was held leaves a plain list of pids, still valid.
    RUNNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The environment variable that marks the processes of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Marker {
    /// `HARNESS_EXEC_RUN_<pid>_<count>_<nanoseconds>`: unique in this process
    /// by the count, across processes by the pid, and across pid reuse by
    /// the clock.
    name: String,
}

impl Marker {
    /// A marker no other run has.
    pub(crate) fn new() -> Marker {
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let count = COUNT.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        Marker {
            name: format!(
                "{MARKER_PREFIX}{}_{count}_{nanos}",
                getpid().as_raw_nonzero()
            ),
        }
    }

    /// The variable's name; its value is `1`.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The `NAME=value` entry as it appears in `/proc/<pid>/environ`.
    fn entry(&self) -> Vec<u8> {
        format!("{}=1", self.name).into_bytes()
    }
}

/// True if and only if `name` is the marker variable of a run.
pub(crate) fn is_marker(name: &OsStr) -> bool {
    name.as_encoded_bytes()
        .starts_with(MARKER_PREFIX.as_bytes())
}

/// The processes of one run.
#[derive(Debug)]
pub(crate) struct Tree {
    /// The process group: the direct child's pid.
    group: Pid,
    /// The `NAME=1` entry that marks the run's environments.
    marker: Vec<u8>,
    /// When the direct child started, in clock ticks since boot: no process
    /// started before it belongs to the run, whatever else it looks like.
    started: u64,
}

/// What a process is to the run.
#[derive(Debug, PartialEq, Eq)]
enum Kinship {
    /// Alive and the run's: to be killed.
    Member,
    /// A dead orphan re-parented to this process: to be reaped.
    AdoptedZombie,
    /// Nothing to do with the run.
    Stranger,
}

impl Tree {
    /// The processes of the run whose direct child is `child` (started, not
    /// yet reaped), marked with `marker`.
    pub(crate) fn new(child: Pid, marker: &Marker) -> Tree {
        // The child cannot have been reaped yet, so its stat is readable;
        // should it not be, no process is excluded for its age.
        let started = Stat::read(child).map_or(0, |stat| stat.started);
        Tree {
            group: child,
            marker: marker.entry(),
            started,
        }
    }

    /// Sends `signal` to the run's process group only, as a terminal does
    /// with Ctrl-C.
    pub(crate) fn signal_group(&self, signal: Signal) {
        // ESRCH: the group is empty, which is fine.
        let _ = kill_process_group(self.group, signal);
    }

    /// Sends `signal` to every live process of the run, without waiting.
    pub(crate) fn signal(&self, signal: Signal) {
        // The group in one system call first: it also reaches members that
        // fork while the scan below is under way.
        self.signal_group(signal);
        self.find_and_signal(signal);
    }

    /// Kills every process of the run and waits until they are gone.
    ///
    /// After it returns, no process of the run is alive, unless the run forks
    /// faster than 16 passes can kill, or a process is stuck in the kernel for
    /// longer than the 2 s each pass waits.
    pub(crate) fn kill(&self) {
        for _ in 0..KILL_PASSES {
            self.signal_group(Signal::KILL);
            let victims = self.find_and_signal(Signal::KILL);
            if victims.is_empty() {
                return;
            }
            // Adopted victims become zombies: the next pass reaps them.
            wait_until_gone(&victims, Instant::now() + KILL_WAIT);
        }
    }

    /// Signals every live process of the run, reaps adopted zombies, and
    /// returns pidfds of the processes signalled.
    fn find_and_signal(&self, signal: Signal) -> Vec<OwnedFd> {
        // The registry stays locked for the whole pass: a child spawned now
        // would be unregistered, and before its `exec` it does not even
        // carry its run's marker yet.
        let running = running();
        let context = Context {
            me: getpid(),
            subreaper: is_subreaper(),
            running: &running,
        };
        let mut victims = Vec::new();
        for pid in all_pids() {
            match self.kinship(pid, &context) {
                Kinship::Stranger => {}
                Kinship::AdoptedZombie => {
                    let _ = waitpid(Some(pid), WaitOptions::NOHANG);
                }
                Kinship::Member => {
                    // Between reading /proc and opening the pidfd the process
                    // may have exited and its pid been reused: look again
                    // through the pidfd's process before signalling.
                    let Ok(pidfd) = pidfd_open(pid, PidfdFlags::empty()) else {
                        continue;
                    };
                    if self.kinship(pid, &context) == Kinship::Member
                        && pidfd_send_signal(&pidfd, signal).is_ok()
                    {
                        victims.push(pidfd);
                    }
                }
            }
        }
        victims
    }

    /// What `pid` is to the run.
    fn kinship(&self, pid: Pid, context: &Context<'_>) -> Kinship {
        let Some(stat) = Stat::read(pid) else {
            return Kinship::Stranger;
        };
        if stat.started < self.started {
            return Kinship::Stranger;
        }
        let adopted =
            context.subreaper && stat.parent == Some(context.me) && !context.running.contains(&pid);
        if stat.dead {
            return if adopted {
                Kinship::AdoptedZombie
            } else {
                Kinship::Stranger
            };
        }
        if stat.group == Some(self.group) {
            return Kinship::Member;
        }
        match self.marking(pid) {
            Marking::Ours => Kinship::Member,
            Marking::AnotherRun => Kinship::Stranger,
            Marking::None if adopted => Kinship::Member,
            Marking::None => Kinship::Stranger,
        }
    }

    /// Whose marker the environment of `pid` carries.
    fn marking(&self, pid: Pid) -> Marking {
        let Ok(environ) = fs::read(format!("/proc/{}/environ", pid.as_raw_nonzero())) else {
            return Marking::None;
        };
        let mut marking = Marking::None;
        for entry in environ.split(|&byte| byte == 0) {
            if entry == self.marker.as_slice() {
                return Marking::Ours;
            }
            if entry.starts_with(MARKER_PREFIX.as_bytes()) {
                marking = Marking::AnotherRun;
            }
        }
        marking
    }
}

/// Whose run a process's environment marks.
enum Marking {
    /// This run's marker.
    Ours,
    /// Another run's marker only.
    AnotherRun,
    /// No marker, or an environment that cannot be read.
    None,
}

/// Facts about this process, read once per pass.
struct Context<'a> {
    /// This process.
    me: Pid,
    /// Whether orphans are re-parented to this process.
    subreaper: bool,
    /// The direct children of runs in progress.
    running: &'a [Pid],
}

/// True if and only if this process is a child subreaper.
fn is_subreaper() -> bool {
    child_subreaper().is_ok_and(|subreaper| subreaper.is_some())
}

/// The fields of `/proc/<pid>/stat` the killer needs.
#[derive(Debug, PartialEq, Eq)]
struct Stat {
    /// A zombie (`Z`) or dead (`X`) process.
    dead: bool,
    /// The parent's pid (`None` for a parent outside this pid namespace).
    parent: Option<Pid>,
    /// The process group's id.
    group: Option<Pid>,
    /// Clock ticks from boot to the process's start.
    started: u64,
}

impl Stat {
    fn read(pid: Pid) -> Option<Stat> {
        let text = fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero())).ok()?;
        Stat::parse(&text)
    }

    /// Parses `pid (comm) state ppid pgrp … starttime …` (`starttime` is the
    /// 22nd field); `comm` may hold spaces and parentheses, so the fields
    /// start after the last `)`.
    fn parse(text: &str) -> Option<Stat> {
        let (_, fields) = text.rsplit_once(')')?;
        let fields: Vec<&str> = fields.split_whitespace().collect();
        let pid = |at: usize| pid_from(fields.get(at)?);
        Some(Stat {
            dead: matches!(*fields.first()?, "Z" | "X"),
            parent: pid(1),
            group: pid(2),
            started: fields.get(19)?.parse().ok()?,
        })
    }
}

/// The pids of every process, in `/proc` order.
fn all_pids() -> impl Iterator<Item = Pid> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|entry| pid_from(entry.ok()?.file_name().to_str()?))
        .filter(|&pid| pid != getpid())
}

/// The pid written `text`, if it is one (a positive number).
fn pid_from(text: &str) -> Option<Pid> {
    // Parsed unsigned: a negative number is no pid, and rustix rejects it.
    let raw: u32 = text.parse().ok()?;
    Pid::from_raw(i32::try_from(raw).ok()?)
}

/// Waits until every process of `pidfds` has exited, or `deadline`.
fn wait_until_gone(pidfds: &[OwnedFd], deadline: Instant) {
    for pidfd in pidfds {
        // Readable once the process has exited; the deadline is shared.
        let _ = poll_until(&mut [PollFd::new(pidfd, PollFlags::IN)], deadline);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! stats {
        ($($name:ident: $text:expr => $expected:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(Stat::parse($text), $expected);
            }
        )*};
    }

    /// A stat line's fields after `comm`, with `starttime` as the 22nd field.
    macro_rules! stat_line {
        ($pid:literal, $comm:literal, $state:literal, $ppid:literal, $pgrp:literal, $start:literal) => {
            concat!(
                $pid,
                " (",
                $comm,
                ") ",
                $state,
                " ",
                $ppid,
                " ",
                $pgrp,
                " 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ",
                $start,
                " 1024 99"
            )
        };
    }

    fn stat(dead: bool, parent: i32, group: i32, started: u64) -> Option<Stat> {
        Some(Stat {
            dead,
            parent: Pid::from_raw(parent),
            group: Pid::from_raw(group),
            started,
        })
    }

    stats! {
        stat_sleeping: stat_line!(42, "sleep", "S", 7, 42, 1234) => stat(false, 7, 42, 1234);
        stat_running: stat_line!(42, "sleep", "R", 7, 42, 5) => stat(false, 7, 42, 5);
        stat_zombie: stat_line!(42, "sh", "Z", 1, 40, 6) => stat(true, 1, 40, 6);
        stat_dead: stat_line!(42, "sh", "X", 1, 40, 7) => stat(true, 1, 40, 7);
        stat_comm_with_spaces_and_parens: stat_line!(42, "a) b (c)", "S", 7, 9, 8) => stat(false, 7, 9, 8);
        stat_init_parent: stat_line!(1, "init", "S", 0, 1, 2) => stat(false, 0, 1, 2);
        stat_truncated: "42 (sleep) S 7 42 7" => None;
        stat_bad_start: stat_line!(42, "sleep", "S", 7, 42, "x") => None;
        stat_garbage: "garbage" => None;
        stat_no_fields: "42 (x)" => None;
    }

    #[test]
    fn pids_are_positive_numbers() {
        assert_eq!(pid_from("42"), Pid::from_raw(42));
        assert_eq!(pid_from("0"), None);
        assert_eq!(pid_from("-1"), None);
        assert_eq!(pid_from("4294967295"), None);
        assert_eq!(pid_from("self"), None);
    }

    #[test]
    fn this_process_has_a_start_time() {
        let ours = Stat::read(getpid()).expect("our own stat");
        assert!(!ours.dead);
        assert!(ours.started > 0);
        assert_eq!(ours.parent, rustix::process::getppid());
    }

    #[test]
    fn markers_are_unique_and_recognisable() {
        let (a, b) = (Marker::new(), Marker::new());
        assert_ne!(a, b);
        assert!(is_marker(OsStr::new(a.name())));
        assert!(!is_marker(OsStr::new("HARNESS_EXEC_RUN")));
        assert!(!is_marker(OsStr::new("PATH")));
        assert_eq!(a.entry(), format!("{}=1", a.name()).into_bytes());
    }

    #[test]
    fn this_process_is_never_listed() {
        let pids: Vec<Pid> = all_pids().collect();
        assert!(!pids.contains(&getpid()));
        assert!(pids.contains(&Pid::from_raw(1).expect("1 is a pid")));
    }

    #[test]
    fn registry_adds_and_removes() {
        let pid = Pid::from_raw(999_999_999).expect("nonzero");
        let (registered, ()) = spawn_registered(|| Ok((pid, ()))).expect("spawn");
        assert_eq!(registered, pid);
        assert!(running().contains(&pid));
        unregister(pid);
        assert!(!running().contains(&pid));
        let failed = spawn_registered::<()>(|| Err(io::Error::other("no")));
        assert!(failed.is_err());
    }
}
