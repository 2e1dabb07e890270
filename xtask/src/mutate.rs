//! `cargo xtask mutate`: prove that the tests of the safety crates bite.
//!
//! cargo-mutants changes the code one small way at a time (a condition negated,
//! a `<` turned into `<=`, a function body replaced by a default value) and runs
//! the crate's tests against each change. A mutant the tests still pass is
//! "missed": a guard whose removal no test would notice. The goal is zero missed
//! mutants in every crate listed in [`SAFETY_CRATES`].
//!
//! Each crate is run on its own so the table can say where a problem is, with
//! its own output directory under `target/mutants/<crate>/mutants.out`.
//!
//! `harness-exec` kills process trees, and a mutant can widen what it kills (to
//! every process newer than the command, say). So that crate runs in a PID
//! namespace of its own, under a small init that reaps orphans (`cargo xtask
//! reap`), and its tree-killing module runs one job at a time so that a mutant
//! cannot kill the build of another job.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// The crates whose every guard must have a test that fails without it.
const SAFETY_CRATES: &[&str] = &[
    "harness-sandbox",
    "harness-exec",
    "harness-edit",
    "harness-undo",
    "harness-schema",
    "harness-tools",
];

/// Crates whose tests kill processes, with the files whose mutants must run one
/// job at a time: a mutant there can kill anything newer than the command,
/// which includes a parallel job's build.
const PROCESS_KILLERS: &[(&str, &[&str])] =
    &[("harness-exec", &["crates/harness-exec/src/tree.rs"])];

/// Pinned so results do not change under us when cargo-mutants releases.
const CARGO_MUTANTS_VERSION: &str = "27.1.0";

/// Runs `cargo xtask mutate [-p CRATE]... [--jobs N] [--timeout SECS]`.
pub(crate) fn run(args: &[String]) -> Result<ExitCode> {
    let options = Options::parse(args)?;
    let root = workspace_root();
    ensure_cargo_mutants()?;

    let mut reports = Vec::new();
    for krate in &options.crates {
        reports.push(mutate_crate(&root, krate, &options)?);
    }

    print!("{}", render_table(&reports));
    let missed: Vec<&String> = reports.iter().flat_map(|r| &r.missed).collect();
    if missed.is_empty() {
        println!("\nno missed mutants");
        return Ok(ExitCode::SUCCESS);
    }
    println!("\nmissed mutants (each needs a test that fails when it is applied):");
    for line in &missed {
        println!("  {line}");
    }
    Ok(ExitCode::FAILURE)
}

/// What the command line asked for.
#[derive(Debug)]
struct Options {
    /// The crates to mutate, in order; every safety crate when none is named.
    crates: Vec<String>,
    /// Parallel build-and-test jobs. Two suit a 2-core machine: one job builds
    /// while the other runs tests.
    jobs: usize,
    /// A fixed per-mutant test timeout; cargo-mutants derives one from the
    /// baseline test run when this is `None`.
    timeout: Option<u64>,
    /// A unified diff (`git diff main > FILE`): only mutants on the lines it
    /// changes are tested, so a branch checks its own code in minutes.
    in_diff: Option<PathBuf>,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options> {
        let mut crates = Vec::new();
        let mut jobs = default_jobs();
        let mut timeout = None;
        let mut in_diff = None;
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = |flag: &str| {
                args.next()
                    .with_context(|| format!("{flag} needs a value"))
                    .cloned()
            };
            match arg.as_str() {
                "-p" | "--package" => crates.push(value(arg)?),
                "-j" | "--jobs" => {
                    jobs = value(arg)?
                        .parse()
                        .context("--jobs takes a positive number")?
                }
                "--timeout" => {
                    timeout = Some(
                        value(arg)?
                            .parse()
                            .context("--timeout takes a number of seconds")?,
                    )
                }
                "--in-diff" => {
                    let file = PathBuf::from(value(arg)?);
                    // cargo-mutants runs from the workspace root, not from here.
                    in_diff = Some(
                        std::path::absolute(&file)
                            .with_context(|| format!("--in-diff {}", file.display()))?,
                    )
                }
                other => bail!("unknown argument {other:?} (see `cargo xtask help`)"),
            }
        }
        if jobs == 0 {
            bail!("--jobs takes a positive number");
        }
        for krate in &crates {
            if !SAFETY_CRATES.contains(&krate.as_str()) {
                bail!(
                    "{krate:?} is not a safety crate; choose from: {}",
                    SAFETY_CRATES.join(", ")
                );
            }
        }
        if crates.is_empty() {
            crates = SAFETY_CRATES.iter().map(|s| s.to_string()).collect();
        }
        Ok(Options {
            crates,
            jobs,
            timeout,
            in_diff,
        })
    }
}

/// The outcome of mutating one crate, read back from cargo-mutants' lists.
#[derive(Debug)]
struct CrateReport {
    name: String,
    caught: usize,
    missed: Vec<String>,
    timed_out: usize,
    unviable: usize,
    duration: Duration,
}

