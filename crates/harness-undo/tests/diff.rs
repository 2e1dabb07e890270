//! `Session::diff`: each kind of change, and agreement with `git diff harness/<id>`.

#![cfg(unix)]
// Fixtures use Unix permissions and symlinks.
// Test helpers outside #[test] functions unwrap too: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::fs;

use common::Repo;
use harness_undo::{BeginOptions, Diff, DiffTarget, Error, FileMode, FileStatus, Session};

const LONG: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

/// A run that changes one file of each kind.
fn run_with_every_kind_of_change() -> (Repo, Session) {
    let repo = Repo::with_files(&[
        ("keep.txt", "keep\n"),
        ("modify.txt", LONG),
        ("delete.txt", "going\naway\n"),
        ("rename-me.txt", LONG),
        ("bin.dat", "\0\x01\x02binary\n"),
        ("script.sh", "#!/bin/sh\necho hi\n"),
        ("typechange", "a file, then a symlink\n"),
    ]);
    repo.symlink("link", "keep.txt");
    repo.symlink("becomes-binary", "keep.txt");
    repo.commit_all("with a symlink");
    let session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
    repo.write(
        "modify.txt",
        LONG.replace("five\n", "FIVE\nfive and a half\n"),
    );
    repo.remove("delete.txt");
    fs::rename(repo.path("rename-me.txt"), repo.path("renamed.txt")).unwrap();
    repo.write("new.txt", "new\nfile\n");
    repo.write("bin.dat", "\0\x01\x03binary, changed\n");
    repo.chmod("script.sh", 0o755);
    repo.remove("link");
    repo.symlink("link", "modify.txt");
    repo.remove("typechange");
    repo.symlink("typechange", "keep.txt");
    repo.remove("becomes-binary");
    repo.write("becomes-binary", "\0binary now\n");
    (repo, session)
}

fn by_path(diff: &Diff) -> BTreeMap<String, &harness_undo::FileDiff> {
    diff.files
        .iter()
        .map(|f| (f.path.to_str().unwrap().to_string(), f))
        .collect()
}

#[test]
fn every_kind_of_change_is_reported() {
    let (_repo, mut session) = run_with_every_kind_of_change();
    let diff = session.diff(DiffTarget::WorkingTree).unwrap();
    let files = by_path(&diff);
    let summary: Vec<(&str, FileStatus, usize, usize, bool)> = files
        .iter()
        .map(|(path, f)| (path.as_str(), f.status, f.additions, f.deletions, f.binary))
        .collect();
    assert_eq!(
        summary,
        [
            ("becomes-binary", FileStatus::TypeChanged, 0, 1, true),
            ("bin.dat", FileStatus::Modified, 0, 0, true),
            ("delete.txt", FileStatus::Deleted, 0, 2, false),
            ("link", FileStatus::Modified, 1, 1, false),
            ("modify.txt", FileStatus::Modified, 2, 1, false),
            ("new.txt", FileStatus::Added, 2, 0, false),
            ("renamed.txt", FileStatus::Renamed, 0, 0, false),
            ("script.sh", FileStatus::Modified, 0, 0, false),
            ("typechange", FileStatus::TypeChanged, 1, 1, false),
        ]
    );
    assert_eq!(diff.additions(), 6);
    assert_eq!(diff.deletions(), 6);
    assert!(!diff.is_empty());

    let renamed = files["renamed.txt"];
    assert_eq!(renamed.old_path.as_deref(), Some("rename-me.txt".as_ref()));
    assert!(
        renamed
            .patch
            .contains("rename from rename-me.txt\nrename to renamed.txt\n")
    );
    assert!(files["modify.txt"].old_path.is_none());

    let script = files["script.sh"];
    assert_eq!(
        (script.old_mode, script.new_mode),
        (Some(FileMode::Regular), Some(FileMode::Executable))
    );
    assert!(script.patch.contains("old mode 100644\nnew mode 100755\n"));
    assert_eq!(files["new.txt"].old_mode, None);
    assert_eq!(files["delete.txt"].new_mode, None);
    assert_eq!(files["link"].new_mode, Some(FileMode::Symlink));
    assert_eq!(
        (files["typechange"].old_mode, files["typechange"].new_mode),
        (Some(FileMode::Regular), Some(FileMode::Symlink))
    );

    assert!(
        files["bin.dat"]
            .patch
            .contains("Binary files a/bin.dat and b/bin.dat differ")
    );
    assert!(files["new.txt"].patch.contains("new file mode 100644\n"));
    assert!(files["new.txt"].patch.contains("+new\n+file\n"));
    assert!(
        files["delete.txt"]
            .patch
            .contains("deleted file mode 100644\n")
    );
    assert!(
        files["modify.txt"]
            .patch
            .contains("-five\n+FIVE\n+five and a half\n")
    );
    assert_eq!(
        diff.to_string(),
        diff.files
            .iter()
            .map(|f| f.patch.as_str())
            .collect::<String>()
    );
}

