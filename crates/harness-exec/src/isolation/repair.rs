//! What the Landlock tier cannot refuse and the runner puts back after each command: the
//! workspace's kept paths (its `.git`, `harness.toml`, the git directories of repositories
//! in it, the hooks path) and the places of its hidden paths.
//!
//! Landlock grants by hierarchy and cannot take a subtree back. For ordinary work at the
//! top of the workspace (`touch new.txt`, `rm old.txt`, a first `cargo build`'s `target/`)
//! the top itself is granted making, writing, renaming and removing entries, and with it
//! everything below: `.git/hooks/pre-commit`, `.git/config` (a `core.fsmonitor`),
//! `harness.toml`. So, under Landlock only, the runner records each kept path before the
//! command (every file's content and mode, each directory and link; not a git directory's
//! `objects/` and `lfs/`, which git names by their content) and, once the command and
//! everything it started are gone, puts back what changed, recreates what was removed,
//! moves aside what was added (as `<name>.refused-N`, which git never reads), and moves a
//! kept path that was renamed back where it was. Each is a [`Repaired`] the outcome reports.
//!
//! A git directory's object store (the repository's history) is too large to copy at every
//! command, but a file removed while a process holds it open is still readable through
//! that handle: the runner holds each file of it open across the command (within
//! [`HELD_OBJECTS`] files) and writes back, from that handle, each one removed or replaced
//! (`rm -rf .git` takes nothing for good). One rewritten in place (made writable with
//! `chmod`, then written) reads through the handle as rewritten: that is said, not undone.
//!
//! A hidden path's content stays unreadable, but its name can now be changed: `ln .env
//! notes.txt` or `mv .env notes.txt` at the top would give it a name the next command, and
//! the file tools, read. Landlock itself refuses a move or link into a directory where the
//! file could be read (a rename must not gain access), so such a name is at the top, in a
//! directory made there, or in a hidden directory. The runner finds each hidden file and
//! directory by its identity after the command (within [`WALK_LIMIT`] entries) and puts it
//! back: another name of a file still in place is removed (the content is still there), a
//! renamed one is renamed back.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::WALK_LIMIT;
use super::protected::move_aside;

/// The most entries recorded of the kept paths before each command.
pub const RECORD_ENTRIES: usize = 20_000;

/// The most bytes of file content recorded of the kept paths before each command.
pub const RECORD_BYTES: u64 = 64 * 1024 * 1024;

/// The most files of git object stores held open across each command (the loose objects
/// stay below git's own `gc.auto` limit of 6700 in a repository git maintains).
pub const HELD_OBJECTS: usize = 10_000;

/// A change a command made where the tier could not refuse it, and what the runner did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repaired {
    /// The kept or hidden path concerned (absolute).
    pub path: PathBuf,
    /// What the command did there.
    pub change: Change,
    /// `Ok` once put back; why not otherwise.
    pub result: Result<(), String>,
}

/// What a command did to a kept or hidden path.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// Its content, mode, kind or link target changed: the recorded one is back.
    Changed,
    /// git's index of a git directory changed or went: put back as it was. A `git status`
    /// that refreshes it does this as much as a `git add` that stages: bwrap lets neither
    /// write it, and this is no attack of itself, so it is a note, not a tampering.
    Index,
    /// It was removed: it is made again as recorded.
    Removed,
    /// It was made (in a kept directory): moved aside to this path, where nothing reads it.
    Added(PathBuf),
    /// It was renamed to this path: renamed back.
    Renamed(PathBuf),
    /// A hidden file got this other name (a hard link): the name is removed.
    Linked(PathBuf),
    /// The kept paths were too large to record whole: changes past the first
    /// [`RECORD_ENTRIES`] entries or [`RECORD_BYTES`] bytes are not put back.
    NotRecorded,
    /// This many files of a git object store were removed or replaced: written back.
    ObjectsRemoved(usize),
    /// This many files of a git object store were rewritten in place: not undone.
    ObjectsRewritten(usize),
}

