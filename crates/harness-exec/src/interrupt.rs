//! Forwarding Ctrl-C to the commands that are running.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::tree::Tree;

/// Interrupts the commands a [`Runner`](crate::Runner) is running, as Ctrl-C
/// in a terminal would.
///
/// Each command runs in its own process group, so the terminal's Ctrl-C
/// reaches the harness but not the command. The program forwards it by calling
/// [`Interrupter::interrupt`], from a signal-handling thread for example. Every
/// process of the command gets `SIGINT`; a command still running 1 s later is
/// ended as on a timeout (`SIGTERM`, then `SIGKILL` 1 s later), and its run
/// reports [`Status::Interrupted`](crate::Status::Interrupted).
///
/// Clones share the runner's list of running commands.
///
/// ```
/// use harness_exec::Runner;
///
/// let runner = Runner::new();
/// let interrupter = runner.interrupter();
/// // Nothing is running yet.
/// assert_eq!(interrupter.interrupt(), 0);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Interrupter {
    running: Arc<Mutex<Vec<Running>>>,
}

/// A command that can be interrupted.
#[derive(Debug)]
struct Running {
    /// Tells this registration apart from the others.
    id: u64,
    /// Every process of the command.
    group: Arc<Tree>,
    /// An eventfd that wakes the thread watching the command.
    wake: Arc<OwnedFd>,
}

impl Interrupter {
    /// Sends `SIGINT` to every process of every command running through the
    /// runner and returns how many commands there were.
    pub fn interrupt(&self) -> usize {
        let running = self.lock();
        for command in running.iter() {
            // The watcher is told before the signal is sent: a command that dies of
            // the SIGINT at once is then always seen as interrupted, never as one
            // killed by a signal of unknown origin (the watcher can see the exit in
            // the same wake-up as the note, not before it). The eventfd counter only
            // grows; a failed write (the counter is full) still leaves it woken.
            let _ = rustix::io::write(&*command.wake, &1u64.to_ne_bytes());
            command.group.interrupt();
        }
        running.len()
    }

    /// Kills every command running through the runner, each with every process it
    /// started, waits until they are gone, and returns how many commands there were.
    ///
    /// For a program about to exit before its commands end (a second Ctrl-C, `SIGTERM`):
    /// a command runs in a process group of its own, so nothing else ends it with the
    /// program, and under the `none` and `landlock` tiers it would go on running. Their
    /// runs report [`Status::Interrupted`](crate::Status::Interrupted).
    pub fn kill(&self) -> usize {
        // Held throughout: a listed command is not reaped (its registration is dropped
        // first), so its process group cannot be reused while it is killed.
        let running = self.lock();
        for command in running.iter() {
            let _ = rustix::io::write(&*command.wake, &1u64.to_ne_bytes());
            command.group.kill();
        }
        running.len()
    }

    /// Makes the command of `group` interruptible until the returned guard
    /// is dropped. The guard must be dropped before the command is reaped, so
    /// that a signal never reaches a reused process group.
    pub(crate) fn register(&self, group: Arc<Tree>, wake: Arc<OwnedFd>) -> Registration<'_> {
        static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let id = IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.lock().push(Running { id, group, wake });
        Registration {
            interrupter: self,
            id,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Running>> {
        // The list stays consistent even if a holder panicked.
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Keeps a command interruptible while it lives.
#[derive(Debug)]
pub(crate) struct Registration<'a> {
    /// Whose list the command is on.
    interrupter: &'a Interrupter,
    /// Which entry of the list is the command's.
    id: u64,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.interrupter
            .lock()
            .retain(|running| running.id != self.id);
    }
}
