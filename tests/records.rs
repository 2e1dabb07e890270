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
    let store = runs
        .parent()
        .and_then(Path::parent)
        .expect("runs are two levels down in a store")
        .to_path_buf();
    let all = store.parent().expect("a store is in the stores' directory");
    (all.to_path_buf(), store)
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
    for dir in [&all, &store, &store.join("harness"), &runs, &run] {
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

/// The secrets of the hidden-records test, one per way a file is hidden.
const DOTENV_SECRET: &str = "DOTENV-SECRET-5e7a91";
const DENIED_SECRET: &str = "DENIED-DIR-SECRET-0c44b2";

/// Every object of the workspace's repository, contents included, and the log of every
/// ref with patches, as git prints them.
fn everything_in_git(repo: &Repo) -> String {
    let mut text = String::new();
    for args in [
        &["cat-file", "--batch-all-objects", "--batch", "--unordered"][..],
        &["log", "--all", "--reflog", "-p", "--binary"][..],
    ] {
        let output = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo.root)
            .output()
            .expect("git runs");
        text.push_str(&String::from_utf8_lossy(&output.stdout));
    }
    text
}

/// Issue 45's first reproduction of class 2: with `--allow-dirty`, an untracked `.env` and
/// a file under the user's deny rule were in objects under `refs/harness/…`, and a command
/// printed them with `git show`. Now the model's commands find neither anywhere in `.git`,
/// the repository stays whole, and undo brings both back byte for byte.
#[test]
fn issue_45_with_allow_dirty_no_command_reads_a_hidden_file_from_the_runs_records() {
    let repo = Repo::from_fixture("calc");
    repo.user_config("deny = [\"secrets/\"]\n");
    repo.file(".env", &format!("TOKEN={DOTENV_SECRET}\n"));
    fs::create_dir(repo.root.join("secrets")).unwrap();
    repo.file("secrets/token.txt", DENIED_SECRET);
    repo.file("notes.txt", "the user's untracked notes\n");
    let before = repo.snapshot();
    let model = Model::start();
    let attack = "git for-each-ref --format='%(refname)' refs/harness refs/tags/harness \
                  | while read ref; do git show \"$ref:.env\" \"$ref:secrets/token.txt\"; done; \
                  git cat-file --batch-all-objects --batch; git log --all -p; \
                  git fsck --lost-found; cat .git/objects/pack/* 2>/dev/null | head -c 100000";
    model.script(vec![
        Turn::call("run_command", json!({"argv": ["sh", "-c", attack]})),
        Turn::call(
            "write_file",
            json!({"path": "calc.py", "content": FIXED, "overwrite": true}),
        ),
        Turn::Text("Fixed."),
    ]);
    repo.harness(&[
        "run",
        "--allow-dirty",
        "--attempts",
        "1",
        "--host",
        &model.url(),
        "--verify",
        "python3 -m unittest -q",
        "fix add",
    ])
    .assert_exit(0);
    let results = serde_json::to_string(&repo.records("tool")).unwrap();
    let chats = serde_json::to_string(&model.chats()).unwrap();
    let git = everything_in_git(&repo);
    assert!(
        results.contains("the user's untracked notes"),
        "the command read the records: {results}"
    );
    for secret in [DOTENV_SECRET, DENIED_SECRET] {
        assert!(!results.contains(secret), "a command read {secret}");
        assert!(!chats.contains(secret), "the model was sent {secret}");
        assert!(!git.contains(secret), "{secret} is in the workspace's .git");
    }
    assert!(
        git.contains("the user's untracked notes"),
        "what is not hidden is recorded in the workspace as before"
    );
    let fsck = std::process::Command::new("git")
        .args(["fsck", "--full", "--no-dangling"])
        .current_dir(&repo.root)
        .output()
        .unwrap();
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    repo.harness(&["undo"]).assert_exit(0);
    assert_eq!(
        repo.snapshot(),
        before,
        "both hidden files back, byte for byte"
    );
    assert!(
        !everything_in_git(&repo).contains(DOTENV_SECRET),
        "nor after undo"
    );
}

