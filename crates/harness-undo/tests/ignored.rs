//! Ignored files commands write (issue 45, class 1): listed at the start, shown as
//! changes, put back by undo and before each verification, brought back by redo, and
//! named where the budget kept their content from being saved.

#![cfg(unix)]
// Fixtures use Unix permissions, symlinks and hard links.
#![allow(clippy::unwrap_used)]

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Repo, shell_command};
use harness_undo::{BeginOptions, Force, IgnoredChange, LARGEST_SAVED_IGNORED_FILE, Session};

fn shell(repo: &Repo, script: &str) {
    let output = shell_command(&repo.root, script).output().unwrap();
    assert!(output.status.success(), "{script}: {output:?}");
}

fn begin(repo: &Repo) -> Session {
    Session::begin(&repo.root, BeginOptions::default()).unwrap()
}

fn paths(list: &[&str]) -> Vec<PathBuf> {
    list.iter().map(PathBuf::from).collect()
}

/// A Python project whose `add` is wrong, with a test of it.
fn python_project() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n*.pyc\n.venv/\n"),
        ("calc.py", "def add(a, b):\n    return a - b\n"),
        (
            "test_calc.py",
            "import unittest\nimport calc\n\n\nclass T(unittest.TestCase):\n    \
             def test_add(self):\n        self.assertEqual(calc.add(2, 2), 4)\n",
        ),
    ])
}

/// The attack of issue 45: bytecode of a fixed `add`, compiled from a file of the same
/// size and modification time as the unfixed `calc.py`, put where Python looks first.
const PLANT_PYC: &str = r#"python3 - <<'EOF'
import importlib.util, os, py_compile, shutil, tempfile
st = os.stat("calc.py")
forged = os.path.join(tempfile.mkdtemp(), "calc.py")
with open(forged, "w") as f:
    f.write("def add(a, b):\n    return a + b\n")
os.utime(forged, ns=(st.st_atime_ns, st.st_mtime_ns))
py_compile.compile(forged, cfile=importlib.util.cache_from_source("calc.py"), dfile="calc.py")
shutil.rmtree(os.path.dirname(forged))
EOF"#;

fn tests_pass(repo: &Repo) -> bool {
    Command::new("python3")
        .args(["-m", "unittest", "-q"])
        .current_dir(&repo.root)
        .env_remove("PYTHONDONTWRITEBYTECODE")
        .output()
        .unwrap()
        .status
        .success()
}

#[test]
fn issue_45_a_planted_bytecode_cache_is_shown_removed_before_a_check_and_undone() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: no python3");
        return;
    }
    let repo = python_project();
    let mut session = begin(&repo);
    assert!(!tests_pass(&repo), "the function is unfixed");
    // The check above wrote caches of its own; a command now plants a forged one.
    fs::remove_dir_all(repo.path("__pycache__")).unwrap();
    shell(&repo, PLANT_PYC);
    assert!(
        tests_pass(&repo),
        "the planted cache fools the test: the attack works"
    );

    let changes = session.ignored_changes().unwrap();
    assert!(
        changes
            .created
            .iter()
            .any(|p| p.to_string_lossy().starts_with("__pycache__/calc.")),
        "{changes:?}"
    );

    let reset = session.reset_ignored().unwrap();
    assert!(
        reset.removed.iter().any(|p| p.starts_with("__pycache__")),
        "{reset:?}"
    );
    assert!(reset.not_restored.is_empty(), "{reset:?}");
    assert!(!tests_pass(&repo), "the check runs the code in the diff");

    shell(&repo, PLANT_PYC);
    let undone = session.undo(Force::No).unwrap();
    assert!(
        undone
            .ignored
            .removed
            .iter()
            .any(|p| p.ends_with("__pycache__")),
        "{undone:?}"
    );
    assert!(
        !repo.exists("__pycache__"),
        "no file a command made remains"
    );
    assert!(session.ignored_changes().unwrap().is_empty());
}

