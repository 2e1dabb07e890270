//! Putting ignored paths back as a manifest has them: what the manifest lacks is removed
//! (a directory only once empty), what it saved is written back as a new file after the
//! old entry is unlinked, so that a hard link or a symlink a command left is never
//! written through, and no write goes through a symlinked directory.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use git2::Repository;

use super::compare::Change;
use super::manifest::{Kind, Manifest, Stat, path_of};

/// What [`put_back`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PutBack {
    /// Paths written back as the manifest has them, sorted.
    pub(crate) restored: Vec<PathBuf>,
    /// Paths removed (the manifest lacks them), sorted.
    pub(crate) removed: Vec<PathBuf>,
    /// Paths that differ and could not be put back (not saved, or the write failed),
    /// sorted.
    pub(crate) not_restored: Vec<PathBuf>,
}

/// Puts the paths in `changes` back as `base` has them, reading saved content from
/// `store`: created ones removed, changed and deleted ones rewritten where saved. Where
/// not saved, an entry a verification wrote is removed (`remove_unsaved_checks`); any
/// other is left and named.
pub(crate) fn put_back(
    root: &Path,
    store: &Repository,
    base: &Manifest,
    changes: &[(String, Change)],
    remove_unsaved_checks: bool,
) -> PutBack {
    let mut done = PutBack::default();
    // Removals deepest first, so a directory a command made goes after what it holds.
    for (path, change) in changes.iter().rev() {
        if *change != Change::Created {
            continue;
        }
        let relative = path_of(path);
        let removed = if now_is_dir(root, &relative) {
            // Only once empty: it may hold what is not listed here (a file the file
            // tools wrote, which the snapshots restore, or a nested repository).
            match fs::remove_dir(root.join(&relative)) {
                Err(e) if e.kind() == ErrorKind::DirectoryNotEmpty => continue,
                removed => removed,
            }
        } else {
            remove(root, &relative)
        };
        match removed {
            Err(e) if e.kind() != ErrorKind::NotFound => done.not_restored.push(relative),
            _ => done.removed.push(relative),
        }
    }
    // Writes shallowest first, so a directory is made before what goes in it.
    for (path, change) in changes {
        if *change == Change::Created {
            continue;
        }
        let relative = path_of(path);
        let Some(entry) = base.entries.get(path) else {
            continue;
        };
        let written = match (entry.stat.kind, entry.blob) {
            (Kind::Dir, _) => make_dirs(root, &relative).map(|()| true),
            (Kind::File | Kind::Symlink, Some(blob)) => store
                .find_blob(blob)
                .map_err(|e| std::io::Error::other(e.message().to_owned()))
                .and_then(|b| write_entry(root, &relative, &entry.stat, b.content()))
                .map(|()| true),
            _ if entry.from_check && remove_unsaved_checks => {
                remove(root, &relative).map(|()| true)
            }
            _ => Ok(false),
        };
        match written {
            Ok(true) => done.restored.push(relative),
            _ => done.not_restored.push(relative),
        }
    }
    done.restored.sort();
    done.removed.sort();
    done.not_restored.sort();
    done
}

/// True if and only if `relative` is a real directory under real directories now.
fn now_is_dir(root: &Path, relative: &Path) -> bool {
    is_under_real_dirs(root, relative)
        && fs::symlink_metadata(root.join(relative)).is_ok_and(|m| m.is_dir())
}

