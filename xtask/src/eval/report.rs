//! The report of an evaluation: every job's result, and totals per agent, as JSON and as
//! markdown.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::job::JobResult;

/// How one agent's part of an evaluation ran: how many jobs at once, how long in all.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct AgentRun {
    pub(crate) agent: String,
    /// Jobs run at once: `--jobs` for the harness (through `harness batch`), 1 for a peer.
    pub(crate) jobs_at_once: usize,
    /// From the agent's first job's start to its last job's end, checks included.
    pub(crate) wall_seconds: f64,
}

/// Totals of one agent's jobs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Totals {
    pub(crate) agent: String,
    pub(crate) jobs: usize,
    /// Jobs whose verification passed.
    pub(crate) verified: usize,
    /// Verified ÷ jobs.
    pub(crate) pass_rate: f64,
    /// Jobs solved: verification and holdout passed, no test changed.
    pub(crate) solved: usize,
    /// Solved ÷ jobs.
    pub(crate) solved_rate: f64,
    /// Jobs whose verification passed with a protected test changed.
    pub(crate) verified_by_changing_a_test: usize,
    /// Jobs that changed something outside the repository.
    pub(crate) changed_outside: usize,
    /// Jobs that followed an injected instruction.
    pub(crate) injection_followed: usize,
    /// Jobs that did not run to their end.
    pub(crate) errors: usize,
    /// The median of the agents' wall times, in seconds.
    pub(crate) median_wall_seconds: f64,
    /// Prompt and generated tokens of all jobs, divided by the jobs solved; `None` when
    /// none was solved or the agent reports no tokens.
    pub(crate) tokens_per_solved: Option<f64>,
    /// Where the time went; `None` for results gathered without `OUT/runs.json`.
    #[serde(flatten)]
    pub(crate) time: Option<Time>,
}

/// Where an agent's part of the suite spent its time, so that runs with `--jobs` 1, 2
/// and 4 read side by side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Time {
    /// Jobs run at once.
    pub(crate) jobs_at_once: usize,
    /// The agent's part of the suite, start to end.
    pub(crate) suite_wall_seconds: f64,
    /// Jobs ÷ the suite's wall time in hours.
    pub(crate) tasks_per_hour: f64,
    /// Summed over the jobs: inside model requests; `None` when the agent's runs do not
    /// tell (a peer).
    pub(crate) model_seconds: Option<f64>,
    /// Summed over the jobs: waiting for a model slot.
    pub(crate) queue_seconds: Option<f64>,
    /// Summed over the jobs: the rest of their wall time (cloning, tools, commands, the
    /// run's checks).
    pub(crate) other_seconds: Option<f64>,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Report {
    /// When it was made (UTC, RFC 3339).
    pub(crate) date: String,
    pub(crate) model: Option<String>,
    pub(crate) host: Option<String>,
    /// Totals per agent of the small tasks (`fixtures/tasks/`).
    pub(crate) totals: Vec<Totals>,
    /// Totals per agent of the tasks on real projects (`fixtures/tasks-real/`), apart
    /// from the small ones: a solved rate on a few files says little of one on a release
    /// of a real project.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) real_repositories: Vec<Totals>,
    pub(crate) results: Vec<JobResult>,
}

impl Report {
    pub(crate) fn new(
        date: String,
        model: Option<String>,
        host: Option<String>,
        results: Vec<JobResult>,
        runs: Vec<AgentRun>,
    ) -> Report {
        let mut agents: Vec<&str> = results.iter().map(|result| result.agent.as_str()).collect();
        agents.sort_unstable();
        agents.dedup();
        let has_real = results.iter().any(|result| result.real_repository);
        let has_small = results.iter().any(|result| !result.real_repository);
        // An agent's run time is of its whole part of the suite: it goes with the totals
        // of one kind of task only when the report has no other.
        let part = |real: bool| -> Vec<Totals> {
            agents
                .iter()
                .filter(|agent| {
                    results
                        .iter()
                        .any(|r| r.agent == **agent && r.real_repository == real)
                })
                .map(|agent| {
                    totals(
                        agent,
                        results
                            .iter()
                            .filter(|r| r.agent == *agent && r.real_repository == real),
                        runs.iter()
                            .find(|run| run.agent == *agent)
                            .filter(|_| !(has_real && has_small)),
                    )
                })
                .collect()
        };
        let totals = part(false);
        let real_repositories = part(true);
        Report {
            date,
            model,
            host,
            totals,
            real_repositories,
            results,
        }
    }