#[test]
fn what_a_check_wrote_stays_for_the_next_check_and_a_command_s_change_to_it_goes() {
    let repo = Repo::with_files(&[(".gitignore", "target/\n"), ("src.txt", "x\n")]);
    let mut session = begin(&repo);
    // A verification builds.
    assert!(session.reset_ignored().unwrap().is_empty());
    repo.write("target/out.bin", "built by the check\n");
    session.keep_ignored_after_check().unwrap();
    // A command changes the build output and adds one.
    repo.write("target/out.bin", "planted\n");
    repo.write("target/extra", "planted\n");
    let reset = session.reset_ignored().unwrap();
    assert_eq!(reset.restored, paths(&["target/out.bin"]));
    assert_eq!(reset.removed, paths(&["target/extra"]));
    assert_eq!(repo.read("target/out.bin"), "built by the check\n");
    // Undo goes back to the start: the check's output is the run's too.
    session.undo(Force::No).unwrap();
    assert!(
        !repo.exists("target"),
        "made during the run, gone after undo"
    );
}

#[test]
fn a_pth_file_in_a_venv_is_listed_removed_by_undo_and_brought_back_by_redo() {
    let repo = Repo::with_files(&[(".gitignore", ".venv/\n"), ("main.py", "")]);
    let site = ".venv/lib/python3.11/site-packages";
    repo.write(&format!("{site}/ok.py"), "print('ok')\n");
    let mut session = begin(&repo);
    let pth = format!("{site}/evil.pth");
    repo.write(&pth, "import os; os.system('echo owned')\n");
    let changes = session.ignored_changes().unwrap();
    assert_eq!(changes.created, paths(&[&pth]));
    let undone = session.undo(Force::No).unwrap();
    assert_eq!(undone.ignored.removed, paths(&[&pth]));
    assert!(!repo.exists(&pth));
    assert_eq!(repo.read(&format!("{site}/ok.py")), "print('ok')\n");
    let redone = session.redo(Force::No).unwrap();
    assert_eq!(redone.ignored.restored, paths(&[&pth]), "{redone:?}");
    assert_eq!(repo.read(&pth), "import os; os.system('echo owned')\n");
}

#[test]
fn an_interpreter_symlink_replaced_by_a_script_comes_back_as_the_symlink() {
    let repo = Repo::with_files(&[(".gitignore", ".venv/\n"), ("main.py", "")]);
    fs::create_dir_all(repo.path(".venv/bin")).unwrap();
    std::os::unix::fs::symlink("/usr/bin/python3", repo.path(".venv/bin/python3")).unwrap();
    let mut session = begin(&repo);
    shell(
        &repo,
        "rm .venv/bin/python3 && printf '#!/bin/sh\\nexit 0\\n' > .venv/bin/python3 && \
         chmod +x .venv/bin/python3",
    );
    assert_eq!(
        session.ignored_changes().unwrap().changed,
        paths(&[".venv/bin/python3"])
    );
    let reset = session.reset_ignored().unwrap();
    assert_eq!(reset.restored, paths(&[".venv/bin/python3"]));
    assert_eq!(
        fs::read_link(repo.path(".venv/bin/python3")).unwrap(),
        Path::new("/usr/bin/python3")
    );
}

#[test]
fn a_file_in_an_ignored_directory_a_command_made_goes_with_the_directory() {
    let repo = Repo::with_files(&[(".gitignore", "node_modules/\n"), ("index.js", "")]);
    let mut session = begin(&repo);
    for n in 0..300 {
        repo.write(&format!("node_modules/.bin/tool{n}"), "#!/bin/sh\n");
    }
    let changes = session.ignored_changes().unwrap();
    assert_eq!(
        changes.created.len(),
        302,
        "the two directories and the files"
    );
    session.undo(Force::No).unwrap();
    assert!(!repo.exists("node_modules"));
}

