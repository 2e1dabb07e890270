//! What a signal that ends the harness (Ctrl-C, Ctrl-\, `SIGTERM`, `SIGHUP`, and every
//! other whose default is to end the process) does to the commands it is running: none
//! outlives it.
//!
//! A command runs in a process group of its own, so the terminal's Ctrl-C or Ctrl-\, a
//! `kill`, or a closed terminal reaches the harness and not the command. Under bwrap the
//! command dies with the harness (`--die-with-parent`, its own PID namespace); under
//! Landlock and with no tier nothing else would end it. So every command that runs
//! commands (`run`, `tool`, `mcp`) handles all of them, and kills its commands before it
//! exits. `SIGKILL` cannot be handled: for it, `main` starts these commands under a reaper
//! (`harness_exec::run_under_reaper`), which kills what is left once the harness is gone.
//! The faults of a crash (`SIGSEGV`, `SIGABRT`, ...) are not handled here, and the reaper
//! covers them the same way.

use harness_exec::Interrupter;
use signal_hook::consts::signal::{
    SIGALRM, SIGHUP, SIGINT, SIGPROF, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGVTALRM, SIGXCPU,
    SIGXFSZ,
};
use signal_hook::iterator::Signals;

/// Every signal whose default action ends the process and that a program may catch, but
/// for the faults a crash raises and `SIGPIPE` (Rust ignores it, and a write reports it).
pub(crate) const ENDING: [i32; 11] = [
    SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU,
    SIGXFSZ,
];

/// Undoes what a parent may pass on across `exec` that would stop the harness from doing
/// its job. Called at the start of `main`, before any thread or child exists.
///
/// - A parent that ignores `SIGCHLD` (a Python program that set it so, some service
///   managers) has the kernel reap every child at once, so waiting for a command, a probe
///   or `git` fails with "No child processes" and no command can run. The harness waits
///   for every child it starts: the default action is the one it needs.
/// - A parent that blocks signals passes on its mask: with `SIGINT` and `SIGTERM` blocked,
///   Ctrl-C and `kill` stayed pending, the harness never stopped, and its command ran on.
///   Every thread starts from this mask, so [`on_ending_signal`] sees them all.
#[allow(unsafe_code)]
pub(crate) fn reset_inherited() {
    // SAFETY: no thread or child exists yet; SIG_DFL installs no handler, and the mask is
    // an empty set initialized by `sigemptyset` on the stack.
    unsafe {
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        let mut none = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(none.as_mut_ptr());
        libc::sigprocmask(libc::SIG_SETMASK, none.as_ptr(), std::ptr::null_mut());
    }
}

/// Calls `handler` with the number of the signal received (1 for the first) on each of
/// the [`ENDING`] signals, from a thread of its own. One handler per process.
pub(crate) fn on_ending_signal(mut handler: impl FnMut(usize) + Send + 'static) {
    let mut signals = match Signals::new(ENDING) {
        Ok(signals) => signals,
        Err(error) => {
            tracing::warn!(
                "cannot handle Ctrl-C, SIGTERM and the other ending signals ({error}): they \
                 will end the harness at once, and under the landlock and none tiers a running \
                 command goes on"
            );
            return;
        }
    };
    std::thread::spawn(move || {
        for (received, _) in signals.forever().enumerate() {
            handler(received + 1);
        }
    });
}

/// Kills every command `interrupter` knows, then ends the process with `code`: the end of a
/// harness that a signal stops at once.
pub(crate) fn kill_commands_and_exit(interrupter: &Interrupter, code: u8) -> ! {
    interrupter.kill();
    std::process::exit(i32::from(code))
}
