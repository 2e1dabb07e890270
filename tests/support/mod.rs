//! What the end-to-end tests share: throwaway git repositories made from `fixtures/`, the
//! real `harness` binary run against them, and a stub model server that replays a scripted
//! conversation (in the style of ripgrep's `tests/util.rs`).

#![allow(dead_code)]

pub(crate) mod slurm;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use harness_stub_server::{Reply, StubServer};
use serde_json::{Value, json};
use tempfile::TempDir;

/// The workspace's root: where `fixtures/` and the harness's source are.
pub(crate) fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/harness-cli is two levels below the root")
        .to_owned()
}

/// A temporary directory holding the workspace (`work/`), a home directory for the harness
/// (`home/`, so no user configuration applies) and room beside them for escape attempts.
pub(crate) struct Repo {
    _temporary: TempDir,
    /// The temporary directory, canonical.
    pub(crate) outer: PathBuf,
    /// The workspace, canonical.
    pub(crate) root: PathBuf,
}

impl Repo {
    /// A copy of `fixtures/<name>` made a git repository with one commit.
    pub(crate) fn from_fixture(name: &str) -> Repo {
        let repo = Repo::plain(name);
        repo.git(&["init", "--quiet"]);
        repo.git(&["add", "--all"]);
        repo.git(&["commit", "--quiet", "-m", "fixture"]);
        repo
    }

    /// A copy of `fixtures/<name>` that is not a git repository.
    pub(crate) fn plain(name: &str) -> Repo {
        let temporary = tempfile::tempdir().expect("a temporary directory");
        let outer = fs::canonicalize(temporary.path()).expect("it exists");
        let root = outer.join("work");
        copy_tree(&source_root().join("fixtures").join(name), &root);
        fs::create_dir(outer.join("home")).expect("a home directory");
        Repo {
            _temporary: temporary,
            outer,
            root,
        }
    }

