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
