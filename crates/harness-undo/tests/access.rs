//! Access a command takes from the owner: commands run as the user, who may
//! change the mode of their own files under every kernel tier (`chmod 000 src`,
//! `chmod 555 src`, `chmod 000 .git`). Without it back, no checkpoint, diff or
//! undo of a harness that does not run as root could read or write those paths.
//!
//! The tests run as the owner only: as root, this thread first gives up the
//! capabilities that let root past file modes.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::Repo;
use harness_undo::{BeginOptions, Force, Session, Tampering, Tracking};
use rustix::thread::{CapabilitySet, capabilities, set_capabilities};

/// Runs `f` on this thread without `CAP_DAC_OVERRIDE`, `CAP_DAC_READ_SEARCH`
/// and `CAP_FOWNER` in its effective set, so file modes bind it as they bind
/// any user; they are taken back afterwards. Capabilities are a thread's own,
/// so other tests running meanwhile keep theirs.
fn as_the_owner_only<R>(f: impl FnOnce() -> R) -> R {
    let before = capabilities(None).unwrap();
    let mut without = before;
    without.effective -=
        CapabilitySet::DAC_OVERRIDE | CapabilitySet::DAC_READ_SEARCH | CapabilitySet::FOWNER;
    set_capabilities(None, without).unwrap();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    set_capabilities(None, before).unwrap();
    match result {
        Ok(result) => result,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

fn chmod(repo: &Repo, path: &str, mode: u32) {
    fs::set_permissions(repo.path(path), fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(repo: &Repo, path: &str) -> u32 {
    fs::symlink_metadata(repo.path(path))
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

fn paths(names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(PathBuf::from).collect()
}

fn project() -> Repo {
    Repo::with_files(&[
        ("a.txt", "a\n"),
        ("src/m.txt", "m\n"),
        ("src/keep.txt", "k\n"),
    ])
}

#[test]
fn a_command_that_takes_the_owners_read_access_stops_neither_checkpoints_nor_undo() {
    for tracking in [Tracking::Watch, Tracking::FullScan] {
        let repo = project();
        as_the_owner_only(|| {
            let options = BeginOptions {
                tracking,
                ..BeginOptions::default()
            };
            let mut session = Session::begin(&repo.root, options).unwrap();
            repo.write("src/m.txt", "changed\n");
            repo.write("src/deep/new.txt", "new\n");
            chmod(&repo, "a.txt", 0o000);
            chmod(&repo, "src/deep", 0o000);
            chmod(&repo, "src", 0o000);
            session.checkpoint("step").unwrap().unwrap();
            assert_eq!(
                session.access_given_back(),
                paths(&["a.txt", "src", "src/deep"]),
                "{tracking:?}"
            );
            session.undo(Force::No).unwrap();
        });
        assert_eq!(repo.read("src/m.txt"), "m\n", "{tracking:?}");
        assert_eq!(repo.read("a.txt"), "a\n");
        assert!(!repo.exists("src/deep"));
        // Read given back, nothing more: git records no other permission.
        assert_eq!(mode(&repo, "a.txt"), 0o400);
    }
}

#[test]
fn a_directory_made_read_only_does_not_stop_undo_or_redo_halfway() {
    let repo = project();
    let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
    repo.write("src/m.txt", "changed\n");
    repo.write("src/new.txt", "new\n");
    repo.remove("src/keep.txt");
    chmod(&repo, "src", 0o555);
    session.checkpoint("step").unwrap().unwrap();
    as_the_owner_only(|| {
        let restored = session.undo(Force::No).unwrap();
        assert_eq!(
            restored.changed,
            paths(&["src/keep.txt", "src/m.txt", "src/new.txt"])
        );
        assert_eq!(session.access_given_back(), paths(&["src"]));
    });
    assert_eq!(repo.read("src/m.txt"), "m\n");
    assert_eq!(repo.read("src/keep.txt"), "k\n");
    assert!(!repo.exists("src/new.txt"));
    assert_eq!(mode(&repo, "src"), 0o755);

    chmod(&repo, "src", 0o500);
    as_the_owner_only(|| session.redo(Force::No).unwrap());
    assert_eq!(repo.read("src/m.txt"), "changed\n");
    assert!(!repo.exists("src/keep.txt"));
}

#[test]
fn a_git_directory_made_unreadable_is_given_back_not_taken_for_gone() {
    let repo = project();
    let id = as_the_owner_only(|| {
        let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
        // As the agent does before each command: the store holds the pre-run state.
        session.wait_for_store().unwrap();
        repo.write("a.txt", "changed\n");
        chmod(&repo, ".git/objects", 0o000);
        chmod(&repo, ".git", 0o000);
        let found = session.verify().unwrap();
        assert_eq!(
            found,
            [Tampering::AccessGivenBack {
                paths: paths(&[".git", ".git/objects"])
            }]
        );
        assert_eq!(
            found[0].to_string(),
            "the owner's access to .git, .git/objects was taken (chmod); given back"
        );
        session.checkpoint("step").unwrap().unwrap();
        session.id().clone()
    });
    // Taken again after the run: undo, in a process of its own, gives it back too.
    chmod(&repo, ".git", 0o000);
    as_the_owner_only(|| {
        let mut session = Session::open(&repo.root, &id).unwrap();
        let restored = session.undo(Force::No).unwrap();
        assert!(!restored.repository_missing, "the repository is not gone");
        assert_eq!(
            restored.repaired,
            [Tampering::AccessGivenBack {
                paths: paths(&[".git"])
            }]
        );
    });
    assert_eq!(repo.read("a.txt"), "a\n");
    assert_eq!(mode(&repo, ".git"), 0o700);
    assert!(Path::new(&repo.path(".git/HEAD")).is_file());
}

#[test]
fn only_what_a_snapshot_reads_gets_its_access_back() {
    let repo = Repo::with_files(&[(".gitignore", "target/\n"), ("src/m.txt", "m\n")]);
    let nested = Repo::with_files(&[("inner.txt", "i\n")]);
    fs::rename(&nested.root, repo.path("vendor")).unwrap();
    repo.write("target/out.o", "built\n");
    as_the_owner_only(|| {
        // The nested repository is untracked: a dirty start.
        let options = BeginOptions {
            allow_dirty: true,
            ..BeginOptions::default()
        };
        let mut session = Session::begin(&repo.root, options).unwrap();
        session.wait_for_store().unwrap();
        repo.write("src/m.txt", "changed\n");
        // What snapshots never read: an ignored directory, a nested repository's
        // files, and git's own directory.
        chmod(&repo, "target", 0o000);
        chmod(&repo, "vendor/inner.txt", 0o000);
        chmod(&repo, ".git/hooks", 0o000);
        // And what they do.
        chmod(&repo, "src", 0o000);
        session.checkpoint("step").unwrap().unwrap();
        assert_eq!(session.access_given_back(), paths(&["src"]));
    });
    assert_eq!(mode(&repo, "target"), 0o000);
    assert_eq!(mode(&repo, "vendor/inner.txt"), 0o000);
    assert_eq!(mode(&repo, ".git/hooks"), 0o000);
    for path in ["target", ".git/hooks"] {
        chmod(&repo, path, 0o755);
    }
}

#[test]
fn a_users_own_unreadable_file_before_the_run_is_left_as_it_is() {
    let repo = project();
    repo.write("private.txt", "mine\n");
    chmod(&repo, "private.txt", 0o000);
    let error = as_the_owner_only(|| {
        let options = BeginOptions {
            allow_dirty: true,
            ..BeginOptions::default()
        };
        match Session::begin(&repo.root, options) {
            Err(error) => error,
            Ok(_) => panic!("a dirty start cannot record what it cannot read"),
        }
    });
    let message = error.to_string();
    assert!(
        message.contains("private.txt") && message.contains("Permission denied"),
        "{message}"
    );
    assert_eq!(
        mode(&repo, "private.txt"),
        0o000,
        "the user's mode is theirs"
    );
    chmod(&repo, "private.txt", 0o600);
}

/// Landlock does not cover modes: a command could `chmod 000` the undo store,
/// and the run then looked as if it had never been recorded.
#[test]
fn a_store_made_unreadable_is_given_back_and_the_run_still_undone() {
    let repo = project();
    let (id, store) = as_the_owner_only(|| {
        let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
        session.wait_for_store().unwrap();
        let store = session.store_dir().to_path_buf();
        repo.write("a.txt", "changed\n");
        fs::set_permissions(store.join("objects"), fs::Permissions::from_mode(0o000)).unwrap();
        fs::set_permissions(&store, fs::Permissions::from_mode(0o000)).unwrap();
        let found = session.verify().unwrap();
        assert_eq!(
            found,
            [Tampering::OutsideAccessGivenBack {
                paths: vec![store.clone(), store.join("objects")]
            }]
        );
        session.checkpoint("step").unwrap().unwrap();
        (session.id().clone(), store)
    });
    // Taken again after the run: undo, in a process of its own, gives it back.
    fs::set_permissions(&store, fs::Permissions::from_mode(0o000)).unwrap();
    as_the_owner_only(|| {
        let mut session = Session::open(&repo.root, &id).unwrap();
        session.undo(Force::No).unwrap();
    });
    assert_eq!(repo.read("a.txt"), "a\n");
}

/// `.git` itself still opens, but its objects cannot be read: the check after
/// the command fails, gives the access back, and checks again.
#[test]
fn git_objects_made_unreadable_are_given_back_when_the_check_fails() {
    let repo = project();
    as_the_owner_only(|| {
        let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
        session.wait_for_store().unwrap();
        chmod(&repo, ".git/objects", 0o000);
        let found = session.verify().unwrap();
        assert_eq!(
            found,
            [Tampering::AccessGivenBack {
                paths: paths(&[".git/objects"])
            }]
        );
    });
    assert_eq!(mode(&repo, ".git/objects"), 0o700);
}

#[test]
fn a_long_list_of_paths_given_back_names_twenty_and_counts_the_rest() {
    let paths: Vec<PathBuf> = (10..31)
        .map(|n| PathBuf::from(format!(".git/{n}")))
        .collect();
    let text = Tampering::AccessGivenBack {
        paths: paths[..20].to_vec(),
    }
    .to_string();
    assert!(
        text.ends_with(".git/29 was taken (chmod); given back"),
        "{text}"
    );
    let text = Tampering::AccessGivenBack { paths }.to_string();
    assert!(
        text.ends_with(".git/29 and 1 more was taken (chmod); given back"),
        "{text}"
    );
}

/// A directory above the workspace made unsearchable would leave the harness
/// unable to reach the workspace at all: given back after the command too.
#[test]
fn a_directory_above_the_workspace_made_unsearchable_is_given_back() {
    let repo = project();
    let parent = repo.root.parent().unwrap().to_path_buf();
    as_the_owner_only(|| {
        let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
        session.wait_for_store().unwrap();
        repo.write("a.txt", "changed\n");
        fs::set_permissions(&parent, fs::Permissions::from_mode(0o600)).unwrap();
        let found = session.verify().unwrap();
        assert_eq!(
            found,
            [Tampering::OutsideAccessGivenBack {
                paths: vec![parent.clone()]
            }]
        );
        session.checkpoint("step").unwrap().unwrap();
        session.undo(Force::No).unwrap();
    });
    assert_eq!(repo.read("a.txt"), "a\n");
    let mode = fs::metadata(&parent).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "search given back, nothing else");
}
