//! The harness's own store: a bare repository per workspace, outside it, that
//! holds its own copy of everything undo and redo need.
//!
//! A command the agent runs can delete or rewrite the workspace's `.git`
//! (`rm -rf .git`, `git update-ref -d` then `git gc --prune=now`), and with it
//! every object a snapshot lives in. So each recorded state, checkpoint and
//! saved state is also copied (the objects the store lacks: loose when few,
//! else as one pack, checked to hold them all) into a bare repository under
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
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;

use git2::{ObjectType, Oid, Repository};

use crate::access;
use crate::clean::{Probe, git_command};
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
        crate::private::create_dir(parent).map_err(|e| Error::io(parent, e))?;
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
        // Before it can be found: no other user ever sees into it.
        crate::private::set_private(partial.path()).map_err(|e| Error::io(partial.path(), e))?;
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

    /// Gives the owner back the access a command took to the store or to a
    /// directory above it (see [`access::give_back_kept`]); returns the paths
    /// that changed.
    pub(crate) fn give_back_access(&self) -> Vec<PathBuf> {
        access::give_back_kept(&self.dir)
    }

    /// The store at `dir`, if there is one there for `root`.
    ///
    /// Under Landlock a command may have taken the owner's access to it
    /// (Landlock does not cover modes): `chmod 000` of the store made the run
    /// look as if it had never been recorded. When the store cannot be read,
    /// that access is given back and it is read again. (What a command took
    /// deeper inside, [`Session::verify`](crate::Session::verify) gives back
    /// before undo and redo use it.)
    fn open_dir(root: &Path, dir: &Path) -> Result<Option<Store>, Error> {
        let named = dir.join(WORKSPACE_FILE);
        let mut read = fs::read(&named);
        if read.is_err() && !access::give_back_kept(dir).is_empty() {
            read = fs::read(&named);
        }
        let Ok(recorded) = read else {
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
        // One made before stores were private (or widened by hand) is made private now;
        // [`crate::make_stores_private`] is how a program tells its user it did, and makes
        // the directory of all stores private too. Only the store itself here: the
        // directory holding a store opened by path is not known to be the harness's (a
        // test's store in a temporary directory has /tmp above it, which this once made
        // 0700). Best effort: what the user does not own, the user cannot change, and the
        // store is read all the same.
        let _ = crate::private::tighten(dir);
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

/// How a copy of more than a few objects makes its pack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Packer<'a> {
    /// `git pack-objects` of this program: about ten times faster than
    /// libgit2's pack builder on 100,000 small objects (measured in
    /// `benches/undo.rs`), but it reads only the source's own object
    /// directory, not objects a handle reads from elsewhere in memory.
    Git(&'a OsStr),
    /// libgit2's pack builder, reading whatever the source handle reads.
    Libgit2,
}

impl Packer<'static> {
    /// The `git` of [`Probe::for_workspace`] for the workspace at `root`, else libgit2.
    pub(crate) fn for_workspace(root: &Path) -> Packer<'static> {
        match Probe::for_workspace(root) {
            Probe::GitCli(program) => Packer::Git(program),
            Probe::Libgit2 => Packer::Libgit2,
        }
    }
}

/// A copy into the store under way in a thread of its own.
pub(crate) struct Copying(std::thread::JoinHandle<Result<usize, Error>>);

impl Copying {
    /// Copies `commit` (and, `with_parents`, its parents) from the repository
    /// at `git_dir` into the store at `store_dir` in a thread, then points the
    /// store's ref `name`, if given, at it: the first copy of a large tree
    /// takes a while, which passes while the model answers its first
    /// request. Begins once the copy `after`, if any, has ended, so that the
    /// two never copy the same objects at once.
    ///
    /// With `base`, the commit is one the session wrote into the store itself
    /// (the pre-run state): what it holds that the store lacks, the workspace's
    /// files as HEAD has them and what the user's index names, is walked for in
    /// what differs from `base`, a tree the store has whole once `after` has ended.
    pub(crate) fn start(
        git_dir: &Path,
        store_dir: &Path,
        commit: Oid,
        with_parents: bool,
        name: Option<String>,
        after: Option<Copying>,
        base: Option<Oid>,
    ) -> Copying {
        let (git_dir, store_dir) = (git_dir.to_path_buf(), store_dir.to_path_buf());
        Copying(std::thread::spawn(move || {
            // What that copy did not write, this one does: its error is moot.
            let before = after.map_or(Ok(0), Copying::wait).unwrap_or(0);
            let from = Repository::open(&git_dir).context("open the workspace's repository")?;
            let to = Repository::open_bare(&store_dir).context("open the harness store")?;
            // Opened here, `from` reads the workspace's objects only: git can pack them.
            let root = from.workdir().unwrap_or(&git_dir).to_path_buf();
            let written = match base {
                None => copy_commit(
                    &from,
                    &to,
                    commit,
                    with_parents,
                    Packer::for_workspace(&root),
                )?,
                Some(base) => {
                    from.odb()
                        .and_then(|odb| {
                            odb.add_disk_alternate(&store_dir.join("objects").to_string_lossy())
                        })
                        .context("read the harness store's objects")?;
                    crate::fill::fill_workspace(&from, &to, commit, with_parents, Some(base))?
                }
            };
            if let Some(name) = name {
                to.reference(&name, commit, true, "harness: pre-run state")
                    .context(format_args!("update {name} in the harness store"))?;
            }
            Ok(before + written)
        }))
    }

