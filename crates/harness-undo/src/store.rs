//! The harness's own store: a bare repository per workspace, outside it, that
//! holds its own copy of everything undo and redo need.
//!
//! A command the agent runs can delete or rewrite the workspace's `.git`
//! (`rm -rf .git`, `git update-ref -d` then `git gc --prune=now`), and with it
//! every object a snapshot lives in. So each recorded state, checkpoint and
//! saved state is also copied, object by object, into a bare repository under
//! `$XDG_STATE_HOME/harness/` (by default `~/.local/state/harness/`), named
//! after the workspace's path, with refs of its own and the run metadata
//! beside them. The copy holds real objects, never alternates into the
//! workspace: nothing done inside the workspace can prune them.
//!
//! What is copied: the snapshot commits, their trees and blobs, and HEAD's
//! commit and tree as of each state; not the repository's history.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository};

use crate::error::GitContext;
use crate::{Error, paths};

/// The file in a store that names the workspace it belongs to.
const WORKSPACE_FILE: &str = "harness-workspace";

/// More objects than this go into the store as one pack, fewer one by one.
const PACK_THRESHOLD: usize = 64;

/// The store of one workspace.
pub(crate) struct Store {
    /// The bare repository.
    repo: Repository,
    /// Its directory.
    dir: PathBuf,
}

impl Store {
    /// The store of the workspace at `root` (canonical), created if missing.
    pub(crate) fn create(root: &Path) -> Result<Store, Error> {
        let dir = location(root)?;
        if let Some(store) = Store::open_dir(root, &dir)? {
            return Ok(store);
        }
        let parent = dir.parent().unwrap_or(&dir);
        fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        // Made whole in a temporary directory, then renamed into place: a
        // process beginning at the same moment finds no store or a whole one.
        let partial = tempfile::Builder::new()
            .prefix(".new-store-")
            .tempdir_in(parent)
            .map_err(|e| Error::io(parent, e))?;
        Repository::init_bare(partial.path()).context(format_args!(
            "create the harness store at {}",
            dir.display()
        ))?;
        let named = partial.path().join(WORKSPACE_FILE);
        let mut text = paths::to_bytes(root);
        text.push(b'\n');
        fs::write(&named, text).map_err(|e| Error::io(&named, e))?;
        let made = partial.keep();
        if let Err(e) = fs::rename(&made, &dir) {
            // Best effort: the loser of a race leaves nothing behind.
            let _ = fs::remove_dir_all(&made);
            if !dir.is_dir() {
                return Err(Error::io(&dir, e));
            }
        }
        Store::open_dir(root, &dir)?
            .ok_or_else(|| Error::io(&dir, std::io::ErrorKind::NotFound.into()))
    }

    /// The store of the workspace at `root` (canonical), if it has one.
    pub(crate) fn open(root: &Path) -> Result<Option<Store>, Error> {
        Store::open_dir(root, &location(root)?)
    }

    /// The store at `dir`, if there is one there for `root`.
    fn open_dir(root: &Path, dir: &Path) -> Result<Option<Store>, Error> {
        let named = dir.join(WORKSPACE_FILE);
        let Ok(recorded) = fs::read(&named) else {
            return Ok(None);
        };
        let recorded = recorded.strip_suffix(b"\n").unwrap_or(&recorded);
        if recorded != paths::to_bytes(root).as_slice() {
            return Err(Error::StoreMismatch {
                store: dir.to_path_buf(),
                root: root.to_path_buf(),
                recorded: paths::from_bytes(recorded),
            });
        }
        let repo = Repository::open_bare(dir)
            .context(format_args!("open the harness store at {}", dir.display()))?;
        Ok(Some(Store {
            repo,
            dir: dir.to_path_buf(),
        }))
    }

    /// The store's directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The store's repository.
    pub(crate) fn repo(&self) -> &Repository {
        &self.repo
    }

    /// The store's object directory, for reading its objects from another
    /// repository handle.
    pub(crate) fn objects_dir(&self) -> PathBuf {
        self.dir.join("objects")
    }

    /// The commit ref `name` points to in the store, if any.
    pub(crate) fn find_ref(&self, name: &str) -> Option<Oid> {
        self.repo.refname_to_id(name).ok()
    }

    /// Points the store's ref `name` at `commit`, which must be in the store.
    pub(crate) fn set_ref(&self, name: &str, commit: Oid, message: &str) -> Result<(), Error> {
        self.repo
            .reference(name, commit, true, message)
            .context(format_args!("update {name} in the harness store"))?;
        Ok(())
    }
}

/// A copy into the store under way in a thread of its own.
pub(crate) struct Copying(std::thread::JoinHandle<Result<(), Error>>);

impl Copying {
    /// Copies `commit` (and, `with_parents`, its parents) from the repository
    /// at `git_dir` into the store at `store_dir` in a thread, then points the
    /// store's ref `name` at it: the first copy of a large tree takes seconds,
    /// which pass while the model answers its first request.
    pub(crate) fn start(
        git_dir: &Path,
        store_dir: &Path,
        commit: Oid,
        with_parents: bool,
        name: String,
    ) -> Copying {
        let (git_dir, store_dir) = (git_dir.to_path_buf(), store_dir.to_path_buf());
        Copying(std::thread::spawn(move || {
            let from = Repository::open(&git_dir).context("open the workspace's repository")?;
            let to = Repository::open_bare(&store_dir).context("open the harness store")?;
            copy_commit(&from, &to, commit, with_parents)?;
            to.reference(&name, commit, true, "harness: pre-run state")
                .context(format_args!("update {name} in the harness store"))?;
            Ok(())
        }))
    }

