//! `Session::undo`, `redo` and `accept`: the cases one by one, refusals included.

#![cfg(unix)]
// Fixtures use Unix permissions and symlinks.
// Test helpers outside #[test] functions unwrap too: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::fs;
use std::path::PathBuf;

use common::{Entry, Repo, file};
use harness_undo::{BeginOptions, Error, Force, Session, Tampering};

fn begin(repo: &Repo) -> Session {
    Session::begin(&repo.root, BeginOptions::default()).unwrap()
}

fn begin_dirty(repo: &Repo) -> Session {
    let options = BeginOptions {
        allow_dirty: true,
        task: "Fix the parser\nIt drops the last token.".into(),
        model: "qwen3:8b".into(),
        ..BeginOptions::default()
    };
    Session::begin(&repo.root, options).unwrap()
}

/// The agent's step of every test: modify, create, delete, chmod, symlink.
fn agent_step(repo: &Repo) {
    repo.write("src/lib.rs", "pub fn changed() {}\n");
    repo.write("src/new/mod.rs", "// created\n");
    repo.remove("README");
    repo.chmod("run.sh", 0o755);
    repo.symlink("latest", "src/lib.rs");
}

fn project() -> Repo {
    Repo::with_files(&[
        (".gitignore", "target/\n*.log\n"),
        ("README", "read me\n"),
        ("src/lib.rs", "pub fn original() {}\n"),
        ("run.sh", "#!/bin/sh\n"),
    ])
}

fn paths(list: &[&str]) -> Vec<PathBuf> {
    list.iter().map(PathBuf::from).collect()
}

