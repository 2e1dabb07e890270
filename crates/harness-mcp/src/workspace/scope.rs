//! The scope of one MCP call: what a cancellation of the call may stop, and only while the
//! call lasts.

use std::sync::{Arc, Mutex, PoisonError};

use crate::Call;

/// The part of a call that holds the toolbox: what a cancellation does acts only within
/// it. The interrupter reaches every command of the toolbox, so a late cancellation must
/// not interrupt the next call's command.
pub(super) struct Scope<'a> {
    call: &'a Call,
    /// True until the scope ends; a stop runs only while it is true.
    active: Arc<Mutex<bool>>,
}

impl<'a> Scope<'a> {
    pub(super) fn new(call: &'a Call) -> Scope<'a> {
        Scope {
            call,
            active: Arc::new(Mutex::new(true)),
        }
    }

    /// Runs `stop` when the client cancels the call, if the scope has not ended.
    pub(super) fn on_cancel(&self, stop: impl FnOnce() + Send + 'static) {
        let active = Arc::clone(&self.active);
        self.call.on_cancel(move || {
            // Held while stopping, so the scope cannot end meanwhile.
            let active = active.lock().unwrap_or_else(PoisonError::into_inner);
            if *active {
                stop();
            }
        });
    }

    /// Tells the client how the call is going.
    pub(super) fn progress(&self, message: String) {
        self.call.progress(message);
    }
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        *self.active.lock().unwrap_or_else(PoisonError::into_inner) = false;
    }
}
