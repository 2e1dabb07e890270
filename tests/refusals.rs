//! Workspaces and settings `harness run` refuses before the model takes a step, and a model
//! server that is not there.

use std::fs;

use serde_json::json;

use crate::support::{Model, Repo, Turn, source_root};

#[test]
fn a_dirty_tree_is_refused_without_allow_dirty_and_snapshotted_with_it() {
    let repo = Repo::from_fixture("calc");
    repo.file("calc.py", "# my own unsaved work\n");
    repo.file("notes.txt", "untracked\n");
    let dirty = repo.snapshot();
    let model = Model::start();
    let run = repo.harness(&["run", "--host", &model.url(), "t"]);
    run.assert_exit(2)
        .assert_stderr_has(&["uncommitted change", "--allow-dirty"]);
    assert!(model.chats().is_empty(), "the model was never asked");
    repo.harness(&["runs"])
        .assert_exit(0)
        .assert_stdout_has(&["no harness run is recorded"]);

    model.script(vec![
        serde_json_call(
            "write_file",
            r#"{"path": "notes.txt", "content": "the model's\n", "overwrite": true}"#,
        ),
        Turn::Text("Done."),
    ]);
    repo.harness(&["run", "--allow-dirty", "--host", &model.url(), "t"])
        .assert_exit(1);
    assert_eq!(repo.read("notes.txt"), "the model's\n");
    repo.harness(&["undo"]).assert_exit(0);
    assert_eq!(
        repo.snapshot(),
        dirty,
        "undo gives the uncommitted work back exactly"
    );
}

#[test]
fn a_dirty_tree_is_reported_whatever_the_state_of_the_model_server() {
    let repo = Repo::from_fixture("calc");
    repo.file("notes.txt", "untracked\n");
    // Nothing listens on port 9 (discard) of the loopback address.
    repo.harness(&["run", "--host", "http://127.0.0.1:9", "t"])
        .assert_exit(2)
        .assert_stderr_has(&["uncommitted change", "notes.txt", "--allow-dirty"]);
}

#[test]
fn a_dirty_tree_is_reported_without_waiting_for_a_model_server_that_never_answers() {
    let repo = Repo::from_fixture("calc");
    repo.file("notes.txt", "untracked\n");
    // The kernel takes the connection and the request; nothing ever answers them.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let mut child = repo.spawn(&["run", "--host", &url, "t"]);
    // The client waits 600 s for an answer; the tree's error must not wait for it.
    let waited = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if waited.elapsed() > std::time::Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("harness run waited for the silent server before reporting the dirty tree");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    crate::support::Run::of(child.wait_with_output().unwrap())
        .assert_exit(2)
        .assert_stderr_has(&["uncommitted change", "notes.txt"]);
}

fn serde_json_call(name: &'static str, arguments: &str) -> Turn {
    Turn::call(name, serde_json::from_str(arguments).expect("valid JSON"))
}

#[test]
fn a_directory_that_is_not_a_repository_is_refused_with_the_init_hint() {
    let repo = Repo::plain("calc");
    let model = Model::start();
    let run = repo.harness(&["run", "--host", &model.url(), "t"]);
    run.assert_exit(2)
        .assert_stderr_has(&["is not a git repository", "--init"]);
    assert!(!repo.root.join(".git").exists());

    model.script(vec![Turn::Text("Done.")]);
    repo.harness(&["run", "--init", "--host", &model.url(), "t"])
        .assert_exit(1);
    assert!(repo.root.join(".git").is_dir());
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "--init committed the files"
    );
}

#[test]
fn a_workspace_containing_the_harness_source_is_refused() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    let root = source_root();
    let run = repo.harness(&[
        "run",
        "--workspace",
        root.to_str().unwrap(),
        "--host",
        &model.url(),
        "t",
    ]);
    run.assert_exit(2)
        .assert_stderr_has(&["it contains the harness (its own source tree"]);
    assert!(model.chats().is_empty());
    // Refused before the state before a run was recorded: no store was made for it.
    assert!(!repo.outer.join("home/.local/state/harness").exists());
}

