//! A parent that stays behind: the commands of a program killed with `SIGKILL`
//! are still stopped.
//!
//! A program that runs commands can stop them when it is asked to end (Ctrl-C,
//! `SIGTERM`, ...), but `SIGKILL` and the kernel's out-of-memory killer give it
//! no chance to: its commands are re-parented to init and run on. A sandbox
//! with a PID namespace of its own and `--die-with-parent` (bubblewrap) ends
//! them; Landlock and no sandbox at all do not.
//!
//! [`run_under_reaper`] forks the program in two. The child goes on as the
//! program. The parent stays behind as a child subreaper and only waits: the
//! orphans of the child's commands are re-parented to the child while it
//! lives (when it is a subreaper too, as the harness CLI makes itself), and to
//! this parent once it is gone, however it ended. When the child has ended,
//! the parent kills every process still below it, then ends as the child did
//! (the same exit status, or the same signal).
//!
//! The parent passes on every signal a process sends it (`kill`), so `kill
//! <pid>` still reaches the program. A signal from the terminal (Ctrl-C,
//! Ctrl-\, a hang-up) already reaches the whole foreground process group, the
//! child included, and is not passed on a second time. If the parent itself
//! is killed with `SIGKILL`, the child gets `SIGTERM` (`PR_SET_PDEATHSIG`), on
//! which a program that handles it ends its commands (the harness CLI does).
//! Only both killed with `SIGKILL` at once (a `kill -9` of the whole process
//! group) leaves the commands running.

#![allow(unsafe_code)]

use std::io;
use std::mem::MaybeUninit;

use crate::tree;

/// Forks this process; returns in the child, which goes on as the program,
/// while the parent stays behind as its reaper and never returns (see the
/// [module documentation](self)).
///
/// Call it at the start of `main`, before any thread exists: the child of a
/// fork has only the thread that forked.
///
/// # Errors
///
/// When the kernel refuses to make this process a subreaper or to fork. No
/// reaper then stays behind, and the program can go on without one.
pub fn run_under_reaper() -> io::Result<()> {
    tree::enable_subreaper()?;
    // SAFETY: SIG_DFL installs no handler. With `SIGCHLD` ignored, as a parent
    // may leave it across exec, the kernel would reap the child itself and the
    // reaper could not learn how it ended.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    let waited = waited_signals();
    let mut previous = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: both sets are initialized (`waited` by sigemptyset/sigaddset,
    // `previous` is written by the call).
    //
    // Blocked before the fork, so that a signal meant for the reaper between
    // the fork and its first wait is kept for the wait instead of ending it.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, &waited, previous.as_mut_ptr()) };
    // SAFETY: a plain system call.
    let reaper = unsafe { libc::getpid() };
    // SAFETY: the caller has no other thread (documented above), so the child
    // may run any code.
    match unsafe { libc::fork() } {
        -1 => {
            let error = io::Error::last_os_error();
            // SAFETY: `previous` was written by the first call.
            unsafe {
                libc::sigprocmask(libc::SIG_SETMASK, previous.as_ptr(), std::ptr::null_mut());
                libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
            }
            Err(error)
        }
        0 => {
            // SAFETY: `previous` was written before the fork; prctl and getppid
            // take plain integers.
            unsafe {
                libc::sigprocmask(libc::SIG_SETMASK, previous.as_ptr(), std::ptr::null_mut());
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0);
                // The reaper may have died before the line above: then no
                // `SIGTERM` comes, and the child ends as if it had.
                if libc::getppid() != reaper {
                    libc::raise(libc::SIGTERM);
                }
            }
            Ok(())
        }
        child => reap(child, &waited),
    }
}

/// The reaper's life: waits for `child`, passing on the signals processes
/// send, then kills what the child left and ends as it did.
fn reap(child: libc::pid_t, waited: &libc::sigset_t) -> ! {
    let status = loop {
        let mut info = MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: `waited` is initialized, `info` is written by the call.
        let signal = unsafe { libc::sigwaitinfo(waited, info.as_mut_ptr()) };
        if signal == -1 {
            // Interrupted (`EINTR`): nothing was taken.
            continue;
        }
        if signal == libc::SIGCHLD {
            if let Some(status) = reap_children(child) {
                break status;
            }
        } else {
            // SAFETY: sigwaitinfo returned a signal, so it wrote `info`.
            let info = unsafe { info.assume_init() };
            // A code of 0 or below: sent by a process (`kill`, `sigqueue`,
            // `tgkill`); above: by the kernel, such as the terminal's Ctrl-C,
            // which the child has had as well.
            // SAFETY: si_pid is set for the signals a process sends.
            if info.si_code <= 0 && unsafe { info.si_pid() } != child {
                // SAFETY: a plain system call; `child` is unreaped, so its pid
                // is still its own.
                unsafe { libc::kill(child, signal) };
            }
        }
    };
    tree::kill_descendants();
    end_as(status)
}

/// Reaps every child that has exited; the exit status of `child` if it was
/// one of them.
fn reap_children(child: libc::pid_t) -> Option<libc::c_int> {
    let mut status = None;
    loop {
        let mut raw = 0;
        // SAFETY: a plain system call writing `raw`.
        let reaped = unsafe { libc::waitpid(-1, &mut raw, libc::WNOHANG) };
        if reaped <= 0 {
            return status;
        }
        if reaped == child {
            status = Some(raw);
        }
    }
}

/// Ends this process as the child ended: with its exit code, or killed by
/// its signal.
fn end_as(status: libc::c_int) -> ! {
    if libc::WIFEXITED(status) {
        std::process::exit(libc::WEXITSTATUS(status));
    }
    let signal = libc::WTERMSIG(status);
    // SAFETY: plain system calls on an initialized set; this process has one
    // thread.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        let mut only = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(only.as_mut_ptr());
        libc::sigaddset(only.as_mut_ptr(), signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, only.as_ptr(), std::ptr::null_mut());
        libc::raise(signal);
    }
    // Not reached: the signal's default action ended the child, so it ends
    // this process too, now that it is neither ignored nor blocked.
    std::process::abort()
}

/// The signals the reaper waits for instead of acting on: `SIGCHLD` and every
/// signal it passes on. Not the faults a crash raises, nor the signals of job
/// control (`SIGTSTP`, `SIGCONT`, ...), which stop and go on with the reaper
/// as with the child; `SIGKILL` and `SIGSTOP` cannot be blocked.
fn waited_signals() -> libc::sigset_t {
    const LEFT_ALONE: [libc::c_int; 12] = [
        libc::SIGKILL,
        libc::SIGSTOP,
        libc::SIGTSTP,
        libc::SIGTTIN,
        libc::SIGTTOU,
        libc::SIGCONT,
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGTRAP,
        libc::SIGSYS,
    ];
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initializes the set; sigaddset refuses (and leaves
    // out) numbers it does not take, such as the C library's own.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        for signal in 1..=libc::SIGRTMAX() {
            if !LEFT_ALONE.contains(&signal) {
                libc::sigaddset(set.as_mut_ptr(), signal);
            }
        }
        set.assume_init()
    }
}
