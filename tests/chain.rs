//! Follow-ups as a chain of runs (`harness run --continue`, `--resume RUN`): each starts
//! from the tree the run before it left and continues its conversation; the user's own
//! edits between runs are kept and shown as theirs; `harness undo` steps back one run at a
//! time and never past those edits, `undo --chain` restores the state before the first run
//! byte for byte, `redo` comes forward again, and `accept` commits the chain as one commit.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::end_to_end::{VERIFY, fix_script};
use crate::support::{Model, Repo, Run, Turn};

/// Everything undo must restore: every file of the workspace (untracked ones included)
/// with its bytes, and the index.
type State = (BTreeMap<PathBuf, Vec<u8>>, String);

fn state(repo: &Repo) -> State {
    (repo.snapshot(), repo.git(&["ls-files", "--stage"]))
}

/// `harness run` against `model`, verified by the fixture's tests, with `extra` flags
/// before the task.
fn run(repo: &Repo, model: &Model, extra: &[&str], task: &str) -> Run {
    let url = model.url();
    let mut args = vec!["run", "--host", &url, "--verify", VERIFY];
    args.extend_from_slice(extra);
    args.push(task);
    repo.harness(&args)
}

/// The fixture's fix, up to its edit, where the run ends (the check is quick, so it runs
/// after the edit, and passes): no answer is left queued for the next run.
fn fix() -> Vec<Turn> {
    let mut turns = fix_script();
    turns.truncate(2);
    turns
}

/// A follow-up's script: write `path`, where the run ends (the quick check after the write
/// passes, the code fixed already).
fn write_script(path: &'static str) -> Vec<Turn> {
    vec![Turn::call(
        "write_file",
        json!({"path": path, "content": format!("{path} by the model\n")}),
    )]
}