#[test]
fn a_workspace_containing_the_harness_executable_is_refused() {
    let repo = Repo::from_fixture("calc");
    let copy = repo.root.join("harness");
    fs::copy(env!("CARGO_BIN_EXE_harness"), &copy).unwrap();
    let output = std::process::Command::new(&copy)
        .args([
            "run",
            "--workspace",
            repo.root.to_str().unwrap(),
            "--host",
            "http://127.0.0.1:9",
            "t",
        ])
        .env("HOME", repo.outer.join("home"))
        .output()
        .unwrap();
    let run = crate::support::Run::of(output);
    run.assert_exit(2)
        .assert_stderr_has(&["its own executable"]);
}

#[test]
fn the_filesystem_root_and_the_home_directory_are_refused() {
    let repo = Repo::from_fixture("calc");
    repo.harness(&["run", "--workspace", "/", "t"])
        .assert_exit(2)
        .assert_stderr_has(&["root of the filesystem"]);
    let home = repo.outer.join("home");
    repo.harness(&["run", "--workspace", home.to_str().unwrap(), "t"])
        .assert_exit(2)
        .assert_stderr_has(&["your home directory"]);
}

#[test]
fn a_dead_model_server_exits_3_with_a_clear_message_and_records_no_run() {
    let repo = Repo::from_fixture("calc");
    let url = harness_stub_server::closed_port_url().unwrap();
    let run = repo.harness(&["run", "--host", &url, "t"]);
    run.assert_exit(3)
        .assert_stderr_has(&[&format!("no Ollama server at {url}"), "ollama serve"]);
    assert!(!repo.runs_dir().exists() || fs::read_dir(repo.runs_dir()).unwrap().count() == 0);
    // The run was begun before the server was asked (the tree is checked once), then
    // discarded: not a ref or tag of it is left.
    assert_eq!(
        repo.git(&["for-each-ref", "refs/harness", "refs/tags/harness"]),
        ""
    );
}

#[test]
fn an_explicit_tier_that_cannot_run_stops_a_run_first_and_records_nothing() {
    let repo = Repo::from_fixture("calc");
    let url = harness_stub_server::closed_port_url().unwrap();
    // No bwrap on this PATH, and no model server at the URL: the run is begun beside the
    // probe of bwrap, then discarded, and the tier's refusal is the one reported.
    let no_bwrap = [("PATH", "/nonexistent")];
    let args = ["run", "--sandbox", "bwrap", "--host", &url, "t"];
    let refused = "the bwrap sandbox cannot run here: no `bwrap` program on PATH";
    repo.harness_with_env(&args, &no_bwrap)
        .assert_exit(2)
        .assert_stderr_has(&[refused]);
    assert!(!repo.runs_dir().exists() || fs::read_dir(repo.runs_dir()).unwrap().count() == 0);
    assert_eq!(
        repo.git(&["for-each-ref", "refs/harness", "refs/tags/harness"]),
        ""
    );
    // Before the tree's refusal too, as every refusal of the toolbox.
    repo.file("calc.py", "changed\n");
    let run = repo.harness_with_env(&args, &no_bwrap);
    run.assert_exit(2).assert_stderr_has(&[refused]);
    assert!(!run.stderr.contains("uncommitted"), "{run}");
}

#[test]
fn an_unknown_configuration_key_names_the_file_and_the_key() {
    let repo = Repo::from_fixture("calc");
    repo.file("harness.toml", "model = \"m\"\nmax_stepz = 3\n");
    let run = repo.harness(&["run", "t"]);
    run.assert_exit(2)
        .assert_stderr_has(&["harness.toml", "max_stepz"]);
}

#[test]
fn a_verification_command_the_policy_would_refuse_is_a_usage_error() {
    let repo = Repo::from_fixture("calc");
    let run = repo.harness(&[
        "run",
        "--allow",
        "git",
        "--verify",
        "python3 -m unittest -q",
        "t",
    ]);
    run.assert_exit(2)
        .assert_stderr_has(&["`python3 -m unittest -q` would be refused", "--allow"]);
}

