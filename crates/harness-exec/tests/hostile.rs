//! The hostile-command corpus (`harness_exec::corpus`), asserted under every
//! tier with real processes, a real git repository and the real kernel.
//!
//! A tier this machine cannot run is skipped with the reason, unless
//! `HARNESS_CI_ALL_TIERS=1` (set by `.ci/run`) says every tier must run.

#![allow(clippy::print_stderr)] // a skipped row says why, on stderr

use std::fs;
use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use harness_exec::corpus::{Expect, HOSTILE_COMMANDS, HostileCommand, Observe};
use harness_exec::{Confinement, Isolation, Policy, RunOptions, Runner, Tier, preflight};

/// Set by `.ci/run`: every tier must run, none may be skipped.
const ALL_TIERS: &str = "HARNESS_CI_ALL_TIERS";

#[test]
fn write_home() {
    check_every_tier("write_home");
}

#[test]
fn append_home_file() {
    check_every_tier("append_home_file");
}

#[test]
fn chmod_home_file() {
    check_every_tier("chmod_home_file");
}

#[test]
fn setuid_program() {
    check_every_tier("setuid_program");
}

#[test]
fn write_home_python() {
    check_every_tier("write_home_python");
}

#[test]
fn write_tmp() {
    check_every_tier("write_tmp");
}

#[test]
fn write_etc() {
    check_every_tier("write_etc");
}

#[test]
fn rm_rf_git() {
    check_every_tier("rm_rf_git");
}

#[test]
fn git_update_ref() {
    check_every_tier("git_update_ref");
}

#[test]
fn git_hook() {
    check_every_tier("git_hook");
}

#[test]
fn nested_git_hook() {
    check_every_tier("nested_git_hook");
}

#[test]
fn write_harness_toml() {
    check_every_tier("write_harness_toml");
}

#[test]
fn create_harness_toml() {
    check_every_tier("create_harness_toml");
}

#[test]
fn read_ssh_key() {
    check_every_tier("read_ssh_key");
}

#[test]
fn read_harness_environ() {
    check_every_tier("read_harness_environ");
}

#[test]
fn read_outside_environ() {
    check_every_tier("read_outside_environ");
}

#[test]
fn unmount_ssh() {
    check_every_tier("unmount_ssh");
}

#[test]
fn tcp_bash() {
    check_every_tier("tcp_bash");
}

#[test]
fn tcp_python() {
    check_every_tier("tcp_python");
}

#[test]
fn tcp_curl() {
    check_every_tier("tcp_curl");
}

#[test]
fn udp_send() {
    check_every_tier("udp_send");
}

#[test]
fn keyring() {
    check_every_tier("keyring");
}

#[test]
fn unix_socket_outside() {
    check_every_tier("unix_socket_outside");
}

#[test]
fn python_multiprocessing() {
    check_every_tier("python_multiprocessing");
}

#[test]
fn socketpair() {
    check_every_tier("socketpair");
}

#[test]
fn kill_outside() {
    check_every_tier("kill_outside");
}

#[test]
fn limit_outside() {
    check_every_tier("limit_outside");
}

#[test]
fn daemon() {
    check_every_tier("daemon");
}

#[test]
fn fork_storm() {
    check_every_tier("fork_storm");
}

#[test]
fn write_workspace() {
    check_every_tier("write_workspace");
}

#[test]
fn create_top_level() {
    check_every_tier("create_top_level");
}

#[test]
fn remove_top_level() {
    check_every_tier("remove_top_level");
}

#[test]
fn private_tmp() {
    check_every_tier("private_tmp");
}

#[test]
fn git_status() {
    check_every_tier("git_status");
}

#[test]
fn git_diff() {
    check_every_tier("git_diff");
}

#[test]
fn python_unittest() {
    check_every_tier("python_unittest");
}

#[test]
fn node_test() {
    check_every_tier("node_test");
}

#[test]
fn cargo_test() {
    check_every_tier("cargo_test");
}

#[test]
fn every_row_of_the_corpus_has_its_test() {
    let source = include_str!("hostile.rs");
    for row in HOSTILE_COMMANDS {
        let test = format!(
            "#[test]\nfn {}() {{\n    check_every_tier(\"{}\");",
            row.id, row.id
        );
        assert!(source.contains(&test), "row {} has no test here", row.id);
        assert_eq!(row.test_name(), format!("harness-exec::{}", row.id));
    }
}

