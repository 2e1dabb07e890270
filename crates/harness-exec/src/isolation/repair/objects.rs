//! A git directory's object store held open across a command, and each file of it the
//! command removed or replaced written back from its handle.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::kept::write_beside;
use super::repaired::{Change, Repaired};
use crate::isolation::aside::move_aside;

/// The most files of git object stores held open across each command (the loose objects
/// stay below git's own `gc.auto` limit of 6700 in a repository git maintains).
pub const HELD_OBJECTS: usize = 10_000;

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
pub(super) struct Held {
    store: PathBuf,
    files: std::sync::Arc<Vec<HeldObject>>,
}

/// Opens every file under `store`, at most `room` of them (counted down); false in the
/// second place when some were left out.
pub(super) fn hold(store: &Path, room: &mut usize) -> (Held, bool) {
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

/// Writes back each file of `held` that was removed or replaced, and says so in `repaired`;
/// says so too of those rewritten in place, which cannot be undone.
pub(super) fn put_back(held: &Held, repaired: &mut Vec<Repaired>) {
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

/// Raises this process's soft limit of open files to its hard limit: holding an object
/// store open takes thousands. Looked at on every hold (a system call), not once, so that
/// a limit lowered since (by a library, or a test) is raised again.
fn raise_open_files_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        limit.current = limit.maximum;
        let _ = setrlimit(Resource::Nofile, limit);
    }
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn store_with(root: &Path, files: &[(&str, &[u8])]) -> PathBuf {
        let store = root.join("objects");
        for (name, content) in files {
            let path = store.join(name);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(&path, content).expect("w");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("ro");
        }
        store
    }

    #[test]
    fn a_store_is_held_within_its_room() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = store_with(
            dir.path(),
            &[("ab/1", b"1"), ("ab/2", b"2"), ("cd/3", b"3")],
        );
        let mut room = 2;
        let (held, complete) = hold(&store, &mut room);
        assert_eq!((held.files.len(), complete, room), (2, false, 0));
        let mut room = 5;
        let (held, complete) = hold(&store, &mut room);
        assert_eq!((held.files.len(), complete, room), (3, true, 2));
    }

    #[test]
    fn a_store_with_more_files_than_the_soft_limit_of_open_files_is_held_whole() {
        use rustix::process::{Resource, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Nofile);
        let Some(maximum) = limit.maximum.filter(|maximum| *maximum >= 1024) else {
            eprintln!("skipped: the hard limit of open files is below 1024");
            return;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let names: Vec<String> = (0..400).map(|n| format!("{:02x}/{n}", n % 7)).collect();
        let files: Vec<(&str, &[u8])> = names
            .iter()
            .map(|name| (name.as_str(), &b"x"[..]))
            .collect();
        let store = store_with(dir.path(), &files);
        let mut lowered = limit;
        lowered.current = Some(256.min(maximum));
        setrlimit(Resource::Nofile, lowered).expect("lower the soft limit");
        let mut room = HELD_OBJECTS;
        let (held, complete) = hold(&store, &mut room);
        assert_eq!((held.files.len(), complete), (400, true));
        assert_eq!(getrlimit(Resource::Nofile).current, Some(maximum));
    }

    #[test]
    fn a_removed_object_is_written_back_whole_with_its_mode_and_one_rewritten_in_place_is_said() {
        let dir = tempfile::tempdir().expect("tempdir");
        // Larger than the 64 KiB read at a time.
        let large = vec![7u8; 100 * 1024];
        let store = store_with(dir.path(), &[("ab/cd", b"object"), ("ef/01", &large)]);
        let (held, _) = hold(&store, &mut HELD_OBJECTS.clone());
        let rewritten = store.join("ab/cd");
        std::fs::set_permissions(&rewritten, std::fs::Permissions::from_mode(0o644)).expect("rw");
        // The same length, through the same inode: only the time tells.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&rewritten)
            .and_then(|mut file| std::io::Write::write_all(&mut file, b"OBJECT"))
            .expect("rewrite");
        std::fs::remove_file(store.join("ef/01")).expect("rm");
        let mut repaired = Vec::new();
        put_back(&held, &mut repaired);
        let changes: Vec<_> = repaired
            .iter()
            .map(|r| (r.change.clone(), r.result.is_ok()))
            .collect();
        assert_eq!(
            changes,
            [
                (Change::ObjectsRemoved(1), true),
                (Change::ObjectsRewritten(1), false)
            ]
        );
        let back = store.join("ef/01");
        assert_eq!(std::fs::read(&back).expect("written back"), large);
        assert_eq!(
            back.metadata().expect("metadata").permissions().mode() & 0o7777,
            0o444
        );
    }

    #[test]
    fn an_object_that_cannot_be_written_back_is_counted_and_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = store_with(dir.path(), &[("ab/cd", b"one"), ("ef/01", b"two")]);
        let (held, _) = hold(&store, &mut HELD_OBJECTS.clone());
        // A file where its directory was: it cannot be made again.
        std::fs::remove_dir_all(store.join("ab")).expect("rm");
        std::fs::write(store.join("ab"), "in the way").expect("w");
        std::fs::remove_file(store.join("ef/01")).expect("rm");
        let mut repaired = Vec::new();
        put_back(&held, &mut repaired);
        assert_eq!(repaired.len(), 1, "{repaired:?}");
        assert_eq!(repaired[0].change, Change::ObjectsRemoved(2));
        let error = repaired[0].result.clone().expect_err("one failed");
        assert!(
            error.starts_with(&format!(
                "1 not written back, first {}",
                store.join("ab/cd").display()
            )),
            "{error}"
        );
        assert_eq!(std::fs::read(store.join("ef/01")).expect("back"), b"two");
    }
}