impl std::fmt::Display for Repaired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        match &self.change {
            Change::Changed => write!(f, "the command changed {path}")?,
            Change::Index => write!(
                f,
                "git's index {path} changed (a git status refreshes it, a git add stages): \
                 commands cannot change it"
            )?,
            Change::Removed => write!(f, "the command removed {path}")?,
            Change::Added(to) => write!(
                f,
                "the command made {path}; moved to {}, where nothing reads it",
                to.display()
            )?,
            Change::Renamed(to) => write!(f, "the command renamed {path} to {}", to.display())?,
            Change::Linked(name) => write!(
                f,
                "the command gave the hidden {path} another name, {}",
                name.display()
            )?,
            Change::ObjectsRemoved(count) => {
                write!(
                    f,
                    "the command removed or replaced {count} file(s) of {path}"
                )?;
            }
            Change::ObjectsRewritten(count) => {
                write!(f, "the command rewrote {count} file(s) of {path} in place")?;
            }
            Change::NotRecorded => {
                return write!(
                    f,
                    "{path} is too large to record whole before each command: changes past \
                     the first {RECORD_ENTRIES} entries or {} MiB there are not put back",
                    RECORD_BYTES / (1024 * 1024)
                );
            }
        }
        match (&self.change, &self.result) {
            (Change::Added(_), Ok(())) => Ok(()),
            (Change::Linked(_), Ok(())) => f.write_str("; that name is removed"),
            (_, Ok(())) => f.write_str("; put back as it was"),
            (_, Err(error)) => write!(f, "; it could NOT be put back: {error}"),
        }
    }
}

/// What a kept path held when the command started, by path relative to it ("" itself).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Dir {
        mode: u32,
    },
    File {
        mode: u32,
        content: Vec<u8>,
    },
    Link {
        target: PathBuf,
    },
    /// A socket, a pipe, a device: only its presence is kept.
    Other,
}

/// One kept path as it was.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Tree {
    path: PathBuf,
    identity: Option<(u64, u64)>,
    nodes: BTreeMap<PathBuf, Node>,
}

/// A hidden path as it was: what stood there and how many names it had.
#[derive(Clone, Debug, PartialEq, Eq)]
struct HiddenEntry {
    path: PathBuf,
    identity: (u64, u64),
    links: u64,
}

/// A file of a git object store, held open across a command.
#[derive(Debug)]
struct HeldObject {
    path: PathBuf,
    file: std::fs::File,
    identity: (u64, u64),
    len: u64,
    modified: (i64, i64),
    mode: u32,
}

/// The files of a git object store (`<git dir>/objects`), held open.
#[derive(Clone, Debug, Default)]
struct Held {
    store: PathBuf,
    files: std::sync::Arc<Vec<HeldObject>>,
}

impl PartialEq for Held {
    fn eq(&self, other: &Held) -> bool {
        self.store == other.store && std::sync::Arc::ptr_eq(&self.files, &other.files)
    }
}

impl Eq for Held {}

/// The kept paths and the hidden ones as they were when a command started.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Record {
    workspace: PathBuf,
    trees: Vec<Tree>,
    /// The object stores of the git directories among them, held open.
    held: Vec<Held>,
    /// Each hidden path, what stood there and its number of names.
    hidden: Vec<HiddenEntry>,
    /// The budget ran out: the first tree not recorded whole, nothing past it.
    truncated: Option<PathBuf>,
}

/// Records `kept` (the kept paths in `workspace`, those outside it are left out) and
/// `hidden` (hidden paths in it, as they are now).
pub(crate) fn record(workspace: &Path, kept: &[PathBuf], hidden: &[PathBuf]) -> Record {
    let mut inside: Vec<&PathBuf> = kept
        .iter()
        .filter(|path| path.starts_with(workspace) && *path != workspace)
        .collect();
    inside.sort();
    inside.dedup();
    let mut budget = Budget {
        entries: RECORD_ENTRIES,
        bytes: RECORD_BYTES,
    };
    let mut record = Record {
        workspace: workspace.to_owned(),
        ..Record::default()
    };
    let mut taken: Vec<PathBuf> = Vec::new();
    for path in inside {
        // A kept path inside another (a submodule's git directory in `.git/modules`) is
        // recorded with it.
        if taken.iter().any(|outer| path.starts_with(outer)) {
            continue;
        }
        let mut nodes = BTreeMap::new();
        if !take(path, Path::new(""), &mut nodes, &mut budget) {
            record.truncated = Some(path.clone());
        }
        record.trees.push(Tree {
            path: path.clone(),
            identity: identity(path),
            nodes,
        });
        taken.push(path.clone());
        if record.truncated.is_some() {
            break;
        }
    }
    for path in hidden.iter().filter(|path| path.starts_with(workspace)) {
        collect_identities(path, &mut record.hidden, &mut budget);
    }
    let mut room = HELD_OBJECTS;
    for tree in &record.trees {
        for (relative, _) in tree.nodes.iter().filter(|(relative, node)| {
            matches!(node, Node::Dir { .. }) && tree.nodes.contains_key(&relative.join("HEAD"))
        }) {
            let store = under(&tree.path, relative).join("objects");
            let (held, complete) = hold(&store, &mut room);
            if !complete {
                record.truncated.get_or_insert(store.clone());
            }
            record.held.push(held);
        }
    }
    record
}

