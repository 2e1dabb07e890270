//! Finding and killing every process a run started, wherever it went.
//!
//! Every signal the crate sends to a command's processes is sent from here; the others
//! only call in: the runner kills what is left at the end of every run (`Tree::kill`, in
//! `runner.rs`'s `Running::drop`), the watcher sends `SIGTERM` at the deadline
//! (`Tree::signal`, in `supervise.rs`), the [`Interrupter`](crate::Interrupter) sends
//! `SIGINT` or kills (`interrupt.rs`), and the reaper kills what a program killed with
//! `SIGKILL` left ([`kill_descendants`], in `reaper.rs`).
//!
//! Killing the direct child is not enough: `sh -c 'server &'` leaves the
//! server running, and a daemon escapes the process group with `setsid` or a
//! double fork. On Linux's `/proc`, a process is the run's when it is:
//!
//! 1. in the run's **process group**: the child is started as the leader of
//!    a new group, and everything it starts stays in it unless it moves out;
//! 2. **orphaned to this process**, when this process is a child subreaper
//!    ([`enable_subreaper`]): orphans are re-parented to it instead of to
//!    init, and every one of them is killed, unless it is the direct child of
//!    a run in progress (the registry of running children, which pins each
//!    pid by leaving the child unreaped while it is listed). Nothing a process
//!    can set about itself (its environment, session, group or name) protects
//!    an orphan. Orphans are read only from this process's own lists of
//!    children (`/proc/self/task/*/children`), never picked out of all
//!    processes, so no mistake in telling them apart can reach a process that
//!    is not a child of this one (a kernel without `CONFIG_PROC_CHILDREN`
//!    lists none, and orphans are then found only as in 1, 3 and 4);
//! 3. **marked** with the run's marker: the child's environment carries a
//!    variable `HARNESS_EXEC_RUN_<token>=1` whose token is 128 bits from the
//!    kernel's random source, and every descendant inherits it unless it
//!    clears its environment. The marker only ever adds a process to its run
//!    (a marker is no proof of belonging to another run), and finds escapees
//!    re-parented to init when this process is not a subreaper; the markers
//!    of enclosing runs are passed on, so a harness running inside a harness
//!    is still found by the outer one;
//! 4. a **descendant** of any of the above, found through the parent links of
//!    the same scan, so a whole subtree goes in one pass however deep it is.
//!
//! Signals go through pidfds, opened and checked again before the signal is
//! sent, so a process that exits and whose pid is reused is never hit by
//! mistake.
//!
//! What the tree cannot reach: a process started on the run's behalf by a
//! program outside it (`systemd-run`, `at`, a `tmux` or `docker` server that
//! was already running), and, when this process is not a subreaper, an
//! orphan that left the group and cleared its environment.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs;
use std::io::{self, Read as _};
use std::os::fd::OwnedFd;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use rustix::process::{
    Pid, PidfdFlags, Signal, WaitId, WaitIdOptions, WaitOptions, child_subreaper, getpid,
    kill_process_group, pidfd_open, pidfd_send_signal, set_child_subreaper, waitid, waitpid,
};
use rustix::rand::{GetRandomFlags, getrandom};

use crate::poll::poll_until;

/// The start of the name of the environment variable that marks every
/// process of a run.
const MARKER_PREFIX: &str = "HARNESS_EXEC_RUN_";

/// Random bytes in a marker's token: 128 bits cannot be guessed.
const TOKEN_BYTES: usize = 16;

/// How many times the killer looks again for processes started while it was
/// killing: a fork bomb is down after a few passes, each killing everything
/// that existed when it looked.
const KILL_PASSES: usize = 16;

/// How long a pass waits for the processes it killed to be gone.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// `waitid` options that wait for an exit and leave the child to be reaped.
const EXITED_NOT_REAPED: WaitIdOptions = WaitIdOptions::EXITED.union(WaitIdOptions::NOWAIT);

/// Direct children of the runs in progress in this process: the subreaper
/// sweep must leave them to the run that owns them. A pid stays listed until
/// its child is reaped, so it cannot be reused while listed.
static RUNNING: Mutex<Vec<Pid>> = Mutex::new(Vec::new());

/// Makes this process a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`).
///
/// Orphaned descendants of the commands it runs are then re-parented to this
/// process instead of to init, and every run kills and reaps every orphan it
/// finds, whatever its environment says: without the subreaper, a descendant
/// that both left the process group and cleared its environment escapes.
///
/// An orphan belongs to no run that can be proven (its parent is gone), so
/// the first run that sweeps kills it: a daemon started by one command dies
/// when any command run at the same time by the same process ends.
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

