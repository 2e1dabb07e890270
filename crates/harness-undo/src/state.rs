//! Recording a state (working tree, index, HEAD) as commits under our own refs.
//!
//! A recorded state has the shape of a `git stash` entry: a commit of the
//! working tree whose first parent is HEAD and whose second parent is a commit
//! of the index, plus, when states form a chain, the previous state as a third
//! parent. Every object of every state stays reachable from a ref, so git's
//! garbage collection never takes one.

use std::path::{Path, PathBuf};

use git2::build::TreeUpdateBuilder;
use git2::{Commit, FileMode, Index, Oid, Repository, Signature};

use crate::error::GitContext;
use crate::record::State;
use crate::{Error, paths};

/// The name and address of the commits the harness makes on its own.
pub(crate) const HARNESS_NAME: &str = "harness";
/// See [`HARNESS_NAME`].
pub(crate) const HARNESS_EMAIL: &str = "harness@localhost";

/// The identity of the harness's own commits: snapshots, checkpoints and the
/// initial commit of `--init`.
pub(crate) fn harness_signature() -> Result<Signature<'static>, Error> {
    Signature::now(HARNESS_NAME, HARNESS_EMAIL).context("make the harness's signature")
}

/// The user's identity from git's configuration (`user.name` and `user.email`),
/// or the harness's when either is missing or empty.
pub(crate) fn user_signature(config: &git2::Config) -> Result<Signature<'static>, Error> {
    let name = config.get_string("user.name").unwrap_or_default();
    let email = config.get_string("user.email").unwrap_or_default();
    if name.is_empty() || email.is_empty() {
        harness_signature()
    } else {
        Signature::now(&name, &email).context("make the user's signature")
    }
}

/// The path of the index of the repository at `git_dir`.
pub(crate) fn index_path(git_dir: &Path) -> PathBuf {
    git_dir.join("index")
}

/// Writes the tree of the user's index into the object database, without
/// writing the index itself. Unmerged paths cannot be a tree, so they are refused.
pub(crate) fn index_tree(repo: &Repository) -> Result<Oid, Error> {
    let mut index = Index::open(&index_path(repo.path())).context("read the index")?;
    if index.has_conflicts() {
        let mut unmerged: Vec<PathBuf> = index
            .conflicts()
            .context("read the index's conflicts")?
            .filter_map(Result::ok)
            .filter_map(|c| c.our.or(c.their).or(c.ancestor))
            .map(|entry| paths::from_bytes(&entry.path))
            .collect();
        unmerged.sort();
        return Err(Error::Unmerged { paths: unmerged });
    }
    index.write_tree_to(repo).context("write the index's tree")
}

/// Records the working tree `tree` and the index `index_tree` on top of
/// `head`, chained after `previous` if given.
pub(crate) fn record(
    repo: &Repository,
    tree: Oid,
    index_tree: Oid,
    head: Oid,
    message: &str,
    previous: Option<Oid>,
) -> Result<State, Error> {
    let signature = harness_signature()?;
    let head_commit = repo.find_commit(head).context("find HEAD's commit")?;
    let index_commit = commit(
        repo,
        &signature,
        &format!("index of {message}"),
        index_tree,
        std::slice::from_ref(&head_commit),
    )?;
    let mut parents = vec![
        head_commit,
        repo.find_commit(index_commit)
            .context("find the index commit")?,
    ];
    if let Some(previous) = previous {
        parents.push(
            repo.find_commit(previous)
                .context("find the previous state")?,
        );
    }
    let commit = commit(repo, &signature, message, tree, &parents)?;
    Ok(State {
        commit,
        tree,
        index_tree,
        head,
    })
}

/// Tree `tree` with the files and symlinks at `paths` (relative to `root`)
/// added as they are on disk, byte for byte. A file larger than
/// [`LARGEST_RECORDED_FILE`] is refused before anything is read: saving it
/// means holding it in memory whole.
///
/// [`LARGEST_RECORDED_FILE`]: crate::LARGEST_RECORDED_FILE
pub(crate) fn with_files(
    repo: &Repository,
    root: &Path,
    tree: Oid,
    paths: &[PathBuf],
) -> Result<Oid, Error> {
    let mut update = TreeUpdateBuilder::new();
    for path in paths {
        let full = root.join(path);
        let metadata = std::fs::symlink_metadata(&full).map_err(|e| Error::io(&full, e))?;
        let (content, mode) = if metadata.is_symlink() {
            let target = std::fs::read_link(&full).map_err(|e| Error::io(&full, e))?;
            (paths::to_bytes(&target), FileMode::Link)
        } else {
            let (content, metadata) = read_file(&full, path)?;
            let mode = if paths::is_executable(&metadata) {
                FileMode::BlobExecutable
            } else {
                FileMode::Blob
            };
            (content, mode)
        };
        let blob = repo.blob(&content).context("store a displaced file")?;
        update.upsert(path.as_path(), blob, mode);
    }
    let base = repo.find_tree(tree).context("find the tree to extend")?;
    update
        .create_updated(repo, &base)
        .context("add displaced files to the saved tree")
}

