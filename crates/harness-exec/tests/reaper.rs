//! A program started under [`run_under_reaper`] leaves no command running however it
//! ends, `SIGKILL` included, and its reaper ends as it did.
//!
//! Each test starts this test binary again (the ignored test [`program`], told its part
//! by an environment variable), which forks the subject: a process of one thread, as a
//! program is at the start of its `main`, that calls `run_under_reaper` and plays the part.
//! (A thread of libtest's in the reaper would take the signals the reaper blocks.) The
//! test watches the subject from outside, as a user's shell would; the process it started
//! reports how the reaper ended.

#![allow(unsafe_code)]

mod support;

use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use harness_exec::{
    Confinement, Isolation, Policy, RunOptions, Runner, Tier, enable_subreaper, run_under_reaper,
};
use support::{NO_HANG, alive, real_tiers};

/// The variable that tells [`program`] its part.
const PART: &str = "HARNESS_EXEC_REAPER_TEST_PART";

/// Not a test: what the tests start. Forks the subject, which plays the part [`PART`]
/// names under a reaper, prints `reaper <pid>`, then `ended code <n>` or `ended signal <n>`
/// once the subject (the reaper) has ended. Without the variable it does nothing.
#[test]
#[ignore = "the program the other tests of this file start"]
#[allow(clippy::print_stdout)]
fn program() {
    let Ok(part) = std::env::var(PART) else {
        return;
    };
    // SAFETY: the child goes on with only this thread, as a program's `main` would; the
    // other thread of this process (libtest's) only waits for this one.
    let reaper = unsafe { libc::fork() };
    if reaper == 0 {
        play(&part);
    }
    assert!(reaper > 0, "fork");
    println!("reaper {reaper}");
    let mut status = 0;
    // SAFETY: a plain system call writing `status`.
    unsafe { libc::waitpid(reaper, &mut status, 0) };
    if libc::WIFEXITED(status) {
        println!("ended code {}", libc::WEXITSTATUS(status));
    } else {
        println!("ended signal {}", libc::WTERMSIG(status));
    }
    std::process::exit(0);
}