/// Waits for the registered child `pid` to exit, then reaps it with `reap`
/// and removes it from the registry in one step: a sweep never sees it
/// reaped and still listed (its pid free for reuse, the new process
/// protected), nor unlisted and unreaped (a zombie it would reap itself).
pub(crate) fn reap_registered<T>(pid: Pid, reap: impl FnOnce() -> T) -> T {
    // Waiting without reaping keeps the pid taken, outside the lock.
    while let Err(Errno::INTR) = waitid(WaitId::Pid(pid), EXITED_NOT_REAPED) {}
    let mut running = running();
    let reaped = reap();
    running.retain(|running| *running != pid);
    reaped
}

fn running() -> std::sync::MutexGuard<'static, Vec<Pid>> {
    lock(&RUNNING)
}

/// Locks `list`: a panic while it was held leaves a plain list, still valid.
fn lock<T>(list: &Mutex<Vec<T>>) -> std::sync::MutexGuard<'_, Vec<T>> {
    list.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The environment variable that marks the processes of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Marker {
    /// `HARNESS_EXEC_RUN_<32 hex digits>`: a token from the kernel's random
    /// source, so that no process can name the marker of a run it is not
    /// part of, nor predict the next one.
    name: String,
}

impl Marker {
    /// A marker no other run has.
    ///
    /// # Errors
    ///
    /// When the kernel's random source fails (`getrandom`).
    pub(crate) fn new() -> io::Result<Marker> {
        let mut token = [0u8; TOKEN_BYTES];
        let mut filled = 0;
        while filled < TOKEN_BYTES {
            match getrandom(&mut token[filled..], GetRandomFlags::empty()) {
                Ok(read) => filled += read,
                Err(Errno::INTR) => {}
                Err(errno) => return Err(errno.into()),
            }
        }
        let mut name = String::from(MARKER_PREFIX);
        for byte in token {
            let _ = write!(name, "{byte:02x}");
        }
        Ok(Marker { name })
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
    /// started before it is in the run's group or carries its marker.
    started: u64,
    /// The processes [`Tree::signal`] found (pid and start): once the run's,
    /// a process stays the run's even after it has left the tree (its marked
    /// parent died of the signal, re-parenting it to init), so
    /// [`Tree::kill`] kills these too. Pids, not pidfds: a fork storm at
    /// the deadline must not use up this process's descriptors.
    signalled: Mutex<Vec<(Pid, u64)>>,
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
            signalled: Mutex::new(Vec::new()),
        }
    }

    /// Sends `signal` to the run's process group only, as a terminal does
    /// with Ctrl-C.
    pub(crate) fn signal_group(&self, signal: Signal) {
        // ESRCH: the group is empty, which is fine.
        let _ = kill_process_group(self.group, signal);
    }

    /// Sends `SIGINT` to every live process of the run, without waiting.
    ///
    /// Not to the process group alone, as a terminal's Ctrl-C: under bwrap the
    /// command runs in a session of its own (`--new-session`, which keeps it
    /// from the terminal), outside the group, and would never see it.
    pub(crate) fn interrupt(&self) {
        self.signal(Signal::INT);
    }

    /// Sends `signal` to every live process of the run, without waiting.
    pub(crate) fn signal(&self, signal: Signal) {
        // The group in one system call first: it also reaches members that
        // fork while the scan below is under way.
        self.signal_group(signal);
        let found = self.find_and_signal(signal);
        lock(&self.signalled).extend(found.into_iter().map(|(_, seen)| seen));
    }

    /// Kills every process of the run and waits until they are gone.
    ///
    /// After it returns, no process of the run is alive, unless the run forks
    /// faster than 16 passes can kill, or a process is stuck in the kernel for
    /// longer than the 2 s each pass waits.
    pub(crate) fn kill(&self) {
        // What was signalled before may no longer be in the tree the passes
        // find: it is stopped, killed and waited for with the first pass.
        let mut earlier: Vec<OwnedFd> = std::mem::take(&mut *lock(&self.signalled))
            .into_iter()
            .filter_map(|(pid, started)| open_same(pid, Some(started)))
            .collect();
        kill_in_passes(|| {
            self.signal_group(Signal::STOP);
            for pidfd in &earlier {
                // ESRCH: it has exited since, which is what was wanted.
                let _ = pidfd_send_signal(pidfd, Signal::STOP);
            }
            let mut victims: Vec<OwnedFd> = self
                .find_and_signal(Signal::STOP)
                .into_iter()
                .map(|(pidfd, _)| pidfd)
                .collect();
            victims.append(&mut earlier);
            self.signal_group(Signal::KILL);
            victims
        });
    }

    /// Signals every live process of the run, reaps adopted zombies, and
    /// returns a pidfd of each process signalled, with its pid and start.
    fn find_and_signal(&self, signal: Signal) -> Vec<(OwnedFd, (Pid, u64))> {
        // The registry stays locked for the whole pass: a child spawned now
        // would be unregistered, and before its `exec` it does not even
        // carry its run's marker yet.
        let running = running();
        let orphans = if is_subreaper() {
            live_orphans(&running)
        } else {
            Vec::new()
        };
        let processes: HashMap<Pid, Stat> = all_pids()
            .filter_map(|pid| Some((pid, Stat::read(pid)?)))
            .collect();
        let mut victims = Vec::new();
        for pid in self.members(&processes, &orphans) {
            // One that is exiting now is still a victim: the next pass
            // must look again, to reap it. A member the scan did not see is
            // an orphan, an unreaped child of this process: its pid cannot
            // have been reused.
            let started = processes.get(&pid).map(|seen| seen.started);
            if let Some(pidfd) = open_same(pid, started) {
                // ESRCH: it has just exited, which is what was wanted.
                let _ = pidfd_send_signal(&pidfd, signal);
                victims.push((pidfd, (pid, started.unwrap_or(0))));
            }
        }
        victims
    }

    /// The live processes of the run: the live `orphans`, and those among
    /// `processes` that are the run's by group or marker, each with all its
    /// descendants.
    fn members(&self, processes: &HashMap<Pid, Stat>, orphans: &[Pid]) -> HashSet<Pid> {
        // An orphan is ours, whatever it claims: its environment, session
        // and group are its own to forge.
        let mut members: HashSet<Pid> = orphans.iter().copied().collect();
        for (&pid, stat) in processes {
            if stat.exited() {
                continue;
            }
            // Started since the run's child, and in its group or marked. (Not
            // a function of its own: a mutant making that return `true`
            // would kill every process on the machine.)
            if stat.started >= self.started && (stat.group == Some(self.group) || self.marks(pid)) {
                members.insert(pid);
            }
        }
        // Everything a member started is the run's too, however far down.
        add_descendants(&mut members, processes);
        members
    }

    /// True if and only if the environment of `pid` carries the run's marker.
    fn marks(&self, pid: Pid) -> bool {
        fs::read(format!("/proc/{}/environ", pid.as_raw_nonzero())).is_ok_and(|environ| {
            environ
                .split(|&byte| byte == 0)
                .any(|entry| entry == self.marker.as_slice())
        })
    }
}

