//! A run whose process is killed between checkpoints can still be undone, and
//! redone, from a new process.
//!
//! This target has no test harness, because it needs a process to kill: it is
//! the parent, which starts itself again as the child (an agent run), kills it
//! with SIGKILL once the child says it is mid-run, and then undoes the run from
//! here. It answers `--list` like libtest, so `cargo nextest` runs it too.

#![cfg(unix)] // Fixtures use Unix permissions and symlinks; the child is killed with a signal.
#![allow(clippy::print_stdout)]
// The child tells the parent where it is.
// Test helpers outside #[test] functions unwrap too: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::Repo;
use harness_undo::{BeginOptions, Force, Session};

/// Set in the child's environment to the repository it works in.
const CHILD: &str = "HARNESS_UNDO_ABANDONED_CHILD";

/// Set in the child's environment to a hostile command to run after its steps.
const HOSTILE: &str = "HARNESS_UNDO_ABANDONED_HOSTILE";

/// The first test of this target, as listed.
const NAME: &str = "a_killed_run_is_undone_and_redone_from_a_new_process";

/// The second: killed right after a command that attacked `.git`.
const HOSTILE_NAME: &str =
    "a_run_killed_right_after_a_hostile_command_is_undone_from_a_new_process";

/// The third: the process ends on its own right after begin.
const ENDED_NAME: &str = "a_process_ending_right_after_begin_leaves_its_snapshot_in_the_store";

/// Set in the child's environment to make it begin a run and end at once.
const ENDS: &str = "HARNESS_UNDO_ABANDONED_ENDS";

/// The commands the second test runs in the child, as a model would.
const HOSTILE_COMMANDS: &[&str] = &[
    "rm -rf .git",
    "git for-each-ref --format='%(refname)' refs/harness refs/tags/harness \
     | xargs -n1 git update-ref -d; git reflog expire --expire=now --all; git gc -q --prune=now",
    "git for-each-ref --format='%(refname)' refs/harness | xargs -n1 git update-ref -d",
];

