//! The workspace's protected paths (its `.git`, the names the caller protects
//! such as the harness CLI's `harness.toml`, and the git directories of the
//! repositories inside it) as they were when a command
//! started, and what the runner does when a command created or replaced one.
//!
//! An existing protected path is bound read-only (bwrap), or recorded before
//! the command and put back after it (Landlock, whose grant of the top of the
//! workspace reaches it: see `repair`). A missing one cannot be bound: bwrap can bind only over
//! something that exists, and making an empty file to bind over would leave
//! it in the user's repository. Yet a `harness.toml` a command writes where
//! there was none is read by the next run, which would then run with the
//! command's settings (its own `verify = "true"`, say), and a `.git` a command
//! makes in a submodule's directory is where the user's own `git status`
//! looks for that submodule's configuration (a `core.fsmonitor` there runs as
//! the user). A protected path below the top can also be replaced whole: its
//! directory renamed away (the read-only mount goes with it) and made again.
//! So the runner looks after the command and everything it started are gone,
//! and moves whatever now stands at such a name and is not what stood there
//! when the command started aside, to `harness.toml.refused-N` beside it (a
//! random name when a thousand such names are taken already): nothing reads
//! it there, and nothing is deleted, since a command could as well have moved
//! a file of the user's to that name.
//!
//! A repository a command makes anywhere else in the workspace (`git init
//! tools/x`, with a `core.fsmonitor` in its configuration) is the same way
//! through: an editor that finds the repositories in a folder (VS Code does)
//! or a shell prompt in that directory runs its `git status`, and no snapshot
//! records a nested repository, so the run reported no change and undo left it.
//! So the runner also walks the workspace after the command (within
//! [`WALK_LIMIT`](super::WALK_LIMIT) entries) and moves aside each `.git` that is not a protected
//! path and was made or changed since the command started, by its change time,
//! which no command can set back: what is left is plain files, which the run's
//! diff shows and undo removes.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::aside::move_aside;

/// A protected path a command created, and where the runner moved it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetAside {
    /// The protected path the command created (`<workspace>/harness.toml`).
    pub created: PathBuf,
    /// Where it is now, or why it could not be moved (it is then still at
    /// `created`).
    pub moved_to: Result<PathBuf, String>,
}

/// A protected path as it was when a command started: what stood there, if anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Before {
    path: PathBuf,
    /// The device and inode of what stood at `path` (not followed if a link).
    identity: Option<(u64, u64)>,
}

/// What the runner keeps as it was across a command: the protected paths as the command
/// found them, and the workspace, in which each `.git` the command made is moved aside.
#[derive(Clone, Debug, Default)]
pub(crate) struct Kept {
    before: Vec<Before>,
    workspace: Option<PathBuf>,
    /// When the command started: a `.git` whose change time is earlier was there before
    /// and is left alone, whether or not a walk found it then (no command can set a
    /// change time back).
    started: Option<SystemTime>,
    /// Under Landlock, which cannot refuse writes below the top of the workspace: the
    /// kept paths' content and the hidden paths' places, to put back ([`repair`]).
    ///
    /// [`repair`]: super::repair
    pub(crate) record: Option<super::repair::Record>,
}

/// Each of `protected` as it is now, and the time: each `.git` below the top of
/// `workspace` that is not among them and has changed since is moved aside after.
pub(crate) fn kept(protected: impl IntoIterator<Item = PathBuf>, workspace: &Path) -> Kept {
    Kept {
        before: before(protected),
        workspace: Some(workspace.to_owned()),
        started: Some(now_as_the_file_system_stamps_it()),
        record: None,
    }
}

/// Now, by the clock the kernel stamps files with (the coarse real-time clock, a tick
/// behind `SystemTime::now()` at most), less a tick: a file made the instant after must
/// not look older than the command that made it.
fn now_as_the_file_system_stamps_it() -> SystemTime {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
    let seconds = u64::try_from(now.tv_sec).unwrap_or(0);
    let nanoseconds = u32::try_from(now.tv_nsec).unwrap_or(0);
    let coarse = SystemTime::UNIX_EPOCH + std::time::Duration::new(seconds, nanoseconds);
    coarse - std::time::Duration::from_millis(10)
}