/// Kills every live descendant of this process, however deep, and waits until
/// they are gone: what is left to do once the process a reaper watched has
/// ended ([`crate::run_under_reaper`]), its orphans re-parented here. Those
/// left as zombies are reaped by init once the reaper has ended too.
///
/// Each pass stops every descendant it finds, then kills them, as
/// [`Tree::kill`] does; it ends at a pass that finds none, or after 16.
pub(crate) fn kill_descendants() {
    kill_in_passes(|| {
        let processes: HashMap<Pid, Stat> = all_pids()
            .filter_map(|pid| Some((pid, Stat::read(pid)?)))
            .collect();
        let mut descendants = HashSet::from([getpid()]);
        add_descendants(&mut descendants, &processes);
        descendants.remove(&getpid());
        let victims: Vec<OwnedFd> = descendants
            .into_iter()
            .filter_map(|pid| open_same(pid, processes.get(&pid).map(|seen| seen.started)))
            .collect();
        for victim in &victims {
            // ESRCH: it has exited meanwhile.
            let _ = pidfd_send_signal(victim, Signal::STOP);
        }
        victims
    });
}

/// The killing both [`Tree::kill`] and [`kill_descendants`] do: at most 16 passes, each
/// one `stop` call that stops every process it finds and returns a pidfd of each, then
/// `SIGKILL` to all of them and a wait until they are gone; it ends at a pass that finds
/// none. Stopped first, all of them, then killed: a process whose child is killed before
/// it cannot react (a shell would run its next command in the moment between the two
/// kills), and each pass finds what the one before did not (a fork storm is down after a
/// few).
fn kill_in_passes(mut stop: impl FnMut() -> Vec<OwnedFd>) {
    for _ in 0..KILL_PASSES {
        let victims = stop();
        if victims.is_empty() {
            return;
        }
        // Adopted victims become zombies: the next pass reaps them.
        kill_and_wait(&victims);
    }
}

