//! `harness batch`: many tasks, each in its own clone with its own result, run here N at a
//! time (`--jobs`), one index at a time for an engine (`--index`, or the engine's
//! variable), handed to an engine as a script (`--emit slurm`), or gathered afterwards
//! (`collect`). The work is `harness-batch`'s; this file
//! parses, calls and displays.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use clap::{Args, Subcommand, ValueEnum};
use harness_agent::StopSignal;
use harness_batch::{
    Collected, K8sOptions, Local, LocalReport, RunningCommands, SlurmOptions, Tasks,
};

use crate::boundary;
use crate::display::Out;
use crate::exit;
use crate::shown::{Shown, shown};
use crate::signals;

/// Run many tasks, each in a fresh clone of its repository, N at a time.
///
/// TASKS holds one JSON object per line (schema: docs/batch-task.schema.json):
///
///   {"id": "fix-add", "repo": "../calc", "task": "make the failing test pass",
///    "verify": "python3 -m unittest -q", "max_steps": 20}
///
/// `repo` is a local path (relative to TASKS' directory) or a git URL with an optional
/// `ref`; the other keys are `harness run`'s settings (model, host, api, replies,
/// max_steps, timeout, command_timeout, attempts, max_checks, edit_format, sandbox, allow,
/// network, allow_test_edits). A bad line is reported with its line and field; the others
/// still run. Each task runs in OUT/<id>/work, never in your checkout, and leaves
/// OUT/<id>/result.json (status: solved, unresolved, error or timeout), patch.diff and
/// transcript.jsonl; at the end OUT/results.jsonl, summary.json and summary.md.
///
/// With --index I (or JOB_COMPLETION_INDEX, or SLURM_ARRAY_TASK_ID) only task line I runs,
/// here: what a Kubernetes Indexed Job or a Slurm job array runs; then `harness batch
/// collect OUT` gathers the results. --emit slurm prints an sbatch script that runs
/// every task line that way, as a job array (see docs/batch.md, "On Slurm"); --emit k8s
/// writes into OUT the manifests of a Kubernetes Indexed Job ("On Kubernetes").
///
/// Examples:
///
///   harness batch tasks.jsonl --jobs 2 --out results
///
///   harness batch tasks.jsonl --out results --resume
///
///   harness batch tasks.jsonl --index 3 --out results
///
///   harness batch tasks.jsonl --emit slurm --jobs 8 --out results > job.sh
///
///   harness batch tasks.jsonl --emit k8s --jobs 8 --out manifests
///
///   harness batch collect results
#[derive(Debug, Args)]
#[command(
    verbatim_doc_comment,
    about = "Run many tasks, each in a fresh clone of its repository, N at a time",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = exit::help(exit::Help::Batch)
)]
pub(crate) struct BatchCommand {
    #[command(subcommand)]
    collect: Option<Collect>,

    /// The task file: one JSON object per line.
    #[arg(value_name = "TASKS", required = true)]
    tasks: Option<PathBuf>,

    /// Tasks run at once, each as a process of its own [default: 1]. With --emit slurm,
    /// the array's `%N` (without it, the cluster decides); with --emit k8s, the Job's
    /// parallelism.
    #[arg(long, short = 'j', value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,

    /// At most K model requests at once across every task of the batch, separate from
    /// --jobs: tasks running commands go on while others wait for the model. Each request
    /// holds one of K slot files in OUT/.model-slots/ (so --index processes sharing OUT on
    /// one machine share the cap) [default: no cap].
    #[arg(long, value_name = "K", conflicts_with = "emit",
          value_parser = clap::value_parser!(u16).range(1..))]
    max_inflight: Option<u16>,

    /// Where the results go: OUT/<id>/ per task, results.jsonl and the summary. With
    /// --emit k8s, where the manifests go (the results go to a volume).
    #[arg(long, value_name = "OUT", default_value = "batch-out")]
    out: PathBuf,

    /// Skip the tasks that already have a result in OUT (with --index: that task).
    #[arg(long)]
    resume: bool,

    /// Run only task line I (from 0, blank lines not counted) and write its result.
    #[arg(long, value_name = "I")]
    index: Option<usize>,

    /// Print a script that runs the batch on an engine, instead of running it (OUT is
    /// made, for the jobs' output files).
    #[arg(long, value_name = "ENGINE", conflicts_with_all = ["index", "resume"])]
    emit: Option<Engine>,
}

