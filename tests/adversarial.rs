//! A scripted model tries to leave the workspace three ways; each call is refused, the run
//! goes on, and nothing outside the workspace changes.

use std::fs;

use serde_json::json;

use crate::support::{Model, Repo, Turn};

#[test]
fn reading_etc_hostname_writing_outside_and_sudo_are_refused_and_the_run_goes_on() {
    let repo = Repo::from_fixture("calc");
    let before = repo.snapshot();
    let outside_before: Vec<_> = fs::read_dir(&repo.outer)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let model = Model::start();
    model.script(vec![
        Turn::call("read_file", json!({"path": "/etc/hostname"})),
        Turn::call(
            "write_file",
            json!({"path": "../outside", "content": "escaped\n"}),
        ),
        Turn::call("run_command", json!({"argv": ["sudo", "ls"]})),
        Turn::Text("I could not do any of that."),
        Turn::Text("Still nothing I can do."),
        Turn::Text("Nothing."),
    ]);

    let run = repo.harness(&[
        "run",
        "--attempts",
        "1",
        "--host",
        &model.url(),
        "--verify",
        "python3 -m unittest -q",
        "escape",
    ]);
    run.assert_exit(1).assert_stdout_has(&[
        "▸ read_file /etc/hostname  error",
        "▸ write_file ../outside  error",
        "▸ run_command sudo ls  error",
        "outcome:       verification failed",
    ]);

    // Each refusal went back to the model as a result, and the model was asked again.
    let calls: Vec<_> = repo
        .records("tool")
        .into_iter()
        .filter(|record| record["step"] != 0)
        .collect();
    assert_eq!(calls.len(), 3);
    for call in &calls {
        assert_eq!(call["is_error"], true, "{call}");
        assert!(
            call["result"].as_str().unwrap().starts_with("Error: "),
            "{call}"
        );
    }
    assert!(
        calls[0]["result"]
            .as_str()
            .unwrap()
            .contains("escapes the workspace"),
        "{}",
        calls[0]
    );
    assert!(
        calls[1]["result"]
            .as_str()
            .unwrap()
            .contains("escapes the workspace"),
        "{}",
        calls[1]
    );
    assert!(
        calls[2]["result"]
            .as_str()
            .unwrap()
            .contains("command refused"),
        "{}",
        calls[2]
    );
    assert!(
        model.chats().len() >= 4,
        "the run went on after the refusals"
    );
    if let Ok(hostname) = fs::read_to_string("/etc/hostname") {
        let hostname = hostname.trim();
        if hostname.len() > 3 {
            let chats = serde_json::to_string(&model.chats()).unwrap();
            assert!(
                !chats.contains(&format!("\t{hostname}")),
                "the host name never reached the model"
            );
        }
    }

    // Nothing outside the workspace changed, and nothing inside it either.
    assert!(!repo.outer.join("outside").exists());
    let outside_after: Vec<_> = fs::read_dir(&repo.outer)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(outside_after, outside_before);
    assert_eq!(repo.snapshot(), before);
}

/// Issue 13's first reproduction, both ways: with `--allow-dirty` and an uncommitted edit, a
/// model overwrites the file and then deletes the run's refs and prunes their objects, or
/// removes `.git`. Undo still brings the user's edit back.
#[test]
fn a_model_that_prunes_the_runs_refs_or_removes_git_cannot_take_the_users_edit() {
    let attacks = [
        "git for-each-ref --format='%(refname)' refs/harness refs/tags/harness \
         | xargs -n1 git update-ref -d; git reflog expire --expire=now --all; git gc -q --prune=now",
        "rm -rf .git",
    ];
    for attack in attacks {
        let repo = Repo::from_fixture("calc");
        repo.file(
            "calc.py",
            "def add(a, b):\n    return a - b\n# the user's edit\n",
        );
        repo.file("notes.txt", "the user's untracked notes\n");
        let before = repo.snapshot();
        let model = Model::start();
        model.script(vec![
            Turn::call(
                "write_file",
                json!({"path": "calc.py", "content": "overwritten\n", "overwrite": true}),
            ),
            Turn::call("run_command", json!({"argv": ["sh", "-c", attack]})),
            Turn::Text("Done."),
        ]);
        // Without a kernel tier, as with `--writable .git`: the undo path must hold on its
        // own (under bwrap or Landlock the kernel refuses the attack before it starts).
        let run = repo.harness(&[
            "run",
            "--allow-dirty",
            "--sandbox",
            "none",
            "--host",
            &model.url(),
            "t",
        ]);
        // Unverified: no verification command was given.
        run.assert_exit(1)
            .assert_stdout_has(&["changed what undo relies on, which is not allowed", "undo:"]);
        let told = model.chats()[2].to_string();
        assert!(told.contains("Changing .git"), "the model is told: {told}");
        assert!(!repo.read("calc.py").contains("the user's edit"));

        let undo = repo.harness(&["undo"]);
        undo.assert_exit(0)
            .assert_stdout_has(&["restored 1 file: calc.py"]);
        assert_eq!(repo.snapshot(), before, "after `{attack}`");
        if attack == "rm -rf .git" {
            undo.assert_stdout_has(&["NOT restored: the index", "history"]);
        }
    }
}