/// Opens every file under `store`, at most `room` of them (counted down); false in the
/// second place when some were left out.
fn hold(store: &Path, room: &mut usize) -> (Held, bool) {
    let mut files = Vec::new();
    let mut pending = vec![store.to_owned()];
    let mut complete = true;
    raise_open_files_limit();
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(metadata) = path.symlink_metadata() else {
                continue;
            };
            if metadata.is_dir() {
                pending.push(path);
                continue;
            }
            if !metadata.is_file() {
                continue;
            }
            if *room == 0 {
                complete = false;
                break;
            }
            let Ok(file) = std::fs::File::open(&path) else {
                complete = false;
                continue;
            };
            *room -= 1;
            files.push(HeldObject {
                identity: (metadata.dev(), metadata.ino()),
                len: metadata.len(),
                modified: (metadata.mtime(), metadata.mtime_nsec()),
                mode: metadata.mode() & 0o7777,
                file,
                path,
            });
        }
    }
    let held = Held {
        store: store.to_owned(),
        files: std::sync::Arc::new(files),
    };
    (held, complete)
}

/// Raises this process's soft limit of open files to its hard limit, once: holding an
/// object store open takes thousands.
fn raise_open_files_limit() {
    static RAISED: std::sync::Once = std::sync::Once::new();
    RAISED.call_once(|| {
        use rustix::process::{Resource, getrlimit, setrlimit};
        let mut limit = getrlimit(Resource::Nofile);
        if limit.current < limit.maximum {
            limit.current = limit.maximum;
            let _ = setrlimit(Resource::Nofile, limit);
        }
    });
}

/// Writes back, from its held handle, each file of `held` that was removed or replaced;
/// the counts of those written back, of those that could not be, and of those rewritten
/// in place.
fn restore_objects(held: &Held) -> (usize, Vec<String>, usize) {
    let (mut restored, mut failed, mut rewritten) = (0, Vec::new(), 0);
    for object in held.files.iter() {
        let now = object.path.symlink_metadata().ok();
        let in_place = now
            .as_ref()
            .is_some_and(|now| (now.dev(), now.ino()) == object.identity);
        if in_place {
            let now = now.as_ref().expect("looked at");
            if now.len() != object.len || (now.mtime(), now.mtime_nsec()) != object.modified {
                rewritten += 1;
            }
            continue;
        }
        match write_back(object, now.is_some()) {
            Ok(()) => restored += 1,
            Err(error) => failed.push(format!("{}: {error}", object.path.display())),
        }
    }
    (restored, failed, rewritten)
}

/// Writes `object`'s content, read through its handle, back at its path (moving aside
/// what stands there, if `occupied`).
fn write_back(object: &HeldObject, occupied: bool) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    if occupied {
        move_aside(&object.path)?;
    }
    if let Some(parent) = object.path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut content = Vec::new();
    let mut offset = 0u64;
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let read = object.file.read_at(&mut buffer, offset)?;
        if read == 0 {
            break;
        }
        content.extend_from_slice(&buffer[..read]);
        offset += read as u64;
    }
    write_beside(&object.path, &content, object.mode)
}

/// Writes `content` with `mode` to a new file beside `path` and renames it over `path`:
/// a link made in its place (`ln -f`) is replaced, never written through, and so is one
/// a command left at the temporary name (the file is made new, `O_EXCL`, which follows
/// no link).
fn write_beside(path: &Path, content: &[u8], mode: u32) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".harness-repair");
    let temporary = PathBuf::from(temporary);
    match std::fs::remove_file(&temporary) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&temporary)?;
    file.write_all(content)?;
    // The mode as recorded, whatever the umask took from it.
    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    drop(file);
    std::fs::rename(&temporary, path)
}