/// Kills every process of `victims`, then waits until they are gone, at most
/// 2 s.
fn kill_and_wait(victims: &[OwnedFd]) {
    for victim in victims {
        // ESRCH: it has exited meanwhile.
        let _ = pidfd_send_signal(victim, Signal::KILL);
    }
    wait_until_gone(victims, Instant::now() + KILL_WAIT);
}

/// Adds to `set` every live process among `processes` that descends from one
/// in it, however far down.
fn add_descendants(set: &mut HashSet<Pid>, processes: &HashMap<Pid, Stat>) {
    let mut children: HashMap<Pid, Vec<Pid>> = HashMap::new();
    for (&pid, stat) in processes {
        if let (false, Some(parent)) = (stat.exited(), stat.parent) {
            children.entry(parent).or_default().push(pid);
        }
    }
    let mut pending: Vec<Pid> = set.iter().copied().collect();
    while let Some(parent) = pending.pop() {
        for &child in children.get(&parent).into_iter().flatten() {
            if set.insert(child) {
                pending.push(child);
            }
        }
    }
}

/// A pidfd of process `pid`, if it is still the process that started at
/// `started` (any process when `None`): between reading `/proc` and opening
/// the pidfd the process may have exited and its pid been reused.
fn open_same(pid: Pid, started: Option<u64>) -> Option<OwnedFd> {
    let pidfd = pidfd_open(pid, PidfdFlags::empty()).ok()?;
    let same = started.is_none_or(|seen| Stat::read(pid).is_some_and(|now| now.started == seen));
    same.then_some(pidfd)
}

/// The children of this process that are alive and are not the direct child
/// of a run in progress (`running`): orphans re-parented to this subreaper.
/// Those that have exited are reaped on the way.
fn live_orphans(running: &[Pid]) -> Vec<Pid> {
    own_children()
        .into_iter()
        .filter(|pid| !running.contains(pid))
        // A child that has exited is reaped here (its pid was pinned until
        // now); one still running, or a leader whose other threads run, is
        // not, and stays an orphan to kill.
        .filter(|&pid| matches!(waitpid(Some(pid), WaitOptions::NOHANG), Ok(None)))
        .collect()
}

/// The children of every thread of this process, as the kernel lists them;
/// none if `/proc` is not this process's ([`proc_is_ours`]).
fn own_children() -> Vec<Pid> {
    let mut children = Vec::new();
    if !proc_is_ours() {
        return children;
    }
    for task in fs::read_dir("/proc/self/task").into_iter().flatten() {
        let Ok(task) = task else { continue };
        // One read of a large buffer: the kernel lists a page of children
        // in one go, and each further read starts over from a position that
        // children exiting meanwhile may shift. One missed so is found by
        // the killer's next pass, which comes because victims were found.
        let mut text = Vec::with_capacity(64 * 1024);
        let read = fs::File::open(task.path().join("children"))
            .and_then(|mut file| file.read_to_end(&mut text));
        if read.is_err() {
            continue;
        }
        children.extend(
            String::from_utf8_lossy(&text)
                .split_whitespace()
                .filter_map(pid_from),
        );
    }
    children
}

/// True if and only if this process is a child subreaper.
fn is_subreaper() -> bool {
    child_subreaper().is_ok_and(|subreaper| subreaper.is_some())
}

/// The fields of `/proc/<pid>/stat` the killer needs.
#[derive(Debug, PartialEq, Eq)]
struct Stat {
    /// A zombie (`Z`) or dead (`X`) thread-group leader.
    dead: bool,
    /// The process's threads, an exited leader included.
    threads: u64,
    /// The parent's pid (`None` for a parent outside this pid namespace).
    parent: Option<Pid>,
    /// The process group's id.
    group: Option<Pid>,
    /// Clock ticks from boot to the process's start.
    started: u64,
}

impl Stat {
    /// True if and only if the whole process has exited. A leader that
    /// exited alone (`pthread_exit` in `main`) shows as a zombie while its
    /// other threads run on: that process is alive and can be killed.
    fn exited(&self) -> bool {
        self.dead && self.threads <= 1
    }

