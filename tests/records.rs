//! Issue 45, class 2 and the end of class 7: nothing the harness records reveals what it
//! hides, its stores are its user's alone, and no run in progress is pruned.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::{Model, Repo, Turn};

/// The mode bits of `path`, not following a link.
fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

/// The directory of all stores under the test's home, and the workspace's store in it.
fn stores(repo: &Repo) -> (PathBuf, PathBuf) {
    let runs = repo.runs_dir();
    let store = runs.parent().and_then(Path::parent).unwrap().to_path_buf();
    (store.parent().unwrap().to_path_buf(), store)
}

/// calc.py of the `calc` fixture, fixed.
const FIXED: &str = "def add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a * b\n";

/// A run that changes calc.py and passes, under the umask most systems have (022).
fn a_run_under_umask_022(repo: &Repo) {
    let model = Model::start();
    model.script(vec![
        Turn::call(
            "write_file",
            json!({"path": "calc.py", "content": FIXED, "overwrite": true}),
        ),
        Turn::Text("Fixed."),
    ]);
    repo.harness_through(
        &["sh", "-c", "umask 022; exec \"$@\"", "sh"],
        &[
            "run",
            "--sandbox",
            "none",
            "--attempts",
            "1",
            "--host",
            &model.url(),
            "--verify",
            "python3 -m unittest -q",
            "fix add",
        ],
    )
    .assert_exit(0);
}

#[test]
fn issue_45_stores_runs_and_transcripts_are_private_whatever_the_umask() {
    let repo = Repo::from_fixture("calc");
    a_run_under_umask_022(&repo);
    let (all, store) = stores(&repo);
    let runs = repo.runs_dir();
    let run = fs::read_dir(&runs).unwrap().next().unwrap().unwrap().path();
    for dir in [&all, &store, &runs, &run] {
        assert_eq!(mode(dir), 0o700, "{}", dir.display());
    }
    for file in [run.join("run.json"), run.join("transcript.jsonl")] {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
}

#[test]
fn issue_45_a_store_made_readable_before_is_made_private_and_said_once() {
    let repo = Repo::from_fixture("calc");
    a_run_under_umask_022(&repo);
    let (all, store) = stores(&repo);
    let run = fs::read_dir(repo.runs_dir())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // As a harness before this one left them.
    for path in [&all, &store, &run] {
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    fs::set_permissions(
        run.join("transcript.jsonl"),
        fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let listed = repo.harness(&["runs"]);
    listed.assert_exit(0).assert_stderr_has(&[
        &format!(
            "note: {} was readable by other local users",
            store.display()
        ),
        &format!("{} was readable", run.join("transcript.jsonl").display()),
    ]);
    assert_eq!(mode(&store), 0o700);
    assert_eq!(mode(&all), 0o700);
    assert_eq!(mode(&run.join("transcript.jsonl")), 0o600);
    let again = repo.harness(&["runs"]);
    again.assert_exit(0);
    assert!(
        !again.stderr.contains("readable by other"),
        "said once\n{again}"
    );
}