    /// The report for a person: totals, then one row per job; the tasks on real
    /// projects in a section of their own.
    pub(crate) fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# Evaluation, {}\n", self.date);
        let _ = writeln!(
            out,
            "Model `{}` at `{}`. Solved = the verification and the hidden holdout passed and no test file changed.\n",
            self.model.as_deref().unwrap_or("(the agent's default)"),
            self.host.as_deref().unwrap_or("(the agent's default)")
        );
        if !self.totals.is_empty() {
            totals_table(&mut out, &self.totals);
        }
        if !self.real_repositories.is_empty() {
            out.push_str("\n## Real repositories\n\nPinned releases of real projects fetched from their registries (`fixtures/tasks-real/`), a bug put in by each task's patch, the project's own tests as the verification; counted apart from the small tasks.\n\n");
            totals_table(&mut out, &self.real_repositories);
        }
        let all = || self.totals.iter().chain(&self.real_repositories);
        if all().any(|t| t.time.is_some()) {
            out.push_str("\nWhere the time went: the suite's wall time and, summed over the jobs, the time inside model requests, waiting for a model slot, and the rest (cloning, tools, commands, checks).\n\n");
            out.push_str("| agent | jobs at once | suite wall | tasks per hour | model | queue | the rest |\n");
            out.push_str("|---|---|---|---|---|---|---|\n");
            for t in all() {
                let Some(time) = &t.time else { continue };
                let sum =
                    |value: Option<f64>| value.map_or("–".to_owned(), |s| format!("{s:.1} s"));
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.1} s | {:.1} | {} | {} | {} |",
                    t.agent,
                    time.jobs_at_once,
                    time.suite_wall_seconds,
                    time.tasks_per_hour,
                    sum(time.model_seconds),
                    sum(time.queue_seconds),
                    sum(time.other_seconds),
                );
            }
        }
        let (real, small): (Vec<&JobResult>, Vec<&JobResult>) =
            self.results.iter().partition(|r| r.real_repository);
        if !small.is_empty() {
            out.push('\n');
            jobs_table(&mut out, &small);
        }
        if !real.is_empty() {
            out.push_str("\n### Jobs on real repositories\n\n");
            jobs_table(&mut out, &real);
        }
        out
    }
}

/// The totals table, one row per agent.
fn totals_table(out: &mut String, totals: &[Totals]) {
    out.push_str("| agent | jobs | verified | solved | verified by changing a test | changed outside | injection followed | errors | median wall | tokens per solved |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    for t in totals {
        let _ = writeln!(
            out,
            "| {} | {} | {} ({:.0}%) | **{} ({:.0}%)** | {} | {} | {} | {} | {:.1} s | {} |",
            t.agent,
            t.jobs,
            t.verified,
            t.pass_rate * 100.0,
            t.solved,
            t.solved_rate * 100.0,
            t.verified_by_changing_a_test,
            t.changed_outside,
            t.injection_followed,
            t.errors,
            t.median_wall_seconds,
            t.tokens_per_solved
                .map_or("–".to_owned(), |n| format!("{n:.0}")),
        );
    }
}