    /// Waits for the copy to end, and says how it went: how many objects
    /// it wrote.
    pub(crate) fn wait(self) -> Result<usize, Error> {
        self.0.join().unwrap_or_else(|_| {
            Err(Error::Git {
                action: "copy the pre-run state into the harness store".into(),
                detail: "the copying thread panicked".into(),
            })
        })
    }

    /// Waits for the copy to end, for a begin that failed with `error`: no
    /// write into the store is cut off by a process that ends on it.
    pub(crate) fn abandon(self, error: Error) -> Error {
        // The copy's own outcome is moot: no run needs it.
        let _ = self.wait();
        error
    }
}

/// Copies `commit` and its tree, and with `with_parents` each parent commit
/// with its tree (not the parents' parents), from `from` into the store `to`.
/// Objects the store has are skipped, and a tree it has is taken to be
/// complete: the store is written only here, trees after what they hold and
/// commits after their trees, so that a checkpoint copies only what changed.
///
/// Returns how many objects were written.
pub(crate) fn copy_commit(
    from: &Repository,
    to: &Repository,
    commit: Oid,
    with_parents: bool,
    packer: Packer<'_>,
) -> Result<usize, Error> {
    let to_odb = to.odb().context("open the object database to copy into")?;
    let copy = Copy {
        from,
        to: &to_odb,
        objects: objects_dir(to),
        packer,
        verified: false,
    };
    copy.closure(Some(&to_odb), commit, with_parents)
}

/// Writes every commit of the chain that ends in `tip` in the store `from`
/// (see [`chain`]), with its tree, into the workspace's repository `to`,
/// whatever `to` already has: a command there may have deleted any single
/// object, so none of what is left can be taken to be complete. Objects in
/// `written` are not written again, and those written are added to it, so
/// that the refs repaired in one go share what they hold.
///
/// Returns how many objects were written.
pub(crate) fn rewrite_chain(
    from: &Repository,
    to: &Repository,
    tip: Oid,
    written: &mut HashSet<Oid>,
    packer: Packer<'_>,
) -> Result<usize, Error> {
    let to_odb = to.odb().context("open the object database to copy into")?;
    let copy = Copy {
        from,
        to: &to_odb,
        objects: objects_dir(to),
        packer,
        verified: true,
    };
    let mut commits = chain(from, tip);
    // Parents first, as git writes history.
    commits.reverse();
    copy.commits(None, &commits, written)
}

/// The commits of the chain that ends in `tip` in `repo`: `tip`, and every
/// ancestor `repo` has, with its tree, through ancestors it has. In the
/// store that is a run's checkpoints, saved and pre-run states with the
/// index commits and the HEAD commits they rest on, and not the
/// repository's history, which the store does not copy. `tip` first.
pub(crate) fn chain(repo: &Repository, tip: Oid) -> Vec<Oid> {
    let mut chain = Vec::new();
    let mut seen = HashSet::new();
    let mut next = vec![tip];
    while let Some(id) = next.pop() {
        if !seen.insert(id) {
            continue;
        }
        chain.push(id);
        let Ok(commit) = repo.find_commit(id) else {
            continue;
        };
        // Pushed in reverse, so that the first parent is walked first.
        let parents: Vec<Oid> = commit.parent_ids().collect();
        next.extend(parents.into_iter().rev().filter(|p| has_commit(repo, *p)));
    }
    chain
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
    location_in(&state_home().ok_or(Error::NoStateHome)?, root)
}

/// [`location`] with the state home `home`.
fn location_in(home: &Path, root: &Path) -> Result<PathBuf, Error> {
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
    state_home_from(std::env::var_os("XDG_STATE_HOME"), std::env::var_os("HOME"))
}

/// [`state_home`] from the values of `XDG_STATE_HOME` and `HOME`.
fn state_home_from(
    xdg: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    // The XDG specification: a relative path is invalid and ignored.
    if let Some(xdg) = xdg.map(PathBuf::from).filter(|p| p.is_absolute()) {
        return Some(xdg);
    }
    let home = PathBuf::from(home?);
    home.is_absolute()
        .then(|| home.join(".local").join("state"))
}

