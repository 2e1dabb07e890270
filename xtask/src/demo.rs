//! `cargo xtask demo`: the agent on a throwaway git repository, with a real model.
//!
//! 1. Copy `fixtures/calc` (a Python project with a failing test) to a new temporary
//!    directory, and make it a git repository with one commit.
//! 2. Find a model server: Ollama, if it answers at `OLLAMA_HOST` (or its default address);
//!    else the local llama.cpp server of `cargo xtask local-model`, started in the
//!    background (built and downloaded first, once).
//! 3. Build `harness` (saying so, with cargo's own progress) and run `harness run` on the
//!    repository with `python3 -m unittest -q` as the verification command, and print where
//!    the repository is, how to review and undo (commands that work as printed: the built
//!    binary by its path, since `harness` is not on `PATH`), and how to stop the model
//!    server the demo left running.
//!
//! The repository is left in place for review; it is in the system's temporary directory.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail, ensure};

/// The fixture the demo copies.
const FIXTURE: &str = "fixtures/calc";

/// The task the agent is given.
const TASK: &str = "make the failing test pass";

/// The verification command.
const VERIFY: &str = "python3 -m unittest -q";

/// The model `cargo xtask local-model` serves (its alias).
const LOCAL_MODEL: &str = "qwen2.5-coder-1.5b-instruct-q4_k_m";

