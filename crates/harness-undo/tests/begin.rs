//! `Session::begin`: refusals, `--init`, what is recorded, and what is left alone.

#![cfg(unix)]
// Fixtures use Unix permissions and symlinks.
// Test helpers outside #[test] functions unwrap too: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::fs;
use std::path::PathBuf;

use common::Repo;
use harness_undo::{BeginOptions, Error, Session, check_clean};

fn begin(repo: &Repo, options: BeginOptions) -> Result<Session, Error> {
    Session::begin(&repo.root, options)
}

fn allow_dirty() -> BeginOptions {
    BeginOptions {
        allow_dirty: true,
        ..BeginOptions::default()
    }
}

fn init() -> BeginOptions {
    BeginOptions {
        init: true,
        ..BeginOptions::default()
    }
}

/// True if and only if begin left no run, ref or tag behind.
fn nothing_recorded(repo: &Repo) -> bool {
    nothing_recorded_but(repo, "")
}

/// [`nothing_recorded`], except for the ref `except`.
fn nothing_recorded_but(repo: &Repo, except: &str) -> bool {
    let runs_dir = repo.store().map(|store| store.join("harness/runs"));
    let no_dirs =
        runs_dir.is_none_or(|dir| fs::read_dir(dir).map_or(true, |mut d| d.next().is_none()));
    let no_refs = repo
        .refs()
        .iter()
        .all(|(name, _)| name == except || !name.contains("harness"));
    no_dirs && no_refs
}

#[test]
fn a_directory_that_is_not_a_repository_is_refused_naming_init() {
    let repo = Repo::plain();
    repo.write("a.txt", "a");
    let err = begin(&repo, BeginOptions::default()).err().unwrap();
    assert!(
        matches!(&err, Error::NotARepository { root } if *root == repo.root),
        "{err}"
    );
    assert!(err.to_string().contains("--init"), "{err}");
    assert!(!repo.exists(".git"));
}

#[test]
fn init_creates_the_repository_with_an_initial_commit_of_the_current_files() {
    let repo = Repo::plain();
    repo.write(".gitignore", "*.log\n");
    repo.write("src/main.rs", "fn main() {}\n");
    repo.write("debug.log", "ignored");
    let session = begin(&repo, init()).unwrap();

    let git = repo.git2();
    let head = git.head().unwrap().peel_to_commit().unwrap();
    assert!(
        head.message()
            .unwrap()
            .starts_with("Initial commit by harness")
    );
    assert_eq!(head.author().name().unwrap(), "harness");
    assert_eq!(head.author().email().unwrap(), "harness@localhost");
    assert_eq!(head.parent_count(), 0);
    let tree = head.tree().unwrap();
    assert!(tree.get_path("src/main.rs".as_ref()).is_ok());
    assert!(tree.get_path(".gitignore".as_ref()).is_ok());
    assert!(
        tree.get_path("debug.log".as_ref()).is_err(),
        "ignored files are not committed"
    );
    // The index was written too, so git sees a clean tree.
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    assert_eq!(session.info().pre_run.to_string(), head.id().to_string());
}

#[test]
fn init_in_a_repository_with_commits_changes_nothing() {
    let repo = Repo::with_files(&[("a.txt", "a")]);
    let head = repo.head();
    begin(&repo, init()).unwrap();
    assert_eq!(repo.head(), head);
}

#[test]
fn a_repository_without_commits_is_refused_without_init() {
    let repo = Repo::unborn();
    repo.write("a.txt", "a");
    let err = begin(&repo, allow_dirty()).err().unwrap();
    assert!(
        matches!(&err, Error::NoCommits { root } if *root == repo.root),
        "{err}"
    );
    assert!(err.to_string().contains("--init"), "{err}");
    assert!(repo.git2().head().is_err(), "no commit was made");
    assert!(nothing_recorded(&repo));
}

