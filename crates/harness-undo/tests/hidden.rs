//! Issue 45, class 2: the harness's records in the workspace's `.git` never hold what it
//! hides. Whatever a session records of a hidden path (an untracked `.env`, a file under a
//! denied directory, a tracked key changed before the run, a file a command moved into a
//! hidden place, the saved state of an undo) goes to the store only; the workspace's refs
//! point to copies without it, which git reads whole; and undo and redo still bring every
//! hidden file back byte for byte.

#![cfg(unix)]
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use common::{Repo, git_command, shell_command};
use harness_undo::{BeginOptions, DiffTarget, Force, Hidden, Session, Tampering};

/// `.env` files, keys, and everything under `secrets/`: as a caller's deny rules might.
fn hidden() -> Hidden {
    Hidden::new(|path: &Path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        name == ".env"
            || name.ends_with(".key")
            || path
                .components()
                .next()
                .is_some_and(|c| c.as_os_str() == "secrets")
    })
}

const SECRETS: [&str; 5] = [
    "UNTRACKED-DOTENV-4f1c",
    "UNDER-DENIED-DIR-77aa",
    "TRACKED-KEY-CHANGED-9b0e",
    "WRITTEN-DURING-RUN-31d2",
    "MOVED-INTO-HIDDEN-c0de",
];

/// A repository with a committed key, then uncommitted work that hides a secret in each
/// way a user's tree can: an untracked `.env`, a file under a hidden directory, a tracked
/// key changed, and one staged.
fn project() -> Repo {
    let repo = Repo::with_files(&[
        ("README", "read me\n"),
        ("config/app.key", "committed key\n"),
        ("src/lib.rs", "pub fn f() {}\n"),
    ]);
    repo.write(".env", format!("TOKEN={}\n", SECRETS[0]));
    repo.write("secrets/token.txt", SECRETS[1]);
    repo.write("config/app.key", SECRETS[2]);
    repo.write("src/lib.rs", "pub fn users_edit() {}\n");
    repo
}

/// Every object of the workspace's repository, contents included, as `git cat-file` prints
/// them; every file under `.git` read raw (packs, the index, the harness's own files); and
/// `git log --all -p` with the reflogs.
fn everything_git_shows(repo: &Repo) -> String {
    let mut all = git_lossy(
        repo,
        &["cat-file", "--batch-all-objects", "--batch", "--unordered"],
    );
    all.push_str(&git_lossy(
        repo,
        &["log", "--all", "--reflog", "-p", "--binary"],
    ));
    all.push_str(&raw_files(&repo.root.join(".git")));
    all
}

