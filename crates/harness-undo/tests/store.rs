//! The store outside the workspace: undo and redo when a command took the
//! workspace's `.git` (or parts of it) away, tamper detection, and the ignored
//! files the file tools write.

#![cfg(unix)]
// Fixtures use Unix permissions and symlinks.
#![allow(clippy::unwrap_used)]

mod common;

use std::fs;
use std::path::Path;

use common::Repo;
use harness_undo::{BeginOptions, Force, Session, Tampering, Tracking};

/// A project with uncommitted work of every kind: a modified tracked file, a
/// staged change, an untracked file, an executable bit and a symlink.
fn dirty_project() -> Repo {
    let repo = Repo::with_files(&[
        (".gitignore", "target/\n*.cfg\n"),
        ("README", "read me\n"),
        ("src/lib.rs", "pub fn original() {}\n"),
        ("staged.txt", "committed\n"),
    ]);
    repo.write("src/lib.rs", "pub fn users_uncommitted_edit() {}\n");
    repo.write("staged.txt", "staged by the user\n");
    repo.stage("staged.txt");
    repo.write("notes/untracked.md", "the user's notes\n");
    repo.write("tool.sh", "#!/bin/sh\n");
    repo.chmod("tool.sh", 0o755);
    repo.symlink("link", "README");
    repo
}

fn begin_dirty(repo: &Repo) -> Session {
    let options = BeginOptions {
        allow_dirty: true,
        ..BeginOptions::default()
    };
    Session::begin(&repo.root, options).unwrap()
}

/// The agent overwrites the user's uncommitted edit and more.
fn agent_step(repo: &Repo) {
    repo.write("src/lib.rs", "pub fn agents() {}\n");
    repo.write("notes/untracked.md", "overwritten\n");
    repo.remove("README");
    repo.write("new.rs", "// created\n");
}