/// The bytes of the regular file at `full` (`path` in the workspace), with what the open
/// file's metadata says, read without blocking on what is not one: a command can make a
/// named pipe where a file is saved, and opening one for reading waits for a writer,
/// forever. What was opened is judged, not what stood there a moment before.
fn read_file(full: &Path, path: &Path) -> Result<(Vec<u8>, std::fs::Metadata), Error> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        [rustix::fs::OFlags::NONBLOCK, rustix::fs::OFlags::NOFOLLOW]
            .into_iter()
            .collect::<rustix::fs::OFlags>()
            .bits() as i32,
    );
    let mut file = options.open(full).map_err(|error| {
        // A socket cannot be opened at all.
        match std::fs::symlink_metadata(full) {
            Ok(seen) if !seen.is_file() && !seen.is_symlink() => Error::NotAFile {
                path: path.to_path_buf(),
                kind: kind_of(&seen.file_type()),
            },
            _ => Error::io(full, error),
        }
    })?;
    let metadata = file.metadata().map_err(|e| Error::io(full, e))?;
    if !metadata.is_file() {
        return Err(Error::NotAFile {
            path: path.to_path_buf(),
            kind: kind_of(&metadata.file_type()),
        });
    }
    if metadata.len() > crate::LARGEST_RECORDED_FILE {
        return Err(Error::TooLargeToSave {
            path: path.to_path_buf(),
        });
    }
    let mut content = Vec::new();
    file.read_to_end(&mut content)
        .map_err(|e| Error::io(full, e))?;
    Ok((content, metadata))
}

/// What a file of type `kind` that is not a regular file is, in words.
fn kind_of(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "named pipe";
        }
        if kind.is_socket() {
            return "socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "device";
        }
    }
    if kind.is_dir() {
        "directory"
    } else {
        "special file"
    }
}

/// The state of a clean tree at `head`: its tree is the working tree and the index.
pub(crate) fn clean(repo: &Repository, head: Oid) -> Result<State, Error> {
    let tree = repo
        .find_commit(head)
        .context("find HEAD's commit")?
        .tree_id();
    Ok(State {
        commit: head,
        tree,
        index_tree: tree,
        head,
    })
}

/// Makes a commit of `tree` with `parents`, updating no ref.
pub(crate) fn commit(
    repo: &Repository,
    signature: &Signature<'_>,
    message: &str,
    tree: Oid,
    parents: &[Commit<'_>],
) -> Result<Oid, Error> {
    let tree = repo.find_tree(tree).context("find the tree to commit")?;
    let parents: Vec<&Commit<'_>> = parents.iter().collect();
    repo.commit(None, signature, signature, message, &tree, &parents)
        .context("write a commit")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Opens `fifo` for writing, without blocking, after a while: that succeeds only while
    /// a reader waits on it (what the code under test must never do), and ends the wait,
    /// so the test fails instead of hanging. The flag says whether it did.
    #[cfg(unix)]
    fn rescue(fifo: &Path) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        use std::os::unix::fs::OpenOptionsExt;
        let rescued = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (fifo, flag) = (fifo.to_path_buf(), rescued.clone());
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(5));
            let writer = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
                .open(fifo);
            flag.store(writer.is_ok(), std::sync::atomic::Ordering::SeqCst);
        });
        rescued
    }

    #[cfg(unix)]
    #[test]
    fn only_a_regular_file_is_read_and_nothing_waits_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let rescued = rescue(&fifo);
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        for (full, kind) in [
            (fifo, "named pipe"),
            (socket, "socket"),
            (PathBuf::from("/dev/null"), "device"),
            (dir.path().to_path_buf(), "directory"),
        ] {
            match read_file(&full, Path::new("p")) {
                Err(Error::NotAFile { path, kind: got }) => {
                    assert_eq!((path.as_path(), got), (Path::new("p"), kind));
                }
                other => panic!("{}: {other:?}", full.display()),
            }
        }
        let file = dir.path().join("file");
        std::fs::write(&file, "bytes").unwrap();
        let (content, metadata) = read_file(&file, Path::new("file")).unwrap();
        assert_eq!((content.as_slice(), metadata.len()), (&b"bytes"[..], 5));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(
            matches!(read_file(&link, Path::new("link")), Err(Error::Io { .. })),
            "a link is not followed, and is not taken for a special file"
        );
        assert!(
            !rescued.load(std::sync::atomic::Ordering::SeqCst),
            "the read waited for a writer"
        );
    }

    fn config(text: &str) -> (tempfile::TempDir, git2::Config) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(&path, text).unwrap();
        let config = git2::Config::open(&path).unwrap();
        (dir, config)
    }

    macro_rules! signs_as {
        ($($name:ident: $config:expr => $who:expr, $address:expr;)*) => {$(
            #[test]
            fn $name() {
                let (_dir, config) = config($config);
                let signature = user_signature(&config).unwrap();
                assert_eq!(signature.name().unwrap(), $who);
                assert_eq!(signature.email().unwrap(), $address);
            }
        )*};
    }

    signs_as! {
        configured_user: "[user]\n\tname = Ada\n\temail = ada@example.org\n" => "Ada", "ada@example.org";
        nothing_configured: "" => HARNESS_NAME, HARNESS_EMAIL;
        name_only: "[user]\n\tname = Ada\n" => HARNESS_NAME, HARNESS_EMAIL;
        email_only: "[user]\n\temail = ada@example.org\n" => HARNESS_NAME, HARNESS_EMAIL;
        empty_name: "[user]\n\tname = \"\"\n\temail = ada@example.org\n" => HARNESS_NAME, HARNESS_EMAIL;
    }
}