    /// Waits for the copy to end, and says how it went.
    pub(crate) fn wait(self) -> Result<(), Error> {
        self.0.join().unwrap_or_else(|_| {
            Err(Error::Git {
                action: "copy the pre-run state into the harness store".into(),
                detail: "the copying thread panicked".into(),
            })
        })
    }
}

/// Copies `commit` and its tree, and with `with_parents` each parent commit
/// with its tree (not the parents' parents), from `from` to `to`. Objects `to`
/// has are skipped, and a tree `to` has is taken to be complete (trees are
/// written after what they hold, commits after their trees).
pub(crate) fn copy_commit(
    from: &Repository,
    to: &Repository,
    commit: Oid,
    with_parents: bool,
) -> Result<(), Error> {
    let to_odb = to.odb().context("open the object database to copy into")?;
    if to_odb.exists(commit) {
        return Ok(());
    }
    let found = from.find_commit(commit).context("find a commit to keep")?;
    let mut commits: Vec<Oid> = if with_parents {
        found.parent_ids().collect()
    } else {
        Vec::new()
    };
    commits.push(commit);
    let mut missing = Vec::new();
    let mut seen = HashSet::new();
    let mut last = Vec::new();
    for id in commits {
        if to_odb.exists(id) || !seen.insert(id) {
            continue;
        }
        let commit = from.find_commit(id).context("find a commit to keep")?;
        missing_closure(from, &to_odb, commit.tree_id(), &mut seen, &mut missing)?;
        last.push(id);
    }
    write_objects(from, &to_odb, &missing)?;
    // Commits last, so that a commit in the store always has its tree.
    write_objects(from, &to_odb, &last)
}

/// Whether `id`'s commit and tree are both in `repo`'s own object database.
pub(crate) fn has_commit(repo: &Repository, id: Oid) -> bool {
    let Ok(odb) = repo.odb() else {
        return false;
    };
    let Ok(commit) = repo.find_commit(id) else {
        return false;
    };
    odb.exists(id) && odb.exists(commit.tree_id())
}

/// The workspace the store at `dir` names, if `dir` is a store.
pub(crate) fn recorded_workspace(dir: &Path) -> Option<PathBuf> {
    let recorded = fs::read(dir.join(WORKSPACE_FILE)).ok()?;
    let recorded = recorded.strip_suffix(b"\n").unwrap_or(&recorded);
    Some(paths::from_bytes(recorded))
}

/// The directory of the store of the workspace at `root`:
/// `<state home>/harness/<name>-<16 hex digits of a hash of the path>.git`.
pub(crate) fn location(root: &Path) -> Result<PathBuf, Error> {
    let home = state_home().ok_or(Error::NoStateHome)?;
    let hash = Oid::hash_object(ObjectType::Blob, &paths::to_bytes(root))
        .context("hash the workspace's path")?
        .to_string();
    let name: String = root
        .file_name()
        .and_then(OsStr::to_str)
        .unwrap_or("workspace")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let dir = home
        .join("harness")
        .join(format!("{name}-{}.git", &hash[..16]));
    if dir.starts_with(root) {
        return Err(Error::StoreInsideWorkspace {
            store: dir,
            root: root.to_path_buf(),
        });
    }
    Ok(dir)
}

/// `$XDG_STATE_HOME` when it is an absolute path, else `$HOME/.local/state`.
pub(crate) fn state_home() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_STATE_HOME").map(PathBuf::from);
    if let Some(xdg) = xdg.filter(|p| p.is_absolute()) {
        return Some(xdg);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    home.is_absolute()
        .then(|| home.join(".local").join("state"))
}

/// Adds to `missing` every object of tree `tree` that `to` lacks, children
/// before the trees that hold them.
fn missing_closure(
    from: &Repository,
    to: &git2::Odb<'_>,
    tree: Oid,
    seen: &mut HashSet<Oid>,
    missing: &mut Vec<Oid>,
) -> Result<(), Error> {
    if !seen.insert(tree) || to.exists(tree) {
        return Ok(());
    }
    let found = from.find_tree(tree).context("find a tree to keep")?;
    for entry in found.iter() {
        match entry.kind() {
            Some(ObjectType::Tree) => missing_closure(from, to, entry.id(), seen, missing)?,
            Some(ObjectType::Blob) if seen.insert(entry.id()) && !to.exists(entry.id()) => {
                missing.push(entry.id());
            }
            // Blobs seen or kept already; a submodule's commit, in its own repository.
            _ => {}
        }
    }
    missing.push(tree);
    Ok(())
}

/// Writes the objects `ids` of `from` into `to`: loose when they are few, as
/// one pack when they are many.
fn write_objects(from: &Repository, to: &git2::Odb<'_>, ids: &[Oid]) -> Result<(), Error> {
    if ids.len() <= PACK_THRESHOLD {
        let odb = from
            .odb()
            .context("open the object database to copy from")?;
        for id in ids {
            let object = odb.read(*id).context(format_args!("read object {id}"))?;
            to.write(object.kind(), object.data())
                .context(format_args!("copy object {id}"))?;
        }
        return Ok(());
    }
    let mut builder = from.packbuilder().context("start a pack")?;
    for id in ids {
        builder
            .insert_object(*id, None)
            .context(format_args!("add object {id} to a pack"))?;
    }
    let mut writer = to.packwriter().context("start writing a pack")?;
    let mut failed = None;
    builder
        .foreach(|chunk| match writer.write_all(chunk) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        })
        .context("write a pack")?;
    if let Some(e) = failed {
        return Err(Error::Git {
            action: "write a pack".into(),
            detail: e.to_string(),
        });
    }
    writer.commit().context("finish a pack")?;
    Ok(())
}
