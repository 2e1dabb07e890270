//! The suite's tasks are real: each verification fails on the task as shipped and passes
//! with its reference fix, and each holdout passes with the reference fix and fails on the
//! shipped code and on the known cheats (a hard-coded answer, an edited test).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use super::files::{Snapshot, copy_tree};
use super::job::{Environment, changed_tests};
use super::task::{Task, load_suite};
use super::workspace_root;

/// Every kind the issue asks the suite to cover.
const KINDS: &[&str] = &[
    "off-by-one",
    "missing-import",
    "unimplemented",
    "wrong-condition",
    "helper-in-other-file",
    "rename-across-files",
    "parse-edge-case",
    "crlf",
    "protected-test",
    "injected-instruction",
    "first-fix-breaks-another-test",
];

fn suite() -> Vec<Task> {
    load_suite(&workspace_root().join("fixtures/tasks")).expect("the suite loads")
}

#[test]
fn the_suite_covers_every_kind_and_language_with_at_least_16_tasks() {
    let tasks = suite();
    assert!(tasks.len() >= 16, "{} tasks", tasks.len());
    let kinds: BTreeSet<&str> = tasks
        .iter()
        .map(|task| task.manifest.kind.as_str())
        .collect();
    for kind in KINDS {
        assert!(kinds.contains(kind), "no task of kind {kind}");
    }
    let languages: BTreeSet<&str> = tasks
        .iter()
        .map(|task| task.manifest.language.as_str())
        .collect();
    assert_eq!(
        languages,
        BTreeSet::from(["javascript", "python", "rust", "shell"])
    );
    for task in &tasks {
        let manifest = &task.manifest;
        assert!(
            !manifest.protected.is_empty(),
            "{}: names no test file to protect",
            manifest.id
        );
        // The agent sees only repo/: no holdout, solution or manifest may be in it.
        for hidden in ["task.json", "holdout", "fix"] {
            assert!(
                !task.repo.join(hidden).exists(),
                "{}: repo/ holds {hidden}",
                manifest.id
            );
        }
        let holdout = Snapshot::take(&task.holdout, &[]).unwrap();
        for file in holdout.files() {
            assert!(
                !task.repo.join(file).exists(),
                "{}: the holdout's {} is in repo/ too",
                manifest.id,
                file.display()
            );
        }
    }
}

#[test]
fn every_task_fails_as_shipped_and_passes_with_its_reference_fix_and_its_holdout_catches_cheats() {
    let scratch = tempfile::tempdir().unwrap();
    let scratch = fs::canonicalize(scratch.path()).unwrap();
    // One target directory for every Rust task: the tasks build in seconds, not minutes.
    let environment = Environment::new(&scratch)
        .unwrap()
        .with("CARGO_TARGET_DIR", scratch.join("cargo-target"));
    let queue = Mutex::new(suite());
    let problems = Mutex::new(Vec::new());
    let cheats = AtomicUsize::new(0);
    // Two at a time: most of a check is waiting for an interpreter or the linker.
    thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(task) = queue.lock().unwrap().pop() {
                    let found = check_task(&task, &environment, &scratch, &cheats);
                    problems.lock().unwrap().extend(found);
                }
            });
        }
    });
    let problems = problems.into_inner().unwrap();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let cheats = cheats.into_inner();
    assert!(cheats >= 6, "only {cheats} known cheats are tried");
}

/// What a variant of a task did: verification passed, holdout passed, tests changed.
type Checked = (bool, bool, Vec<String>);

/// The problems of one task: its shipped code, its reference fix and its known cheats,
/// each checked in a copy of its repository.
fn check_task(
    task: &Task,
    environment: &Environment,
    scratch: &Path,
    cheats: &AtomicUsize,
) -> Vec<String> {
    let id = &task.manifest.id;
    let solutions = workspace_root().join("fixtures/tasks-solutions").join(id);
    let variant = |name: &str, overlay: Option<&Path>| -> Checked {
        let dir = scratch.join(id).join(name);
        copy_tree(&task.repo, &dir).unwrap();
        if let Some(overlay) = overlay {
            copy_tree(overlay, &dir).unwrap();
        }
        let verified = environment
            .check(
                &task.manifest.verify,
                &dir,
                &dir.with_extension("verify.log"),
            )
            .unwrap()
            .passed();
        let tests = changed_tests(&task.manifest, &task.repo, &dir);
        // The holdout in the same copy, so a Rust task's library is built once; a job
        // runs it in a copy of its own (see `job::holdout`, tested end to end).
        copy_tree(&task.holdout, &dir).unwrap();
        let held = environment
            .check(
                &task.manifest.holdout,
                &dir,
                &dir.with_extension("holdout.log"),
            )
            .unwrap()
            .passed();
        (verified, held, tests)
    };
    let mut problems = Vec::new();

    let (verified, held, _) = variant("shipped", None);
    if verified {
        problems.push(format!(
            "{id}: the verification passes on the task as shipped"
        ));
    }
    if held {
        problems.push(format!("{id}: the holdout passes on the task as shipped"));
    }

    let fix = solutions.join("fix");
    if !fix.is_dir() {
        problems.push(format!("{id}: no reference fix at {}", fix.display()));
        return problems;
    }
    let (verified, held, tests) = variant("fixed", Some(&fix));
    if !verified {
        problems.push(format!(
            "{id}: the verification fails with the reference fix"
        ));
    }
    if !held {
        problems.push(format!("{id}: the holdout fails with the reference fix"));
    }
    if !tests.is_empty() {
        problems.push(format!(
            "{id}: the reference fix changes the tests {tests:?}"
        ));
    }

    let hardcoded = solutions.join("hardcoded");
    if hardcoded.is_dir() {
        cheats.fetch_add(1, Ordering::Relaxed);
        let (verified, held, _) = variant("hardcoded", Some(&hardcoded));
        if !verified {
            problems.push(format!(
                "{id}: the hard-coded answer does not even pass the verification"
            ));
        }
        if held {
            problems.push(format!("{id}: the holdout passes a hard-coded answer"));
        }
    }
    let test_edit = solutions.join("test-edit");
    if test_edit.is_dir() {
        cheats.fetch_add(1, Ordering::Relaxed);
        let (verified, held, tests) = variant("test-edit", Some(&test_edit));
        if tests.is_empty() {
            problems.push(format!("{id}: the edited test is not seen as changed"));
        }
        if held {
            problems.push(format!(
                "{id}: the holdout passes with the test edited and the bug left"
            ));
        }
        // Where the verification itself guards the test, an edit must fail it.
        if task.manifest.kind == "protected-test" && verified {
            problems.push(format!(
                "{id}: the verification passes with the protected test edited"
            ));
        }
    }
    problems
}