/// `sh -c script` in the workspace, as a model's command would run.
fn shell(repo: &Repo, script: &str) {
    let output = std::process::Command::new("sh")
        .args(["-c", script])
        .current_dir(&repo.root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The attack of issue 13: every harness ref and tag deleted, the reflog
/// expired, and every unreachable object pruned.
const PRUNE_ATTACK: &str = "git for-each-ref --format='%(refname)' refs/harness refs/tags/harness \
    | xargs -n1 git update-ref -d; git reflog expire --expire=now --all; git gc -q --prune=now";

#[test]
fn undo_after_rm_rf_git_restores_the_working_tree_from_the_store() {
    let repo = dirty_project();
    let before = repo.tree();
    let session = begin_dirty(&repo);
    let id = session.id().clone();
    drop(session);
    agent_step(&repo);
    shell(&repo, "rm -rf .git");
    let agents = repo.tree();

    // A new process: the run is found in the store, not in .git.
    assert_eq!(Session::latest(&repo.root).unwrap().unwrap().id, id);
    let mut session = Session::open(&repo.root, &id).unwrap();
    let undone = session.undo(Force::No).unwrap();
    assert_eq!(repo.tree(), before, "every file, mode and symlink is back");
    assert!(undone.repository_missing);
    assert_eq!(undone.repaired, vec![Tampering::RepositoryGone]);
    assert!(
        !repo.exists(".git"),
        "undo does not pretend to bring .git back"
    );

    // Redo works from the store too, and undo again.
    let redone = session.redo(Force::No).unwrap();
    assert!(redone.repository_missing);
    assert_eq!(repo.tree(), agents);
    session.undo(Force::No).unwrap();
    assert_eq!(repo.tree(), before);
}

#[test]
fn undo_after_refs_deleted_and_gc_prune_restores_tree_and_index() {
    let repo = dirty_project();
    let before = repo.tree();
    let index = repo.index();
    let mut session = begin_dirty(&repo);
    agent_step(&repo);
    session.checkpoint("step 1").unwrap().unwrap();
    let id = session.id().clone();
    drop(session);
    shell(&repo, PRUNE_ATTACK);
    assert!(
        !repo.refs().iter().any(|(name, _)| name.contains("harness")),
        "the attack removed every ref"
    );

    let mut session = Session::open(&repo.root, &id).unwrap();
    let undone = session.undo(Force::No).unwrap();
    assert!(!undone.repository_missing);
    assert!(
        undone.repaired.contains(&Tampering::RefRestored {
            name: format!("refs/harness/{id}/pre"),
            found: None
        }),
        "{:?}",
        undone.repaired
    );
    assert!(undone.repaired.contains(&Tampering::ObjectsRestored {
        name: format!("refs/harness/{id}/pre")
    }));
    assert_eq!(repo.tree(), before);
    assert_eq!(repo.index(), index);
    // The workspace's refs and objects are back: plain git sees the snapshot.
    let pre = repo.git(&["rev-parse", &format!("harness/{id}^{{tree}}")]);
    assert!(!pre.trim().is_empty());
    repo.git(&["fsck", "--no-dangling", "--connectivity-only"]);
    session.redo(Force::No).unwrap();
    assert_eq!(repo.read("src/lib.rs"), "pub fn agents() {}\n");
}

#[test]
fn verify_puts_back_deleted_and_moved_refs_and_pruned_objects() {
    let repo = dirty_project();
    let mut session = begin_dirty(&repo);
    let id = session.id().clone();
    assert_eq!(session.verify().unwrap(), Vec::new(), "nothing to report");
    agent_step(&repo);
    let checkpoint = session.checkpoint("step").unwrap().unwrap();
    let pre_ref = format!("refs/harness/{id}/pre");
    let head = repo.head();
    shell(
        &repo,
        &format!("git update-ref {pre_ref} HEAD && git tag -d harness/{id}"),
    );
    let found = session.verify().unwrap();
    let [
        Tampering::RefRestored {
            name: moved,
            found: Some(moved_to),
        },
        Tampering::RefRestored {
            name: deleted,
            found: None,
        },
    ] = found.as_slice()
    else {
        panic!("{found:?}");
    };
    assert_eq!((moved, moved_to.to_string()), (&pre_ref, head));
    assert_eq!(deleted, &format!("refs/tags/harness/{id}"));
    assert_eq!(
        repo.git(&["rev-parse", &pre_ref]).trim(),
        session.info().pre_run.to_string()
    );
    shell(&repo, PRUNE_ATTACK);
    let found = session.verify().unwrap();
    assert!(found.contains(&Tampering::ObjectsRestored {
        name: pre_ref.clone()
    }));
    assert!(found.contains(&Tampering::RefRestored {
        name: format!("refs/harness/{id}/checkpoints"),
        found: None
    }));
    assert_eq!(
        repo.git(&["rev-parse", &format!("refs/harness/{id}/checkpoints")])
            .trim(),
        checkpoint.commit.to_string()
    );
    assert_eq!(session.verify().unwrap(), Vec::new());
    for message in found.iter().map(ToString::to_string) {
        assert!(
            message.contains("restored from the harness's store"),
            "{message}"
        );
    }
    shell(&repo, "rm -rf .git");
    assert_eq!(session.verify().unwrap(), vec![Tampering::RepositoryGone]);
    // Reported once; the session works from the store from then on.
    assert_eq!(session.verify().unwrap(), Vec::new());
    repo.write("after.txt", "written after .git was gone\n");
    let next = session.checkpoint("step 2").unwrap().unwrap();
    assert_eq!(next.number, 2);
}

#[test]
fn verify_puts_back_one_deleted_object_of_the_pre_run_state() {
    let repo = dirty_project();
    let mut session = begin_dirty(&repo);
    // As the agent does before each command.
    session.wait_for_store().unwrap();
    let id = session.id().clone();
    let tree = repo.git(&["rev-parse", &format!("harness/{id}^{{tree}}")]);
    let tree = tree.trim();
    // Its commit stays: only the tree's file is deleted, as `rm` would.
    shell(
        &repo,
        &format!("rm -f .git/objects/{}/{}", &tree[..2], &tree[2..]),
    );
    let diff = ["diff", "--stat", &format!("harness/{id}")];
    assert!(
        !common::git_command(&repo.root)
            .args(diff)
            .output()
            .unwrap()
            .status
            .success(),
        "git cannot read the snapshot without its tree"
    );
    let found = session.verify().unwrap();
    assert!(
        found.contains(&Tampering::ObjectsRestored {
            name: format!("refs/harness/{id}/pre")
        }),
        "{found:?}"
    );
    // The user's own git reads the snapshot again.
    repo.git(&diff);
    assert_eq!(session.verify().unwrap(), Vec::new());
}

#[test]
fn the_store_is_outside_the_workspace_and_holds_its_own_objects() {
    let repo = dirty_project();
    let mut session = begin_dirty(&repo);
    // Begin copies in a thread; this is what the agent waits for before a command.
    let written = session.wait_for_store().unwrap();
    assert_eq!(session.wait_for_store().unwrap(), 0, "once");
    let store = repo.store().unwrap();
    // The store was empty: what it holds now is what the copy says it wrote.
    let counted = std::process::Command::new("git")
        .args(["--git-dir", store.to_str().unwrap(), "count-objects", "-v"])
        .output()
        .unwrap();
    let counted = String::from_utf8(counted.stdout).unwrap();
    let held: usize = counted
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(": ")?;
            ["count", "in-pack"]
                .contains(&key)
                .then(|| value.parse::<usize>().unwrap())
        })
        .sum();
    assert!(written > 0, "the first run copies objects");
    // The rest the session wrote there itself: the snapshot of the dirty tree.
    assert!(written < held, "{counted}");
    assert_eq!(session.store_dir(), store);
    assert!(!store.starts_with(&repo.root));
    assert!(
        !store.join("objects/info/alternates").exists(),
        "no borrowing from the workspace"
    );
    let named = fs::read(store.join("harness-workspace")).unwrap();
    assert_eq!(named, format!("{}\n", repo.root.display()).into_bytes());
    // The store alone holds the pre-run state: every object of its tree.
    let pre = session.info().pre_run.to_string();
    let output = std::process::Command::new("git")
        .args(["--git-dir", store.to_str().unwrap(), "ls-tree", "-r", &pre])
        .output()
        .unwrap();
    assert!(output.status.success());
    let listing = String::from_utf8(output.stdout).unwrap();
    assert!(listing.contains("notes/untracked.md"), "{listing}");
    let fsck = std::process::Command::new("git")
        .args([
            "--git-dir",
            store.to_str().unwrap(),
            "cat-file",
            "-p",
            &format!("{pre}:notes/untracked.md"),
        ])
        .output()
        .unwrap();
    assert_eq!(fsck.stdout, b"the user's notes\n");
    // One store per workspace: a second run reuses it, and a clean one
    // finds HEAD's tree there already.
    drop(session);
    let again = begin_dirty(&repo);
    assert_eq!(again.store_dir(), store);
    // Dropping a session waits for its copy: the snapshot is in the store at once.
    let pre = again.info().pre_run;
    drop(again);
    let kept = git2::Repository::open_bare(&store).unwrap();
    assert!(
        kept.find_commit(git2::Oid::from_str(&pre.to_string()).unwrap())
            .is_ok()
    );
    let clean = Repo::with_files(&[("a", "a\n")]);
    let mut first = Session::begin(&clean.root, BeginOptions::default()).unwrap();
    assert!(first.wait_for_store().unwrap() > 0);
    drop(first);
    let mut second = Session::begin(&clean.root, BeginOptions::default()).unwrap();
    assert_eq!(
        second.wait_for_store().unwrap(),
        0,
        "HEAD's tree is there already"
    );
}

