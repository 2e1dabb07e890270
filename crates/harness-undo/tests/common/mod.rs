//! Fixtures: real repositories in temporary directories, and their observable state.
//!
//! Repositories are made in-process with libgit2 and a repository-local
//! configuration, and the git command line runs with the global and system
//! configuration switched off, so no test depends on this machine's git identity
//! or settings.
//!
//! They live on tmpfs (`/dev/shm`) where there is one: what is tested is git's
//! logic, and on a disk shared with other builds each file operation can stall
//! for milliseconds, which hundreds of property-test cases multiply.

#![allow(dead_code)] // Each test file uses a different part.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use git2::{IndexAddOption, Repository, Signature};

/// A repository in a temporary directory.
pub(crate) struct Repo {
    /// The temporary directory; the repository is its subdirectory `repo`, so
    /// that tests have room outside it.
    pub(crate) dir: tempfile::TempDir,
    /// The repository's top level.
    pub(crate) root: PathBuf,
}

/// What a working tree holds at one path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    File { bytes: Vec<u8>, executable: bool },
    Symlink(Vec<u8>),
}

/// An index entry: path, mode, object id.
pub(crate) type IndexEntry = (String, u32, String);

impl Repo {
    /// An empty directory that is not a repository.
    pub(crate) fn plain() -> Repo {
        isolate_store();
        let shm = Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            tempfile::tempdir_in(shm).unwrap()
        } else {
            tempfile::tempdir().unwrap()
        };
        let root = fs::canonicalize(dir.path()).unwrap().join("repo");
        fs::create_dir(&root).unwrap();
        Repo { dir, root }
    }

    /// A repository without commits.
    pub(crate) fn unborn() -> Repo {
        let repo = Repo::plain();
        // No hook samples from git's templates: fewer files to make and remove.
        let mut options = git2::RepositoryInitOptions::new();
        options.external_template(false);
        let git = Repository::init_opts(&repo.root, &options).unwrap();
        let mut config = git.config().unwrap();
        for (key, value) in [
            ("user.name", "Test User"),
            ("user.email", "test@example.org"),
            ("core.autocrlf", "false"),
            ("core.filemode", "true"),
            ("core.symlinks", "true"),
        ] {
            config.set_str(key, value).unwrap();
        }
        repo
    }

    /// A repository with one commit of `files` (and nothing else).
    pub(crate) fn with_files(files: &[(&str, &str)]) -> Repo {
        let repo = Repo::unborn();
        for (path, content) in files {
            repo.write(path, content);
        }
        repo.commit_all("initial");
        repo
    }

    pub(crate) fn git2(&self) -> Repository {
        Repository::open(&self.root).unwrap()
    }

    pub(crate) fn path(&self, path: &str) -> PathBuf {
        self.root.join(path)
    }

    /// Writes a file, creating its directories.
    pub(crate) fn write(&self, path: &str, content: impl AsRef<[u8]>) {
        let full = self.path(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, content).unwrap();
    }

    pub(crate) fn read(&self, path: &str) -> String {
        fs::read_to_string(self.path(path)).unwrap()
    }

    pub(crate) fn exists(&self, path: &str) -> bool {
        fs::symlink_metadata(self.path(path)).is_ok()
    }

    pub(crate) fn remove(&self, path: &str) {
        fs::remove_file(self.path(path)).unwrap();
    }

    pub(crate) fn chmod(&self, path: &str, mode: u32) {
        fs::set_permissions(self.path(path), fs::Permissions::from_mode(mode)).unwrap();
    }

    pub(crate) fn symlink(&self, path: &str, target: &str) {
        std::os::unix::fs::symlink(target, self.path(path)).unwrap();
    }

    /// `git add` of one path (or its removal from the index when it is gone),
    /// replacing entries it collides with, as git does.
    pub(crate) fn stage(&self, path: &str) {
        let git = self.git2();
        let mut index = git.index().unwrap();
        let path = Path::new(path);
        index.remove_dir(path, 0).unwrap();
        for ancestor in path
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
        {
            index.remove_path(ancestor).unwrap();
        }
        if self.exists(path.to_str().unwrap()) {
            index.add_path(path).unwrap();
        } else {
            index.remove_path(path).unwrap();
        }
        index.write().unwrap();
    }

    /// Stages everything and commits it on HEAD.
    pub(crate) fn commit_all(&self, message: &str) -> String {
        let git = self.git2();
        let mut index = git.index().unwrap();
        index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = git.find_tree(index.write_tree().unwrap()).unwrap();
        let signature = Signature::now("Test User", "test@example.org").unwrap();
        let parent = git.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<_> = parent.iter().collect();
        git.commit(
            Some("HEAD"),
            &signature,
            &signature,
            message,
            &tree,
            &parents,
        )
        .unwrap()
        .to_string()
    }

    pub(crate) fn head(&self) -> String {
        self.git2()
            .head()
            .unwrap()
            .peel_to_commit()
            .unwrap()
            .id()
            .to_string()
    }

    /// Runs the git command line in the repository and returns its stdout.
    pub(crate) fn git(&self, args: &[&str]) -> String {
        let output = git_command(&self.root).args(args).output().unwrap();
        assert!(
            output.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// Every file and symlink of the working tree, `.git` excluded.
    pub(crate) fn tree(&self) -> BTreeMap<String, Entry> {
        let mut entries = BTreeMap::new();
        walk(&self.root, &self.root, &mut entries);
        entries
    }

    /// The entries of the user's index.
    pub(crate) fn index(&self) -> Vec<IndexEntry> {
        let index = git2::Index::open(&self.root.join(".git/index")).unwrap();
        index
            .iter()
            .map(|e| (String::from_utf8(e.path).unwrap(), e.mode, e.id.to_string()))
            .collect()
    }

    /// The bytes of files under `.git` that the user owns: index, HEAD, refs.
    pub(crate) fn user_git_state(&self) -> Vec<(String, Vec<u8>)> {
        let mut state = Vec::new();
        for name in ["index", "HEAD", "packed-refs"] {
            if let Ok(bytes) = fs::read(self.root.join(".git").join(name)) {
                state.push((name.to_string(), bytes));
            }
        }
        for (name, id) in self.refs() {
            if !name.starts_with("refs/harness/") && !name.starts_with("refs/tags/harness/") {
                state.push((name, id.into_bytes()));
            }
        }
        state
    }

    /// Every ref and what it points at.
    pub(crate) fn refs(&self) -> Vec<(String, String)> {
        let git = self.git2();
        let refs = git.references().unwrap();
        let mut all: Vec<(String, String)> = refs
            .flatten()
            .map(|r| {
                let target = r.target().map(|id| id.to_string()).unwrap_or_default();
                (r.name().unwrap().to_string(), target)
            })
            .collect();
        all.sort();
        all
    }
}

/// The tree `git add --all` records, starting from the index of commit `base`:
/// git's own answer to what a snapshot must contain.
pub(crate) fn git_snapshot(repo: &Repo, base: &str) -> String {
    let scratch = tempfile::tempdir_in(repo.dir.path()).unwrap();
    let index = scratch.path().join("index");
    let run = |args: &[&str]| {
        let output = git_command(&repo.root)
            .env("GIT_INDEX_FILE", &index)
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    };
    run(&["read-tree", base]);
    run(&["add", "--all"]);
    run(&["write-tree"])
}

/// The tree of `commit`.
pub(crate) fn tree_of(repo: &Repo, commit: &str) -> String {
    let git = repo.git2();
    let commit = git
        .find_commit(git2::Oid::from_str(commit).unwrap())
        .unwrap();
    commit.tree_id().to_string()
}

/// A git command with no global or system configuration and a fixed identity.
pub(crate) fn git_command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test User")
        .env("GIT_AUTHOR_EMAIL", "test@example.org")
        .env("GIT_COMMITTER_NAME", "Test User")
        .env("GIT_COMMITTER_EMAIL", "test@example.org")
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE");
    command
}

