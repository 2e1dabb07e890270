//! `harness batch TASKS --emit slurm`: an `sbatch` script that runs the task file as a
//! Slurm job array, one task line per array index, each index running the index contract
//! (`harness batch TASKS --out OUT --resume`, the index from `SLURM_ARRAY_TASK_ID`).
//! [`slurm_script`] only renders text: it reads no file and submits nothing.
//!
//! The script holds, in this order:
//!
//! 1. `#!/bin/sh` and comments: where it came from, how to submit it, how to collect the
//!    results afterwards (`harness batch collect OUT`), and which task each index runs.
//! 2. `#SBATCH` lines: the job name, `--array=0-(n-1)` (with `%N` when `jobs` is given),
//!    the time limit of one array task, and `--output=OUT/slurm-%A_%a.out` (one file per
//!    index).
//! 3. One command: `exec HARNESS batch TASKS --out OUT --resume`, every path absolute and
//!    quoted for the shell. `exec` makes the harness the job step's process, so Slurm's
//!    `SIGTERM` at the time limit reaches it and it stops its commands.
//!
//! Every task line is an index, bad lines too, so the indices are the task file's as
//! `--index` counts them. A bad line's array task does what `--index` does with it: it
//! exits 2 with the error in its output file and writes no result, as a local batch
//! reports the line and runs nothing for it.

use std::path::Path;
use std::time::Duration;

use harness_agent::{Budgets, Verification};

use crate::Error;
use crate::spec::Tasks;

/// What the script runs, and where, besides the tasks.
#[derive(Clone, Copy, Debug)]
pub struct SlurmOptions<'a> {
    /// The `harness` program each array task runs: an absolute path, since the job may
    /// start in another directory.
    pub program: &'a Path,
    /// The task file, absolute.
    pub tasks: &'a Path,
    /// The output directory, absolute. Slurm opens each index's output file in it before
    /// the job runs, so it must exist by then.
    pub out: &'a Path,
    /// Array tasks run at once (`%N`); `None` leaves it to the cluster.
    pub jobs: Option<usize>,
}

/// Time an array task has beyond its run's budget: the clone and the start before the
/// run, and writing the result after it. The run's time is checked between model turns,
/// so a check started just before the end may run its own timeout on top
/// ([`Verification::DEFAULT_TIMEOUT`], added apart).
pub const START_MARGIN: Duration = Duration::from_secs(120);

/// The `sbatch` script that runs `tasks` as a job array.
///
/// The time limit of an array task is the largest run budget in the file (a line's
/// `timeout`, else the default run's), plus [`Verification::DEFAULT_TIMEOUT`] and
/// [`START_MARGIN`], rounded up to a minute. A `timeout` set in a repository's
/// `harness.toml` is not seen here: the repositories are not cloned until the jobs run.
///
/// ```
/// use std::path::Path;
///
/// use harness_batch::{SlurmOptions, Tasks, slurm_script};
///
/// let text = "{\"id\": \"a\", \"repo\": \"calc\", \"task\": \"t\", \"timeout\": 600}\n{\"id\": \"b\"}\n";
/// let tasks = Tasks::parse(Path::new("/srv/tasks.jsonl"), text);
/// let options = SlurmOptions {
///     program: Path::new("/usr/local/bin/harness"),
///     tasks: tasks.path(),
///     out: Path::new("/srv/out"),
///     jobs: Some(4),
/// };
/// let script = slurm_script(&tasks, &options)?;
/// // Both lines are indices; the bad one exits 2 when its array task runs it.
/// assert!(script.contains("\n#SBATCH --array=0-1%4\n"));
/// // 10 minutes of run, 10 for the last check, 2 to start.
/// assert!(script.contains("\n#SBATCH --time=00:22:00\n"));
/// assert!(script.ends_with(
///     "\nexec /usr/local/bin/harness batch /srv/tasks.jsonl --out /srv/out --resume\n"
/// ));
/// # Ok::<(), harness_batch::Error>(())
/// ```
///
/// # Errors
///
/// A task file without task lines ([`Error::NoTasks`]), a path that is not UTF-8 (a
/// script is text: [`Error::NotUtf8`]), or an output directory whose path an `#SBATCH`
/// line cannot hold ([`Error::SbatchPath`]).
pub fn slurm_script(tasks: &Tasks, options: &SlurmOptions<'_>) -> Result<String, Error> {
    let count = tasks.entries().len();
    if count == 0 {
        return Err(Error::NoTasks {
            path: tasks.path().to_owned(),
        });
    }
    let [program, tasks_path, out] = [options.program, options.tasks, options.out].map(|path| {
        path.to_str().ok_or_else(|| Error::NotUtf8 {
            path: path.to_owned(),
        })
    });
    let (program, tasks_path, out) = (program?, tasks_path?, out?);
    // sbatch reads `#SBATCH` lines itself, not through a shell: no quoting to lean on.
    if out
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || "\"'\\".contains(c))
    {
        return Err(Error::SbatchPath {
            path: options.out.to_owned(),
        });
    }
    let mut script = String::new();
    let mut line = |text: &str| {
        script.push_str(text);
        script.push('\n');
    };
    line("#!/bin/sh");
    line(&format!(
        "# Written by `harness batch --emit slurm`: the {count} task lines of {}",
        one_line(tasks_path)
    ));
    line("# as a Slurm job array, one task line per index. Submit it with `sbatch FILE`");
    line("# (`sbatch --wait FILE` returns when every index has ended); then gather the");
    line("# results into results.jsonl and the summary with");
    // A line break in a quoted path would end the comment and start a command.
    line(&one_line(&format!(
        "#   {} batch collect {}",
        harness_app::quote(program),
        harness_app::quote(out)
    )));
    line("# An index with a result keeps it when run again (--resume): resubmit to run the");
    line("# rest. A line that is not a task exits 2 with its error in its output file.");
    line("#");
    line("# index  task");
    for entry in tasks.entries() {
        let task = match &entry.parsed {
            Ok(spec) => spec.id.clone(),
            Err(error) => format!("(not a task: {})", one_line(&error.to_string())),
        };
        line(&format!("# {:>5}  {task}", entry.index));
    }
    line(&format!("#SBATCH --job-name={}", job_name(options.tasks)));
    let throttle = options
        .jobs
        .map(|jobs| format!("%{}", jobs.max(1)))
        .unwrap_or_default();
    line(&format!("#SBATCH --array=0-{}{throttle}", count - 1));
    line(&format!("#SBATCH --time={}", time_limit(tasks)));
    // `%` starts a Slurm file name pattern; `%%` is a plain one.
    let pattern = out.trim_end_matches('/').replace('%', "%%");
    line(&format!("#SBATCH --output={pattern}/slurm-%A_%a.out"));
    line("");
    line(&format!(
        "exec {} batch {} --out {} --resume",
        harness_app::quote(program),
        harness_app::quote(tasks_path),
        harness_app::quote(out)
    ));
    Ok(script)
}

