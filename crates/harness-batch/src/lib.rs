//! Many tasks at once: `harness batch`. A task file holds one task per line (an id, a
//! repository, the task, its verification command and any run settings); each task runs in
//! its own fresh clone, with its own undo store, exactly as `harness run` runs one, and
//! leaves its own result. This crate reads the task file, runs one task in-process, runs a
//! batch locally as child processes, and collects the results; the `harness` command is
//! its front end. It prints nothing, and it never runs a task in the user's checkout.
//!
//! ```
//! use std::path::Path;
//!
//! let text = r#"{"id": "fix-add", "repo": "calc", "task": "make the test pass", "verify": "python3 -m unittest"}
//! {"id": "typo", "repo": "calc", "task": "fix the typo", "max_steps": "ten"}
//! "#;
//! let tasks = harness_batch::Tasks::parse(Path::new("tasks.jsonl"), text);
//! assert_eq!(tasks.task(0)?.id, "fix-add");
//! // One bad line is reported with its line and field, and does not stop the others.
//! let errors: Vec<String> = tasks.errors().map(ToString::to_string).collect();
//! assert_eq!(
//!     errors,
//!     [r#"tasks.jsonl:2: "max_steps": invalid type: string "ten", expected u32"#]
//! );
//! # Ok::<(), harness_batch::Error>(())
//! ```
//!
//! # The parts
//!
//! - **The task file** (`spec.rs`): [`Tasks`], each line a [`TaskSpec`] or a
//!   [`LineError`]; its JSON Schema is `docs/batch-task.schema.json`, held to the type by
//!   a test.
//! - **A task's working copy** (`workdir.rs`): `OUT/<id>/work`, a fresh `git clone`
//!   (`--no-hardlinks` for a local path; a URL's `ref` checked out after).
//! - **One task** (`one.rs`): [`run_one`] clones, prepares, runs and finishes it through
//!   `harness-app`; a task that cannot be prepared is an `error` result, not a panic. Its
//!   commands have the whole output directory but their own working copy, the task file and
//!   the undo stores hidden (`harness_app::Request::hidden_around`), so no task reads or
//!   writes another's working copy, result or store, under bwrap or Landlock.
//! - **Its files** (`result.rs`): `OUT/<id>/result.json` ([`TaskResult`]), `patch.diff`
//!   and `transcript.jsonl`, each written atomically (`atomic.rs`), the result last.
//! - **The index contract** (`index.rs`): [`run_index`] runs exactly one task line, the
//!   one `--index` or the engine's variable ([`index_from_env`]) names.
//! - **The model, shared** (`slots.rs`, `gate.rs`): with `--max-inflight K`, at most K
//!   model requests at once across every process of the batch, each holding one of the
//!   [`ModelSlots`] (`OUT/.model-slots/`, a `flock` the kernel releases when its holder
//!   dies); each task's time inside requests and waiting for a slot, in its result.
//! - **The local runner** (`local.rs`): [`run_local`], `jobs` child processes at a time,
//!   each running the index contract; a crashed or killed child is an `error` result.
//! - **Collecting** (`collect.rs`): [`collect`] gathers `OUT/*/result.json` into
//!   `results.jsonl`, `summary.json` and `summary.md`.
//! - **On Slurm** (`slurm.rs`): [`slurm_script`] renders an `sbatch` script that runs
//!   the task file as a job array, each index running the index contract.
//! - **On Kubernetes** (`k8s/`): [`k8s_manifests`] renders an Indexed Job, the task file
//!   as its ConfigMap, the model Service, a NetworkPolicy and the results claim, built
//!   from typed objects; each index runs the index contract.
//! - **In words** (`text.rs`): a [`progress_line`] as each task finishes and the results
//!   [`table`], for a front end to print.
//!
//! # Why child processes
//!
//! A run changes process-wide state (it becomes a child subreaper, it handles the ending
//! signals, its commands are killed with it), and a harness that crashes or is killed
//! must cost one task, not the batch. A child per task gives each run the process
//! `harness run` would have, and is the same process an engine's job runs, so a local
//! batch and a Slurm or Kubernetes one produce the same files.

mod atomic;
mod collect;
mod error;
mod gate;
mod index;
mod k8s;
mod local;
mod one;
mod result;
mod slots;
mod slurm;
mod spec;
mod text;
mod workdir;

pub use collect::{Collected, RESULTS_FILE, SUMMARY_JSON, SUMMARY_MD, Summary, collect, markdown};
pub use error::{Error, LineError};
pub use index::{
    INDEX_VARIABLES, index_from, index_from_env, kept_result, run_index, write_result_line,
};
pub use k8s::{
    BACKOFF_LIMIT_PER_INDEX, CONFIGMAP_LIMIT, IMAGE, K8sOptions, MODEL_SERVICE, Manifests, OUT_DIR,
    RESULT_LINE_VARIABLE, RESULTS_CLAIM, TASKS_DIR, TTL_SECONDS, k8s_manifests,
};
pub use local::{Local, LocalReport, Progress, run_local};
pub use one::{Context, Ran, RunningCommands, run_one};
pub use result::{
    DiffStat, LOG_FILE, PATCH_FILE, RESULT_FILE, Status, TRANSCRIPT_FILE, TaskResult, WORK_DIR,
    create_out_dir, read as read_result, task_dir,
};
pub use slots::{ModelSlots, SLOTS_DIR, Slot};
pub use slurm::{START_MARGIN, SlurmOptions, slurm_script};
pub use spec::{Entry, Source, TaskSpec, Tasks};
pub use text::{progress_line, table};
pub use workdir::clone_workdir;