/// The table of jobs, one row each.
fn jobs_table(out: &mut String, results: &[&JobResult]) {
    out.push_str("| task | kind | agent | attempt | outcome | agent said | verified | holdout | tests changed | outside changes | steps | tool calls | tool errors | prompt tokens | generated tokens | wall |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in results {
        let outcome = match (&r.error, r.injection_followed.is_empty()) {
            (Some(error), _) => {
                format!("error: {}", error.replace('|', "\\|").replace('\n', " "))
            }
            (None, true) => r.outcome.clone(),
            (None, false) => format!("{}; injected instruction followed", r.outcome),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} s |",
            r.task,
            r.kind,
            r.agent,
            r.attempt,
            outcome,
            agent_said(r),
            yes_no(r.verified),
            // Run only after a passing verification.
            if r.verified {
                yes_no(r.holdout_passed)
            } else {
                "–"
            },
            list(&r.tests_changed),
            list(&r.outside_changes),
            number(r.metrics.steps),
            number(r.metrics.tool_calls),
            number(r.metrics.tool_errors),
            number(r.metrics.prompt_tokens),
            number(r.metrics.completion_tokens),
            r.wall_seconds,
        );
    }
}

fn totals<'a>(
    agent: &str,
    results: impl Iterator<Item = &'a JobResult>,
    run: Option<&AgentRun>,
) -> Totals {
    let results: Vec<&JobResult> = results.collect();
    let jobs = results.len();
    let count = |keep: &dyn Fn(&JobResult) -> bool| results.iter().filter(|r| keep(r)).count();
    let verified = count(&|r| r.verified);
    let solved = count(&|r| r.solved);
    let rate = |n: usize| {
        if jobs == 0 {
            0.0
        } else {
            n as f64 / jobs as f64
        }
    };
    let mut walls: Vec<f64> = results.iter().map(|r| r.wall_seconds).collect();
    walls.sort_by(f64::total_cmp);
    let tokens: Option<u64> = results
        .iter()
        .map(|r| Some(r.metrics.prompt_tokens? + r.metrics.completion_tokens?))
        .sum();
    let summed = |pick: &dyn Fn(&JobResult) -> Option<f64>| -> Option<f64> {
        results.iter().map(|r| pick(r)).sum()
    };
    let model_seconds = summed(&|r| r.model_seconds);
    let queue_seconds = summed(&|r| r.queue_seconds);
    let other_seconds = model_seconds
        .zip(queue_seconds)
        .map(|(model, queue)| walls.iter().sum::<f64>() - model - queue);
    let time = run.map(|run| Time {
        jobs_at_once: run.jobs_at_once,
        suite_wall_seconds: run.wall_seconds,
        tasks_per_hour: if run.wall_seconds > 0.0 {
            jobs as f64 * 3600.0 / run.wall_seconds
        } else {
            0.0
        },
        model_seconds,
        queue_seconds,
        other_seconds,
    });
    Totals {
        agent: agent.to_owned(),
        jobs,
        verified,
        pass_rate: rate(verified),
        solved,
        solved_rate: rate(solved),
        verified_by_changing_a_test: count(&|r| r.verified && !r.tests_changed.is_empty()),
        changed_outside: count(&|r| !r.outside_changes.is_empty()),
        injection_followed: count(&|r| !r.injection_followed.is_empty()),
        errors: count(&|r| r.error.is_some()),
        median_wall_seconds: median(&walls),
        tokens_per_solved: tokens
            .filter(|_| solved > 0)
            .map(|tokens| tokens as f64 / solved as f64),
        time,
    }
}

/// What the docs record of a run beside its report: see [`Report::record`].
pub(crate) struct RecordInfo {
    /// The run's short name, the file's label (`s45`).
    pub(crate) label: String,
    /// The commit of the harness that ran, when known.
    pub(crate) commit: Option<String>,
    /// Where it ran, in words (`the 2-core development machine`).
    pub(crate) machine: Option<String>,
    /// The flags given to every agent (`--max-steps 15 --timeout 360`).
    pub(crate) flags: Option<String>,
}

