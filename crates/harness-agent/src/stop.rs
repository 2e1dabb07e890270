//! [`StopSignal`]: how a person stops a run, once politely and once for good.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// A request to stop the run, shared between the loop and whoever asks (a Ctrl-C handler).
///
/// The loop looks at it between steps, between tool calls, and while it waits for the model:
/// once a stop is requested it lets the tool call in progress finish, takes a last
/// checkpoint, writes the transcript and ends with
/// [`Outcome::Interrupted`](crate::Outcome::Interrupted). [`StopSignal::request`] returns how
/// many requests there were, so the program can stop at once on the second: the pre-run
/// state was recorded before the first step, so the run can be undone either way.
///
/// ```
/// use harness_agent::StopSignal;
///
/// let stop = StopSignal::new();
/// let handler = stop.clone();
/// assert!(!stop.is_requested());
/// assert_eq!(handler.request(), 1);
/// assert!(stop.is_requested());
/// assert_eq!(handler.request(), 2, "the second request: time to exit");
/// ```
#[derive(Clone, Debug, Default)]
pub struct StopSignal {
    requests: Arc<AtomicU32>,
}

impl StopSignal {
    /// A signal nobody has raised yet.
    pub fn new() -> StopSignal {
        StopSignal::default()
    }

    /// Asks the run to stop, and returns how many times it has now been asked (1 the first
    /// time). Safe to call from a signal-handling thread.
    pub fn request(&self) -> u32 {
        self.requests
            .fetch_add(1, Ordering::SeqCst)
            .saturating_add(1)
    }

    /// True if and only if a stop was requested.
    pub fn is_requested(&self) -> bool {
        self.requests.load(Ordering::SeqCst) > 0
    }
}
