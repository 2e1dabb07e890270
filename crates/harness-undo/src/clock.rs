//! The file system's clock: when a file last changed (its change time, ctime, which no
//! program can set back), and the stamp a file written now gets, which lags the system
//! clock. A run's start and end, and an undo's and a redo's, are read from it, so that a
//! change is told to be the run's or someone else's by the clock that stamped it.

use std::path::Path;
use std::time::SystemTime;

/// Now, as the file system holding `dir` stamps a file it writes.
///
/// The kernel stamps a file's times from a clock it reads once a tick, a few
/// milliseconds behind the one [`SystemTime::now`] reads, and some file
/// systems round them down further: a file a command writes just after a run
/// starts can carry a time before the start, and would not be counted as
/// changed during the run. A file written here and read back carries the
/// stamp anything written later is at least at. If it cannot be written,
/// the clock's own now is the best left.
pub(crate) fn file_system_now(dir: &Path) -> SystemTime {
    let now = SystemTime::now();
    let stamped = tempfile::Builder::new()
        .prefix("harness-clock-")
        .tempfile_in(dir)
        .and_then(|probe| last_change(&probe.as_file().metadata()?));
    match stamped {
        Ok(stamped) => stamped.min(now),
        Err(_) => now,
    }
}

/// The change time (ns) of a file written in `dir` now: past that of every file written
/// before it (the kernel's file clock only goes forward). The clock's own now when no
/// file can be written there, which is later still.
pub(crate) fn file_system_stamp_ns(dir: &Path) -> i64 {
    let now = SystemTime::now();
    let stamped = tempfile::Builder::new()
        .prefix("harness-clock-")
        .tempfile_in(dir)
        .and_then(|probe| last_change(&probe.as_file().metadata()?))
        .unwrap_or(now);
    stamped
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
        })
}

/// When the file of `metadata` last changed: on Unix its inode's change time
/// (ctime), which the kernel sets on every write, create, rename or chmod and
/// no program can set back; elsewhere its modification time.
pub(crate) fn last_change(metadata: &std::fs::Metadata) -> std::io::Result<SystemTime> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // Before 1970 only with a clock set wrong: the earliest time, never "during the run".
        let seconds = u64::try_from(metadata.ctime()).unwrap_or(0);
        let nanos = u32::try_from(metadata.ctime_nsec()).unwrap_or(0);
        Ok(std::time::UNIX_EPOCH + std::time::Duration::new(seconds, nanos))
    }
    #[cfg(not(unix))]
    metadata.modified()
}