#[test]
fn sandbox_explain_says_what_is_and_is_not_protected() {
    let repo = Repo::from_fixture("calc");
    repo.harness(&[
        "sandbox",
        "explain",
        "--allow",
        "python3",
        "--sandbox",
        "none",
    ])
    .assert_exit(0)
    .assert_stdout_has(&[
        "stop accidents, not an adversary",
        "isolation tier: none",
        "an allowlist: only python3 may run",
        "NOT      kernel isolation",
        "allowed  rm -rf .git (the undo path)",
    ]);
}

#[test]
fn sandbox_explain_prints_the_tested_table_of_the_tier_asked_for() {
    let repo = Repo::from_fixture("calc");
    let run = repo.harness(&["sandbox", "explain", "--sandbox", "landlock"]);
    run.assert_exit(0).assert_stdout_has(&[
        "isolation tier: landlock",
        "repaired rm -rf .git (the undo path)",
        "harness-exec::rm_rf_git",
        "blocked  python3: send a UDP datagram to 127.0.0.1",
        "blocked  python3: connect to a Unix socket of a service outside",
        "fails    python3: a multiprocessing pool (locks in /dev/shm)",
        "NOT      --network lets commands reach everything you can through every kind of socket",
    ]);
    // The boundary statement comes first, whatever the tier.
    assert!(
        run.stdout
            .starts_with("Path confinement and a command policy stop accidents")
    );
    repo.harness(&["sandbox", "explain", "--sandbox", "bwrap"])
        .assert_exit(0)
        .assert_stdout_has(&[
            "isolation tier: bwrap",
            "blocked  python3: send a UDP datagram",
        ]);
    repo.harness(&["sandbox", "explain", "--sandbox", "docker"])
        .assert_exit(2)
        .assert_stderr_has(&["unknown sandbox \"docker\": use one of auto, bwrap, landlock, none"]);
}

#[test]
fn sandbox_doctor_probes_every_tier_and_names_the_one_auto_picks() {
    let repo = Repo::from_fixture("calc");
    let run = repo.harness(&["sandbox", "doctor"]);
    // Both real tiers work on the CI machines and here; exit 1 would mean only `none` does.
    run.assert_exit(0).assert_stdout_has(&[
        "bwrap     works",
        "landlock  works        Landlock ABI",
        "none      works",
        "auto picks: bwrap",
    ]);
}

#[test]
fn review_commands_without_a_run_say_so() {
    let repo = Repo::from_fixture("calc");
    repo.harness(&["diff"])
        .assert_exit(2)
        .assert_stderr_has(&["no harness run is recorded"]);
    repo.harness(&["undo", "not-a-run"])
        .assert_exit(2)
        .assert_stderr_has(&["is not a run id"]);
}

#[test]
fn the_kernel_refuses_a_commands_write_to_home_and_rm_rf_git_and_the_run_goes_on() {
    for sandbox in ["auto", "bwrap", "landlock"] {
        let repo = Repo::from_fixture("calc");
        let model = Model::start();
        model.script(vec![
            Turn::Calls(vec![
                (
                    "run_command",
                    json!({"argv": ["python3", "-c", "import os; open(os.path.expanduser('~/x'), 'w')"]}),
                ),
                ("run_command", json!({"argv": ["rm", "-rf", ".git"]})),
            ]),
            Turn::Text("Done."),
        ]);
        let run = repo.harness(&["run", "--host", &model.url(), "--sandbox", sandbox, "t"]);
        let tier = if sandbox == "auto" { "bwrap" } else { sandbox };
        run.assert_exit(1).assert_stdout_has(&[&format!(
            "isolation:  {tier} ({} sandbox explain",
            crate::support::program()
        )]);
        assert!(
            !repo.outer.join("home/x").exists(),
            "{sandbox}: ~/x written\n{run}"
        );
        assert!(
            repo.root.join(".git/HEAD").exists(),
            "{sandbox}: .git removed\n{run}"
        );
        let failed = repo
            .records("tool")
            .into_iter()
            .filter(|record| record["tool"] == "run_command")
            .filter(|record| record["is_error"] == true || !record.to_string().contains("exit=0"))
            .count();
        // Landlock cannot refuse `rm -rf .git` once the top is writable: it is put back
        // after the command, its history included, and the model told.
        let expected = if sandbox == "landlock" { 1 } else { 2 };
        assert_eq!(failed, expected, "{sandbox}: the commands fail\n{run}");
        if sandbox == "landlock" {
            let told = repo
                .records("tool")
                .iter()
                .any(|record| record.to_string().contains("commands may not change this"));
            assert!(told, "{sandbox}: the model is told\n{run}");
        }
        assert!(
            repo.git(&["log", "--format=%s"]).contains("fixture"),
            "{sandbox}: the history is there"
        );
        // The undo path survived: the run can be undone.
        repo.harness(&["undo"]).assert_exit(0);
    }
}