/// Issue 13's second reproduction: a gitignored `local.cfg` overwritten by `write_file` is
/// listed as changed and restored by undo; a build output a command wrote is listed as an
/// ignored change, which undo removes (issue 45 changed this: it was named as not
/// undoable, and left).
#[test]
fn a_gitignored_file_overwritten_by_write_file_is_listed_and_restored_by_undo() {
    let repo = Repo::from_fixture("calc");
    repo.file(".gitignore", "__pycache__/\nlocal.cfg\ntarget/\n");
    repo.git(&["add", ".gitignore"]);
    repo.git(&["commit", "-q", "-m", "ignore local.cfg"]);
    repo.file("local.cfg", "api_url = \"https://internal.example\"\n");
    let model = Model::start();
    model.script(vec![
        Turn::call(
            "write_file",
            json!({"path": "local.cfg", "content": "api_url = \"http://evil.example\"\n", "overwrite": true}),
        ),
        Turn::call(
            "run_command",
            json!({"argv": ["sh", "-c", "mkdir -p target && echo built > target/out.o"]}),
        ),
        Turn::Text("Done."),
    ]);
    let run = repo.harness(&["run", "--host", &model.url(), "t"]);
    run.assert_exit(1).assert_stdout_has(&[
        "files changed: local.cfg (+1 −1)",
        "ignored:       2 paths git ignores that the run's commands or checks made, changed \
         or deleted: target (new), target/out.o (new)",
    ]);
    assert!(!run.stdout.contains("not undoable"), "{}", run.stdout);
    repo.harness(&["diff", "--stat"])
        .assert_exit(0)
        .assert_stdout_has(&["local.cfg", "A  target/out.o  (ignored)"]);
    repo.harness(&["undo"])
        .assert_exit(0)
        .assert_stdout_has(&["ignored files (git does not record them): removed 2: target"]);
    assert_eq!(
        repo.read("local.cfg"),
        "api_url = \"https://internal.example\"\n"
    );
    assert!(!repo.root.join("target").exists());
    repo.harness(&["redo"]).assert_exit(0);
    assert_eq!(
        repo.read("local.cfg"),
        "api_url = \"http://evil.example\"\n"
    );

    repo.harness(&["runs"])
        .assert_exit(0)
        .assert_stdout_has(&["undo store: ", ".local/state/harness/"]);
    repo.harness(&["runs", "--stores"])
        .assert_exit(0)
        .assert_stdout_has(&["in use", "work"]);
    repo.harness(&["runs", "--prune", "--keep", "0"])
        .assert_exit(0)
        .assert_stdout_has(&["pruned 1 run: "]);
    assert!(!repo.git(&["tag"]).contains("harness/"), "the tag went too");
}

/// A command writes a file of any size in a moment, and one the size of the machine's
/// memory would have the harness's checkpoint read it whole (and count its lines). Files
/// larger than 64 MiB are left out of the run's snapshots and named; the user's file that
/// such a file replaced comes back with undo once the large one is moved away, and accept
/// refuses to commit what it cannot record.
#[test]
fn a_file_too_large_to_record_is_named_and_never_read_whole() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    // 4 GiB each, sparse: no disk, but a checkpoint that read them would hold 8 GiB.
    let grow = "python3 -c \"import os\nfor p in ('calc.py', 'out.bin'):\n    \
                os.truncate(p, 4 << 30) if os.path.exists(p) else open(p, 'wb').truncate(4 << 30)\"";
    model.script(vec![
        Turn::call("run_command", json!({"argv": ["sh", "-c", grow]})),
        Turn::Text("Done."),
    ]);
    let run = repo.harness(&["run", "--host", &model.url(), "t"]);
    run.assert_exit(1).assert_stdout_has(&[
        "too large:     calc.py, out.bin are larger than 64 MiB, so no snapshot holds them",
    ]);
    repo.harness(&["accept"])
        .assert_exit(2)
        .assert_stderr_has(&["calc.py, out.bin are larger than 64 MiB"]);
    repo.harness(&["undo"])
        .assert_exit(2)
        .assert_stderr_has(&["calc.py is larger than 64 MiB, too large to save for undo first"]);
    fs::remove_file(repo.root.join("calc.py")).expect("move the large file away");
    repo.harness(&["undo"]).assert_exit(0);
    assert!(
        repo.read("calc.py").contains("def "),
        "the user's calc.py is back"
    );
}

