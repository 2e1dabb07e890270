//! Change notification: which paths may have changed since the last look.
//!
//! A checkpoint must not cost a walk of the whole tree: lstat alone of 100,000
//! files takes longer than its 50 ms budget. On Linux, inotify watches every
//! directory git sees and the kernel queues a note for each change as it
//! happens, so a checkpoint reads the queue and looks at those paths only.
//!
//! The queue is trusted only while it is complete. It asks for a full scan when
//! the kernel dropped notes (queue overflow), when ignore rules changed (a
//! `.gitignore` was touched, so files may have become visible without being
//! touched) and when a nested repository appeared or left (`.git` below the top).
//! Changes inotify never reports (writes through a shared memory map, writes on
//! a network filesystem by another machine) are seen by the next full scan;
//! undo and redo always scan in full.
//!
//! Elsewhere there is no watcher and every checkpoint scans in full.

use std::collections::BTreeSet;
use std::path::PathBuf;

pub(crate) use imp::Watcher;

/// The paths that may have changed, or a request to scan everything.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Changes {
    /// Paths relative to the top level whose file, symlink or directory may
    /// have been created, changed or removed.
    pub(crate) paths: BTreeSet<PathBuf>,
    /// True if and only if the notes cannot be trusted to be complete.
    pub(crate) rescan: bool,
}

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::HashMap;
    use std::ffi::OsStr;
    use std::io;
    use std::mem::MaybeUninit;
    use std::os::fd::OwnedFd;
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};

    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};

    use super::Changes;

    /// Watches directories of one working tree with inotify.
    #[derive(Debug)]
    pub(crate) struct Watcher {
        /// The inotify instance, non-blocking.
        fd: OwnedFd,
        /// The working tree's top level.
        root: PathBuf,
        /// Watch descriptor to the directory it watches, relative to `root`
        /// (empty for the top level).
        dirs: HashMap<i32, PathBuf>,
    }

    /// What a watch reports: every change to a directory's entries (content,
    /// mode, creation, removal, renames), never following a symlink.
    const WATCHED: WatchFlags = WatchFlags::CREATE
        .union(WatchFlags::DELETE)
        .union(WatchFlags::MODIFY)
        .union(WatchFlags::ATTRIB)
        .union(WatchFlags::MOVED_FROM)
        .union(WatchFlags::MOVED_TO)
        .union(WatchFlags::DELETE_SELF)
        .union(WatchFlags::MOVE_SELF)
        .union(WatchFlags::DONT_FOLLOW)
        .union(WatchFlags::ONLYDIR)
        .union(WatchFlags::EXCL_UNLINK);

    /// What one note means for the next checkpoint.
    #[derive(Debug, PartialEq, Eq)]
    enum Effect {
        /// This path may have changed.
        Changed(PathBuf),
        /// Scan everything.
        Rescan,
        /// The watch is gone; drop its descriptor.
        Forget,
        /// Nothing a snapshot records.
        Nothing,
    }

    impl Watcher {
        /// A watcher of the tree at `root`, watching nothing yet.
        pub(crate) fn new(root: &Path) -> io::Result<Watcher> {
            let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC)?;
            Ok(Watcher {
                fd,
                root: root.to_path_buf(),
                dirs: HashMap::new(),
            })
        }

        /// Starts watching directory `dir` (relative to the top level) for
        /// changes to its entries. Watching a directory twice is harmless: the
        /// kernel hands back the same descriptor and the path is updated, which
        /// is what a moved directory needs.
        pub(crate) fn watch(&mut self, dir: &Path) -> io::Result<()> {
            let wd = inotify::add_watch(&self.fd, self.root.join(dir), WATCHED)?;
            self.dirs.insert(wd, dir.to_path_buf());
            Ok(())
        }

        /// The watched directories, sorted.
        #[cfg(test)]
        pub(crate) fn watched(&self) -> Vec<PathBuf> {
            let mut dirs: Vec<PathBuf> = self.dirs.values().cloned().collect();
            dirs.sort();
            dirs
        }

        /// Reads every queued note.
        pub(crate) fn drain(&mut self) -> io::Result<Changes> {
            let mut changes = Changes::default();
            let mut buffer = vec![MaybeUninit::<u8>::uninit(); 64 * 1024];
            let mut reader = inotify::Reader::new(&self.fd, &mut buffer);
            loop {
                let event = match reader.next() {
                    Ok(event) => event,
                    Err(rustix::io::Errno::AGAIN) => return Ok(changes),
                    Err(e) => return Err(e.into()),
                };
                let dir = self.dirs.get(&event.wd()).map(PathBuf::as_path);
                let name = event
                    .file_name()
                    .map(|name| OsStr::from_bytes(name.to_bytes()))
                    .filter(|name| !name.is_empty());
                match classify(dir, event.events(), name) {
                    Effect::Changed(path) => {
                        changes.paths.insert(path);
                    }
                    Effect::Rescan => changes.rescan = true,
                    Effect::Forget => {
                        self.dirs.remove(&event.wd());
                    }
                    Effect::Nothing => {}
                }
            }
        }
    }

    /// What a note with `flags` about entry `name` of watched directory `dir`
    /// means; `dir` is `None` for a descriptor already forgotten, `name` is
    /// `None` for a note about the directory itself.
    fn classify(dir: Option<&Path>, flags: ReadFlags, name: Option<&OsStr>) -> Effect {
        if flags.contains(ReadFlags::QUEUE_OVERFLOW) || flags.contains(ReadFlags::UNMOUNT) {
            return Effect::Rescan;
        }
        if flags.contains(ReadFlags::IGNORED) {
            return Effect::Forget;
        }
        let Some(dir) = dir else {
            return Effect::Nothing;
        };
        let Some(name) = name else {
            // Notes about a directory itself also reach its parent by name,
            // except for the top level, which has no watched parent.
            return if dir.as_os_str().is_empty() {
                Effect::Rescan
            } else {
                Effect::Nothing
            };
        };
        if flags.contains(ReadFlags::ISDIR) && flags.contains(ReadFlags::ATTRIB) {
            // git records no directory permissions or times.
            return Effect::Nothing;
        }
        if name == ".git" {
            return if dir.as_os_str().is_empty() {
                // The repository itself, which snapshots never contain.
                Effect::Nothing
            } else {
                Effect::Rescan
            };
        }
        if name == ".gitignore" {
            return Effect::Rescan;
        }
        Effect::Changed(dir.join(name))
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use std::fs;

        macro_rules! classifies {
            ($($name:ident: $dir:expr, $flags:expr, $entry:expr => $effect:expr;)*) => {$(
                #[test]
                fn $name() {
                    let dir: Option<&str> = $dir;
                    let entry: Option<&str> = $entry;
                    let got = classify(dir.map(Path::new), $flags, entry.map(OsStr::new));
                    assert_eq!(got, $effect);
                }
            )*};
        }

        fn changed(path: &str) -> Effect {
            Effect::Changed(PathBuf::from(path))
        }

        classifies! {
            modified_file: Some("src"), ReadFlags::MODIFY, Some("lib.rs") => changed("src/lib.rs");
            created_at_top: Some(""), ReadFlags::CREATE, Some("new") => changed("new");
            created_directory: Some("a"), ReadFlags::CREATE | ReadFlags::ISDIR, Some("b") => changed("a/b");
            removed_directory: Some("a"), ReadFlags::DELETE | ReadFlags::ISDIR, Some("b") => changed("a/b");
            moved_directory: Some(""), ReadFlags::MOVED_FROM | ReadFlags::ISDIR, Some("d") => changed("d");
            chmod_of_file: Some("a"), ReadFlags::ATTRIB, Some("run.sh") => changed("a/run.sh");
            chmod_of_directory: Some("a"), ReadFlags::ATTRIB | ReadFlags::ISDIR, Some("b") => Effect::Nothing;
            overflow: None, ReadFlags::QUEUE_OVERFLOW, None => Effect::Rescan;
            unmount: Some("a"), ReadFlags::UNMOUNT, None => Effect::Rescan;
            watch_removed: Some("a"), ReadFlags::IGNORED, None => Effect::Forget;
            forgotten_descriptor: None, ReadFlags::MODIFY, Some("x") => Effect::Nothing;
            top_level_moved: Some(""), ReadFlags::MOVE_SELF, None => Effect::Rescan;
            subdirectory_deleted_itself: Some("a"), ReadFlags::DELETE_SELF, None => Effect::Nothing;
            gitignore_anywhere: Some("a/b"), ReadFlags::MODIFY, Some(".gitignore") => Effect::Rescan;
            gitignore_at_top: Some(""), ReadFlags::CREATE, Some(".gitignore") => Effect::Rescan;
            repository_itself: Some(""), ReadFlags::ATTRIB | ReadFlags::ISDIR, Some(".git") => Effect::Nothing;
            repository_touched: Some(""), ReadFlags::MOVED_TO | ReadFlags::ISDIR, Some(".git") => Effect::Nothing;
            nested_repository: Some("vendor/lib"), ReadFlags::CREATE | ReadFlags::ISDIR, Some(".git")
                => Effect::Rescan;
            gitignore_prefix_is_a_file: Some(""), ReadFlags::CREATE, Some(".gitignore.bak")
                => changed(".gitignore.bak");
        }

        fn drained(watcher: &mut Watcher) -> Vec<String> {
            let changes = watcher.drain().unwrap();
            assert!(!changes.rescan);
            changes
                .paths
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect()
        }

        #[test]
        fn notes_name_the_changed_paths_and_drain_empties_the_queue() {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            fs::create_dir(root.join("sub")).unwrap();
            fs::write(root.join("sub/old"), "o").unwrap();
            let mut watcher = Watcher::new(root).unwrap();
            watcher.watch(Path::new("")).unwrap();
            watcher.watch(Path::new("sub")).unwrap();
            assert!(drained(&mut watcher).is_empty());

            fs::write(root.join("top"), "t").unwrap();
            fs::write(root.join("sub/old"), "changed").unwrap();
            fs::create_dir(root.join("sub/new")).unwrap();
            assert_eq!(drained(&mut watcher), ["sub/new", "sub/old", "top"]);
            assert!(drained(&mut watcher).is_empty());

            fs::rename(root.join("sub/old"), root.join("moved")).unwrap();
            assert_eq!(drained(&mut watcher), ["moved", "sub/old"]);
        }

        #[test]
        fn a_deleted_directory_is_forgotten() {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            fs::create_dir(root.join("gone")).unwrap();
            let mut watcher = Watcher::new(root).unwrap();
            watcher.watch(Path::new("")).unwrap();
            watcher.watch(Path::new("gone")).unwrap();
            assert_eq!(watcher.dirs.len(), 2);
            fs::remove_dir(root.join("gone")).unwrap();
            assert_eq!(drained(&mut watcher), ["gone"]);
            assert_eq!(watcher.dirs.len(), 1);
        }

        #[test]
        fn watching_a_moved_directory_again_renames_it() {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            fs::create_dir(root.join("before")).unwrap();
            let mut watcher = Watcher::new(root).unwrap();
            watcher.watch(Path::new("before")).unwrap();
            fs::rename(root.join("before"), root.join("after")).unwrap();
            watcher.watch(Path::new("after")).unwrap();
            fs::write(root.join("after/file"), "f").unwrap();
            assert_eq!(drained(&mut watcher), ["after/file"]);
        }

        #[test]
        fn watching_a_file_or_nothing_fails() {
            let dir = tempfile::tempdir().unwrap();
            fs::write(dir.path().join("file"), "f").unwrap();
            let mut watcher = Watcher::new(dir.path()).unwrap();
            let err = watcher.watch(Path::new("file")).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::NotADirectory);
            let err = watcher.watch(Path::new("missing")).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::NotFound);
            assert!(watcher.dirs.is_empty());
        }

        #[test]
        fn touching_a_gitignore_asks_for_a_rescan() {
            let dir = tempfile::tempdir().unwrap();
            let mut watcher = Watcher::new(dir.path()).unwrap();
            watcher.watch(Path::new("")).unwrap();
            fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
            fs::write(dir.path().join("other"), "o").unwrap();
            let changes = watcher.drain().unwrap();
            assert!(changes.rescan);
            assert_eq!(changes.paths.len(), 1);
        }
    }
}

#[cfg(not(target_os = "linux"))]
// Not compiled where mutation testing runs (Linux), so its mutants could not
// fail a test; `mutants::skip` (a no-op attribute) tells cargo-mutants.
#[cfg_attr(test, mutants::skip)]
mod imp {
    use std::io;
    use std::path::Path;

    use super::Changes;

    /// No watcher on this platform: creating one fails, so every checkpoint
    /// scans in full.
    #[derive(Debug)]
    pub(crate) enum Watcher {}

    impl Watcher {
        pub(crate) fn new(_root: &Path) -> io::Result<Watcher> {
            Err(io::ErrorKind::Unsupported.into())
        }

        pub(crate) fn watch(&mut self, _dir: &Path) -> io::Result<()> {
            match *self {}
        }

        pub(crate) fn drain(&mut self) -> io::Result<Changes> {
            match *self {}
        }
    }
}
