//! `cargo xtask eval`: agents on the task suite, side by side, each task in a fresh git
//! repository, and a report in markdown and JSON.
//!
//! The unit is one job (see [`job`]): a JSON spec in, a JSON result out, run by
//! `cargo xtask eval-task --spec FILE --result FILE`. `eval` writes each spec under
//! `OUT/specs/`; the harness's jobs run through one `harness batch --jobs N` (see
//! [`batch`]), the peers' one after the other; each result goes under `OUT/results/`,
//! how long each agent's part took in `OUT/runs.json`, and the whole in `OUT/report.md`
//! and `OUT/report.json`. The same spec files can be fanned out across processes or
//! machines instead (one container per task) and their results collected into one report.

mod agent;
mod batch;
mod files;
mod job;
mod peers;
mod process;
mod report;
mod source;
mod task;

#[cfg(test)]
mod end_to_end;
#[cfg(test)]
mod real;
#[cfg(test)]
mod suite;

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail, ensure};

use agent::{AgentKind, AgentSpec};
use job::{JobResult, Spec};
use report::{AgentRun, Report};

/// The flags of `cargo xtask eval`.
#[derive(Clone, Debug, PartialEq)]
struct Options {
    tasks: PathBuf,
    only: Vec<String>,
    model: Option<String>,
    api: Option<String>,
    host: Option<String>,
    attempts: u32,
    agents: Vec<AgentKind>,
    max_steps: u32,
    timeout: u64,
    out: Option<PathBuf>,
    harness: Option<PathBuf>,
    harness_args: Vec<String>,
    keep: bool,
    /// The harness's tasks run at once (`harness batch --jobs`).
    jobs: usize,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options> {
        let root = workspace_root();
        let mut options = Options {
            tasks: root.join("fixtures/tasks"),
            only: Vec::new(),
            model: None,
            api: None,
            host: None,
            attempts: 1,
            agents: Vec::new(),
            max_steps: 15,
            timeout: 360,
            out: None,
            harness: None,
            harness_args: Vec::new(),
            keep: false,
            jobs: 1,
        };
        let mut args = args.iter();
        while let Some(flag) = args.next() {
            if flag == "--keep" {
                options.keep = true;
                continue;
            }
            let Some(value) = args.next() else {
                bail!("{flag} needs a value (or is unknown): see `cargo xtask help`");
            };
            match flag.as_str() {
                "--tasks" => options.tasks = PathBuf::from(value),
                "--task" => options.only.push(value.clone()),
                "--model" => options.model = Some(value.clone()),
                "--api" => {
                    ensure!(
                        value == "ollama" || value == "openai",
                        "--api is ollama or openai, not {value:?}"
                    );
                    options.api = Some(value.clone());
                }
                "--host" => options.host = Some(value.clone()),
                "--attempts" => options.attempts = positive(flag, value)?,
                "--agent" => options.agents.push(value.parse()?),
                "--max-steps" => options.max_steps = positive(flag, value)?,
                "--timeout" => options.timeout = positive(flag, value)?,
                "--out" => options.out = Some(PathBuf::from(value)),
                "--harness" => options.harness = Some(PathBuf::from(value)),
                "--harness-arg" => options.harness_args.push(value.clone()),
                "--jobs" => options.jobs = positive(flag, value)?,
                other => bail!("unknown flag {other:?}: see `cargo xtask help`"),
            }
        }
        if options.agents.is_empty() {
            options.agents.push(AgentKind::Harness);
        }
        options.agents.sort();
        options.agents.dedup();
        Ok(options)
    }
}

fn positive<T: std::str::FromStr + PartialOrd + Default>(flag: &str, value: &str) -> Result<T> {
    match value.parse::<T>() {
        Ok(number) if number > T::default() => Ok(number),
        _ => bail!("{flag} takes a positive whole number, not {value:?}"),
    }
}