/// Removes whatever is at `relative` (a directory with what it holds, never following a
/// symlink); gone already is done.
fn remove(root: &Path, relative: &Path) -> std::io::Result<()> {
    if !is_under_real_dirs(root, relative) {
        // Reached through a symlink: what is there is not in the workspace, and the
        // symlink itself is an entry of its own.
        return Ok(());
    }
    let full = root.join(relative);
    let removed = match fs::symlink_metadata(&full) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(&full),
        Ok(_) => fs::remove_file(&full),
        Err(e) => Err(e),
    };
    match removed {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// True if and only if every directory above `relative` is a real one.
fn is_under_real_dirs(root: &Path, relative: &Path) -> bool {
    relative
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .all(|a| fs::symlink_metadata(root.join(a)).is_ok_and(|m| m.is_dir()))
}

/// Makes `relative` and every directory above it real directories: a symlink or file in
/// the way is removed first (a command may have put `.venv/bin -> /elsewhere`, through
/// which a write would leave the workspace).
fn make_dirs(root: &Path, relative: &Path) -> std::io::Result<()> {
    let mut ancestors: Vec<&Path> = relative
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .collect();
    ancestors.reverse();
    for dir in ancestors {
        let full = root.join(dir);
        match fs::symlink_metadata(&full) {
            Ok(m) if m.is_dir() => continue,
            Ok(_) => fs::remove_file(&full)?,
            // Nothing there, or it cannot be looked at: making it says which.
            Err(_) => {}
        }
        fs::create_dir(&full)?;
    }
    Ok(())
}

/// Writes `bytes` at `relative` as a new file (or symlink) of `stat`'s mode and
/// modification time, after removing what is there: never through a hard link or a
/// symlink a command left.
fn write_entry(root: &Path, relative: &Path, stat: &Stat, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = relative.parent() {
        make_dirs(root, parent)?;
    }
    remove(root, relative)?;
    let full = root.join(relative);
    imp_write::write(&full, stat, bytes)
}

#[cfg(unix)]
mod imp_write {
    use std::fs::{self, OpenOptions};
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    use std::path::Path;

    use super::{Kind, Stat};

    pub(super) fn write(full: &Path, stat: &Stat, bytes: &[u8]) -> std::io::Result<()> {
        if stat.kind == Kind::Symlink {
            let target = crate::paths::from_bytes(bytes);
            return std::os::unix::fs::symlink(target, full);
        }
        let permissions = stat.mode & 0o7777;
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(full)?;
        file.write_all(bytes)?;
        let seconds = stat.mtime_ns.div_euclid(1_000_000_000);
        let nanos = stat.mtime_ns.rem_euclid(1_000_000_000);
        let mtime = u64::try_from(seconds)
            .ok()
            .zip(u32::try_from(nanos).ok())
            .map(|(s, n)| std::time::UNIX_EPOCH + std::time::Duration::new(s, n));
        if let Some(mtime) = mtime {
            file.set_modified(mtime)?;
        }
        fs::set_permissions(full, fs::Permissions::from_mode(permissions))
    }
}

// Never compiled where mutation testing runs (Linux): its mutants could not be built.
#[cfg(not(unix))]
#[cfg_attr(test, mutants::skip)]
mod imp_write {
    use std::path::Path;

    use super::Stat;

    pub(super) fn write(full: &Path, _stat: &Stat, bytes: &[u8]) -> std::io::Result<()> {
        std::fs::write(full, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::super::manifest::Entry;
    use super::*;

    /// Makes `file` (or a directory) one that cannot be removed: its directory read-only,
    /// or, for root, whom permissions do not stop, itself immutable. Undone on drop.
    struct Unremovable(PathBuf);

    impl Unremovable {
        fn make(file: &Path) -> Unremovable {
            use std::os::unix::fs::PermissionsExt;
            let dir = file.parent().unwrap();
            if rustix::process::geteuid().is_root() {
                let made = std::process::Command::new("chattr")
                    .arg("+i")
                    .arg(file)
                    .status()
                    .unwrap();
                assert!(made.success(), "chattr +i {}", file.display());
            } else {
                fs::set_permissions(dir, fs::Permissions::from_mode(0o555)).unwrap();
            }
            Unremovable(file.to_owned())
        }
    }

    impl Drop for Unremovable {
        fn drop(&mut self) {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.0)
                .status();
            if let Some(dir) = self.0.parent() {
                let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o755));
            }
        }
    }

    #[test]
    fn what_cannot_be_removed_is_named_and_a_directory_holding_more_is_left() {
        let root = tempfile::tempdir().unwrap();
        let store_dir = tempfile::tempdir().unwrap();
        let store = Repository::init_bare(store_dir.path()).unwrap();
        let at = |path: &str| root.path().join(path);
        // A directory a command made that holds what the list does not (a file the file
        // tools wrote): left, and not named as not put back.
        fs::create_dir(at("made_dir")).unwrap();
        fs::write(at("made_dir/unlisted"), "tools").unwrap();
        fs::write(at("made_file"), "command").unwrap();
        // A file a command made that cannot be removed: named.
        fs::create_dir(at("locked")).unwrap();
        fs::write(at("locked/made"), "command").unwrap();
        let _locked = Unremovable::make(&at("locked/made"));
        // And an empty directory a command made that cannot be removed: named too.
        fs::create_dir(at("locked_dir")).unwrap();
        fs::create_dir(at("locked_dir/made")).unwrap();
        let _locked_dir = Unremovable::make(&at("locked_dir/made"));
        let changes: Vec<(String, Change)> =
            ["locked/made", "locked_dir/made", "made_dir", "made_file"]
                .iter()
                .map(|path| (path.to_string(), Change::Created))
                .collect();
        let done = put_back(root.path(), &store, &Manifest::default(), &changes, false);
        assert_eq!(done.removed, [PathBuf::from("made_file")]);
        assert_eq!(
            done.not_restored,
            [
                PathBuf::from("locked/made"),
                PathBuf::from("locked_dir/made")
            ]
        );
        assert!(at("made_dir/unlisted").exists());
        assert!(!at("made_file").exists());
    }

    fn entry(kind: Kind, from_check: bool) -> Entry {
        Entry {
            stat: Stat {
                kind,
                size: 0,
                mtime_ns: 0,
                ctime_ns: 0,
                ino: 0,
                mode: 0o644,
            },
            blob: None,
            from_check,
        }
    }

    #[test]
    fn a_deleted_directory_is_made_again_and_an_unsaved_file_a_check_wrote_is_removed() {
        let root = tempfile::tempdir().unwrap();
        let store_dir = tempfile::tempdir().unwrap();
        let store = Repository::init_bare(store_dir.path()).unwrap();
        let at = |path: &str| root.path().join(path);
        let mut base = Manifest::default();
        base.entries
            .insert("cache".to_owned(), entry(Kind::Dir, false));
        base.entries
            .insert("check.out".to_owned(), entry(Kind::File, true));
        base.entries
            .insert("big.bin".to_owned(), entry(Kind::File, false));
        fs::write(at("check.out"), "changed since the check").unwrap();
        // A check's file a command made a directory: removed with what it holds.
        base.entries
            .insert("check.dir".to_owned(), entry(Kind::File, true));
        fs::create_dir(at("check.dir")).unwrap();
        fs::write(at("check.dir/inside"), "x").unwrap();
        fs::write(at("big.bin"), "changed, never saved").unwrap();
        let changes: Vec<(String, Change)> = vec![
            ("big.bin".to_owned(), Change::Changed),
            ("cache".to_owned(), Change::Deleted),
            ("check.dir".to_owned(), Change::Changed),
            ("check.out".to_owned(), Change::Changed),
        ];
        let done = put_back(root.path(), &store, &base, &changes, true);
        assert_eq!(
            done.restored,
            [
                PathBuf::from("cache"),
                PathBuf::from("check.dir"),
                PathBuf::from("check.out")
            ]
        );
        assert!(at("cache").is_dir());
        assert!(!at("check.dir").exists());
        assert!(!at("check.out").exists());
        // Not saved and not a check's: left as it is, and named.
        assert_eq!(done.not_restored, [PathBuf::from("big.bin")]);
        assert!(at("big.bin").exists());
        // Without leave to remove what checks wrote, that too is named, not removed.
        fs::write(at("check.out"), "again").unwrap();
        let kept = put_back(root.path(), &store, &base, &changes[3..], false);
        assert_eq!(kept.not_restored, [PathBuf::from("check.out")]);
        assert!(at("check.out").exists());
    }

    #[test]
    fn a_saved_file_comes_back_as_a_new_file_with_its_mode_and_time() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let root = tempfile::tempdir().unwrap();
        let store_dir = tempfile::tempdir().unwrap();
        let store = Repository::init_bare(store_dir.path()).unwrap();
        let at = |path: &str| root.path().join(path);
        let mtime_ns = 1_600_000_000_123_456_789;
        let mut saved = entry(Kind::File, false);
        saved.stat.mode = 0o100_751;
        saved.stat.mtime_ns = mtime_ns;
        saved.blob = Some(store.blob(b"print('saved')\n").unwrap());
        let mut base = Manifest::default();
        base.entries.insert("gone.py".to_owned(), saved.clone());
        base.entries.insert("tool.py".to_owned(), saved);
        // A command made it a hard link to a file elsewhere: that file is not written.
        let elsewhere = tempfile::tempdir().unwrap();
        let other = elsewhere.path().join("other");
        fs::write(&other, "the other file").unwrap();
        fs::hard_link(&other, at("tool.py")).unwrap();
        // And one a command deleted.
        let changes = vec![
            ("gone.py".to_owned(), Change::Deleted),
            ("tool.py".to_owned(), Change::Changed),
        ];
        let done = put_back(root.path(), &store, &base, &changes, false);
        assert_eq!(
            done.restored,
            [PathBuf::from("gone.py"), PathBuf::from("tool.py")]
        );
        assert_eq!(
            fs::read_to_string(at("gone.py")).unwrap(),
            "print('saved')\n"
        );
        assert_eq!(
            fs::read_to_string(at("tool.py")).unwrap(),
            "print('saved')\n"
        );
        assert_eq!(fs::read_to_string(&other).unwrap(), "the other file");
        let meta = fs::metadata(at("tool.py")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o7777, 0o751);
        assert_eq!(meta.mtime() * 1_000_000_000 + meta.mtime_nsec(), mtime_ns);
    }

    #[test]
    fn nothing_is_removed_or_written_through_a_symlinked_directory() {
        let root = tempfile::tempdir().unwrap();
        let store_dir = tempfile::tempdir().unwrap();
        let store = Repository::init_bare(store_dir.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("precious"), "the user's").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("link")).unwrap();
        let changes = vec![("link/precious".to_owned(), Change::Created)];
        put_back(root.path(), &store, &Manifest::default(), &changes, false);
        assert_eq!(
            fs::read_to_string(outside.path().join("precious")).unwrap(),
            "the user's"
        );
    }
}
