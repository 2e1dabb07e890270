//! The model slots: at most K model requests at once across every process of a batch
//! (`--max-inflight K`), separate from the tasks run at once, so tasks running commands
//! overlap with others waiting on the model. A cross-process semaphore: K files under
//! `OUT/.model-slots/`, a request holding one by an exclusive `flock` on it.
//!
//! Why `flock` on files rather than a count in shared memory or a lock server: the kernel
//! releases the lock when its holder's file is closed, so a task process that crashes or
//! is killed mid-request (`SIGKILL` included) frees its slot with nothing left to clean
//! up, and every process of a batch on one machine (a local run's children, `--index`
//! processes an engine starts on one node) shares it through the output directory they
//! already share. It does not span machines: `flock` on a network filesystem may be
//! local to each client.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::fs::{FlockOperation, flock};

use crate::Error;

/// The directory of the slot files, in the batch's output directory.
pub const SLOTS_DIR: &str = ".model-slots";

/// How often a request waiting for a slot looks again: short beside a model's answer.
const RETRY: Duration = Duration::from_millis(10);

/// K model slots of a batch's output directory.
#[derive(Clone, Debug)]
pub struct ModelSlots {
    /// The slot files, `OUT/.model-slots/0` to `K-1`.
    files: Vec<PathBuf>,
}

/// A slot held: the request it was taken for may run. Dropped, the slot is free.
#[derive(Debug)]
pub struct Slot {
    /// Open with the lock on it; closing it releases the lock.
    _file: File,
}

impl ModelSlots {
    /// The `count` slots of `out` (at least 1), their files made if missing. Every
    /// process of a batch opens the same ones; the files are never truncated or removed,
    /// so opening them again while others hold them changes nothing.
    ///
    /// # Errors
    ///
    /// The directory or a file cannot be made.
    pub fn open(out: &Path, count: usize) -> Result<ModelSlots, Error> {
        let dir = out.join(SLOTS_DIR);
        std::fs::create_dir_all(&dir).map_err(|source| Error::ModelSlot {
            path: dir.clone(),
            source,
        })?;
        let files: Vec<PathBuf> = (0..count.max(1))
            .map(|slot| dir.join(slot.to_string()))
            .collect();
        for path in &files {
            open_slot(path)?;
        }
        Ok(ModelSlots { files })
    }

    /// How many slots there are.
    pub fn count(&self) -> usize {
        self.files.len()
    }

    /// Takes a free slot, waiting while every slot is held.
    ///
    /// # Errors
    ///
    /// A slot file cannot be opened or locked for a reason other than being held.
    pub fn acquire(&self) -> Result<Slot, Error> {
        loop {
            if let Some(slot) = self.try_acquire()? {
                return Ok(slot);
            }
            std::thread::sleep(RETRY);
        }
    }

    /// Takes a free slot if there is one, without waiting.
    ///
    /// # Errors
    ///
    /// As [`ModelSlots::acquire`].
    pub fn try_acquire(&self) -> Result<Option<Slot>, Error> {
        for path in &self.files {
            let file = open_slot(path)?;
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(Some(Slot { _file: file })),
                Err(rustix::io::Errno::WOULDBLOCK) => {}
                // A signal between the check and the lock: the slot may be free.
                Err(rustix::io::Errno::INTR) => {}
                Err(errno) => {
                    return Err(Error::ModelSlot {
                        path: path.clone(),
                        source: errno.into(),
                    });
                }
            }
        }
        Ok(None)
    }
}

/// The slot file at `path`, made if missing. Each acquire opens its own: a `flock` belongs
/// to an open file description, so two requests of one process sharing one would not
/// exclude each other.
fn open_slot(path: &Path) -> Result<File, Error> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|source| Error::ModelSlot {
            path: path.to_owned(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt as _;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn k_slots_are_held_at_most_k_at_once_and_a_dropped_one_is_free() {
        let out = tempfile::tempdir().unwrap();
        let slots = ModelSlots::open(out.path(), 2).unwrap();
        assert_eq!(slots.count(), 2);
        let first = slots.try_acquire().unwrap().expect("a free slot");
        let second = slots.try_acquire().unwrap().expect("a second free slot");
        // Another opening of the same directory, as another process makes, sees them held.
        let other = ModelSlots::open(out.path(), 2).unwrap();
        assert!(other.try_acquire().unwrap().is_none());
        drop(first);
        let third = other.try_acquire().unwrap().expect("the dropped slot");
        assert!(slots.try_acquire().unwrap().is_none());
        drop((second, third));
    }

    #[test]
    fn zero_slots_are_one() {
        let out = tempfile::tempdir().unwrap();
        let slots = ModelSlots::open(out.path(), 0).unwrap();
        assert_eq!(slots.count(), 1);
    }

    #[test]
    fn threads_waiting_for_one_slot_take_it_one_at_a_time() {
        let out = tempfile::tempdir().unwrap();
        let slots = ModelSlots::open(out.path(), 1).unwrap();
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (slots, inside, most) = (slots.clone(), inside.clone(), most.clone());
                std::thread::spawn(move || {
                    for _ in 0..5 {
                        let _slot = slots.acquire().unwrap();
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(2));
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_slot_held_by_a_killed_process_is_free() {
        let out = tempfile::tempdir().unwrap();
        let slots = ModelSlots::open(out.path(), 1).unwrap();
        let path = out.path().join(SLOTS_DIR).join("0");
        // A real process holds the slot: flock(1) from util-linux, if it is here, in a
        // group of its own with its `sleep` (`-o`: only flock itself holds the lock).
        let holder = std::process::Command::new("flock")
            .arg("-o")
            .arg(&path)
            .args(["sleep", "30"])
            .process_group(0)
            .spawn();
        let Ok(mut holder) = holder else {
            return; // no flock(1) here: the property cannot be shown
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while slots.try_acquire().unwrap().is_some() {
            assert!(
                std::time::Instant::now() < deadline,
                "flock(1) never held it"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let group = rustix::process::Pid::from_child(&holder);
        rustix::process::kill_process_group(group, rustix::process::Signal::KILL).unwrap();
        holder.wait().unwrap();
        assert!(slots.try_acquire().unwrap().is_some());
    }
}