#[test]
fn a_repository_without_commits_gets_its_current_files_committed_with_init() {
    let repo = Repo::unborn();
    repo.write("staged.txt", "s");
    repo.stage("staged.txt");
    repo.write("staged-then-deleted.txt", "d");
    repo.stage("staged-then-deleted.txt");
    repo.remove("staged-then-deleted.txt");
    repo.write("untracked.txt", "u");
    let session = begin(&repo, init()).unwrap();
    let git = repo.git2();
    let head = git.head().unwrap().peel_to_commit().unwrap();
    let tree = head.tree().unwrap();
    assert!(tree.get_path("staged.txt".as_ref()).is_ok());
    assert!(tree.get_path("untracked.txt".as_ref()).is_ok());
    assert!(tree.get_path("staged-then-deleted.txt".as_ref()).is_err());
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    assert!(!session.info().dirty);
}

#[test]
fn a_subdirectory_of_a_repository_is_refused_naming_the_top() {
    let repo = Repo::with_files(&[("sub/a.txt", "a")]);
    let err = Session::begin(&repo.path("sub"), BeginOptions::default())
        .err()
        .unwrap();
    assert!(
        matches!(&err, Error::NotRepositoryRoot { root, top } if *root == repo.path("sub") && *top == repo.root),
        "{err}"
    );
}

#[test]
fn a_bare_repository_is_refused() {
    let repo = Repo::plain();
    git2::Repository::init_bare(&repo.root).unwrap();
    let err = begin(&repo, init()).err().unwrap();
    assert!(matches!(err, Error::BareRepository { .. }), "{err}");
}

#[test]
fn a_missing_workspace_is_an_io_error() {
    let repo = Repo::plain();
    let err = Session::begin(&repo.path("missing"), init()).err().unwrap();
    assert!(
        matches!(&err, Error::Io { path, .. } if *path == repo.path("missing")),
        "{err}"
    );
}

#[test]
fn a_sparse_checkout_is_refused() {
    let repo = Repo::with_files(&[("a.txt", "a")]);
    repo.git2()
        .config()
        .unwrap()
        .set_bool("core.sparseCheckout", true)
        .unwrap();
    let err = begin(&repo, BeginOptions::default()).err().unwrap();
    assert!(matches!(err, Error::SparseCheckout { .. }), "{err}");
}

macro_rules! dirty_trees_are_refused {
    ($($name:ident: |$repo:ident| $setup:block => $path:expr;)*) => {$(
        #[test]
        fn $name() {
            let $repo = Repo::with_files(&[("a.txt", "a\n"), ("dir/b.txt", "b\n")]);
            $setup
            let user_state = $repo.user_git_state();
            let err = begin(&$repo, BeginOptions::default()).err().unwrap();
            match &err {
                Error::DirtyTree { paths, count } => {
                    assert_eq!(paths, &[PathBuf::from($path)]);
                    assert_eq!(*count, 1);
                }
                other => panic!("expected a dirty tree, got {other}"),
            }
            assert!(err.to_string().contains("--allow-dirty"), "{err}");
            assert!(nothing_recorded(&$repo));
            assert_eq!($repo.user_git_state(), user_state);
            assert!(matches!(check_clean(&$repo.root), Err(Error::DirtyTree { .. })));
            // The same tree is accepted with allow_dirty.
            assert!(begin(&$repo, allow_dirty()).unwrap().info().dirty);
        }
    )*};
}

dirty_trees_are_refused! {
    staged_change: |repo| { repo.write("a.txt", "staged\n"); repo.stage("a.txt"); } => "a.txt";
    unstaged_change: |repo| { repo.write("dir/b.txt", "changed\n"); } => "dir/b.txt";
    deleted_file: |repo| { repo.remove("a.txt"); } => "a.txt";
    untracked_file: |repo| { repo.write("new.txt", "n"); } => "new.txt";
    untracked_directory: |repo| { repo.write("new/one", "1"); repo.write("new/two", "2"); } => "new/";
    executable_bit: |repo| { repo.chmod("a.txt", 0o755); } => "a.txt";
}

#[test]
fn ignored_files_leave_the_tree_clean() {
    let repo = Repo::with_files(&[(".gitignore", "*.log\ntarget/\n"), ("a.txt", "a")]);
    repo.write("debug.log", "log");
    repo.write("target/out", "o");
    check_clean(&repo.root).unwrap();
    assert!(!begin(&repo, BeginOptions::default()).unwrap().info().dirty);
}