fn walk(root: &Path, dir: &Path, entries: &mut BTreeMap<String, Entry>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if dir == root && entry.file_name() == ".git" {
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let metadata = fs::symlink_metadata(&path).unwrap();
        if metadata.is_symlink() {
            let target = fs::read_link(&path).unwrap();
            entries.insert(rel, Entry::Symlink(target.as_os_str().as_bytes().to_vec()));
        } else if metadata.is_dir() {
            walk(root, &path, entries);
        } else {
            entries.insert(
                rel,
                Entry::File {
                    bytes: fs::read(&path).unwrap(),
                    executable: metadata.permissions().mode() & 0o111 != 0,
                },
            );
        }
    }
}

/// A file entry, for expectations.
pub(crate) fn file(content: &str) -> Entry {
    Entry::File {
        bytes: content.as_bytes().to_vec(),
        executable: false,
    }
}

/// Points `XDG_STATE_HOME` at a directory of this test process, so that the harness's
/// stores never land in the real home directory.
pub(crate) fn isolate_store() -> &'static Path {
    harness_testkit::state::isolate_state_home()
}

impl Repo {
    /// The harness's store for this workspace, if one was made: found by the
    /// workspace path it records.
    pub(crate) fn store(&self) -> Option<PathBuf> {
        let stores = fs::read_dir(isolate_store().join("harness")).ok()?;
        let mut wanted = self.root.as_os_str().as_bytes().to_vec();
        wanted.push(b'\n');
        stores
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .find(|dir| fs::read(dir.join("harness-workspace")).is_ok_and(|named| named == wanted))
    }
}

/// `sh -c script` in `dir`, with git's global and system configuration off,
/// as a model's command would run there.
pub(crate) fn shell_command(dir: &Path, script: &str) -> Command {
    let mut command = Command::new("sh");
    command
        .args(["-c", script])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "model")
        .env("GIT_AUTHOR_EMAIL", "model@example.org")
        .env("GIT_COMMITTER_NAME", "model")
        .env("GIT_COMMITTER_EMAIL", "model@example.org");
    command
}
