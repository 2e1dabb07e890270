//! [`Backend`]: what a server serves, and the types a call goes through.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedSender;

use crate::Error;

/// What a [`Server`](crate::Server) serves: its tools, and what a call of one does.
///
/// [`Backend::call`] runs on a thread of its own, off the protocol loop, so it may block (run
/// a command, a whole agent run) for as long as it needs; calls from one client may run at
/// the same time, hence `Sync`.
pub trait Backend: Send + Sync + 'static {
    /// The tools offered to the client, in the order it lists them.
    fn tools(&self) -> Vec<ToolDef>;

    /// Calls the tool `name` with the `arguments` the client sent (the JSON object of the
    /// request, `{}` when it sent none), and says what the client reads.
    ///
    /// Everything is a [`Reply`]: an unknown tool, arguments that do not fit, a refusal. The
    /// server never turns a reply into a protocol error.
    fn call(&self, name: &str, arguments: Value, call: &Call) -> Reply;
}

/// One tool as the client is offered it: a name, a description and the JSON Schema of its
/// arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDef {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) input_schema: Map<String, Value>,
}

impl ToolDef {
    /// The tool `name`, described by `description`, taking the arguments `input_schema`
    /// describes.
    ///
    /// # Errors
    ///
    /// [`Error::SchemaNotAnObject`] when `input_schema` is not a JSON object: MCP requires
    /// one.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Result<ToolDef, Error> {
        let name = name.into();
        match input_schema {
            Value::Object(input_schema) => Ok(ToolDef {
                name,
                description: description.into(),
                input_schema,
            }),
            _ => Err(Error::SchemaNotAnObject { tool: name }),
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// What a call returns to the client: text, and whether it is an error (`isError`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub(crate) text: String,
    pub(crate) is_error: bool,
}

impl Reply {
    /// A result of a call that worked.
    pub fn success(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            is_error: false,
        }
    }

    /// A result of a call that failed, with the message the caller should act on.
    pub fn error(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            is_error: true,
        }
    }

    /// The text the client reads.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// True if and only if the call failed.
    pub fn is_error(&self) -> bool {
        self.is_error
    }
}

/// The request a [`Backend::call`] serves: where its progress goes and how it hears that the
/// client cancelled it.
pub struct Call {
    /// Where progress messages go, when the client asked for progress.
    progress: Option<UnboundedSender<String>>,
    /// Shared with the server, which fires it when the client cancels the request.
    cancellation: Arc<Cancellation>,
}

impl Call {
    /// A call no client waits on: progress goes nowhere and nothing cancels it. For running a
    /// backend outside a server, as tests do.
    pub fn detached() -> Call {
        Call {
            progress: None,
            cancellation: Arc::new(Cancellation::default()),
        }
    }

    /// A call whose progress goes to `progress` (if the client asked for it), cancelled
    /// through the returned handle.
    pub(crate) fn new(progress: Option<UnboundedSender<String>>) -> (Call, Arc<Cancellation>) {
        let cancellation = Arc::new(Cancellation::default());
        let call = Call {
            progress,
            cancellation: Arc::clone(&cancellation),
        };
        (call, cancellation)
    }

    /// Tells the client how the call is going (one `notifications/progress` each, numbered
    /// from 1), if it asked to be told. Never blocks.
    pub fn progress(&self, message: impl Into<String>) {
        if let Some(progress) = &self.progress {
            // The receiver is gone only when the request is over: nobody left to tell.
            let _ = progress.send(message.into());
        }
    }

    /// True if and only if the client cancelled the call.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }

    /// Runs `stop` when the client cancels the call, or at once if it already has. Use it to
    /// stop the work as Ctrl-C would (interrupt a command, stop a run after its step).
    pub fn on_cancel(&self, stop: impl FnOnce() + Send + 'static) {
        self.cancellation.on_cancel(Box::new(stop));
    }
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("progress", &self.progress.is_some())
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// A request's cancellation: the stops registered so far, run once when it fires.
#[derive(Default)]
pub(crate) struct Cancellation {
    state: Mutex<CancelState>,
}

enum CancelState {
    /// Not cancelled yet: what to run when it is.
    Waiting(Vec<Box<dyn FnOnce() + Send>>),
    Cancelled,
}

impl Default for CancelState {
    fn default() -> CancelState {
        CancelState::Waiting(Vec::new())
    }
}

impl Cancellation {
    /// Fires: runs every registered stop, once.
    pub(crate) fn cancel(&self) {
        let previous = std::mem::replace(&mut *self.lock(), CancelState::Cancelled);
        if let CancelState::Waiting(stops) = previous {
            for stop in stops {
                stop();
            }
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(*self.lock(), CancelState::Cancelled)
    }

    fn on_cancel(&self, stop: Box<dyn FnOnce() + Send>) {
        let mut state = self.lock();
        match &mut *state {
            CancelState::Cancelled => {
                drop(state);
                stop();
            }
            CancelState::Waiting(stops) => stops.push(stop),
        }
    }

    /// The state; a stop that panicked leaves it usable (it is replaced before stops run).
    fn lock(&self) -> std::sync::MutexGuard<'_, CancelState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn a_stop_runs_once_whether_registered_before_or_after_the_cancellation() {
        let (call, cancellation) = Call::new(None);
        let stops = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&stops);
        call.on_cancel(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        assert!(!call.is_cancelled());
        assert_eq!(stops.load(Ordering::SeqCst), 0);
        cancellation.cancel();
        cancellation.cancel();
        assert!(call.is_cancelled());
        assert_eq!(stops.load(Ordering::SeqCst), 1);
        let counter = Arc::clone(&stops);
        call.on_cancel(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(stops.load(Ordering::SeqCst), 2, "a late stop runs at once");
    }

    #[test]
    fn progress_reaches_the_channel_only_when_asked_for() {
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
        let (call, _) = Call::new(Some(sender));
        call.progress("step 1");
        assert_eq!(receiver.try_recv().ok().as_deref(), Some("step 1"));
        Call::detached().progress("nowhere");
    }

    #[test]
    fn a_schema_must_be_an_object() {
        let error = ToolDef::new("t", "d", Value::Bool(true)).unwrap_err();
        assert!(error.to_string().contains("`t`"), "{error}");
        assert_eq!(
            ToolDef::new("t", "d", Value::Object(Map::new()))
                .unwrap()
                .name(),
            "t"
        );
    }
}