    fn read(pid: Pid) -> Option<Stat> {
        let text = fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero())).ok()?;
        Stat::parse(&text)
    }

    /// Parses `pid (comm) state ppid pgrp … num_threads … starttime …`
    /// (`num_threads` is the 20th field, `starttime` the 22nd); `comm` may
    /// hold spaces and parentheses, so the fields start after the last `)`.
    fn parse(text: &str) -> Option<Stat> {
        let (_, fields) = text.rsplit_once(')')?;
        let fields: Vec<&str> = fields.split_whitespace().collect();
        let pid = |at: usize| pid_from(fields.get(at)?);
        Some(Stat {
            dead: matches!(*fields.first()?, "Z" | "X"),
            parent: pid(1),
            group: pid(2),
            threads: fields.get(17)?.parse().ok()?,
            started: fields.get(19)?.parse().ok()?,
        })
    }
}

/// The pids of every process, in `/proc` order; none if `/proc` is not this
/// process's ([`proc_is_ours`]).
fn all_pids() -> impl Iterator<Item = Pid> {
    let listing = if proc_is_ours() {
        fs::read_dir("/proc").ok()
    } else {
        None
    };
    listing
        .into_iter()
        .flatten()
        .filter_map(|entry| pid_from(entry.ok()?.file_name().to_str()?))
        .filter(|&pid| pid != getpid())
}