#[test]
fn a_file_tool_write_of_an_ignored_file_is_undone_and_redone() {
    let repo = Repo::with_files(&[
        (".gitignore", "*.cfg\nbuild/\n"),
        ("main.rs", "fn main() {}\n"),
    ]);
    repo.write("local.cfg", "the user's settings\n");
    repo.chmod("local.cfg", 0o755);
    repo.write("build/keep.cfg", "kept\n");
    let before = repo.tree();
    let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();

    // Written (existing), created new, edited then deleted by a command.
    let head = repo.head();
    assert!(session.protect(Path::new("local.cfg")).unwrap());
    let first = session.info().pre_run.to_string();
    // The tag follows the pre-run state, which now holds the file as it was.
    let tagged = repo.git(&["rev-parse", &format!("harness/{}", session.id())]);
    assert_eq!(tagged.trim(), first);
    let parents = |commit: &str| -> Vec<String> {
        repo.git(&["rev-list", "--parents", "-n1", commit])
            .split_whitespace()
            .skip(1)
            .map(str::to_owned)
            .collect()
    };
    // Chained on what it replaces unless that is HEAD (then HEAD and the index only).
    assert_eq!(parents(&first).len(), 2);
    assert_eq!(parents(&first)[0], head);
    repo.write("local.cfg", "the model's settings\n");
    assert!(session.protect(Path::new("build/new.cfg")).unwrap());
    let second = session.info().pre_run.to_string();
    assert_eq!(parents(&second).len(), 3);
    assert_eq!(parents(&second)[2], first);
    repo.write("build/new.cfg", "created\n");
    assert!(session.protect(Path::new("build/keep.cfg")).unwrap());
    repo.write("build/keep.cfg", "edited\n");
    session.checkpoint("step 1").unwrap().unwrap();
    repo.remove("build/keep.cfg");
    session.checkpoint("step 2").unwrap().unwrap();
    // Saved once: the second write keeps the first prior content.
    assert!(!session.protect(Path::new("local.cfg")).unwrap());
    let agents = repo.tree();

    let diff = session.diff(harness_undo::DiffTarget::WorkingTree).unwrap();
    let changed: Vec<String> = diff
        .files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();
    assert_eq!(changed, ["build/keep.cfg", "build/new.cfg", "local.cfg"]);

    let id = session.id().clone();
    drop(session);
    let mut session = Session::open(&repo.root, &id).unwrap();
    session.undo(Force::No).unwrap();
    assert_eq!(repo.tree(), before);
    session.redo(Force::No).unwrap();
    assert_eq!(repo.tree(), agents);
}

#[test]
fn protect_skips_what_snapshots_cover_and_what_is_not_plainly_inside() {
    let repo = Repo::with_files(&[(".gitignore", "*.cfg\n"), ("main.rs", "fn main() {}\n")]);
    repo.write("dir.cfg/inner", "x");
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("x.cfg"), "outside\n").unwrap();

    let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
    let pre = session.info().pre_run;
    repo.symlink("out", outside.path().to_str().unwrap());
    for path in [
        "main.rs",       // tracked
        "other.rs",      // not ignored
        "/etc/x.cfg",    // absolute
        "../x.cfg",      // outside
        "a/../b.cfg",    // not plain
        ".git/x.cfg",    // in .git
        "dir.cfg",       // a directory
        "out/x.cfg",     // through a symlink, here out of the workspace
        "main.rs/x.cfg", // below a file
        "",              // nothing
    ] {
        assert!(!session.protect(Path::new(path)).unwrap(), "{path}");
    }
    assert_eq!(session.info().pre_run, pre, "nothing was recorded");
}

#[test]
fn a_new_file_in_an_ignored_directory_not_yet_made_is_removed_by_undo_even_without_git() {
    let repo = Repo::with_files(&[(".gitignore", "build/\n"), ("x", "")]);
    let before = repo.tree();
    let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
    assert!(session.protect(Path::new("build/o")).unwrap());
    repo.write("build/o", "");
    session.checkpoint("tools").unwrap();
    shell(&repo, "rm -rf .git");
    let undone = session.undo(Force::Yes).unwrap();
    assert!(undone.repository_missing);
    assert_eq!(repo.tree(), before, "{undone:?}");
}

