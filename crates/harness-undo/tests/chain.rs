//! Chains of runs (`BeginOptions::follows`, `Chain`): a follow-up begins on the tree the
//! run before it left, the user's own edits between runs are recorded as theirs, and the
//! chain is undone one run at a time or whole, redone, and accepted as one commit.

#![cfg(unix)]
// Test helpers outside #[test] functions unwrap too: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{Entry, IndexEntry, Repo};
use harness_undo::{BeginOptions, Chain, Error, Force, Outcome, RunId, Session, StepOf};

/// Everything undo must restore: the whole working tree (untracked files included) and
/// the index.
type State = (BTreeMap<String, Entry>, Vec<IndexEntry>);

fn state(repo: &Repo) -> State {
    (repo.tree(), repo.index())
}

fn project() -> Repo {
    Repo::with_files(&[
        (".gitignore", "target/\n"),
        ("src/lib.rs", "pub fn one() {}\n"),
        ("notes.md", "notes\n"),
    ])
}

/// Runs one recorded run (a follow-up of `follows`, if given) whose step is `step`, and
/// returns its id once it is finished.
fn run(repo: &Repo, task: &str, follows: Option<&RunId>, step: impl FnOnce(&Repo)) -> RunId {
    let options = BeginOptions {
        task: task.into(),
        model: "m".into(),
        follows: follows.cloned(),
        ..BeginOptions::default()
    };
    let mut session = Session::begin(&repo.root, options).unwrap();
    step(repo);
    session.checkpoint("step").unwrap();
    session.finish(Outcome::Succeeded, 1).unwrap();
    session.id().clone()
}

/// The chain of the tests: three runs, the user's own edit between the second and the
/// third; the states before the first, after each run and after the user's edit.
struct Scene {
    repo: Repo,
    runs: [RunId; 3],
    /// Before the first run, after it, after the second, after the user's edit, after the
    /// third.
    states: [State; 5],
}

fn scene() -> Scene {
    let repo = project();
    let s0 = state(&repo);
    let r1 = run(&repo, "add two", None, |r| {
        r.write("src/lib.rs", "pub fn one() {}\npub fn two() {}\n");
        r.write("src/two.rs", "// new, untracked\n");
    });
    let s1 = state(&repo);
    let r2 = run(&repo, "now also three", Some(&r1), |r| {
        r.write("src/three.rs", "// three\n");
        r.remove("notes.md");
    });
    let s2 = state(&repo);
    // The user's own edit: a changed file, a new one, and one staged.
    repo.write("src/lib.rs", "// mine\npub fn one() {}\npub fn two() {}\n");
    repo.write("mine.txt", "my own file\n");
    repo.stage("mine.txt");
    let su = state(&repo);
    let r3 = run(&repo, "and four", Some(&r2), |r| {
        r.write("src/four.rs", "// four\n");
    });
    let s3 = state(&repo);
    Scene {
        repo,
        runs: [r1, r2, r3],
        states: [s0, s1, s2, su, s3],
    }
}

fn chain(scene: &Scene) -> Chain {
    Chain::of(&scene.repo.root, &scene.runs[2]).unwrap()
}

#[test]
fn a_follow_up_is_linked_to_its_run_and_tells_the_users_edits_apart() {
    let scene = scene();
    let runs = chain(&scene).runs();
    let ids: Vec<RunId> = runs.iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids, scene.runs.to_vec());
    assert_eq!(runs[0].parent, None);
    assert_eq!(runs[1].parent.as_ref(), Some(&scene.runs[0]));
    assert_eq!(runs[2].parent.as_ref(), Some(&scene.runs[1]));
    // Only the third began on a tree the user had changed.
    let edits: Vec<bool> = runs.iter().map(|r| r.user_edits).collect();
    assert_eq!(edits, [false, false, true]);
    // The chain of any of its runs is the whole chain.
    let of_first: Vec<RunId> = Chain::of(&scene.repo.root, &scene.runs[0])
        .unwrap()
        .runs()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(of_first, scene.runs.to_vec());
}