/// `cargo xtask eval ARGS`.
pub(crate) fn run(args: &[String]) -> Result<ExitCode> {
    // `--help` is answered by `main`, as for every task.
    let options = Options::parse(args)?;
    let mut tasks = task::load_suite(&options.tasks)?;
    if !options.only.is_empty() {
        for id in &options.only {
            ensure!(
                tasks.iter().any(|task| task.manifest.id == *id),
                "no task {id:?} in {}",
                options.tasks.display()
            );
        }
        tasks.retain(|task| options.only.contains(&task.manifest.id));
    }
    let date = now_rfc3339();
    let out = match &options.out {
        Some(out) => out.clone(),
        None => target_dir().join("eval").join(date.replace(':', "")),
    };
    fs::create_dir_all(out.join("specs"))?;
    fs::create_dir_all(out.join("results"))?;
    if tasks.iter().any(|task| task.manifest.source.is_some()) {
        // Each real project's release, fetched (or found in the cache), checked and given
        // its bug, under OUT/sources/ for the run's jobs to copy.
        let cache = source::cache_dir()?;
        eprintln!(
            "preparing the real projects' releases in {} (archives cached in {})",
            out.join("sources").display(),
            cache.display()
        );
        tasks = tasks
            .iter()
            .map(|task| source::prepare(task, &cache, &out.join("sources")))
            .collect::<Result<_>>()?;
    }

    let mut specs = Vec::new();
    for kind in &options.agents {
        let agent = agent_spec(*kind, &options)?;
        for task in &tasks {
            for attempt in 1..=options.attempts {
                let mut spec = Spec::new(task, agent.clone(), attempt);
                spec.keep = options.keep;
                specs.push(spec);
            }
        }
    }

    let names: Vec<String> = specs.iter().map(spec_name).collect();
    for (spec, name) in specs.iter().zip(&names) {
        let spec_path = out.join("specs").join(format!("{name}.json"));
        fs::write(&spec_path, serde_json::to_string_pretty(spec)?)?;
    }
    let (harness, peers): (Vec<usize>, Vec<usize>) =
        (0..specs.len()).partition(|&index| specs[index].agent.kind == AgentKind::Harness);
    let mut results: Vec<Option<JobResult>> = vec![None; specs.len()];
    let mut runs = Vec::new();
    let mut done = 0;
    let mut keep = |index: usize, result: JobResult| -> Result<()> {
        fs::write(
            out.join("results").join(format!("{}.json", names[index])),
            serde_json::to_string_pretty(&result)?,
        )?;
        done += 1;
        progress(done, specs.len(), &specs[index], &result);
        results[index] = Some(result);
        Ok(())
    };
    if !harness.is_empty() {
        let batch_specs: Vec<Spec> = harness.iter().map(|&index| specs[index].clone()).collect();
        eprintln!(
            "harness: {} jobs through `harness batch --jobs {}` (progress in {})",
            batch_specs.len(),
            options.jobs,
            out.join("batch.log").display()
        );
        let batched = batch::run(&batch_specs, options.jobs, &out)?;
        runs.push(AgentRun {
            agent: AgentKind::Harness.to_string(),
            jobs_at_once: options.jobs,
            wall_seconds: batched.wall_seconds,
        });
        for (&index, result) in harness.iter().zip(batched.results) {
            keep(index, result)?;
        }
    }
    for kind in &options.agents {
        let own: Vec<usize> = peers
            .iter()
            .copied()
            .filter(|&index| specs[index].agent.kind == *kind)
            .collect();
        if own.is_empty() {
            continue;
        }
        let started = std::time::Instant::now();
        for index in own {
            keep(index, job::run(&specs[index]))?;
        }
        runs.push(AgentRun {
            agent: kind.to_string(),
            jobs_at_once: 1,
            wall_seconds: started.elapsed().as_secs_f64(),
        });
    }
    // An agent run earlier into the same OUT (`--agent aider` after `--agent harness`)
    // keeps its line.
    let runs_file = out.join("runs.json");
    let mut runs_before = read_runs(&runs_file)?;
    runs_before.retain(|before| runs.iter().all(|run| run.agent != before.agent));
    runs.extend(runs_before);
    fs::write(&runs_file, serde_json::to_string_pretty(&runs)?)?;
    let results = results.into_iter().flatten().collect();
    let report = Report::new(
        date,
        options.model.clone(),
        options.host.clone(),
        results,
        runs,
    );
    write_report(&out, &report)
}