/// `git diff` output as (status letter, numstat) per path.
fn git_summary(repo: &Repo, tag: &str) -> BTreeMap<String, (String, String)> {
    let statuses = repo.git(&["diff", "-M", "--name-status", "-z", tag]);
    let numstat = repo.git(&["diff", "-M", "--numstat", "-z", tag]);
    let mut summary = BTreeMap::new();
    let mut fields = statuses.split('\0').filter(|f| !f.is_empty());
    while let Some(status) = fields.next() {
        // A rename is followed by the old and the new path.
        if status.starts_with('R') {
            fields.next();
        }
        let path = fields.next().unwrap().to_string();
        summary.insert(path, (status[..1].to_string(), String::new()));
    }
    let mut records = numstat.split('\0').filter(|f| !f.is_empty());
    while let Some(record) = records.next() {
        let mut parts = record.splitn(3, '\t');
        let counts = format!("{}\t{}", parts.next().unwrap(), parts.next().unwrap());
        let path = match parts.next().unwrap() {
            // A rename: the old and the new path follow as their own records.
            "" => {
                records.next();
                records.next().unwrap().to_string()
            }
            path => path.to_string(),
        };
        summary.get_mut(&path).unwrap().1 = counts;
    }
    summary
}

fn our_summary(diff: &Diff) -> BTreeMap<String, (String, String)> {
    diff.files
        .iter()
        .map(|f| {
            let letter = match f.status {
                FileStatus::Added => "A",
                FileStatus::Deleted => "D",
                FileStatus::Modified => "M",
                FileStatus::Renamed => "R",
                FileStatus::TypeChanged => "T",
                _ => "?",
            };
            let counts = if f.binary {
                "-\t-".to_string()
            } else {
                format!("{}\t{}", f.additions, f.deletions)
            };
            (
                f.path.to_str().unwrap().to_string(),
                (letter.to_string(), counts),
            )
        })
        .collect()
}

#[test]
fn plain_git_diff_of_the_tag_prints_the_same_patches() {
    let (repo, mut session) = run_with_every_kind_of_change();
    let diff = session.diff(DiffTarget::WorkingTree).unwrap();
    // git diff compares with the index, so files the run created must be known to it.
    repo.git(&["add", "-N", "new.txt", "renamed.txt"]);
    let tag = format!("harness/{}", session.id());
    assert_eq!(our_summary(&diff), git_summary(&repo, &tag));
    for file in &diff.files {
        let path = file.path.to_str().unwrap();
        // Both sides of a rename, or git cannot pair them.
        let old_path = file.old_path.as_ref().map_or(path, |p| p.to_str().unwrap());
        let theirs = repo.git(&["diff", "-M", &tag, "--", old_path, path]);
        assert_eq!(file.patch, theirs, "{path}");
    }
}

#[test]
fn diff_to_a_checkpoint_shows_the_run_as_it_was_then() {
    let repo = Repo::with_files(&[("a.txt", "a\n")]);
    let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
    assert!(session.diff(DiffTarget::WorkingTree).unwrap().is_empty());
    repo.write("a.txt", "first\n");
    session.checkpoint("first").unwrap().unwrap();
    repo.write("a.txt", "second\n");
    repo.write("b.txt", "b\n");
    session.checkpoint("second").unwrap().unwrap();
    repo.write("c.txt", "only in the working tree\n");

    let paths = |diff: Diff| -> Vec<String> {
        diff.files
            .iter()
            .map(|f| f.path.to_str().unwrap().to_string())
            .collect()
    };
    let first = session.diff(DiffTarget::Checkpoint(1)).unwrap();
    assert!(first.files[0].patch.contains("+first\n"));
    assert_eq!(paths(first), ["a.txt"]);
    assert_eq!(
        paths(session.diff(DiffTarget::Checkpoint(2)).unwrap()),
        ["a.txt", "b.txt"]
    );
    assert_eq!(
        paths(session.diff(DiffTarget::WorkingTree).unwrap()),
        ["a.txt", "b.txt", "c.txt"]
    );

    for number in [0, 3] {
        let err = session.diff(DiffTarget::Checkpoint(number)).unwrap_err();
        assert!(
            matches!(&err, Error::UnknownCheckpoint { number: n, count: 2, .. } if *n == number),
            "{err}"
        );
    }
}

#[test]
fn a_reopened_run_diffs_the_working_tree_in_full() {
    let repo = Repo::with_files(&[("a.txt", "a\n")]);
    let id = Session::begin(&repo.root, BeginOptions::default())
        .unwrap()
        .id()
        .clone();
    repo.write("a.txt", "changed while no one watched\n");
    let mut reopened = Session::open(&repo.root, &id).unwrap();
    let diff = reopened.diff(DiffTarget::WorkingTree).unwrap();
    assert_eq!(diff.files.len(), 1);
    assert_eq!((diff.additions(), diff.deletions()), (1, 1));
}