impl CrateReport {
    fn add(&mut self, pass: PassCounts) {
        self.caught += pass.caught;
        self.missed.extend(pass.missed);
        self.timed_out += pass.timed_out;
        self.unviable += pass.unviable;
    }

    fn total(&self) -> usize {
        self.caught + self.missed.len() + self.timed_out + self.unviable
    }
}

fn mutate_crate(root: &Path, krate: &str, options: &Options) -> Result<CrateReport> {
    let manifest = root.join("crates").join(krate).join("Cargo.toml");
    if !manifest.is_file() {
        bail!("{krate} has no manifest at {}", manifest.display());
    }
    let serial_files = PROCESS_KILLERS
        .iter()
        .find(|(name, _)| *name == krate)
        .map(|(_, files)| *files);

    println!("=== mutating {krate}");
    let started = Instant::now();
    let mut report = CrateReport {
        name: krate.to_string(),
        caught: 0,
        missed: Vec::new(),
        timed_out: 0,
        unviable: 0,
        duration: Duration::ZERO,
    };
    match serial_files {
        None => {
            let pass = Pass {
                output: krate.to_string(),
                jobs: options.jobs,
                files: Files::All,
                isolated: false,
            };
            report.add(run_pass(root, krate, options, &pass)?);
        }
        Some(files) => {
            let parallel = Pass {
                output: krate.to_string(),
                jobs: options.jobs,
                files: Files::Except(files),
                isolated: true,
            };
            let serial = Pass {
                output: format!("{krate}-serial"),
                jobs: 1,
                files: Files::Only(files),
                isolated: true,
            };
            report.add(run_pass(root, krate, options, &parallel)?);
            report.add(run_pass(root, krate, options, &serial)?);
        }
    }
    report.duration = started.elapsed();
    Ok(report)
}

/// One run of cargo-mutants over some of a crate's files.
struct Pass<'a> {
    /// The directory under `target/mutants/` for its results.
    output: String,
    /// Parallel jobs.
    jobs: usize,
    /// Which files' mutants to test.
    files: Files<'a>,
    /// Whether to run in a PID namespace of its own, under `cargo xtask reap`.
    isolated: bool,
}

/// A selection of a crate's source files.
enum Files<'a> {
    All,
    Only(&'a [&'a str]),
    Except(&'a [&'a str]),
}

/// What one pass found, read back from cargo-mutants' outcome lists.
struct PassCounts {
    caught: usize,
    missed: Vec<String>,
    timed_out: usize,
    unviable: usize,
}

fn run_pass(root: &Path, krate: &str, options: &Options, pass: &Pass) -> Result<PassCounts> {
    let output = root.join("target").join("mutants").join(&pass.output);
    fs::create_dir_all(&output).with_context(|| format!("creating {}", output.display()))?;
    // A run with no mutant to test (an --in-diff that touches none) writes no lists, and
    // the last run's would then be read as this one's.
    let results = output.join("mutants.out");
    if results.exists() {
        fs::remove_dir_all(&results)
            .with_context(|| format!("removing the last results, {}", results.display()))?;
    }

    let mut command = if pass.isolated {
        isolated_command()?
    } else {
        Command::new(cargo())
    };
    command
        .current_dir(root)
        .args(["mutants", "--package", krate, "--colors", "never"])
        .arg("--jobs")
        .arg(pass.jobs.to_string())
        .arg("--output")
        .arg(&output);
    match pass.files {
        Files::All => {}
        Files::Only(files) => {
            for file in files {
                command.arg("--file").arg(file);
            }
        }
        Files::Except(files) => {
            for file in files {
                command.arg("--exclude").arg(file);
            }
        }
    }
    if let Some(timeout) = options.timeout {
        command.arg("--timeout").arg(timeout.to_string());
    }
    if let Some(diff) = &options.in_diff {
        command.arg("--in-diff").arg(diff);
    }
    if has_nextest() {
        // nextest runs the test binaries in parallel; per mutant that is most of the time.
        command.args(["--test-tool", "nextest"]);
    }

    let status = command
        .status()
        .context("running cargo mutants (is it installed?)")?;
    // cargo-mutants: 0 all caught, 2 some missed, 3 some timed out. Anything
    // else means the mutants were not all tested, so the counts would lie.
    match status.code() {
        Some(0 | 2 | 3) => {}
        Some(4) => bail!(
            "the tests of {krate} fail before any mutation; fix them first (log: {})",
            results.join("log").display()
        ),
        _ => bail!("cargo mutants failed on {krate} ({status})"),
    }
    Ok(PassCounts {
        caught: read_list(&results.join("caught.txt"))?.len(),
        missed: read_list(&results.join("missed.txt"))?,
        timed_out: read_list(&results.join("timeout.txt"))?.len(),
        unviable: read_list(&results.join("unviable.txt"))?.len(),
    })
}