#[test]
fn prune_keeps_the_newest_runs_and_removes_the_others_refs_everywhere() {
    let repo = dirty_project();
    let ids: Vec<_> = (0..3).map(|_| begin_dirty(&repo).id().clone()).collect();
    let size = harness_undo::store_size(&repo.root).unwrap().unwrap();
    assert!(size > 0);
    let pruned = harness_undo::prune(&repo.root, harness_undo::Prune::Keep(1))
        .unwrap()
        .removed;
    let pruned_runs: Vec<_> = pruned.iter().map(|run| run.pre_run).collect();
    let pruned: Vec<_> = pruned.into_iter().map(|run| run.id).collect();
    assert_eq!(pruned, ids[..2]);
    let left: Vec<_> = Session::runs(&repo.root)
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(left, ids[2..]);
    let refs = repo.refs();
    for id in &ids[..2] {
        assert!(
            !refs.iter().any(|(name, _)| name.contains(id.as_str())),
            "{refs:?}"
        );
        let store = repo.store().unwrap();
        let output = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(&store)
            .args(["for-each-ref", &format!("refs/harness/{id}")])
            .output()
            .unwrap();
        assert!(output.stdout.is_empty(), "the store's refs go too");
    }
    assert!(refs.iter().any(|(name, _)| name.contains(ids[2].as_str())));
    // The pruned runs' own snapshots left the store (git gc ran).
    let store = repo.store().unwrap();
    let kept = git2::Repository::open_bare(&store).unwrap();
    for run in &pruned_runs {
        let id = git2::Oid::from_str(&run.to_string()).unwrap();
        assert!(kept.find_commit(id).is_err(), "{run} is still in the store");
    }
    assert_eq!(
        harness_undo::store_size(&repo.root).unwrap(),
        Some(bytes_below(&store))
    );
    // The kept run still undoes.
    let mut kept = Session::open(&repo.root, &ids[2]).unwrap();
    repo.write("src/lib.rs", "changed\n");
    kept.undo(Force::No).unwrap();
    assert_eq!(
        repo.read("src/lib.rs"),
        "pub fn users_uncommitted_edit() {}\n"
    );

    let none = harness_undo::prune(&repo.root, harness_undo::Prune::Keep(5)).unwrap();
    assert!(none.removed.is_empty() && none.in_progress.is_empty());
    let old = harness_undo::prune(
        &repo.root,
        harness_undo::Prune::OlderThan(std::time::Duration::from_secs(3600)),
    )
    .unwrap();
    assert!(old.removed.is_empty(), "the kept run began just now");
    // Open here, the run is not pruned; closed, it is.
    let zero = harness_undo::Prune::OlderThan(std::time::Duration::ZERO);
    let open = harness_undo::prune(&repo.root, zero).unwrap();
    assert_eq!((open.removed.len(), open.in_progress.len()), (0, 1));
    drop(kept);
    let all = once_let_go(
        || harness_undo::prune(&repo.root, zero).unwrap(),
        |all| all.in_progress.is_empty(),
    );
    assert_eq!(all.removed.len(), 1);
    assert!(Session::runs(&repo.root).unwrap().is_empty());
}

#[test]
fn a_store_whose_workspace_is_gone_is_listed_as_such_and_removable() {
    let repo = dirty_project();
    begin_dirty(&repo);
    let find = || {
        harness_undo::stores()
            .unwrap()
            .into_iter()
            .find(|store| store.workspace == repo.root)
            .unwrap()
    };
    let listed = find();
    assert!(listed.workspace_exists);
    assert_eq!(listed.runs, 1);
    assert!(listed.bytes > 0);
    assert_eq!(Some(listed.dir.clone()), repo.store());
    let err = harness_undo::remove_store(&listed).unwrap_err();
    assert!(err.to_string().contains("still exists"), "{err}");
    assert!(listed.dir.is_dir());

    fs::remove_dir_all(&repo.root).unwrap();
    let gone = find();
    assert!(!gone.workspace_exists);
    harness_undo::remove_store(&gone).unwrap();
    assert!(!gone.dir.exists());
    assert!(
        !harness_undo::stores()
            .unwrap()
            .iter()
            .any(|store| store.workspace == repo.root)
    );
}

/// Issue 45, class 7: nothing deletes a run in progress, not even with its store's
/// workspace gone (moved for a moment, or removed under the run).
#[test]
fn issue_45_a_store_with_a_run_in_progress_is_not_removed() {
    let repo = dirty_project();
    let session = begin_dirty(&repo);
    let moved = repo.root.with_extension("moved");
    fs::rename(&repo.root, &moved).unwrap();
    let store = harness_undo::stores()
        .unwrap()
        .into_iter()
        .find(|store| store.workspace == repo.root)
        .unwrap();
    assert!(!store.workspace_exists);
    let err = harness_undo::remove_store(&store).unwrap_err();
    assert!(
        matches!(&err, harness_undo::Error::RunInProgress { run, .. } if run == session.id()),
        "{err}"
    );
    assert!(store.dir.is_dir(), "kept");
    drop(session);
    once_let_go(
        || harness_undo::remove_store(&store),
        |removed| !matches!(removed, Err(harness_undo::Error::RunInProgress { .. })),
    )
    .unwrap();
    assert!(!store.dir.exists(), "once the run ended, as any other");
    fs::rename(&moved, &repo.root).unwrap();
}