#[test]
fn an_explicit_tier_that_cannot_run_is_refused_with_the_fix_and_auto_falls_back_with_a_warning() {
    let repo = Repo::from_fixture("calc");
    // No bwrap on this PATH.
    let no_bwrap = [("PATH", "/nonexistent")];
    let call = r#"{"argv": ["/bin/true"]}"#;
    repo.harness_with_env(
        &["tool", "--sandbox", "bwrap", "run_command", call],
        &no_bwrap,
    )
    .assert_exit(2)
    .assert_stderr_has(&[
        "the bwrap sandbox cannot run here: no `bwrap` program on PATH; to fix: install \
             bubblewrap",
    ]);
    repo.harness_with_env(&["tool", "run_command", call], &no_bwrap)
        .assert_exit(0)
        .assert_stderr_has(&[
            "warning: sandbox bwrap unavailable (no `bwrap` program on PATH); using landlock",
        ]);
    repo.harness(&["tool", "--sandbox", "none", "run_command", call])
        .assert_exit(0);
}

/// Runs `call` under bwrap and Landlock and asserts that no output holds a secret's words
/// (`plain-words-from…`).
fn assert_no_confining_tier_reads(repo: &Repo, call: &str) {
    for sandbox in ["bwrap", "landlock"] {
        let run = repo.harness(&["tool", "--sandbox", sandbox, "run_command", call]);
        assert!(
            !run.stdout.contains("plain-words-from"),
            "{sandbox}: read\n{run}"
        );
    }
}

#[test]
fn a_commands_read_of_the_workspaces_dot_env_is_refused_under_both_tiers() {
    let repo = Repo::from_fixture("calc");
    repo.file(".env", "plain-words-from-dotenv\n");
    fs::create_dir(repo.root.join("keys")).expect("mkdir");
    repo.file("keys/deploy.key", "plain-words-from-a-key\n");
    let call = r#"{"argv": ["sh", "-c", "cat .env keys/deploy.key"]}"#;
    assert_no_confining_tier_reads(&repo, call);
    // Without a tier, only the file tools keep it: the command reads it.
    repo.harness(&["tool", "--sandbox", "none", "run_command", call])
        .assert_stdout_has(&["plain-words-from-dotenv", "plain-words-from-a-key"]);
}

/// A hard link is the same file under a name no rule matches: made before the run, it must
/// not open what the rule hides, whether the file is the workspace's or the home's.
#[test]
fn a_commands_read_of_another_name_of_a_hidden_file_is_refused_under_both_tiers() {
    let repo = Repo::from_fixture("calc");
    repo.file(".env", "plain-words-from-dotenv\n");
    fs::create_dir(repo.root.join("private")).expect("mkdir");
    repo.file("private/plan.txt", "plain-words-from-a-denied-directory\n");
    repo.file("harness.toml", "deny = [\"private/\"]\n");
    let ssh = repo.outer.join("home/.ssh");
    fs::create_dir_all(&ssh).expect("mkdir .ssh");
    fs::write(ssh.join("id_ed25519"), "plain-words-from-the-home-key\n").expect("key");
    fs::create_dir(repo.root.join("docs")).expect("mkdir docs");
    for (file, link) in [
        (repo.root.join(".env"), "notes.txt"),
        (repo.root.join("private/plan.txt"), "docs/plan.md"),
        (ssh.join("id_ed25519"), "docs/key.txt"),
    ] {
        fs::hard_link(file, repo.root.join(link)).expect("hard link");
    }
    let call = r#"{"argv": ["sh", "-c", "cat notes.txt docs/plan.md docs/key.txt"]}"#;
    assert_no_confining_tier_reads(&repo, call);
    repo.harness(&["tool", "--sandbox", "none", "run_command", call])
        .assert_stdout_has(&[
            "plain-words-from-dotenv",
            "plain-words-from-a-denied-directory",
            "plain-words-from-the-home-key",
        ]);
    // What `sandbox explain` says is not hidden: what git has recorded of a secret.
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo.root)
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
    };
    git(&["add", "-f", ".env"]);
    let show = r#"{"argv": ["git", "show", ":.env"]}"#;
    for sandbox in ["bwrap", "landlock"] {
        repo.harness(&["tool", "--sandbox", sandbox, "run_command", show])
            .assert_stdout_has(&["plain-words-from-dotenv"]);
    }
}

