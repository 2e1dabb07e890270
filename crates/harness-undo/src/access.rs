//! Access a command took from the owner of the workspace's files, given back.
//!
//! Commands run as the user, and a user may change the mode of their own files
//! under every kernel tier: Landlock does not cover `chmod`, and only bwrap's
//! read-only `.git` refuses it there. So `chmod 000 src` made every checkpoint,
//! diff and undo of the run fail with "Permission denied" for a harness that
//! does not run as root, `chmod 555 src` left undo unable to write the user's
//! files back, and `chmod 000 .git` made the repository look deleted.
//!
//! Git records no mode but the executable bit, so no snapshot says what the
//! mode was. The harness gives the owner back only what it needs, and only on
//! what its own user owns: read on a file, read and search on a directory to
//! record it, and write on a directory to change what is in it. Each caller
//! reports what it gave back.

use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// What the owner needs of an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Need {
    /// To pass through a directory on the way to another: search.
    Pass,
    /// To read it: read on a file, read and search on a directory.
    Read,
    /// To read it and change what a directory holds: as [`Need::Read`], and
    /// write on a directory.
    Change,
}

impl Need {
    /// The owner's mode bits this need asks of an entry of this kind.
    fn bits(self, is_dir: bool) -> u32 {
        match (self, is_dir) {
            (Need::Pass, _) => 0o100,
            (_, false) => 0o400,
            (Need::Read, true) => 0o500,
            (Need::Change, true) => 0o700,
        }
    }
}

/// Gives the owner of the file or directory at `path` (relative to `root`)
/// what `need` asks, if this process's user owns it and lacks some of it. True
/// if and only if the mode changed. Nothing is changed through a symlink: a
/// symlink has no mode of its own, and one in place of a directory on the way
/// may lead out of the workspace. What is not there is left alone.
pub(crate) fn give_back(root: &Path, path: &Path, need: Need) -> io::Result<bool> {
    let mut full = root.to_path_buf();
    for name in path.components() {
        if !fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir()) {
            return Ok(false);
        }
        full.push(name);
    }
    set(&full, need)
}

/// Gives the owner back search on each directory above `path` (the
/// workspace), so that the harness can reach it again; returns the
/// directories that changed, from the top.
pub(crate) fn give_back_above(path: &Path) -> Vec<PathBuf> {
    let mut above: Vec<&Path> = path.ancestors().skip(1).collect();
    above.reverse();
    above
        .into_iter()
        .filter(|dir| set(dir, Need::Pass).unwrap_or(false))
        .map(Path::to_path_buf)
        .collect()
}

/// Gives the owner back access to the directory `dir` outside the workspace
/// that the harness keeps (the undo store) and to everything in it (read on
/// files; read, write and search on directories), the same on the directory
/// holding it (where every workspace's store is), and search on each
/// directory above that, so that the harness can reach it again; returns the
/// paths that changed. A symlink on the way is followed, as the harness's own
/// opening of `dir` does; its mode is not changed.
pub(crate) fn give_back_kept(dir: &Path) -> Vec<PathBuf> {
    let Some(holder) = dir.parent() else {
        return Vec::new();
    };
    let mut changed = give_back_above(holder);
    // The directory holding it is the harness's too (every workspace's store).
    if set(holder, Need::Change).unwrap_or(false) {
        changed.push(holder.to_path_buf());
    }
    if fs::symlink_metadata(dir).is_ok() {
        changed.extend(give_back_below(dir, Need::Change, |_, _| true));
    }
    changed
}

/// [`give_back`] for `path` itself, which the caller found without following
/// symlinks.
fn set(path: &Path, need: Need) -> io::Result<bool> {
    // Not there, or not to be looked at: nothing this user could change.
    let Ok(metadata) = fs::symlink_metadata(path) else {
        return Ok(false);
    };
    if metadata.file_type().is_symlink() || metadata.uid() != effective_uid() {
        return Ok(false);
    }
    let bits = need.bits(metadata.is_dir());
    let mode = metadata.permissions().mode() & 0o7777;
    if mode & bits == bits {
        return Ok(false);
    }
    fs::set_permissions(path, fs::Permissions::from_mode(mode | bits))?;
    Ok(true)
}

/// Gives the owner what `need` asks of `dir` and of everything below it
/// that `enter` accepts (called with each entry's path and
/// whether it is a directory; a refused directory is neither changed nor
/// entered), and returns the paths whose mode changed, sorted. Symlinks are
/// not followed. An entry that cannot be changed (another user's) is left as
/// it is, and so is a directory that still cannot be listed.
pub(crate) fn give_back_below(
    dir: &Path,
    need: Need,
    mut enter: impl FnMut(&Path, bool) -> bool,
) -> Vec<PathBuf> {
    let mut changed = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        if set(&dir, need).unwrap_or(false) {
            changed.push(dir.clone());
        }
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if file_type.is_dir() {
                if enter(&path, true) {
                    pending.push(path);
                }
            } else if file_type.is_file()
                && enter(&path, false)
                && set(&path, need).unwrap_or(false)
            {
                changed.push(path);
            }
        }
    }
    changed.sort();
    changed
}

fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
    }

    fn set_mode(path: &Path, mode: u32) {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn each_need_adds_only_the_owners_missing_bits() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, "x").unwrap();
        set_mode(&file, 0o044);
        let root = dir.path();
        assert!(give_back(root, Path::new("f"), Need::Read).unwrap());
        assert_eq!(mode(&file), 0o444);
        assert!(
            !give_back(root, Path::new("f"), Need::Change).unwrap(),
            "a file needs read only"
        );

        let sub = dir.path().join("d");
        fs::create_dir(&sub).unwrap();
        set_mode(&sub, 0o055);
        assert!(give_back(root, Path::new("d"), Need::Read).unwrap());
        assert_eq!(mode(&sub), 0o555);
        assert!(!give_back(root, Path::new("d"), Need::Read).unwrap());
        assert!(give_back(root, Path::new("d"), Need::Change).unwrap());
        assert_eq!(mode(&sub), 0o755);
        assert!(!give_back(root, Path::new("missing"), Need::Change).unwrap());
        assert!(
            give_back(root, Path::new(""), Need::Change).is_ok(),
            "the top level itself"
        );
    }

    #[test]
    fn nothing_is_changed_through_a_symlink() {
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("t");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("f"), "x").unwrap();
        set_mode(&target.join("f"), 0o000);
        set_mode(&target, 0o500);
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::os::unix::fs::symlink(&target, root.join("l")).unwrap();
        assert!(!give_back(root, Path::new("l"), Need::Change).unwrap());
        assert!(!give_back(root, Path::new("l/f"), Need::Read).unwrap());
        assert_eq!(mode(&target), 0o500);
        assert_eq!(mode(&target.join("f")), 0o000);
        assert!(give_back_below(root, Need::Change, |_, _| true).is_empty());
        assert_eq!(mode(&target.join("f")), 0o000);
        set_mode(&target, 0o700);
    }

    /// Only what this process's effective user owns is changed: as root, a
    /// thread of the test takes another user's id (a thread's credentials are
    /// its own) and may change its files, not root's.
    #[test]
    fn only_what_the_effective_user_owns_is_changed() {
        use rustix::process::{Gid, Uid, geteuid};
        if !geteuid().is_root() {
            return; // Making files of two users needs root.
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        set_mode(&root, 0o777);
        let roots = root.join("roots");
        fs::write(&roots, "x").unwrap();
        set_mode(&roots, 0o000);
        let theirs = root.join("theirs");
        fs::write(&theirs, "x").unwrap();
        rustix::fs::chown(
            &theirs,
            Some(Uid::from_raw(65534)),
            Some(Gid::from_raw(65534)),
        )
        .unwrap();
        set_mode(&theirs, 0o000);
        let (as_root, as_nobody) = {
            let root = root.clone();
            std::thread::spawn(move || {
                rustix::thread::set_thread_uid(Uid::from_raw(65534)).unwrap();
                (
                    give_back(&root, Path::new("roots"), Need::Read).unwrap(),
                    give_back(&root, Path::new("theirs"), Need::Read).unwrap(),
                )
            })
            .join()
            .unwrap()
        };
        assert!(!as_root, "root's file is not nobody's to change");
        assert!(as_nobody);
        assert_eq!(mode(&roots), 0o000);
        assert_eq!(mode(&theirs), 0o400);
        set_mode(&theirs, 0o000);
        // And root changes root's, not nobody's.
        assert!(!give_back(&root, Path::new("theirs"), Need::Read).unwrap());
        assert!(give_back(&root, Path::new("roots"), Need::Read).unwrap());
        assert_eq!(mode(&theirs), 0o000);
    }

    #[test]
    fn what_is_kept_outside_is_opened_and_what_is_above_it_passable() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("top");
        let holder = top.join("holder");
        let kept = holder.join("kept.git");
        fs::create_dir_all(kept.join("objects")).unwrap();
        fs::write(kept.join("HEAD"), "x").unwrap();
        set_mode(&kept.join("HEAD"), 0o000);
        set_mode(&kept.join("objects"), 0o000);
        set_mode(&kept, 0o000);
        set_mode(&holder, 0o000);
        set_mode(&top, 0o200);
        let changed = give_back_kept(&kept);
        assert_eq!(
            changed,
            [
                top.clone(),
                holder.clone(),
                kept.clone(),
                kept.join("HEAD"),
                kept.join("objects")
            ]
        );
        assert_eq!(mode(&top), 0o300, "search only, above the holder");
        assert_eq!(mode(&holder), 0o700);
        assert_eq!(mode(&kept), 0o700);
        assert_eq!(mode(&kept.join("objects")), 0o700);
        assert_eq!(mode(&kept.join("HEAD")), 0o400);
        assert!(give_back_kept(&kept).is_empty());
        assert!(give_back_kept(&holder.join("missing.git")).is_empty());
    }

    #[test]
    fn the_walk_opens_what_it_enters_and_skips_what_it_is_told_to() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::create_dir_all(root.join("skip")).unwrap();
        fs::write(root.join("a/b/f"), "x").unwrap();
        fs::write(root.join("skip/g"), "x").unwrap();
        set_mode(&root.join("a/b/f"), 0o000);
        set_mode(&root.join("skip/g"), 0o000);
        set_mode(&root.join("a/b"), 0o000);
        set_mode(&root.join("a"), 0o000);
        set_mode(&root.join("skip"), 0o000);
        let changed = give_back_below(root, Need::Read, |path, _| !path.ends_with("skip"));
        assert_eq!(
            changed,
            [root.join("a"), root.join("a/b"), root.join("a/b/f")]
        );
        assert_eq!(mode(&root.join("a")), 0o500);
        assert_eq!(mode(&root.join("a/b/f")), 0o400);
        assert_eq!(mode(&root.join("skip")), 0o000, "refused, so left alone");
        set_mode(&root.join("skip"), 0o700);
        assert_eq!(mode(&root.join("skip/g")), 0o000);
    }
}