#[test]
fn ci_runs_every_tier() {
    // CI sets the variable; there, a tier that cannot run is a failure.
    if std::env::var_os(ALL_TIERS).is_none_or(|value| value != "1") {
        eprintln!("skipped: {ALL_TIERS} is not set (only .ci/run sets it)");
        return;
    }
    for tier in Tier::ALL {
        preflight::probe(tier).unwrap_or_else(|error| panic!("CI must run every tier: {error}"));
    }
}

/// Runs the row `id` under every tier and asserts its expected result.
fn check_every_tier(id: &str) {
    for tier in Tier::ALL {
        check(tier, id);
    }
}

/// Runs the row `id` under `tier` and asserts its expected result.
fn check(tier: Tier, id: &str) {
    let row = HOSTILE_COMMANDS
        .iter()
        .find(|row| row.id == id)
        .expect("a row of that name");
    if let Err(unavailable) = preflight::probe(tier) {
        assert!(
            std::env::var_os(ALL_TIERS).is_none_or(|value| value != "1"),
            "{ALL_TIERS}=1 but {unavailable}"
        );
        eprintln!("skipped: {unavailable}");
        return;
    }
    if let Some(missing) = row.needs.iter().find(|program| find(program).is_none()) {
        eprintln!("skipped: {missing} is not installed");
        return;
    }
    if row.id == "keyring" && !reaches_outside(row) {
        // A container whose own seccomp profile refuses keyctl (Docker's default) has
        // no keyring for a command to reach: nothing to assert there.
        eprintln!("skipped: this machine's kernel keyring cannot be reached even outside a tier");
        return;
    }
    let fixture = Fixture::new(row);
    let (got_through, said) = fixture.run(tier, row);
    let expected = row.expected(tier, preflight::host_facts().landlock_abi);
    assert_eq!(
        got_through,
        expected == Expect::Allowed,
        "{} under {tier}: expected {expected:?}",
        row.what
    );
    // Put back after the command, which is told so; refused outright otherwise.
    assert_eq!(
        said,
        expected == Expect::Repaired,
        "{} under {tier}: expected {expected:?}, the outcome says otherwise",
        row.what
    );
}

/// True if `row`'s command, run directly (no tier, no runner), prints what the row looks
/// for: the effect exists on this machine at all.
fn reaches_outside(row: &HostileCommand) -> bool {
    let Observe::Prints(text) = row.observe else {
        return true;
    };
    Command::new(row.argv[0])
        .args(&row.argv[1..])
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).contains(text))
}

/// A workspace (a git repository), a home with a test key, a TCP and a UDP
/// port and a Unix socket listening, and a victim process, for one row.
struct Fixture {
    _dir: tempfile::TempDir,
    workspace: PathBuf,
    home: PathBuf,
    token: String,
    tcp: TcpListener,
    udp: UdpSocket,
    unix: UnixListener,
    unix_socket: PathBuf,
    victim: Child,
}