fn main() {
    if let Some(root) = std::env::var_os(CHILD) {
        if std::env::var_os(ENDS).is_some() {
            return ending_child(Path::new(&root));
        }
        return match std::env::var(HOSTILE) {
            Ok(script) => hostile_child(Path::new(&root), &script),
            Err(_) => child(Path::new(&root)),
        };
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    if flag("--list") {
        // There are no ignored tests to list.
        if !flag("--ignored") {
            println!("{NAME}: test");
            println!("{HOSTILE_NAME}: test");
            println!("{ENDED_NAME}: test");
        }
        return;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let exact = flag("--exact");
    let selected = |name: &str| {
        filters.is_empty()
            || filters.iter().any(|f| {
                if exact {
                    name == f.as_str()
                } else {
                    name.contains(f.as_str())
                }
            })
    };
    if flag("--ignored") {
        return;
    }
    if selected(NAME) {
        parent();
        println!("test {NAME} ... ok");
    }
    if selected(HOSTILE_NAME) {
        hostile_parent();
        println!("test {HOSTILE_NAME} ... ok");
    }
    if selected(ENDED_NAME) {
        ending_parent();
        println!("test {ENDED_NAME} ... ok");
    }
}

/// A run on a dirty tree: the agent overwrites the user's uncommitted edit,
/// checkpoints, runs `script`, and is killed right after.
fn hostile_child(root: &Path, script: &str) {
    let options = BeginOptions {
        allow_dirty: true,
        task: "a run that attacks .git".into(),
        ..BeginOptions::default()
    };
    let mut session = Session::begin(root, options).unwrap();
    std::fs::write(root.join("a.txt"), "the agent's\n").unwrap();
    session.checkpoint("step 1").unwrap().unwrap();
    let status = common::shell_command(root, script).status().unwrap();
    assert!(status.success(), "{script}");
    println!("attacked");
    std::io::stdout().flush().unwrap();
    std::thread::sleep(Duration::from_secs(600));
    unreachable!("the parent kills this process");
}

fn hostile_parent() {
    for script in HOSTILE_COMMANDS {
        let repo = Repo::with_files(&[("a.txt", "committed\n"), ("b.txt", "b\n")]);
        repo.write("a.txt", "the user's uncommitted edit\n");
        repo.write("untracked.txt", "the user's untracked file\n");
        let before = repo.tree();
        let index = repo.index();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(CHILD, &repo.root)
            .env(HOSTILE, script)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(
            line, "attacked\n",
            "the child failed before its attack: {script}"
        );
        child.kill().unwrap();
        assert!(!child.wait().unwrap().success());
        assert_ne!(repo.tree(), before);

        let run = Session::latest(&repo.root)
            .unwrap()
            .expect("the killed run is in the store");
        let mut session = Session::open(&repo.root, &run.id).unwrap();
        let undone = session.undo(Force::No).unwrap();
        assert_eq!(repo.tree(), before, "after {script}");
        let survived = repo.exists(".git");
        assert_eq!(undone.repository_missing, !survived, "after {script}");
        if survived {
            assert_eq!(repo.index(), index, "after {script}");
        }
    }
}

/// An agent run that never finishes: begin, a checkpointed step, an
/// unrecorded step, then wait to be killed.
fn child(root: &Path) {
    let options = BeginOptions {
        task: "a run that will be killed".into(),
        ..BeginOptions::default()
    };
    let mut session = Session::begin(root, options).unwrap();
    std::fs::write(root.join("a.txt"), "step 1\n").unwrap();
    std::fs::write(root.join("created.txt"), "step 1 created this\n").unwrap();
    session.checkpoint("step 1").unwrap().unwrap();
    std::fs::write(root.join("a.txt"), "step 2, never checkpointed\n").unwrap();
    std::fs::remove_file(root.join("b.txt")).unwrap();
    println!("mid-run");
    std::io::stdout().flush().unwrap();
    std::thread::sleep(Duration::from_secs(600));
    unreachable!("the parent kills this process");
}

fn parent() {
    let repo = Repo::with_files(&[("a.txt", "original\n"), ("b.txt", "b\n")]);
    let before = repo.tree();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, &repo.root)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(
        line, "mid-run\n",
        "the child failed before its run was under way"
    );
    child.kill().unwrap();
    assert!(!child.wait().unwrap().success());
    let agents = repo.tree();
    assert_ne!(agents, before);

    let run = Session::latest(&repo.root)
        .unwrap()
        .expect("the killed run is recorded");
    assert_eq!(run.task, "a run that will be killed");
    assert_eq!((run.ended_at, run.outcome), (None, None), "never finished");
    let mut session = Session::open(&repo.root, &run.id).unwrap();
    let checkpoints = session.checkpoints().unwrap();
    assert_eq!(checkpoints.len(), 1);
    assert_eq!(checkpoints[0].label, "step 1");

    session.undo(Force::No).unwrap();
    assert_eq!(repo.tree(), before);
    let mut again = Session::open(&repo.root, &run.id).unwrap();
    again.redo(Force::No).unwrap();
    assert_eq!(repo.tree(), agents);
}

/// Begins a run on a dirty tree and ends the process at once: the copy of
/// the pre-run state into the store runs in a thread, which the end of the
/// process would cut off unless the session waits for it when dropped.
fn ending_child(root: &Path) {
    let options = BeginOptions {
        allow_dirty: true,
        ..BeginOptions::default()
    };
    drop(Session::begin(root, options).unwrap());
}

fn ending_parent() {
    let repo = Repo::with_files(&[("a.txt", "committed\n")]);
    repo.write("a.txt", "the user's uncommitted edit\n");
    // Enough objects that their copy takes longer than ending a process.
    for n in 0..2000 {
        repo.write(&format!("notes/{n}.md"), format!("the user's note {n}\n"));
    }
    let before = repo.tree();
    let status = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, &repo.root)
        .env(ENDS, "1")
        .status()
        .unwrap();
    assert!(status.success());
    // The workspace's copy is gone; only the store's is left.
    std::fs::remove_dir_all(repo.path(".git")).unwrap();
    std::fs::write(repo.path("a.txt"), "overwritten\n").unwrap();
    let run = Session::latest(&repo.root)
        .unwrap()
        .expect("the run is recorded");
    let mut session = Session::open(&repo.root, &run.id).unwrap();
    let undone = session.undo(Force::No).unwrap();
    assert!(undone.repository_missing);
    assert_eq!(repo.tree(), before);
}