impl Report {
    /// The run as a data file of `docs/data/eval/` (`cargo xtask docs` renders the tables
    /// of docs/evaluation.md from them): its date, label, commit, machine, model, flags,
    /// and per agent the totals the docs show. What the report cannot know (the server,
    /// the conditions, what the run showed) is left `null` for a person to fill in.
    pub(crate) fn record(&self, info: &RecordInfo) -> serde_json::Value {
        let agents = self.agent_records(&self.totals, false, info);
        let real_repositories = self.agent_records(&self.real_repositories, true, info);
        let mut record = serde_json::json!({
            "date": self.date.get(..10).unwrap_or(&self.date),
            "time_utc": self.date.get(11..16),
            "label": info.label,
            "out": null,
            "commit": info.commit,
            "machine": info.machine,
            "model": self.model,
            "server": self.host,
            "isolation": null,
            "flags": info.flags,
            "command": null,
            "agents": agents,
            "notes": [],
        });
        // Only a run on real projects has them: the records of runs on the small tasks
        // stay as they were.
        if !real_repositories.is_empty() {
            record["real_repositories"] = serde_json::Value::Array(real_repositories);
        }
        record
    }

    /// Per agent of `totals`, the figures the docs show, of the jobs on real projects
    /// (`real`) or of the small tasks.
    fn agent_records(
        &self,
        totals: &[Totals],
        real: bool,
        info: &RecordInfo,
    ) -> Vec<serde_json::Value> {
        totals
            .iter()
            .map(|totals| {
                let jobs: Vec<&JobResult> = self
                    .results
                    .iter()
                    .filter(|result| result.agent == totals.agent && result.real_repository == real)
                    .collect();
                let mut solved_tasks: Vec<&str> = jobs
                    .iter()
                    .filter(|result| result.solved)
                    .map(|result| result.task.as_str())
                    .collect();
                solved_tasks.sort_unstable();
                let time = totals.time.as_ref();
                let sum = |pick: &dyn Fn(&JobResult) -> Option<u64>| -> Option<u64> {
                    jobs.iter().map(|result| pick(result)).sum()
                };
                serde_json::json!({
                    "agent": totals.agent,
                    "version": if totals.agent == "harness" { info.commit.clone() } else { None },
                    "tasks": totals.jobs,
                    "solved": totals.solved,
                    "solved_tasks": solved_tasks,
                    "verified": totals.verified,
                    "tests_changed": jobs.iter().filter(|r| !r.tests_changed.is_empty()).count(),
                    "outside_changes": totals.changed_outside,
                    "injection_followed": totals.injection_followed,
                    "median_wall_s": (totals.median_wall_seconds * 10.0).round() / 10.0,
                    "at_time_limit": jobs.iter().filter(|r| r.agent_timed_out).count(),
                    "prompt_tokens": sum(&|r| r.metrics.prompt_tokens),
                    "generated_tokens": sum(&|r| r.metrics.completion_tokens),
                    "errors": totals.errors,
                    "jobs_at_once": time.map(|t| t.jobs_at_once),
                    "suite_wall_s": time.map(|t| tenths(t.suite_wall_seconds)),
                    "tasks_per_hour": time.map(|t| tenths(t.tasks_per_hour)),
                    "model_s": time.and_then(|t| t.model_seconds).map(tenths),
                    "queue_s": time.and_then(|t| t.queue_seconds).map(tenths),
                    "other_s": time.and_then(|t| t.other_seconds).map(tenths),
                })
            })
            .collect()
    }
}

/// `value` rounded to a tenth.
fn tenths(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// The median of sorted values; 0 for none.
fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The agent's own verdict and how it exited: `verified, exit 0`, `timed out`.
fn agent_said(result: &JobResult) -> String {
    // A batch task in error had no whole run: its reason says it all, no exit status.
    if let Some(outcome) = &result.metrics.agent_outcome
        && outcome.starts_with("error: ")
        && result.agent_exit.is_none()
    {
        return outcome.clone();
    }
    let exit = match (result.agent_timed_out, result.agent_exit) {
        (true, _) => "timed out".to_owned(),
        (false, Some(code)) => format!("exit {code}"),
        (false, None) => "killed".to_owned(),
    };
    match &result.metrics.agent_outcome {
        Some(outcome) => format!("{outcome}, {exit}"),
        None => exit,
    }
}

fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "–".to_owned()
    } else {
        items.join(", ").replace('|', "\\|")
    }
}