/// A job's file name under `OUT/specs/` and `OUT/results/`.
fn spec_name(spec: &Spec) -> String {
    format!("{}-{}-{}", spec.agent.kind, spec.task.id, spec.attempt)
}

/// One line on stderr for a finished job.
fn progress(done: usize, total: usize, spec: &Spec, result: &JobResult) {
    eprintln!(
        "[{done}/{total}] {} {} #{}: {}{} ({:.1} s)",
        spec.agent.kind,
        spec.task.id,
        spec.attempt,
        result.outcome,
        result
            .error
            .as_deref()
            .map(|error| format!(": {error}"))
            .unwrap_or_default(),
        result.wall_seconds
    );
}

/// `cargo xtask eval-report --out DIR`: the report of every result in `DIR/results/`, as
/// `eval` writes it at its end. It gathers the results of jobs run elsewhere
/// (`eval-task`), or of a loop stopped before its end. The model and host are those the
/// specs in `DIR/specs/` name, when they all name the same.
pub(crate) fn run_report(args: &[String]) -> Result<ExitCode> {
    let mut out = None;
    let mut record_dir = None;
    let mut info = report::RecordInfo {
        label: String::new(),
        commit: None,
        machine: None,
        flags: None,
    };
    let mut words = args.iter();
    while let Some(flag) = words.next() {
        let mut value = || {
            words
                .next()
                .cloned()
                .with_context(|| format!("eval-report: {flag} needs a value"))
        };
        match flag.as_str() {
            "--out" => out = Some(PathBuf::from(value()?)),
            "--record" => record_dir = Some(PathBuf::from(value()?)),
            "--label" => info.label = value()?,
            "--commit" => info.commit = Some(value()?),
            "--machine" => info.machine = Some(value()?),
            "--flags" => info.flags = Some(value()?),
            other => bail!(
                "eval-report: unknown argument {other:?}; it takes --out DIR [--record DIR \
                 [--label NAME] [--commit HASH] [--machine WORDS] [--flags FLAGS]]"
            ),
        }
    }
    let Some(out) = out else {
        bail!("eval-report takes --out DIR");
    };
    let results: Vec<JobResult> = read_all(&out.join("results"))?;
    ensure!(
        !results.is_empty(),
        "no results in {}",
        out.join("results").display()
    );
    let specs: Vec<Spec> = read_all(&out.join("specs"))?;
    let model = the_same(specs.iter().map(|spec| spec.agent.model.clone()));
    let host = the_same(specs.iter().map(|spec| spec.agent.host.clone()));
    // How long each agent's part took, when `eval` wrote it (not for jobs run elsewhere).
    let runs = read_runs(&out.join("runs.json"))?;
    let report = Report::new(now_rfc3339(), model, host, results, runs);
    let status = write_report(&out, &report)?;
    if let Some(dir) = record_dir {
        if info.label.is_empty() {
            info.label = out
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_else(|| "run".to_owned());
        }
        if info.commit.is_none() {
            info.commit = head_commit();
        }
        let record = report.record(&info);
        let date = record["date"].as_str().unwrap_or("undated").to_owned();
        let path = dir.join(format!("{date}-{}.json", info.label));
        ensure!(
            !path.exists(),
            "{} exists already; give the run another --label",
            path.display()
        );
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        fs::write(&path, serde_json::to_string_pretty(&record)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
        println!(
            "recorded: {} (add server, conditions and notes; then `cargo xtask docs`)",
            path.display()
        );
    }
    Ok(status)
}

/// The agents' runs `eval` wrote in `path`; none if it wrote none.
fn read_runs(path: &Path) -> Result<Vec<AgentRun>> {
    match fs::read_to_string(path) {
        Ok(text) => {
            serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
        }
        Err(_) => Ok(Vec::new()),
    }
}

/// The short hash of the workspace's `HEAD`, when git can tell it.
fn head_commit() -> Option<String> {
    let output = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(workspace_root())
        .output()
        .ok()?;
    let hash = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !hash.trim().is_empty()).then(|| hash.trim().to_owned())
}