    /// Runs git in the workspace, as a test author.
    pub(crate) fn git(&self, args: &[&str]) -> String {
        let output = Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(["-c", "user.name=test", "-c", "user.email=test@localhost"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("git runs");
        assert!(
            output.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("git prints UTF-8 here")
    }

    /// Writes `relative` in the workspace.
    pub(crate) fn file(&self, relative: &str, content: &str) {
        fs::write(self.root.join(relative), content).expect("write a file");
    }

    /// Reads `relative` in the workspace.
    pub(crate) fn read(&self, relative: &str) -> String {
        fs::read_to_string(self.root.join(relative)).expect("read a file")
    }

    /// Every file of the workspace with its bytes, except `.git/` and `__pycache__/`
    /// (ignored by the fixture's `.gitignore`: undo leaves ignored files alone by design).
    pub(crate) fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        snapshot_into(&self.root, &self.root, &mut files);
        files
    }

    /// `harness ARGS`, run in the workspace with an empty home and no color.
    pub(crate) fn harness(&self, args: &[&str]) -> Run {
        Run::of(self.command(args).output().expect("harness runs"))
    }

    /// `harness ARGS` started by the program `wrapper` (its argv, the harness's after it),
    /// with the environment of every other run: how a parent's state reaches the harness.
    pub(crate) fn harness_through(&self, wrapper: &[&str], args: &[&str]) -> Run {
        Run::of(
            self.through(wrapper, args)
                .output()
                .expect("the wrapper runs"),
        )
    }

    /// [`Repo::harness_through`], started and left running, its output piped, for a
    /// wrapper that `exec`s the harness (so the child's pid is the harness's).
    pub(crate) fn spawn_through(&self, wrapper: &[&str], args: &[&str]) -> Child {
        self.through(wrapper, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the wrapper starts")
    }

    /// `harness ARGS` with the extra environment variables `vars`.
    pub(crate) fn harness_with_env(&self, args: &[&str], vars: &[(&str, &str)]) -> Run {
        let mut command = self.command(args);
        command.envs(vars.iter().copied());
        Run::of(command.output().expect("harness runs"))
    }

    /// `harness ARGS` with stdout and stderr on a terminal (a pseudo-terminal `script`
    /// makes) and colours on. What the terminal printed comes back as stdout, with the
    /// terminal's own `\r\n` line ends turned back into `\n`.
    pub(crate) fn harness_on_terminal(&self, args: &[&str]) -> Run {
        let mut line = vec![env!("CARGO_BIN_EXE_harness")];
        line.extend_from_slice(args);
        let mut script = Command::new("script");
        script
            .args(["--quiet", "--return", "--command"])
            .arg(shell_words::join(line))
            .arg("/dev/null")
            .current_dir(&self.root)
            .stdin(Stdio::null());
        // The environment of every other run, but with colours.
        for (key, value) in self.command(&[]).get_envs() {
            match value {
                Some(value) => script.env(key, value),
                None => script.env_remove(key),
            };
        }
        script.env_remove("NO_COLOR");
        let mut run = Run::of(script.output().expect("script runs"));
        run.stdout_bytes = String::from_utf8_lossy(&run.stdout_bytes)
            .replace("\r\n", "\n")
            .into_bytes();
        run.stdout = String::from_utf8_lossy(&run.stdout_bytes).into_owned();
        run
    }

    /// Writes the user's configuration file (in the test's home directory).
    pub(crate) fn user_config(&self, text: &str) {
        let directory = self.outer.join("home/.config/harness");
        fs::create_dir_all(&directory).expect("the user's configuration directory");
        fs::write(directory.join("config.toml"), text).expect("write the user's configuration");
    }

    /// Commits everything in the workspace, as a test author.
    pub(crate) fn commit_all(&self, message: &str) {
        self.git(&["add", "--all"]);
        self.git(&["commit", "--quiet", "-m", message]);
    }

    /// `harness ARGS`, started and left running.
    pub(crate) fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("harness starts")
    }

    /// Starts the harness with `args` and a pipe to its stdin, for a client to write to.
    pub(crate) fn spawn_with_stdin(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("harness starts")
    }

    /// The command of `wrapper` starting `harness ARGS` as [`Repo::command`] would.
    fn through(&self, wrapper: &[&str], args: &[&str]) -> Command {
        let harness = self.command(args);
        let mut command = Command::new(wrapper[0]);
        command
            .args(&wrapper[1..])
            .arg(harness.get_program())
            .args(harness.get_args())
            .current_dir(&self.root)
            .stdin(Stdio::null());
        for (key, value) in harness.get_envs() {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        command
    }

    /// `sh -c LINE` in the workspace, with the environment of every run and `vars`: how a
    /// user runs a command line the harness printed.
    pub(crate) fn shell(&self, line: &str, vars: &[(&str, &str)]) -> Run {
        let mut command = Command::new("sh");
        command.arg("-c").arg(line);
        self.environment(&mut command).envs(vars.iter().copied());
        Run::of(command.output().expect("sh runs"))
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_harness"));
        command.args(args);
        self.environment(&mut command);
        command
    }

    /// The environment of every run: in the workspace, an empty home, no color.
    fn environment<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        command
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .env("HOME", self.outer.join("home"))
            .env("NO_COLOR", "1")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("OLLAMA_HOST")
            .env_remove("RUST_LOG")
    }

    /// The run directories of the workspace's undo store (under the empty home's
    /// `.local/state/harness/`, outside the workspace); the path may not exist yet.
    pub(crate) fn runs_dir(&self) -> PathBuf {
        let stores = self.outer.join("home/.local/state/harness");
        let store = fs::read_dir(&stores)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .find(|dir| dir.join("harness-workspace").is_file())
            .unwrap_or_else(|| stores.join("none"));
        store.join("harness/runs")
    }

    /// The records of the latest run's transcript.
    pub(crate) fn transcript(&self) -> Vec<Value> {
        let runs = self.runs_dir();
        let mut ids: Vec<PathBuf> = fs::read_dir(&runs)
            .expect("runs are recorded")
            .map(|entry| entry.expect("a run directory").path())
            .collect();
        ids.sort();
        let path = ids.last().expect("one run").join("transcript.jsonl");
        fs::read_to_string(&path)
            .expect("a transcript")
            .lines()
            .map(|line| serde_json::from_str(line).expect("each line is JSON"))
            .collect()
    }

    /// The transcript's records of type `kind`.
    pub(crate) fn records(&self, kind: &str) -> Vec<Value> {
        self.transcript()
            .into_iter()
            .filter(|record| record["type"] == kind)
            .collect()
    }
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create a directory");
    for entry in fs::read_dir(from).expect("read a fixture directory") {
        let entry = entry.expect("a fixture entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            if entry.file_name() != "__pycache__" {
                copy_tree(&entry.path(), &target);
            }
        } else {
            fs::copy(entry.path(), target).expect("copy a fixture file");
        }
    }
}

fn snapshot_into(root: &Path, directory: &Path, files: &mut BTreeMap<PathBuf, Vec<u8>>) {
    for entry in fs::read_dir(directory).expect("read a directory") {
        let entry = entry.expect("an entry");
        let name = entry.file_name();
        if name == ".git" || name == "__pycache__" {
            continue;
        }
        let path = entry.path();
        if entry.file_type().expect("a file type").is_dir() {
            snapshot_into(root, &path, files);
        } else {
            let relative = path.strip_prefix(root).expect("under the root").to_owned();
            files.insert(relative, fs::read(&path).expect("read a file"));
        }
    }
}

/// What the binary under test prints as the start of a command line: its absolute path,
/// quoted, since the tests' `PATH` does not lead to it (see `program.rs`).
pub(crate) fn program() -> String {
    shell_words::quote(env!("CARGO_BIN_EXE_harness")).into_owned()
}

/// What a run of `harness` did.
pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// stdout as it was printed, byte for byte.
    pub(crate) stdout_bytes: Vec<u8>,
    /// stderr as it was printed, byte for byte.
    pub(crate) stderr_bytes: Vec<u8>,
}

