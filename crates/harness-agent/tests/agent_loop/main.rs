//! The loop against a scripted model ([`FakeChat`]) and a real toolbox over a real temporary
//! directory: every behaviour of a run, one test each, in a file per phase of the run. This
//! file holds what they share.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness_agent::{
    Agent, Budgets, ChatClient, ChatError, Checkpoints, EditFormat, Event, FakeChat, Message,
    Observer, Outcome, Reply, Role, RunReport, StopSignal, Transcript, Verification,
};
use harness_sandbox::Workspace;
use harness_tools::Toolbox;
use serde_json::{Value, json};
use tempfile::TempDir;

mod budgets;
mod calls;
mod done;
mod opening;
mod record;
mod steering;
mod written;

/// A workspace with `files`, and a toolbox over it.
fn workspace(files: &[(&str, &str)]) -> (TempDir, Toolbox) {
    let directory = tempfile::tempdir().expect("a temporary directory");
    for (path, content) in files {
        let path = directory.path().join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent directories");
        }
        std::fs::write(path, content).expect("a fixture file");
    }
    let toolbox = Toolbox::new(Workspace::new(directory.path()).expect("a workspace"));
    (directory, toolbox)
}

/// Checkpoints that remember their labels.
#[derive(Default)]
struct Labels(Vec<String>);

impl Checkpoints for Labels {
    fn checkpoint(
        &mut self,
        label: &str,
    ) -> Result<Option<u32>, Box<dyn std::error::Error + Send + Sync>> {
        self.0.push(label.to_owned());
        Ok(Some(self.0.len() as u32))
    }
}

/// What a run did, with everything a test looks at.
struct Ran {
    report: RunReport,
    chat: Arc<FakeChat>,
    events: Vec<Value>,
    checkpoints: Vec<String>,
}

impl Ran {
    /// The messages of request `n` (from 0).
    fn request(&self, n: usize) -> Vec<Message> {
        self.chat.requests()[n].messages.clone()
    }

    /// The tool messages of request `n`, after the head start.
    fn tool_results(&self, n: usize) -> Vec<String> {
        self.request(n)
            .into_iter()
            .filter(|m| m.role == Role::Tool && !is_head_start(m))
            .map(|m| m.content)
            .collect()
    }

    fn events_named(&self, name: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["event"] == name).collect()
    }
}

fn is_head_start(message: &Message) -> bool {
    message
        .tool_call_id
        .as_deref()
        .is_some_and(|id| id.starts_with("head_start"))
}

/// Runs `task` with `replies`, no head start unless the budgets ask for it.
fn run_with(
    toolbox: &Toolbox,
    chat: FakeChat,
    budgets: Budgets,
    verification: Option<&str>,
) -> Ran {
    let chat = Arc::new(chat);
    let mut agent = Agent::new(chat.clone(), toolbox).budgets(budgets);
    if let Some(command) = verification {
        agent = agent.verification(Verification::parse(command).expect("a valid command"));
    }
    let mut events = Vec::new();
    let mut checkpoints = Labels::default();
    let report = agent.run("fix the bug", &mut events, &mut checkpoints);
    Ran {
        report,
        chat,
        events,
        checkpoints: checkpoints.0,
    }
}

fn no_head_start() -> Budgets {
    Budgets {
        head_start_chars: 0,
        ..Budgets::default()
    }
}

/// No head start, and the verification only on "done": no check after an editing step.
fn on_done_only() -> Budgets {
    Budgets {
        quick_check: None,
        ..no_head_start()
    }
}

fn run(toolbox: &Toolbox, replies: Vec<Reply>, verification: Option<&str>) -> Ran {
    run_with(
        toolbox,
        FakeChat::new(replies),
        no_head_start(),
        verification,
    )
}

const BROKEN: &str = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n";
const FIXED: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
