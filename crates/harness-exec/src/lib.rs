//! Run a command for a coding agent: an argv, never a shell, bounded in time
//! and output, and leaving nothing behind.
//!
//! A model that runs commands needs three guarantees the obvious
//! `std::process::Command::output()` does not give: a command that hangs is
//! stopped (`output()` waits forever), a command that prints a gigabyte does
//! not blow the context or the memory (`output()` keeps it all), and stopping
//! a command stops everything it started (`Child::kill` reaches the direct
//! child only, and a grandchild holding the pipe keeps `output()` waiting).
//!
//! ```
//! use std::time::Duration;
//! use harness_exec::{RunOptions, Runner, Status};
//!
//! let runner = Runner::new();
//! let workspace = std::env::temp_dir();
//!
//! let outcome = runner.run(&["sh", "-c", "echo hello; exit 3"], &RunOptions::new(&workspace))?;
//! assert_eq!(outcome.status(), Status::Exited(3));
//! assert_eq!(outcome.output(), "hello\n");
//! assert_eq!(outcome.to_model_text(), "exit=3\nhello");
//!
//! let slow = RunOptions::new(&workspace).timeout(Duration::from_millis(200));
//! let outcome = runner.run(&["sleep", "10"], &slow)?;
//! assert_eq!(outcome.status(), Status::TimedOut(Duration::from_millis(200)));
//! assert_eq!(outcome.to_model_text(), "Error: command exceeded 0.2s and was killed.");
//!
//! let missing = runner.run(&["no-such-program"], &RunOptions::new(&workspace)).unwrap_err();
//! assert_eq!(missing.to_model_text(), "Error: command not found: no-such-program");
//! # Ok::<(), harness_exec::Error>(())
//! ```
//!
//! # Running
//!
//! [`Runner::run`] takes an argv: the program (a bare name is looked up on the
//! command's `PATH`) and its arguments, passed as they are, so `;`, `&&`,
//! `$()` and globs mean nothing. The caller gives the working directory. The
//! command's stdin is `/dev/null`, so a command waiting for input ends at
//! once instead of hanging; stdout and stderr share one pipe, so the output
//! keeps the order in which it was written.
//!
//! A non-zero exit, a crash and a timeout are [`Outcome`]s: the model reads
//! them. An [`Error`] means the command could not be run at all: refused by the
//! [`Policy`], not found, not executable, or a bad working directory or
//! timeout.
//!
//! # The whole process tree, every time
//!
//! The command starts as the leader of a new session, so of a new process
//! group, and without a controlling terminal: a program that would prompt on
//! `/dev/tty` fails at once instead of waiting for the timeout. At its timeout
//! (30 s unless the call or the runner says otherwise) the group and every
//! process of the run get `SIGTERM`, and `SIGKILL` 1 s later. When the command
//! exits on its own, its output is read for at most 250 ms more, so that a
//! background process holding the pipe (`sh -c 'server & echo started'`)
//! delays the result by no more than that; then whatever the run left behind
//! is killed. In every case `run` returns only once no process it started is
//! alive.
//!
//! Processes that left the group (`setsid`, a double fork) are found as
//! descendants of the run's processes, and through a marker variable
//! `HARNESS_EXEC_RUN_<token>=1` (a 128-bit random token) in the environment
//! the command and its descendants inherit, by scanning `/proc`. When the
//! program is a child subreaper, which [`enable_subreaper`] turns on (it is
//! process-wide; the harness CLI enables it), every orphan re-parented to it
//! is killed, whatever its environment says, unless it is the direct child
//! of a run in progress: a process cannot escape by clearing its environment
//! or by copying or forging a marker. A process started by a program outside
//! the run (`systemd-run`, `at`, an already running `tmux` server) is out of
//! reach.
//!
//! All of this needs the program alive: one killed with `SIGKILL` stops
//! nothing. [`run_under_reaper`], called at the start of `main`, leaves a
//! parent behind that kills whatever the program's commands left once the
//! program is gone, however it ended (the harness CLI does so for `run`,
//! `tool` and `mcp`).
//!
//! # Output
//!
//! The output is captured as it streams, in memory bounded by the output
//! limit (8 KiB by default, [`Runner::output_limit`]): the first half of the
//! limit is kept as the head, the last half in a ring buffer as the tail, and
//! the rest is only counted. A longer output reads as head, then a line such as
//! `[… 123456 bytes, 2048 lines truncated …]`, then tail, so the error at the
//! end is never lost. ANSI escape sequences are removed, the text is decoded
//! as lossy UTF-8 without splitting a character at a cut, and secrets are
//! redacted (see [`Redactor`]).
//!
//! # Policy, environment, secrets
//!
//! Before anything starts, the [`Policy`] checks the command: a blocklist of
//! accidents (`sudo`, `rm -rf /`, `mkfs`, …) by default, or an allowlist. It
//! is a seatbelt, not a wall: an interpreter (`sh -c`, `python -c`,
//! `node -e`) can do anything the user can, so the policy stops accidents
//! only, and the allowlist is the strong mode. The launchers it looks through
//! to the program they run (`env`, `setsid`, `nice`, `flock`, …) are listed
//! in [`LAUNCHERS`].
//!
//! The command does not inherit the environment: [`EnvPolicy`] passes a short
//! list (`PATH`, `HOME`, `LANG`, …) and what the caller names; a variable whose
//! name looks secret passes only when named exactly. The output is redacted
//! with [`Redactor`], which also knows the values of this process's
//! secret-named variables; [`redact`] is the same redaction for other text.
//! A redacted value is shown as a marker, `[REDACTED:<rule>:<n>]`, that the
//! redactor can map back to the value ([`Redactor::restore`]); the map is kept
//! in memory only. The credential shapes are a table, [`RULES`], one row per
//! kind with the examples it must and must not redact.
//!
//! # Limits, interrupts
//!
//! Core dumps are always off in the command; [`Limits`] adds a maximum file
//! size and a maximum number of processes. Since the command is in its own
//! process group, the terminal's Ctrl-C no longer reaches it: forward it with an
//! [`Interrupter`].
//!
//! # Isolation
//!
//! A [`Tier`] confines what a command can reach, to a [`Confinement`]: the
//! workspace (writable, but not its `.git` and the names the caller protects
//! in it with [`Confinement::protect_in_workspace`], such as its own
//! configuration: the harness CLI protects its `harness.toml`), a private
//! temporary directory, extra writable paths, the network or not; the secret
//! locations of `$HOME` ([`HOME_SECRETS`]) and the deny rules are hidden.
//! This crate names no file of any program but git's: what else is kept,
//! hidden or read-only, the caller says.
//!
//! The git directories of other repositories in the workspace (submodules,
//! vendored clones) are kept as its own `.git` is: those
//! [`Confinement::hide_denied`]'s walk finds, and those given to
//! [`Confinement::protect`]. The one program the runner starts outside the
//! confinement, `bwrap`, is never taken from where commands can write: a
//! relative or empty `PATH` entry, the workspace, a writable path.
//!
//! ```no_run
//! use harness_exec::{Confinement, Isolation, RunOptions, Runner, Sandbox, preflight};
//!
//! let workspace = "/home/me/project";
//! let confinement = Confinement::new(workspace).writable("/home/me/.cargo/registry");
//! // The strongest tier that works here for these commands; an explicit one that
//! // cannot is an error.
//! let choice = preflight::choose_for(Sandbox::Auto, &confinement)?;
//! let runner = Runner::new().isolation(Isolation::new(choice.tier, confinement));
//! let outcome = runner.run(&["rm", "-rf", ".git"], &RunOptions::new(workspace))?;
//! // Refused by the kernel under bwrap (.git is read-only); under Landlock removed, then
//! // put back once the command has ended, and said so.
//! assert!(!outcome.is_success() || !outcome.repaired().is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! - [`Tier::Bwrap`] runs the program through bubblewrap: root filesystem
//!   read-only, the workspace bound writable with `.git` and the protected
//!   names read-only on top, an empty private `/tmp`, new PID (fresh `/proc`,
//!   read-only), network (loopback only), IPC and UTS namespaces, a new
//!   session, killed with its parent, a minimal `/dev`, the hidden paths
//!   covered, no capability.
//! - [`Tier::Landlock`] restricts the child before `exec` (with
//!   `no_new_privs` and no capability, so a harness run as root does not
//!   hand its own to the command): writes only to the workspace, the private
//!   temporary directory and harmless devices; reads everywhere except the
//!   hidden paths and `/dev`; no TCP from Landlock ABI 4; no signals to
//!   processes outside from ABI 6. Landlock grants by hierarchy and cannot take
//!   a subtree back, so for commands to make, rename and remove entries at the
//!   top of the workspace the top is granted that, and with it `.git` and
//!   the protected names below it: the runner records those before each command and
//!   puts back what the command changed once it has ended
//!   ([`Outcome::repaired`]; the object store is held open, not copied), and a
//!   name a command gives a hidden file is removed or renamed back. Reading and
//!   executing stay granted entry by entry where a hidden path is below: a file
//!   a command makes at the top of such a workspace is readable from the next
//!   command on. What Landlock ABI 1 to 7 can and cannot express, and why this
//!   split, is in the module's documentation (`isolation/landlock.rs`).
//! - [`Tier::None`]: the command runs as the user.
//!
//! Under both real tiers a seccomp filter the command inherits refuses the
//! kernel's keyrings, `prlimit64` on any process but the caller and, unless
//! the network is allowed, to create a Unix socket (a service outside
//! listening on one, a D-Bus or `docker.sock`, would act for it), any socket
//! of a family other than IP and netlink, under Landlock any IP socket but
//! TCP, and `io_uring`. And a `.git` or protected name that a command creates
//! where there was none, which no tier can bind over, is moved aside once
//! the command has ended ([`Outcome::set_aside`]), and so is every `.git` it
//! makes anywhere in the workspace (a repository of its own, whose
//! configuration the user's git would read there). Under Landlock, what the
//! command changed in the kept paths is put back after that
//! ([`Outcome::repaired`]).
//!
//! What each tier blocks and lets through is the table in [`corpus`], which
//! the tests assert row by row.
//!
//! # Where each guarantee is kept
//!
//! | guarantee | file (under `src/`) |
//! |---|---|
//! | the command is checked before it starts: the policy, the launchers looked through | `policy.rs`, `wrappers.rs` |
//! | the program is found as `execvp` would, on the command's `PATH` | `resolve.rs` |
//! | the environment is scrubbed, the run's marker set | `env.rs`, `runner.rs` (`child_env`) |
//! | a command is confined, and under which tier | the plan: `isolation.rs` ([`Confinement`], [`Isolation`]); each tier: `isolation/bwrap.rs`, `isolation/landlock.rs`, with `isolation/seccomp.rs` under both; the names: `tier.rs`; which tier works here: `preflight.rs` |
//! | what the child does between `fork` and `exec` (session, limits, Landlock, seccomp) | `pre_exec.rs`, `limits.rs` |
//! | a time limit is enforced: `SIGTERM` at the deadline, then `SIGKILL` | `supervise.rs` (the deadline and the grace, in the one loop that watches a command), then `tree.rs` |
//! | a process tree is killed | `tree.rs` alone finds and kills a run's processes (`Tree::kill`, `kill_descendants`); the others call it: `runner.rs` (`Running::drop`, at the end of every run), `supervise.rs` (`SIGTERM` at the deadline), `interrupt.rs` (Ctrl-C, [`Interrupter::kill`]), `reaper.rs` (what a program killed with `SIGKILL` left) |
//! | output is bounded | `capture.rs` (head, tail ring, count), `ansi.rs` (escape sequences) |
//! | redaction happens | `redact/mod.rs` ([`Redactor`]), the table in `redact/rules.rs`, names with values in `redact/assignment.rs`, the markers in `redact/markers.rs`; applied in `runner.rs` (`Runner::outcome`) |
//! | a protected path a command made or replaced is moved aside | `isolation/protected.rs`, moved by `isolation/aside.rs` |
//! | Landlock's damage is repaired | `isolation/repair.rs`: recorded before the command, put back after it, one file per step below it |
//! | the paths to hide in a workspace are found | `isolation/hidden.rs` |
//! | why a command could not run, and what it did | `error.rs`, `outcome.rs` |
//!
//! # What this crate does not do
//!
//! Without a kernel tier it does not sandbox anything: the command runs as
//! the user, with everything the user can reach, and the policy matches
//! argv, it does not parse shell code. Even under a tier, the kernel is the
//! only boundary: run the harness in a container, a VM or as a separate user
//! when the input is untrusted.
//!
//! # Platform
//!
//! Linux 5.3 or newer: the runner follows processes with pidfds and finds
//! them in `/proc`.