/// The ids of the workspace's recorded runs (those with metadata), oldest first.
fn recorded_runs(repo: &Repo) -> Vec<String> {
    let mut ids: Vec<String> = fs::read_dir(repo.runs_dir())
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|entry| entry.path().join("run.json").is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

/// Waits (up to 30 s) until `ready` holds.
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !ready() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Issue 45, class 7: `harness runs --prune --keep N` deleted the run of a live `harness
/// mcp --allow-dirty` session, and with it the only copy of the user's uncommitted work.
/// A run in progress, held by another process, is never pruned, and the prune says so;
/// `harness runs` lists it as in progress. Once its process ends, it is pruned as any other.
#[test]
fn issue_45_prune_keeps_a_run_another_process_has_in_progress() {
    let repo = Repo::from_fixture("calc");
    repo.file("notes.txt", "the user's only copy\n");
    let mut server = repo.spawn_with_stdin(&["mcp", "--allow-dirty"]);
    wait_until("the MCP session's run is recorded", || {
        recorded_runs(&repo).len() == 1
    });
    let run = recorded_runs(&repo).remove(0);
    let pruned = repo.harness(&["runs", "--prune", "--keep", "0"]);
    pruned.assert_exit(0).assert_stdout_has(&[
        &format!("kept run {run}: it is in progress"),
        "pruned 0 runs",
    ]);
    assert_eq!(
        recorded_runs(&repo),
        std::slice::from_ref(&run),
        "the run is still there"
    );
    repo.harness(&["runs"])
        .assert_exit(0)
        .assert_stdout_has(&["in progress"]);
    // The session ends (its client closes the pipe): the run is no longer in progress.
    drop(server.stdin.take());
    assert!(server.wait().unwrap().success());
    let pruned = repo.harness(&["runs", "--prune", "--keep", "0"]);
    pruned
        .assert_exit(0)
        .assert_stdout_has(&[&format!("pruned 1 run: {run}")]);
    assert!(!pruned.stdout.contains("kept run"), "{pruned}");
    assert!(recorded_runs(&repo).is_empty());
}

/// A run whose process was killed holds no mark: it is pruned, and named unfinished.
#[test]
fn issue_45_a_run_whose_process_died_is_pruned_and_said_unfinished() {
    let repo = Repo::from_fixture("calc");
    repo.file("notes.txt", "the user's notes\n");
    let mut server = repo.spawn_with_stdin(&["mcp", "--allow-dirty"]);
    wait_until("the MCP session's run is recorded", || {
        recorded_runs(&repo).len() == 1
    });
    let run = recorded_runs(&repo).remove(0);
    // The harness itself dies, with SIGKILL, before its reaper: killed first, the reaper
    // would pass the harness a SIGTERM, and the end of its input when the pipe closes could
    // then end the session cleanly before the signal did.
    let children = format!("/proc/{0}/task/{0}/children", server.id());
    let harness = std::fs::read_to_string(&children).expect("the reaper's child is listed");
    for pid in harness.split_whitespace() {
        let killed = std::process::Command::new("kill")
            .args(["-KILL", pid])
            .status()
            .expect("kill runs");
        assert!(killed.success(), "kill -KILL {pid}");
        // A killed process closes its files (and so lets go of the run's lock) as it
        // exits, after `kill` returns: gone, or a zombie, it holds none.
        wait_until("the killed harness has exited", || {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
                stat.rsplit(')')
                    .next()
                    .is_some_and(|rest| rest.trim_start().starts_with('Z'))
            })
        });
    }
    assert!(
        !harness.trim().is_empty(),
        "the harness runs under its reaper"
    );
    server.kill().unwrap();
    server.wait().unwrap();
    // The lock can outlive the killed harness for a moment (seen: 'in progress' in 2 of 3
    // runs right after the kill, 'unfinished' within 0.2 s in 5 of 5 with the wait): the
    // run is unfinished once nothing holds it.
    wait_until("the dead run is said unfinished", || {
        repo.harness(&["runs"]).stdout.contains("unfinished")
    });
    repo.harness(&["runs", "--prune", "--keep", "0"])
        .assert_exit(0)
        .assert_stdout_has(&[&format!("pruned 1 run: {run} (unfinished)")]);
}
