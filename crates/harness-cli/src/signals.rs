//! What a signal that ends the harness (Ctrl-C, `SIGTERM`, `SIGHUP`) does to the commands
//! it is running: none outlives it.
//!
//! A command runs in a process group of its own, so the terminal's Ctrl-C, a `kill`, or a
//! closed terminal reaches the harness and not the command. Under bwrap the command dies
//! with the harness (`--die-with-parent`, its own PID namespace); under Landlock and with
//! no tier nothing else would end it. So every command that runs commands (`run`, `tool`,
//! `mcp`) handles the three signals, and kills its commands before it exits.

use harness_exec::Interrupter;

/// Calls `handler` with the number of the signal received (1 for the first) on each
/// SIGINT, SIGTERM or SIGHUP, from a thread of its own. One handler per process.
pub(crate) fn on_ending_signal(mut handler: impl FnMut(usize) + Send + 'static) {
    let mut received = 0;
    let installed = ctrlc::set_handler(move || {
        received += 1;
        handler(received);
    });
    if let Err(error) = installed {
        tracing::warn!(
            "cannot handle Ctrl-C, SIGTERM and SIGHUP ({error}): they will end the harness at \
             once, and under the landlock and none tiers a running command goes on"
        );
    }
}

/// Kills every command `interrupter` knows, then ends the process with `code`: the end of a
/// harness that a signal stops at once.
pub(crate) fn kill_commands_and_exit(interrupter: &Interrupter, code: u8) -> ! {
    interrupter.kill();
    std::process::exit(i32::from(code))
}