/// Runs the task with the arguments after `demo`; arguments after `--` go to `harness run`.
pub(crate) fn run(args: &[String]) -> ExitCode {
    let (ours, extra) = match args.iter().position(|arg| arg == "--") {
        Some(split) => (&args[..split], &args[split + 1..]),
        None => (args, &[][..]),
    };
    let mut server = Server::Auto;
    for arg in ours {
        match arg.as_str() {
            "--local" => server = Server::Local,
            other => {
                eprintln!("error: unknown argument {other:?}\n\nsee `cargo xtask help`");
                return ExitCode::from(2);
            }
        }
    }
    match demo(server, extra) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Which model server the demo uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Server {
    /// Ollama if it answers, else the local llama.cpp server.
    Auto,
    /// The local llama.cpp server.
    Local,
}

fn demo(server: Server, extra: &[String]) -> Result<ExitCode> {
    let root = workspace_root();
    let repository = fresh_repository(&root.join(FIXTURE))?;
    eprintln!("demo repository: {}", repository.display());

    let mut local_server_stop = None;
    let model_flags = match server {
        Server::Auto if ollama_answers() => {
            eprintln!("model server: Ollama (it answered at its address)");
            Vec::new()
        }
        _ => {
            eprintln!("model server: llama.cpp's llama-server, via `cargo xtask local-model`");
            let url = start_local_model()?;
            local_server_stop = Some(stop_line(&url));
            vec![
                "--api".to_owned(),
                "openai".to_owned(),
                "--host".to_owned(),
                url,
                "--model".to_owned(),
                LOCAL_MODEL.to_owned(),
            ]
        }
    };

    let harness = build_harness(&root)?;
    let program = shell_words::quote(&harness.display().to_string()).into_owned();
    let mut command = Command::new(&harness);
    command
        .current_dir(&root)
        .arg("run")
        .arg("--workspace")
        .arg(&repository)
        .args(["--verify", VERIFY])
        .args(&model_flags)
        .args(extra)
        .arg(TASK);
    eprintln!(
        "running: {program} run --workspace {} --verify {VERIFY:?} {} {TASK:?}",
        repository.display(),
        model_flags.join(" ")
    );
    let status = command
        .status()
        .with_context(|| format!("running {}", harness.display()))?;

    let workspace = shell_words::quote(&repository.display().to_string()).into_owned();
    println!(
        "\nThe demo repository is {workspace}\n\
         \x20 review:  {program} diff --workspace {workspace}\n\
         \x20 undo:    {program} undo --workspace {workspace}\n\
         \x20 or look: git -C {workspace} status\n\
         (`harness` is the binary just built; `cargo install --path crates/harness-cli` puts it \
         on PATH)"
    );
    if let Some(stop) = &local_server_stop {
        println!("{stop}");
    }
    // harness's own exit status: 0 verified, 1 not verified, 2 usage, 3 model server, 130.
    let code = status.code().unwrap_or(1);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// Builds `harness` with cargo, in the profile and target directory of this xtask, and
/// returns the binary's path. Cargo's own progress shows: a first build takes minutes.
fn build_harness(root: &Path) -> Result<PathBuf> {
    let xtask = env::current_exe().context("finding the xtask executable")?;
    let directory = xtask
        .parent()
        .context("the xtask executable has no directory")?;
    // `cargo run` puts xtask in target/<profile>/; harness goes beside it.
    let release = directory.file_name().is_some_and(|name| name == "release");
    eprintln!(
        "building the harness (cargo build{} -p harness-cli; the first build takes a few \
         minutes)...",
        if release { " --release" } else { "" }
    );
    let mut command = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command
        .current_dir(root)
        .args(["build", "-p", "harness-cli", "--bin", "harness"]);
    if release {
        command.arg("--release");
    }
    let status = command
        .status()
        .context("running `cargo build -p harness-cli`")?;
    ensure!(
        status.success(),
        "`cargo build -p harness-cli` failed: {status}"
    );
    let harness = directory.join("harness");
    ensure!(
        harness.is_file(),
        "cargo built harness, but not at {}: is CARGO_TARGET_DIR set for one cargo and not \
         the other?",
        harness.display()
    );
    Ok(harness)
}

/// What the demo says about the model server it leaves running at `url`, with how to stop it.
fn stop_line(url: &str) -> String {
    let port = url
        .rsplit(':')
        .next()
        .and_then(|port| port.trim_end_matches('/').parse::<u16>().ok());
    match port.and_then(crate::local_model::running_server) {
        Some(pid) => format!(
            "The model server (llama-server, about 2 GB of memory) is still running at {url}, \
             for the next demo; stop it: kill {pid}"
        ),
        None => format!(
            "The model server (llama-server, about 2 GB of memory) is still running at {url}, \
             for the next demo; stop it with `pkill -x llama-server` if nothing else uses it"
        ),
    }
}

/// The workspace's root directory: xtask's parent.
fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_owned()
}

/// A copy of `fixture` in a new temporary directory, committed as a git repository.
fn fresh_repository(fixture: &Path) -> Result<PathBuf> {
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let repository = env::temp_dir().join(format!("harness-demo-{}-{stamp}", std::process::id()));
    copy_tree(fixture, &repository)
        .with_context(|| format!("copying {} to {}", fixture.display(), repository.display()))?;
    git(&repository, &["init", "--quiet"])?;
    git(&repository, &["add", "--all"])?;
    git(
        &repository,
        &[
            "-c",
            "user.name=harness demo",
            "-c",
            "user.email=demo@localhost",
            "commit",
            "--quiet",
            "-m",
            "The calc project, with a failing test",
        ],
    )?;
    Ok(repository)
}

/// Copies the files of `from` into a new directory `to`, recursively.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            if entry.file_name() == "__pycache__" {
                continue;
            }
            copy_tree(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn git(directory: &Path, args: &[&str]) -> Result<()> {
    let status = Command::new("git")
        .arg("-C")
        .arg(directory)
        .args(args)
        .stdin(Stdio::null())
        .status()
        .context("running git (is it installed?)")?;
    ensure!(status.success(), "git {} failed: {status}", args.join(" "));
    Ok(())
}

/// True if and only if Ollama answers `/api/version` at `OLLAMA_HOST` or its default address,
/// read by harness-ollama exactly as `harness run` will read it.
fn ollama_answers() -> bool {
    let Ok(client) = harness_ollama::Client::new(harness_ollama::Config::new(
        harness_ollama::Api::Ollama,
        LOCAL_MODEL,
    )) else {
        return false;
    };
    crate::local_model::answers_ok(&format!("{}/api/version", client.base_url()))
}

/// Starts (or finds) the local llama.cpp server and returns its base URL.
fn start_local_model() -> Result<String> {
    let xtask = env::current_exe().context("finding the xtask executable")?;
    let output = Command::new(xtask)
        .args(["local-model", "--background", "--print-url"])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .context("running `cargo xtask local-model`")?;
    if !output.status.success() {
        bail!(
            "`cargo xtask local-model --background` failed: {}",
            output.status
        );
    }
    let url = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    ensure!(
        url.starts_with("http://"),
        "`cargo xtask local-model` printed no URL: {url:?}"
    );
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixture_is_copied_and_committed() {
        let fixture = workspace_root().join(FIXTURE);
        let repository = fresh_repository(&fixture).unwrap();
        assert!(repository.join("calc.py").is_file());
        assert!(repository.join("test_calc.py").is_file());
        let status = Command::new("git")
            .arg("-C")
            .arg(&repository)
            .args(["status", "--porcelain"])
            .output()
            .unwrap();
        assert!(status.status.success());
        assert_eq!(String::from_utf8_lossy(&status.stdout), "", "a clean tree");
        fs::remove_dir_all(&repository).unwrap();
    }
}
