//! The arguments of the tasks that read the workspace and can only check it:
//! `[--check] [--root DIR]` (`cargo xtask docs`, `cargo xtask structure`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

/// What `[--check] [--root DIR]` asked for, or the exit status when the task should end
/// at once (`--help`, exit 0; an unknown argument, said with `usage`, exit 2).
pub(crate) enum CheckArgs {
    Run { check: bool, root: PathBuf },
    Exit(ExitCode),
}

impl CheckArgs {
    /// Parses `args`; `usage` is printed for `--help` and after an unknown argument. The
    /// root defaults to this workspace's.
    pub(crate) fn parse(args: &[String], usage: &str) -> Result<CheckArgs> {
        let mut check = false;
        let mut root = None;
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--check" => check = true,
                "--root" => {
                    let dir = args.next().context("--root needs a directory")?;
                    root = Some(PathBuf::from(dir));
                }
                "-h" | "--help" => {
                    print!("{usage}");
                    return Ok(CheckArgs::Exit(ExitCode::SUCCESS));
                }
                other => {
                    eprint!("error: unknown argument {other:?}\n\n{usage}");
                    return Ok(CheckArgs::Exit(ExitCode::from(2)));
                }
            }
        }
        let root = root.unwrap_or_else(crate::eval::workspace_root);
        Ok(CheckArgs::Run { check, root })
    }
}