/// Issue 45 changed this: ignored files commands write are listed and undone; only those
/// too large to have been saved at the start are counted as not undoable (all were).
#[test]
fn ignored_files_commands_changed_are_counted_as_not_undoable() {
    let repo = Repo::with_files(&[(".gitignore", "target/\n*.cfg\n"), ("x", "")]);
    repo.write("target/old", "built before the run\n");
    // Older than the run, as a build output from yesterday would be.
    shell(&repo, "touch -d '2000-01-01' target/old");
    let big = vec![b'u'; usize::try_from(harness_undo::LARGEST_SAVED_IGNORED_FILE).unwrap() + 1];
    repo.write("target/big.so", &big);
    let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
    assert_eq!(
        session.unrecorded_ignored_changes().unwrap(),
        (0, Vec::new())
    );
    for n in 0..25 {
        repo.write(&format!("target/out/{n:02}"), "built\n");
    }
    repo.write("target/big.so", "rebuilt\n");
    // A tracked file changed is no ignored one.
    repo.write("x", "changed\n");
    assert!(session.protect(Path::new("tool.cfg")).unwrap());
    repo.write("tool.cfg", "the file tools' own, undoable\n");
    let changes = session.ignored_changes().unwrap();
    assert_eq!(changes.created.len(), 26, "target/out and its 25 files");
    assert_eq!(changes.created[0], Path::new("target/out"));
    assert_eq!(changes.created[1], Path::new("target/out/00"));
    assert!(
        !changes
            .created
            .contains(&Path::new("tool.cfg").to_path_buf())
    );
    assert_eq!(
        session.unrecorded_ignored_changes().unwrap(),
        (1, vec![Path::new("target/big.so").to_path_buf()]),
        "only what was too large to save"
    );
    session.undo(Force::No).unwrap();
    assert!(!repo.exists("target/out"));
    assert_eq!(repo.read("target/old"), "built before the run\n");
    assert_eq!(repo.read("target/big.so"), "rebuilt\n", "left, and named");
}

#[test]
fn an_ignored_file_written_the_instant_a_run_begins_is_counted() {
    // The kernel stamps files from a clock a tick behind the one a program
    // reads: a file written right after the begin may carry an earlier time.
    // Any one run hits that only sometimes, so many runs are begun.
    let repo = Repo::with_files(&[(".gitignore", "target/\n"), ("x", "")]);
    for run in 0..40 {
        let session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
        let path = format!("target/{run:02}");
        repo.write(&path, "built\n");
        // Issue 45: listed by the ignored files' changes, which undo puts back.
        let created = session.ignored_changes().unwrap().created;
        // The first run makes `target` too.
        let made_target = usize::from(run == 0);
        assert_eq!(created.len(), 1 + made_target, "{created:?}");
        assert_eq!(created[made_target], Path::new(&path));
        fs::remove_file(repo.root.join(&path)).unwrap();
    }
}

#[test]
fn an_ignored_file_a_command_backdates_or_copies_with_its_old_time_is_counted() {
    // A command sets a file's modification time as it likes: `touch -d`, or
    // `cp -p`, `tar x` and `rsync -a`, which keep the times they copy. None
    // of them can set the time of the inode's last change.
    let repo = Repo::with_files(&[(".gitignore", "target/\n"), ("old.txt", "from before\n")]);
    shell(&repo, "touch -d '2000-01-01' old.txt");
    // Built before the run: one is left alone, one a command renames.
    repo.write("target/untouched", "built before\n");
    repo.write("target/before", "built before\n");
    let session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
    shell(
        &repo,
        "echo built > target/touched && touch -d '2000-01-01' target/touched \
         && mv target/before target/moved \
         && cp -p old.txt target/copied \
         && tar cf target/old.tar old.txt && touch -d '2000-01-01' target/old.tar \
         && mkdir target/unpacked && tar xf target/old.tar -C target/unpacked",
    );
    // Issue 45: listed by the ignored files' changes, which undo puts back.
    let changes = session.ignored_changes().unwrap();
    assert_eq!(
        changes.created,
        [
            "target/copied",
            "target/moved",
            "target/old.tar",
            "target/touched",
            "target/unpacked",
            "target/unpacked/old.txt"
        ]
        .map(|p| Path::new(p).to_path_buf())
        .to_vec()
    );
    assert_eq!(
        changes.deleted,
        vec![Path::new("target/before").to_path_buf()]
    );
}

#[test]
fn a_file_git_ignores_through_its_directory_is_saved_though_a_rule_names_it_again() {
    // git cannot re-include a file whose directory is excluded: `keep.cfg`
    // is ignored, whatever the second rule says, and no snapshot holds it.
    let repo = Repo::with_files(&[(".gitignore", "build/\n!build/keep.cfg\n"), ("x", "")]);
    repo.write("build/keep.cfg", "the user's\n");
    assert_eq!(
        repo.git(&["check-ignore", "build/keep.cfg"]).trim(),
        "build/keep.cfg"
    );
    let before = repo.tree();
    let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
    assert!(session.protect(Path::new("build/keep.cfg")).unwrap());
    repo.write("build/keep.cfg", "the model's\n");
    session.checkpoint("write_file").unwrap().unwrap();
    session.undo(Force::No).unwrap();
    assert_eq!(repo.tree(), before);
}

#[test]
fn an_older_checkpoint_pruned_from_the_workspace_is_read_from_the_store() {
    let repo = Repo::with_files(&[("a.txt", "original\n")]);
    let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
    for step in 1..=3 {
        repo.write("a.txt", format!("step {step}\n"));
        session
            .checkpoint(&format!("step {step}"))
            .unwrap()
            .unwrap();
    }
    shell(&repo, PRUNE_ATTACK);
    // Before any check after the command has put the chain back (or with
    // the process killed first), the store has what the workspace lost.
    let first_checkpoint = |session: &mut Session| {
        let diff = session
            .diff(harness_undo::DiffTarget::Checkpoint(1))
            .unwrap();
        diff.files[0].patch.clone()
    };
    let patch = first_checkpoint(&mut session);
    assert!(patch.contains("+step 1"), "{patch}");
    // And from a new process, which opens the workspace's repository anew.
    let id = session.id().clone();
    drop(session);
    let mut opened = Session::open(&repo.root, &id).unwrap();
    let patch = first_checkpoint(&mut opened);
    assert!(patch.contains("+step 1"), "{patch}");
}

