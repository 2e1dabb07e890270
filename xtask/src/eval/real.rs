//! The tasks on real projects (`fixtures/tasks-real/`) are real: each names a pinned
//! release of a project large enough to get lost in, the release as published passes its
//! verification (the project's own tests), the task's patch makes it fail, and the patch
//! reversed gives back the release, which passes again; the holdout fails with the bug
//! and passes without it.
//!
//! These need the releases: from the cache of archives or from the registries. Without
//! either, each task is skipped with the reason on stderr (CI reaches the registries, so
//! there they run).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::thread;

use super::job::{self, Environment};
use super::source::{self, FetchError};
use super::task::{Task, load_suite};
use super::workspace_root;

/// Files a project needs at least, or lines its largest module: "a real repository".
const MIN_FILES: usize = 31;
const MIN_MODULE_LINES: usize = 2001;

fn real_suite() -> Vec<Task> {
    load_suite(&workspace_root().join("fixtures/tasks-real")).expect("the real suite loads")
}

#[test]
fn the_real_suite_has_4_tasks_in_two_languages_each_from_a_registry_release() {
    let tasks = real_suite();
    assert!(tasks.len() >= 4, "{} tasks", tasks.len());
    let languages: BTreeSet<&str> = tasks
        .iter()
        .map(|task| task.manifest.language.as_str())
        .collect();
    assert!(languages.len() >= 2, "languages: {languages:?}");
    let mut projects = BTreeSet::new();
    for task in &tasks {
        let manifest = &task.manifest;
        let source = manifest.source.as_ref().expect("a source");
        projects.insert(&source.package);
        assert!(
            !manifest.protected.is_empty(),
            "{}: names no test file to protect",
            manifest.id
        );
        let patch = fs::read_to_string(task.patch.as_ref().expect("a patch")).unwrap();
        assert!(
            patch.contains("\n--- a/") && patch.contains("\n+++ b/") && patch.contains("@@ "),
            "{}: bug.patch is not a unified diff",
            manifest.id
        );
        for file in &manifest.protected {
            assert!(
                !patch.contains(&format!("+++ b/{file}")),
                "{}: the bug is put into the protected {file}",
                manifest.id
            );
        }
    }
    assert_eq!(projects.len(), tasks.len(), "one task per project");
}

#[test]
fn every_real_task_passes_as_released_fails_with_its_bug_and_passes_with_it_reversed() {
    let cache = source::cache_dir().expect("a cache directory");
    let scratch = tempfile::tempdir().unwrap();
    let scratch = fs::canonicalize(scratch.path()).unwrap();
    // One target directory for the Rust tasks: the second build of each is incremental.
    let environment = Environment::new(&scratch)
        .unwrap()
        .with("CARGO_TARGET_DIR", scratch.join("cargo-target"));
    let queue = Mutex::new(real_suite());
    let problems = Mutex::new(Vec::new());
    let skipped = Mutex::new(Vec::new());
    thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(task) = queue.lock().unwrap().pop() {
                    match check_task(&task, &cache, &environment, &scratch) {
                        Ok(found) => problems.lock().unwrap().extend(found),
                        Err(why) => skipped.lock().unwrap().push(why),
                    }
                }
            });
        }
    });
    for why in skipped.into_inner().unwrap() {
        eprintln!("skipped (no cached archive and no network): {why}");
    }
    let problems = problems.into_inner().unwrap();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The problems of one task; `Err` with the reason when its release cannot be had.
fn check_task(
    task: &Task,
    cache: &Path,
    environment: &Environment,
    scratch: &Path,
) -> Result<Vec<String>, String> {
    let id = &task.manifest.id;
    let source = task.manifest.source.as_ref().expect("a source");
    match source::archive(source, cache) {
        Ok(_) => {}
        Err(FetchError::Unreachable(why)) => return Err(format!("{id}: {why}")),
        Err(error) => return Ok(vec![format!("{id}: {error}")]),
    }
    let into = scratch.join("sources");
    let prepared = match source::prepare(task, cache, &into) {
        Ok(prepared) => prepared,
        Err(error) => return Ok(vec![format!("{id}: {error:#}")]),
    };
    let tree = &prepared.repo;
    let mut problems = Vec::new();

    let (files, lines) = size(tree);
    if files < MIN_FILES && lines < MIN_MODULE_LINES {
        problems.push(format!(
            "{id}: {files} files and {lines} lines in its largest module: too small to be a \
             real repository"
        ));
    }

    let logs = scratch.join("logs");
    fs::create_dir_all(&logs).unwrap();
    let verify = |name: &str| -> bool {
        environment
            .check(
                &task.manifest.verify,
                tree,
                &logs.join(format!("{id}.{name}.verify.log")),
            )
            .unwrap()
            .passed()
    };
    let holdout = |name: &str| -> bool {
        job::holdout(
            environment,
            &task.manifest,
            tree,
            &task.holdout,
            &scratch.join("holdouts").join(format!("{id}-{name}")),
        )
        .unwrap()
        .passed()
    };

    if verify("bug") {
        problems.push(format!("{id}: the verification passes with the bug"));
    }
    if holdout("bug") {
        problems.push(format!("{id}: the holdout passes with the bug"));
    }
    let patch = task.patch.as_ref().expect("a patch");
    if let Err(error) = source::git(tree, &["apply", "-R"], Some(patch)) {
        problems.push(format!("{id}: the patch does not reverse: {error:#}"));
        return Ok(problems);
    }
    let pristine = Command::new("git")
        .arg("-C")
        .arg(tree)
        .args(["diff", "--quiet", "HEAD"])
        .status()
        .unwrap();
    if !pristine.success() {
        problems.push(format!(
            "{id}: the patch reversed is not the release as published"
        ));
    }
    if !verify("release") {
        problems.push(format!(
            "{id}: the verification fails on the release as published (the patch reversed)"
        ));
    }
    if !holdout("release") {
        problems.push(format!("{id}: the holdout fails on the release"));
    }
    Ok(problems)
}

/// How many files git tracks in `tree`, and the lines of its largest source module.
fn size(tree: &Path) -> (usize, usize) {
    let listed = Command::new("git")
        .arg("-C")
        .arg(tree)
        .args(["ls-files", "-z"])
        .output()
        .unwrap();
    let files: Vec<String> = listed
        .stdout
        .split(|&byte| byte == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect();
    let largest = files
        .iter()
        .filter(|name| {
            [".py", ".rs", ".js", ".ts"]
                .iter()
                .any(|e| name.ends_with(e))
        })
        .map(|name| fs::read_to_string(tree.join(name)).map_or(0, |text| text.lines().count()))
        .max()
        .unwrap_or(0);
    (files.len(), largest)
}