/// The subject's life: `run_under_reaper`, then the program's part.
fn play(part: &str) -> ! {
    let (part, argument) = part.split_once(' ').unwrap_or((part, ""));
    if part == "alarm" {
        // Set before the fork, the alarm stays with the reaper: a signal the kernel
        // sends it, as the terminal's Ctrl-C is.
        // SAFETY: a plain system call.
        unsafe { libc::alarm(1) };
    }
    run_under_reaper().expect("a reaper stays behind");
    match part {
        "exit" => std::process::exit(argument.parse().expect("a code")),
        "wait" | "alarm" => {
            // Written raw: the fork may have copied stdout's lock held by libtest's
            // other thread, and `println!` would then wait for it forever.
            let line = format!("\nready {}\n", std::process::id());
            // SAFETY: a plain system call on a buffer that outlives it.
            unsafe { libc::write(1, line.as_ptr().cast(), line.len()) };
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        // SAFETY: plain system calls.
        "terminate" => unsafe {
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            libc::raise(libc::SIGTERM);
        },
        "command" => {
            enable_subreaper().expect("PR_SET_CHILD_SUBREAPER");
            let (tier, token) = argument.split_once(' ').expect("tier and token");
            let tier = match tier {
                "bwrap" => Tier::Bwrap,
                "landlock" => Tier::Landlock,
                _ => Tier::None,
            };
            let workspace = std::env::current_dir().expect("cwd");
            let runner = Runner::new()
                .policy(Policy::allowlist(["sh"]))
                .isolation(Isolation::new(tier, Confinement::new(&workspace)));
            let options = RunOptions::new(&workspace).timeout(Duration::from_secs(120));
            let _ = runner.run(&["sh", "-c", &leftovers(token)], &options);
        }
        other => panic!("no part {other}"),
    }
    unreachable!("every part ends the program or waits to be killed");
}

/// A command that leaves, deaf to every signal it can ignore: a child that left its
/// session and cleared its environment, and a process that holds a gigabyte (slow to tear
/// down once killed) and says so in the file `held-<token>`; each with `token` in its
/// command line.
fn leftovers(token: &str) -> String {
    format!(
        "trap '' INT TERM HUP; setsid env -i sh -c \"trap '' INT TERM HUP; sleep {token}\" & \
         python3 -c \"import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); \
         held = b'x' * (1 << 30); open('held-{token}', 'w').close(); time.sleep({token})\" & \
         wait"
    )
}

/// A length of sleep no other test or process uses.
fn token() -> String {
    static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let count = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("3000.{}{count:03}", std::process::id())
}

/// A started [`program`]: its lines as they come, and the reaper's pid.
struct Subject {
    lines: Receiver<String>,
    /// Lines read while looking for another word: the program's and the reaper's
    /// processes write in no set order.
    unread: Vec<String>,
    reaper: u32,
    started: Child,
}

impl Subject {
    /// This test binary started as [`program`] playing `part`, with `SIGTERM` ignored if
    /// `ignore_sigterm`.
    fn start(part: &str, ignore_sigterm: bool) -> Subject {
        let mut command = Command::new(std::env::current_exe().expect("test binary"));
        command
            .args([
                "program",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(PART, part)
            .current_dir(env!("CARGO_TARGET_TMPDIR"))
            .stdout(Stdio::piped());
        // The signals the tests send start at their default actions, as from a shell,
        // whatever this test inherited: under `nohup` it ignores `SIGHUP`, and so would the
        // program the reaper passes it on to.
        // SAFETY: signal(2) is async-signal-safe.
        unsafe {
            command.pre_exec(move || {
                for signal in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM, libc::SIGUSR1] {
                    libc::signal(signal, libc::SIG_DFL);
                }
                if ignore_sigterm {
                    libc::signal(libc::SIGTERM, libc::SIG_IGN);
                }
                Ok(())
            });
        }
        let mut started = command.spawn().expect("the program starts");
        let stdout = started.stdout.take().expect("piped");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut subject = Subject {
            lines,
            unread: Vec::new(),
            reaper: 0,
            started,
        };
        subject.reaper = subject.next_value("reaper").parse().expect("a pid");
        subject
    }

    /// The text after `word ` on the first line that has it, read before or now
    /// (after libtest's `test program ... ` on the same line, for one); fails after
    /// [`NO_HANG`], killing what it started.
    fn next_value(&mut self, word: &str) -> String {
        let deadline = Instant::now() + NO_HANG;
        let wanted = format!("{word} ");
        let value = |line: &str| Some(line.split_once(&wanted)?.1.to_owned());
        if let Some(at) = self.unread.iter().position(|line| value(line).is_some()) {
            return value(&self.unread.remove(at)).unwrap_or_default();
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = self.lines.recv_timeout(left) else {
                let _ = self.started.kill();
                if self.reaper != 0 {
                    // Its program then gets SIGTERM: nothing is left behind.
                    kill(self.reaper, libc::SIGKILL);
                }
                panic!("no `{word}` line within {NO_HANG:?}: {:?}", self.unread);
            };
            match value(&line) {
                Some(found) => return found,
                None => self.unread.push(line),
            }
        }
    }

    /// The program's pid, once it is ready.
    fn ready(&mut self) -> u32 {
        self.next_value("ready").parse().expect("a pid")
    }

    /// How the reaper ended: `code <n>` or `signal <n>`; fails if not within [`NO_HANG`].
    fn ended(mut self) -> String {
        let ended = self.next_value("ended");
        let _ = self.started.wait();
        ended
    }
}

fn signalled(signal: libc::c_int) -> String {
    format!("signal {signal}")
}

/// The pids of the live processes with `token` in their command line.
fn with_token(token: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                cmdline
                    .windows(token.len())
                    .any(|window| window == token.as_bytes())
            })
        })
        .filter(|&pid| alive(pid))
        .collect()
}