#[test]
fn a_file_beyond_the_budget_that_a_command_changed_is_named_and_left() {
    let repo = Repo::with_files(&[(".gitignore", "*.bin\n"), ("x", "")]);
    let big = vec![b'u'; usize::try_from(LARGEST_SAVED_IGNORED_FILE).unwrap() + 1];
    repo.write("model.bin", &big);
    repo.write("small.bin", "small\n");
    let mut session = begin(&repo);
    repo.write("model.bin", "the command's\n");
    repo.write("small.bin", "changed\n");
    let changes = session.ignored_changes().unwrap();
    assert_eq!(changes.changed, paths(&["model.bin", "small.bin"]));
    assert_eq!(changes.not_restorable, paths(&["model.bin"]));
    let (count, named) = session.unrecorded_ignored_changes().unwrap();
    assert_eq!((count, named), (1, paths(&["model.bin"])));
    let reset = session.reset_ignored().unwrap();
    assert_eq!(
        reset.not_restored,
        paths(&["model.bin"]),
        "named, not vouched for"
    );
    assert_eq!(repo.read("model.bin"), "the command's\n", "left as it is");
    repo.write("small.bin", "changed again\n");
    let undone = session.undo(Force::No).unwrap();
    assert_eq!(undone.ignored.restored, paths(&["small.bin"]));
    assert_eq!(undone.ignored.not_restored, paths(&["model.bin"]));
    assert_eq!(repo.read("small.bin"), "small\n");
}

/// The budgets are the documented ones: a 3 MiB ignored file (under 4 MiB a file and 64 MiB
/// in all) is saved at the start, and comes back after a command rewrote it.
#[test]
fn an_ignored_file_of_three_mib_is_within_the_budgets_and_comes_back() {
    let repo = Repo::with_files(&[(".gitignore", "*.bin\n"), ("x", "")]);
    let weights = vec![b'w'; 3 * 1024 * 1024];
    repo.write("model.bin", &weights);
    let mut session = begin(&repo);
    repo.write("model.bin", "the command's\n");
    let changes = session.ignored_changes().unwrap();
    assert_eq!(changes.changed, paths(&["model.bin"]));
    assert!(changes.not_restorable.is_empty(), "{changes:?}");
    let undone = session.undo(Force::No).unwrap();
    assert_eq!(undone.ignored.restored, paths(&["model.bin"]));
    assert_eq!(fs::read(repo.path("model.bin")).unwrap(), weights);
}

/// A file over the per-file limit is not copied into the store at all (it would be read
/// whole into memory), though the total budget has room for it.
#[test]
fn an_ignored_file_over_the_per_file_limit_is_not_copied_into_the_store() {
    let repo = Repo::with_files(&[(".gitignore", "*.bin\n"), ("x", "")]);
    // Bytes that do not compress, so the store's size shows whether they were saved.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let noise: Vec<u8> = (0..LARGEST_SAVED_IGNORED_FILE + 1)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect();
    repo.write("model.bin", &noise);
    let session = begin(&repo);
    let stored: u64 = walk_sizes(session.store_dir());
    assert!(
        stored < LARGEST_SAVED_IGNORED_FILE / 4,
        "the store holds {stored} bytes"
    );
}

/// The bytes of every file under `dir`.
fn walk_sizes(dir: &std::path::Path) -> u64 {
    fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                walk_sizes(&entry.path())
            } else {
                entry.metadata().unwrap().len()
            }
        })
        .sum()
}

#[test]
fn a_hard_link_or_a_symlinked_directory_is_never_written_through() {
    let repo = Repo::with_files(&[(".gitignore", ".venv/\n"), ("x", "")]);
    // Beside the workspace, on its file system: a hard link cannot cross one.
    let outside = tempfile::tempdir_in(repo.root.parent().unwrap()).unwrap();
    let victim = outside.path().join("victim");
    fs::write(&victim, "outside\n").unwrap();
    repo.write(".venv/bin/activate", "the venv's\n");
    repo.write(".venv/lib/site.py", "the venv's\n");
    let mut session = begin(&repo);
    // A hard link to a file outside stands where a saved file was.
    repo.remove(".venv/bin/activate");
    fs::hard_link(&victim, repo.path(".venv/bin/activate")).unwrap();
    // A directory becomes a symlink to a directory outside.
    fs::remove_dir_all(repo.path(".venv/lib")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.path(".venv/lib")).unwrap();
    session.undo(Force::No).unwrap();
    assert_eq!(fs::read_to_string(&victim).unwrap(), "outside\n");
    assert!(!outside.path().join("site.py").exists());
    assert_eq!(repo.read(".venv/bin/activate"), "the venv's\n");
    assert_eq!(repo.read(".venv/lib/site.py"), "the venv's\n");
    assert!(
        fs::symlink_metadata(repo.path(".venv/lib"))
            .unwrap()
            .is_dir()
    );
}