#[test]
fn undo_restores_the_pre_run_files_and_redo_brings_the_agents_back() {
    let repo = project();
    let before = repo.tree();
    let mut session = begin(&repo);
    agent_step(&repo);
    let agents = repo.tree();

    let undone = session.undo(Force::No).unwrap();
    assert_eq!(repo.tree(), before);
    assert_eq!(
        undone.changed,
        paths(&["README", "latest", "run.sh", "src/lib.rs", "src/new/mod.rs"])
    );
    assert!(
        !repo.exists("src/new"),
        "directories left empty are removed"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    assert!(session.info().undone);

    let redone = session.redo(Force::No).unwrap();
    assert_eq!(repo.tree(), agents);
    assert_eq!(redone.changed, undone.changed);
    assert!(!session.info().undone);
}

#[test]
fn every_overwritten_state_stays_reachable_on_the_saved_chain() {
    let repo = project();
    let mut session = begin(&repo);
    let id = session.id().to_string();
    agent_step(&repo);
    let first = session.undo(Force::No).unwrap().saved.unwrap();
    let second = session.redo(Force::No).unwrap().saved.unwrap();
    let git = repo.git2();
    let saved = git
        .refname_to_id(&format!("refs/harness/{id}/saved"))
        .unwrap();
    assert_eq!(saved.to_string(), second.to_string());
    let second_commit = git.find_commit(saved).unwrap();
    // HEAD, the index, and the previous saved state.
    assert_eq!(second_commit.parent_count(), 3);
    assert_eq!(second_commit.parent_id(0).unwrap().to_string(), repo.head());
    assert_eq!(
        second_commit.parent_id(2).unwrap().to_string(),
        first.to_string()
    );
    let first_commit = git
        .find_commit(second_commit.parent_id(2).unwrap())
        .unwrap();
    assert_eq!(first_commit.parent_count(), 2);
    assert_eq!(
        first_commit.message().unwrap(),
        format!("state before undo of run {id}")
    );
    assert_eq!(
        second_commit.message().unwrap(),
        format!("state before redo of run {id}")
    );
    assert!(
        first_commit
            .tree()
            .unwrap()
            .get_path("src/new/mod.rs".as_ref())
            .is_ok()
    );
    assert!(
        second_commit
            .tree()
            .unwrap()
            .get_path("src/new/mod.rs".as_ref())
            .is_err()
    );
}

#[test]
fn undo_of_a_dirty_start_restores_staged_unstaged_and_untracked_work() {
    let repo = project();
    repo.write("src/lib.rs", "pub fn staged() {}\n");
    repo.stage("src/lib.rs");
    repo.write("src/lib.rs", "pub fn staged_then_edited() {}\n");
    repo.write("notes.txt", "untracked notes\n");
    repo.remove("README");
    let before = repo.tree();
    let index = repo.index();
    let status = repo.git(&["status", "--porcelain"]);

    let mut session = begin_dirty(&repo);
    repo.write("src/lib.rs", "pub fn agent() {}\n");
    repo.remove("notes.txt");
    repo.write("README", "the agent wrote a new README\n");
    repo.stage("src/lib.rs");
    session.undo(Force::No).unwrap();
    assert_eq!(repo.tree(), before);
    assert_eq!(repo.index(), index);
    assert_eq!(repo.git(&["status", "--porcelain"]), status);
    // The restored index names trees (its cache) that only the store held: they are in
    // the workspace's repository too, or git finds them missing.
    repo.git(&["fsck", "--no-dangling"]);
}

/// Issue 45 changed this: ignored files a command changed or made are put back too (they
/// were left as the command left them).
#[test]
fn ignored_files_commands_changed_are_put_back_too() {
    let repo = project();
    repo.write("build.log", "the user's log\n");
    repo.write("target/debug/app", "the user's build\n");
    let mut session = begin(&repo);
    repo.write("build.log", "the agent's log\n");
    repo.write("target/debug/app", "the agent's build\n");
    repo.write("target/new-artifact", "created by the agent\n");
    repo.write("src/new/trace.log", "ignored, beside a created file\n");
    repo.write("src/new/mod.rs", "// created\n");
    repo.remove("README");
    session.undo(Force::No).unwrap();
    assert_eq!(repo.read("build.log"), "the user's log\n");
    assert_eq!(repo.read("target/debug/app"), "the user's build\n");
    assert!(!repo.exists("target/new-artifact"));
    assert!(!repo.exists("src/new/trace.log"));
    assert!(!repo.exists("src/new/mod.rs"));
    assert_eq!(repo.read("README"), "read me\n");
}

#[test]
fn ignored_files_in_the_way_of_a_restored_file_are_saved_and_come_back_with_redo() {
    let repo = project();
    let mut session = begin(&repo);
    // The agent replaces the file README by a directory of ignored files.
    repo.remove("README");
    repo.write("README/notes.log", "ignored, in the way\n");
    repo.write("README/deeper/trace.log", "ignored too\n");
    repo.chmod("README/deeper/trace.log", 0o755);
    repo.write("kept.log", "ignored, out of the way\n");
    let agents = repo.tree();

    let undone = session.undo(Force::No).unwrap();
    assert_eq!(
        undone.displaced,
        paths(&["README/deeper/trace.log", "README/notes.log"])
    );
    assert_eq!(repo.read("README"), "read me\n");
    // Issue 45 changed this: an ignored file the run made is removed (it was kept).
    assert!(!repo.exists("kept.log"));
    let git = repo.git2();
    let saved = git
        .find_commit(git2::Oid::from_str(&undone.saved.unwrap().to_string()).unwrap())
        .unwrap();
    assert!(
        saved
            .tree()
            .unwrap()
            .get_path("README/notes.log".as_ref())
            .is_ok()
    );

    let redone = session.redo(Force::No).unwrap();
    assert!(redone.displaced.is_empty());
    assert_eq!(repo.tree(), agents);
}

#[test]
fn an_ignored_file_or_symlink_where_a_directory_must_be_is_saved_too() {
    let repo = Repo::with_files(&[(".gitignore", "/logs\n/cache\n"), ("a.txt", "a\n")]);
    repo.write("logs/keep.txt", "tracked despite the ignore rule\n");
    repo.write("cache/keep.txt", "tracked too\n");
    repo.git(&["add", "-f", "logs/keep.txt", "cache/keep.txt"]);
    repo.commit_all("tracked in ignored directories");
    let mut session = begin(&repo);
    fs::remove_dir_all(repo.path("logs")).unwrap();
    repo.write("logs", "an ignored file now\n");
    fs::remove_dir_all(repo.path("cache")).unwrap();
    repo.symlink("cache", "a.txt");
    let agents = repo.tree();

    let undone = session.undo(Force::No).unwrap();
    assert_eq!(undone.displaced, paths(&["cache", "logs"]));
    assert_eq!(
        repo.read("logs/keep.txt"),
        "tracked despite the ignore rule\n"
    );
    assert_eq!(repo.read("cache/keep.txt"), "tracked too\n");
    session.redo(Force::No).unwrap();
    assert_eq!(repo.tree(), agents);
}

#[test]
fn redo_saves_an_ignored_file_it_overwrites() {
    let repo = Repo::with_files(&[(".gitignore", "generated.txt\n"), ("a.txt", "a\n")]);
    let mut session = begin(&repo);
    // The agent stops ignoring generated.txt and creates it.
    repo.write(".gitignore", "");
    repo.write("generated.txt", "the agent's\n");
    session.undo(Force::No).unwrap();
    assert!(!repo.exists("generated.txt"));
    // Ignored again, a file of that name is the user's business...
    repo.write("generated.txt", "the user's, made after the undo\n");
    let redone = session.redo(Force::No).unwrap();
    assert_eq!(repo.read("generated.txt"), "the agent's\n");
    // ...so redo saved it before writing the agent's.
    assert_eq!(redone.displaced, paths(&["generated.txt"]));
    let git = repo.git2();
    let saved = git
        .find_commit(git2::Oid::from_str(&redone.saved.unwrap().to_string()).unwrap())
        .unwrap();
    let entry = saved
        .tree()
        .unwrap()
        .get_path("generated.txt".as_ref())
        .unwrap();
    let content = git.find_blob(entry.id()).unwrap().content().to_vec();
    assert_eq!(content, b"the user's, made after the undo\n");
}

#[test]
fn a_directory_replaced_by_a_symlink_into_the_tree_comes_back() {
    // Found by the property test: through the symlink, the directory's file
    // seemed to be there and was taken for an ignored file in the way.
    let repo = Repo::with_files(&[("a/x", "a\n"), ("c/x", "c\n")]);
    let before = repo.tree();
    let mut session = begin(&repo);
    fs::remove_dir_all(repo.path("c")).unwrap();
    repo.symlink("c", "a");
    let agents = repo.tree();
    let undone = session.undo(Force::No).unwrap();
    assert!(undone.displaced.is_empty());
    assert_eq!(repo.tree(), before);
    session.redo(Force::No).unwrap();
    assert_eq!(repo.tree(), agents);
}

#[test]
fn undo_refuses_when_head_moved_unless_forced() {
    let repo = project();
    let mut session = begin(&repo);
    let start = repo.head();
    agent_step(&repo);
    repo.write("other.txt", "committed by the user\n");
    let moved = repo.commit_all("the user's commit");
    let agents = repo.tree();

    let err = session.undo(Force::No).unwrap_err();
    match &err {
        Error::HeadMoved {
            run,
            when,
            recorded,
            current,
        } => {
            assert_eq!(run, session.id());
            assert_eq!(*when, "the start");
            assert_eq!(*recorded, start);
            assert_eq!(current.as_deref(), Some(moved.as_str()));
        }
        other => panic!("expected HEAD moved, got {other}"),
    }
    assert!(err.to_string().contains("--force"), "{err}");
    assert_eq!(repo.tree(), agents, "a refusal changes nothing");

    session.undo(Force::Yes).unwrap();
    assert_eq!(repo.head(), moved, "HEAD is never moved");
    assert_eq!(repo.read("src/lib.rs"), "pub fn original() {}\n");
}

#[test]
fn redo_refuses_when_head_moved_since_the_undo_unless_forced() {
    let repo = project();
    let mut session = begin(&repo);
    agent_step(&repo);
    let agents = repo.tree();
    session.undo(Force::No).unwrap();
    let undo_head = repo.head();
    repo.git(&["commit", "-q", "--allow-empty", "-m", "moved on"]);
    let err = session.redo(Force::No).unwrap_err();
    assert!(
        matches!(&err, Error::HeadMoved { when: "the undo", recorded, .. } if *recorded == undo_head),
        "{err}"
    );
    session.redo(Force::Yes).unwrap();
    assert_eq!(repo.tree(), agents);
}

#[test]
fn undo_on_an_unborn_branch_reports_it() {
    let repo = project();
    let mut session = begin(&repo);
    agent_step(&repo);
    repo.git(&["checkout", "-q", "--orphan", "fresh"]);
    let err = session.undo(Force::No).unwrap_err();
    assert!(
        matches!(&err, Error::HeadMoved { current: None, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("an unborn branch"), "{err}");
    session.undo(Force::Yes).unwrap();
    assert_eq!(repo.read("src/lib.rs"), "pub fn original() {}\n");
}

#[test]
fn redo_refuses_changes_made_after_the_undo_unless_forced() {
    let repo = project();
    let mut session = begin(&repo);
    agent_step(&repo);
    let agents = repo.tree();
    session.undo(Force::No).unwrap();
    repo.write("README", "the user edited after the undo\n");
    let err = session.redo(Force::No).unwrap_err();
    assert!(
        matches!(&err, Error::ChangedSinceUndo { run } if run == session.id()),
        "{err}"
    );
    assert!(err.to_string().contains("--force"), "{err}");
    assert_eq!(repo.read("README"), "the user edited after the undo\n");

    // The index counts too.
    repo.write("README", "read me\n");
    repo.write("src/lib.rs", "pub fn original() {}\n// staged\n");
    repo.stage("src/lib.rs");
    repo.write("src/lib.rs", "pub fn original() {}\n");
    assert!(matches!(
        session.redo(Force::No),
        Err(Error::ChangedSinceUndo { .. })
    ));

    let redone = session.redo(Force::Yes).unwrap();
    assert_eq!(repo.tree(), agents);
    // What redo replaced is saved.
    let git = repo.git2();
    let saved = git
        .find_commit(git2::Oid::from_str(&redone.saved.unwrap().to_string()).unwrap())
        .unwrap();
    let index = saved.parent(1).unwrap().tree().unwrap();
    let staged = index.get_path("src/lib.rs".as_ref()).unwrap();
    let content = git.find_blob(staged.id()).unwrap().content().to_vec();
    assert_eq!(content, b"pub fn original() {}\n// staged\n");
}

#[test]
fn redo_needs_an_undo_first() {
    let repo = project();
    let mut session = begin(&repo);
    agent_step(&repo);
    let err = session.redo(Force::Yes).unwrap_err();
    assert!(
        matches!(&err, Error::NothingToRedo { run } if run == session.id()),
        "{err}"
    );
    session.undo(Force::No).unwrap();
    session.redo(Force::No).unwrap();
    assert!(matches!(
        session.redo(Force::No),
        Err(Error::NothingToRedo { .. })
    ));
}

#[test]
fn a_second_undo_does_nothing_and_keeps_what_redo_brings_back() {
    let repo = project();
    let mut session = begin(&repo);
    agent_step(&repo);
    let agents = repo.tree();
    let index = repo.index();
    session.undo(Force::No).unwrap();
    let again = session.undo(Force::No).unwrap();
    assert!(again.changed.is_empty());
    assert!(again.saved.is_none());
    session.redo(Force::No).unwrap();
    assert_eq!(repo.tree(), agents);
    assert_eq!(repo.index(), index);
}

#[test]
fn undo_of_an_index_change_alone_restores_the_index() {
    let repo = project();
    let index = repo.index();
    let mut session = begin(&repo);
    // The agent stages a file it did not change: only the index differs.
    repo.write("src/lib.rs", "pub fn staged_by_the_agent() {}\n");
    repo.stage("src/lib.rs");
    repo.write("src/lib.rs", "pub fn original() {}\n");
    let undone = session.undo(Force::No).unwrap();
    assert!(undone.saved.is_some());
    assert!(undone.changed.is_empty());
    assert_eq!(repo.index(), index);
}

#[test]
fn undo_in_another_session_sees_the_latest_metadata() {
    let repo = project();
    let mut first = begin(&repo);
    agent_step(&repo);
    let mut second = Session::open(&repo.root, first.id()).unwrap();
    second.undo(Force::No).unwrap();
    // `first` has not seen the undo, but reads it before redoing.
    first.redo(Force::No).unwrap();
    assert_eq!(repo.read("src/lib.rs"), "pub fn changed() {}\n");
}

#[test]
fn a_locked_index_stops_undo_redo_and_accept_before_they_change_anything() {
    let repo = project();
    let mut session = begin(&repo);
    agent_step(&repo);
    let agents = repo.tree();
    let lock = repo.path(".git/index.lock");
    fs::write(&lock, "").unwrap();
    let err = session.undo(Force::Yes).unwrap_err();
    assert!(
        matches!(&err, Error::IndexLocked { path } if *path == lock),
        "{err}"
    );
    assert!(err.to_string().contains("remove the file"), "{err}");
    assert_eq!(repo.tree(), agents);
    assert!(!session.info().undone);

    let head = repo.head();
    assert!(matches!(session.accept(), Err(Error::IndexLocked { .. })));
    assert_eq!(repo.head(), head);

    fs::remove_file(&lock).unwrap();
    session.undo(Force::No).unwrap();
    fs::write(&lock, "").unwrap();
    let err = session.redo(Force::Yes).unwrap_err();
    assert!(matches!(&err, Error::IndexLocked { .. }), "{err}");
    assert!(session.info().undone);
}

#[test]
fn undo_restores_an_index_whose_file_was_deleted() {
    let repo = project();
    let index = repo.index();
    let mut session = begin(&repo);
    agent_step(&repo);
    // git reads a missing index as an empty one: everything staged for deletion.
    fs::remove_file(repo.path(".git/index")).unwrap();
    session.undo(Force::No).unwrap();
    assert_eq!(repo.index(), index);
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

#[test]
fn a_damaged_branch_ref_is_reported_not_taken_for_an_unborn_branch() {
    let repo = project();
    let mut session = begin(&repo);
    agent_step(&repo);
    let agents = repo.tree();
    fs::write(repo.path(".git/refs/heads/master"), "not a commit id\n").unwrap();
    for force in [Force::No, Force::Yes] {
        let err = session.undo(force).unwrap_err();
        assert!(matches!(&err, Error::Git { .. }), "{err}");
    }
    assert_eq!(repo.tree(), agents);
    let err = Session::begin(&repo.root, BeginOptions::default())
        .err()
        .unwrap();
    assert!(matches!(&err, Error::Git { .. }), "{err}");
}

#[test]
fn a_damaged_checkpoint_ref_is_put_back_from_the_store() {
    let repo = project();
    let mut session = begin(&repo);
    agent_step(&repo);
    let checkpoint = session.checkpoint("step").unwrap().unwrap();
    let name = format!("refs/harness/{}/checkpoints", session.id());
    fs::write(repo.path(&format!(".git/{name}")), "garbage\n").unwrap();
    // The store is the authority: the checkpoints are still there.
    assert_eq!(session.checkpoints().unwrap(), vec![checkpoint.clone()]);
    assert_eq!(
        session.verify().unwrap(),
        vec![Tampering::RefRestored {
            name: name.clone(),
            found: None
        }]
    );
    assert_eq!(
        repo.git(&["rev-parse", &name]).trim(),
        checkpoint.commit.to_string()
    );
    assert_eq!(session.verify().unwrap(), Vec::new());
}

#[test]
fn accept_commits_the_run_onto_the_branch_and_leaves_a_clean_tree() {
    let repo = project();
    let mut session = Session::begin(
        &repo.root,
        BeginOptions {
            task: "Rename original to changed".into(),
            model: "qwen3:8b".into(),
            ..BeginOptions::default()
        },
    )
    .unwrap();
    let start = repo.head();
    agent_step(&repo);
    let files = repo.tree();
    let accepted = session.accept().unwrap();
    let id = session.id().to_string();

    assert_eq!(repo.head(), accepted.commit.to_string());
    assert_eq!(repo.git(&["symbolic-ref", "HEAD"]), "refs/heads/master\n");
    let git = repo.git2();
    let commit = git.head().unwrap().peel_to_commit().unwrap();
    assert_eq!(commit.parent_id(0).unwrap().to_string(), start);
    assert_eq!(commit.author().name().unwrap(), "Test User");
    assert_eq!(commit.committer().email().unwrap(), "test@example.org");
    let message = commit.message().unwrap();
    assert_eq!(message, accepted.message);
    assert!(
        message.starts_with("Rename original to changed\n"),
        "{message}"
    );
    assert!(
        message.contains(&format!("Harness-Run: {id}\n")),
        "{message}"
    );
    assert!(message.contains("Harness-Model: qwen3:8b\n"), "{message}");
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    assert_eq!(repo.tree(), files);
    assert_eq!(session.info().accepted, Some(accepted.commit));
    let listed = Session::runs(&repo.root).unwrap();
    assert_eq!(listed[0].accepted, Some(accepted.commit));
}

#[test]
fn accept_after_a_dirty_start_commits_only_the_runs_changes() {
    let repo = project();
    repo.write("README", "the user's unstaged edit\n");
    repo.write(
        "src/lib.rs",
        "pub fn original() {}\n// the user's staged line\n",
    );
    repo.stage("src/lib.rs");
    repo.write("notes.txt", "the user's untracked notes\n");
    let mut session = begin_dirty(&repo);
    repo.write("run.sh", "#!/bin/sh\necho the agent\n");
    repo.write("src/agent.rs", "// created by the agent\n");

    session.accept().unwrap();
    let git = repo.git2();
    let tree = git
        .head()
        .unwrap()
        .peel_to_commit()
        .unwrap()
        .tree()
        .unwrap();
    let blob = |path: &str| {
        let entry = tree.get_path(path.as_ref()).unwrap();
        String::from_utf8(git.find_blob(entry.id()).unwrap().content().to_vec()).unwrap()
    };
    assert_eq!(blob("run.sh"), "#!/bin/sh\necho the agent\n");
    assert_eq!(blob("src/agent.rs"), "// created by the agent\n");
    assert_eq!(blob("README"), "read me\n");
    assert_eq!(blob("src/lib.rs"), "pub fn original() {}\n");
    assert!(tree.get_path("notes.txt".as_ref()).is_err());
    // The user's work is as uncommitted as it was: unstaged, staged, untracked.
    let mut status: Vec<String> = repo
        .git(&["status", "--porcelain"])
        .lines()
        .map(str::to_string)
        .collect();
    status.sort();
    assert_eq!(status, [" M README", "?? notes.txt", "M  src/lib.rs"]);
    // The new commit and the index's trees are whole in the workspace's repository.
    repo.git(&["fsck", "--no-dangling"]);
}

#[test]
fn accept_merges_onto_commits_made_since_the_run_began() {
    let repo = project();
    let mut session = begin(&repo);
    repo.write("src/lib.rs", "pub fn changed() {}\n");
    repo.write("CHANGELOG", "the user's own commit\n");
    repo.stage("CHANGELOG");
    let git = repo.git2();
    let mut index = git.index().unwrap();
    let tree = git.find_tree(index.write_tree().unwrap()).unwrap();
    let head = git.head().unwrap().peel_to_commit().unwrap();
    let signature = git2::Signature::now("Test User", "test@example.org").unwrap();
    let users = git
        .commit(
            Some("HEAD"),
            &signature,
            &signature,
            "changelog",
            &tree,
            &[&head],
        )
        .unwrap();
    session.accept().unwrap();
    let commit = git.head().unwrap().peel_to_commit().unwrap();
    assert_eq!(commit.parent_id(0).unwrap(), users);
    let tree = commit.tree().unwrap();
    assert!(tree.get_path("CHANGELOG".as_ref()).is_ok());
    let lib = tree.get_path("src/lib.rs".as_ref()).unwrap();
    assert_eq!(
        git.find_blob(lib.id()).unwrap().content(),
        b"pub fn changed() {}\n"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

#[test]
fn accept_without_changes_is_refused() {
    let repo = project();
    let mut session = begin(&repo);
    let head = repo.head();
    let err = session.accept().unwrap_err();
    assert!(
        matches!(&err, Error::NothingToAccept { run } if run == session.id()),
        "{err}"
    );
    agent_step(&repo);
    session.undo(Force::No).unwrap();
    assert!(matches!(
        session.accept(),
        Err(Error::NothingToAccept { .. })
    ));
    assert_eq!(repo.head(), head);
}

#[test]
fn accept_refuses_changes_that_overlap_the_users() {
    let repo = project();
    repo.write("src/lib.rs", "pub fn the_users_version() {}\n");
    let mut session = begin_dirty(&repo);
    repo.write("src/lib.rs", "pub fn the_agents_version() {}\n");
    let head = repo.head();
    let err = session.accept().unwrap_err();
    assert!(
        matches!(&err, Error::AcceptConflict { paths, .. } if paths == &paths_of(&["src/lib.rs"])),
        "{err}"
    );
    assert!(err.to_string().contains("git commit"), "{err}");
    assert_eq!(repo.head(), head);
}

fn paths_of(list: &[&str]) -> Vec<PathBuf> {
    paths(list)
}

#[test]
fn accept_refuses_when_the_index_overlaps() {
    let repo = project();
    let mut session = begin(&repo);
    repo.write("src/lib.rs", "pub fn the_agents_version() {}\n");
    // Something staged a different version of the same line since the start.
    let git = repo.git2();
    let mut index = git.index().unwrap();
    let blob = git.blob(b"pub fn staged_meanwhile() {}\n").unwrap();
    let mut entry = index.get_path("src/lib.rs".as_ref(), 0).unwrap();
    entry.id = blob;
    index.add(&entry).unwrap();
    index.write().unwrap();
    let head = repo.head();
    let err = session.accept().unwrap_err();
    assert!(matches!(&err, Error::AcceptConflict { .. }), "{err}");
    assert_eq!(repo.head(), head);
}

#[test]
fn accept_without_a_configured_identity_signs_as_the_harness() {
    let repo = project();
    // Only a repository-local empty identity: git's lookup stops at the first value.
    let mut config = repo.git2().config().unwrap();
    config.set_str("user.name", "").unwrap();
    let mut session = begin(&repo);
    agent_step(&repo);
    session.accept().unwrap();
    let git = repo.git2();
    let commit = git.head().unwrap().peel_to_commit().unwrap();
    assert_eq!(commit.author().name().unwrap(), "harness");
    assert_eq!(commit.author().email().unwrap(), "harness@localhost");
}

#[test]
fn undo_restores_symlinks_and_executable_bits() {
    let repo = project();
    repo.symlink("link", "README");
    repo.chmod("run.sh", 0o755);
    repo.commit_all("link and executable");
    let mut session = begin(&repo);
    repo.remove("link");
    repo.write("link", "now a file\n");
    repo.chmod("run.sh", 0o644);
    session.undo(Force::No).unwrap();
    let tree = repo.tree();
    assert_eq!(tree["link"], Entry::Symlink(b"README".to_vec()));
    assert_eq!(
        tree["run.sh"],
        Entry::File {
            bytes: b"#!/bin/sh\n".to_vec(),
            executable: true
        }
    );
    assert_eq!(tree["README"], file("read me\n"));
}

#[test]
fn revert_to_start_restores_the_pre_run_state_for_another_attempt_and_the_run_goes_on() {
    let repo = project();
    repo.write("src/lib.rs", "pub fn users_own_edit() {}\n");
    let before = repo.tree();
    let mut session = begin_dirty(&repo);
    agent_step(&repo);
    // The failed attempt committed too: the revert must not depend on HEAD.
    repo.commit_all("the attempt's commit");
    let first = session.checkpoint("attempt 1").unwrap().unwrap();

    let reverted = session.revert_to_start().unwrap();
    assert_eq!(
        repo.tree(),
        before,
        "the files are as they were before the run"
    );
    assert!(reverted.changed.contains(&PathBuf::from("src/new/mod.rs")));
    assert!(!session.info().undone, "a revert is not an undo");
    assert!(
        matches!(session.redo(Force::No), Err(Error::NothingToRedo { .. })),
        "redo has nothing to bring back after a revert"
    );

    // The next attempt's checkpoints follow the failed attempt's.
    repo.write("src/lib.rs", "pub fn second_attempt() {}\n");
    let second = session.checkpoint("attempt 2").unwrap().unwrap();
    assert_eq!(second.number, first.number + 1);
    let second_tree = repo.tree();

    // And the run as a whole is still undone, and redone, as any other.
    session.undo(Force::Yes).unwrap();
    assert_eq!(repo.tree(), before);
    session.redo(Force::No).unwrap();
    assert_eq!(repo.tree(), second_tree);
}

#[test]
fn attributes_a_run_writes_do_not_change_how_undo_writes_the_users_files() {
    // `.gitattributes` decide how git writes a file (line endings, `ident`). Undo must
    // write the user's files by the user's attributes, not by those a command left
    // behind, in a new file, a new one in a directory, or the user's own rewritten.
    let repo = Repo::with_files(&[
        (".gitattributes", "*.bat text eol=crlf\n"),
        ("run.bat", "echo one\r\necho two\r\n"),
        ("README", "read me\n"),
        ("src/lib.rs", "pub fn original() {} // $Id$\n"),
        ("src/notes.txt", "one\ntwo\n"),
    ]);
    let before = repo.tree();
    let mut session = begin(&repo);
    // Written as git would write them under their own rules, so that redo can be exact.
    repo.write(".gitattributes", "* text eol=crlf ident\r\n");
    repo.write("src/.gitattributes", "*.txt -text\r\n");
    repo.write("run.bat", "echo changed\r\n");
    repo.write("README", "changed\r\n");
    repo.write("src/lib.rs", "pub fn changed() {}\r\n");
    repo.write("src/notes.txt", "one\r\ntwo\r\nthree\r\n");
    let agents = repo.tree();

    session.undo(Force::No).unwrap();
    assert_eq!(repo.tree(), before);
    // And by the run's attributes when redo brings its files back.
    session.redo(Force::No).unwrap();
    assert_eq!(repo.tree(), agents);
}

#[test]
fn a_repository_a_command_makes_of_a_users_directory_does_not_hide_its_files_from_undo() {
    // Contents of nested repositories are not recorded: one made by a command must not
    // take the user's files in it out of what undo restores.
    let repo = project();
    let mut session = begin(&repo);
    repo.git(&["init", "-q", "src"]);
    repo.write("src/lib.rs", "pub fn changed() {}\n");
    repo.write("src/extra.rs", "// new\n");
    let undone = session.undo(Force::No).unwrap();
    assert_eq!(repo.read("src/lib.rs"), "pub fn original() {}\n");
    assert!(!repo.exists("src/extra.rs"));
    assert_eq!(undone.changed, paths(&["src/extra.rs", "src/lib.rs"]));
}

#[test]
fn undo_never_writes_through_a_symlink_a_command_put_in_place_of_a_directory() {
    let repo = project();
    let outside = tempfile::tempdir().unwrap();
    let mut session = begin(&repo);
    repo.remove("src/lib.rs");
    fs::remove_dir(repo.path("src")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.path("src")).unwrap();
    session.undo(Force::No).unwrap();
    let written: Vec<_> = fs::read_dir(outside.path()).unwrap().collect();
    assert!(written.is_empty(), "written outside: {written:?}");
    assert_eq!(repo.read("src/lib.rs"), "pub fn original() {}\n");
}