/// The time limit of one array task, as Slurm writes it: `HH:MM:SS`, or `D-HH:MM:SS` from
/// a day on.
fn time_limit(tasks: &Tasks) -> String {
    let limit = index_limit(tasks);
    let minutes = limit.as_secs().div_ceil(60);
    let (days, hours, minutes) = (minutes / (24 * 60), minutes / 60 % 24, minutes % 60);
    if days > 0 {
        format!("{days}-{hours:02}:{minutes:02}:00")
    } else {
        format!("{hours:02}:{minutes:02}:00")
    }
}

/// The time one index may take: the largest run budget in the file (a line's `timeout`,
/// else the default run's), plus [`Verification::DEFAULT_TIMEOUT`] and [`START_MARGIN`].
/// A bad line has no budget: the default stands. Shared by the Slurm and Kubernetes
/// renderers.
pub(crate) fn index_limit(tasks: &Tasks) -> Duration {
    let default = Budgets::default().max_duration;
    let budget = tasks
        .entries()
        .iter()
        .filter_map(|entry| entry.parsed.as_ref().ok())
        .map(|spec| spec.timeout.map_or(default, Duration::from_secs))
        .max()
        .unwrap_or(default);
    // A task line may hold any u64 of seconds: no overflow, just a very long limit.
    budget
        .saturating_add(Verification::DEFAULT_TIMEOUT)
        .saturating_add(START_MARGIN)
}

/// `harness-<the task file's stem>`, in letters, digits, `.`, `_` and `-`: the job's name
/// in `squeue`.
fn job_name(tasks: &Path) -> String {
    let stem = tasks
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let safe: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("harness-{safe}")
}