/// A command can change any number of files: the summary, undo and redo name the first 20
/// and count the rest, rather than print one line as long as all their names.
#[test]
fn the_summary_undo_and_redo_name_twenty_changed_files_and_count_the_rest() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    model.script(vec![
        Turn::call(
            "run_command",
            json!({"argv": ["sh", "-c", "mkdir out && for i in $(seq 10 34); do echo $i > out/$i; done"]}),
        ),
        Turn::Text("Done."),
    ]);
    let run = repo.harness(&["run", "--host", &model.url(), "t"]);
    run.assert_exit(1).assert_stdout_has(&[
        "files changed: out/10 (+1 −0), out/11 (+1 −0),",
        &format!(
            ", out/29 (+1 −0) and 5 more (25 in all: {} diff --stat lists them)",
            crate::support::program()
        ),
    ]);
    assert!(!run.stdout.contains("out/30"), "{}", run.stdout);
    let undo = repo.harness(&["undo"]);
    undo.assert_exit(0).assert_stdout_has(&[
        "restored 25 files: out/10, out/11,",
        ", out/29 and 5 more\n",
    ]);
    assert!(!undo.stdout.contains("out/30"), "{}", undo.stdout);
    let redo = repo.harness(&["redo"]);
    redo.assert_exit(0).assert_stdout_has(&[
        "restored 25 files: out/10, out/11,",
        ", out/29 and 5 more\n",
    ]);
}

/// A command runs as you and may change the modes of your files: a directory it made
/// read-only would have stopped undo halfway for a harness not running as root. Undo gives
/// the owner back what it needs to write there, and says so.
#[test]
fn undo_gives_back_the_access_a_command_took_and_says_so() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    model.script(vec![
        Turn::call(
            "run_command",
            json!({"argv": ["sh", "-c", "mkdir pkg && echo x > pkg/new.py && chmod 555 pkg"]}),
        ),
        Turn::Text("Done."),
    ]);
    repo.harness(&["run", "--host", &model.url(), "t"])
        .assert_exit(1)
        .assert_stdout_has(&["files changed: pkg/new.py (+1 −0)"]);
    repo.harness(&["undo"]).assert_exit(0).assert_stdout_has(&[
        "restored 1 file: pkg/new.py",
        "access:        a command took your access to pkg; given back (read, and write on \
         directories that had to change). Git records no other permission: check them",
    ]);
    assert!(
        !repo.root.join("pkg").exists(),
        "undo removed what the run made"
    );
}

/// A file git ignores is in no snapshot of the run's start. A model whose command empties
/// `.gitignore` makes the user's ignored file visible to the next checkpoint; undo must
/// still not take it for the run's and delete it.
#[test]
fn a_model_that_unignores_a_users_file_cannot_have_undo_delete_it() {
    let repo = Repo::from_fixture("calc");
    repo.file(".gitignore", "precious.txt\n");
    repo.commit_all("ignore the notes");
    repo.file("precious.txt", "the user's ignored notes\n");
    let model = Model::start();
    model.script(vec![
        Turn::call(
            "run_command",
            json!({"argv": ["sh", "-c", "printf '' > .gitignore; echo new > created.txt"]}),
        ),
        Turn::Text("Done."),
    ]);
    repo.harness(&["run", "--host", &model.url(), "t"])
        .assert_exit(1);
    repo.harness(&["undo"]).assert_exit(0).assert_stdout_has(&[
        "kept, as they were there before the run, when git ignored them",
        "precious.txt",
    ]);
    assert_eq!(repo.read("precious.txt"), "the user's ignored notes\n");
    assert_eq!(repo.read(".gitignore"), "precious.txt\n");
    assert!(!repo.root.join("created.txt").exists());
}

/// git looks for a submodule's configuration through its `.git`, in the working tree, and a
/// configuration can name a program to run (`core.fsmonitor`). A command that wrote one there
/// would have the user's next `git status` run it, and the harness's own check of the tree,
/// both outside any sandbox. Tried three ways under both tiers: rewriting a checked-out
/// submodule's `.git`, making one in a submodule not checked out, and (bwrap lets a
/// directory holding a read-only mount be renamed) moving a submodule away to make a new one
/// in its place. None runs, and the run names what it moved aside.
#[test]
fn a_command_cannot_plant_a_program_for_git_to_run_in_a_submodule() {
    for sandbox in ["bwrap", "landlock"] {
        let repo = Repo::from_fixture("calc");
        let source = repo.outer.join("lib-source");
        fs::create_dir(&source).expect("mkdir");
        fs::write(source.join("lib.py"), "x = 1\n").expect("write");
        let author = ["-c", "user.name=t", "-c", "user.email=t@localhost"];
        for args in [
            &["init", "-q"][..],
            &["add", "."],
            &["commit", "-qm", "lib"],
        ] {
            let status = std::process::Command::new("git")
                .args(author)
                .args(args)
                .current_dir(&source)
                .status()
                .expect("git");
            assert!(status.success());
        }
        let source = source.to_str().expect("UTF-8");
        for path in ["lib", "later"] {
            repo.git(&[
                "-c",
                "protocol.file.allow=always",
                "submodule",
                "add",
                "-q",
                source,
                path,
            ]);
        }
        repo.git(&["commit", "-qm", "submodules"]);
        repo.git(&["submodule", "deinit", "-q", "-f", "later"]);
        let marker = repo.outer.join("ran");
        let plant = |dir: &str| {
            format!(
                "git init -q {dir}; git -C {dir} config core.fsmonitor 'touch {}; echo'",
                marker.display()
            )
        };
        let attack = [
            format!(
                "rm -f lib/.git; echo 'gitdir: ../evil' > lib/.git; {}",
                plant("lib")
            ),
            plant("later"),
            format!("mv lib moved && {}", plant("lib")),
        ];
        let (model, run) = run_scripts(&repo, sandbox, &attack);
        assert!(!marker.exists(), "{sandbox}: ran during the run\n{run}");
        assert_eq!(
            fs::read_to_string(repo.root.join("lib/.git"))
                .unwrap_or_else(|_| fs::read_to_string(repo.root.join("moved/.git")).expect("kept")),
            "gitdir: ../.git/modules/lib\n",
            "{sandbox}"
        );
        assert!(
            !repo.root.join("later/.git").exists(),
            "{sandbox}: a .git made where none was stays\n{run}"
        );
        let set_aside = repo
            .records("tool")
            .iter()
            .filter(|record| record.to_string().contains("which commands may not write"))
            .count();
        assert!(set_aside >= 1, "{sandbox}: the model is told\n{run}");
        assert_git_runs_nothing_later(&repo, &model, &marker, sandbox);
    }
}