impl Run {
    pub(crate) fn of(output: Output) -> Run {
        Run {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            stdout_bytes: output.stdout,
            stderr_bytes: output.stderr,
        }
    }

    /// Panics, showing everything, unless the exit status is `code`.
    pub(crate) fn assert_exit(&self, code: i32) -> &Run {
        assert_eq!(self.code, Some(code), "exit status\n{self}");
        self
    }

    /// Panics unless stdout contains each of `parts`.
    pub(crate) fn assert_stdout_has(&self, parts: &[&str]) -> &Run {
        for part in parts {
            assert!(self.stdout.contains(part), "stdout lacks {part:?}\n{self}");
        }
        self
    }

    /// Panics unless stderr contains each of `parts`.
    pub(crate) fn assert_stderr_has(&self, parts: &[&str]) -> &Run {
        for part in parts {
            assert!(self.stderr.contains(part), "stderr lacks {part:?}\n{self}");
        }
        self
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "--- exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// A stub Ollama server: it reports a model with a 32,768-token context and answers each
/// chat with the next turn of a script.
pub(crate) struct Model {
    pub(crate) server: StubServer,
}

/// One scripted answer of the model.
pub(crate) enum Turn {
    /// Calls tools, in order.
    Calls(Vec<(&'static str, Value)>),
    /// Says something without calling a tool: "done".
    Text(&'static str),
}

impl Turn {
    pub(crate) fn call(name: &'static str, arguments: Value) -> Turn {
        Turn::Calls(vec![(name, arguments)])
    }

    /// The answer as Ollama streams it: newline-delimited JSON.
    fn ndjson(&self) -> String {
        let message = match self {
            Turn::Calls(calls) => json!({
                "role": "assistant",
                "content": "",
                "tool_calls": calls
                    .iter()
                    .map(|(name, arguments)| json!({"function": {"name": name, "arguments": arguments}}))
                    .collect::<Vec<_>>(),
            }),
            Turn::Text(text) => json!({"role": "assistant", "content": text}),
        };
        let first = json!({"model": "stub", "message": message, "done": false});
        let last = json!({
            "model": "stub",
            "message": {"role": "assistant", "content": ""},
            "done": true,
            "done_reason": "stop",
            "prompt_eval_count": 1000,
            "eval_count": 20,
        });
        format!("{first}\n{last}\n")
    }
}

impl Model {
    pub(crate) fn start() -> Model {
        let server = StubServer::start().expect("a stub server");
        let show = json!({
            "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
            "capabilities": ["completion", "tools"],
        });
        server.reply_always("POST", "/api/show", Reply::json(200, show.to_string()));
        Model { server }
    }

    /// Queues `turns` as the answers to the next chats, in order.
    pub(crate) fn script(&self, turns: Vec<Turn>) -> &Model {
        for turn in turns {
            self.server
                .reply("POST", "/api/chat", Reply::ndjson(turn.ndjson()));
        }
        self
    }

    /// Like [`Model::script`], each answer sent `delay` after its request arrived: a server
    /// that takes its time, serving any number of requests at once.
    pub(crate) fn script_slow(&self, turns: Vec<Turn>, delay: std::time::Duration) -> &Model {
        for turn in turns {
            self.server.reply(
                "POST",
                "/api/chat",
                Reply::ndjson(turn.ndjson()).delay_first_byte(delay),
            );
        }
        self
    }

    pub(crate) fn url(&self) -> String {
        self.server.url()
    }

    /// The bodies of the chat requests received, as JSON.
    pub(crate) fn chats(&self) -> Vec<Value> {
        self.server
            .requests_to("/api/chat")
            .iter()
            .map(|request| serde_json::from_str(&request.body_text()).expect("a JSON body"))
            .collect()
    }
}

/// Says why a test is skipped (on stderr), where what it needs is missing; under
/// `HARNESS_CI_ALL_TIERS=1` (CI, which installs everything) a missing need fails it instead.
pub(crate) fn skip(message: &str) {
    assert!(
        std::env::var_os("HARNESS_CI_ALL_TIERS").is_none(),
        "{message} (required under HARNESS_CI_ALL_TIERS=1)"
    );
    #[allow(clippy::print_stderr)] // a skipped test says why, on stderr
    {
        eprintln!("skipped: {message}");
    }
}