#[test]
fn the_steps_of_a_chain_keep_the_users_edits_apart_from_the_runs() {
    let scene = scene();
    let steps = chain(&scene).steps().unwrap();
    let [r1, r2, r3] = scene.runs.clone();
    let of: Vec<StepOf> = steps.iter().map(|s| s.of.clone()).collect();
    assert_eq!(
        of,
        [
            StepOf::Run(r1),
            StepOf::Run(r2),
            StepOf::UserBefore(r3.clone()),
            StepOf::Run(r3)
        ]
    );
    let paths =
        |i: usize| -> Vec<PathBuf> { steps[i].diff.files.iter().map(|f| f.path.clone()).collect() };
    assert_eq!(
        paths(2),
        [PathBuf::from("mine.txt"), PathBuf::from("src/lib.rs")]
    );
    assert_eq!(paths(3), [PathBuf::from("src/four.rs")]);
    assert_eq!(
        paths(1),
        [PathBuf::from("notes.md"), PathBuf::from("src/three.rs")]
    );
}

#[test]
fn undo_steps_back_one_run_and_never_past_the_users_edits() {
    let scene = scene();
    let [s0, _, _, su, s3] = scene.states.clone();
    let (session, restored) = chain(&scene).undo(Force::No).unwrap();
    assert_eq!(session.id(), &scene.runs[2]);
    assert!(restored.saved.is_some());
    assert_eq!(
        state(&scene.repo),
        su,
        "back to the tree the third run began on"
    );
    // The next step back would take the user's edit: refused, and nothing changes.
    let err = chain(&scene).undo(Force::No).unwrap_err();
    assert!(
        matches!(&err, Error::UserEdits { run, before: Some(before), paths, .. }
            if *run == scene.runs[1] && *before == scene.runs[2]
                && paths.contains(&PathBuf::from("mine.txt"))),
        "{err}"
    );
    assert!(err.to_string().contains("your own edits"), "{err}");
    assert_eq!(state(&scene.repo), su);
    // The whole chain: before the first run, byte for byte.
    let (session, _) = chain(&scene).undo_all(Force::No).unwrap();
    assert_eq!(session.id(), &scene.runs[0]);
    assert_eq!(state(&scene.repo), s0);
    let err = chain(&scene).undo(Force::No).unwrap_err();
    assert!(matches!(err, Error::ChainUndone { .. }), "{err}");
    // Redo comes forward one run at a time, the user's edit with the run before it.
    let expected = [&scene.states[1], &su, &s3];
    for (n, want) in expected.into_iter().enumerate() {
        let (session, _) = chain(&scene).redo(Force::No).unwrap();
        assert_eq!(session.id(), &scene.runs[n]);
        assert_eq!(&state(&scene.repo), want, "after redo {}", n + 1);
    }
    let err = chain(&scene).redo(Force::No).unwrap_err();
    assert!(matches!(err, Error::NothingToRedo { .. }), "{err}");
}

#[test]
fn undo_without_user_edits_restores_each_earlier_state_in_turn() {
    let repo = project();
    let mut states = vec![state(&repo)];
    let mut last: Option<RunId> = None;
    for n in 1..=3 {
        let id = run(&repo, &format!("step {n}"), last.as_ref(), |r| {
            r.write(&format!("f{n}.txt"), format!("{n}\n"));
            r.write("src/lib.rs", format!("pub fn v{n}() {{}}\n"));
        });
        states.push(state(&repo));
        last = Some(id);
    }
    let last = last.unwrap();
    for want in states[..3].iter().rev() {
        Chain::of(&repo.root, &last)
            .unwrap()
            .undo(Force::No)
            .unwrap();
        assert_eq!(&state(&repo), want);
    }
}

