//! `cargo xtask reap PROGRAM [ARGS]...`: run a program as the init of a PID
//! namespace, reaping every orphan, and exit with the program's status.
//!
//! `cargo xtask mutate` starts cargo-mutants this way for crates whose tests kill
//! process trees (see `mutate.rs`). A namespace's init must reap what is
//! re-parented to it, or killed orphans stay zombies and look alive to the tests;
//! and when init exits the kernel kills the rest of the namespace, so nothing a
//! mutant started outlives the run.

use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use rustix::io::Errno;
use rustix::process::{WaitOptions, wait};

pub(crate) fn run(args: &[String]) -> Result<ExitCode> {
    let Some((program, rest)) = args.split_first() else {
        bail!("usage: cargo xtask reap PROGRAM [ARGS]...");
    };
    let child = Command::new(program)
        .args(rest)
        .spawn()
        .with_context(|| format!("starting {program}"))?;
    let main = child.id();
    loop {
        match wait(WaitOptions::empty()) {
            Ok(Some((pid, status))) if pid.as_raw_nonzero().get().unsigned_abs() == main => {
                let code = match (status.exit_status(), status.terminating_signal()) {
                    (Some(code), _) => code,
                    (None, Some(signal)) => 128 + signal,
                    (None, None) => 1,
                };
                return Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)));
            }
            // An orphan: reaping it is the whole point.
            Ok(_) | Err(Errno::INTR) => {}
            Err(errno) => bail!("waiting for children: {errno}"),
        }
    }
}