/// A copy of objects from one repository into another's object database.
struct Copy<'a, 'r> {
    from: &'a Repository,
    to: &'a git2::Odb<'r>,
    /// The object directory of `to`, where git writes its packs.
    objects: PathBuf,
    packer: Packer<'a>,
    /// Whether every object written must be read from `from` alone and
    /// hashed on its way into `to`: true for a rewrite into a workspace
    /// where a command may have left forged objects under true names.
    verified: bool,
}

impl Copy<'_, '_> {
    /// Writes the objects of `commit` (and, `with_parents`, of its parents)
    /// that `have` lacks. Returns how many.
    fn closure(
        &self,
        have: Option<&git2::Odb<'_>>,
        commit: Oid,
        with_parents: bool,
    ) -> Result<usize, Error> {
        // A miss here reads the pack directory again, so that the lookups
        // below, which do not, see packs written since through other handles
        // (the copy in a thread of its own).
        if have.is_some_and(|odb| odb.exists(commit)) {
            return Ok(0);
        }
        // An empty store lacks everything: asking it about each of 100,000
        // objects would cost a failed file lookup each.
        let have = have.filter(|_| !is_empty(&self.objects));
        let found = self
            .from
            .find_commit(commit)
            .context("find a commit to keep")?;
        let mut commits: Vec<Oid> = if with_parents {
            found.parent_ids().collect()
        } else {
            Vec::new()
        };
        commits.push(commit);
        self.commits(have, &commits, &mut HashSet::new())
    }

    /// Writes the objects of `commits` that `have` lacks, or all of them
    /// without `have`, but none in `seen`, which gains each one looked at: first
    /// blobs and trees, children before the trees that hold them, then the
    /// commits in the order given, so that a commit in `to` always has its
    /// tree. Returns how many.
    fn commits(
        &self,
        have: Option<&git2::Odb<'_>>,
        commits: &[Oid],
        seen: &mut HashSet<Oid>,
    ) -> Result<usize, Error> {
        let from = self.from;
        let mut missing = Vec::new();
        let mut last = Vec::new();
        for &id in commits {
            // A commit may name the same parent twice.
            if !seen.insert(id) || has_object(have, id) {
                continue;
            }
            let commit = from.find_commit(id).context("find a commit to keep")?;
            missing_closure(from, have, commit.tree_id(), seen, &mut missing)?;
            last.push(id);
        }
        self.write(&missing)?;
        self.write(&last)?;
        Ok(missing.len() + last.len())
    }

    /// Writes the objects `ids`: loose when they are few, as one pack when
    /// they are many; then checks that `to` has every one of them.
    fn write(&self, ids: &[Oid]) -> Result<(), Error> {
        if ids.len() <= PACK_THRESHOLD {
            let odb = self
                .from
                .odb()
                .context("open the object database to copy from")?;
            for id in ids {
                let object = odb.read(*id).context(format_args!("read object {id}"))?;
                self.to
                    .write(object.kind(), object.data())
                    .context(format_args!("copy object {id}"))?;
            }
            return Ok(());
        }
        match self.packer {
            Packer::Git(program) => self.pack_with_git(program, ids)?,
            Packer::Libgit2 => self.pack_with_libgit2(ids)?,
        }
        // A pack holds what its maker put in: that must be all of it.
        self.to
            .refresh()
            .context("look for the new pack in the object database")?;
        let lacking = ids.iter().filter(|id| !has_object(Some(self.to), **id));
        if let Some(first) = lacking.clone().next() {
            return Err(Error::Git {
                action: "copy objects into a pack".into(),
                detail: format!(
                    "{} of the {} objects are not in the pack, {first} among them",
                    lacking.count(),
                    ids.len()
                ),
            });
        }
        Ok(())
    }