/// True if and only if `/proc` numbers processes as this process's PID
/// namespace does. In a namespace of its own without a `/proc` of its own
/// (`unshare --pid` without `--mount-proc`), `/proc` lists another namespace's
/// pids, and a signal sent to one of them would reach whatever process has
/// that number here: every process the host's init adopted, say, taken for
/// the descendants of a reaper that is pid 1 here. Then nothing is found
/// through `/proc`, and only the process group is signalled.
fn proc_is_ours() -> bool {
    fs::read_link("/proc/self")
        .ok()
        .and_then(|link| pid_from(link.to_str()?))
        == Some(getpid())
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

    /// A stat line with `num_threads` as the 20th field and `starttime` as
    /// the 22nd.
    macro_rules! stat_line {
        ($pid:literal, $comm:literal, $state:literal, $ppid:literal, $pgrp:literal, $threads:literal, $start:literal) => {
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
                " 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 ",
                $threads,
                " 0 ",
                $start,
                " 1024 99"
            )
        };
    }

    fn stat(dead: bool, parent: i32, group: i32, threads: u64, started: u64) -> Option<Stat> {
        Some(Stat {
            dead,
            threads,
            parent: Pid::from_raw(parent),
            group: Pid::from_raw(group),
            started,
        })
    }

    stats! {
        stat_sleeping: stat_line!(42, "sleep", "S", 7, 42, 1, 1234) => stat(false, 7, 42, 1, 1234);
        stat_running: stat_line!(42, "sleep", "R", 7, 42, 3, 5) => stat(false, 7, 42, 3, 5);
        stat_zombie: stat_line!(42, "sh", "Z", 1, 40, 1, 6) => stat(true, 1, 40, 1, 6);
        stat_dead: stat_line!(42, "sh", "X", 1, 40, 1, 7) => stat(true, 1, 40, 1, 7);
        stat_zombie_leader_with_threads: stat_line!(42, "py", "Z", 1, 40, 2, 7) => stat(true, 1, 40, 2, 7);
        stat_comm_with_spaces_and_parens: stat_line!(42, "a) b (c)", "S", 7, 9, 1, 8) => stat(false, 7, 9, 1, 8);
        stat_init_parent: stat_line!(1, "init", "S", 0, 1, 1, 2) => stat(false, 0, 1, 1, 2);
        stat_truncated: "42 (sleep) S 7 42 7" => None;
        stat_bad_start: stat_line!(42, "sleep", "S", 7, 42, 1, "x") => None;
        stat_bad_threads: stat_line!(42, "sleep", "S", 7, 42, "x", 9) => None;
        stat_garbage: "garbage" => None;
        stat_no_fields: "42 (x)" => None;
    }

    #[test]
    fn only_a_zombie_without_live_threads_has_exited() {
        let exited = |dead, threads| stat(dead, 1, 1, threads, 1).expect("a stat").exited();
        assert!(exited(true, 1));
        assert!(exited(true, 0));
        assert!(!exited(true, 2));
        assert!(!exited(false, 1));
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
        assert!(ours.threads >= 1);
        assert_eq!(ours.parent, rustix::process::getppid());
    }

    #[test]
    fn markers_are_unique_random_and_recognisable() {
        let (a, b) = (
            Marker::new().expect("random"),
            Marker::new().expect("random"),
        );
        assert_ne!(a, b);
        assert!(is_marker(OsStr::new(a.name())));
        assert!(!is_marker(OsStr::new("HARNESS_EXEC_RUN")));
        assert!(!is_marker(OsStr::new("PATH")));
        assert_eq!(a.entry(), format!("{}=1", a.name()).into_bytes());
        // 128 bits in hex, nothing derived from the pid or the clock.
        let token = a.name().strip_prefix(MARKER_PREFIX).expect("prefixed");
        assert_eq!(token.len(), 2 * TOKEN_BYTES);
        assert!(token.bytes().all(|byte| byte.is_ascii_hexdigit()));
        // Tokens of many markers share no fixed part: they are random.
        let tokens: Vec<String> = (0..64)
            .map(|_| Marker::new().expect("random").name()[MARKER_PREFIX.len()..].to_owned())
            .collect();
        for at in 0..2 * TOKEN_BYTES {
            let first = tokens[0].as_bytes()[at];
            assert!(
                tokens.iter().any(|token| token.as_bytes()[at] != first),
                "digit {at} is the same in 64 tokens"
            );
        }
    }

    #[test]
    fn this_process_is_never_listed() {
        let pids: Vec<Pid> = all_pids().collect();
        assert!(!pids.contains(&getpid()));
        assert!(pids.contains(&Pid::from_raw(1).expect("1 is a pid")));
    }

    #[test]
    fn registry_adds_and_removes() {
        // A real child, so that waiting for it and reaping it are real too.
        let mut child = std::process::Command::new("sleep")
            .arg("0.2")
            .spawn()
            .expect("spawn");
        let pid = Pid::from_raw(child.id() as i32).expect("nonzero");
        let (registered, ()) = spawn_registered(|| Ok((pid, ()))).expect("spawn");
        assert_eq!(registered, pid);
        assert!(running().contains(&pid));
        let status = reap_registered(pid, || {
            // Waited for without being reaped: the pid is still taken.
            let stat = Stat::read(pid).expect("a zombie is still listed");
            assert!(stat.exited());
            child.wait()
        });
        assert!(status.expect("reaped").success());
        assert!(!running().contains(&pid));
        let failed = spawn_registered::<()>(|| Err(io::Error::other("no")));
        assert!(failed.is_err());
    }

    /// Set for the test run inside the namespace.
    const IN_NAMESPACE: &str = "HARNESS_EXEC_TEST_IN_PID_NAMESPACE";

    /// `/proc` is used only when it is this namespace's. Here it is, and it lists
    /// processes. Run again by [`nothing_is_found_through_the_proc_of_another_pid_namespace`]
    /// as pid 1 of a new PID namespace that kept the host's `/proc`, it finds nothing
    /// through it.
    #[test]
    fn proc_is_used_only_when_it_is_this_namespace_s() {
        if std::env::var_os(IN_NAMESPACE).is_none() {
            assert!(proc_is_ours(), "this test's own /proc is its namespace's");
            assert!(all_pids().count() > 0);
            return;
        }
        assert_eq!(
            getpid().as_raw_nonzero().get(),
            1,
            "pid 1 of a new namespace"
        );
        assert!(!proc_is_ours());
        assert_eq!(all_pids().count(), 0);
        assert!(own_children().is_empty());
    }

    #[test]
    fn nothing_is_found_through_the_proc_of_another_pid_namespace() {
        let output = std::process::Command::new("unshare")
            .args(["--pid", "--fork"])
            .arg(std::env::current_exe().expect("test binary"))
            .env(IN_NAMESPACE, "1")
            .args([
                "--exact",
                "tree::tests::proc_is_used_only_when_it_is_this_namespace_s",
            ])
            .output()
            .expect("unshare runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("unshare failed") && std::env::var_os("HARNESS_CI_ALL_TIERS").is_none() {
            // A PID namespace needs privileges this machine does not give.
            return;
        }
        assert!(
            stdout.contains("1 passed"),
            "in the namespace:\n{stdout}\n{stderr}"
        );
    }
}