/// The bytes of the files below `dir`, as `du --apparent-size` counts them.
fn bytes_below(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                bytes_below(&entry.path())
            } else {
                entry.metadata().unwrap().len()
            }
        })
        .sum()
}

/// Four checkpoints and two saved states, then `attack` run as the model
/// would, then the check the agent makes after each command: plain git in
/// the workspace reads the whole chain again, not only its newest commits.
fn the_check_puts_back_the_whole_chain_after(attack: &str) {
    let repo = dirty_project();
    let mut session = begin_dirty(&repo);
    let id = session.id().clone();
    let mut taken = Vec::new();
    for step in 1..=4 {
        repo.write("src/lib.rs", format!("pub fn step_{step}() {{}}\n"));
        repo.write(&format!("new{step}.rs"), format!("// step {step}\n"));
        let label = format!("step {step}");
        taken.push(session.checkpoint(&label).unwrap().unwrap().commit);
    }
    // Each restore saves the state it replaces, on a chain of its own.
    session.undo(Force::No).unwrap();
    session.redo(Force::No).unwrap();
    session.wait_for_store().unwrap();
    let readable = |object: &str| {
        common::git_command(&repo.root)
            .args(["cat-file", "-e", object])
            .status()
            .unwrap()
            .success()
    };
    shell(&repo, attack);
    for commit in &taken {
        assert!(!readable(&commit.to_string()), "{attack}: pruned {commit}");
    }

    let found = session.verify().unwrap();
    let checkpoints = format!("refs/harness/{id}/checkpoints");
    assert!(
        found.contains(&Tampering::ObjectsRestored {
            name: checkpoints.clone()
        }),
        "{attack}: {found:?}"
    );
    // The chain, exactly: four checkpoints on the pre-run state.
    let pre = session.info().pre_run.to_string();
    let chain = repo.git(&[
        "rev-list",
        "--first-parent",
        &checkpoints,
        &format!("^{pre}"),
    ]);
    let newest_first: Vec<String> = taken.iter().rev().map(ToString::to_string).collect();
    assert_eq!(chain.lines().collect::<Vec<_>>(), newest_first, "{attack}");
    let subjects = repo.git(&[
        "log",
        "--format=%s",
        "-n",
        "5",
        "--first-parent",
        &checkpoints,
    ]);
    assert_eq!(
        subjects.lines().collect::<Vec<_>>(),
        [
            "checkpoint 4: step 4",
            "checkpoint 3: step 3",
            "checkpoint 2: step 2",
            "checkpoint 1: step 1",
            &format!("pre-run state of run {id}"),
        ],
        "{attack}"
    );
    // Every checkpoint's tree and files: git diff against each works.
    for (step, commit) in (1..).zip(&taken) {
        let stat = repo.git(&["diff", "--stat", &pre, &commit.to_string()]);
        assert!(stat.contains(&format!("new{step}.rs")), "{attack}: {stat}");
        let file = repo.git(&["show", &format!("{commit}:src/lib.rs")]);
        assert_eq!(file, format!("pub fn step_{step}() {{}}\n"), "{attack}");
    }
    // The saved states: two, each with its index commit.
    let saved = format!("refs/harness/{id}/saved");
    let head = session.info().head.to_string();
    let count = repo.git(&["rev-list", "--count", &saved, &format!("^{head}")]);
    assert_eq!(count.trim(), "4", "{attack}");
    // And nothing any ref needs is missing.
    repo.git(&["fsck", "--no-dangling", "--connectivity-only"]);
    assert_eq!(session.verify().unwrap(), Vec::new(), "{attack}");
}

#[test]
fn the_check_after_a_prune_attack_puts_back_every_checkpoint_of_the_chain() {
    the_check_puts_back_the_whole_chain_after(PRUNE_ATTACK);
}

#[test]
fn the_check_after_git_is_replaced_by_a_new_repository_puts_back_the_whole_chain() {
    the_check_puts_back_the_whole_chain_after("rm -rf .git && git init -q");
}

#[test]
fn the_check_finds_one_older_checkpoint_deleted_from_the_middle_of_the_chain() {
    let repo = Repo::with_files(&[("a.txt", "original\n")]);
    let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
    let mut taken = Vec::new();
    for step in 1..=3 {
        repo.write("a.txt", format!("step {step}\n"));
        let label = format!("step {step}");
        taken.push(
            session
                .checkpoint(&label)
                .unwrap()
                .unwrap()
                .commit
                .to_string(),
        );
    }
    session.wait_for_store().unwrap();
    // The refs and the newest checkpoint stay; the middle one's file goes.
    let middle = &taken[1];
    shell(
        &repo,
        &format!("rm .git/objects/{}/{}", &middle[..2], &middle[2..]),
    );
    let name = format!("refs/harness/{}/checkpoints", session.id());
    assert!(
        !common::git_command(&repo.root)
            .args(["rev-list", &name])
            .output()
            .unwrap()
            .status
            .success(),
        "git cannot walk the chain"
    );
    assert_eq!(
        session.verify().unwrap(),
        vec![Tampering::ObjectsRestored { name: name.clone() }]
    );
    let chain = repo.git(&["rev-list", &name, &format!("^{}", repo.head())]);
    let newest_first: Vec<&str> = taken.iter().rev().map(String::as_str).collect();
    assert_eq!(chain.lines().collect::<Vec<_>>(), newest_first);
}