#[test]
fn the_refusal_lists_twenty_paths_and_counts_them_all() {
    let repo = Repo::with_files(&[("a.txt", "a")]);
    for i in 0..25 {
        repo.write(&format!("new{i:02}.txt"), "n");
    }
    let err = begin(&repo, BeginOptions::default()).err().unwrap();
    let Error::DirtyTree { paths, count } = &err else {
        panic!("expected a dirty tree, got {err}");
    };
    assert_eq!(*count, 25);
    let expected: Vec<PathBuf> = (0..20).map(|i| format!("new{i:02}.txt").into()).collect();
    assert_eq!(paths, &expected);
    assert!(err.to_string().contains("new19.txt and 5 more"), "{err}");
}

#[test]
fn an_unmerged_index_is_refused_even_with_allow_dirty() {
    let repo = Repo::with_files(&[("a.txt", "base\n")]);
    repo.git(&["checkout", "-q", "-b", "other"]);
    repo.write("a.txt", "other\n");
    repo.git(&["commit", "-qam", "other"]);
    repo.git(&["checkout", "-q", "-"]);
    repo.write("a.txt", "main\n");
    repo.git(&["commit", "-qam", "main"]);
    let merge = common::git_command(&repo.root)
        .args(["merge", "-q", "other"])
        .output()
        .unwrap();
    assert!(!merge.status.success(), "the merge conflicts");
    let err = begin(&repo, allow_dirty()).err().unwrap();
    assert!(
        matches!(&err, Error::Unmerged { paths } if paths == &[PathBuf::from("a.txt")]),
        "{err}"
    );
    assert!(err.to_string().contains("git merge --abort"), "{err}");
    assert!(nothing_recorded(&repo));
}

#[test]
fn a_failed_begin_takes_back_what_it_recorded() {
    let repo = Repo::with_files(&[("a.txt", "a")]);
    // A tag named `harness` leaves no room for the tags `harness/<id>`, so
    // begin fails after recording the pre-run ref.
    let head = repo.head();
    repo.git(&["tag", "harness", &head]);
    let err = begin(&repo, BeginOptions::default()).err().unwrap();
    assert!(
        matches!(&err, Error::Git { action, .. } if action.starts_with("create the tag harness/")),
        "{err}"
    );
    assert!(nothing_recorded_but(&repo, "refs/tags/harness"));
}

#[test]
fn a_clean_run_records_head_as_its_pre_run_state() {
    let repo = Repo::with_files(&[("a.txt", "a")]);
    let options = BeginOptions {
        task: "make it shine".into(),
        model: "qwen3:8b".into(),
        ..BeginOptions::default()
    };
    let before = std::time::SystemTime::now();
    let session = begin(&repo, options).unwrap();
    let info = session.info();
    let id = session.id().clone();
    assert_eq!(info.id, id);
    assert_eq!(info.task, "make it shine");
    assert_eq!(info.model, "qwen3:8b");
    assert!(info.started_at + std::time::Duration::from_secs(1) >= before);
    assert_eq!(
        (info.ended_at, info.outcome, info.steps),
        (None, None, None)
    );
    assert_eq!(info.head.to_string(), repo.head());
    assert_eq!(info.pre_run, info.head);
    assert!(!info.dirty && !info.undone && info.accepted.is_none());

    let refs = repo.refs();
    assert!(refs.contains(&(format!("refs/tags/harness/{id}"), repo.head())));
    assert!(refs.contains(&(format!("refs/harness/{id}/pre"), repo.head())));

    let store = repo.store().expect("begin made the store");
    assert_eq!(session.store_dir(), store);
    assert!(!store.starts_with(&repo.dir));
    let run_dir = store.join(format!("harness/runs/{id}"));
    assert_eq!(session.run_dir(), run_dir);
    assert_eq!(info.dir, run_dir);
    assert!(run_dir.is_dir());
    assert_eq!(session.metadata_path(), run_dir.join("run.json"));
    assert!(session.metadata_path().is_file());
    assert_eq!(session.transcript_path(), run_dir.join("transcript.jsonl"));
    assert_eq!(session.root(), repo.root);
    let debug = format!("{session:?}");
    assert!(
        debug.starts_with(&format!("Session {{ id: RunId(\"{id}\")")),
        "{debug}"
    );
}