/// The ids of the workspace's runs, oldest first.
fn run_ids(repo: &Repo) -> Vec<String> {
    let mut ids: Vec<String> = fs::read_dir(repo.runs_dir())
        .map(|entries| {
            entries
                .map(|e| {
                    e.expect("a run directory")
                        .file_name()
                        .into_string()
                        .expect("UTF-8")
                })
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

/// The texts of the messages of a chat request.
fn contents(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_chain_of_three_runs_with_the_users_edit_between_is_undone_redone_and_accepted_whole() {
    let repo = Repo::from_fixture("calc");
    let head = repo.git(&["rev-parse", "HEAD"]);
    let s0 = state(&repo);
    let model = Model::start();

    model.script(fix());
    run(&repo, &model, &[], "make the failing test pass").assert_exit(0);
    let s1 = state(&repo);
    let first_requests = model.chats().len();

    // A follow-up on the tree the run left, dirty with its work: not refused.
    model.script(write_script("notes.txt"));
    run(&repo, &model, &["--continue"], "now also write notes.txt").assert_exit(0);
    let s2 = state(&repo);
    // Its request holds the earlier conversation: the first task, and the model's edit
    // with its result, before the follow-up's task.
    let chats = model.chats();
    let second = contents(&chats[first_requests]);
    let at = |text: &str| second.iter().position(|c| c.contains(text));
    let task = at("make the failing test pass").expect("the first task");
    let edit = at("+    return a + b").expect("the first run's edit");
    let follow_up = at("now also write notes.txt").expect("the follow-up's task");
    assert!(task < edit && edit < follow_up, "{second:#?}");
    let calls = chats[first_requests]["messages"].to_string();
    assert!(calls.contains("\"edit_file\""), "{calls}");

    // The user's own edit: a changed file, a new one, and one staged.
    let calc = repo.read("calc.py");
    repo.file("calc.py", &format!("# reviewed by me\n{calc}"));
    repo.file("mine.txt", "my own file\n");
    repo.git(&["add", "mine.txt"]);
    let su = state(&repo);

    let before_third = model.chats().len();
    model.script(write_script("third.txt"));
    run(&repo, &model, &["--continue"], "and third.txt").assert_exit(0);
    let s3 = state(&repo);
    let third = contents(&model.chats()[before_third]);
    for earlier in ["make the failing test pass", "now also write notes.txt"] {
        assert!(third.iter().any(|c| c.contains(earlier)), "{third:#?}");
    }
    let ids = run_ids(&repo);
    assert_eq!(ids.len(), 3);

    // The chain shows in the list and the transcript's header.
    repo.harness(&["runs"]).assert_exit(0).assert_stdout_has(&[
        &format!("follows run {}", ids[0]),
        &format!("follows run {}, after your own edits", ids[1]),
    ]);
    repo.harness(&["show"])
        .assert_exit(0)
        .assert_stdout_has(&[&format!("follows run {}, after your own edits", ids[1])]);

    // The diff of the chain keeps the user's edit apart from the runs' work.
    let diff = repo.harness(&["diff", "--chain", "--stat"]);
    diff.assert_exit(0);
    let yours = format!("── your own edits, made before run {}", ids[2]);
    let third_run = format!("── run {}: its own work", ids[2]);
    let (start, end) = (
        diff.stdout.find(&yours).unwrap_or_else(|| panic!("{diff}")),
        diff.stdout
            .find(&third_run)
            .unwrap_or_else(|| panic!("{diff}")),
    );
    assert!(start < end, "{diff}");
    let user_step = &diff.stdout[start..end];
    assert!(
        user_step.contains("mine.txt") && user_step.contains("calc.py"),
        "{diff}"
    );
    assert!(!diff.stdout[end..].contains("mine.txt"), "{diff}");
    // The last run's own diff (the default) holds its work only.
    let last = repo.harness(&["diff", "--stat"]);
    last.assert_exit(0).assert_stdout_has(&["third.txt"]);
    assert!(!last.stdout.contains("mine.txt"), "{last}");

    // Undo steps back the third run: the tree the user left, byte for byte.
    repo.harness(&["undo"])
        .assert_exit(0)
        .assert_stdout_has(&[&format!("undid run {}", ids[2])]);
    assert_eq!(state(&repo), su);
    // The next step back would take the user's edit: refused, and nothing changes.
    let refused = repo.harness(&["undo"]);
    assert_ne!(refused.code, Some(0), "{refused}");
    refused.assert_stderr_has(&["your own edits", "mine.txt", "--chain"]);
    assert_eq!(state(&repo), su);
    // The whole chain: the state before the first run, byte for byte.
    repo.harness(&["undo", "--chain"]).assert_exit(0);
    assert_eq!(state(&repo), s0);
    // Redo comes forward one run at a time, the user's edit with the run before it.
    for (n, want) in [&s1, &su, &s3].into_iter().enumerate() {
        repo.harness(&["redo"])
            .assert_exit(0)
            .assert_stdout_has(&[&format!("redid run {}", ids[n])]);
        assert_eq!(&state(&repo), want, "after redo {}", n + 1);
    }
    assert_ne!(s2, su);

    // Accept: exactly one commit holding all of it, naming every run.
    repo.harness(&["accept"]).assert_exit(0);
    let range = format!("{}..HEAD", head.trim());
    assert_eq!(repo.git(&["rev-list", "--count", &range]).trim(), "1");
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    assert_eq!(repo.snapshot(), s3.0);
    let message = repo.git(&["log", "-1", "--format=%B"]);
    for id in &ids {
        assert!(message.contains(&format!("Harness-Run: {id}")), "{message}");
    }

    // After the accept there is nothing to follow up: said so, and nothing changes.
    let after = repo.harness(&["run", "--host", &model.url(), "--continue", "one more"]);
    assert_ne!(after.code, Some(0), "{after}");
    after.assert_stderr_has(&["was accepted", "start a new run"]);
    assert_eq!(run_ids(&repo), ids);
    assert_eq!(repo.snapshot(), s3.0);
}

#[test]
fn continue_without_an_earlier_run_says_so_and_changes_nothing() {
    let repo = Repo::from_fixture("calc");
    let before = state(&repo);
    let model = Model::start();
    let run = run(&repo, &model, &["--continue"], "go on");
    assert_ne!(run.code, Some(0), "{run}");
    run.assert_stderr_has(&["no earlier run", "without --continue"]);
    assert!(run_ids(&repo).is_empty(), "no run is recorded");
    assert_eq!(state(&repo), before);
    assert!(model.chats().is_empty(), "the model was not asked");
}

#[test]
fn resume_follows_up_the_run_named() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    model.script(fix());
    run(&repo, &model, &[], "make the failing test pass").assert_exit(0);
    let first = run_ids(&repo).remove(0);
    model.script(write_script("notes.txt"));
    run(&repo, &model, &["--resume", &first], "now notes.txt").assert_exit(0);
    repo.harness(&["runs"])
        .assert_exit(0)
        .assert_stdout_has(&[&format!("follows run {first}")]);
    // That run is followed now: resuming it again is refused, naming the one to resume.
    let second = run_ids(&repo).remove(1);
    let again = run(&repo, &model, &["--resume", &first], "again");
    assert_ne!(again.code, Some(0), "{again}");
    again.assert_stderr_has(&[&format!("follow up run {second} instead")]);
    assert_eq!(run_ids(&repo).len(), 2);
}

#[test]
fn what_the_verification_wrote_at_the_end_is_the_runs_not_the_users() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    let url = model.url();
    // A check that writes a file the run leaves behind, after the model's last step.
    let verify = "python3 -c \"open('report.txt', 'w').write('checked')\"";
    let run = |extra: &[&str], task: &str| {
        let mut args = vec!["run", "--host", &url, "--verify", verify];
        args.extend_from_slice(extra);
        args.push(task);
        repo.harness(&args)
    };
    model.script(write_script("a.txt"));
    run(&[], "write a.txt").assert_exit(0);
    assert_eq!(repo.read("report.txt"), "checked");
    model.script(write_script("b.txt"));
    run(&["--continue"], "now b.txt").assert_exit(0);
    let runs = repo.harness(&["runs"]);
    runs.assert_exit(0).assert_stdout_has(&["follows run"]);
    assert!(!runs.stdout.contains("your own edits"), "{runs}");
}