#[test]
fn edits_made_after_the_last_run_are_not_undone_either() {
    let repo = project();
    let r1 = run(&repo, "one", None, |r| r.write("a.txt", "a\n"));
    let r2 = run(&repo, "two", Some(&r1), |r| r.write("b.txt", "b\n"));
    repo.write("a.txt", "the user's\n");
    let before = state(&repo);
    let err = Chain::of(&repo.root, &r2)
        .unwrap()
        .undo(Force::No)
        .unwrap_err();
    assert!(
        matches!(&err, Error::UserEdits { before: None, paths, .. } if *paths == [PathBuf::from("a.txt")]),
        "{err}"
    );
    assert_eq!(state(&repo), before);
    let steps = Chain::of(&repo.root, &r2).unwrap().steps().unwrap();
    assert_eq!(steps.last().unwrap().of, StepOf::UserAfter(r2));
}

#[test]
fn accept_commits_the_whole_chain_as_one_commit_naming_its_runs() {
    let scene = scene();
    let repo = &scene.repo;
    let head = repo.head();
    let (session, accepted) = chain(&scene).accept().unwrap();
    assert_eq!(session.id(), &scene.runs[0]);
    assert_eq!(
        repo.git(&["rev-list", "--count", &format!("{head}..HEAD")])
            .trim(),
        "1"
    );
    assert_eq!(repo.git(&["rev-parse", "HEAD^"]).trim(), head);
    // Everything is committed: the tree is clean, and the commit holds the user's edit.
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    assert_eq!(repo.git(&["show", "HEAD:mine.txt"]), "my own file\n");
    assert_eq!(repo.tree(), scene.states[4].0);
    for run in &scene.runs {
        assert!(
            accepted.message.contains(&format!("Harness-Run: {run}")),
            "{}",
            accepted.message
        );
    }
    assert!(
        accepted.message.starts_with("add two (+2 follow-ups)\n"),
        "{}",
        accepted.message
    );
    assert!(accepted.message.contains(&format!(
        "Your own edits, made before run {}",
        scene.runs[2]
    )));
    let runs = Session::runs(&repo.root).unwrap();
    assert!(runs.iter().all(|r| r.accepted.is_some()));
    // Nothing is left to follow up.
    let options = BeginOptions {
        follows: Some(scene.runs[2].clone()),
        ..BeginOptions::default()
    };
    let err = Session::begin(&repo.root, options).unwrap_err();
    assert!(matches!(err, Error::FollowsAccepted { .. }), "{err}");
}

#[test]
fn a_follow_up_is_refused_where_the_tree_is_not_the_runs_result() {
    let repo = project();
    let r1 = run(&repo, "one", None, |r| r.write("a.txt", "a\n"));
    let follow = |run: &RunId| BeginOptions {
        follows: Some(run.clone()),
        ..BeginOptions::default()
    };
    let count = || Session::runs(&repo.root).unwrap().len();
    // The tree is dirty with the run's work: without `follows` that is refused as ever.
    let err = Session::begin(&repo.root, BeginOptions::default()).unwrap_err();
    assert!(matches!(err, Error::DirtyTree { .. }), "{err}");
    // Already followed by a run not undone.
    let r2 = run(&repo, "two", Some(&r1), |r| r.write("b.txt", "b\n"));
    let err = Session::begin(&repo.root, follow(&r1)).unwrap_err();
    assert!(
        matches!(&err, Error::AlreadyFollowed { by, .. } if *by == r2),
        "{err}"
    );
    // Undone.
    Chain::of(&repo.root, &r2).unwrap().undo(Force::No).unwrap();
    let err = Session::begin(&repo.root, follow(&r2)).unwrap_err();
    assert!(matches!(err, Error::FollowsUndone { .. }), "{err}");
    // HEAD moved since.
    Chain::of(&repo.root, &r2).unwrap().redo(Force::No).unwrap();
    repo.commit_all("the user's commit");
    let err = Session::begin(&repo.root, follow(&r2)).unwrap_err();
    assert!(matches!(err, Error::FollowsMovedHead { .. }), "{err}");
    assert_eq!(count(), 2, "no refused follow-up is recorded");
}
