//! Opening the workspace's repository, and creating it for `--init`.

use std::fs;
use std::path::{Path, PathBuf};

use git2::{ErrorCode, IndexAddOption, Repository};

use crate::Error;
use crate::error::GitContext;
use crate::state::harness_signature;

/// The message of the commit `--init` makes.
pub(crate) const INIT_MESSAGE: &str = "Initial commit by harness\n\n\
    Records the files as they were before the first run (ignored files excluded),\n\
    so that the run can be diffed and undone.\n";

/// The repository whose working tree's top level is `root`.
///
/// Refuses a directory that is not in a repository, a subdirectory of one, and
/// a bare repository.
pub(crate) fn open(root: &Path) -> Result<(Repository, PathBuf), Error> {
    let root = fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
    let repo = match Repository::discover(&root) {
        Ok(repo) => repo,
        Err(e) => {
            return Err(if e.code() == ErrorCode::NotFound {
                Error::NotARepository { root }
            } else {
                Error::Git {
                    action: format!("open the repository at {}", root.display()),
                    detail: e.message().to_string(),
                }
            });
        }
    };
    let Some(workdir) = repo.workdir() else {
        return Err(Error::BareRepository { root });
    };
    let top = fs::canonicalize(workdir).map_err(|e| Error::io(workdir, e))?;
    if top != root {
        return Err(Error::NotRepositoryRoot { root, top });
    }
    Ok((repo, root))
}

/// Like [`open`], for a run about to begin: with `init`, a directory that is
/// not a repository becomes one, and a repository without commits gets an
/// initial commit of its files; without `init` both are refused. Sparse
/// checkouts are refused.
pub(crate) fn open_for_run(root: &Path, init: bool) -> Result<(Repository, PathBuf), Error> {
    let (repo, root) = match open(root) {
        Err(Error::NotARepository { root }) if init => {
            let repo = Repository::init(&root)
                .context(format_args!("create a repository at {}", root.display()))?;
            (repo, root)
        }
        other => other?,
    };
    if head_commit(&repo)?.is_none() {
        if !init {
            return Err(Error::NoCommits { root });
        }
        commit_everything(&repo)?;
    }
    let config = repo
        .config()
        .context("read the repository's configuration")?;
    if config.get_bool("core.sparseCheckout").unwrap_or(false) {
        return Err(Error::SparseCheckout { root });
    }
    Ok((repo, root))
}

/// Commits every file that is not ignored as the first commit on HEAD's branch.
fn commit_everything(repo: &Repository) -> Result<(), Error> {
    let mut index = repo.index().context("read the index")?;
    index
        .add_all(["*"], IndexAddOption::DEFAULT, None)
        .context("add the files to the index")?;
    // Files staged earlier and deleted since are not "current files".
    index
        .update_all(["*"], None)
        .context("drop deleted files from the index")?;
    index.write().context("write the index")?;
    let tree = index.write_tree().context("write the initial tree")?;
    let tree = repo.find_tree(tree).context("find the initial tree")?;
    let signature = harness_signature()?;
    repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        INIT_MESSAGE,
        &tree,
        &[],
    )
    .context("make the initial commit")?;
    Ok(())
}

/// HEAD's commit, or `None` on a branch without commits.
pub(crate) fn head_commit(repo: &Repository) -> Result<Option<git2::Oid>, Error> {
    match repo.head() {
        Ok(head) => Ok(Some(
            head.peel_to_commit().context("read HEAD's commit")?.id(),
        )),
        Err(e) => {
            if e.code() == ErrorCode::UnbornBranch {
                Ok(None)
            } else {
                Err(e).context("read HEAD")
            }
        }
    }
}