/// The one child of process `pid`.
fn only_child(pid: u32) -> u32 {
    let listed = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .expect("the reaper's children");
    let children: Vec<u32> = listed
        .split_whitespace()
        .map(|child| child.parse().expect("a pid"))
        .collect();
    assert_eq!(
        children.len(),
        1,
        "the reaper has one child, the program: {children:?}"
    );
    children[0]
}

fn kill(pid: u32, signal: libc::c_int) {
    // SAFETY: a plain system call.
    let sent = unsafe { libc::kill(i32::try_from(pid).expect("pid"), signal) };
    assert_eq!(sent, 0, "signal {signal} to {pid}");
}

#[test]
fn no_command_outlives_a_program_killed_with_sigkill() {
    for tier in [Tier::None].into_iter().chain(real_tiers()) {
        let token = token();
        let name = format!("{tier:?}").to_lowercase();
        let subject = Subject::start(&format!("command {name} {token}"), false);
        let held = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("held-{token}"));
        let deadline = Instant::now() + NO_HANG;
        while !held.exists() {
            assert!(
                Instant::now() < deadline,
                "{tier:?}: the command never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = std::fs::remove_file(&held);
        kill(only_child(subject.reaper), libc::SIGKILL);
        let ended = subject.ended();
        // At once: the reaper ends only once what it killed is gone.
        let left = with_token(&token);
        for &pid in &left {
            kill(pid, libc::SIGKILL);
        }
        assert!(left.is_empty(), "{tier:?}: {left:?} outlived the program");
        assert_eq!(ended, signalled(libc::SIGKILL), "{tier:?}");
    }
}

#[test]
fn the_reaper_ends_with_the_program_s_exit_code() {
    for code in [0, 7] {
        let ended = Subject::start(&format!("exit {code}"), false).ended();
        assert_eq!(ended, format!("code {code}"));
    }
}

#[test]
fn the_reaper_ends_by_the_signal_that_ended_the_program_even_one_its_parent_ignored() {
    let ended = Subject::start("terminate", true).ended();
    assert_eq!(ended, signalled(libc::SIGTERM));
}

#[test]
fn a_signal_a_process_sends_the_reaper_reaches_the_program() {
    for signal in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM, libc::SIGUSR1] {
        let mut subject = Subject::start("wait", false);
        let program = subject.ready();
        assert_ne!(
            program, subject.reaper,
            "the program runs in the reaper's child"
        );
        kill(subject.reaper, signal);
        assert_eq!(subject.ended(), signalled(signal));
    }
}

/// The kernel's signals to the reaper are not passed on: the terminal's Ctrl-C reaches
/// the program already, and passed on it would count twice.
#[test]
fn a_signal_the_kernel_sends_the_reaper_is_not_passed_on() {
    let mut subject = Subject::start("alarm", false);
    let program = subject.ready();
    // The alarm of 1 s is the kernel's `SIGALRM` to the reaper, which would end the
    // program if passed on.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(alive(program), "the reaper passed on its SIGALRM");
    kill(subject.reaper, libc::SIGTERM);
    assert_eq!(subject.ended(), signalled(libc::SIGTERM));
}

#[test]
fn a_program_whose_reaper_is_killed_is_told_to_end() {
    let mut subject = Subject::start("wait", false);
    let program = subject.ready();
    assert_ne!(
        program, subject.reaper,
        "the program runs in the reaper's child"
    );
    kill(subject.reaper, libc::SIGKILL);
    assert_eq!(subject.ended(), signalled(libc::SIGKILL));
    let deadline = Instant::now() + NO_HANG;
    while alive(program) {
        assert!(Instant::now() < deadline, "the program outlived its reaper");
        std::thread::sleep(Duration::from_millis(20));
    }
}
