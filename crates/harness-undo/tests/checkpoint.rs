//! `Session::checkpoint`: what a snapshot contains, checked against git itself,
//! with change notes and with full scans.

#![cfg(unix)]
// Fixtures use Unix permissions and symlinks.
// Test helpers outside #[test] functions unwrap too: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::fs;
use std::path::Path;

use common::{Repo, git_snapshot, tree_of};
use harness_undo::{BeginOptions, Session, Tracking};

type Step = fn(&Repo);

/// Begins a run, then after each step takes a checkpoint and checks it against
/// git: the same tree when something changed, `None` when nothing did.
fn check_steps(tracking: Tracking, setup: Step, steps: &[Step]) {
    let repo = Repo::with_files(&[
        (".gitignore", "*.log\nbuild/\n"),
        ("a.txt", "a\n"),
        ("dir/b.txt", "b\n"),
        ("dir/sub/c.txt", "c\n"),
        ("script.sh", "#!/bin/sh\n"),
    ]);
    setup(&repo);
    repo.commit_all("setup");
    let options = BeginOptions {
        tracking,
        ..BeginOptions::default()
    };
    let mut session = Session::begin(&repo.root, options).unwrap();
    let mut last = session.info().pre_run.to_string();
    for (i, step) in steps.iter().enumerate() {
        step(&repo);
        let expected = git_snapshot(&repo, &last);
        match session.checkpoint(&format!("step {i}")).unwrap() {
            Some(checkpoint) => {
                assert_eq!(
                    tree_of(&repo, &checkpoint.commit.to_string()),
                    expected,
                    "{tracking:?} step {i}"
                );
                last = checkpoint.commit.to_string();
            }
            None => assert_eq!(
                tree_of(&repo, &last),
                expected,
                "{tracking:?} step {i}: missed a change"
            ),
        }
    }
}

macro_rules! snapshots_match_git {
    ($($name:ident: $setup:expr, [$($step:expr),* $(,)?];)*) => {$(
        #[test]
        fn $name() {
            for tracking in [Tracking::Watch, Tracking::FullScan] {
                check_steps(tracking, $setup, &[$($step),*]);
            }
        }
    )*};
}

fn nothing(_: &Repo) {}