#[test]
fn a_dirty_run_records_a_snapshot_shaped_like_a_stash() {
    let repo = Repo::with_files(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    repo.write("a.txt", "staged\n");
    repo.stage("a.txt");
    repo.write("a.txt", "staged, then changed again\n");
    repo.write("untracked.txt", "u\n");
    let session = begin(&repo, allow_dirty()).unwrap();
    let info = session.info();
    assert!(info.dirty);
    assert_ne!(info.pre_run, info.head);

    let git = repo.git2();
    let pre = git
        .find_commit(git2::Oid::from_str(&info.pre_run.to_string()).unwrap())
        .unwrap();
    assert_eq!(pre.author().name().unwrap(), "harness");
    assert_eq!(pre.parent_id(0).unwrap().to_string(), repo.head());
    let blob = |tree: &git2::Tree, path: &str| {
        let entry = tree.get_path(path.as_ref()).unwrap();
        String::from_utf8(git.find_blob(entry.id()).unwrap().content().to_vec()).unwrap()
    };
    let worktree = pre.tree().unwrap();
    assert_eq!(blob(&worktree, "a.txt"), "staged, then changed again\n");
    assert_eq!(blob(&worktree, "untracked.txt"), "u\n");
    let index = pre.parent(1).unwrap().tree().unwrap();
    assert_eq!(blob(&index, "a.txt"), "staged\n");
    assert!(index.get_path("untracked.txt".as_ref()).is_err());
    // Right after begin, plain git sees no difference from the tag in tracked
    // files (it shows files untracked in the index as deleted, being blind to them).
    let id = session.id().to_string();
    let tag = format!("harness/{id}");
    assert_eq!(
        repo.git(&["diff", "--stat", &tag, "--", "a.txt", "b.txt"]),
        ""
    );
    repo.git(&["add", "-N", "untracked.txt"]);
    assert_eq!(repo.git(&["diff", "--stat", &tag]), "");
}

#[test]
fn begin_and_checkpoint_leave_the_users_index_stash_head_and_branch_alone() {
    let repo = Repo::with_files(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    repo.write("b.txt", "stashed\n");
    repo.git(&["stash", "-q"]);
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("a.txt", "staged\n");
    repo.stage("a.txt");
    repo.write("b.txt", "unstaged\n");
    repo.write("untracked.txt", "u\n");
    let user_state = repo.user_git_state();
    let stash_list = repo.git(&["stash", "list"]);
    let files = repo.tree();

    let mut session = begin(&repo, allow_dirty()).unwrap();
    assert_eq!(repo.user_git_state(), user_state);
    assert_eq!(repo.tree(), files);

    repo.write("agent.txt", "the agent's file\n");
    repo.write("b.txt", "the agent's edit\n");
    assert!(session.checkpoint("step 1").unwrap().is_some());
    assert_eq!(repo.user_git_state(), user_state);
    assert_eq!(repo.git(&["stash", "list"]), stash_list);
    assert_eq!(repo.git(&["symbolic-ref", "HEAD"]), "refs/heads/feature\n");
}

#[test]
fn run_ids_are_unique_and_sorted_even_when_begun_at_once() {
    let repo = Repo::with_files(&[("a.txt", "a")]);
    let ids: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    begin(&repo, BeginOptions::default())
                        .unwrap()
                        .id()
                        .to_string()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let listed: Vec<String> = Session::runs(&repo.root)
        .unwrap()
        .into_iter()
        .map(|r| r.id.to_string())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 4, "{ids:?}");
    assert_eq!(listed, sorted);
    let later = begin(&repo, BeginOptions::default()).unwrap();
    assert!(later.id().to_string() > sorted[3]);
}

#[test]
fn runs_are_listed_oldest_first_and_latest_is_the_newest() {
    let repo = Repo::with_files(&[("a.txt", "a")]);
    assert!(Session::runs(&repo.root).unwrap().is_empty());
    assert!(Session::latest(&repo.root).unwrap().is_none());
    let mut first = begin(
        &repo,
        BeginOptions {
            task: "one".into(),
            ..Default::default()
        },
    )
    .unwrap();
    first.finish(harness_undo::Outcome::Failed, 7).unwrap();
    let second = begin(
        &repo,
        BeginOptions {
            task: "two".into(),
            ..Default::default()
        },
    )
    .unwrap();
    let runs = Session::runs(&repo.root).unwrap();
    let tasks: Vec<&str> = runs.iter().map(|r| r.task.as_str()).collect();
    assert_eq!(tasks, ["one", "two"]);
    assert_eq!(runs[0].outcome, Some(harness_undo::Outcome::Failed));
    assert_eq!(runs[0].steps, Some(7));
    assert!(runs[0].ended_at.is_some());
    assert_eq!(runs[1].outcome, None);
    assert_eq!(
        Session::latest(&repo.root).unwrap().unwrap().id,
        *second.id()
    );
}

#[test]
fn listing_runs_outside_a_repository_finds_none_and_checking_is_refused() {
    let repo = Repo::plain();
    // Runs are read from the store, which a directory never used has not.
    assert_eq!(Session::runs(&repo.root).unwrap(), Vec::new());
    assert!(matches!(
        check_clean(&repo.root),
        Err(Error::NotARepository { .. })
    ));
}

#[test]
fn opening_an_unknown_run_is_refused() {
    let repo = Repo::with_files(&[("a.txt", "a")]);
    let id: harness_undo::RunId = "20250101-000000-000".parse().unwrap();
    let err = Session::open(&repo.root, &id).err().unwrap();
    assert!(
        matches!(&err, Error::UnknownRun { run, .. } if *run == id),
        "{err}"
    );
}

/// The refs of the harness's store of `repo` whose names hold `harness`.
fn store_run_refs(repo: &Repo) -> Vec<String> {
    let store = git2::Repository::open_bare(repo.store().expect("a store")).unwrap();
    let refs = store.references().unwrap();
    refs.flatten()
        .filter_map(|r| r.name().ok().map(str::to_owned))
        .filter(|name| name.contains("harness"))
        .collect()
}

#[test]
fn discard_forgets_a_run_that_never_started_in_the_workspace_and_the_store() {
    let repo = Repo::with_files(&[("a.txt", "a\n")]);
    repo.write("a.txt", "uncommitted\n");
    repo.write("new.txt", "untracked\n");
    let before = repo.tree();
    let mut session = begin(&repo, allow_dirty()).unwrap();
    // The copy names the run in the store; discard must remove that name too.
    session.wait_for_store().unwrap();
    assert_eq!(
        store_run_refs(&repo).len(),
        1,
        "{:?}",
        store_run_refs(&repo)
    );

    session.discard().unwrap();
    assert!(nothing_recorded(&repo));
    assert_eq!(store_run_refs(&repo), Vec::<String>::new());
    assert_eq!(Session::runs(&repo.root).unwrap(), Vec::new());
    assert_eq!(repo.tree(), before, "the user's work is where it was");
}

#[test]
fn discard_of_a_run_still_copying_into_the_store_leaves_no_name_there() {
    let repo = Repo::with_files(&[("a.txt", "a\n")]);
    let session = begin(&repo, BeginOptions::default()).unwrap();
    session.discard().unwrap();
    assert!(nothing_recorded(&repo));
    assert_eq!(store_run_refs(&repo), Vec::<String>::new());
}

#[test]
fn discard_keeps_a_run_that_has_a_checkpoint() {
    let repo = Repo::with_files(&[("a.txt", "a\n")]);
    let mut session = begin(&repo, BeginOptions::default()).unwrap();
    let id = session.id().clone();
    repo.write("a.txt", "the agent's\n");
    session.checkpoint("step 1").unwrap().expect("a change");

    let err = session.discard().err().unwrap();
    assert!(
        matches!(&err, Error::RunStarted { run, checkpoints: 1 } if *run == id),
        "{err}"
    );
    assert!(err.to_string().contains("harness undo"), "{err}");
    let runs = Session::runs(&repo.root).unwrap();
    assert_eq!(runs.iter().map(|run| &run.id).collect::<Vec<_>>(), [&id]);
    let mut reopened = Session::open(&repo.root, &id).unwrap();
    reopened.undo(harness_undo::Force::No).unwrap();
    assert_eq!(repo.read("a.txt"), "a\n");
}
