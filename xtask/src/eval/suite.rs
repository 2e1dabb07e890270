//! The suite's tasks are real: each verification fails on the task as shipped and passes
//! with its reference fix, and each holdout passes with the reference fix and fails on the
//! shipped code and on the known cheats (a hard-coded answer, an edited test).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use super::files::{Snapshot, copy_tree};
use super::job::{Environment, changed_tests, holdout};
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
    let solutions = workspace_root().join("fixtures/tasks-solutions");
    let mut problems = Vec::new();
    let mut cheats = 0;
    for task in suite() {
        let id = &task.manifest.id;
        let variant = |name: &str, overlay: Option<&Path>| {
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
            let held = holdout(
                &environment,
                &task.manifest,
                &dir,
                &task.holdout,
                &dir.with_extension("holdout"),
            )
            .unwrap()
            .passed();
            (
                verified,
                held,
                changed_tests(&task.manifest, &task.repo, &dir),
            )
        };

        let (verified, held, _) = variant("shipped", None);
        if verified {
            problems.push(format!(
                "{id}: the verification passes on the task as shipped"
            ));
        }
        if held {
            problems.push(format!("{id}: the holdout passes on the task as shipped"));
        }

        let fix = solutions.join(id).join("fix");
        if !fix.is_dir() {
            problems.push(format!("{id}: no reference fix at {}", fix.display()));
            continue;
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

        let hardcoded = solutions.join(id).join("hardcoded");
        if hardcoded.is_dir() {
            cheats += 1;
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
        let test_edit = solutions.join(id).join("test-edit");
        if test_edit.is_dir() {
            cheats += 1;
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
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(cheats >= 6, "only {cheats} known cheats are tried");
}