struct Budget {
    entries: usize,
    bytes: u64,
}

/// Records what stands at `root/relative` into `nodes`; false when the budget ran out.
fn take(
    root: &Path,
    relative: &Path,
    nodes: &mut BTreeMap<PathBuf, Node>,
    budget: &mut Budget,
) -> bool {
    let path = under(root, relative);
    let Ok(metadata) = path.symlink_metadata() else {
        return true;
    };
    if budget.entries == 0 {
        return false;
    }
    budget.entries -= 1;
    let mode = metadata.mode() & 0o7777;
    let kind = metadata.file_type();
    if kind.is_symlink() {
        let target = std::fs::read_link(&path).unwrap_or_default();
        nodes.insert(relative.to_owned(), Node::Link { target });
    } else if kind.is_file() {
        if metadata.len() > budget.bytes {
            return false;
        }
        let Some(content) = read_whole(&path, budget.bytes) else {
            // Unreadable (a command cannot have made it so unnoticed: it is kept as
            // present only).
            nodes.insert(relative.to_owned(), Node::Other);
            return true;
        };
        budget.bytes -= content.len() as u64;
        nodes.insert(relative.to_owned(), Node::File { mode, content });
    } else if kind.is_dir() {
        nodes.insert(relative.to_owned(), Node::Dir { mode });
        let Ok(entries) = std::fs::read_dir(&path) else {
            return true;
        };
        let mut names: Vec<_> = entries.flatten().map(|entry| entry.file_name()).collect();
        names.sort();
        for name in names {
            if is_object_store(&path, Path::new(&name)) {
                continue;
            }
            if !take(root, &relative.join(&name), nodes, budget) {
                return false;
            }
        }
    } else {
        nodes.insert(relative.to_owned(), Node::Other);
    }
    true
}

/// `root/relative`, and `root` itself (not `root/`, which is no file) for "".
fn under(root: &Path, relative: &Path) -> PathBuf {
    if relative.as_os_str().is_empty() {
        root.to_owned()
    } else {
        root.join(relative)
    }
}

/// True if `name` in `dir` is a git directory's object store (`objects`, `lfs`): files
/// git names by their content, too many to record at every command.
fn is_object_store(dir: &Path, name: &Path) -> bool {
    (name == Path::new("objects") || name == Path::new("lfs")) && dir.join("HEAD").exists()
}

/// The content of the file at `path`, if readable and no longer than `limit`.
fn read_whole(path: &Path, limit: u64) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let mut content = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut content)
        .ok()?;
    (content.len() as u64 <= limit).then_some(content)
}

/// Adds `path` and, for a directory, every entry under it (not following links), with its
/// identity, to `found`.
fn collect_identities(path: &Path, found: &mut Vec<HiddenEntry>, budget: &mut Budget) {
    let mut pending = vec![path.to_owned()];
    while let Some(path) = pending.pop() {
        if budget.entries == 0 {
            return;
        }
        budget.entries -= 1;
        let Ok(metadata) = path.symlink_metadata() else {
            continue;
        };
        found.push(HiddenEntry {
            path: path.clone(),
            identity: (metadata.dev(), metadata.ino()),
            links: metadata.nlink(),
        });
        if metadata.is_dir()
            && let Ok(entries) = std::fs::read_dir(&path)
        {
            pending.extend(entries.flatten().map(|entry| entry.path()));
        }
    }
}

/// The device and inode of what stands at `path`, not followed if a link.
fn identity(path: &Path) -> Option<(u64, u64)> {
    let metadata = path.symlink_metadata().ok()?;
    Some((metadata.dev(), metadata.ino()))
}