/// Each of `protected` as it is now.
pub(crate) fn before(protected: impl IntoIterator<Item = PathBuf>) -> Vec<Before> {
    protected
        .into_iter()
        .map(|path| Before {
            identity: identity(&path),
            path,
        })
        .collect()
}

/// Moves aside whatever now stands at each path `kept` holds and is not what stood there
/// then (made where there was nothing, or in place of what was), and each `.git` in its
/// workspace that was not there then.
pub(crate) fn set_aside(kept: &Kept) -> Vec<SetAside> {
    let mut paths: Vec<PathBuf> = kept
        .before
        .iter()
        .filter(|before| identity(&before.path).is_some_and(|now| Some(now) != before.identity))
        .map(|before| before.path.clone())
        .collect();
    let made = kept
        .workspace
        .iter()
        .flat_map(|workspace| git_dirs_in(workspace))
        .filter(|git| !kept.before.iter().any(|before| before.path == *git))
        .filter(|git| {
            kept.started
                .is_some_and(|started| changed_since(git, started))
        });
    paths.extend(made);
    paths
        .into_iter()
        .map(|path| SetAside {
            moved_to: move_aside(&path).map_err(|error| error.to_string()),
            created: path,
        })
        .collect()
}

/// Every `.git` below the top of the workspace at `root` (not the top's own), within
/// [`WALK_LIMIT`](super::WALK_LIMIT) entries: those the walk that hides denied paths finds, by the same walk.
fn git_dirs_in(root: &Path) -> Vec<PathBuf> {
    super::hidden_in_workspace(root, None, |_| false).git_dirs
}

/// True if what stands at `path` (not followed if a link) was made or changed at `time`
/// or later, by its change time, which no command can set back.
fn changed_since(path: &Path, time: SystemTime) -> bool {
    let Ok(metadata) = path.symlink_metadata() else {
        return false;
    };
    let seconds = u64::try_from(metadata.ctime()).unwrap_or(0);
    let nanoseconds = u32::try_from(metadata.ctime_nsec()).unwrap_or(0);
    SystemTime::UNIX_EPOCH + std::time::Duration::new(seconds, nanoseconds) >= time
}

/// The device and inode of what stands at `path`, a dangling symlink included.
fn identity(path: &Path) -> Option<(u64, u64)> {
    let metadata = path.symlink_metadata().ok()?;
    Some((metadata.dev(), metadata.ino()))
}

#[cfg(test)]
mod tests {
    use super::super::aside::NUMBERED;
    use super::*;