/// The engines `--emit` writes for.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Engine {
    /// An sbatch script: a Slurm job array, one task line per index.
    Slurm,
    /// Kubernetes manifests, written into OUT: an Indexed Job, one task line per index.
    K8s,
}

#[derive(Debug, Subcommand)]
enum Collect {
    /// Gather OUT/*/result.json into OUT/results.jsonl, summary.json and summary.md.
    Collect {
        /// The batch's output directory.
        #[arg(value_name = "OUT")]
        out: PathBuf,
    },
}

impl BatchCommand {
    /// True if and only if this runs tasks (not `collect`): then it starts under a reaper.
    pub(crate) fn runs_tasks(&self) -> bool {
        self.collect.is_none()
    }
}

/// Runs the batch, one task of it, or `collect`.
pub(crate) fn exec(command: BatchCommand) -> anyhow::Result<ExitCode> {
    if let Some(Collect::Collect { out }) = &command.collect {
        let collected = harness_batch::collect(out)?;
        print_table(&collected, out);
        let code = if collected.unreadable.is_empty() {
            exit::VERIFIED
        } else {
            exit::NOT_VERIFIED
        };
        return Ok(ExitCode::from(code));
    }
    let path = command.tasks.as_deref().context("no task file given")?;
    let tasks = Tasks::read(path)?;
    match command.emit {
        Some(Engine::Slurm) => return emit_slurm(&tasks, &command),
        Some(Engine::K8s) => return emit_k8s(&tasks, &command),
        None => {}
    }
    // Every run states what the harness does and does not protect before it starts: a
    // batch once on stderr (its table is stdout's), and each task in its log.
    Out::stderr().line(&Shown::text(boundary::STATEMENT))?;
    let index = match command.index {
        Some(index) => Some(index),
        None => match harness_batch::index_from_env() {
            Ok(index) => Some(index),
            Err(harness_batch::Error::NoIndex) => None,
            Err(error) => return Err(error.into()),
        },
    };
    match index {
        Some(index) => one_task(&tasks, index, &command),
        None => all_tasks(&tasks, &command),
    }
}

/// Runs task line `index` in this process (with `resume`, unless it has a result); prints
/// its result as one JSON line.
fn one_task(tasks: &Tasks, index: usize, command: &BatchCommand) -> anyhow::Result<ExitCode> {
    let out = command.out.as_path();
    if command.resume
        && let Some(kept) = harness_batch::kept_result(tasks, index, out)?
    {
        print_result_line(&kept.to_line())?;
        return Ok(ExitCode::SUCCESS);
    }
    let commands = RunningCommands::default();
    let killer = commands.clone();
    // No result is better than a partial one: an engine retries the index, --resume too.
    signals::on_ending_signal(move |_| {
        killer.kill();
        std::process::exit(i32::from(exit::INTERRUPTED));
    });
    let max_inflight = command.max_inflight.map(usize::from);
    match harness_batch::run_index(
        tasks,
        index,
        out,
        &mut (),
        StopSignal::new(),
        commands,
        max_inflight,
    ) {
        Ok(result) => {
            print_result_line(&result.to_line())?;
            Ok(ExitCode::SUCCESS)
        }
        Err(harness_batch::Error::Interrupted) => Ok(ExitCode::from(exit::INTERRUPTED)),
        Err(
            error @ (harness_batch::Error::BadLine(_) | harness_batch::Error::NoSuchIndex { .. }),
        ) => Err(error.into()),
        Err(error) => {
            Out::stderr().line(&shown!("harness: {}", error.chain()))?;
            Ok(ExitCode::from(exit::NOT_VERIFIED))
        }
    }
}

/// A task's result line on stdout, and in the file an engine asked for (a pod's
/// termination message); the result itself is already written, so that file failing is
/// said on stderr and not an error.
fn print_result_line(line: &str) -> anyhow::Result<()> {
    Out::stdout().json_text(&format!("{line}\n"))?;
    if let Err(error) = harness_batch::write_result_line(line) {
        Out::stderr().line(&shown!("harness: {}", error.chain()))?;
    }
    Ok(())
}