/// Puts back what the command changed of `record`, once every process of it is gone.
pub(crate) fn repair(record: &Record) -> Vec<Repaired> {
    let mut repaired = Vec::new();
    let wanted: HashSet<(u64, u64)> = record
        .trees
        .iter()
        .filter_map(|tree| tree.identity)
        .chain(record.hidden.iter().map(|hidden| hidden.identity))
        .collect();
    // Only a path no longer where it was, or a file with more names than it had, has a
    // name elsewhere: the workspace is walked for it then only.
    let moved = record
        .trees
        .iter()
        .any(|tree| tree.identity.is_some() && identity_at(&tree.path) != tree.identity);
    let linked = record.hidden.iter().any(|hidden| {
        hidden.path.symlink_metadata().ok().is_none_or(|now| {
            (now.dev(), now.ino()) != hidden.identity || now.nlink() > hidden.links
        })
    });
    let names = if moved || linked {
        names_in(&record.workspace, &wanted)
    } else {
        HashMap::new()
    };
    let elsewhere = |path: &Path, identity: (u64, u64)| -> Vec<PathBuf> {
        names
            .get(&identity)
            .map(|found| found.iter().filter(|name| *name != path).cloned().collect())
            .unwrap_or_default()
    };
    for tree in &record.trees {
        // Renamed whole (`mv .git g`): renamed back before its content is looked at.
        if let Some(identity) = tree.identity
            && identity_at(&tree.path) != Some(identity)
            && let Some(moved) = elsewhere(&tree.path, identity).into_iter().next()
        {
            repaired.push(Repaired {
                path: tree.path.clone(),
                result: rename_back(&moved, &tree.path),
                change: Change::Renamed(moved),
            });
        }
        repair_tree(tree, &mut repaired);
    }
    // After the git directories are back where they were (a renamed one took its
    // objects with it).
    for held in &record.held {
        let (restored, failed, rewritten) = restore_objects(held);
        if restored > 0 || !failed.is_empty() {
            let result = match failed.first() {
                None => Ok(()),
                Some(first) => Err(format!("{} not written back, first {first}", failed.len())),
            };
            repaired.push(Repaired {
                path: held.store.clone(),
                change: Change::ObjectsRemoved(restored + failed.len()),
                result,
            });
        }
        if rewritten > 0 {
            repaired.push(Repaired {
                path: held.store.clone(),
                change: Change::ObjectsRewritten(rewritten),
                result: Err(
                    "a file rewritten in place reads as rewritten through every \
                             handle; restore the repository from a clone or backup"
                        .to_owned(),
                ),
            });
        }
    }
    // The hidden paths, outermost first: a hidden directory renamed back brings its files.
    let mut hidden = record.hidden.clone();
    hidden.sort_by_key(|hidden| hidden.path.components().count());
    let hidden_paths: HashSet<&Path> = record
        .hidden
        .iter()
        .map(|hidden| hidden.path.as_path())
        .collect();
    for HiddenEntry { path, identity, .. } in &hidden {
        let others: Vec<PathBuf> = elsewhere(path, *identity)
            .into_iter()
            .filter(|name| !hidden_paths.contains(name.as_path()))
            // Those under a hidden path renamed back have moved with it.
            .filter(|name| name.symlink_metadata().is_ok())
            .collect();
        let mut others = others.into_iter();
        if identity_at(path) != Some(*identity)
            && let Some(moved) = others.next()
        {
            repaired.push(Repaired {
                path: path.clone(),
                result: rename_back(&moved, path),
                change: Change::Renamed(moved),
            });
        }
        for name in others {
            // A directory has one name; another name is a hard link of a file, whose
            // content is still at `path`.
            let result = std::fs::remove_file(&name).map_err(|error| error.to_string());
            repaired.push(Repaired {
                path: path.clone(),
                change: Change::Linked(name),
                result,
            });
        }
    }
    if let Some(path) = &record.truncated {
        repaired.push(Repaired {
            path: path.clone(),
            change: Change::NotRecorded,
            result: Err("not recorded whole".to_owned()),
        });
    }
    repaired
}

/// The identity of what stands at `path` now.
fn identity_at(path: &Path) -> Option<(u64, u64)> {
    identity(path)
}

/// Renames `moved` back to `path`, moving aside whatever stands at `path` first.
fn rename_back(moved: &Path, path: &Path) -> Result<(), String> {
    if path.symlink_metadata().is_ok() {
        move_aside(path).map_err(|error| format!("moving aside what stands there: {error}"))?;
    }
    // Its directory may have gone with it (`mv lib gone` took `lib/sub/.git`).
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|error| error.to_string())?;
    }
    std::fs::rename(moved, path).map_err(|error| error.to_string())
}