/// Writes `OUT/report.md` and `OUT/report.json` and prints the markdown; fails when a job
/// could not run.
fn write_report(out: &Path, report: &Report) -> Result<ExitCode> {
    let markdown = report.markdown();
    fs::write(out.join("report.md"), &markdown)?;
    fs::write(
        out.join("report.json"),
        serde_json::to_string_pretty(report)?,
    )?;
    print!("{markdown}");
    println!(
        "\nreport: {}\n        {}",
        out.join("report.md").display(),
        out.join("report.json").display()
    );
    let errors = report
        .results
        .iter()
        .filter(|result| result.error.is_some())
        .count();
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Every `*.json` file in `dir`, read as a `T`, in the order of their names.
fn read_all<T: serde::de::DeserializeOwned>(dir: &Path) -> Result<Vec<T>> {
    let mut paths = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path
            .extension()
            .is_some_and(|extension| extension == "json")
        {
            paths.push(path);
        }
    }
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text =
                fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
        })
        .collect()
}

/// The one value every item has, if they all have the same.
fn the_same(mut values: impl Iterator<Item = Option<String>>) -> Option<String> {
    let first = values.next()?;
    if values.all(|value| value == first) {
        first
    } else {
        None
    }
}

/// `cargo xtask eval-task --spec FILE --result FILE`: one job.
pub(crate) fn run_task(args: &[String]) -> Result<ExitCode> {
    let (mut spec_path, mut result_path) = (None, None);
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args.next().map(PathBuf::from);
        match flag.as_str() {
            "--spec" => spec_path = value,
            "--result" => result_path = value,
            other => bail!("unknown flag {other:?}: eval-task takes --spec FILE --result FILE"),
        }
    }
    let (Some(spec_path), Some(result_path)) = (spec_path, result_path) else {
        bail!("eval-task takes --spec FILE --result FILE");
    };
    let text = fs::read_to_string(&spec_path)
        .with_context(|| format!("reading {}", spec_path.display()))?;
    let spec: Spec = serde_json::from_str(&text)
        .with_context(|| format!("reading the spec {}", spec_path.display()))?;
    let result = job::run(&spec);
    fs::write(&result_path, serde_json::to_string_pretty(&result)?)
        .with_context(|| format!("writing {}", result_path.display()))?;
    eprintln!("{} {}: {}", spec.agent.kind, spec.task.id, result.outcome);
    Ok(if result.error.is_none() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The agent of `kind` as the flags describe it, its program built or installed.
fn agent_spec(kind: AgentKind, options: &Options) -> Result<AgentSpec> {
    let program = match peers::peer(kind) {
        None => match &options.harness {
            Some(path) => path.clone(),
            None => build_harness()?,
        },
        Some(peer) => {
            ensure!(
                options.model.is_some() && options.host.is_some(),
                "{kind} runs on the same server and model as the harness: give --model and --host"
            );
            let cache =
                crate::local_model::cache_dir(env::var_os("XDG_CACHE_HOME"), env::var_os("HOME"))?;
            peer.ensure(&cache)?
        }
    };
    Ok(AgentSpec {
        kind,
        program,
        model: options.model.clone(),
        api: options.api.clone(),
        host: options.host.clone(),
        max_steps: options.max_steps,
        timeout_seconds: options.timeout,
        harness_args: match kind {
            AgentKind::Harness => options.harness_args.clone(),
            _ => Vec::new(),
        },
    })
}

/// Builds the `harness` binary and returns its path.
pub(crate) fn build_harness() -> Result<PathBuf> {
    let status = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(workspace_root())
        .args(["build", "--quiet", "-p", "harness-cli", "--bin", "harness"])
        .status()
        .context("running cargo build")?;
    ensure!(status.success(), "building harness failed: {status}");
    let binary = target_dir().join("debug/harness");
    ensure!(binary.is_file(), "cargo built no {}", binary.display());
    Ok(binary)
}

/// The workspace's root directory: xtask's parent.
pub(crate) fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_owned()
}

