//! Running one task in this process, exactly as `harness run` runs one: its own working
//! copy cloned, the settings resolved over the task's own, the run prepared, run and
//! finished through `harness-app`, and what it left made a [`TaskResult`]. Nothing is
//! printed: the events go to the caller's observer.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use harness_agent::{Observer, Outcome, StopSignal, Transcript};
use harness_app::{Finished, Prepared, Request, RunSummary, Settings};
use harness_exec::Interrupter;

use crate::Error;
use crate::gate::{Gated, ModelClock};
use crate::result::{self, DiffStat, Status, TaskResult, WORK_DIR};
use crate::slots::ModelSlots;
use crate::spec::TaskSpec;
use crate::workdir::clone_workdir;

/// What a task's run is given besides the task: where things are, who watches, what
/// stops it.
pub struct Context<'a> {
    /// The directory local repositories are relative to (the task file's).
    pub tasks_dir: &'a Path,
    /// The task file, which names the other tasks and their verification: hidden from the
    /// task's commands.
    pub tasks_file: &'a Path,
    /// The batch's output directory: the task works in `OUT/<id>/work`.
    pub out: &'a Path,
    /// Told of each event of the run.
    pub observer: &'a mut dyn Observer,
    /// Raised, the run stops after its current tool call.
    pub stop: StopSignal,
    /// Filled with the run's commands once its toolbox exists, so a signal handler can
    /// kill them.
    pub commands: RunningCommands,
    /// At most this many model requests at once across the batch's processes
    /// (`--max-inflight`): each request holds one of `OUT/.model-slots/`. `None`: no cap.
    pub max_inflight: Option<usize>,
}

/// The commands of the task being run, for a signal handler to kill: empty until the
/// run's toolbox is built.
#[derive(Clone, Debug, Default)]
pub struct RunningCommands(Arc<Mutex<Option<Interrupter>>>);

impl RunningCommands {
    /// Kills every command the run has running; none before the run began.
    pub fn kill(&self) {
        if let Some(interrupter) = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            interrupter.kill();
        }
    }

    fn set(&self, interrupter: Interrupter) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(interrupter);
    }
}

/// What running one task gave: its result, and the files that go beside it.
#[derive(Debug)]
pub struct Ran {
    /// The result.
    pub result: TaskResult,
    /// The run's diff against the state before it; empty without a run.
    pub patch: String,
    /// The run's transcript, when a run began.
    pub transcript: Option<PathBuf>,
    /// True if and only if the run was stopped (its stop signal, or an ending signal)
    /// before it finished: its result is not the task's.
    pub interrupted: bool,
}

impl Ran {
    /// Writes the result and its files into `OUT/<id>/`.
    ///
    /// # Errors
    ///
    /// A file that cannot be written.
    pub fn write(&self, out: &Path) -> Result<(), Error> {
        result::create_out_dir(out)?;
        let dir = result::task_dir(out, &self.result.id);
        result::write(&dir, &self.result, &self.patch, self.transcript.as_deref())
    }
}

/// Runs `spec`, the task with index `index`. A task that cannot be prepared (its
/// repository missing, its settings wrong, its model server down) is an `error` result
/// with the message: never a panic, never a task without a result.
pub fn run_one(index: usize, spec: &TaskSpec, context: Context<'_>) -> Ran {
    let started = Instant::now();
    match attempt(index, spec, context, started) {
        Ok(ran) => ran,
        Err(error) => Ran {
            result: TaskResult::error(
                &spec.id,
                index,
                error.chain(),
                started.elapsed().as_secs_f64(),
            ),
            patch: String::new(),
            transcript: None,
            interrupted: false,
        },
    }
}