/// Every name under `root` (not following links, not into its `.git`, within
/// [`WALK_LIMIT`] entries) of what has one of the `wanted` identities.
fn names_in(root: &Path, wanted: &HashSet<(u64, u64)>) -> HashMap<(u64, u64), Vec<PathBuf>> {
    let git = root.join(".git");
    let mut found: HashMap<(u64, u64), Vec<PathBuf>> = HashMap::new();
    let mut seen = 0usize;
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > WALK_LIMIT {
                return found;
            }
            let path = entry.path();
            let Ok(metadata) = path.symlink_metadata() else {
                continue;
            };
            let id = (metadata.dev(), metadata.ino());
            if wanted.contains(&id) {
                found.entry(id).or_default().push(path.clone());
            }
            if metadata.is_dir() && path != git {
                pending.push(path);
            }
        }
    }
    found
}

/// Puts `tree` back as recorded.
fn repair_tree(tree: &Tree, repaired: &mut Vec<Repaired>) {
    if tree.nodes.is_empty() {
        // Nothing stood there: what a command makes there is moved aside (`set_aside`).
        return;
    }
    // Directories made again: what was in them is reported with them.
    let mut made_again: Vec<&Path> = Vec::new();
    for (relative, node) in &tree.nodes {
        let path = under(&tree.path, relative);
        let now = path.symlink_metadata().ok();
        let change = match &now {
            Some(now) if same(now, &path, node) => continue,
            _ if is_index(tree, relative) => Change::Index,
            None => Change::Removed,
            Some(_) => Change::Changed,
        };
        let result = restore(&path, node, now.as_ref()).map_err(|error| error.to_string());
        if made_again.iter().any(|dir| relative.starts_with(dir)) {
            continue;
        }
        if change == Change::Removed && matches!(node, Node::Dir { .. }) {
            made_again.push(relative);
        }
        repaired.push(Repaired {
            path,
            change,
            result,
        });
    }
    // What was added in a recorded directory, outermost only.
    for (relative, node) in &tree.nodes {
        if !matches!(node, Node::Dir { .. }) {
            continue;
        }
        let dir = under(&tree.path, relative);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut added: Vec<PathBuf> = entries
            .flatten()
            .map(|entry| entry.file_name())
            .filter(|name| !is_object_store(&dir, Path::new(name)))
            .map(|name| relative.join(name))
            .filter(|name| !tree.nodes.contains_key(name))
            .collect();
        added.sort();
        for name in added {
            let path = under(&tree.path, &name);
            match move_aside(&path) {
                Ok(to) => repaired.push(Repaired {
                    path,
                    change: Change::Added(to),
                    result: Ok(()),
                }),
                Err(error) => repaired.push(Repaired {
                    change: Change::Added(path.clone()),
                    path,
                    result: Err(error.to_string()),
                }),
            }
        }
    }
}

/// True if `relative` in `tree` is the index of a git directory (`index` beside `HEAD`).
fn is_index(tree: &Tree, relative: &Path) -> bool {
    relative.file_name().is_some_and(|name| name == "index")
        && tree.nodes.contains_key(&relative.with_file_name("HEAD"))
}

/// True if what stands at `path` (`now`) is `node`.
fn same(now: &std::fs::Metadata, path: &Path, node: &Node) -> bool {
    match node {
        Node::Dir { mode } => now.is_dir() && now.mode() & 0o7777 == *mode,
        Node::File { mode, content } => {
            now.is_file()
                && now.mode() & 0o7777 == *mode
                && now.len() == content.len() as u64
                && read_whole(path, content.len() as u64).as_deref() == Some(content.as_slice())
        }
        Node::Link { target } => {
            now.file_type().is_symlink() && std::fs::read_link(path).ok().as_ref() == Some(target)
        }
        Node::Other => !now.is_dir(),
    }
}