snapshots_match_git! {
    created_file: nothing, [|r| r.write("new.txt", "n\n")];
    created_in_new_nested_directories: nothing, [|r| r.write("x/y/z/deep.txt", "d\n"), |r| r.write("x/y/two.txt", "2")];
    modified_file: nothing, [|r| r.write("dir/sub/c.txt", "changed\n"), |r| r.write("a.txt", "again\n")];
    deleted_file: nothing, [|r| r.remove("dir/b.txt")];
    executable_bit: nothing, [|r| r.chmod("a.txt", 0o755), |r| r.chmod("a.txt", 0o644)];
    symlinks: nothing, [
        |r| r.symlink("link", "a.txt"),
        |r| { r.remove("link"); r.symlink("link", "dir"); },
        |r| { r.remove("a.txt"); r.symlink("a.txt", "nowhere"); },
    ];
    renamed_file: nothing, [|r| fs::rename(r.path("a.txt"), r.path("dir/moved.txt")).unwrap()];
    renamed_directory: nothing, [
        |r| fs::rename(r.path("dir"), r.path("renamed")).unwrap(),
        |r| r.write("renamed/sub/after-move.txt", "m"),
    ];
    removed_directory: nothing, [|r| fs::remove_dir_all(r.path("dir")).unwrap()];
    directory_moved_away_and_made_anew: nothing, [|r| {
        // Nothing is deleted inside the watched directory; its recorded files
        // are gone only because another directory took its name.
        fs::rename(r.path("dir"), r.dir.path().join("elsewhere")).unwrap();
        r.write("dir/sub/c.txt", "c, but new\n");
        r.write("dir/other.txt", "o");
    }];
    file_becomes_directory: nothing, [|r| { r.remove("a.txt"); r.write("a.txt/inner", "i"); }];
    directory_becomes_file: nothing, [|r| { fs::remove_dir_all(r.path("dir")).unwrap(); r.write("dir", "now a file"); }];
    directory_becomes_symlink: nothing, [|r| {
        fs::rename(r.path("dir"), r.path("elsewhere")).unwrap();
        r.symlink("dir", "elsewhere");
    }];
    ignored_files_are_not_recorded: nothing, [
        |r| r.write("debug.log", "l"),
        |r| r.write("build/out/o", "o"),
        |r| r.write("dir/trace.log", "t"),
    ];
    empty_directory_is_not_recorded: nothing, [|r| fs::create_dir(r.path("empty")).unwrap()];
    touched_but_unchanged: nothing, [|r| r.write("a.txt", "a\n")];
    created_then_removed: nothing, [|r| { r.write("brief.txt", "b"); r.remove("brief.txt"); }];
    gitignore_change_reveals_files: |r| r.write("hidden.log", "h"), [
        |r| r.write(".gitignore", "build/\n"),
    ];
    gitignore_change_keeps_recorded_files: nothing, [
        |r| r.write("scratch.tmp", "s"),
        |r| { r.write(".gitignore", "*.log\nbuild/\n*.tmp\n"); r.write("scratch.tmp", "changed"); },
    ];
    tracked_file_in_ignored_directory: |r| {
        r.write("build/keep.txt", "k");
        r.git(&["add", "-f", "build/keep.txt"]);
    }, [
        |r| r.write("build/keep.txt", "changed"),
        |r| r.write("build/other.txt", "ignored"),
    ];
    directory_moved_out_and_linked_back: nothing, [|r| {
        let outside = r.dir.path().join("outside");
        fs::rename(r.path("dir"), &outside).unwrap();
        r.symlink("dir", outside.to_str().unwrap());
        fs::write(outside.join("b.txt"), "changed where the watch still points").unwrap();
        fs::write(outside.join("sub/new.txt"), "new").unwrap();
    }];
    moved_in_from_outside: nothing, [|r| {
        let outside = r.dir.path().join("outside");
        fs::create_dir_all(outside.join("deep")).unwrap();
        fs::write(outside.join("deep/file"), "f").unwrap();
        fs::rename(&outside, r.path("imported")).unwrap();
    }];
    many_steps: nothing, [
        |r| r.write("one", "1"),
        |r| r.write("two", "2"),
        |r| r.remove("one"),
        |r| r.write("dir/sub/three", "3"),
    ];
}

/// A fifo in the tree is neither recorded nor read: reading one with no
/// writer would block the checkpoint forever.
#[test]
fn fifos_are_not_recorded_nor_read() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for tracking in [Tracking::Watch, Tracking::FullScan] {
            check_steps(
                tracking,
                nothing,
                &[|r| {
                    let status = std::process::Command::new("mkfifo")
                        .arg(r.path("pipe"))
                        .status()
                        .unwrap();
                    assert!(status.success());
                }],
            );
        }
        done.send(()).unwrap();
    });
    // Generous: the checkpoints take milliseconds, a blocked read forever.
    finished
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("checkpoints finish (or fail) instead of blocking on the fifo");
}

#[test]
fn nested_repositories_are_not_recorded() {
    for tracking in [Tracking::Watch, Tracking::FullScan] {
        let repo = Repo::with_files(&[("a.txt", "a\n")]);
        let mut session = Session::begin(
            &repo.root,
            BeginOptions {
                tracking,
                ..BeginOptions::default()
            },
        )
        .unwrap();
        let nested = Repo::with_files(&[("inner.txt", "i")]);
        fs::rename(&nested.root, repo.path("vendor")).unwrap();
        repo.write("outer.txt", "o");
        let checkpoint = session.checkpoint("nested").unwrap().unwrap();
        let git = repo.git2();
        let commit = git
            .find_commit(git2::Oid::from_str(&checkpoint.commit.to_string()).unwrap())
            .unwrap();
        let tree = commit.tree().unwrap();
        assert!(
            tree.get_path(Path::new("outer.txt")).is_ok(),
            "{tracking:?}"
        );
        assert!(tree.get_path(Path::new("vendor")).is_err(), "{tracking:?}");
        // Files changing inside it stay invisible.
        repo.write("vendor/inner.txt", "changed");
        assert!(
            session.checkpoint("inside").unwrap().is_none(),
            "{tracking:?}"
        );
    }
}