#[test]
fn a_mode_or_a_backdated_rewrite_is_a_change_and_comes_back() {
    let repo = Repo::with_files(&[(".gitignore", "cache/\n"), ("x", "")]);
    repo.write("cache/a", "same size\n");
    repo.write("cache/b", "the user's\n");
    shell(&repo, "touch -d '2000-01-01' cache/b");
    let mut session = begin(&repo);
    repo.chmod("cache/a", 0o755);
    // The same size and modification time, other bytes: told by the change time.
    shell(
        &repo,
        "printf 'the cmd!!!\\n' > cache/b && touch -d '2000-01-01' cache/b",
    );
    let changes = session.ignored_changes().unwrap();
    assert_eq!(changes.changed, paths(&["cache/a", "cache/b"]));
    session.undo(Force::No).unwrap();
    let mode = fs::metadata(repo.path("cache/a"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644);
    assert_eq!(repo.read("cache/b"), "the user's\n");
    // A rewrite with the same bytes is no change.
    repo.write("cache/b", "the user's\n");
    assert!(session.ignored_changes().unwrap().is_empty());
}

#[test]
fn a_deleted_ignored_file_comes_back_and_a_second_begin_reads_nothing_again() {
    let repo = Repo::with_files(&[(".gitignore", ".env\n"), ("x", "")]);
    repo.write(".env", "TOKEN=1\n");
    let first = begin(&repo);
    drop(first);
    let mut session = begin(&repo);
    repo.remove(".env");
    assert_eq!(session.ignored_changes().unwrap().deleted, paths(&[".env"]));
    session.undo(Force::No).unwrap();
    assert_eq!(repo.read(".env"), "TOKEN=1\n");
}

#[test]
fn a_git_directory_a_command_makes_in_an_ignored_directory_hides_nothing() {
    let repo = Repo::with_files(&[(".gitignore", ".venv/\n"), ("x", "")]);
    let site = ".venv/lib/python3.11/site-packages";
    repo.write(&format!("{site}/ok.py"), "print('ok')\n");
    let mut session = begin(&repo);
    let pth = format!("{site}/evil.pth");
    repo.write(&pth, "import os\n");
    fs::create_dir_all(repo.path(".venv/.git")).unwrap();
    let reset = session.reset_ignored().unwrap();
    assert!(reset.removed.contains(&PathBuf::from(&pth)), "{reset:?}");
    assert!(!repo.exists(&pth));
    // The `.git` itself is never listed: harness-exec moves a new one aside after each
    // command.
}

/// Long enough for the kernel's file clock (read once a tick, a few ms behind the
/// system clock) to pass the time the harness recorded.
fn past_the_file_clock() {
    std::thread::sleep(std::time::Duration::from_millis(60));
}

/// Ignored files the run made and changed, then the run finished: the user's own
/// ignored files (made, changed) afterwards.
fn finished_run_then_user_edits() -> (Repo, harness_undo::RunId) {
    let repo = Repo::with_files(&[(".gitignore", "build/\n*.local\n"), ("src.txt", "x\n")]);
    repo.write("build/old.o", "old\n");
    repo.write("keep.local", "user v1\n");
    let mut session = begin(&repo);
    // The run's commands.
    shell(
        &repo,
        "printf planted > build/planted.pyc && printf run > build/old.o",
    );
    session.finish(harness_undo::Outcome::Failed, 1).unwrap();
    let id = session.id().clone();
    drop(session);
    past_the_file_clock();
    // The user, after the run.
    repo.write("notes.local", "my notes\n");
    repo.write("keep.local", "user v2\n");
    (repo, id)
}

#[test]
fn undo_leaves_ignored_files_the_user_made_or_changed_after_the_run_and_names_the_changed() {
    let (repo, id) = finished_run_then_user_edits();
    let mut session = Session::open(&repo.root, &id).unwrap();
    let undone = session.undo(Force::No).unwrap();
    // The run's own are undone.
    assert!(!repo.exists("build/planted.pyc"), "{undone:?}");
    assert_eq!(repo.read("build/old.o"), "old\n");
    assert_eq!(undone.ignored.removed, paths(&["build/planted.pyc"]));
    assert_eq!(undone.ignored.restored, paths(&["build/old.o"]));
    // The user's are left as they are; the changed one is named.
    assert_eq!(repo.read("notes.local"), "my notes\n");
    assert_eq!(repo.read("keep.local"), "user v2\n");
    assert_eq!(undone.ignored.left, paths(&["keep.local"]));
    assert!(undone.ignored.not_restored.is_empty(), "{undone:?}");
    // A second undo has nothing to do, and names what it leaves all the same.
    let again = session.undo(Force::No).unwrap();
    assert_eq!(again.saved, None, "{again:?}");
    assert_eq!(again.ignored.left, paths(&["keep.local"]));
    assert!(again.ignored.restored.is_empty() && again.ignored.removed.is_empty());
    assert!(
        !again.ignored.is_empty(),
        "a file left is something to tell"
    );
    assert_eq!(repo.read("keep.local"), "user v2\n");
}

#[test]
fn redo_leaves_what_the_user_changed_after_the_undo_and_a_second_undo_takes_what_redo_wrote() {
    let (repo, id) = finished_run_then_user_edits();
    Session::open(&repo.root, &id)
        .unwrap()
        .undo(Force::No)
        .unwrap();
    past_the_file_clock();
    // The user, after the undo, rewrites a file the undo put back.
    repo.write("build/old.o", "user after undo\n");
    let redone = Session::open(&repo.root, &id)
        .unwrap()
        .redo(Force::No)
        .unwrap();
    assert_eq!(repo.read("build/planted.pyc"), "planted");
    assert_eq!(repo.read("build/old.o"), "user after undo\n", "{redone:?}");
    assert_eq!(redone.ignored.left, paths(&["build/old.o"]));
    assert_eq!(redone.ignored.restored, paths(&["build/planted.pyc"]));
    past_the_file_clock();
    // What redo wrote is the run's though written after the run's end; what the user
    // wrote is not, though undo once touched it.
    let undone = Session::open(&repo.root, &id)
        .unwrap()
        .undo(Force::No)
        .unwrap();
    assert!(!repo.exists("build/planted.pyc"), "{undone:?}");
    assert_eq!(repo.read("build/old.o"), "user after undo\n");
    assert_eq!(repo.read("notes.local"), "my notes\n");
    assert_eq!(repo.read("keep.local"), "user v2\n");
    let mut left = undone.ignored.left.clone();
    left.sort();
    assert_eq!(left, paths(&["build/old.o", "keep.local"]), "{undone:?}");
}

#[test]
fn a_run_that_never_finished_is_undone_whole_and_redo_gives_back_what_the_user_wrote_since() {
    let repo = Repo::with_files(&[(".gitignore", "*.local\n"), ("src.txt", "x\n")]);
    repo.write("keep.local", "user v1\n");
    let mut session = begin(&repo);
    shell(
        &repo,
        "printf run > step1.local && printf changed > src.txt",
    );
    session.checkpoint("a command").unwrap().unwrap();
    // A command after the last checkpoint; then the process dies: no checkpoint, no
    // finish, nothing says when the command stopped writing.
    shell(&repo, "printf run > step2.local");
    let id = session.id().clone();
    drop(session);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    repo.write("notes.local", "my notes\n");
    repo.write("keep.local", "user v2\n");
    let undone = Session::open(&repo.root, &id)
        .unwrap()
        .undo(Force::No)
        .unwrap();
    for made in ["step1.local", "step2.local", "notes.local"] {
        assert!(!repo.exists(made), "{made}: {undone:?}");
    }
    assert_eq!(repo.read("keep.local"), "user v1\n");
    assert_eq!(repo.read("src.txt"), "x\n");
    assert!(undone.ignored.left.is_empty(), "{undone:?}");
    // What the user wrote since was saved first: redo gives it back with the run's.
    Session::open(&repo.root, &id)
        .unwrap()
        .redo(Force::No)
        .unwrap();
    assert_eq!(repo.read("keep.local"), "user v2\n");
    assert_eq!(repo.read("notes.local"), "my notes\n");
    assert_eq!(repo.read("step2.local"), "run");
}

#[test]
fn a_run_s_end_is_the_later_of_the_clock_and_the_file_system_s_stamp() {
    let (repo, id) = finished_run_then_user_edits();
    // A network file system whose clock leads this machine's by an hour stamped the
    // run's end then (as it would the run's files): up to it, all is the run's.
    let session = Session::open(&repo.root, &id).unwrap();
    let path = session.metadata_path();
    drop(session);
    let mut record: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let ahead = record["ended_ms"].as_i64().unwrap() * 1_000_000 + 3_600_000_000_000;
    record["ended_stamp_ns"] = serde_json::json!(ahead);
    fs::write(&path, record.to_string()).unwrap();
    let undone = Session::open(&repo.root, &id)
        .unwrap()
        .undo(Force::No)
        .unwrap();
    assert!(!repo.exists("notes.local"), "{undone:?}");
    assert_eq!(repo.read("keep.local"), "user v1\n");
    assert!(undone.ignored.left.is_empty(), "{undone:?}");
}

#[test]
fn one_change_of_any_kind_is_a_change_and_all_lists_each_with_its_kind() {
    for (command, path, kind) in [
        ("echo new > cache/c", "cache/c", IgnoredChange::Created),
        ("echo changed > cache/a", "cache/a", IgnoredChange::Changed),
        ("rm cache/b", "cache/b", IgnoredChange::Deleted),
    ] {
        let repo = Repo::with_files(&[(".gitignore", "cache/\n"), ("main.py", "")]);
        repo.write("cache/a", "a\n");
        repo.write("cache/b", "b\n");
        let session = begin(&repo);
        shell(&repo, command);
        let changes = session.ignored_changes().unwrap();
        assert!(!changes.is_empty(), "{command}: {changes:?}");
        assert_eq!(changes.all(), [(Path::new(path), kind)], "{command}");
    }
}

#[test]
fn redo_brings_back_the_run_s_content_of_an_ignored_file_it_changed_or_added() {
    // One saved file, changed: every blob differs from the start's.
    let repo = Repo::with_files(&[(".gitignore", "cache/\n"), ("main.py", "")]);
    repo.write("cache/a", "before\n");
    let mut session = begin(&repo);
    repo.write("cache/a", "the run's\n");
    session.undo(Force::No).unwrap();
    assert_eq!(repo.read("cache/a"), "before\n");
    session.redo(Force::No).unwrap();
    assert_eq!(repo.read("cache/a"), "the run's\n");
    // One added after the start's, which are unchanged: the start's tree is a prefix.
    let repo = Repo::with_files(&[(".gitignore", "cache/\n"), ("main.py", "")]);
    repo.write("cache/a", "a\n");
    let mut session = begin(&repo);
    repo.write("cache/b", "added\n");
    session.undo(Force::No).unwrap();
    assert!(!repo.exists("cache/b"));
    session.redo(Force::No).unwrap();
    assert_eq!(repo.read("cache/b"), "added\n");
}

#[test]
fn an_ignored_file_of_exactly_the_per_file_limit_comes_back_whole() {
    let repo = Repo::with_files(&[(".gitignore", "*.bin\n"), ("x", "")]);
    let size = usize::try_from(LARGEST_SAVED_IGNORED_FILE).unwrap();
    let weights = vec![b'w'; size];
    repo.write("model.bin", &weights);
    let mut session = begin(&repo);
    repo.write("model.bin", "the command's\n");
    assert!(session.ignored_changes().unwrap().not_restorable.is_empty());
    session.undo(Force::No).unwrap();
    assert_eq!(fs::read(repo.path("model.bin")).unwrap(), weights);
}