/// Makes `path` `node` again; `now` is what stands there.
fn restore(path: &Path, node: &Node, now: Option<&std::fs::Metadata>) -> io::Result<()> {
    let kind_differs = now.is_some_and(|now| match node {
        Node::Dir { .. } => !now.is_dir(),
        Node::File { .. } => !now.is_file(),
        Node::Link { .. } => !now.file_type().is_symlink(),
        Node::Other => false,
    });
    if kind_differs {
        move_aside(path)?;
    }
    match node {
        Node::Dir { mode } => {
            if !path.is_dir() {
                std::fs::create_dir(path)?;
            }
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode))
        }
        Node::File { mode, content } => write_beside(path, content, *mode),
        Node::Link { target } => {
            if now.is_some() && !kind_differs {
                std::fs::remove_file(path)?;
            }
            std::os::unix::fs::symlink(target, path)
        }
        Node::Other => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(root: &Path) {
        for dir in [
            ".git/hooks",
            ".git/refs/heads",
            ".git/objects/ab",
            ".git/info",
        ] {
            std::fs::create_dir_all(root.join(dir)).expect("mkdir");
        }
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
        std::fs::write(root.join(".git/config"), "[core]\n").expect("config");
        std::fs::write(root.join(".git/refs/heads/main"), "1234\n").expect("ref");
        std::fs::write(root.join(".git/objects/ab/cd"), "object").expect("object");
        std::fs::write(root.join("harness.toml"), "verify = \"x\"\n").expect("toml");
    }

    #[test]
    fn what_a_command_changes_in_a_kept_path_is_put_back_and_reported() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        repo(&root);
        let kept = [root.join(".git"), root.join("harness.toml")];
        let before = record(&root, &kept, &[]);
        assert!(before.truncated.is_none());
        std::fs::write(root.join(".git/config"), "[core]\nfsmonitor = evil\n").expect("w");
        std::fs::write(root.join(".git/hooks/pre-commit"), "evil").expect("w");
        std::fs::remove_file(root.join(".git/refs/heads/main")).expect("rm");
        std::fs::set_permissions(
            root.join(".git/HEAD"),
            std::fs::Permissions::from_mode(0o777),
        )
        .expect("chmod");
        std::fs::write(root.join("harness.toml"), "verify = \"true\"\n").expect("w");
        // Objects are git's, by their content: not looked at.
        std::fs::write(root.join(".git/objects/ab/ef"), "new object").expect("w");
        let mut repaired = repair(&before);
        repaired.sort_by(|a, b| a.path.cmp(&b.path));
        let changes: Vec<_> = repaired
            .iter()
            .map(|r| (r.path.clone(), r.change.clone(), r.result.clone()))
            .collect();
        assert_eq!(
            changes,
            [
                (root.join(".git/HEAD"), Change::Changed, Ok(())),
                (root.join(".git/config"), Change::Changed, Ok(())),
                (
                    root.join(".git/hooks/pre-commit"),
                    Change::Added(root.join(".git/hooks/pre-commit.refused-1")),
                    Ok(())
                ),
                (root.join(".git/refs/heads/main"), Change::Removed, Ok(())),
                (root.join("harness.toml"), Change::Changed, Ok(())),
            ]
        );
        assert_eq!(
            std::fs::read_to_string(root.join(".git/config")).expect("r"),
            "[core]\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join(".git/refs/heads/main")).expect("r"),
            "1234\n"
        );
        assert!(!root.join(".git/hooks/pre-commit").exists());
        assert!(root.join(".git/objects/ab/ef").exists());
        assert_eq!(
            root.join(".git/HEAD")
                .metadata()
                .expect("HEAD")
                .permissions()
                .mode()
                & 0o777,
            0o644
        );
        let again = repair(&before);
        assert_eq!(
            again.len(),
            1,
            "only what was moved aside is new: {again:?}"
        );
        assert!(repair(&record(&root, &kept, &[])).is_empty());
    }

    #[test]
    fn a_kept_directory_renamed_away_is_renamed_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        repo(&root);
        let before = record(&root, &[root.join(".git")], &[]);
        std::fs::rename(root.join(".git"), root.join("g")).expect("mv");
        std::fs::create_dir_all(root.join(".git/hooks")).expect("mkdir");
        let repaired = repair(&before);
        assert_eq!(repaired[0].change, Change::Renamed(root.join("g")));
        assert_eq!(repaired[0].result, Ok(()));
        assert!(root.join(".git/objects/ab/cd").exists(), "{repaired:?}");
        assert!(!root.join("g").exists());
        assert!(root.join(".git.refused-1/hooks").is_dir());
    }

    #[test]
    fn a_hidden_file_keeps_no_other_name_and_a_renamed_one_comes_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(root.join("secrets")).expect("mkdir");
        std::fs::write(root.join(".env"), "A=1").expect("w");
        std::fs::write(root.join("secrets/key"), "k").expect("w");
        let before = record(&root, &[], &[root.join(".env"), root.join("secrets")]);
        std::fs::hard_link(root.join(".env"), root.join("notes.txt")).expect("ln");
        std::fs::create_dir_all(root.join("new/deep")).expect("mkdir");
        std::fs::rename(root.join("secrets/key"), root.join("new/deep/k")).expect("mv");
        std::fs::rename(root.join("secrets"), root.join("s")).expect("mv");
        let mut repaired = repair(&before);
        repaired.sort_by(|a, b| a.path.cmp(&b.path));
        let changes: Vec<_> = repaired
            .iter()
            .map(|r| (r.path.clone(), r.change.clone(), r.result.clone()))
            .collect();
        assert_eq!(
            changes,
            [
                (
                    root.join(".env"),
                    Change::Linked(root.join("notes.txt")),
                    Ok(())
                ),
                (
                    root.join("secrets"),
                    Change::Renamed(root.join("s")),
                    Ok(())
                ),
                (
                    root.join("secrets/key"),
                    Change::Renamed(root.join("new/deep/k")),
                    Ok(())
                ),
            ]
        );
        assert!(!root.join("notes.txt").exists() && !root.join("new/deep/k").exists());
        assert_eq!(
            std::fs::read_to_string(root.join("secrets/key")).expect("r"),
            "k"
        );
        assert_eq!(
            std::fs::read_to_string(root.join(".env")).expect("r"),
            "A=1"
        );
    }

    #[test]
    fn a_link_left_at_the_temporary_name_is_not_written_through() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let outside = root.join("outside");
        std::fs::write(&outside, "the user's file\n").expect("w");
        std::fs::create_dir(root.join("ws")).expect("mkdir");
        let toml = root.join("ws/harness.toml");
        std::fs::write(&toml, "kept\n").expect("w");
        let before = record(&root.join("ws"), std::slice::from_ref(&toml), &[]);
        std::fs::write(&toml, "changed\n").expect("w");
        std::os::unix::fs::symlink(&outside, root.join("ws/harness.toml.harness-repair"))
            .expect("ln");
        // And an object of a git directory, written back from its held handle.
        let ws = root.join("ws");
        repo(&ws);
        let git = record(&ws, &[ws.join(".git")], &[]);
        let object = ws.join(".git/objects/ab/cd");
        std::fs::remove_file(&object).expect("rm");
        std::os::unix::fs::symlink(&outside, ws.join(".git/objects/ab/cd.harness-repair"))
            .expect("ln");
        let objects = repair(&git);
        assert_eq!(
            objects
                .iter()
                .map(|r| (r.change.clone(), r.result.clone()))
                .collect::<Vec<_>>(),
            [(Change::ObjectsRemoved(1), Ok(()))]
        );
        assert_eq!(std::fs::read_to_string(&object).expect("r"), "object");
        let repaired = repair(&before);
        assert_eq!(repaired.len(), 1, "{repaired:?}");
        assert_eq!(repaired[0].result, Ok(()));
        assert_eq!(std::fs::read_to_string(&toml).expect("r"), "kept\n");
        assert_eq!(
            std::fs::read_to_string(&outside).expect("r"),
            "the user's file\n"
        );
    }

    #[test]
    fn past_the_budget_the_record_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(root.join(".git")).expect("mkdir");
        for n in 0..5 {
            std::fs::write(root.join(format!(".git/f{n}")), "x").expect("w");
        }
        let mut budget = Budget {
            entries: 3,
            bytes: 100,
        };
        let mut nodes = BTreeMap::new();
        assert!(!take(
            &root.join(".git"),
            Path::new(""),
            &mut nodes,
            &mut budget
        ));
        let mut budget = Budget {
            entries: 100,
            bytes: 3,
        };
        assert!(!take(
            &root.join(".git"),
            Path::new(""),
            &mut nodes,
            &mut budget
        ));
        let mut budget = Budget {
            entries: 6,
            bytes: 5,
        };
        let mut nodes = BTreeMap::new();
        assert!(take(
            &root.join(".git"),
            Path::new(""),
            &mut nodes,
            &mut budget
        ));
        assert_eq!(nodes.len(), 6);
    }
}