/// The steps of `harness run`, each by `harness-app`, in its own working copy.
fn attempt(
    index: usize,
    spec: &TaskSpec,
    context: Context<'_>,
    started: Instant,
) -> Result<Ran, Error> {
    let (root, settings) = workspace(spec, &context)?;
    let slots = context
        .max_inflight
        .map(|count| ModelSlots::open(context.out, count))
        .transpose()?;
    let request = Request {
        task: spec.task.clone(),
        hidden_around: hidden_around(&context),
        ..Request::default()
    };
    let Prepared {
        toolbox,
        mut session,
        client,
        model,
        ..
    } = harness_app::prepare(&root, &settings, &request)?;
    let transcript = Transcript::create(session.transcript_path())?;
    harness_app::toolbox::adopt_escaping_commands();
    context.commands.set(toolbox.interrupter());

    let clock = Arc::new(ModelClock::default());
    let chat = Gated::new(harness_app::server_chat(client), slots, clock.clone());
    let agent = harness_app::agent_over(
        Arc::new(chat),
        &model,
        &toolbox,
        &settings,
        transcript,
        context.stop,
    );
    let report = harness_app::run(agent, &spec.task, context.observer, &mut session);
    let recorded = harness_app::finish(&mut session, &report);
    let finished = Finished::of(&mut session, &settings);
    let patch = finished
        .changed
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    let summary = RunSummary::new(&report, recorded, finished);
    Ok(Ran {
        result: result_of(index, spec, &summary, started, &clock),
        patch,
        transcript: Some(session.transcript_path()),
        interrupted: report.outcome == Outcome::Interrupted,
    })
}

/// The task's fresh working copy, canonical, and the settings of its run: the user's
/// file, the repository's `harness.toml`, the task's own over both.
fn workspace(spec: &TaskSpec, context: &Context<'_>) -> Result<(PathBuf, Settings), Error> {
    result::create_out_dir(context.out)?;
    let work = result::task_dir(context.out, &spec.id).join(WORK_DIR);
    clone_workdir(
        &spec.source(context.tasks_dir),
        spec.reference.as_deref(),
        &work,
    )?;
    let root = harness_app::workspace_root(&work)?;
    let settings = Settings::resolve(&root, &spec.overrides())?;
    harness_app::refuse_unrunnable_verification(&settings)?;
    Ok((root, settings))
}

/// What the task's commands may not reach although it lies near their workspace: the whole
/// output directory but the task's own working copy (the other tasks' working copies, their
/// results, patches and transcripts, a solved task's answer among them, the batch's results,
/// and a task directory made after this one started); the task file, which names the other
/// tasks and their verification commands; and the undo stores, every task's (each holds its
/// task's snapshots and transcript, which commands otherwise may read, not write), which no
/// command needs: the harness reads and writes them itself. Hidden whole rather than entry
/// by entry, so that what appears in them later (a task started after this one) is hidden
/// too; each resolved, so that the tiers see the paths they confine by (a place that cannot
/// be resolved is not there to hide).
fn hidden_around(context: &Context<'_>) -> Vec<PathBuf> {
    [context.out, context.tasks_file]
        .into_iter()
        .map(Path::to_path_buf)
        .chain(harness_undo::stores_dir())
        .map(|place| place.canonicalize().unwrap_or(place))
        .collect()
}

/// The result of the run `summary` tells of.
fn result_of(
    index: usize,
    spec: &TaskSpec,
    summary: &RunSummary<'_>,
    started: Instant,
    clock: &ModelClock,
) -> TaskResult {
    let report = summary.report;
    let diff = summary
        .changed
        .as_ref()
        .map_or(DiffStat::default(), |files| DiffStat {
            files: files.len(),
            added: files.iter().map(|file| file.added).sum(),
            removed: files.iter().map(|file| file.removed).sum(),
        });
    let status = Status::of(report.outcome, summary.tests_changed.is_empty());
    TaskResult {
        id: spec.id.clone(),
        index,
        status,
        outcome: report.outcome.to_string(),
        reason: report.reason.clone(),
        steps: report.steps,
        prompt_tokens: report.prompt_tokens,
        completion_tokens: report.completion_tokens,
        wall_seconds: started.elapsed().as_secs_f64(),
        model_seconds: clock.model_seconds(),
        queue_seconds: clock.queue_seconds(),
        diff,
        run: Some(summary.run.clone()),
        error: (status == Status::Error).then(|| report.reason.clone()),
    }
}