/// An attempt that removed `.git`: the revert for the next attempt still brings the working
/// tree back from the store, and a second revert (after the next attempt failed too) does
/// the same.
#[test]
fn revert_to_start_after_rm_rf_git_restores_the_working_tree_from_the_store() {
    let repo = dirty_project();
    let before = repo.tree();
    let mut session = begin_dirty(&repo);
    agent_step(&repo);
    // As the agent does before each command.
    session.wait_for_store().unwrap();
    shell(&repo, "rm -rf .git");
    session.checkpoint("attempt 1").unwrap();

    let reverted = session.revert_to_start().unwrap();
    assert!(reverted.repository_missing);
    assert_eq!(repo.tree(), before);
    assert!(!session.info().undone);

    agent_step(&repo);
    session.checkpoint("attempt 2").unwrap();
    session.revert_to_start().unwrap();
    assert_eq!(
        repo.tree(),
        before,
        "a second revert is as exact as the first"
    );
}

/// A file git ignored when the run began is in no snapshot of its start. A command that
/// changes the ignore rules makes it visible, a checkpoint records it, and going back to
/// the start must not take it for the run's: undo and the revert between attempts leave
/// it, and say so; what the run created goes.
#[test]
fn undo_keeps_the_ignored_files_from_before_the_run_that_a_command_made_visible() {
    for revert in [false, true] {
        let repo = Repo::with_files(&[(".gitignore", "precious.txt\nnotes/\n"), ("x", "")]);
        repo.write("precious.txt", "mine\n");
        repo.write("notes/deep.md", "mine too\n");
        let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
        // A command empties the ignore rules, appends to one file, creates two (one where
        // the rules ignore again after the undo), and moves a tracked one: a moved file
        // keeps its birth time, and is not ignored, so it goes.
        repo.write(".gitignore", "");
        shell(&repo, "echo appended >> precious.txt; mv x moved.txt");
        repo.write("created.txt", "the run's\n");
        repo.write("notes/new.md", "the run's\n");
        session.checkpoint("a command").unwrap();
        let restored = if revert {
            session.revert_to_start().unwrap()
        } else {
            session.undo(Force::No).unwrap()
        };
        assert_eq!(
            restored.kept,
            [Path::new("notes/deep.md"), Path::new("precious.txt")],
            "revert: {revert}"
        );
        assert!(
            !restored
                .changed
                .iter()
                .any(|path| restored.kept.contains(path))
        );
        assert_eq!(repo.read("notes/deep.md"), "mine too\n");
        // Issue 45 changed this: what a command wrote into a file ignored at the start
        // is undone too (it was kept as the command left it).
        assert_eq!(repo.read("precious.txt"), "mine\n");
        for gone in ["created.txt", "notes/new.md", "moved.txt"] {
            assert!(!repo.root.join(gone).exists(), "{gone}, revert: {revert}");
        }
        assert_eq!(repo.read("x"), "");
        assert_eq!(repo.read(".gitignore"), "precious.txt\nnotes/\n");
    }
}

/// A file from before the run that no snapshot holds is not kept by undo for that alone: a
/// command could then leave a file of its choosing behind (move a tracked file to a name
/// a tool loads, such as `conftest.py`, and rewrite it; the inode keeps its birth time).
#[test]
fn undo_leaves_no_file_a_command_made_from_a_moved_tracked_file() {
    for revert in [false, true] {
        let repo = Repo::with_files(&[("README.md", "the user's readme\n")]);
        let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
        shell(
            &repo,
            "mv README.md conftest.py; printf 'import os\\n' > conftest.py",
        );
        session.checkpoint("a command").unwrap();
        let restored = if revert {
            session.revert_to_start().unwrap()
        } else {
            session.undo(Force::No).unwrap()
        };
        assert!(restored.kept.is_empty(), "revert: {revert}");
        assert!(!repo.root.join("conftest.py").exists(), "revert: {revert}");
        assert_eq!(repo.read("README.md"), "the user's readme\n");
    }
}

/// A command can nest directories deeper than a thread's stack could recurse, and deeper
/// than libgit2 walks (100 levels). Checkpoints and undo must go on: the part too deep to
/// record is left out, as an ignored directory would be, and the rest is undone.
#[test]
fn a_directory_nested_thousands_deep_is_left_out_and_undo_still_restores_the_rest() {
    for tracking in [Tracking::Watch, Tracking::FullScan] {
        let repo = Repo::with_files(&[("a.txt", "the user's\n")]);
        let options = BeginOptions {
            tracking,
            ..BeginOptions::default()
        };
        let mut session = Session::begin(&repo.root, options).unwrap();
        repo.write("a.txt", "the run's\n");
        repo.write("new.txt", "the run's\n");
        // Each level entered by its name alone: the whole path is longer than the system
        // allows in one call.
        shell(
            &repo,
            "python3 -c 'import os\nfor _ in range(3000): os.mkdir(\"d\"); os.chdir(\"d\")\nopen(\"f\", \"w\").write(\"x\")'",
        );
        session.checkpoint("a deep command").unwrap();
        // Reported with what undo cannot restore: the first directory too deep to record.
        let (count, listed) = session.unrecorded_ignored_changes().unwrap();
        assert_eq!(count, 1, "{tracking:?}: {listed:?}");
        let deep = listed[0].to_str().unwrap();
        assert_eq!(deep, "d/".repeat(90), "{tracking:?}");
        let restored = session.undo(Force::No).unwrap();
        assert_eq!(repo.read("a.txt"), "the user's\n", "{tracking:?}");
        assert!(!repo.root.join("new.txt").exists(), "{tracking:?}");
        assert_eq!(
            restored.changed,
            [Path::new("a.txt"), Path::new("new.txt")],
            "{tracking:?}"
        );
        // Left as it is: nothing of it was recorded.
        assert!(repo.root.join("d/d/d").is_dir(), "{tracking:?}");
    }
}