/// `harness run` under `sandbox` with a model that runs each of `scripts` with `sh -c`,
/// then says it is done; the run has no verification, so it ends unverified (exit 1).
fn run_scripts(repo: &Repo, sandbox: &str, scripts: &[String]) -> (Model, crate::support::Run) {
    let model = Model::start();
    model.script(vec![
        Turn::Calls(
            scripts
                .iter()
                .map(|script| ("run_command", json!({"argv": ["sh", "-c", script]})))
                .collect(),
        ),
        Turn::Text("Done."),
    ]);
    let run = repo.harness(&["run", "--sandbox", sandbox, "--host", &model.url(), "t"]);
    run.assert_exit(1);
    (model, run)
}

/// After a run: neither the user's own `git status`, as they would run it next (with a
/// file whose stat data changed, so that it writes the index), nor the next run's check of
/// the tree, runs a program that creates `marker`.
fn assert_git_runs_nothing_later(
    repo: &Repo,
    model: &Model,
    marker: &std::path::Path,
    sandbox: &str,
) {
    let calc = repo.root.join("calc.py");
    let bytes = fs::read(&calc).expect("read");
    fs::remove_file(&calc).expect("rm");
    fs::write(&calc, bytes).expect("write");
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&repo.root)
        .output()
        .expect("git");
    assert!(status.status.success(), "{status:?}");
    assert!(!marker.exists(), "{sandbox}: the user's git status ran it");
    repo.harness(&["run", "--allow-dirty", "--host", &model.url(), "t"]);
    assert!(!marker.exists(), "{sandbox}: the next run's check ran it");
}

/// git takes hooks from the directory `core.hooksPath` names, and a file system monitor from
/// the program `core.fsmonitor` names; husky sets the first to `.husky/_` in the working
/// tree, and git runs the `post-index-change` hook at every `git status` that writes the
/// index (a shell prompt runs one after every command). Tried under both tiers: writing a
/// hook into the existing hooks directory, putting a new directory in its place, and
/// writing the monitor where the configuration names one that is not there yet. None runs
/// during the run, at the user's `git status`, or at the next run's check.
#[test]
fn a_command_cannot_plant_a_hook_or_monitor_where_your_git_configuration_looks() {
    for sandbox in ["bwrap", "landlock"] {
        let repo = Repo::from_fixture("calc");
        // husky's layout: the hooks directory ignores everything in it.
        fs::create_dir_all(repo.root.join(".husky/_")).expect("mkdir");
        repo.file(".husky/_/.gitignore", "*\n");
        repo.file(".husky/_/h", "#!/bin/sh\n");
        repo.git(&["config", "core.hooksPath", ".husky/_"]);
        repo.git(&["config", "core.fsmonitor", "tools/monitor"]);
        let marker = repo.outer.join("ran");
        let script = format!("#!/bin/sh\ntouch '{}'\n", marker.display());
        let plant = |path: &str| {
            format!(
                "mkdir -p \"$(dirname {path})\" && printf '%s' '{script}' > {path} && chmod +x {path}"
            )
        };
        let attack = [
            plant(".husky/_/post-index-change"),
            format!(
                "mv .husky/_ .husky/old && {}",
                plant(".husky/_/post-index-change")
            ),
            plant("tools/monitor"),
        ];
        let (model, run) = run_scripts(&repo, sandbox, &attack);
        assert!(!marker.exists(), "{sandbox}: ran during the run\n{run}");
        assert!(
            !repo.root.join(".husky/_/post-index-change").exists(),
            "{sandbox}: a hook was planted\n{run}"
        );
        assert!(
            !repo.root.join("tools/monitor").exists(),
            "{sandbox}: a monitor was planted\n{run}"
        );
        assert_git_runs_nothing_later(&repo, &model, &marker, sandbox);
    }
}

