//! The one place where code runs in the child between `fork` and `exec`.
//!
//! `CommandExt::pre_exec` is `unsafe` because the closure runs in a copy of a
//! multi-threaded process in which only the forking thread exists: any lock
//! another thread held stays locked forever, so the closure may only make
//! async-signal-safe calls and must not allocate. Everything this crate does
//! there is here.

#![allow(unsafe_code)]

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

use rustix::fs::{CWD, Mode, OFlags, RawDir, openat};
use rustix::io::Errno;
use rustix::io::{FdFlags, fcntl_setfd};
use rustix::process::{Resource, Rlimit, setrlimit, setsid};
use rustix::thread::{
    CapabilitySet, CapabilitySets, clear_ambient_capability_set,
    remove_capability_from_bounding_set, set_capabilities, set_no_new_privs,
};

use crate::isolation::Program;
use crate::limits::ChildLimits;

/// Makes the child start a new session, set `limits` on itself, mark
/// every descriptor but stdin, stdout and stderr close-on-exec, take the
/// default action for every signal and, last, enforce the Landlock `ruleset`
/// (giving up every capability first) and install the `seccomp_filter` on
/// itself, before it executes the program; with `ignore_interrupt`, the
/// program ignores `SIGINT`.
///
/// A signal this process ignores stays ignored across `exec`: a harness
/// started where `SIGINT` is ignored (a background job of a script, `nohup`,
/// some CI runners) would otherwise run every command with `SIGINT` ignored,
/// and an interrupt would give it no chance to stop its own way before it is
/// killed. (The standard library resets the signal mask and `SIGPIPE` only.)
///
/// The new session makes the child the leader of its own process group, so
/// the whole group can be signalled, and leaves it without a controlling
/// terminal: a program that would prompt on `/dev/tty` (a password, a
/// username) fails at once instead of waiting, stopped, for the timeout.
///
/// The ruleset is enforced with `no_new_privs` set first, which Landlock
/// requires of a process without `CAP_SYS_ADMIN` and which keeps a setuid
/// program from regaining what the ruleset took. The descriptor is the
/// caller's, open until the command has started; the child's copy is closed
/// by `exec`.
///
/// A harness run as root (in a container, on CI) would otherwise hand its
/// capabilities to the command, and Landlock does not take them:
/// `CAP_SYS_PTRACE` alone lets it read `/proc/<pid>/environ` of every process
/// outside (the harness's own environment, with your tokens), which Landlock's
/// ptrace scoping refuses only to a process without it.
pub(crate) fn prepare_child(
    command: &mut Command,
    limits: ChildLimits,
    ruleset: Option<&OwnedFd>,
    seccomp_filter: Option<Program>,
    ignore_interrupt: bool,
) {
    let ruleset = ruleset.map(AsRawFd::as_raw_fd);
    // SAFETY: the closure owns `Copy` values and a shared filter it only
    // reads, and makes only raw system calls through rustix (`setsid`,
    // `prlimit64`, `openat`, `getdents64`, `fcntl`, `prctl`, `capset`) and
    // libc's raw `syscall` (`rt_sigaction`, `landlock_restrict_self`,
    // `seccomp`), with buffers on the stack: no allocation, no lock, nothing
    // but async-signal-safe work. An error becomes an `io::Error` from its raw
    // errno, which does not allocate either.
    unsafe {
        command.pre_exec(move || {
            setsid()?;
            set_limits(limits)?;
            close_inherited_on_exec()?;
            default_signal_actions();
            if ignore_interrupt {
                ignore_sigint();
            }
            if let Some(ruleset) = ruleset {
                drop_capabilities()?;
                restrict_self(ruleset)?;
            }
            match &seccomp_filter {
                Some(program) => install_seccomp_filter(program),
                None => Ok(()),
            }
        });
    }
}

fn set_limits(limits: ChildLimits) -> io::Result<()> {
    limit(Resource::Core, 0)?;
    if let Some(bytes) = limits.max_file_size {
        limit(Resource::Fsize, bytes)?;
    }
    if let Some(count) = limits.max_processes {
        limit(Resource::Nproc, count)?;
    }
    Ok(())
}

fn limit(resource: Resource, value: u64) -> io::Result<()> {
    setrlimit(
        resource,
        Rlimit {
            current: Some(value),
            maximum: Some(value),
        },
    )
    .map_err(io::Error::from)
}

