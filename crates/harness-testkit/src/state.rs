//! One state directory (`XDG_STATE_HOME`) per test process, for the undo stores the tests
//! make, so that none lands in the real home directory.
//!
//! A `static` is never dropped, so a `TempDir` held in one outlives its process: under
//! nextest, which runs each test in a process of its own, that left one directory of
//! stores per test in the temporary directory (25,000 of them, 25 GB, on the development
//! machine). Here each process's directory is named by its process id, and the first call
//! in a process removes those of processes that are gone.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Points `XDG_STATE_HOME` at this process's own directory, made (and the directories of
/// finished processes removed) by the first call; every later call returns the same path.
///
/// ```
/// let state = harness_testkit::state::isolate_state_home();
/// assert_eq!(std::env::var_os("XDG_STATE_HOME").as_deref(), Some(state.as_os_str()));
/// ```
pub fn isolate_state_home() -> &'static Path {
    static STATE: OnceLock<PathBuf> = OnceLock::new();
    STATE.get_or_init(|| {
        let dir = own_directory();
        // Set once, before the first store is made, and never changed: every reader sees
        // the same value (the initializer runs once; other callers wait for it).
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var("XDG_STATE_HOME", &dir);
        }
        dir
    })
}

/// `$TMPDIR/harness-test-state-<uid>/<pid>`, made empty, after removing the directories
/// of processes that no longer run.
fn own_directory() -> PathBuf {
    let uid = fs::metadata("/proc/self").map_or(0, |metadata| metadata.uid());
    let parent = std::env::temp_dir().join(format!("harness-test-state-{uid}"));
    fs::create_dir_all(&parent).expect("the tests' state directory");
    if let Ok(entries) = fs::read_dir(&parent) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let finished = name
                .to_str()
                .and_then(|pid| pid.parse::<u32>().ok())
                .is_some_and(|pid| !Path::new("/proc").join(pid.to_string()).exists());
            if finished {
                // Another process may be removing it too.
                let _ = fs::remove_dir_all(entry.path());
            }
        }
    }
    let dir = parent.join(std::process::id().to_string());
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir(&dir).expect("this test process's state directory");
    dir
}
