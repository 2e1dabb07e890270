//! A task's own working copy, `OUT/<id>/work`: a fresh `git clone` of its repository, never
//! the user's checkout. Cloning a local path uses `--no-hardlinks`, so no object file is
//! shared with the user's repository either; a URL is cloned, then its `ref` checked out.
//! What is not committed in the user's checkout is not in the clone.
//!
//! The harness's undo store is per workspace, so each working copy gets a store of its own
//! without anything done here.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::Error;
use crate::spec::Source;

/// Makes `work` a fresh clone of `source`, with `reference` checked out when given. A
/// `work` left by an earlier try at the task (stopped, or killed) is removed first: it is
/// ours, under the batch's output directory.
///
/// # Errors
///
/// A local repository that does not exist, a leftover that cannot be removed, or a git
/// command that fails (with what git said).
pub fn clone_workdir(source: &Source, reference: Option<&str>, work: &Path) -> Result<(), Error> {
    if work.exists() {
        std::fs::remove_dir_all(work).map_err(|source| Error::Write {
            path: work.to_owned(),
            source,
        })?;
    }
    let from = match source {
        Source::Local(path) => {
            if !path.is_dir() {
                return Err(Error::NoRepository { path: path.clone() });
            }
            path.as_os_str().to_owned()
        }
        Source::Url(url) => url.into(),
    };
    let mut clone = vec!["clone".into(), "--quiet".into()];
    if matches!(source, Source::Local(_)) {
        clone.push("--no-hardlinks".into());
    }
    clone.extend(["--".into(), from, work.as_os_str().to_owned()]);
    git(None, &clone)?;
    if let Some(reference) = reference {
        git(
            Some(work),
            &["checkout".into(), "--quiet".into(), reference.into()],
        )?;
    }
    Ok(())
}

/// Runs `git ARGS` (in `dir`, when given), never asking for a password: a batch has no one
/// to answer.
fn git(dir: Option<&Path>, args: &[std::ffi::OsString]) -> Result<(), Error> {
    let mut command = Command::new("git");
    if let Some(dir) = dir {
        command.arg("-C").arg(dir);
    }
    let line = args
        .iter()
        .map(|arg| arg.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    let output = command
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .map_err(|error| Error::Git {
            command: line.clone(),
            stderr: format!("cannot start git: {error}"),
        })?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    Err(Error::Git {
        command: line,
        stderr: match said.trim() {
            "" => output.status.to_string(),
            said => said.lines().collect::<Vec<_>>().join(" "),
        },
    })
}
