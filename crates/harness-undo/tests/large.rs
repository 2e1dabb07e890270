//! Files too large to record: a command writes a file of any size in a moment
//! (`truncate -s 100G` takes no disk at all), and recording one costs memory in
//! proportion to its size. Snapshots taken during a run leave such a file out,
//! undo still brings back what the user had at its path, and nothing is
//! overwritten that could not be saved first.

#![cfg(unix)]
#![allow(clippy::unwrap_used)]

mod common;

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use common::Repo;
use harness_undo::{
    BeginOptions, DiffTarget, Error, Force, LARGEST_RECORDED_FILE, Session, Tracking,
};

/// Makes `path` a file of `len` bytes, sparse: the size a snapshot would read,
/// without the disk.
fn sized(repo: &Repo, path: &str, len: u64) {
    let full = repo.path(path);
    if let Some(parent) = full.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    File::create(&full).unwrap().set_len(len).unwrap();
}

fn begin(repo: &Repo, tracking: Tracking, allow_dirty: bool) -> Session {
    let options = BeginOptions {
        tracking,
        allow_dirty,
        ..BeginOptions::default()
    };
    Session::begin(&repo.root, options).unwrap()
}

fn paths(names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(PathBuf::from).collect()
}

#[test]
fn a_file_a_run_makes_too_large_is_left_out_and_undo_puts_back_what_the_user_had() {
    for tracking in [Tracking::Watch, Tracking::FullScan] {
        let repo = Repo::with_files(&[("mine.txt", "the user's\n"), ("keep.txt", "kept\n")]);
        let mut session = begin(&repo, tracking, false);
        // The user's file grown past the bound, a new one past it, one exactly at it,
        // and an ordinary change.
        sized(&repo, "mine.txt", LARGEST_RECORDED_FILE + 1);
        sized(&repo, "out/huge.bin", LARGEST_RECORDED_FILE + 1);
        sized(&repo, "edge.bin", LARGEST_RECORDED_FILE);
        repo.write("small.txt", "new\n");
        session.checkpoint("step 1").unwrap().unwrap();

        assert_eq!(
            session.too_large(),
            paths(&["mine.txt", "out/huge.bin"]),
            "{tracking:?}"
        );
        let diff = session.diff(DiffTarget::WorkingTree).unwrap();
        let changed: Vec<&Path> = diff.files.iter().map(|f| f.path.as_path()).collect();
        assert!(
            changed.contains(&Path::new("edge.bin")),
            "{tracking:?}: {changed:?}"
        );
        assert!(
            changed.contains(&Path::new("small.txt")),
            "{tracking:?}: {changed:?}"
        );
        assert!(
            !changed.contains(&Path::new("out/huge.bin")),
            "{tracking:?}: {changed:?}"
        );

        // Accept could commit neither the files nor, for the user's, what is there.
        match session.accept() {
            Err(Error::TooLarge { paths: listed, .. }) => {
                assert_eq!(listed, paths(&["mine.txt", "out/huge.bin"]), "{tracking:?}");
            }
            other => panic!("{tracking:?}: accept gave {other:?}"),
        }

        // Undo would overwrite the large file where the user's goes, which it cannot
        // save first: it refuses before it changes anything.
        match session.undo(Force::No) {
            Err(Error::TooLargeToSave { path }) => assert_eq!(path, Path::new("mine.txt")),
            other => panic!("{tracking:?}: undo gave {other:?}"),
        }
        assert_eq!(
            fs::metadata(repo.path("mine.txt")).unwrap().len(),
            LARGEST_RECORDED_FILE + 1
        );
        assert!(repo.exists("small.txt"));

        // Moved out of the way, the user's file comes back; the new large one stays.
        fs::remove_file(repo.path("mine.txt")).unwrap();
        session.undo(Force::No).unwrap();
        assert_eq!(repo.read("mine.txt"), "the user's\n", "{tracking:?}");
        assert_eq!(repo.read("keep.txt"), "kept\n");
        assert!(!repo.exists("small.txt"));
        assert!(!repo.exists("edge.bin"), "a file at the bound is recorded");
        assert_eq!(
            fs::metadata(repo.path("out/huge.bin")).unwrap().len(),
            LARGEST_RECORDED_FILE + 1,
            "{tracking:?}: no snapshot holds it, so undo leaves it"
        );
    }
}

#[test]
fn a_file_that_shrinks_back_is_recorded_again() {
    let repo = Repo::with_files(&[("mine.txt", "the user's\n")]);
    let mut session = begin(&repo, Tracking::Watch, false);
    sized(&repo, "mine.txt", LARGEST_RECORDED_FILE + 1);
    session.checkpoint("grow").unwrap().unwrap();
    assert_eq!(session.too_large(), paths(&["mine.txt"]));
    repo.write("mine.txt", "the agent's\n");
    session.checkpoint("shrink").unwrap().unwrap();
    assert!(session.too_large().is_empty());
    session.accept().unwrap();
    assert_eq!(repo.git(&["show", "HEAD:mine.txt"]), "the agent's\n");
}

#[test]
fn a_users_large_file_in_a_dirty_tree_is_recorded_before_the_run() {
    let repo = Repo::with_files(&[("x", "x\n")]);
    // The user's own, uncommitted: the pre-run state holds it whatever its size.
    sized(&repo, "data.bin", LARGEST_RECORDED_FILE + 1);
    let mut session = begin(&repo, Tracking::Watch, true);
    assert!(session.too_large().is_empty());
    repo.write("data.bin", "overwritten by a command\n");
    session.checkpoint("overwrite").unwrap().unwrap();
    session.undo(Force::No).unwrap();
    let restored = fs::read(repo.path("data.bin")).unwrap();
    assert_eq!(restored.len() as u64, LARGEST_RECORDED_FILE + 1);
    assert!(restored.iter().all(|&byte| byte == 0));
}

#[test]
fn an_ignored_file_too_large_to_save_is_refused_before_a_file_tool_writes_it() {
    let repo = Repo::with_files(&[(".gitignore", "*.dat\n")]);
    sized(&repo, "cache.dat", LARGEST_RECORDED_FILE + 1);
    let mut session = begin(&repo, Tracking::Watch, false);
    match session.protect(Path::new("cache.dat")) {
        Err(error @ Error::TooLargeToSave { .. }) => {
            let message = error.to_string();
            assert!(
                message.starts_with("cache.dat is larger than 64 MiB"),
                "{message}"
            );
            assert!(message.contains("nothing was changed"), "{message}");
        }
        other => panic!("protect gave {other:?}"),
    }
    // One at the bound is saved.
    sized(&repo, "edge.dat", LARGEST_RECORDED_FILE);
    assert!(session.protect(Path::new("edge.dat")).unwrap());
}
