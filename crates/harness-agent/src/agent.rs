//! [`Agent`]: the builder of a run. It gathers the model, the tools and the rules; the run
//! itself, phase by phase, is in `run/` (the step loop in `run/mod.rs`).

use std::sync::Arc;

use harness_tools::{Toolbox, VerificationInputs};

use crate::budget::Budgets;
use crate::chat::ChatClient;
use crate::checkpoint::Checkpoints;
use crate::edit_format::EditFormat;
use crate::event::Observer;
use crate::model::Message;
use crate::outcome::RunReport;
use crate::run::{Run, Setup};
use crate::stop::StopSignal;
use crate::transcript::Transcript;
use crate::verify::Verification;

/// A coding agent: a model, the tools it may call, and the rules of one run.
///
/// ```no_run
/// use std::sync::Arc;
/// use harness_agent::{Agent, FakeChat, NoCheckpoints, Reply, Verification};
/// use harness_sandbox::Workspace;
/// use harness_tools::Toolbox;
///
/// let toolbox = Toolbox::new(Workspace::new("/path/to/repo")?);
/// let chat = Arc::new(FakeChat::new([Reply::text("Nothing to do.")]));
/// let report = Agent::new(chat, &toolbox)
///     .verification(Verification::parse("cargo test")?)
///     .run("make the failing test pass", &mut (), &mut NoCheckpoints);
/// println!("{}: {}", report.outcome, report.reason);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Agent<'a> {
    /// What the run is given: the model, the tools and the rules.
    setup: Setup<'a>,
    /// Where the record of the run goes.
    transcript: Option<Transcript>,
}

impl<'a> Agent<'a> {
    /// An agent asking `chat` and calling the tools of `toolbox`, with default [`Budgets`],
    /// no verification command, no transcript and a stop signal of its own.
    pub fn new(chat: Arc<dyn ChatClient>, toolbox: &'a Toolbox) -> Agent<'a> {
        Agent {
            setup: Setup {
                chat,
                toolbox,
                budgets: Budgets::default(),
                verification: None,
                inputs: None,
                stop: StopSignal::new(),
                edit_format: EditFormat::default(),
                earlier: Vec::new(),
            },
            transcript: None,
        }
    }

    /// Sets the limits of the run.
    pub fn budgets(mut self, budgets: Budgets) -> Agent<'a> {
        self.setup.budgets = budgets;
        self
    }

    /// Sets the verification command: without one, a run the model says is done ends
    /// [`Outcome::Unverified`](crate::Outcome::Unverified).
    pub fn verification(mut self, verification: Verification) -> Agent<'a> {
        self.setup.verification = Some(verification);
        self
    }

    /// Judges each passing run of the verification command by what it loads besides the
    /// code under test: when any of `inputs` changed since the run began (by the
    /// [`Checkpoints::changes`] of the run), the pass does not count, the model is told
    /// what changed, and a run that ends so ends
    /// [`Outcome::TestsChanged`](crate::Outcome::TestsChanged). With
    /// `tests_may_change` (the user's `--allow-test-edits`) the tests among the inputs may
    /// change; what the runner loads its own code from may not.
    pub fn verification_inputs(
        mut self,
        inputs: VerificationInputs,
        tests_may_change: bool,
    ) -> Agent<'a> {
        self.setup.inputs = Some((inputs, tests_may_change));
        self
    }

    /// Writes the run's record to `transcript`.
    pub fn transcript(mut self, transcript: Transcript) -> Agent<'a> {
        self.transcript = Some(transcript);
        self
    }

    /// Sets which edits the model writes into an answer, instead of calling a tool, are
    /// applied (through the same tools): [`EditFormat::Auto`] by default.
    pub fn edit_format(mut self, format: EditFormat) -> Agent<'a> {
        self.setup.edit_format = format;
        self
    }

    /// Starts the conversation from `messages`, an earlier run's (a follow-up's chain),
    /// between the system prompt and the task: the model sees what it was asked and did
    /// before. They are not written to this run's transcript, which is its own; the
    /// context is kept to the window as for every message.
    pub fn earlier(mut self, messages: Vec<Message>) -> Agent<'a> {
        self.setup.earlier = messages;
        self
    }

    /// Stops the run when `stop` is raised; see [`StopSignal`].
    pub fn stop_signal(mut self, stop: StopSignal) -> Agent<'a> {
        self.setup.stop = stop;
        self
    }

    /// Runs the task to an outcome, reporting each [`Event`](crate::Event) to `observer` and
    /// taking a checkpoint after each step that may have changed files.
    ///
    /// Nothing here fails: a model that cannot be reached, a tool that fails, a budget that
    /// runs out are all outcomes, in the report.
    pub fn run(
        self,
        task: &str,
        observer: &mut dyn Observer,
        checkpoints: &mut dyn Checkpoints,
    ) -> RunReport {
        Run::new(self.setup, self.transcript, observer, checkpoints).run_to_an_outcome(task)
    }
}