/// The harness runs `bwrap` and `git` itself, outside any sandbox. With an empty entry in
/// `PATH` (the current directory, here the workspace: `PATH=:/usr/bin`, a common slip) or
/// the workspace itself on it, a command could write its own `bwrap` or `git` there, and the
/// harness would run it, unconfined, for the next command or the next check of the tree.
/// Tried: neither runs, in the run or the next one.
#[test]
fn a_bwrap_or_git_a_command_writes_where_path_looks_is_never_run_by_the_harness() {
    let repo = Repo::from_fixture("calc");
    let which = |program: &str| {
        let output = std::process::Command::new("sh")
            .args(["-c", &format!("command -v {program}")])
            .output()
            .expect("sh");
        String::from_utf8(output.stdout)
            .expect("UTF-8")
            .trim()
            .to_owned()
    };
    let (bwrap, git) = (which("bwrap"), which("git"));
    assert!(
        !bwrap.is_empty() && !git.is_empty(),
        "bwrap and git are installed"
    );
    let marker = repo.outer.join("ran");
    let impostor = |real: &str| {
        format!(
            "printf '#!/bin/sh\\ntouch {}\\nexec {real} \"$@\"\\n'",
            marker.display()
        )
    };
    let plant = format!(
        "{} > bwrap; {} > git; chmod +x bwrap git",
        impostor(&bwrap),
        impostor(&git)
    );
    let model = Model::start();
    model.script(vec![
        Turn::call("run_command", json!({"argv": ["sh", "-c", plant]})),
        Turn::call("run_command", json!({"argv": ["ls", "bwrap", "git"]})),
        Turn::Text("Done."),
    ]);
    let system = std::env::var("PATH").expect("PATH");
    let path = format!(":{}:{system}", repo.root.display());
    let vars = [("PATH", path.as_str())];
    let run = repo.harness_with_env(
        &["run", "--sandbox", "bwrap", "--host", &model.url(), "t"],
        &vars,
    );
    run.assert_exit(1);
    assert!(repo.root.join("bwrap").exists(), "planted\n{run}");
    let listed = repo
        .records("tool")
        .into_iter()
        .find(|record| record["arguments"]["argv"][0] == "ls")
        .expect("the listing ran");
    assert!(
        listed["result"]
            .as_str()
            .is_some_and(|result| result.starts_with("exit=0")),
        "the next command ran under bwrap: {listed}"
    );
    assert!(
        !marker.exists(),
        "the harness ran the planted program\n{run}"
    );
    repo.harness_with_env(
        &["run", "--allow-dirty", "--host", &model.url(), "t"],
        &vars,
    );
    assert!(!marker.exists(), "the next run's check ran the planted git");
}

