//! Waiting on file descriptors until a deadline.

use std::io;
use std::time::Instant;

use rustix::event::{PollFd, Timespec, poll};
use rustix::io::Errno;

/// Waits until an event on `fds` or `deadline`, whichever comes first. A wait
/// cut short by a signal returns as if it timed out: callers look at the
/// clock and the `revents` anyway.
pub(crate) fn poll_until(fds: &mut [PollFd<'_>], deadline: Instant) -> io::Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    // Only a wait of more than 2^63 seconds does not fit; wait "forever" then.
    let timeout = Timespec::try_from(left).ok();
    match poll(fds, timeout.as_ref()) {
        Ok(_) | Err(Errno::INTR) => Ok(()),
        Err(error) => Err(error.into()),
    }
}