/// Marks every open descriptor above stderr close-on-exec, so the command
/// inherits nothing else of this process: not a jobserver pipe its parent
/// passed on, not a socket a library opened without `O_CLOEXEC`.
fn close_inherited_on_exec() -> io::Result<()> {
    // No O_CLOEXEC needed: `dir` is closed when this returns, before `exec`.
    let dir = openat(CWD, c"/proc/self/fd", OFlags::RDONLY, Mode::empty())?;
    let mut buffer = [MaybeUninit::<u8>::uninit(); 1024];
    let mut entries = RawDir::new(&dir, &mut buffer);
    while let Some(entry) = entries.next() {
        let name = entry?
            .file_name()
            .to_str()
            .ok()
            .and_then(|name| name.parse::<RawFd>().ok());
        let Some(fd) = name.filter(|&fd| fd > 2 && fd != dir.as_raw_fd()) else {
            continue;
        };
        // SAFETY: the child is single-threaded and `fd` is listed as open in
        // its descriptor table, so it stays open while it is borrowed here.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        // Close-on-exec is the only descriptor flag.
        fcntl_setfd(fd, FdFlags::CLOEXEC)?;
    }
    Ok(())
}

/// Sets every signal to its default action, so that the program starts as if
/// from a fresh shell whatever this process ignores.
///
/// Through the raw system call: the C library's `signal` refuses the signals it
/// keeps for its threads (32 and 33 in glibc), and a parent may ignore those too
/// (one running these tests did). Before `exec` the child has one thread and
/// no use for them.
fn default_signal_actions() {
    /// The kernel's number of signals (`_NSIG`); they are numbered from 1.
    const SIGNALS: libc::c_long = 64;
    // The kernel's `struct sigaction`, all zero: SIG_DFL, no flags, no mask.
    let default = [0u64; 4];
    for signal in 1..=SIGNALS {
        // SAFETY: a raw system call that reads 32 bytes from a buffer on the
        // stack and writes nothing (no old action asked for). SIGKILL and
        // SIGSTOP cannot be changed; their EINVAL is ignored.
        unsafe {
            libc::syscall(
                libc::SYS_rt_sigaction,
                signal,
                default.as_ptr(),
                std::ptr::null_mut::<u64>(),
                8 as libc::c_long,
            )
        };
    }
}

/// Makes this child, and the program it executes, ignore `SIGINT`.
fn ignore_sigint() {
    // SAFETY: setting a disposition to SIG_IGN installs no handler, and
    // `signal` is async-signal-safe.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
}

/// Gives up every capability this child holds, for itself and for every
/// program it executes.
///
/// The bounding set goes first, while `CAP_SETPCAP` is still held: with it
/// empty, not even root's `exec` grants a capability again (and with
/// `no_new_privs`, set next, neither does a setuid or file-capability
/// program). A child without `CAP_SETPCAP` holds no capability to give up,
/// and cannot empty its bounding set: `EPERM` stops that loop, `EINVAL` ends
/// it past the kernel's last capability.
fn drop_capabilities() -> io::Result<()> {
    for bit in 0..u64::BITS {
        match remove_capability_from_bounding_set(CapabilitySet::from_bits_retain(1 << bit)) {
            Ok(()) => {}
            Err(Errno::INVAL | Errno::PERM) => break,
            Err(error) => return Err(error.into()),
        }
    }
    clear_ambient_capability_set()?;
    set_capabilities(
        None,
        CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        },
    )?;
    Ok(())
}

/// Enforces the Landlock ruleset `ruleset` on this (single-threaded) child.
fn restrict_self(ruleset: RawFd) -> io::Result<()> {
    set_no_new_privs(true)?;
    // SAFETY: a raw system call on a descriptor that is open in the child
    // (inherited from the parent, which holds it until the child has
    // started), with no flags and no memory passed.
    let result = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Installs the seccomp filter `program` on this (single-threaded) child,
/// with `no_new_privs`, which the kernel requires of a process without
/// `CAP_SYS_ADMIN`.
fn install_seccomp_filter(program: &[libc::sock_filter]) -> io::Result<()> {
    set_no_new_privs(true)?;
    let fprog = libc::sock_fprog {
        len: u16::try_from(program.len()).unwrap_or(u16::MAX),
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: `fprog` points at `program`, which outlives the call; the
    // kernel copies the filter before it returns and writes nothing.
    let result = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0u32,
            &raw const fprog,
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