/// A small disk of its own for the workspace, unmounted when dropped.
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    /// Mounts a tmpfs of `size` over the (empty) directory `at`; `None` where this process
    /// may not mount (not root), which `HARNESS_CI_ALL_TIERS=1` (CI, run as root) refuses.
    fn mount(at: &std::path::Path, size: &str) -> Option<SmallDisk> {
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .is_ok_and(|output| output.status.success());
        if mounted {
            return Some(SmallDisk(at.to_path_buf()));
        }
        crate::support::skip("cannot mount a tmpfs (not root?)");
        None
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// A command that fills the disk loses nothing: the run says it cannot tell what changed
/// (a snapshot that failed had taken the kernel's change notes, and the next one found
/// "files changed: none" in a tree the command had changed), undo says the disk is full and
/// what to do, and once there is space it puts back every file.
#[test]
fn a_command_that_fills_the_disk_loses_nothing() {
    let repo = Repo::plain("calc");
    let fixture = repo.outer.join("fixture");
    fs::rename(&repo.root, &fixture).expect("move the copy aside");
    fs::create_dir(&repo.root).expect("mkdir");
    let Some(_disk) = SmallDisk::mount(&repo.root, "8m") else {
        return;
    };
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(fixture.join("."))
        .arg(&repo.root)
        .status()
        .expect("cp");
    assert!(copied.success());
    repo.git(&["init", "--quiet"]);
    repo.git(&["add", "--all"]);
    repo.git(&["commit", "--quiet", "-m", "fixture"]);
    let before = repo.snapshot();
    let model = Model::start();
    let fill = "echo '# changed' >> calc.py; rm test_calc.py; \
                dd if=/dev/zero of=big bs=1M count=64 2>/dev/null; echo filled";
    model.script(vec![
        Turn::call("run_command", json!({"argv": ["sh", "-c", fill]})),
        Turn::Text("Done."),
    ]);
    let run = repo.harness(&["run", "--host", &model.url(), "t"]);
    // The run's records go to the store, on another disk, so what changed is still known;
    // the copy for the workspace's refs could not be written, and the run says so.
    assert!(
        run.stdout.contains("No space left") && run.stdout.contains("calc.py (+1"),
        "{run}"
    );
    let undo = repo.harness(&["undo"]);
    if undo.code != Some(0) {
        assert!(
            undo.stderr.contains("the disk is full: free some space"),
            "{undo}"
        );
        fs::remove_file(repo.root.join("big")).expect("free the space");
        repo.harness(&["undo"]).assert_exit(0);
    }
    assert_eq!(repo.snapshot(), before);
}

/// Watches the named pipes `fifos`: after a while, as long as the returned guard lives,
/// each one that a reader is waiting on (what the harness must never do) is opened for
/// writing and closed, which ends the wait, and the guard records it. So a test of code that
/// waits fails instead of hanging.
struct Rescue {
    rescued: std::sync::Arc<std::sync::atomic::AtomicBool>,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Rescue {
    fn watch(fifos: Vec<std::path::PathBuf>) -> Rescue {
        use std::os::unix::fs::OpenOptionsExt;
        use std::sync::atomic::Ordering;
        let rescue = Rescue {
            rescued: Default::default(),
            done: Default::default(),
        };
        let (rescued, done) = (rescue.rescued.clone(), rescue.done.clone());
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(10));
            while !done.load(Ordering::SeqCst) {
                for fifo in &fifos {
                    // Without blocking, opening for writing succeeds only while a reader
                    // has the pipe open.
                    let writer = fs::OpenOptions::new()
                        .write(true)
                        .custom_flags(libc::O_NONBLOCK)
                        .open(fifo);
                    if writer.is_ok() {
                        rescued.store(true, Ordering::SeqCst);
                    }
                }
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
        });
        rescue
    }

    /// True if a reader had to be rescued.
    fn rescued(&self) -> bool {
        self.rescued.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for Rescue {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Opened for reading, a named pipe waits for a writer, forever. A command made one where
/// the harness saves a file first (an ignored file a file tool is about to overwrite, and
/// one standing where undo puts a recorded file back), and the run, then undo, hung. Now
/// each says what stands there, and nothing is lost: once it is gone, undo restores all.
#[test]
fn a_named_pipe_a_command_makes_hangs_neither_a_file_tool_nor_undo() {
    let repo = Repo::from_fixture("calc");
    let before = repo.snapshot();
    let model = Model::start();
    let pipes =
        "mkdir -p __pycache__ && mkfifo __pycache__/calc.pyc && rm calc.py && mkfifo calc.py";
    model.script(vec![
        Turn::call("run_command", json!({"argv": ["sh", "-c", pipes]})),
        Turn::call(
            "write_file",
            json!({"path": "__pycache__/calc.pyc", "content": "x", "overwrite": true}),
        ),
        Turn::Text("Done."),
    ]);
    let rescue = Rescue::watch(
        ["__pycache__/calc.pyc", "calc.py"]
            .map(|pipe| repo.root.join(pipe))
            .to_vec(),
    );
    let run = repo.harness(&["run", "--host", &model.url(), "t"]);
    let refused = repo.records("tool").iter().any(|record| {
        record
            .to_string()
            .contains("calc.pyc is a named pipe, not a file")
    });
    assert!(refused, "the tool says what stands there\n{run}");
    let undo = repo.harness(&["undo"]);
    assert_ne!(undo.code, Some(0), "{undo}");
    assert!(
        undo.stderr.contains("calc.py is a named pipe, not a file"),
        "{undo}"
    );
    fs::remove_file(repo.root.join("calc.py")).expect("rm the pipe");
    repo.harness(&["undo"]).assert_exit(0);
    assert_eq!(repo.snapshot(), before);
    assert!(!rescue.rescued(), "the harness waited on a named pipe");
}

/// A repository a command makes anywhere in the workspace (`git init tools/x`) with a
/// program in its configuration: an editor that finds the repositories in a folder, or a
/// shell prompt in that directory, runs its `git status`. No snapshot records a nested
/// repository, so the run said "files changed: none" and undo left it. Tried under both
/// tiers: its `.git` is moved aside, the run lists what it made, nothing runs at the
/// user's `git status` there, and undo takes it all back.
#[test]
fn a_repository_a_command_makes_in_the_workspace_is_not_left_as_one() {
    for sandbox in ["bwrap", "landlock"] {
        let repo = Repo::from_fixture("calc");
        fs::create_dir(repo.root.join("tools")).expect("mkdir");
        repo.file("tools/README.md", "tools\n");
        repo.git(&["add", "--all"]);
        repo.git(&["commit", "--quiet", "-m", "tools"]);
        let before = repo.snapshot();
        let marker = repo.outer.join("ran");
        let plant = format!(
            "git init -q tools/x && git -C tools/x config core.fsmonitor 'touch {}; echo' \
             && echo y > tools/x/f",
            marker.display()
        );
        let (_model, run) = run_scripts(&repo, sandbox, &[plant]);
        assert!(
            run.stdout.contains("tools/x/.git.refused-1/config"),
            "{sandbox}: the run lists what the command made\n{run}"
        );
        assert!(!repo.root.join("tools/x/.git").exists(), "{sandbox}\n{run}");
        let status = std::process::Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(repo.root.join("tools/x"))
            .output()
            .expect("git");
        assert!(status.status.success(), "{status:?}");
        assert!(!marker.exists(), "{sandbox}: git status in tools/x ran it");
        repo.harness(&["undo"]).assert_exit(0);
        assert_eq!(repo.snapshot(), before, "{sandbox}");
    }
}

/// A git directory under another name (`git init --bare tools/x.git`, given a
/// `core.worktree`) is not a `.git`: git run inside that very directory reads its
/// configuration, so it is not moved aside, but it is files to the run, which lists them,
/// and undo removes them (see docs/security.md, "Other repositories in the workspace": "Not covered").
#[test]
fn a_git_directory_under_another_name_is_listed_and_undone_as_files() {
    for sandbox in ["bwrap", "landlock"] {
        let repo = Repo::from_fixture("calc");
        fs::create_dir(repo.root.join("tools")).expect("mkdir");
        repo.file("tools/README.md", "tools\n");
        repo.git(&["add", "--all"]);
        repo.git(&["commit", "--quiet", "-m", "tools"]);
        let before = repo.snapshot();
        let plant = "git init -q --bare tools/x.git && git -C tools/x.git config core.bare false \
                     && git -C tools/x.git config core.fsmonitor 'touch ran; echo'"
            .to_string();
        let (_model, run) = run_scripts(&repo, sandbox, &[plant]);
        assert!(
            run.stdout.contains("tools/x.git/config"),
            "{sandbox}: the run lists what the command made\n{run}"
        );
        repo.harness(&["undo"]).assert_exit(0);
        assert_eq!(repo.snapshot(), before, "{sandbox}");
        // Undo leaves empty directories (git records none); without `HEAD` and `config`
        // what is left is no repository.
        for file in ["HEAD", "config"] {
            assert!(
                !repo.root.join("tools/x.git").join(file).exists(),
                "{sandbox}"
            );
        }
    }
}

/// The command of issue 45's attack: bytecode of a fixed `add`, compiled from a source of
/// the same size and modification time as the unfixed `calc.py`, written where Python
/// looks before reading `calc.py`.
const PLANT_FORGED_BYTECODE: &str = "python3 -c \"
import importlib.util, os, py_compile
src = open('calc.py').read()
st = os.stat('calc.py')
os.makedirs('__pycache__', exist_ok=True)
open('__pycache__/forged.py', 'w').write(src.replace('a - b', 'a + b'))
os.utime('__pycache__/forged.py', ns=(st.st_atime_ns, st.st_mtime_ns))
py_compile.compile('__pycache__/forged.py', cfile=importlib.util.cache_from_source('calc.py'), dfile='calc.py')
\"";

/// Issue 45, class 1: a command plants bytecode that makes the unfixed `add` pass. The
/// summary and `diff --stat` list it as an ignored change, undo removes it, and a
/// verification run after it does not pass on it: the harness puts ignored files back
/// before each check, so the test runs the code in the diff.
#[test]
fn issue_45_planted_bytecode_is_listed_undone_and_cannot_make_a_check_pass() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    model.script(vec![
        Turn::call(
            "run_command",
            json!({"argv": ["sh", "-c", PLANT_FORGED_BYTECODE]}),
        ),
        Turn::Text("Done."),
    ]);
    let run = repo.harness(&["run", "--host", &model.url(), "t"]);
    run.assert_stdout_has(&[
        "files changed: none that git records (ignored ones below)",
        "ignored:       3 paths git ignores",
        "__pycache__/calc.cpython-",
    ]);
    let pyc = fs::read_dir(repo.root.join("__pycache__"))
        .expect("the command made __pycache__")
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().starts_with("calc."));
    assert!(pyc, "the planted bytecode is there after the run");
    let tests_pass = || {
        std::process::Command::new("python3")
            .args(["-m", "unittest", "-q"])
            .current_dir(&repo.root)
            .env_remove("PYTHONDONTWRITEBYTECODE")
            .status()
            .expect("python3 runs")
            .success()
    };
    assert!(
        tests_pass(),
        "the attack works: the planted cache passes the test"
    );
    repo.harness(&["diff", "--stat"])
        .assert_exit(0)
        .assert_stdout_has(&["A  __pycache__/calc.cpython-", "(ignored)"]);
    // The user's python3 above, after the run, wrote test_calc's bytecode: the user's,
    // which undo leaves; every file the command made goes.
    repo.harness(&["undo"]).assert_exit(0).assert_stdout_has(&[
        "ignored files (git does not record them): removed 2: __pycache__/calc.cpython-",
        "__pycache__/forged.py",
    ]);
    let left: Vec<String> = fs::read_dir(repo.root.join("__pycache__"))
        .expect("the user's bytecode is left")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !left.is_empty() && left.iter().all(|name| name.starts_with("test_calc.")),
        "no file a command made remains, and the user's own is left: {left:?}"
    );
    assert!(!tests_pass(), "the unfixed function fails again");

    // With a verification: the model plants the cache and says it is done.
    model.script(vec![
        Turn::call(
            "run_command",
            json!({"argv": ["sh", "-c", PLANT_FORGED_BYTECODE]}),
        ),
        Turn::Text("Done."),
    ]);
    let run = repo.harness(&[
        "run",
        "--host",
        &model.url(),
        "--verify",
        "python3 -m unittest -q",
        "--max-checks",
        "2",
        "t",
    ]);
    assert!(
        !run.stdout.contains("outcome:       verified"),
        "{}",
        run.stdout
    );
    assert_ne!(run.code, Some(0), "{}", run.stdout);
    let checks = repo.records("verification");
    assert!(!checks.is_empty());
    assert!(
        checks.iter().all(|c| c["passed"] == json!(false)),
        "{checks:?}"
    );
    // Both are told what was put back, so a check failing for want of a command's install
    // or build is no mystery.
    run.assert_stdout_has(&[
        "warning: before check 1, the harness put back 2 paths that commands wrote where git \
         does not look (__pycache__/calc.cpython-",
        "__pycache__/forged.py)",
    ]);
    let told: Vec<String> = model.chats().iter().map(ToString::to_string).collect();
    assert!(
        told.iter()
            .any(|chat| chat.contains("Before check 1, the harness put back 2 paths")),
        "{}",
        told.last().map(String::as_str).unwrap_or_default()
    );
}