/// `cargo` started as init of a new PID namespace: `unshare` then `cargo xtask reap cargo`.
/// When the reaper exits, the kernel kills whatever is left in the namespace.
fn isolated_command() -> Result<Command> {
    let reaper = std::env::current_exe().context("finding the xtask executable")?;
    let mut command = Command::new("unshare");
    // Root may create a PID namespace directly; anyone else needs a user namespace too.
    if !rustix::process::geteuid().is_root() {
        command.args(["--user", "--map-root-user"]);
    }
    command
        .args(["--pid", "--fork", "--mount-proc"])
        .arg(reaper)
        .arg("reap")
        .arg(cargo());
    Ok(command)
}

fn render_table(reports: &[CrateReport]) -> String {
    let header = [
        "crate",
        "mutants",
        "caught",
        "missed",
        "timed out",
        "unviable",
        "duration",
    ];
    let mut rows = vec![header.map(String::from).to_vec()];
    for r in reports {
        rows.push(vec![
            r.name.clone(),
            r.total().to_string(),
            r.caught.to_string(),
            r.missed.len().to_string(),
            r.timed_out.to_string(),
            r.unviable.to_string(),
            format_duration(r.duration),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|col| rows.iter().map(|row| row[col].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::from("\n");
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(col, (cell, width))| {
                if col == 0 {
                    format!("{cell:<width$}")
                } else {
                    format!("{cell:>width$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn format_duration(duration: Duration) -> String {
    let secs = duration.as_secs();
    format!("{}m{:02}s", secs / 60, secs % 60)
}

/// Reads one of cargo-mutants' outcome lists: one mutant per line, absent when empty.
fn read_list(path: &Path) -> Result<Vec<String>> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(text.lines().map(str::to_string).collect()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(err) => Err(err).with_context(|| format!("reading {}", path.display())),
    }
}

/// Installs the pinned cargo-mutants when the one on `PATH` is missing or another version.
fn ensure_cargo_mutants() -> Result<()> {
    let installed = Command::new(cargo())
        .args(["mutants", "--version"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string());
    if installed
        .as_deref()
        .is_some_and(|v| v.ends_with(CARGO_MUTANTS_VERSION))
    {
        return Ok(());
    }
    println!("=== installing cargo-mutants {CARGO_MUTANTS_VERSION} (about 5 minutes, once)");
    let status = Command::new(cargo())
        .args(["install", "--locked", "cargo-mutants", "--version"])
        .arg(CARGO_MUTANTS_VERSION)
        .status()
        .context("running cargo install")?;
    if !status.success() {
        bail!("cargo install cargo-mutants@{CARGO_MUTANTS_VERSION} failed ({status})");
    }
    Ok(())
}

fn has_nextest() -> bool {
    Command::new(cargo())
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|out| out.status.success())
}

fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(2))
}

/// The cargo that runs us, so `cargo +toolchain xtask` stays on that toolchain.
fn cargo() -> PathBuf {
    std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from)
}

fn workspace_root() -> PathBuf {
    // xtask/ sits directly under the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask is a member directly under the workspace root")
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn all_safety_crates_by_default() {
        let options = Options::parse(&[]).unwrap();
        assert_eq!(options.crates, SAFETY_CRATES);
    }

    #[test]
    fn named_crates_in_order() {
        let options = Options::parse(&args(&[
            "-p",
            "harness-exec",
            "--package",
            "harness-sandbox",
        ]))
        .unwrap();
        assert_eq!(options.crates, ["harness-exec", "harness-sandbox"]);
    }

    #[test]
    fn refuses_a_crate_that_is_not_a_safety_crate() {
        let err = Options::parse(&args(&["-p", "harness-cli"])).unwrap_err();
        assert!(err.to_string().contains("not a safety crate"), "{err}");
    }

    #[test]
    fn in_diff_is_made_absolute_for_cargo_mutants() {
        let options = Options::parse(&args(&["--in-diff", "branch.diff"])).unwrap();
        let diff = options.in_diff.unwrap();
        assert!(diff.is_absolute(), "{}", diff.display());
        assert!(diff.ends_with("branch.diff"));
        assert!(Options::parse(&[]).unwrap().in_diff.is_none());
    }

    #[test]
    fn refuses_zero_jobs_and_unknown_flags() {
        assert!(Options::parse(&args(&["--jobs", "0"])).is_err());
        assert!(Options::parse(&args(&["--frobnicate"])).is_err());
        assert!(Options::parse(&args(&["-p"])).is_err());
    }

    #[test]
    fn table_counts_every_outcome() {
        let report = CrateReport {
            name: "harness-sandbox".into(),
            caught: 40,
            missed: vec!["src/lib.rs:1:1: replace f -> bool with true".into()],
            timed_out: 2,
            unviable: 7,
            duration: Duration::from_secs(125),
        };
        let table = render_table(&[report]);
        let row = table
            .lines()
            .find(|l| l.starts_with("harness-sandbox"))
            .unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells,
            ["harness-sandbox", "50", "40", "1", "2", "7", "2m05s"]
        );
    }
}