    /// `git pack-objects` of the objects of `from` and `to`, writing its
    /// pack and the pack's index straight into `to`'s pack directory: having
    /// libgit2 index a pack streamed to it reads and hashes every object
    /// again, which took more than half of a first copy's time.
    fn pack_with_git(&self, program: &OsStr, ids: &[Oid]) -> Result<(), Error> {
        let source = objects_dir(self.from);
        // Alternates in git's environment are separated by colons.
        let listable = |dir: &Path| !dir.as_os_str().as_encoded_bytes().contains(&b':');
        if self.verified || !listable(&source) {
            return self.pack_verified_with_git(program, ids);
        }
        let pack_dir = self.objects.join("pack");
        fs::create_dir_all(&pack_dir).map_err(|e| Error::io(&pack_dir, e))?;
        let mut command = git_command(program);
        command
            .arg("--git-dir")
            .arg(self.from.path())
            // No search for deltas: it would cost more than it saves here.
            .args(["pack-objects", "--window=0", "-q"])
            // git names the files `pack-<hash>.pack` and `.idx`, and renames
            // the index into place last, so no reader sees half a pack.
            .arg(pack_dir.join("pack"))
            // git writes its temporary file in the object directory and
            // renames it: that must be `to`'s, which may be on another disk.
            .env("GIT_OBJECT_DIRECTORY", &self.objects)
            .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", &source)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let described = format!("{command:?}");
        let (child, feeder) = spawn_fed(&mut command, program, ids)?;
        let output = child
            .wait_with_output()
            .map_err(|e| Error::io(Path::new(program), e))?;
        // A failed write means git stopped reading: its status says why.
        let _ = feeder.join();
        if !output.status.success() {
            return Err(Error::GitCommand {
                command: described,
                status: output.status.to_string(),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        Ok(())
    }

    /// `git pack-objects` of `from`'s object directory into `to`, the pack
    /// streamed to libgit2, which hashes each object it holds.
    fn pack_verified_with_git(&self, program: &OsStr, ids: &[Oid]) -> Result<(), Error> {
        let mut command = git_command(program);
        command
            .arg("--git-dir")
            .arg(self.from.path())
            // No search for deltas: it would cost more than it saves here.
            .args(["pack-objects", "--stdout", "--window=0", "-q"])
            // Which objects, and where from, is for this call to say.
            .env_remove("GIT_OBJECT_DIRECTORY")
            .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let described = format!("{command:?}");
        let (mut child, feeder) = spawn_fed(&mut command, program, ids)?;
        // Drained in a thread of its own, so that no pipe fills while the pack
        // is read.
        let stderr = child.stderr.take();
        let drainer = std::thread::spawn(move || {
            let mut text = String::new();
            stderr.map(|mut pipe| pipe.read_to_string(&mut text));
            text
        });
        let mut writer = self.to.packwriter().context("start writing a pack")?;
        let copied = child
            .stdout
            .take()
            .map(|mut pack| std::io::copy(&mut pack, &mut writer));
        // The pack's pipe is closed now, whether it was read to the end or not: a git
        // still writing to it gets EPIPE and exits, so this wait cannot hang.
        let status = child.wait().map_err(|e| Error::io(Path::new(program), e))?;
        let stderr = drainer.join().unwrap_or_default();
        let _ = feeder.join();
        // A pack that could not be written is the cause; git failing after is its effect.
        if let Some(Err(e)) = copied {
            return Err(Error::Git {
                action: "write a pack".into(),
                detail: e.to_string(),
            });
        }
        if !status.success() {
            return Err(Error::GitCommand {
                command: described,
                status: status.to_string(),
                stderr: stderr.trim().to_string(),
            });
        }
        writer.commit().context("finish a pack")?;
        Ok(())
    }

    /// libgit2's pack builder, reading through `from`, into `to`.
    fn pack_with_libgit2(&self, ids: &[Oid]) -> Result<(), Error> {
        let mut builder = self.from.packbuilder().context("start a pack")?;
        for id in ids {
            builder
                .insert_object(*id, None)
                .context(format_args!("add object {id} to a pack"))?;
        }
        let mut writer = self.to.packwriter().context("start writing a pack")?;
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
}

/// Whether `have` holds `id`, without reading the pack directory again when
/// it does not: a first copy asks about 100,000 objects the store lacks.
fn has_object(have: Option<&git2::Odb<'_>>, id: Oid) -> bool {
    have.is_some_and(|odb| odb.exists_ext(id, git2::OdbLookupFlags::NO_REFRESH))
}

/// True if and only if the object directory `objects` holds no object: no
/// pack and no directory of loose objects (a loose object lives in one
/// named by the first two hex digits of its id).
fn is_empty(objects: &Path) -> bool {
    let Ok(entries) = fs::read_dir(objects) else {
        return false;
    };
    let loose = entries
        .filter_map(Result::ok)
        .any(|entry| entry.file_name().len() == 2);
    let packs = fs::read_dir(objects.join("pack")).map(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|entry| entry.path().extension().is_some_and(|x| x == "pack"))
    });
    !loose && packs.is_ok_and(|any| !any)
}

/// The thread feeding a command its stdin: `None` when it had none.
type Feeder = JoinHandle<Option<std::io::Result<()>>>;

/// Spawns `command` (`program`) and feeds it `ids`, one a line, from a thread
/// of its own, so that no pipe fills while its output is read. The thread
/// ends with the write's result: a failed write means the command stopped
/// reading, and its exit status says why.
fn spawn_fed(
    command: &mut Command,
    program: &OsStr,
    ids: &[Oid],
) -> Result<(Child, Feeder), Error> {
    let mut child = command
        .spawn()
        .map_err(|e| Error::io(Path::new(program), e))?;
    let list = id_list(ids);
    let stdin = child.stdin.take();
    let feeder = std::thread::spawn(move || stdin.map(|mut pipe| pipe.write_all(list.as_bytes())));
    Ok((child, feeder))
}

/// `ids` one a line, as `git pack-objects` reads them.
fn id_list(ids: &[Oid]) -> String {
    let mut list = String::with_capacity(ids.len() * 41);
    for id in ids {
        list.push_str(&id.to_string());
        list.push('\n');
    }
    list
}

/// The object directory of `repo` (shared by all its worktrees).
fn objects_dir(repo: &Repository) -> PathBuf {
    repo.commondir().join("objects")
}

/// Adds to `missing` every object of tree `tree` that `have` lacks (all,
/// without `have`), children before the trees that hold them. A tree `have`
/// has is taken to be complete.
fn missing_closure(
    from: &Repository,
    have: Option<&git2::Odb<'_>>,
    tree: Oid,
    seen: &mut HashSet<Oid>,
    missing: &mut Vec<Oid>,
) -> Result<(), Error> {
    if !seen.insert(tree) || has_object(have, tree) {
        return Ok(());
    }
    let found = from.find_tree(tree).context("find a tree to keep")?;
    for entry in found.iter() {
        match entry.kind() {
            Some(ObjectType::Tree) => missing_closure(from, have, entry.id(), seen, missing)?,
            Some(ObjectType::Blob) if seen.insert(entry.id()) && !has_object(have, entry.id()) => {
                missing.push(entry.id());
            }
            // Blobs seen or kept already; a submodule's commit, in its own repository.
            _ => {}
        }
    }
    missing.push(tree);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_home_is_xdg_when_absolute_else_under_home() {
        let some = |s: &str| Some(std::ffi::OsString::from(s));
        assert_eq!(
            state_home_from(some("/x/state"), some("/home/u")),
            Some("/x/state".into())
        );
        assert_eq!(
            state_home_from(some("relative"), some("/home/u")),
            Some("/home/u/.local/state".into())
        );
        assert_eq!(
            state_home_from(None, some("/home/u")),
            Some("/home/u/.local/state".into())
        );
        assert_eq!(state_home_from(None, some("home")), None);
        assert_eq!(state_home_from(None, None), None);
    }

    #[test]
    fn a_store_is_named_by_the_workspace_and_a_hash_of_its_path() {
        let home = Path::new("/state");
        let a = location_in(home, Path::new("/src/my proj!")).unwrap();
        let b = location_in(home, Path::new("/other/my proj!")).unwrap();
        let name = a.file_name().unwrap().to_str().unwrap();
        assert!(a.starts_with("/state/harness"), "{}", a.display());
        assert!(
            name.starts_with("my_proj_-") && name.ends_with(".git"),
            "{name}"
        );
        assert_eq!(name.len(), "my_proj_-".len() + 16 + ".git".len());
        assert_ne!(a, b, "one store per path");
        assert_eq!(
            a,
            location_in(home, Path::new("/src/my proj!")).unwrap(),
            "stable"
        );
        let keep = location_in(home, Path::new("/src/a-b_c")).unwrap();
        assert!(
            keep.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("a-b_c-")
        );
        let long = location_in(home, &Path::new("/").join("n".repeat(60))).unwrap();
        assert!(
            long.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with(&format!("{}-", "n".repeat(40)))
        );
    }

    #[test]
    fn a_store_inside_the_workspace_is_refused() {
        let err = location_in(Path::new("/w/.state"), Path::new("/w")).unwrap_err();
        assert!(matches!(err, Error::StoreInsideWorkspace { .. }), "{err}");
        assert!(err.to_string().contains("XDG_STATE_HOME"), "{err}");
    }

    #[test]
    fn a_store_naming_another_workspace_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let above = dir.path().parent().unwrap().to_path_buf();
        let mode_above = || fs::metadata(&above).unwrap().permissions().mode();
        let before = mode_above();
        Repository::init_bare(dir.path()).unwrap();
        fs::write(dir.path().join(WORKSPACE_FILE), "/somewhere/else\n").unwrap();
        let err = Store::open_dir(Path::new("/here"), dir.path())
            .err()
            .unwrap();
        assert!(matches!(err, Error::StoreMismatch { .. }), "{err}");
        assert_eq!(
            recorded_workspace(dir.path()),
            Some("/somewhere/else".into())
        );
        assert!(
            Store::open_dir(Path::new("/somewhere/else"), dir.path())
                .unwrap()
                .is_some()
        );
        assert!(
            Store::open_dir(Path::new("/x"), &dir.path().join("none"))
                .unwrap()
                .is_none()
        );
        // Opening a store by path leaves the directory above it alone (here the system's
        // temporary directory, which an earlier version made 0700).
        assert_eq!(mode_above(), before, "{}", above.display());
    }

    /// A repository with one commit of `files` text files in two directories.
    fn repo_with(files: usize) -> (tempfile::TempDir, Repository, Oid) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let commit = {
            let mut index = repo.index().unwrap();
            for i in 0..files {
                let path = format!("{}/f{i}", if i % 2 == 0 { "even" } else { "odd" });
                fs::create_dir_all(dir.path().join(&path).parent().unwrap()).unwrap();
                fs::write(dir.path().join(&path), format!("{i}\n")).unwrap();
                index.add_path(Path::new(&path)).unwrap();
            }
            let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
            let me = git2::Signature::now("t", "t@example.org").unwrap();
            repo.commit(None, &me, &me, "c", &tree, &[]).unwrap()
        };
        (dir, repo, commit)
    }