#[test]
fn checkpoints_chain_onto_the_pre_run_state_under_the_runs_ref() {
    let repo = Repo::with_files(&[("a.txt", "a\n")]);
    let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
    let id = session.id().clone();
    assert!(session.checkpoint("nothing yet").unwrap().is_none());
    assert!(session.checkpoints().unwrap().is_empty());

    repo.write("a.txt", "1\n");
    let first = session.checkpoint("edit\na.txt   twice").unwrap().unwrap();
    assert_eq!(
        (first.number, first.label.as_str()),
        (1, "edit a.txt twice")
    );
    assert!(session.checkpoint("no change").unwrap().is_none());
    repo.write("a.txt", "2\n");
    let second = session.checkpoint("").unwrap().unwrap();
    assert_eq!((second.number, second.label.as_str()), (2, ""));

    let git = repo.git2();
    let commit = |c: &harness_undo::Checkpoint| {
        git.find_commit(git2::Oid::from_str(&c.commit.to_string()).unwrap())
            .unwrap()
    };
    assert_eq!(
        commit(&second).parent_ids().collect::<Vec<_>>(),
        [commit(&first).id()]
    );
    assert_eq!(
        commit(&first).parent_id(0).unwrap().to_string(),
        repo.head()
    );
    assert_eq!(commit(&first).author().name().unwrap(), "harness");
    let message = commit(&first).message().unwrap().to_string();
    assert_eq!(
        message,
        format!("checkpoint 1: edit a.txt twice\n\nRun {id}.\n")
    );
    let refs = repo.refs();
    assert!(refs.contains(&(
        format!("refs/harness/{id}/checkpoints"),
        second.commit.to_string()
    )));
    assert_eq!(
        session.checkpoints().unwrap(),
        [first.clone(), second.clone()]
    );

    // Reopened (say, from another process), the run continues its chain.
    drop(session);
    let mut reopened = Session::open(&repo.root, &id).unwrap();
    assert_eq!(reopened.checkpoints().unwrap(), [first, second.clone()]);
    assert!(reopened.checkpoint("unchanged since").unwrap().is_none());
    repo.write("a.txt", "3\n");
    let third = reopened.checkpoint("after reopening").unwrap().unwrap();
    assert_eq!(third.number, 3);
    assert_eq!(
        commit(&third).parent_id(0).unwrap().to_string(),
        second.commit.to_string()
    );
}

#[test]
fn a_reopened_run_without_checkpoints_starts_from_the_pre_run_state() {
    let repo = Repo::with_files(&[("a.txt", "a\n")]);
    let id = Session::begin(&repo.root, BeginOptions::default())
        .unwrap()
        .id()
        .clone();
    let mut reopened = Session::open(&repo.root, &id).unwrap();
    assert!(reopened.checkpoint("nothing").unwrap().is_none());
    repo.write("b.txt", "b");
    assert_eq!(reopened.checkpoint("b").unwrap().unwrap().number, 1);
}

#[test]
fn a_dirty_start_checkpoints_from_the_snapshot() {
    let repo = Repo::with_files(&[("a.txt", "a\n")]);
    repo.write("a.txt", "user's edit\n");
    repo.write("mine.txt", "user's file\n");
    for tracking in [Tracking::Watch, Tracking::FullScan] {
        let options = BeginOptions {
            allow_dirty: true,
            tracking,
            ..BeginOptions::default()
        };
        let mut session = Session::begin(&repo.root, options).unwrap();
        assert!(
            session.checkpoint("nothing").unwrap().is_none(),
            "{tracking:?}"
        );
        repo.write(&format!("agent-{tracking:?}.txt"), "agent");
        let checkpoint = session.checkpoint("agent").unwrap().unwrap();
        let expected = git_snapshot(&repo, &session.info().pre_run.to_string());
        assert_eq!(
            tree_of(&repo, &checkpoint.commit.to_string()),
            expected,
            "{tracking:?}"
        );
    }
}