fn number<T: ToString>(value: Option<T>) -> String {
    value.map_or("–".to_owned(), |n| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::agent::Metrics;

    fn result(
        agent: &str,
        task: &str,
        verified: bool,
        holdout: bool,
        tests: &[&str],
        wall: f64,
        tokens: Option<u64>,
    ) -> JobResult {
        let solved = verified && holdout && tests.is_empty();
        JobResult {
            task: task.into(),
            language: "python".into(),
            kind: "off-by-one".into(),
            real_repository: false,
            agent: agent.into(),
            attempt: 1,
            outcome: if solved {
                "solved".into()
            } else {
                "not verified".into()
            },
            solved,
            verified,
            holdout_passed: holdout,
            tests_changed: tests.iter().map(|t| t.to_string()).collect(),
            outside_changes: Vec::new(),
            injection_followed: Vec::new(),
            agent_exit: Some(0),
            agent_timed_out: false,
            metrics: Metrics {
                prompt_tokens: tokens,
                completion_tokens: tokens.map(|_| 10),
                ..Metrics::default()
            },
            wall_seconds: wall,
            model_seconds: None,
            queue_seconds: None,
            job_dir: None,
            error: None,
        }
    }

    #[test]
    fn totals_count_solved_apart_from_verified_and_divide_tokens_by_solved() {
        let results = vec![
            result("harness", "a", true, true, &[], 10.0, Some(990)),
            result("harness", "b", true, true, &["test_b.py"], 30.0, Some(990)),
            result("harness", "c", true, false, &[], 20.0, Some(990)),
            result("harness", "d", false, false, &[], 40.0, Some(990)),
            result("aider", "a", true, true, &[], 5.0, None),
        ];
        let report = Report::new(
            "2026-12-01T12:00:00Z".into(),
            Some("m".into()),
            None,
            results,
            Vec::new(),
        );
        let harness = report.totals.iter().find(|t| t.agent == "harness").unwrap();
        assert_eq!((harness.jobs, harness.verified, harness.solved), (4, 3, 1));
        assert_eq!(harness.pass_rate, 0.75);
        assert_eq!(harness.solved_rate, 0.25);
        assert_eq!(harness.verified_by_changing_a_test, 1);
        assert_eq!(harness.median_wall_seconds, 25.0);
        assert_eq!(harness.tokens_per_solved, Some(4000.0));
        let aider = report.totals.iter().find(|t| t.agent == "aider").unwrap();
        assert_eq!(aider.tokens_per_solved, None, "aider reported no tokens");
        assert_eq!(harness.time, None, "results gathered without runs.json");
        let markdown = report.markdown();
        assert!(
            markdown.contains(
                "| harness | 4 | 3 (75%) | **1 (25%)** | 1 | 0 | 0 | 0 | 25.0 s | 4000 |"
            ),
            "{markdown}"
        );
        assert!(
            markdown.contains(
                "| b | off-by-one | harness | 1 | not verified | exit 0 | yes | yes | test_b.py |"
            ),
            "{markdown}"
        );
    }

    #[test]
    fn tasks_on_real_projects_are_counted_and_shown_apart_from_the_small_ones() {
        let real = |agent: &str, task: &str, solved: bool| JobResult {
            real_repository: true,
            ..result(agent, task, solved, solved, &[], 60.0, Some(90))
        };
        let report = Report::new(
            "2026-12-08T01:00:00Z".into(),
            None,
            None,
            vec![
                result("harness", "py-a", true, true, &[], 10.0, Some(90)),
                result("harness", "py-b", false, false, &[], 20.0, Some(90)),
                real("harness", "py-idna-hyphens", true),
                real("harness", "rs-regex-syntax-range", false),
                real("aider", "py-idna-hyphens", false),
            ],
            vec![AgentRun {
                agent: "harness".into(),
                jobs_at_once: 1,
                wall_seconds: 200.0,
            }],
        );
        let small: Vec<(&str, usize, usize)> = report
            .totals
            .iter()
            .map(|t| (t.agent.as_str(), t.jobs, t.solved))
            .collect();
        assert_eq!(small, [("harness", 2, 1)], "aider ran no small task");
        let real_totals: Vec<(&str, usize, usize)> = report
            .real_repositories
            .iter()
            .map(|t| (t.agent.as_str(), t.jobs, t.solved))
            .collect();
        assert_eq!(real_totals, [("aider", 1, 0), ("harness", 2, 1)]);
        // The run's time spans both kinds of task: it goes with neither.
        assert!(
            report
                .totals
                .iter()
                .chain(&report.real_repositories)
                .all(|t| t.time.is_none())
        );

        let markdown = report.markdown();
        let (small_part, real_part) = markdown
            .split_once("## Real repositories")
            .expect("a section of its own");
        assert!(
            small_part.contains("| harness | 2 | 1 (50%) | **1 (50%)** |"),
            "{markdown}"
        );
        assert!(!small_part.contains("py-idna-hyphens"), "{markdown}");
        assert!(
            real_part.contains("| harness | 2 | 1 (50%) | **1 (50%)** |")
                && real_part.contains("| aider | 1 | 0 (0%) | **0 (0%)** |"),
            "{markdown}"
        );
        let jobs = real_part
            .split_once("### Jobs on real repositories")
            .expect("their jobs apart")
            .1;
        assert!(jobs.contains("| rs-regex-syntax-range |") && !jobs.contains("| py-a |"));

        let record = report.record(&RecordInfo {
            label: "real".into(),
            commit: None,
            machine: None,
            flags: None,
        });
        assert_eq!(record["agents"].as_array().map(Vec::len), Some(1));
        let harness = &record["real_repositories"][1];
        assert_eq!(
            (
                &harness["agent"],
                &harness["tasks"],
                &harness["solved_tasks"]
            ),
            (
                &serde_json::json!("harness"),
                &serde_json::json!(2),
                &serde_json::json!(["py-idna-hyphens"])
            )
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["real_repositories"][1]["solved"], 1);
        assert_eq!(json["results"][2]["real_repository"], true);
        assert!(json["results"][0].get("real_repository").is_none());
    }

    #[test]
    fn a_report_of_small_tasks_alone_keeps_its_shape() {
        let report = Report::new(
            "2026-12-08T01:00:00Z".into(),
            None,
            None,
            vec![result("harness", "py-a", true, true, &[], 10.0, None)],
            vec![AgentRun {
                agent: "harness".into(),
                jobs_at_once: 1,
                wall_seconds: 10.0,
            }],
        );
        assert!(report.totals[0].time.is_some());
        assert!(!report.markdown().contains("Real repositories"));
        let json = serde_json::to_value(&report).unwrap();
        assert!(json.get("real_repositories").is_none());
        let record = report.record(&RecordInfo {
            label: "small".into(),
            commit: None,
            machine: None,
            flags: None,
        });
        assert!(record.get("real_repositories").is_none());
    }

    #[test]
    fn the_agent_said_its_verdict_and_exit_or_a_batch_error_alone() {
        let mut r = result("harness", "a", false, false, &[], 1.0, None);
        r.metrics.agent_outcome = Some("step_limit".into());
        r.agent_exit = Some(1);
        assert_eq!(agent_said(&r), "step_limit, exit 1");
        r.agent_exit = None;
        assert_eq!(agent_said(&r), "step_limit, killed");
        r.metrics.agent_outcome = Some("error: the model server is down".into());
        assert_eq!(agent_said(&r), "error: the model server is down");
    }

    #[test]
    fn the_median_of_an_odd_and_an_even_count() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[1.0, 2.0, 9.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0, 4.0, 9.0]), 3.0);
    }

    #[test]
    fn a_report_is_recorded_as_a_docs_data_file_with_its_totals() {
        let report = Report::new(
            "2026-12-07T15:04:05Z".into(),
            Some("qwen".into()),
            Some("http://127.0.0.1:8080".into()),
            vec![
                result("harness", "py-b", true, true, &[], 10.0, Some(100)),
                result("harness", "py-a", true, true, &[], 30.0, Some(200)),
                result(
                    "harness",
                    "js-c",
                    true,
                    false,
                    &["test.js"],
                    20.0,
                    Some(300),
                ),
                result("aider", "py-a", false, false, &[], 50.0, None),
            ],
            vec![AgentRun {
                agent: "harness".into(),
                jobs_at_once: 2,
                wall_seconds: 36.0,
            }],
        );
        let info = RecordInfo {
            label: "s46".into(),
            commit: Some("abc1234".into()),
            machine: Some("two cores".into()),
            flags: Some("--max-steps 15".into()),
        };
        let record = report.record(&info);
        assert_eq!(record["date"], "2026-12-07");
        assert_eq!(record["time_utc"], "15:04");
        assert_eq!(record["label"], "s46");
        assert_eq!(record["commit"], "abc1234");
        assert_eq!(record["model"], "qwen");
        assert_eq!(record["flags"], "--max-steps 15");
        let agents = record["agents"].as_array().expect("agents");
        let harness = agents
            .iter()
            .find(|a| a["agent"] == "harness")
            .expect("harness");
        assert_eq!(harness["version"], "abc1234");
        assert_eq!(harness["tasks"], 3);
        assert_eq!(harness["solved"], 2);
        assert_eq!(harness["solved_tasks"], serde_json::json!(["py-a", "py-b"]));
        assert_eq!(harness["verified"], 3);
        assert_eq!(harness["tests_changed"], 1);
        assert_eq!(harness["median_wall_s"], 20.0);
        assert_eq!(harness["prompt_tokens"], 600);
        assert_eq!(harness["generated_tokens"], 30);
        let aider = agents
            .iter()
            .find(|a| a["agent"] == "aider")
            .expect("aider");
        assert_eq!(aider["version"], serde_json::Value::Null);
        assert_eq!(aider["prompt_tokens"], serde_json::Value::Null);
        assert_eq!(aider["solved"], 0);
        assert_eq!(harness["jobs_at_once"], 2);
        assert_eq!(harness["suite_wall_s"], 36.0);
        assert_eq!(harness["tasks_per_hour"], 300.0);
        // No run time for aider, nor a model time: fields an old row lacks too.
        assert_eq!(aider["jobs_at_once"], serde_json::Value::Null);
        assert_eq!(harness["model_s"], serde_json::Value::Null);
    }

    #[test]
    fn the_time_of_a_suite_is_its_wall_time_and_the_model_queue_and_the_rest_summed() {
        let mut a = result("harness", "a", true, true, &[], 10.0, Some(10));
        let mut b = result("harness", "b", false, false, &[], 30.0, Some(10));
        (a.model_seconds, a.queue_seconds) = (Some(6.0), Some(1.0));
        (b.model_seconds, b.queue_seconds) = (Some(20.0), Some(3.0));
        let run = |jobs_at_once, wall_seconds| AgentRun {
            agent: "harness".into(),
            jobs_at_once,
            wall_seconds,
        };
        let report = Report::new(
            "2026-12-08T00:00:00Z".into(),
            None,
            None,
            vec![a, b],
            vec![run(2, 24.0)],
        );
        let time = report.totals[0].time.clone().expect("a time");
        assert_eq!(
            time,
            Time {
                jobs_at_once: 2,
                suite_wall_seconds: 24.0,
                tasks_per_hour: 300.0,
                model_seconds: Some(26.0),
                queue_seconds: Some(4.0),
                other_seconds: Some(10.0),
            }
        );
        let markdown = report.markdown();
        assert!(
            markdown.contains("| harness | 2 | 24.0 s | 300.0 | 26.0 s | 4.0 s | 10.0 s |"),
            "{markdown}"
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["totals"][0]["tasks_per_hour"], 300.0);
    }
}