impl Fixture {
    fn new(row: &HostileCommand) -> Fixture {
        static COUNT: AtomicU64 = AtomicU64::new(0);
        // Outside /tmp, so that bwrap's private /tmp does not hide them.
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let (workspace, home) = (root.join("workspace"), root.join("home"));
        let token = format!(
            "{}{:04}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        );
        fs::create_dir_all(home.join(".ssh")).expect("home");
        fs::write(home.join(".bashrc"), "# the user's shell setup\n").expect("bashrc");
        fs::write(
            home.join(".ssh/id_ed25519"),
            format!("HARNESS-TEST-KEY-{token}\n"),
        )
        .expect("key");
        fs::create_dir_all(workspace.join("src")).expect("workspace");
        let files = [
            ("harness.toml", "# the harness's own settings\n"),
            ("src/lib.txt", "text\n"),
            (
                "test_probe.py",
                "import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertTrue(True)\n",
            ),
            (
                "probe.test.mjs",
                "import test from 'node:test';\ntest('ok', () => {});\n",
            ),
            (
                "Cargo.toml",
                "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            ),
            ("src/lib.rs", "#[test]\nfn ok() {}\n"),
            (".gitignore", "target/\n__pycache__/\n"),
        ];
        for (name, content) in files {
            fs::write(workspace.join(name), content).expect("file");
        }
        git(&workspace, &["init", "-q", "-b", "main"]);
        git(&workspace, &["add", "-A"]);
        git(&workspace, &["commit", "-q", "-m", "fixture"]);
        if row.id == "create_harness_toml" {
            // A repository without the harness's configuration.
            git(&workspace, &["rm", "-q", "harness.toml"]);
            git(&workspace, &["commit", "-q", "-m", "no configuration"]);
        }
        if row.id == "nested_git_hook" {
            // A repository of its own inside the workspace (a vendored clone).
            fs::create_dir_all(workspace.join("vendor/lib/.git/hooks")).expect("nested");
        }
        if row.id == "cargo_test" {
            // No `target/`: a first build makes it at the top of the workspace.
            let status = Command::new(toolchain_bin().join("cargo"))
                .args(["generate-lockfile", "--offline"])
                .current_dir(&workspace)
                .status()
                .expect("cargo");
            assert!(status.success());
        }
        let tcp = TcpListener::bind("127.0.0.1:0").expect("tcp");
        tcp.set_nonblocking(true).expect("nonblocking");
        let port = tcp.local_addr().expect("addr").port();
        let udp = UdpSocket::bind(("127.0.0.1", port)).expect("udp on the same port");
        udp.set_nonblocking(true).expect("nonblocking");
        // A service outside: beside the workspace, in no secret location.
        let unix_socket = root.join("service.sock");
        let unix = UnixListener::bind(&unix_socket).expect("unix socket");
        unix.set_nonblocking(true).expect("nonblocking");
        let victim = Command::new("sleep")
            .arg("300")
            .env("HARNESS_VICTIM", "outside")
            .spawn()
            .expect("victim");
        Fixture {
            _dir: dir,
            workspace,
            home,
            token,
            tcp,
            udp,
            unix,
            unix_socket,
            victim,
        }
    }

    /// Fills in the placeholders of `text`.
    fn fill(&self, text: &str) -> String {
        text.replace("{workspace}", &self.workspace.to_string_lossy())
            .replace("{home}", &self.home.to_string_lossy())
            .replace("{token}", &self.token)
            .replace(
                "{port}",
                &self.tcp.local_addr().expect("addr").port().to_string(),
            )
            .replace("{unix_socket}", &self.unix_socket.to_string_lossy())
            .replace("{victim}", &self.victim.id().to_string())
            .replace("{harness_pid}", &std::process::id().to_string())
    }

    /// Runs `row` under `tier`; true if and only if its effect happened.
    /// Whether the row's effect got through, and whether the outcome says something was
    /// put back or moved aside after the command.
    fn run(mut self, tier: Tier, row: &HostileCommand) -> (bool, bool) {
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", toolchain_bin().display());
        // As the command line confines: with the workspace walked for what to hide and protect.
        let (confinement, _) = Confinement::new(&self.workspace)
            .protect_in_workspace(harness_exec::corpus::PROTECTED_NAME)
            .home(&self.home)
            .hide_denied(|_| false);
        // The user's $TMPDIR, which `none` passes on as it is: one of the test's own, so that
        // no row writes where the machine's other users do (unset, "$TMPDIR/f" is "/f").
        let tmp = self._dir.path().join("tmp");
        std::fs::create_dir_all(&tmp).expect("a temporary directory");
        let runner = Runner::new()
            .parent_env([
                ("PATH", path.as_str()),
                ("HOME", &self.home.to_string_lossy()),
                ("LANG", "C.UTF-8"),
                ("TMPDIR", &tmp.to_string_lossy()),
            ])
            .policy(Policy::allowlist([
                "sh", "bash", "python3", "rm", "git", "cat", "curl", "kill", "node", "cargo",
            ]))
            .isolation(Isolation::new(tier, confinement));
        let timeout = match row.id {
            "fork_storm" => Duration::from_secs(1),
            "cargo_test" => Duration::from_secs(300),
            _ => Duration::from_secs(30),
        };
        let argv: Vec<String> = row.argv.iter().map(|arg| self.fill(arg)).collect();
        let victim_limits = format!("/proc/{}/limits", self.victim.id());
        let mode = |path: &str| {
            fs::symlink_metadata(self.fill(path))
                .ok()
                .map(|m| m.permissions().mode())
        };
        let before = match row.observe {
            Observe::Changes(path) => fs::read(self.fill(path)).ok(),
            Observe::ChangesMode(path) => mode(path).map(|mode| mode.to_le_bytes().to_vec()),
            Observe::LimitsVictim => Some(fs::read(&victim_limits).expect("the victim's limits")),
            _ => None,
        };
        let outcome = runner
            .run(&argv, &RunOptions::new(&self.workspace).timeout(timeout))
            .unwrap_or_else(|error| panic!("{argv:?} could not run: {error}"));
        let through = match row.observe {
            Observe::Creates(path) => {
                let path = self.fill(path);
                let created = Path::new(&path).exists();
                if created && !path.starts_with(&*self.workspace.to_string_lossy()) {
                    let _ = fs::remove_file(&path);
                }
                created
            }
            Observe::Changes(path) => fs::read(self.fill(path)).ok() != before,
            Observe::Removes(path) => !Path::new(&self.fill(path)).exists(),
            Observe::ChangesMode(path) => {
                mode(path).map(|mode| mode.to_le_bytes().to_vec()) != before
            }
            Observe::SetsId(path) => mode(path).is_some_and(|mode| mode & 0o6000 != 0),
            Observe::Prints(text) => outcome.output().contains(text),
            Observe::ConnectsTcp => match self.tcp.accept() {
                Ok(_) => true,
                Err(error) if error.kind() == ErrorKind::WouldBlock => false,
                Err(error) => panic!("accept: {error}"),
            },
            Observe::SendsUdp => self.udp.recv(&mut [0; 16]).is_ok(),
            Observe::ConnectsUnix => match self.unix.accept() {
                Ok(_) => true,
                Err(error) if error.kind() == ErrorKind::WouldBlock => false,
                Err(error) => panic!("accept: {error}"),
            },
            Observe::KillsVictim => {
                // A signal sent is not yet a process gone: give it a moment.
                let deadline = Instant::now() + Duration::from_secs(1);
                loop {
                    let gone = self.victim.try_wait().expect("try_wait").is_some();
                    if gone || Instant::now() > deadline {
                        break gone;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            Observe::LimitsVictim => fs::read(&victim_limits).ok() != before,
            Observe::Survives(text) => {
                // Killed processes may take a moment to become zombies; one still
                // running a second after the call returned has escaped.
                let text = self.fill(text);
                let deadline = Instant::now() + Duration::from_secs(1);
                while !running(&text).is_empty() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                }
                !kill_survivors(&text).is_empty()
            }
            Observe::Succeeds => {
                if !outcome.is_success() {
                    eprintln!("{}", outcome.to_model_text());
                }
                outcome.is_success()
            }
        };
        let _ = self.victim.kill();
        let _ = self.victim.wait();
        let said = !outcome.repaired().is_empty() || !outcome.set_aside().is_empty();
        (through, said)
    }
}

/// Kills every process whose command line contains `text`; their pids.
fn kill_survivors(text: &str) -> Vec<u32> {
    let survivors = running(text);
    for pid in &survivors {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    survivors
}

/// The processes, not yet exited, whose command line contains `text`.
fn running(text: &str) -> Vec<u32> {
    fs::read_dir("/proc")
        .expect("proc")
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(text))
        })
        .filter(|pid| {
            // A zombie has exited; only its parent has yet to reap it.
            fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().next())
                    .is_some_and(|state| state != "Z" && state != "X")
            })
        })
        .collect()
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

/// The directory of the real `cargo` and `rustc`, not rustup's proxies
/// (which would look for their toolchains in the test's fake home).
fn toolchain_bin() -> PathBuf {
    let output = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc");
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()).join("bin")
}

fn find(program: &str) -> Option<PathBuf> {
    ["/usr/local/bin", "/usr/bin", "/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(program))
        .chain(std::iter::once(toolchain_bin().join(program)))
        .find(|path| path.is_file())
}