    #[test]
    fn only_what_was_made_or_replaced_is_moved_and_nothing_is_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let toml = dir.path().join("harness.toml");
        let git = dir.path().join(".git");
        let link = dir.path().join("link");
        let kept = dir.path().join("sub/.git");
        let replaced = dir.path().join("other/.git");
        std::os::unix::fs::symlink("nowhere", &link).expect("symlink");
        for path in [&kept, &replaced] {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, "gitdir: ../.git/modules/sub\n").expect("write");
        }
        let before = Kept {
            before: before([
                toml.clone(),
                git.clone(),
                link.clone(),
                kept.clone(),
                replaced.clone(),
            ]),
            workspace: None,
            started: None,
            record: None,
        };
        assert!(
            before.before[2].identity.is_some(),
            "a dangling link exists"
        );
        assert!(
            set_aside(&before).is_empty(),
            "nothing was made or replaced"
        );

        std::fs::write(&toml, "verify = \"true\"\n").expect("write");
        std::fs::write(dir.path().join("harness.toml.refused-1"), "older\n").expect("write");
        // Written in place: the same file, which a read-only mount would have refused.
        std::fs::write(&kept, "gitdir: elsewhere\n").expect("write");
        // The directory renamed away and made again, with a repository of its own.
        std::fs::rename(dir.path().join("other"), dir.path().join("moved")).expect("rename");
        std::fs::create_dir_all(&replaced).expect("mkdir");
        std::fs::remove_file(&link).expect("remove");
        // A dangling link made where there was nothing stands there too.
        std::os::unix::fs::symlink("nowhere", &git).expect("symlink");
        let moved = set_aside(&before);
        let refused = |path: &Path, n: u32| {
            let mut name = path.as_os_str().to_owned();
            name.push(format!(".refused-{n}"));
            PathBuf::from(name)
        };
        assert_eq!(
            moved,
            [
                SetAside {
                    created: toml.clone(),
                    moved_to: Ok(refused(&toml, 2)),
                },
                SetAside {
                    created: git.clone(),
                    moved_to: Ok(refused(&git, 1)),
                },
                SetAside {
                    created: replaced.clone(),
                    moved_to: Ok(refused(&replaced, 1)),
                },
            ]
        );
        assert!(!toml.exists());
        assert!(git.symlink_metadata().is_err());
        assert!(!replaced.exists());
        assert_eq!(
            std::fs::read_to_string(refused(&toml, 2)).expect("kept"),
            "verify = \"true\"\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("harness.toml.refused-1")).expect("kept"),
            "older\n"
        );
        assert!(kept.exists(), "what was there is left there");
    }

    #[test]
    fn every_numbered_name_taken_beforehand_still_leaves_nothing_where_it_was() {
        let dir = tempfile::tempdir().expect("tempdir");
        let toml = dir.path().join("harness.toml");
        let before = Kept {
            before: before([toml.clone()]),
            workspace: None,
            started: None,
            record: None,
        };
        std::fs::write(&toml, "x").expect("write");
        for n in 1..=NUMBERED {
            std::fs::write(dir.path().join(format!("harness.toml.refused-{n}")), "")
                .expect("write");
        }
        let moved = set_aside(&before);
        let to = moved[0].moved_to.clone().expect("moved");
        let suffix = to
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_prefix("harness.toml.refused-"))
            .expect("a refused name");
        assert_eq!(suffix.len(), 32, "{suffix}");
        assert!(suffix.chars().all(|c| c.is_ascii_hexdigit()), "{suffix}");
        assert!(!toml.exists());
        assert_eq!(std::fs::read_to_string(to).expect("kept"), "x");
    }

    #[test]
    fn a_git_a_command_makes_anywhere_in_the_workspace_is_moved_aside() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let vendored = root.join("vendor/lib/.git");
        std::fs::create_dir_all(&vendored).expect("mkdir");
        std::fs::create_dir_all(root.join(".git")).expect("mkdir");
        let toml = root.join("harness.toml");
        // Made before the command started, and not among the protected: left alone.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let kept = kept([root.join(".git"), toml], root);
        // A repository made with a directory, one made as a `.git` file, and one
        // reached only through a link (not walked: it is where the link points).
        let made = root.join("tools/x/.git");
        let file = root.join("a/b/c/.git");
        std::fs::create_dir_all(&made).expect("mkdir");
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, "gitdir: elsewhere\n").expect("write");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(outside.path().join(".git")).expect("mkdir");
        std::os::unix::fs::symlink(outside.path(), root.join("link")).expect("symlink");
        let mut moved = set_aside(&kept);
        moved.sort_by(|a, b| a.created.cmp(&b.created));
        let refused = |path: &Path| {
            let mut name = path.as_os_str().to_owned();
            name.push(".refused-1");
            PathBuf::from(name)
        };
        assert_eq!(
            moved,
            [
                SetAside {
                    created: file.clone(),
                    moved_to: Ok(refused(&file)),
                },
                SetAside {
                    created: made.clone(),
                    moved_to: Ok(refused(&made)),
                },
            ]
        );
        assert!(vendored.is_dir(), "what was there is left there");
        assert!(root.join(".git").is_dir() && outside.path().join(".git").is_dir());
        assert!(set_aside(&kept).is_empty(), "nothing new since");
    }

    #[test]
    fn the_walk_for_git_entries_stops_at_its_limit() {
        let dir = tempfile::tempdir().expect("tempdir");
        // The entries at the top count first (`zz` among them): past the limit, none
        // below is looked at.
        for n in 0..crate::isolation::WALK_LIMIT {
            std::fs::write(dir.path().join(format!("f{n}")), "").expect("write");
        }
        std::fs::create_dir_all(dir.path().join("zz/.git")).expect("mkdir");
        assert!(git_dirs_in(dir.path()).is_empty());
        // With two fewer, `zz/.git` is the limit's last entry.
        for n in 0..2 {
            std::fs::remove_file(dir.path().join(format!("f{n}"))).expect("rm");
        }
        assert_eq!(git_dirs_in(dir.path()), [dir.path().join("zz/.git")]);
    }
}
