//! A kept path recorded before a command (every file's content and mode, each directory and
//! link; not a git directory's object store) and put back after it: what changed is
//! written back, what was removed made again, what was added moved aside.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::repaired::{Change, Repaired};
use crate::isolation::aside::move_aside;

/// What a kept path held when the command started, by path relative to it ("" itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Node {
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
pub(super) struct Tree {
    /// The kept path (absolute).
    pub(super) path: PathBuf,
    /// The device and inode of what stood there, to find it under another name.
    pub(super) identity: Option<(u64, u64)>,
    /// What it held, by path relative to it.
    pub(super) nodes: BTreeMap<PathBuf, Node>,
}

/// What is left of the record's budget: entries, and bytes of file content.
pub(super) struct Budget {
    pub(super) entries: usize,
    pub(super) bytes: u64,
}

/// Records what stands at `root/relative` into `nodes`; false when the budget ran out.
pub(super) fn take(
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
pub(super) fn under(root: &Path, relative: &Path) -> PathBuf {
    if relative.as_os_str().is_empty() {
        root.to_owned()
    } else {
        root.join(relative)
    }
}

/// True if `name` in `dir` is a git directory's object store (`objects`, `lfs`): files
/// git names by their content, too many to record at every command.
pub(super) fn is_object_store(dir: &Path, name: &Path) -> bool {
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

/// Puts `tree` back as recorded.
pub(super) fn repair_tree(tree: &Tree, repaired: &mut Vec<Repaired>) {
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

/// Writes `content` with `mode` to a new file beside `path` and renames it over `path`:
/// a link made in its place (`ln -f`) is replaced, never written through, and so is one
/// a command left at the temporary name (the file is made new, `O_EXCL`, which follows
/// no link).
pub(super) fn write_beside(path: &Path, content: &[u8], mode: u32) -> io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
