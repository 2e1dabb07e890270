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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt as _;
    use std::path::PathBuf;

    use super::*;

    /// A repository with two commits, `first` and `second`; returns it and the first's id.
    fn repository(dir: &Path) -> (PathBuf, String) {
        let repo = dir.join("user");
        std::fs::create_dir(&repo).unwrap();
        let git = |args: &[&str]| {
            let output = Command::new("git")
                .arg("-C")
                .arg(&repo)
                .args(["-c", "user.name=t", "-c", "user.email=t@localhost"])
                .args(args)
                .output()
                .unwrap();
            assert!(output.status.success(), "{args:?}: {output:?}");
            String::from_utf8(output.stdout).unwrap().trim().to_owned()
        };
        git(&["init", "--quiet"]);
        std::fs::write(repo.join("file"), "first\n").unwrap();
        git(&["add", "file"]);
        git(&["commit", "--quiet", "-m", "first"]);
        let first = git(&["rev-parse", "HEAD"]);
        std::fs::write(repo.join("file"), "second\n").unwrap();
        git(&["commit", "--quiet", "--all", "-m", "second"]);
        // Not committed: not in any clone.
        std::fs::write(repo.join("file"), "uncommitted\n").unwrap();
        (repo, first)
    }

    #[test]
    fn a_local_path_is_cloned_without_sharing_a_file_and_without_what_is_uncommitted() {
        let dir = tempfile::tempdir().unwrap();
        let (repo, _) = repository(dir.path());
        let work = dir.path().join("out/t/work");
        clone_workdir(&Source::Local(repo.clone()), None, &work).unwrap();
        assert_eq!(
            std::fs::read_to_string(work.join("file")).unwrap(),
            "second\n"
        );
        assert_eq!(
            std::fs::read_to_string(repo.join("file")).unwrap(),
            "uncommitted\n"
        );
        // --no-hardlinks: every object file is a copy, with a single link.
        let objects = work.join(".git/objects");
        for entry in std::fs::read_dir(&objects).unwrap().flatten() {
            for object in std::fs::read_dir(entry.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                assert_eq!(object.metadata().unwrap().nlink(), 1, "{:?}", object.path());
            }
        }
        // A leftover of an earlier try is replaced by a fresh clone.
        std::fs::write(work.join("file"), "changed by a killed run\n").unwrap();
        clone_workdir(&Source::Local(repo), None, &work).unwrap();
        assert_eq!(
            std::fs::read_to_string(work.join("file")).unwrap(),
            "second\n"
        );
    }

    #[test]
    fn a_url_is_cloned_and_its_ref_checked_out() {
        let dir = tempfile::tempdir().unwrap();
        let (repo, first) = repository(dir.path());
        let work = dir.path().join("work");
        let url = format!("file://{}", repo.display());
        clone_workdir(&Source::Url(url), Some(&first), &work).unwrap();
        assert_eq!(
            std::fs::read_to_string(work.join("file")).unwrap(),
            "first\n"
        );
    }

    #[test]
    fn a_missing_repository_or_ref_is_an_error_saying_which() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let error =
            clone_workdir(&Source::Local(missing), None, &dir.path().join("w1")).unwrap_err();
        assert!(error.to_string().contains("nope does not exist"), "{error}");
        let (repo, _) = repository(dir.path());
        let error = clone_workdir(
            &Source::Local(repo),
            Some("no-such-ref"),
            &dir.path().join("w2"),
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("`git checkout --quiet no-such-ref` failed: "),
            "{error}"
        );
    }
}