/// Under Landlock a command could neither make nor remove an entry at the top of the
/// workspace, nor list it with a hidden `.env` there: `touch new.txt`, `rm old.txt` and a
/// first build's `target/` failed, test discovery found nothing, and a redo after such a run
/// differed from the run. Under both tiers now: the work is done, `.env` stays unread, what
/// a command wrote into `.git` is put back and the model told, and undo then redo give
/// exactly the state before the run and the run's own.
#[test]
fn ordinary_work_at_the_top_is_done_undone_and_redone_exactly_under_both_tiers() {
    for sandbox in ["bwrap", "landlock"] {
        let repo = Repo::from_fixture("calc");
        repo.file(".gitignore", ".env\n");
        repo.git(&["add", "--all"]);
        repo.git(&["commit", "--quiet", "-m", "ignore"]);
        repo.file(".env", "API_TOKEN=hunter2-e2e\n");
        let before = repo.snapshot();
        let marker = repo.outer.join("ran");
        let work = "ls -a && python3 -m unittest 2>&1; touch new.txt && echo made > made.txt \
                    && rm README.md && mkdir target && echo out > target/out \
                    && mv test_calc.py renamed_test.py; cat .env; exit 0"
            .to_owned();
        let plant = format!(
            "echo 'touch {0}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
             git config core.fsmonitor 'touch {0}; echo'; exit 0",
            marker.display()
        );
        let (model, run) = run_scripts(&repo, sandbox, &[work, plant]);
        let tools: Vec<String> = repo
            .records("tool")
            .iter()
            .map(ToString::to_string)
            .collect();
        let all = tools.join("\n");
        assert!(!all.contains("hunter2"), "{sandbox}: .env read\n{all}");
        assert!(
            all.contains("\\n.env\\n"),
            "{sandbox}: the top listed\n{all}"
        );
        assert!(all.contains("Ran 2 tests"), "{sandbox}: discovery\n{all}");
        for made in ["new.txt", "made.txt", "target/out", "renamed_test.py"] {
            assert!(repo.root.join(made).is_file(), "{sandbox}: {made}\n{run}");
        }
        assert!(!repo.root.join("README.md").exists(), "{sandbox}\n{run}");
        assert!(
            !repo.root.join(".git/hooks/pre-commit").exists(),
            "{sandbox}"
        );
        assert!(
            !repo.git(&["config", "--list"]).contains("fsmonitor"),
            "{sandbox}: {run}"
        );
        let tampered: Vec<String> = repo
            .records("tampered")
            .iter()
            .map(ToString::to_string)
            .collect();
        if sandbox == "landlock" {
            assert!(
                all.contains("commands may not change this") && all.contains("put back"),
                "{sandbox}: the model is told\n{all}"
            );
            // The display and the transcript say it too.
            assert!(
                run.stdout.contains("changed what undo relies on")
                    && run.stdout.contains(".git/config; put back as it was"),
                "{sandbox}: shown\n{run}"
            );
            assert!(
                tampered
                    .iter()
                    .any(|record| record.contains(".git/hooks/pre-commit; moved to")),
                "{sandbox}: recorded\n{tampered:?}"
            );
        } else {
            assert!(
                tampered.is_empty(),
                "{sandbox}: refused, nothing to put back"
            );
        }
        let after = repo.snapshot();
        repo.harness(&["undo"]).assert_exit(0);
        assert_eq!(repo.snapshot(), before, "{sandbox}: undo");
        repo.harness(&["redo"]).assert_exit(0);
        assert_eq!(repo.snapshot(), after, "{sandbox}: redo");
        assert_git_runs_nothing_later(&repo, &model, &marker, sandbox);
    }
}