/// `git fsck` and `git gc` in the workspace, each of which fails on an object a ref needs
/// and the repository lacks.
fn assert_repository_whole(repo: &Repo) {
    shell(repo, "git fsck --no-dangling && git gc -q");
}

/// The store keeps what earlier runs at a path recorded; a repository made again at that
/// path lacks it. What the new runs' refs point to must still be in the workspace's own
/// objects, though libgit2 skips writing an object the store has: else `git gc` stops on
/// a missing tree.
#[test]
fn every_object_the_runs_refs_need_is_in_the_workspace_even_when_the_store_had_it() {
    let repo = Repo::with_files(&[("a.txt", "one\n")]);
    let change = |repo: &Repo| {
        repo.write("a.txt", "two\n");
        repo.write("dir/deep/b.txt", "b\n");
    };
    let mut earlier = Session::begin(&repo.root, BeginOptions::default()).unwrap();
    change(&repo);
    earlier.checkpoint("the change").unwrap();
    earlier.undo(Force::No).unwrap();
    drop(earlier);
    // Cloned again, as it were: the same files, a new repository.
    shell(
        &repo,
        "rm -rf .git && git init -q && git add -A && \
         git -c user.name=u -c user.email=u@x commit -qm again",
    );
    // A dirty start the earlier run recorded too, then the same change.
    repo.write("dir/deep/b.txt", "b\n");
    let options = BeginOptions {
        allow_dirty: true,
        ..BeginOptions::default()
    };
    let mut session = Session::begin(&repo.root, options).unwrap();
    change(&repo);
    session.checkpoint("the same change").unwrap();
    assert_repository_whole(&repo);
    session.undo(Force::No).unwrap();
    assert_repository_whole(&repo);
}

/// An ignored tree nested deeper than libgit2 walks stops the listing of ignored changes;
/// the directories too deep to record are still named when there are any.
#[test]
fn an_ignored_tree_too_deep_to_list_still_leaves_the_too_deep_directories_named() {
    let repo = Repo::with_files(&[(".gitignore", "build/\n"), ("x", "")]);
    let mut session = Session::begin(&repo.root, BeginOptions::default()).unwrap();
    let nest = |dir: &str, levels: usize| {
        shell(
            &repo,
            &format!(
                "python3 -c 'import os\nos.makedirs(\"{dir}\", exist_ok=True); os.chdir(\"{dir}\")\nfor _ in range({levels}): os.mkdir(\"n\"); os.chdir(\"n\")\nopen(\"f\", \"w\").write(\"x\")'"
            ),
        );
    };
    nest("build", 150);
    session.checkpoint("an ignored deep tree").unwrap();
    // Issue 45 changed this: the ignored files' walk stops at the depth the scanner
    // records and names the directory there, where libgit2's listing failed.
    let (count, listed) = session.unrecorded_ignored_changes().unwrap();
    assert_eq!(count, 1, "{listed:?}");
    assert_eq!(
        listed[0].to_str().unwrap(),
        format!("build/{}", "n/".repeat(89))
    );
    nest("d", 150);
    session.checkpoint("a deep tree too").unwrap();
    let (count, listed) = session.unrecorded_ignored_changes().unwrap();
    assert_eq!(count, 2, "{listed:?}");
    assert_eq!(
        listed[1].to_str().unwrap(),
        format!("d/{}", "n/".repeat(89))
    );
}

/// What `attempt` returns once `done` says so, trying again for up to 10 s: a process that
/// another test thread forks holds a copy of a run's lock descriptor until it execs
/// (close-on-exec closes it only then), so a run's lock may outlive its session by a moment
/// when the tests run as threads of one process. It never outlives that.
fn once_let_go<T>(mut attempt: impl FnMut() -> T, done: impl Fn(&T) -> bool) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let result = attempt();
        if done(&result) || std::time::Instant::now() >= deadline {
            return result;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_run_is_in_progress_while_its_session_is_open_and_not_after() {
    let repo = dirty_project();
    let session = begin_dirty(&repo);
    let id = session.id().clone();
    let run = || {
        Session::runs(&repo.root)
            .unwrap()
            .into_iter()
            .find(|run| run.id == id)
            .unwrap()
    };
    assert!(harness_undo::is_in_progress(&run()));
    drop(session);
    assert!(once_let_go(
        || !harness_undo::is_in_progress(&run()),
        |ended| *ended
    ));
}

#[test]
fn stores_readable_by_others_are_made_private_and_named_once() {
    use std::os::unix::fs::PermissionsExt;
    let repo = dirty_project();
    drop(begin_dirty(&repo));
    let store = repo.store().unwrap();
    fs::set_permissions(&store, fs::Permissions::from_mode(0o755)).unwrap();
    let tightened = harness_undo::make_stores_private().unwrap();
    assert!(tightened.contains(&store), "{tightened:?}");
    let mode = fs::metadata(&store).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    // Told once: a second pass finds nothing more of this store to tighten.
    let again = harness_undo::make_stores_private().unwrap();
    assert!(!again.contains(&store), "{again:?}");
}