/// `text` with line breaks and other control characters made spaces, for a comment line.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::os::unix::ffi::OsStrExt as _;

    use super::*;

    fn tasks(text: &str) -> Tasks {
        Tasks::parse(Path::new("/srv/evals/tasks.jsonl"), text)
    }

    fn script(tasks: &Tasks, out: &str, jobs: Option<usize>) -> Result<String, Error> {
        slurm_script(
            tasks,
            &SlurmOptions {
                program: Path::new("/opt/harness/bin/harness"),
                tasks: tasks.path(),
                out: Path::new(out),
                jobs,
            },
        )
    }

    fn sbatch_lines(script: &str) -> Vec<&str> {
        script
            .lines()
            .filter(|line| line.starts_with("#SBATCH"))
            .collect()
    }

    const TWO: &str = concat!(
        "{\"id\": \"a\", \"repo\": \"r\", \"task\": \"t\"}\n",
        "{\"id\": \"b\", \"repo\": \"r\", \"task\": \"t\"}\n",
    );

    #[test]
    fn one_index_per_task_line_with_the_throttle_only_when_asked() {
        let tasks = tasks(TWO);
        let throttled = script(&tasks, "/srv/out", Some(4)).unwrap();
        assert!(throttled.contains("#SBATCH --array=0-1%4\n"), "{throttled}");
        let free = script(&tasks, "/srv/out", None).unwrap();
        assert!(free.contains("#SBATCH --array=0-1\n"), "{free}");
        assert_eq!(
            sbatch_lines(&free),
            [
                "#SBATCH --job-name=harness-tasks",
                "#SBATCH --array=0-1",
                "#SBATCH --time=00:42:00",
                "#SBATCH --output=/srv/out/slurm-%A_%a.out",
            ]
        );
        assert!(free.ends_with(
            "\nexec /opt/harness/bin/harness batch /srv/evals/tasks.jsonl --out /srv/out --resume\n"
        ));
    }

    macro_rules! time_limits {
        ($($lines:expr => $limit:expr,)*) => {
            $(
                assert_eq!(time_limit(&tasks($lines)), $limit, "{}", $lines);
            )*
        };
    }

    #[test]
    fn the_time_limit_is_the_largest_budget_plus_the_last_check_and_the_start() {
        time_limits! {
            // The default run's 30 minutes, a 10-minute check, 2 minutes to start.
            TWO => "00:42:00",
            "{\"id\": \"a\", \"repo\": \"r\", \"task\": \"t\", \"timeout\": 61}" => "00:14:00",
            concat!(
                "{\"id\": \"a\", \"repo\": \"r\", \"task\": \"t\", \"timeout\": 60}\n",
                "{\"id\": \"b\", \"repo\": \"r\", \"task\": \"t\", \"timeout\": 7200}\n",
            ) => "02:12:00",
            // A line with no budget has the default's, larger than 60 s.
            concat!(
                "{\"id\": \"a\", \"repo\": \"r\", \"task\": \"t\", \"timeout\": 60}\n",
                "{\"id\": \"b\", \"repo\": \"r\", \"task\": \"t\"}\n",
            ) => "00:42:00",
            "{\"id\": \"a\", \"repo\": \"r\", \"task\": \"t\", \"timeout\": 172800}" => "2-00:12:00",
            "{\"id\": \"a\", \"repo\": \"r\", \"task\": \"t\", \"timeout\": 18446744073709551615}"
                => "213503982334601-07:01:00",
            // A bad line has no budget: the default stands.
            "{\"id\": \"a\", \"timeout\": 99999}" => "00:42:00",
        }
    }

    #[test]
    fn a_bad_line_keeps_its_index_and_is_named_in_the_comments() {
        let tasks = tasks(concat!(
            "{\"id\": \"a\", \"repo\": \"r\", \"task\": \"t\"}\n",
            "{\"id\": \"b\", \"repo\": \"r\"}\n",
            "{\"id\": \"c\", \"repo\": \"r\", \"task\": \"t\"}\n",
        ));
        let text = script(&tasks, "/srv/out", Some(2)).unwrap();
        assert!(text.contains("#SBATCH --array=0-2%2\n"), "{text}");
        assert!(text.contains("#     0  a\n"), "{text}");
        assert!(
            text.contains("#     1  (not a task: tasks.jsonl:2: \"task\": missing field `task`)\n"),
            "{text}"
        );
        assert!(text.contains("#     2  c\n"), "{text}");
    }

    #[test]
    fn paths_are_quoted_for_the_shell_and_a_percent_is_plain_in_the_output_pattern() {
        let tasks = Tasks::parse(Path::new("/srv/my evals/it's.jsonl"), TWO);
        let text = slurm_script(
            &tasks,
            &SlurmOptions {
                program: Path::new("/opt/my harness/harness"),
                tasks: tasks.path(),
                out: Path::new("/srv/100%/out/"),
                jobs: None,
            },
        )
        .unwrap();
        assert!(text.contains("#SBATCH --job-name=harness-it-s\n"), "{text}");
        assert!(
            text.contains("#SBATCH --output=/srv/100%%/out/slurm-%A_%a.out\n"),
            "{text}"
        );
        assert!(
            text.ends_with(
                "\nexec '/opt/my harness/harness' batch '/srv/my evals/it'\\''s.jsonl' --out '/srv/100%/out/' --resume\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn no_task_line_or_an_output_path_sbatch_cannot_read_is_an_error() {
        let error = script(&tasks("\n\n"), "/srv/out", None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "/srv/evals/tasks.jsonl has no task lines: there is nothing to run"
        );
        for out in [
            "/srv/my out",
            "/srv/\"out\"",
            "/srv/o'ut",
            "/srv/a\\b",
            "/srv/a\nb",
        ] {
            let error = script(&tasks(TWO), out, None).unwrap_err();
            assert!(
                matches!(error, Error::SbatchPath { ref path } if path.as_path() == Path::new(out))
            );
        }
        let error = script(&tasks(TWO), "/srv/my out", None).unwrap_err();
        assert!(error.to_string().contains("choose an --out"), "{error}");
        let not_utf8 = Path::new(std::ffi::OsStr::from_bytes(b"/srv/\xff"));
        let error = slurm_script(
            &tasks(TWO),
            &SlurmOptions {
                program: not_utf8,
                tasks: Path::new("/srv/tasks.jsonl"),
                out: Path::new("/srv/out"),
                jobs: None,
            },
        )
        .unwrap_err();
        assert!(matches!(error, Error::NotUtf8 { ref path } if path == not_utf8));
    }
}
