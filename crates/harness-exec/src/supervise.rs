//! Watching one running command from one thread: its output, its exit, its
//! deadline and interrupts, all through a single `poll`.
//!
//! Waiting for the output to end is not waiting for the command: a
//! background descendant (`sh -c 'server & echo started'`) keeps the pipe
//! open long after the command exited. The watcher follows the command's exit
//! through its pidfd instead, and gives the pipe only a short drain after it.

use std::io::{self, PipeReader, Read};
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use rustix::process::Signal;

use crate::capture::Capture;
use crate::poll::poll_until;
use crate::tree::Tree;

/// How long a command has between `SIGTERM` and `SIGKILL`, and between an
/// interrupt and `SIGTERM`.
pub(crate) const GRACE: Duration = Duration::from_secs(1);

/// How long the output is still read after the command exited, for what its
/// descendants were still writing.
pub(crate) const DRAIN: Duration = Duration::from_millis(250);

/// Bytes read from the pipe at once: 256 KiB.
const READ_CHUNK: usize = 262_144;

/// A read shorter than this (64 KiB) emptied the pipe: the writer is slower than the
/// watcher, and waking up for each of its writes would cost more than it.
const SHORT_READ: usize = 65_536;

/// How long the watcher lets a large pipe fill after a short read, while
/// still watching for the exit and interrupts. At 1 GB/s the writer fills
/// half a 1 MiB pipe meanwhile; a line of output waits at most this long.
const COALESCE: Duration = Duration::from_micros(200);

/// Why watching ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The command exited on its own.
    Exited,
    /// The deadline passed; the command was sent `SIGTERM`.
    TimedOut,
    /// An interrupt arrived while the command was running.
    Interrupted,
}

/// Where the watcher is in a command's life.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Running until the deadline.
    Running,
    /// Sent `SIGTERM` at the deadline; `SIGKILL` comes at `kill_at`.
    Terminating { kill_at: Instant },
    /// The command exited; reading what is left until `until`.
    Draining { until: Instant },
}

/// What the watcher watches.
pub(crate) struct Watched<'a> {
    /// The read end of the command's stdout+stderr pipe.
    pub(crate) output: &'a PipeReader,
    /// The command's pidfd: readable once it has exited.
    pub(crate) pidfd: &'a OwnedFd,
    /// An eventfd written by the [`Interrupter`](crate::Interrupter).
    pub(crate) interrupts: &'a OwnedFd,
    /// The command's processes, for `SIGTERM` at the deadline.
    pub(crate) tree: &'a Tree,
    /// Whether the pipe is large enough to let the writer go on during a
    /// pause after a short read.
    pub(crate) coalesce: bool,
}

/// Captures the command's output until it has exited and its output is
/// drained, or until it was terminated for running past `deadline`.
///
/// Returns with the command possibly still running (terminating, or a
/// descendant holding the pipe): the caller kills what is left.
pub(crate) fn watch(
    watched: &Watched<'_>,
    deadline: Instant,
    capture: &mut Capture,
) -> io::Result<Ending> {
    let mut deadline = deadline;
    let mut phase = Phase::Running;
    let mut ending = Ending::Exited;
    let mut exited = false;
    let mut output_open = true;
    let mut pause = false;
    let mut buffer = vec![0; READ_CHUNK];
    loop {
        let now = Instant::now();
        phase = match phase {
            Phase::Running | Phase::Terminating { .. } if exited => {
                Phase::Draining { until: now + DRAIN }
            }
            Phase::Running if now >= deadline => {
                if ending == Ending::Exited {
                    ending = Ending::TimedOut;
                }
                watched.tree.signal(Signal::TERM);
                Phase::Terminating {
                    kill_at: now + GRACE,
                }
            }
            Phase::Terminating { kill_at: until } | Phase::Draining { until } if now >= until => {
                return Ok(ending);
            }
            unchanged => unchanged,
        };
        if exited && !output_open {
            return Ok(ending);
        }
        let wake_at = match phase {
            Phase::Running => deadline,
            Phase::Terminating { kill_at: at } | Phase::Draining { until: at } => at,
        };

        let ready = if pause {
            pause = false;
            wait(watched, false, exited, pause_end(now, wake_at))?
        } else {
            wait(watched, output_open, exited, wake_at)?
        };
        if ready.output {
            // Ready, so the read does not block (and no signal can cut it short).
            match (&*watched.output).read(&mut buffer)? {
                0 => output_open = false,
                read => {
                    capture.push(&buffer[..read]);
                    pause = pauses_after(read, watched.coalesce);
                }
            }
        }
        exited |= ready.exited;
        if ready.interrupted {
            let mut count = [0; 8];
            let _ = rustix::io::read(watched.interrupts, &mut count);
            // Only a running command is interrupted: one that is already
            // ending keeps the reason it is ending for. The group already has
            // SIGINT; if it still runs after the grace period, it ends as on
            // a timeout.
            if matches!(phase, Phase::Running) {
                ending = Ending::Interrupted;
                deadline = deadline.min(now + GRACE);
            }
        }
    }
}

/// True if and only if the watcher pauses after a read of `read` bytes: the
/// read emptied the pipe, and the pipe can hold what comes meanwhile.
fn pauses_after(read: usize, coalesce: bool) -> bool {
    coalesce && read < SHORT_READ
}

/// When a pause that starts `now` ends: after [`COALESCE`], or at `wake_at`
/// if that comes first.
fn pause_end(now: Instant, wake_at: Instant) -> Instant {
    wake_at.min(now + COALESCE)
}

/// Which of the watched descriptors are ready.
#[derive(Debug, Default)]
struct Ready {
    /// The pipe has data, or has ended.
    output: bool,
    /// The command has exited.
    exited: bool,
    /// An interrupt arrived.
    interrupted: bool,
}

/// Waits until a watched descriptor is ready or `wake_at`. The pipe is
/// watched while open, the pidfd until the command exited.
fn wait(
    watched: &Watched<'_>,
    output_open: bool,
    exited: bool,
    wake_at: Instant,
) -> io::Result<Ready> {
    let mut fds = Vec::with_capacity(3);
    let mut slots = [None; 3];
    if output_open {
        slots[0] = Some(fds.len());
        fds.push(PollFd::new(watched.output, PollFlags::IN));
    }
    if !exited {
        slots[1] = Some(fds.len());
        fds.push(PollFd::new(watched.pidfd, PollFlags::IN));
    }
    slots[2] = Some(fds.len());
    fds.push(PollFd::new(watched.interrupts, PollFlags::IN));
    poll_until(&mut fds, wake_at)?;
    let is_ready = |slot: Option<usize>| slot.is_some_and(|at| !fds[at].revents().is_empty());
    Ok(Ready {
        output: is_ready(slots[0]),
        exited: is_ready(slots[1]),
        interrupted: is_ready(slots[2]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_short_read_from_a_large_pipe_pauses() {
        assert!(pauses_after(1, true));
        assert!(pauses_after(SHORT_READ - 1, true));
        assert!(!pauses_after(SHORT_READ, true));
        assert!(!pauses_after(1, false));
    }

    #[test]
    fn a_pause_ends_early_for_the_deadline() {
        let now = Instant::now();
        assert_eq!(pause_end(now, now + Duration::from_secs(1)), now + COALESCE);
        assert_eq!(pause_end(now, now + COALESCE / 2), now + COALESCE / 2);
    }
}
