//! The index contract, for engines that run one task per job: `harness batch TASKS
//! --index I --out OUT` runs exactly task line `I` ([`run_index`]); without `--index` the
//! index comes from the engine ([`index_from_env`]). The process exits 0 whenever it wrote
//! a result, whatever the outcome, and non-zero only when it could not, so an engine
//! retries failures of its own, never a wrong answer.

use std::path::Path;

use harness_agent::{Observer, StopSignal};

use crate::Error;
use crate::one::{Context, RunningCommands, run_one};
use crate::result::TaskResult;
use crate::spec::Tasks;

/// The variables an engine names a job's index in, read in this order: Kubernetes'
/// Indexed Jobs, then Slurm's job arrays.
pub const INDEX_VARIABLES: [&str; 2] = ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"];

/// The index the engine gave this job.
///
/// # Errors
///
/// None of [`INDEX_VARIABLES`] is set, or the first set is not a number.
pub fn index_from_env() -> Result<usize, Error> {
    index_from(|name| std::env::var(name).ok())
}

/// The index in the first of [`INDEX_VARIABLES`] that `lookup` finds.
///
/// # Errors
///
/// As [`index_from_env`].
pub fn index_from(lookup: impl Fn(&str) -> Option<String>) -> Result<usize, Error> {
    for name in INDEX_VARIABLES {
        if let Some(value) = lookup(name) {
            return value
                .trim()
                .parse()
                .map_err(|_| Error::BadIndexVariable { name, value });
        }
    }
    Err(Error::NoIndex)
}

/// Runs task line `index` of `tasks` and writes its result into `OUT/<id>/`, with at most
/// `max_inflight` model requests at once across the processes sharing `out` (`None`: no
/// cap; see [`crate::ModelSlots`]).
///
/// # Errors
///
/// No such line, a line that is not a task, a run stopped before it finished
/// ([`Error::Interrupted`]), or a result that could not be written: in each case no result
/// was written. A task that fails is not an error: its result says so.
pub fn run_index(
    tasks: &Tasks,
    index: usize,
    out: &Path,
    observer: &mut dyn Observer,
    stop: StopSignal,
    commands: RunningCommands,
    max_inflight: Option<usize>,
) -> Result<TaskResult, Error> {
    let spec = tasks.task(index)?;
    let context = Context {
        tasks_dir: tasks.dir(),
        tasks_file: tasks.path(),
        out,
        observer,
        stop,
        commands,
        max_inflight,
    };
    let ran = run_one(index, spec, context);
    if ran.interrupted {
        return Err(Error::Interrupted);
    }
    ran.write(out)?;
    Ok(ran.result)
}

/// Writes `line` to the file [`crate::RESULT_LINE_VARIABLE`] names, when it names one: a
/// Kubernetes pod names its termination message file there, so `kubectl get pods` shows
/// each index's result without the volume. Not set, nothing is written.
///
/// # Errors
///
/// The file cannot be written.
pub fn write_result_line(line: &str) -> Result<(), Error> {
    let Some(path) = std::env::var_os(crate::RESULT_LINE_VARIABLE) else {
        return Ok(());
    };
    let path = std::path::PathBuf::from(path);
    std::fs::write(&path, line).map_err(|source| Error::Write { path, source })
}

/// The result task line `index` already has in `out`, for `--resume`: an engine that
/// runs an index again after its result was written (a retried pod, a requeued array
/// task) then keeps it.
///
/// # Errors
///
/// No such line, a line that is not a task, or a `result.json` that cannot be read.
pub fn kept_result(tasks: &Tasks, index: usize, out: &Path) -> Result<Option<TaskResult>, Error> {
    let spec = tasks.task(index)?;
    crate::result::read(&crate::result::task_dir(out, &spec.id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_index_comes_first_then_slurm_s() {
        let both = |name: &str| match name {
            "JOB_COMPLETION_INDEX" => Some("3".to_owned()),
            "SLURM_ARRAY_TASK_ID" => Some("5".to_owned()),
            _ => None,
        };
        assert_eq!(index_from(both).unwrap(), 3);
        let slurm = |name: &str| (name == "SLURM_ARRAY_TASK_ID").then(|| "5".to_owned());
        assert_eq!(index_from(slurm).unwrap(), 5);
        assert!(matches!(index_from(|_| None), Err(Error::NoIndex)));
        let bad = |name: &str| (name == "SLURM_ARRAY_TASK_ID").then(|| "x".to_owned());
        let error = index_from(bad).unwrap_err();
        assert_eq!(
            error.to_string(),
            "SLURM_ARRAY_TASK_ID=\"x\" is not a task index: it must be a number from 0"
        );
    }

    #[test]
    fn an_index_past_the_file_or_on_a_bad_line_writes_nothing() {
        let out = tempfile::tempdir().unwrap();
        let tasks = Tasks::parse(Path::new("tasks.jsonl"), "{\"id\": \"a\"}\n");
        let run = |index| {
            run_index(
                &tasks,
                index,
                out.path(),
                &mut (),
                StopSignal::new(),
                RunningCommands::default(),
                None,
            )
        };
        let error = run(1).unwrap_err();
        assert_eq!(
            error.to_string(),
            "there is no task 1: the task file has 1, numbered from 0"
        );
        let error = run(0).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("tasks.jsonl:1: \"repo\": missing field"),
            "{error}"
        );
        assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
    }
}