/// A rule names a place as the user spells it, through a link: `.env` linking to
/// `config/settings.env`, a rule `config/secrets.yml` where `config` links to
/// `shared/config`. Neither the file tools nor a command under either tier reads it, by
/// the rule's spelling or by the real path.
#[test]
fn a_rule_holds_for_a_place_it_names_through_a_link() {
    let repo = Repo::from_fixture("calc");
    fs::create_dir_all(repo.root.join("config")).expect("mkdir");
    fs::create_dir_all(repo.root.join("shared/settings")).expect("mkdir");
    repo.file(
        "config/app.env",
        "plain-words-from-a-linked-dotenv
",
    );
    repo.file(
        "shared/settings/secrets.yml",
        "plain-words-from-a-linked-dir
",
    );
    std::os::unix::fs::symlink("config/app.env", repo.root.join(".env")).expect("link");
    std::os::unix::fs::symlink("shared/settings", repo.root.join("settings")).expect("link");
    repo.file("harness.toml", "deny = [\"settings/secrets.yml\"]\n");
    for path in [".env", "settings/secrets.yml"] {
        let call = format!(r#"{{"path": "{path}"}}"#);
        let run = repo.harness(&["tool", "read_file", &call]);
        assert!(!run.stdout.contains("plain-words-from"), "{path}\n{run}");
        assert!(run.stdout.contains("deny rule"), "{path}\n{run}");
    }
    let call = r#"{"argv": ["sh", "-c", "cat .env config/app.env settings/secrets.yml shared/settings/secrets.yml"]}"#;
    assert_no_confining_tier_reads(&repo, call);
    repo.harness(&["tool", "--sandbox", "none", "run_command", call])
        .assert_stdout_has(&[
            "plain-words-from-a-linked-dotenv",
            "plain-words-from-a-linked-dir",
        ]);
}

/// The place a rule names through a link is refused by the file tools under its real path
/// too, under every tier (found by the walk that hides it from commands): a `.env` that
/// links to `config/app.env` makes `config/app.env` the secret it is. Under `none` a command
/// reads it anyway; the file tools still refuse it.
#[test]
fn the_file_tools_refuse_a_place_a_rule_names_through_a_link_under_its_real_path() {
    let repo = Repo::from_fixture("calc");
    fs::create_dir_all(repo.root.join("config")).expect("mkdir");
    fs::create_dir_all(repo.root.join("shared/settings")).expect("mkdir");
    repo.file("config/app.env", "plain-words-from-a-linked-dotenv\n");
    repo.file(
        "shared/settings/secrets.yml",
        "plain-words-from-a-linked-dir\n",
    );
    std::os::unix::fs::symlink("config/app.env", repo.root.join(".env")).expect("link");
    std::os::unix::fs::symlink("shared/settings", repo.root.join("settings")).expect("link");
    repo.file("harness.toml", "deny = [\"settings/secrets.yml\"]\n");
    let calls = [
        ("read_file", r#"{"path": "config/app.env"}"#),
        ("read_file", r#"{"path": "shared/settings/secrets.yml"}"#),
        ("search_text", r#"{"pattern": "plain-words-from"}"#),
        (
            "write_file",
            r#"{"path": "config/app.env", "content": "x\n"}"#,
        ),
        (
            "edit_file",
            r#"{"path": "shared/settings/secrets.yml", "old_text": "plain", "new_text": "x"}"#,
        ),
    ];
    for sandbox in ["bwrap", "landlock", "none"] {
        for (tool, call) in calls {
            let run = repo.harness(&["tool", "--sandbox", sandbox, tool, call]);
            assert!(
                !run.stdout.contains("from-a-linked"),
                "{sandbox} {tool} {call}\n{run}"
            );
            if tool != "search_text" {
                assert!(
                    run.stdout.contains("refused under every name"),
                    "{sandbox} {tool} {call}\n{run}"
                );
            }
        }
        let listed = repo.harness(&[
            "tool",
            "--sandbox",
            sandbox,
            "list_dir",
            r#"{"path": "config"}"#,
        ]);
        assert!(!listed.stdout.contains("app.env"), "{sandbox}\n{listed}");
    }
    assert_eq!(
        fs::read_to_string(repo.root.join("config/app.env")).expect("kept"),
        "plain-words-from-a-linked-dotenv\n"
    );
}

/// Your configuration decides how the next run's commands are confined: inside a writable
/// home a command can neither rewrite it nor make one where there was none.
#[test]
fn a_command_cannot_write_your_configuration_inside_a_writable_home() {
    let repo = Repo::from_fixture("calc");
    let home = repo.outer.join("home");
    let config = home.join(".config/harness/config.toml");
    let call = r#"{"argv": ["sh", "-c", "mkdir -p ~/.config/harness && echo 'sandbox = \"none\"' > ~/.config/harness/config.toml"]}"#;
    let home_arg = home.display().to_string();
    for sandbox in ["bwrap", "landlock"] {
        for existing in [None, Some("network = false\n")] {
            let _ = fs::remove_dir_all(home.join(".config"));
            if let Some(text) = existing {
                fs::create_dir_all(config.parent().expect("dir")).expect("mkdir");
                fs::write(&config, text).expect("write");
            }
            let run = repo.harness(&[
                "tool",
                "--sandbox",
                sandbox,
                "--writable",
                &home_arg,
                "run_command",
                call,
            ]);
            assert_eq!(
                fs::read_to_string(&config).ok().as_deref(),
                existing,
                "{sandbox}: the configuration changed\n{run}"
            );
        }
    }
}

/// `--writable` names what commands may write besides the workspace; the undo store and
/// the workspace's `.git` stay read-only inside it, so a command cannot take the way back.
#[test]
fn the_undo_store_and_git_stay_read_only_under_a_writable_home_or_git() {
    let repo = Repo::from_fixture("calc");
    let home = repo.outer.join("home");
    let store = home.join(".local/state/harness/calc-store");
    fs::create_dir_all(&store).expect("store");
    fs::write(store.join("run"), "kept").expect("run");
    fs::create_dir_all(home.join("cache")).expect("cache");
    let call = r#"{"argv": ["sh", "-c", "echo x > ~/cache/new; echo x > ~/.local/state/harness/calc-store/run; rm -rf ~/.local/state/harness; echo x > .git/HEAD"]}"#;
    let home_arg = home.display().to_string();
    let git_arg = repo.root.join(".git").display().to_string();
    let head = fs::read(repo.root.join(".git/HEAD")).expect("HEAD");
    for sandbox in ["bwrap", "landlock"] {
        repo.harness(&[
            "tool",
            "--sandbox",
            sandbox,
            "--writable",
            &home_arg,
            "--writable",
            &git_arg,
            "run_command",
            call,
        ]);
        assert!(
            home.join("cache/new").exists(),
            "{sandbox}: the writable home"
        );
        fs::remove_file(home.join("cache/new")).expect("rm");
        assert_eq!(
            fs::read_to_string(store.join("run")).ok().as_deref(),
            Some("kept"),
            "{sandbox}: the store changed"
        );
        assert_eq!(
            fs::read(repo.root.join(".git/HEAD")).expect("HEAD"),
            head,
            "{sandbox}: .git written"
        );
    }
}