#[cfg(not(target_os = "linux"))]
compile_error!("harness-exec supports Linux only: it follows processes through pidfds and /proc");

mod ansi;
mod capture;
pub mod corpus;
mod env;
mod error;
mod interrupt;
mod isolation;
mod limits;
mod outcome;
mod policy;
mod poll;
mod pre_exec;
pub mod preflight;
mod reaper;
mod redact;
mod resolve;
mod runner;
mod supervise;
mod tier;
mod tree;
mod wrappers;

pub use env::{EnvPolicy, is_secret_name};
pub use error::{Error, Unavailable};
pub use interrupt::Interrupter;
pub use isolation::{
    Change, Confinement, HELD_OBJECTS, HOME_SECRETS, Hidden, Isolation, RECORD_BYTES,
    RECORD_ENTRIES, Repaired, SetAside, WALK_LIMIT, hidden_in_workspace,
};
pub use limits::Limits;
pub use outcome::{Outcome, Status};
pub use policy::{Policy, Refusal};
pub use preflight::Sandbox;
pub use reaper::run_under_reaper;
pub use redact::{REDACTED, RULES, Redactor, Restored, Rule, has_marker, plain_markers, redact};
pub use runner::{RunOptions, Runner};
pub use tier::{Tier, UnknownTier};
pub use tree::enable_subreaper;
pub use wrappers::LAUNCHERS;
