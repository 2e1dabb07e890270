//! Which runs are in progress: an advisory lock on a file in the run's directory, held by
//! the process that runs it for as long as its session lives.
//!
//! The kernel releases a `flock` when the last descriptor of the open file closes, so the
//! mark survives nothing but the process: a run whose process was killed is not in
//! progress, whatever its metadata says, and one that is running is, whatever the clock.
//! The file is opened close-on-exec, so a command the run starts (which may outlive it)
//! does not keep the mark. Pruning takes the lock itself before it removes a run, so a
//! run cannot be pruned while it is in progress, nor begin to be used while it is pruned.
//!
//! # Platform behavior
//!
//! On Unix only; elsewhere no run is ever seen in progress.

use std::fs::{File, OpenOptions};
use std::path::Path;

use crate::Error;

/// The lock file in a run's directory.
pub(crate) const LOCK_FILE: &str = "live.lock";

/// The mark of a run in progress, or of a run being pruned: the lock is held until this
/// is dropped.
#[derive(Debug)]
pub(crate) struct Held {
    /// The open lock file; closing it releases the lock.
    _file: File,
}

/// Whose lock [`take`] asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lock {
    /// The run's own process, or a prune: no one else may hold it.
    Exclusive,
    /// A process that reads or restores the run (undo, redo): others may too, but a prune
    /// may not start.
    Shared,
}

/// Takes the lock of the run directory `dir` without waiting, creating the file (0600) if
/// missing. `Ok(None)` when another process holds it in a way that excludes `lock`.
pub(crate) fn take(dir: &Path, lock: Lock) -> Result<Option<Held>, Error> {
    let path = dir.join(LOCK_FILE);
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&path).map_err(|e| Error::io(&path, e))?;
    #[cfg(unix)]
    {
        use rustix::fs::{FlockOperation, flock};
        let operation = match lock {
            Lock::Exclusive => FlockOperation::NonBlockingLockExclusive,
            Lock::Shared => FlockOperation::NonBlockingLockShared,
        };
        match flock(&file, operation) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => return Ok(None),
            Err(error) => return Err(Error::io(&path, error.into())),
        }
    }
    #[cfg(not(unix))]
    let _ = lock;
    Ok(Some(Held { _file: file }))
}

/// True if and only if a process holds the lock of the run directory `dir`: the run is in
/// progress (or being undone, redone or pruned). A directory without the file is not.
pub(crate) fn is_held(dir: &Path) -> bool {
    if !dir.join(LOCK_FILE).exists() {
        return false;
    }
    matches!(take(dir, Lock::Exclusive), Ok(None))
}

#[cfg(test)]
#[cfg(unix)] // flock is Unix's.
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_seen_and_excludes_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_held(dir.path()), "no file, no run in progress");
        let held = take(dir.path(), Lock::Exclusive).unwrap().unwrap();
        assert!(is_held(dir.path()));
        assert!(take(dir.path(), Lock::Shared).unwrap().is_none());
        assert!(take(dir.path(), Lock::Exclusive).unwrap().is_none());
        drop(held);
        assert!(!is_held(dir.path()));
        let reader = take(dir.path(), Lock::Shared).unwrap().unwrap();
        let other_reader = take(dir.path(), Lock::Shared).unwrap().unwrap();
        assert!(is_held(dir.path()), "a reader keeps a prune away");
        drop((reader, other_reader));
        assert!(!is_held(dir.path()));
    }
}