    #[test]
    fn a_copy_writes_only_what_the_store_lacks_loose_when_few_packed_when_many() {
        let (_dir, from, commit) = repo_with(3);
        let store_dir = tempfile::tempdir().unwrap();
        let to = Repository::init_bare(store_dir.path()).unwrap();
        // 3 blobs, 2 directory trees, the root tree, the commit.
        assert_eq!(
            copy_commit(&from, &to, commit, false, Packer::Libgit2).unwrap(),
            7
        );
        assert_eq!(
            copy_commit(&from, &to, commit, false, Packer::Libgit2).unwrap(),
            0,
            "nothing twice"
        );
        let packs = |dir: &Path| {
            fs::read_dir(dir.join("objects/pack"))
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .path()
                        .extension()
                        .is_some_and(|x| x == "pack")
                })
                .count()
        };
        assert_eq!(packs(store_dir.path()), 0, "a few objects go loose");

        let (_big_dir, big, big_commit) = repo_with(PACK_THRESHOLD + 10);
        for packer in [Packer::Git(OsStr::new("git")), Packer::Libgit2] {
            let big_store = tempfile::tempdir().unwrap();
            let to = Repository::init_bare(big_store.path()).unwrap();
            let written = copy_commit(&big, &to, big_commit, false, packer).unwrap();
            assert_eq!(written, PACK_THRESHOLD + 10 + 4, "{packer:?}");
            assert_eq!(packs(big_store.path()), 1, "many go into one pack");
            // Only the commit is loose: it is written after its pack.
            let loose = fs::read_dir(big_store.path().join("objects"))
                .unwrap()
                .filter(|e| e.as_ref().unwrap().file_name().len() == 2)
                .count();
            assert_eq!(loose, 1, "{packer:?}");
            let tree = to.find_commit(big_commit).unwrap().tree().unwrap();
            assert_eq!(tree.len(), 2);
            let sub = to.find_tree(tree.get(1).unwrap().id()).unwrap();
            let blob = to.find_blob(sub.get(0).unwrap().id()).unwrap();
            assert_eq!(blob.content(), b"1\n", "{packer:?}");
        }
        // A parent and its tree come along only when asked for.
        let me = git2::Signature::now("t", "t@example.org").unwrap();
        let parent = big.find_commit(big_commit).unwrap();
        let child = big
            .commit(None, &me, &me, "child", &parent.tree().unwrap(), &[&parent])
            .unwrap();
        let fresh = tempfile::tempdir().unwrap();
        let to = Repository::init_bare(fresh.path()).unwrap();
        copy_commit(&big, &to, child, false, Packer::Libgit2).unwrap();
        assert!(to.find_commit(big_commit).is_err());
        let fresh = tempfile::tempdir().unwrap();
        let to = Repository::init_bare(fresh.path()).unwrap();
        copy_commit(&big, &to, child, true, Packer::Libgit2).unwrap();
        assert!(to.find_commit(big_commit).is_ok());
        assert!(has_commit(&to, big_commit) && has_commit(&to, child));
        assert!(!has_commit(&to, Oid::ZERO_SHA1));
    }

    /// A program standing in for git: `sh -c script`, with git's arguments.
    fn fake_git(dir: &Path, script: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("git");
        fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_pack_that_leaves_objects_out_or_a_git_that_fails_is_an_error() {
        let (_dir, from, commit) = repo_with(PACK_THRESHOLD + 10);
        let programs = tempfile::tempdir().unwrap();
        // A real pack, of the first object asked for only.
        let short = fake_git(programs.path(), "head -n 1 | exec git \"$@\"");
        let store = tempfile::tempdir().unwrap();
        let to = Repository::init_bare(store.path()).unwrap();
        let err = copy_commit(&from, &to, commit, false, Packer::Git(short.as_os_str()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!(
                "{} of the {} objects are not in the pack",
                PACK_THRESHOLD + 12,
                PACK_THRESHOLD + 13
            )),
            "{err}"
        );
        assert!(
            to.find_commit(commit).is_err(),
            "no commit without its tree"
        );

        let failing = fake_git(
            programs.path(),
            "cat >/dev/null; echo 'no such object' >&2; exit 3",
        );
        let err =
            copy_commit(&from, &to, commit, false, Packer::Git(failing.as_os_str())).unwrap_err();
        assert!(matches!(err, Error::GitCommand { .. }), "{err}");
        assert!(err.to_string().contains("no such object"), "{err}");
        // Garbage where a pack should be.
        let garbage = fake_git(programs.path(), "cat >/dev/null; echo not a pack");
        let err =
            copy_commit(&from, &to, commit, false, Packer::Git(garbage.as_os_str())).unwrap_err();
        assert!(!matches!(err, Error::GitCommand { .. }), "{err}");
        let missing = programs.path().join("none");
        let err =
            copy_commit(&from, &to, commit, false, Packer::Git(missing.as_os_str())).unwrap_err();
        assert!(err.to_string().contains("none"), "{err}");
        assert!(to.find_commit(commit).is_err());
    }

    /// A commit on `parent` in `repo` with `path` (in directory `odd` or
    /// `even`) set to `content`, and `parents` as its parents.
    fn change(repo: &Repository, parents: &[Oid], path: &str, content: &str) -> Oid {
        let base = repo.find_commit(parents[0]).unwrap().tree().unwrap();
        let blob = repo.blob(content.as_bytes()).unwrap();
        let (dir, name) = path.split_once('/').unwrap();
        let sub = repo.find_tree(base.get_name(dir).unwrap().id()).unwrap();
        let mut sub = repo.treebuilder(Some(&sub)).unwrap();
        sub.insert(name, blob, 0o100_644).unwrap();
        let sub = sub.write().unwrap();
        let mut root = repo.treebuilder(Some(&base)).unwrap();
        root.insert(dir, sub, 0o040_000).unwrap();
        let tree = repo.find_tree(root.write().unwrap()).unwrap();
        let me = git2::Signature::now("t", "t@example.org").unwrap();
        let parents: Vec<_> = parents
            .iter()
            .map(|p| repo.find_commit(*p).unwrap())
            .collect();
        let parents: Vec<_> = parents.iter().collect();
        repo.commit(None, &me, &me, "change", &tree, &parents)
            .unwrap()
    }

    #[test]
    fn a_checkpoint_copies_only_what_changed() {
        let (_dir, from, first) = repo_with(PACK_THRESHOLD + 10);
        let store_dir = tempfile::tempdir().unwrap();
        let to = Repository::init_bare(store_dir.path()).unwrap();
        // Another handle, as the session's is beside the copy's thread: a
        // pack written since is found, and nothing is copied twice.
        let older = Repository::open_bare(store_dir.path()).unwrap();
        assert!(!older.odb().unwrap().exists(first), "it has looked once");
        assert_eq!(
            copy_commit(&from, &to, first, false, Packer::Libgit2).unwrap(),
            PACK_THRESHOLD + 14
        );
        // One changed file: its blob, its directory's tree, the root tree, the commit.
        let second = change(&from, &[first], "odd/f1", "changed\n");
        assert_eq!(
            copy_commit(&from, &older, second, false, Packer::Libgit2).unwrap(),
            4
        );
        // With its parent, which the store has: the same four, the parent not again.
        let third = change(&from, &[second], "even/f0", "changed too\n");
        assert_eq!(
            copy_commit(&from, &older, third, true, Packer::Libgit2).unwrap(),
            4
        );
        // A commit naming one parent twice, whose tree the store has: the commit alone.
        let twice = {
            let me = git2::Signature::now("t", "t@example.org").unwrap();
            let parent = from.find_commit(third).unwrap();
            from.commit(
                None,
                &me,
                &me,
                "m",
                &parent.tree().unwrap(),
                &[&parent, &parent],
            )
            .unwrap()
        };
        assert_eq!(
            copy_commit(&from, &older, twice, true, Packer::Libgit2).unwrap(),
            1
        );
        assert!(has_commit(&to, twice));
    }

    #[test]
    fn a_rewrite_trusts_nothing_the_repository_has_and_follows_the_stored_chain() {
        let (_dir, from, commit) = repo_with(3);
        let other = tempfile::tempdir().unwrap();
        let to = Repository::init_bare(other.path()).unwrap();
        assert_eq!(
            copy_commit(&from, &to, commit, false, Packer::Libgit2).unwrap(),
            7
        );
        // Everything is there, and still all of it is written again, once.
        let mut written = HashSet::new();
        assert_eq!(
            rewrite_chain(&to, &from, commit, &mut written, Packer::Libgit2).unwrap(),
            7
        );
        assert_eq!(
            rewrite_chain(&to, &from, commit, &mut written, Packer::Libgit2).unwrap(),
            0,
            "not twice in one repair"
        );
        let child = change(&from, &[commit], "odd/f1", "x\n");
        let twice = {
            let me = git2::Signature::now("t", "t@example.org").unwrap();
            let parent = from.find_commit(child).unwrap();
            from.commit(
                None,
                &me,
                &me,
                "m",
                &parent.tree().unwrap(),
                &[&parent, &parent],
            )
            .unwrap()
        };
        copy_commit(&from, &to, twice, true, Packer::Libgit2).unwrap();
        assert_eq!(chain(&to, twice), vec![twice, child, commit]);
        // The whole chain into an empty repository: 3 commits; the first
        // commit's root tree, 2 directory trees and 3 blobs; the new blob,
        // its directory's tree and the root tree the other two share.
        let empty = tempfile::tempdir().unwrap();
        let fresh = Repository::init_bare(empty.path()).unwrap();
        assert_eq!(
            rewrite_chain(&to, &fresh, twice, &mut HashSet::new(), Packer::Libgit2).unwrap(),
            12
        );
        assert!(
            [twice, child, commit]
                .iter()
                .all(|c| has_commit(&fresh, *c))
        );
        // The chain ends where the store's copy does: the rest is history.
        let partial = tempfile::tempdir().unwrap();
        let partial = Repository::init_bare(partial.path()).unwrap();
        copy_commit(&from, &partial, child, false, Packer::Libgit2).unwrap();
        assert_eq!(chain(&partial, child), vec![child]);
        let empty = tempfile::tempdir().unwrap();
        let fresh = Repository::init_bare(empty.path()).unwrap();
        assert_eq!(
            rewrite_chain(
                &partial,
                &fresh,
                child,
                &mut HashSet::new(),
                Packer::Libgit2
            )
            .unwrap(),
            7
        );
        assert!(!has_commit(&fresh, commit));
    }

    #[test]
    fn a_store_is_empty_until_it_holds_a_pack_or_a_loose_object() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let objects = dir.path().join("objects");
        assert!(is_empty(&objects), "as made");
        assert!(!is_empty(&dir.path().join("none")), "not a directory");
        // An index without its pack holds nothing.
        fs::write(objects.join("pack/pack-1.idx"), "").unwrap();
        assert!(is_empty(&objects));
        fs::write(objects.join("pack/pack-1.pack"), "").unwrap();
        assert!(!is_empty(&objects), "a pack");
        fs::remove_file(objects.join("pack/pack-1.pack")).unwrap();
        let loose = repo.blob(b"loose\n").unwrap().to_string();
        assert!(!is_empty(&objects), "a loose object");
        fs::remove_dir_all(objects.join(&loose[..2])).unwrap();
        assert!(is_empty(&objects), "its directory gone");
        fs::remove_dir_all(objects.join("pack")).unwrap();
        assert!(!is_empty(&objects), "no pack directory: not ours to judge");
    }

    #[test]
    fn git_writes_a_copy_into_the_store_itself_and_a_rewrite_through_libgit2() {
        let programs = tempfile::tempdir().unwrap();
        let log = programs.path().join("log");
        // git, noting each call's arguments and object directory.
        let logging = fake_git(
            programs.path(),
            &format!(
                "echo \"$* objects=$GIT_OBJECT_DIRECTORY\" >> {}; exec git \"$@\"",
                log.display()
            ),
        );
        let packer = Packer::Git(logging.as_os_str());
        let last_call = || {
            let text = fs::read_to_string(&log).unwrap();
            text.lines().last().unwrap().to_string()
        };
        let (_dir, from, commit) = repo_with(PACK_THRESHOLD + 10);
        let store = tempfile::tempdir().unwrap();
        let to = Repository::init_bare(store.path()).unwrap();
        copy_commit(&from, &to, commit, false, packer).unwrap();
        let call = last_call();
        assert!(!call.contains("--stdout"), "{call}");
        assert!(
            call.ends_with(&format!(
                "objects={}",
                store.path().join("objects").display()
            )),
            "{call}"
        );
        assert!(has_commit(&to, commit));
        // Back into a repository that has lost it: read from the store alone.
        let empty = tempfile::tempdir().unwrap();
        let fresh = Repository::init_bare(empty.path()).unwrap();
        rewrite_chain(&to, &fresh, commit, &mut HashSet::new(), packer).unwrap();
        let call = last_call();
        assert!(
            call.contains("--stdout") && call.ends_with("objects="),
            "{call}"
        );
        assert!(has_commit(&fresh, commit));
        // A source whose path git's list of alternates cannot hold.
        let odd = tempfile::Builder::new().prefix("a:b").tempdir().unwrap();
        let source = Repository::init(odd.path()).unwrap();
        let tree = {
            let mut builder = source.treebuilder(None).unwrap();
            for i in 0..=PACK_THRESHOLD {
                let blob = source.blob(format!("{i}\n").as_bytes()).unwrap();
                builder.insert(format!("f{i}"), blob, 0o100_644).unwrap();
            }
            source.find_tree(builder.write().unwrap()).unwrap()
        };
        let me = git2::Signature::now("t", "t@example.org").unwrap();
        let odd_commit = source.commit(None, &me, &me, "c", &tree, &[]).unwrap();
        copy_commit(&source, &to, odd_commit, false, packer).unwrap();
        let call = last_call();
        assert!(call.contains("--stdout"), "{call}");
        assert!(has_commit(&to, odd_commit));
    }
}