/// Runs every task, `--jobs` at a time, each as a child process of this program.
fn all_tasks(tasks: &Tasks, command: &BatchCommand) -> anyhow::Result<ExitCode> {
    let mut err = Out::stderr();
    for bad in tasks.errors() {
        err.line(&shown!("harness: {}; the line is skipped", bad))?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let raised = Arc::clone(&stop);
    signals::on_ending_signal(move |received| {
        raised.store(true, Ordering::SeqCst);
        if received == 1 {
            let _ = Out::stderr().line(&shown!(
                "\nharness: stopping every task; finished results are kept (--resume runs the rest)"
            ));
        }
    });
    let program = std::env::current_exe().context("cannot find the harness's own program")?;
    let batch = Local {
        tasks,
        out: &command.out,
        jobs: usize::from(command.jobs.unwrap_or(1)),
        max_inflight: command.max_inflight.map(usize::from),
        resume: command.resume,
        program: &program,
        stop: &stop,
    };
    let report = harness_batch::run_local(&batch, &mut |progress| {
        let _ = Out::stderr().line(&harness_batch::progress_line(progress));
    })?;
    if report.resumed > 0 {
        err.line(&shown!(
            "{} tasks kept from an earlier run (--resume)",
            report.resumed
        ))?;
    }
    print_table(&report.collected, &command.out);
    Ok(ExitCode::from(local_exit_code(tasks, &report)))
}

/// Prints the sbatch script for `tasks`; says on stderr which lines are not tasks (their
/// indices stay in the array, each exiting 2 as `--index` does).
fn emit_slurm(tasks: &Tasks, command: &BatchCommand) -> anyhow::Result<ExitCode> {
    let mut err = Out::stderr();
    for bad in tasks.errors() {
        err.line(&shown!(
            "harness: {}; its array task will exit 2 without a result",
            bad
        ))?;
    }
    let program = std::env::current_exe().context("cannot find the harness's own program")?;
    let absolute = |path: &Path| {
        std::path::absolute(path)
            .with_context(|| format!("cannot make {} absolute", path.display()))
    };
    let tasks_path = absolute(tasks.path())?;
    let out = absolute(&command.out)?;
    let script = harness_batch::slurm_script(
        tasks,
        &SlurmOptions {
            program: &program,
            tasks: &tasks_path,
            out: &out,
            jobs: command.jobs.map(usize::from),
        },
    )?;
    // Slurm opens each index's output file in OUT before the job runs, and fails the
    // job when it cannot.
    harness_batch::create_out_dir(&out)?;
    // Shown::text keeps the script as it is but for characters a terminal would obey,
    // which no path the script names has in practice.
    Out::stdout().print(&Shown::text(&script))?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the Kubernetes manifests for `tasks` into OUT; says on stderr which lines are
/// not tasks, and what else will not work in a pod.
fn emit_k8s(tasks: &Tasks, command: &BatchCommand) -> anyhow::Result<ExitCode> {
    let mut err = Out::stderr();
    for bad in tasks.errors() {
        err.line(&shown!(
            "harness: {}; its index will exit 2 without a result",
            bad
        ))?;
    }
    let options = K8sOptions {
        jobs: command.jobs.map(usize::from),
    };
    let manifests = harness_batch::k8s_manifests(tasks, &options)?;
    for warning in &manifests.warnings {
        err.line(&shown!("harness: {}", warning))?;
    }
    manifests.write(&command.out)?;
    Out::stdout().line(&shown!(
        "wrote the Job {} in {}: apply it with `kubectl apply -k {}` (docs/batch.md, \"On Kubernetes\")",
        manifests.job,
        command.out.display(),
        command.out.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// The batch's exit status: interrupted, then a bad line, then a task without a result.
fn local_exit_code(tasks: &Tasks, report: &LocalReport) -> u8 {
    let has_result = |id: &str| report.collected.results.iter().any(|r| r.id == id);
    if report.stopped {
        exit::INTERRUPTED
    } else if !report.bad_lines.is_empty() {
        exit::USAGE
    } else if tasks
        .entries()
        .iter()
        .filter_map(|entry| entry.parsed.as_ref().ok())
        .any(|spec| !has_result(&spec.id))
    {
        exit::NOT_VERIFIED
    } else {
        exit::VERIFIED
    }
}

/// The results table on stdout, and on stderr the results that could not be read.
fn print_table(collected: &Collected, out: &Path) {
    let mut stdout = Out::stdout();
    for line in harness_batch::table(collected, out) {
        let _ = stdout.line(&line);
    }
    for unreadable in &collected.unreadable {
        let _ = Out::stderr().line(&shown!("harness: {}; left out", unreadable));
    }
}