fn target_dir() -> PathBuf {
    env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace_root().join("target"), PathBuf::from)
}

/// Now, in UTC, as `2026-12-01T12:00:00Z`.
fn now_rfc3339() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    rfc3339(seconds)
}

/// `seconds` since 1970 as an RFC 3339 date in UTC (the civil-from-days algorithm of
/// Howard Hinnant's date library).
fn rfc3339(seconds: u64) -> String {
    let days = i64::try_from(seconds / 86_400).unwrap_or(0);
    let time = seconds % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        time / 3600,
        time % 3600 / 60,
        time % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options> {
        Options::parse(&args.iter().map(|arg| arg.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn defaults_run_the_harness_once_per_task_of_the_suite() {
        let options = parse(&[]).unwrap();
        assert_eq!(options.agents, [AgentKind::Harness]);
        assert_eq!(options.jobs, 1);
        assert_eq!(
            (options.attempts, options.max_steps, options.timeout),
            (1, 15, 360)
        );
        assert!(options.tasks.ends_with("fixtures/tasks"));
    }

    #[test]
    fn every_flag_is_read() {
        let options = parse(&[
            "--tasks",
            "/t",
            "--task",
            "py-stddev",
            "--model",
            "m",
            "--api",
            "openai",
            "--host",
            "http://h",
            "--attempts",
            "3",
            "--agent",
            "aider",
            "--agent",
            "harness",
            "--agent",
            "mini-swe-agent",
            "--max-steps",
            "9",
            "--timeout",
            "60",
            "--out",
            "/o",
            "--harness",
            "/h",
            "--harness-arg",
            "--attempts",
            "--harness-arg",
            "2",
            "--keep",
            "--jobs",
            "4",
        ])
        .unwrap();
        assert_eq!(
            options,
            Options {
                tasks: "/t".into(),
                only: vec!["py-stddev".into()],
                model: Some("m".into()),
                api: Some("openai".into()),
                host: Some("http://h".into()),
                attempts: 3,
                agents: vec![
                    AgentKind::Harness,
                    AgentKind::Aider,
                    AgentKind::MiniSweAgent
                ],
                max_steps: 9,
                timeout: 60,
                out: Some("/o".into()),
                harness: Some("/h".into()),
                harness_args: vec!["--attempts".into(), "2".into()],
                keep: true,
                jobs: 4,
            }
        );
    }

    #[test]
    fn bad_flags_are_refused_by_name() {
        for (args, says) in [
            (&["--attempts", "0"][..], "--attempts"),
            (&["--timeout", "x"], "--timeout"),
            (&["--jobs", "0"], "--jobs"),
            (&["--agent", "claude"], "claude"),
            (&["--api", "grpc"], "--api"),
            (&["--max-steps"], "--max-steps"),
            (&["--frobnicate", "1"], "--frobnicate"),
        ] {
            let error = parse(args).unwrap_err().to_string();
            assert!(error.contains(says), "{args:?}: {error}");
        }
    }

    #[test]
    fn dates_are_rfc3339_in_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_126_461), "2026-12-01T12:01:01Z");
    }
}