/// What git printed, binary objects and all, as text.
fn git_lossy(repo: &Repo, args: &[&str]) -> String {
    let output = git_command(&repo.root).args(args).output().unwrap();
    assert!(output.status.success(), "git {args:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The bytes of every file below `dir`, as text.
fn raw_files(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let metadata = std::fs::symlink_metadata(&path).unwrap();
        if metadata.is_dir() {
            text.push_str(&raw_files(&path));
        } else if metadata.is_file() {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    text
}

fn assert_nothing_hidden_in_git(repo: &Repo, when: &str) {
    let shown = everything_git_shows(repo);
    for secret in SECRETS {
        assert!(!shown.contains(secret), "{when}: {secret} is in .git");
    }
    // Nor with a hash of its content, in the private index the session scans with,
    // which it keeps in the store.
    let scanning = std::fs::read_dir(repo.root.join(".git/harness"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .any(|entry| entry.file_name().to_string_lossy().starts_with("scan-"));
    assert!(!scanning, "{when}: the scanner's index is in .git");
    // And what is there is whole: nothing points at an object the workspace lacks.
    let fsck = shell_command(&repo.root, "git fsck --full --no-dangling 2>&1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&fsck.stdout);
    assert!(
        fsck.status.success() && !said.contains("missing"),
        "{when}: {said}"
    );
}

fn shell(repo: &Repo, script: &str) {
    let output = shell_command(&repo.root, script).output().unwrap();
    assert!(
        output.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn issue_45_no_hidden_content_reaches_the_workspaces_objects_and_undo_is_still_exact() {
    let repo = project();
    let before = repo.tree();
    let before_index = repo.index();
    let options = BeginOptions {
        allow_dirty: true,
        hidden: hidden(),
        ..BeginOptions::default()
    };
    let mut session = Session::begin(&repo.root, options).unwrap();
    session.wait_for_store().unwrap();
    let id = session.id().clone();
    assert_nothing_hidden_in_git(&repo, "after begin");
    // `git diff harness/<id>` works, and shows no hidden file.
    let diff = repo.git(&["diff", &format!("harness/{id}"), "--stat"]);
    assert!(!diff.contains("secrets/"), "{diff}");

    // A step as a command under tier `none` might take it: a hidden file written, a file
    // moved into a hidden directory, an ordinary edit.
    repo.write(".env", format!("TOKEN={}\n", SECRETS[3]));
    repo.write("notes.txt", SECRETS[4]);
    shell(
        &repo,
        "mkdir -p secrets/moved && mv notes.txt secrets/moved/notes.txt",
    );
    repo.write("src/lib.rs", "pub fn agents() {}\n");
    session.checkpoint("step 1").unwrap().unwrap();
    assert_eq!(session.verify().unwrap(), Vec::new());
    assert_nothing_hidden_in_git(&repo, "after a checkpoint");
    let diff = session.diff(DiffTarget::WorkingTree).unwrap();
    assert!(
        diff.files.iter().any(|f| f.path == Path::new(".env")),
        "the store's own diff still sees the hidden file"
    );
    let agents = repo.tree();
    drop(session);

    // Undo from another process, which hides the same: the saved state holds the
    // agent's `.env` and the moved file; the workspace does not.
    let mut session = Session::open(&repo.root, &id).unwrap();
    session.hide(hidden());
    session.undo(Force::No).unwrap();
    assert_eq!(
        repo.tree(),
        before,
        "every hidden file is back, byte for byte"
    );
    assert_eq!(repo.index(), before_index);
    assert_nothing_hidden_in_git(&repo, "after undo");
    session.redo(Force::No).unwrap();
    assert_eq!(repo.tree(), agents, "and redo brings the run's back");
    assert_nothing_hidden_in_git(&repo, "after redo");

    // A command deletes the run's refs and prunes: the check puts back the copies, not
    // the store's full states.
    shell(
        &repo,
        "git for-each-ref --format='%(refname)' refs/harness refs/tags/harness \
         | xargs -n1 git update-ref -d; git reflog expire --expire=now --all; \
         git gc -q --prune=now",
    );
    let repaired = session.verify().unwrap();
    assert!(
        repaired
            .iter()
            .any(|t| matches!(t, Tampering::RefRestored { .. })),
        "{repaired:?}"
    );
    assert_nothing_hidden_in_git(&repo, "after the refs were put back");
    assert_eq!(
        session.verify().unwrap(),
        Vec::new(),
        "put back as they were"
    );
    session.undo(Force::No).unwrap();
    assert_eq!(repo.tree(), before);
    assert_nothing_hidden_in_git(&repo, "after the second undo");
}

#[test]
fn issue_45_a_run_that_hides_nothing_keeps_the_same_commits_in_the_workspace_and_the_store() {
    let repo = project();
    let options = BeginOptions {
        allow_dirty: true,
        ..BeginOptions::default()
    };
    let mut session = Session::begin(&repo.root, options).unwrap();
    repo.write("src/lib.rs", "pub fn agents() {}\n");
    let checkpoint = session.checkpoint("step").unwrap().unwrap();
    let id = session.id().clone();
    assert_eq!(
        repo.git(&["rev-parse", &format!("refs/harness/{id}/checkpoints")])
            .trim(),
        checkpoint.commit.to_string()
    );
    assert!(
        repo.git(&["show", &format!("harness/{id}:.env")])
            .contains(SECRETS[0]),
        "without hidden paths the copy is the state itself"
    );
}

#[test]
fn issue_45_a_clean_run_with_a_tracked_hidden_file_keeps_heads_version_in_the_copy() {
    let repo = Repo::with_files(&[("config/app.key", "committed key\n"), ("a", "a\n")]);
    let options = BeginOptions {
        hidden: hidden(),
        ..BeginOptions::default()
    };
    let mut session = Session::begin(&repo.root, options).unwrap();
    repo.write("a", "changed\n");
    let checkpoint = session.checkpoint("step").unwrap().unwrap();
    let id = session.id().clone();
    // HEAD's key is the workspace's already: the checkpoint, holding the same, is its own copy.
    assert_eq!(
        repo.git(&["rev-parse", &format!("refs/harness/{id}/checkpoints")])
            .trim(),
        checkpoint.commit.to_string()
    );
    // A key changed during the run: HEAD's version stands in the copy.
    repo.write("config/app.key", SECRETS[3]);
    session.checkpoint("step 2").unwrap().unwrap();
    let shown = repo.git(&[
        "show",
        &format!("refs/harness/{id}/checkpoints:config/app.key"),
    ]);
    assert_eq!(shown, "committed key\n");
    let diff = repo.git(&[
        "diff",
        &format!("harness/{id}"),
        &format!("refs/harness/{id}/checkpoints"),
        "--stat",
    ]);
    assert!(!diff.contains("app.key"), "{diff}");
    assert_nothing_hidden_in_git(&repo, "after the key changed");
}
