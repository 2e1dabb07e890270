//! The isolation tiers' options, with real processes and the real kernel:
//! extra writable paths, the network opt-in, interrupts through bwrap, and the
//! preflight. A tier this machine cannot run is skipped with the reason,
//! unless `HARNESS_CI_ALL_TIERS=1` says every tier must run.

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt as _;
use std::thread;
use std::time::Duration;

mod support;

use support::real_tiers;

use harness_exec::{
    Confinement, Isolation, Policy, RunOptions, Runner, Sandbox, Status, Tier, preflight,
};

fn scratch() -> (tempfile::TempDir, std::path::PathBuf) {
    // Outside /tmp, so that bwrap's private /tmp does not hide it.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    std::fs::create_dir_all(root.join("workspace/src")).expect("workspace");
    std::fs::create_dir_all(root.join("cache")).expect("cache");
    (dir, root)
}

fn runner(tier: Tier, confinement: Confinement) -> Runner {
    Runner::new()
        .policy(Policy::allowlist(["sh", "bash", "cat"]))
        .isolation(Isolation::new(tier, confinement))
}

#[test]
fn a_writable_path_is_writable_and_only_when_named() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        let argv = [
            "sh",
            "-c",
            "echo x > \"$0\"/cache/file",
            root.to_str().expect("utf-8"),
        ];
        let options = RunOptions::new(&workspace);
        runner(tier, Confinement::new(&workspace).home(root.join("home")))
            .run(&argv, &options)
            .expect("runs");
        assert!(!root.join("cache/file").exists(), "{tier}: written unasked");
        let confinement = Confinement::new(&workspace)
            .home(root.join("home"))
            .writable(root.join("cache"));
        let outcome = runner(tier, confinement)
            .run(&argv, &options)
            .expect("runs");
        assert!(outcome.is_success(), "{tier}: {}", outcome.to_model_text());
        assert!(root.join("cache/file").exists(), "{tier}: not written");
    }
}

/// A writable path that holds the undo store, or the workspace's `.git` named as writable,
/// leaves them read-only: what undoes a command's work must outlive the command.
#[test]
fn a_read_only_path_and_git_stay_read_only_inside_a_writable_path() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        std::fs::create_dir_all(workspace.join(".git")).expect("git");
        std::fs::create_dir_all(root.join("cache/state/harness")).expect("store");
        // Under Landlock a writable path that holds a read-only one is granted entry by
        // entry, so a command writes in its existing directories, not at its top.
        std::fs::create_dir_all(root.join("cache/sub")).expect("sub");
        std::fs::write(root.join("cache/state/harness/run"), "kept").expect("run");
        let confinement = Confinement::new(&workspace)
            .home(root.join("home"))
            .writable(root.join("cache"))
            .writable(workspace.join(".git"))
            .read_only(root.join("cache/state/harness"));
        let script = "echo x > \"$0\"/cache/sub/beside; echo x > \"$0\"/cache/state/harness/new; \
                      echo x > \"$0\"/cache/state/harness/run; rm -rf \"$0\"/cache/state/harness; \
                      echo x > .git/HEAD";
        let argv = ["sh", "-c", script, root.to_str().expect("utf-8")];
        let outcome = runner(tier, confinement)
            .run(&argv, &RunOptions::new(&workspace))
            .expect("runs");
        assert!(
            root.join("cache/sub/beside").exists(),
            "{tier}: the writable path\n{}",
            outcome.to_model_text()
        );
        assert!(
            !root.join("cache/state/harness/new").exists(),
            "{tier}: created"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("cache/state/harness/run")).ok(),
            Some("kept".to_owned()),
            "{tier}: the store changed"
        );
        assert!(
            !workspace.join(".git/HEAD").exists(),
            "{tier}: .git written"
        );
    }
}

#[test]
fn what_a_command_creates_at_a_protected_name_is_moved_aside_where_nothing_reads_it() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        let script =
            "mkdir .git; echo 'ref: x' > .git/HEAD; echo 'verify = \"true\"' > harness.toml";
        let confinement = Confinement::new(&workspace)
            .protect_in_workspace("harness.toml")
            .home(root.join("home"));
        let outcome = runner(tier, confinement)
            .run(&["sh", "-c", script], &RunOptions::new(&workspace))
            .expect("runs");
        assert!(!workspace.join("harness.toml").exists(), "{tier}");
        assert!(!workspace.join(".git").exists(), "{tier}");
        let moved: Vec<_> = outcome
            .set_aside()
            .iter()
            .map(|set_aside| set_aside.moved_to.clone().expect("moved"))
            .collect();
        // Landlock, like bwrap, can protect only what exists: with no
        // protected path in it, the whole workspace is granted.
        assert_eq!(
            moved,
            [
                workspace.join(".git.refused-1"),
                workspace.join("harness.toml.refused-1")
            ],
            "{tier}"
        );
        assert_eq!(
            std::fs::read_to_string(workspace.join("harness.toml.refused-1")).ok(),
            Some("verify = \"true\"\n".to_owned())
        );
        assert!(workspace.join(".git.refused-1/HEAD").exists());
        let text = outcome.to_model_text();
        assert!(
            text.contains("the command created harness.toml, which commands may not write"),
            "{text}"
        );
    }
}

#[test]
fn the_git_directories_of_repositories_in_the_workspace_are_kept_as_they_are() {
    // What the user's git reads when it looks into a submodule or a nested
    // repository: a command that could write there could plant a
    // `core.fsmonitor` or a hook that the user's next `git status` runs.
    let submodule = "gitdir: ../.git/modules/sub\n";
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        std::fs::create_dir_all(workspace.join("sub")).expect("mkdir");
        std::fs::write(workspace.join("sub/.git"), submodule).expect("write");
        std::fs::write(workspace.join("sub/lib.txt"), "lib\n").expect("write");
        std::fs::create_dir_all(workspace.join("vendor/lib/.git/hooks")).expect("mkdir");
        // A submodule not checked out: its directory is empty.
        std::fs::create_dir_all(workspace.join("empty")).expect("mkdir");
        let (confinement, found) = Confinement::new(&workspace)
            .home(root.join("home"))
            .protect(workspace.join("empty/.git"))
            .hide_denied(|_| false);
        let mut git_dirs = found.git_dirs.clone();
        git_dirs.sort();
        assert_eq!(
            git_dirs,
            [
                workspace.join("sub/.git"),
                workspace.join("vendor/lib/.git")
            ]
        );
        let script = "echo 'gitdir: ../evil' > sub/.git; \
                      echo 'touch pwned' > vendor/lib/.git/hooks/post-checkout; \
                      mkdir empty/.git && echo '[core]' > empty/.git/config; \
                      echo changed > sub/lib.txt";
        let outcome = runner(tier, confinement)
            .run(&["sh", "-c", script], &RunOptions::new(&workspace))
            .expect("runs");
        assert_eq!(
            std::fs::read_to_string(workspace.join("sub/.git"))
                .ok()
                .as_deref(),
            Some(submodule),
            "{tier}"
        );
        assert!(
            !workspace
                .join("vendor/lib/.git/hooks/post-checkout")
                .exists(),
            "{tier}"
        );
        assert!(!workspace.join("empty/.git").exists(), "{tier}");
        assert!(
            workspace.join("empty/.git.refused-1/config").exists(),
            "{tier}: moved aside, not deleted"
        );
        assert_eq!(outcome.set_aside().len(), 1, "{tier}: {outcome:?}");
        // The rest of the submodule is the workspace's, as writable as ever.
        assert_eq!(
            std::fs::read_to_string(workspace.join("sub/lib.txt"))
                .ok()
                .as_deref(),
            Some("changed\n"),
            "{tier}"
        );
    }
}

#[test]
fn a_git_directory_replaced_with_its_directory_is_moved_aside() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        std::fs::create_dir_all(workspace.join("sub")).expect("mkdir");
        std::fs::write(workspace.join("sub/.git"), "gitdir: ../.git/modules/sub\n").expect("write");
        let (confinement, _) = Confinement::new(&workspace)
            .home(root.join("home"))
            .hide_denied(|_| false);
        // bwrap lets a directory holding a read-only mount be renamed (the
        // mount goes with it); Landlock refuses it.
        let script = "mv sub moved; mkdir -p sub/.git && echo '[core]' > sub/.git/config";
        runner(tier, confinement)
            .run(&["sh", "-c", script], &RunOptions::new(&workspace))
            .expect("runs");
        assert!(
            !workspace.join("sub/.git/config").exists(),
            "{tier}: a git directory a command made in place of the submodule's is read"
        );
    }
}

/// A read-only mount goes with its directory when that is renamed: under bwrap, moving a
/// directory that holds the undo store (inside `--writable ~`) or a submodule's `.git` took
/// it from where the harness and git look for it. Each directory between such a path and the
/// writable place that holds it stays where it is, under both tiers.
#[test]
fn a_directory_holding_a_kept_path_stays_where_it_is() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        let home = root.join("home");
        let store = home.join(".local/state/harness");
        std::fs::create_dir_all(&store).expect("mkdir");
        std::fs::write(store.join("run"), "the undo store\n").expect("write");
        std::fs::create_dir_all(workspace.join("lib/sub")).expect("mkdir");
        let git = workspace.join("lib/sub/.git");
        std::fs::write(&git, "gitdir: ../../.git/modules/sub\n").expect("write");
        let confinement = Confinement::new(&workspace)
            .home(&home)
            .writable(&home)
            .read_only(&store)
            .protect(&git);
        let script = "mv lib/sub lib/moved; mv lib gone; \
                      mv ../home/.local/state ../home/.local/moved; mv ../home/.local ../home/gone; \
                      touch lib/new ../home/.local/new";
        let outcome = runner(tier, confinement)
            .run(&["sh", "-c", script], &RunOptions::new(&workspace))
            .expect("runs");
        assert!(git.is_file(), "{tier}: {}", outcome.to_model_text());
        assert!(
            store.join("run").is_file(),
            "{tier}: {}",
            outcome.to_model_text()
        );
        // The directories themselves are still written (under Landlock, only the entries
        // they held when the command started: see docs/security.md).
        if tier == Tier::Bwrap {
            assert!(workspace.join("lib/new").is_file(), "{tier}");
            assert!(home.join(".local/new").is_file(), "{tier}");
            // A file moved out of such a directory crosses a mount: `rename` fails
            // (EXDEV), and `mv` copies it instead.
            let out = "python3 -c \"import os; os.rename('lib/new', 'renamed')\" 2>&1 | tail -1; \
                       mv lib/new moved && cat moved";
            let outcome = runner(tier, Confinement::new(&workspace).protect(&git))
                .run(&["sh", "-c", out], &RunOptions::new(&workspace))
                .expect("runs");
            let text = outcome.to_model_text();
            assert!(text.contains("Invalid cross-device link"), "{text}");
            assert!(workspace.join("moved").is_file(), "{text}");
        }
    }
}

/// The same for what is hidden: under bwrap a hidden path's mount went with the directory
/// that holds it, and the next command, whose view hides what stood at the old paths, read
/// the secret at the new one (`mv ~/.docker ~/d`, then `cat ~/d/config.json`, inside
/// `--writable ~`; `mv config c`, then `cat c/.env`, in the workspace).
#[test]
fn a_hidden_path_cannot_be_moved_out_of_hiding() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        let home = root.join("home");
        for (path, secret) in [
            (home.join(".docker/config.json"), "docker-secret"),
            (home.join(".config/gh/hosts.yml"), "gh-secret"),
            (workspace.join("config/.env"), "env-secret"),
        ] {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, secret).expect("write");
        }
        let confinement = || {
            let (confinement, _) = Confinement::new(&workspace)
                .home(&home)
                .writable(&home)
                .hide_denied(|path| path.ends_with(".env"));
            confinement
        };
        let moves = "cd ../home && mv .docker d; mv .config c; cd ../workspace && mv config c";
        runner(tier, confinement())
            .run(&["sh", "-c", moves], &RunOptions::new(&workspace))
            .expect("runs");
        let reads = "cat ../home/d/config.json ../home/c/gh/hosts.yml c/.env \
                     ../home/.docker/config.json ../home/.config/gh/hosts.yml config/.env";
        let outcome = runner(tier, confinement())
            .run(&["sh", "-c", reads], &RunOptions::new(&workspace))
            .expect("runs");
        let seen = outcome.to_model_text();
        for secret in ["docker-secret", "gh-secret", "env-secret"] {
            assert!(!seen.contains(secret), "{tier}: {secret} read\n{seen}");
        }
    }
}

#[test]
fn the_network_is_reachable_only_when_allowed() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
        let port = listener.local_addr().expect("addr").port();
        let accepted = thread::spawn(move || {
            let (mut stream, _) = listener.accept().expect("accept");
            let mut text = String::new();
            stream.read_to_string(&mut text).expect("read");
            text
        });
        let script = format!("echo hello > /dev/tcp/127.0.0.1/{port}");
        let options = RunOptions::new(&workspace);
        let closed = runner(tier, Confinement::new(&workspace).home(root.join("home")))
            .run(&["bash", "-c", &script], &options)
            .expect("runs");
        assert!(!closed.is_success(), "{tier}: connected without --network");
        let open = Confinement::new(&workspace)
            .home(root.join("home"))
            .network(true);
        let outcome = runner(tier, open)
            .run(&["bash", "-c", &script], &options)
            .expect("runs");
        assert!(outcome.is_success(), "{tier}: {}", outcome.to_model_text());
        assert_eq!(accepted.join().expect("no panic"), "hello\n");
    }
}

#[test]
fn under_bwrap_the_command_does_not_inherit_an_ignored_interrupt() {
    if !real_tiers().contains(&Tier::Bwrap) {
        return;
    }
    let (_dir, root) = scratch();
    let workspace = root.join("workspace");
    let outcome = runner(Tier::Bwrap, Confinement::new(&workspace))
        .run(&["cat", "/proc/self/status"], &RunOptions::new(&workspace))
        .expect("runs");
    let ignored = outcome
        .output()
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .map(|mask| u64::from_str_radix(mask.trim(), 16).expect("hex"))
        .expect("a SigIgn line");
    // SIGINT is signal 2: bit 1 of the mask.
    assert_eq!(ignored & 0b10, 0, "SIGINT is ignored: {ignored:x}");
}

#[test]
fn an_interrupted_command_under_bwrap_gets_its_grace_period_then_stops() {
    if !real_tiers().contains(&Tier::Bwrap) {
        return;
    }
    let (_dir, root) = scratch();
    let workspace = root.join("workspace");
    let runner = runner(Tier::Bwrap, Confinement::new(&workspace));
    let interrupter = runner.interrupter();
    // Cleaning up takes a while; `ready` appears once the trap is set.
    let script = "trap 'sleep 0.3; echo cleaned up; exit 130' INT; touch ready; \
                  while :; do sleep 0.05; done";
    let running = {
        let workspace = workspace.clone();
        thread::spawn(move || {
            runner
                .run(&["sh", "-c", script], &RunOptions::new(&workspace))
                .expect("runs")
        })
    };
    for _ in 0..500 {
        if workspace.join("ready").exists() {
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(interrupter.interrupt(), 1);
    let outcome = running.join().expect("no panic");
    assert_eq!(outcome.status(), Status::Interrupted);
    // The SIGINT reached the command in the session bwrap gave it, and bwrap, the
    // process group's leader, survived it: the command finished its own way instead of
    // dying with bwrap at once.
    assert_eq!(outcome.output(), "cleaned up\n");
}

#[test]
fn auto_picks_the_strongest_tier_that_works_and_an_explicit_one_is_checked() {
    let choice = preflight::choose(Sandbox::Auto).expect("auto always resolves");
    let working = real_tiers();
    let expected = working.first().copied().unwrap_or(Tier::None);
    assert_eq!(choice.tier, expected);
    // Every tier passed over is one that cannot run here, with its reason.
    assert_eq!(
        choice.skipped.iter().map(|u| u.tier()).collect::<Vec<_>>(),
        Tier::ALL
            .into_iter()
            .take_while(|&tier| tier != expected)
            .collect::<Vec<_>>()
    );
    for tier in working {
        assert_eq!(
            preflight::choose(Sandbox::Only(tier)).expect("works").tier,
            tier
        );
    }
}

#[test]
fn without_bwrap_on_path_the_bwrap_tier_is_unavailable_and_auto_falls_back() {
    // Run again as a child whose PATH has no bwrap: the preflight reads this process's PATH.
    if std::env::var_os("HARNESS_TEST_NO_BWRAP").is_some() {
        let error = preflight::probe(Tier::Bwrap).expect_err("no bwrap on PATH");
        assert_eq!(error.reason(), "no `bwrap` program on PATH");
        let choice = preflight::choose(Sandbox::Auto).expect("auto resolves");
        assert_ne!(choice.tier, Tier::Bwrap);
        assert_eq!(choice.skipped[0].tier(), Tier::Bwrap);
        return;
    }
    let status = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "without_bwrap_on_path_the_bwrap_tier_is_unavailable_and_auto_falls_back",
        ])
        .env("HARNESS_TEST_NO_BWRAP", "1")
        .env("PATH", "/nonexistent")
        .status()
        .expect("the test binary runs");
    assert!(status.success());
}

#[test]
fn a_home_under_tmp_stays_readable_with_its_secrets_hidden_and_nothing_writable() {
    // A CI job's or an evaluation's HOME often lives under /tmp, which the tiers replace
    // with a private one: toolchains found through it (~/.rustup) must still be there.
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        let home_dir = tempfile::tempdir_in("/tmp").expect("a home under /tmp");
        let home = home_dir.path().canonicalize().expect("canonical");
        std::fs::write(home.join("tool.txt"), "the toolchain\n").expect("write");
        std::fs::create_dir(home.join(".ssh")).expect("mkdir");
        std::fs::write(home.join(".ssh/id_ed25519"), "SECRET KEY\n").expect("write");
        let argv = [
            "sh",
            "-c",
            "cat \"$0/tool.txt\"; cat \"$0/.ssh/id_ed25519\"; echo x > \"$0/new.txt\"; true",
            home.to_str().expect("utf-8"),
        ];
        let outcome = runner(tier, Confinement::new(&workspace).home(&home))
            .run(&argv, &RunOptions::new(&workspace))
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(text.contains("the toolchain"), "{tier}: {text}");
        assert!(!text.contains("SECRET KEY"), "{tier}: {text}");
        assert!(
            !home.join("new.txt").exists(),
            "{tier}: the home was written"
        );
    }
}

#[test]
fn a_command_holds_no_capability_under_either_real_tier_even_started_by_root() {
    // Run by root (a container, CI), a command would otherwise hold root's capabilities:
    // enough to unmount what bwrap hides, or to read any process's environment past
    // Landlock. The inner `sh -c` is a program the command executes: root's `exec` must
    // not grant them back.
    let harness_can_drop_the_bounding_set =
        status_field("CapEff").is_some_and(|caps| caps & (1 << 8) != 0); // CAP_SETPCAP
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        let argv = ["sh", "-c", "sh -c 'grep ^Cap /proc/self/status'"];
        let outcome = runner(tier, Confinement::new(&workspace).home(root.join("home")))
            .run(&argv, &RunOptions::new(&workspace))
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(outcome.is_success(), "{tier}: {text}");
        for set in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
            assert!(
                text.contains(&format!("{set}:\t0000000000000000")),
                "{tier}: {set} is not empty: {text}"
            );
        }
        if tier == Tier::Landlock && harness_can_drop_the_bounding_set {
            assert!(
                text.contains("CapBnd:\t0000000000000000"),
                "{tier}: the bounding set is not empty: {text}"
            );
        }
    }
}

/// The hexadecimal field `name` of this process's `/proc/self/status`.
fn status_field(name: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(name))?;
    let value = line.split_once(':')?.1.trim();
    u64::from_str_radix(value, 16).ok()
}

#[test]
fn a_command_cannot_change_a_kernel_setting_even_started_by_root() {
    // Root's own files under a fresh /proc are the host kernel's settings: a
    // command run by root must not reach /proc/sys (`kernel/core_pattern` is a
    // program the host runs as root on a crash). A harmless one stands for all.
    const SETTING: &str = "/proc/sys/kernel/printk_ratelimit";
    let original = std::fs::read_to_string(SETTING).expect("the setting");
    let original = original.trim();
    let changed = (original.parse::<u64>().expect("a number") + 1).to_string();
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        let argv = ["sh", "-c", "printf %s \"$1\" > \"$0\"", SETTING, &changed];
        let outcome = runner(tier, Confinement::new(&workspace).home(root.join("home")))
            .run(&argv, &RunOptions::new(&workspace))
            .expect("runs");
        let now = std::fs::read_to_string(SETTING).expect("the setting");
        if now.trim() != original {
            let _ = std::fs::write(SETTING, original);
        }
        assert_eq!(
            now.trim(),
            original,
            "{tier}: a command changed {SETTING}: {}",
            outcome.to_model_text()
        );
    }
}

#[test]
fn a_command_run_by_root_cannot_read_another_users_private_file() {
    // Without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, root's command reads only what
    // root owns or a file's mode lets anyone read. Only root can make such a file.
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        let private = root.join("theirs");
        std::fs::create_dir(&private).expect("mkdir");
        std::fs::write(private.join("key"), "THEIR-PRIVATE-TEXT\n").expect("write");
        let nobody = 65534;
        if std::os::unix::fs::chown(&private, Some(nobody), Some(nobody)).is_err() {
            return; // not root: no other user's file to make
        }
        std::os::unix::fs::chown(private.join("key"), Some(nobody), Some(nobody)).expect("chown");
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        std::fs::set_permissions(private.join("key"), std::fs::Permissions::from_mode(0o600))
            .expect("chmod");
        let key = private.join("key");
        let argv = ["cat", key.to_str().expect("utf-8")];
        let outcome = runner(tier, Confinement::new(&workspace).home(root.join("home")))
            .run(&argv, &RunOptions::new(&workspace))
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(!text.contains("THEIR-PRIVATE-TEXT"), "{tier}: {text}");
        // The harness itself, as root, still can: the file is there to be read.
        assert!(std::fs::read_to_string(&key).is_ok_and(|t| t.contains("THEIR")));
    }
}

/// A workspace as a real one looks at its top: a repository, the harness's configuration, a
/// hidden `.env`, a test, a file to remove and one to rename.
fn top_of_a_real_workspace(root: &std::path::Path) -> std::path::PathBuf {
    let workspace = root.join("workspace");
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&workspace)
        .status()
        .expect("git");
    assert!(git.success());
    for (name, content) in [
        ("harness.toml", "verify = \"python3 -m unittest\"\n"),
        (".env", "SECRET=hunter2-top\n"),
        ("old.txt", "old\n"),
        ("moved.txt", "moved\n"),
        (
            "test_top.py",
            "import unittest\n\nclass T(unittest.TestCase):\n    def test_it(self):\n        \
             self.assertTrue(True)\n",
        ),
    ] {
        std::fs::write(workspace.join(name), content).expect("write");
    }
    let commit = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(["commit", "-q", "--allow-empty", "-m", "history"])
        .current_dir(&workspace)
        .status()
        .expect("git");
    assert!(commit.success());
    workspace
}

/// The one-line log of the repository at `workspace`, if git can read it.
fn history(workspace: &std::path::Path) -> Option<String> {
    let output = std::process::Command::new("git")
        .args(["log", "--format=%s"])
        // Not the repository of a directory above, should this one be broken.
        .env("GIT_DIR", workspace.join(".git"))
        .current_dir(workspace)
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The confinement `harness run` builds for such a workspace: `harness.toml` protected,
/// `.env` hidden.
fn hiding_env(workspace: &std::path::Path, root: &std::path::Path) -> Confinement {
    let (confinement, _) = Confinement::new(workspace)
        .protect_in_workspace("harness.toml")
        .home(root.join("home"))
        .hide_denied(|path| path.file_name().is_some_and(|name| name == ".env"));
    confinement
}

/// Under Landlock a command could neither make nor remove an entry at the top of the
/// workspace (`touch new.txt`, `rm old.txt`, a first build's `target/`), and with a hidden
/// `.env` there not even list it, so test discovery found nothing. Under both tiers all of
/// it works, and `.env` stays unreadable.
#[test]
fn ordinary_work_at_the_top_of_the_workspace_works_and_a_hidden_file_stays_unreadable() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = top_of_a_real_workspace(&root);
        let script = "touch new.txt && rm old.txt && mkdir target && echo x > target/x && \
                      mv moved.txt renamed.txt && mkdir -p build/deep && rm -r build && \
                      ln -s renamed.txt link && mkfifo pipe && rm pipe && ls -a && \
                      python3 -m unittest 2>&1";
        let outcome = runner(tier, hiding_env(&workspace, &root))
            .run(&["sh", "-c", script], &RunOptions::new(&workspace))
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(outcome.is_success(), "{tier}: {text}");
        for listed in [".env", "renamed.txt", "target", "test_top.py"] {
            assert!(
                text.lines().any(|line| line == listed),
                "{tier}: {listed} not listed\n{text}"
            );
        }
        assert!(text.contains("Ran 1 test"), "{tier}: {text}");
        assert!(workspace.join("new.txt").is_file(), "{tier}");
        assert!(!workspace.join("old.txt").exists(), "{tier}");
        assert!(workspace.join("target/x").is_file(), "{tier}");
        assert!(workspace.join("renamed.txt").is_file(), "{tier}");
        assert!(!workspace.join("build").exists(), "{tier}");
        assert!(outcome.repaired().is_empty(), "{tier}: {text}");
        // What this command made is the workspace's like the rest from the next one on.
        let reads = "cat new.txt target/x link; cat .env; cat /proc/self/cwd/.env .e*";
        let outcome = runner(tier, hiding_env(&workspace, &root))
            .run(&["sh", "-c", reads], &RunOptions::new(&workspace))
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(text.contains("x\nmoved\n"), "{tier}: {text}");
        assert!(!text.contains("hunter2"), "{tier}: .env read\n{text}");
    }
}

/// What Landlock cannot refuse once the top is writable (its rights reach everything
/// below): a hook, git's configuration, the harness's. It is put back after the command,
/// and the command's result says so; bwrap refuses it.
#[test]
fn what_a_command_writes_in_git_or_harness_toml_is_refused_or_put_back_and_said() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = top_of_a_real_workspace(&root);
        let config = std::fs::read(workspace.join(".git/config")).expect("config");
        let head = std::fs::read(workspace.join(".git/HEAD")).expect("HEAD");
        let script = "echo 'touch pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
                      printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config; \
                      echo 'ref: refs/heads/evil' > .git/HEAD; \
                      echo 'verify = \"true\"' > harness.toml; \
                      mv .git/info .git/gone; exit 0";
        let outcome = runner(tier, hiding_env(&workspace, &root))
            .run(&["sh", "-c", script], &RunOptions::new(&workspace))
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(
            !workspace.join(".git/hooks/pre-commit").exists(),
            "{tier}: {text}"
        );
        assert_eq!(
            std::fs::read(workspace.join(".git/config")).ok().as_ref(),
            Some(&config),
            "{tier}: {text}"
        );
        assert_eq!(
            std::fs::read(workspace.join(".git/HEAD")).ok().as_ref(),
            Some(&head),
            "{tier}: {text}"
        );
        assert_eq!(
            std::fs::read_to_string(workspace.join("harness.toml")).ok(),
            Some("verify = \"python3 -m unittest\"\n".to_owned()),
            "{tier}: {text}"
        );
        assert!(
            workspace.join(".git/info/exclude").is_file(),
            "{tier}: {text}"
        );
        if tier == Tier::Landlock {
            for said in [
                "commands may not change this: the command changed",
                "/.git/config; put back as it was",
                "/harness.toml; put back as it was",
                "/.git/hooks/pre-commit; moved to",
            ] {
                assert!(text.contains(said), "{tier}: {said:?} not in\n{text}");
            }
        } else {
            assert!(outcome.repaired().is_empty(), "{tier}: {text}");
        }
        // The repository's history too: its objects are held open across the command.
        let outcome = runner(tier, hiding_env(&workspace, &root))
            .run(
                &["sh", "-c", "rm -rf .git; mkdir .git; exit 0"],
                &RunOptions::new(&workspace),
            )
            .expect("runs");
        let text = outcome.to_model_text();
        assert_eq!(
            history(&workspace).as_deref(),
            Some("history\n"),
            "{tier}: {text}"
        );
        if tier == Tier::Landlock {
            assert!(
                text.contains("file(s) of") && text.contains("/.git/objects; put back"),
                "{text}"
            );
        }
    }
}

/// Once a command may rename and link at the top, a hidden file could be given a name the
/// next command (and the file tools) read: a hard link, a rename, into a directory made for
/// it, from a background process. Landlock refuses a link or move into a directory where
/// the file could be read; whatever else it made is put back after the command.
#[test]
fn a_hidden_file_cannot_be_given_a_readable_name() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = top_of_a_real_workspace(&root);
        std::fs::create_dir_all(workspace.join("src")).expect("src");
        let names = "ln .env linked; ln -s .env sym; mkdir -p d/e; ln .env d/e/x; \
                     ln .env src/y; mv .env .git/stolen; mv .env d/moved; \
                     (sleep 1; ln d/moved late) & \
                     cat linked sym d/e/x d/moved /proc/self/cwd/.env .e* 2>&1; exit 0";
        let outcome = runner(tier, hiding_env(&workspace, &root))
            .run(&["sh", "-c", names], &RunOptions::new(&workspace))
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(!text.contains("hunter2"), "{tier}: read\n{text}");
        std::thread::sleep(Duration::from_millis(1500));
        assert_eq!(
            std::fs::read_to_string(workspace.join(".env"))
                .ok()
                .as_deref(),
            Some("SECRET=hunter2-top\n"),
            "{tier}: {text}"
        );
        for gone in ["linked", "d/e/x", "src/y", ".git/stolen", "d/moved", "late"] {
            assert!(
                workspace.join(gone).symlink_metadata().is_err(),
                "{tier}: {gone} left\n{text}"
            );
        }
        let reads = "cat linked sym d/e/x src/y .git/stolen* d/moved* late* .env 2>&1; \
                     ls -a . .git";
        let outcome = runner(tier, hiding_env(&workspace, &root))
            .run(&["sh", "-c", reads], &RunOptions::new(&workspace))
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(!text.contains("hunter2"), "{tier}: read\n{text}");
        assert!(
            !text.contains("refused"),
            "{tier}: moved aside, not back\n{text}"
        );
    }
}

/// A worktree's `.git` is a file naming the git directory: a command that replaces it with
/// a directory of its own (a configuration with a monitor) finds it moved aside and the file
/// back.
#[test]
fn a_git_file_replaced_with_a_directory_is_put_back() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        let gitfile = "gitdir: /somewhere/.git/worktrees/w\n";
        std::fs::write(workspace.join(".git"), gitfile).expect("write");
        let script = "rm -f .git; mkdir .git && printf '[core]\\nfsmonitor = x\\n' > .git/config; \
                      exit 0";
        let outcome = runner(tier, Confinement::new(&workspace).home(root.join("home")))
            .run(&["sh", "-c", script], &RunOptions::new(&workspace))
            .expect("runs");
        let text = outcome.to_model_text();
        assert_eq!(
            std::fs::read_to_string(workspace.join(".git"))
                .ok()
                .as_deref(),
            Some(gitfile),
            "{tier}: {text}"
        );
    }
}

/// The same below the top and for a hidden directory: a directory on the way to a hidden
/// path is granted the rights of entries too, so a name made there, or a hidden directory
/// renamed, is put back after the command.
#[test]
fn a_hidden_path_below_the_top_or_a_hidden_directory_cannot_be_given_a_readable_name() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = root.join("workspace");
        std::fs::create_dir_all(workspace.join("config")).expect("config");
        std::fs::create_dir_all(workspace.join("secrets/deep")).expect("secrets");
        std::fs::write(workspace.join("config/.env"), "hunter2-config\n").expect("env");
        std::fs::write(workspace.join("secrets/deep/key"), "hunter2-key\n").expect("key");
        let confinement = || {
            let (confinement, _) = Confinement::new(&workspace)
                .home(root.join("home"))
                .hide_denied(|path| {
                    path.ends_with(".env") || path == workspace.join("secrets").as_path()
                });
            confinement
        };
        let names = "ls config secrets; ln config/.env config/x; ln config/.env y; \
                     mv secrets/deep/key k; mv secrets s; mv config c; \
                     cat config/x y k s/deep/key c/.env 2>&1; exit 0";
        let outcome = runner(tier, confinement())
            .run(&["sh", "-c", names], &RunOptions::new(&workspace))
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(!text.contains("hunter2"), "{tier}: read\n{text}");
        assert!(text.contains(".env"), "{tier}: config/ listed\n{text}");
        let reads = "cat config/x y k s/deep/key c/.env c/x config/.env secrets/deep/key 2>&1";
        let outcome = runner(tier, confinement())
            .run(&["sh", "-c", reads], &RunOptions::new(&workspace))
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(!text.contains("hunter2"), "{tier}: read\n{text}");
        assert_eq!(
            std::fs::read_to_string(workspace.join("secrets/deep/key"))
                .ok()
                .as_deref(),
            Some("hunter2-key\n"),
            "{tier}: {text}"
        );
        assert!(workspace.join("config/.env").is_file(), "{tier}: {text}");
    }
}

/// An honest `git status` refreshes git's index when a file's times changed: under Landlock
/// it may, and the index is put back after (bwrap lets it not write at all), with a note,
/// not as a change commands may not make.
#[test]
fn git_status_refreshing_the_index_is_put_back_with_a_note_not_a_tampering() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = top_of_a_real_workspace(&root);
        let add = std::process::Command::new("git")
            .args(["add", "old.txt"])
            .current_dir(&workspace)
            .status()
            .expect("git");
        assert!(add.success());
        let index = std::fs::read(workspace.join(".git/index")).expect("index");
        std::thread::sleep(Duration::from_millis(1100));
        let script = "touch old.txt; git status --short; git add moved.txt; exit 0";
        let outcome = runner(tier, hiding_env(&workspace, &root))
            .run(&["sh", "-c", script], &RunOptions::new(&workspace))
            .expect("runs");
        let text = outcome.to_model_text();
        assert_eq!(
            std::fs::read(workspace.join(".git/index")).ok(),
            Some(index),
            "{tier}: {text}"
        );
        assert!(
            !text.contains("commands may not change this"),
            "{tier}: {text}"
        );
        if tier == Tier::Landlock {
            assert!(
                text.contains("Note: git's index") && text.contains("commands cannot change it"),
                "{text}"
            );
            assert!(
                outcome
                    .repaired()
                    .iter()
                    .all(|repaired| repaired.change == harness_exec::Change::Index),
                "{text}"
            );
        }
    }
}

/// A batch's output directory (`OUT/<id>/work` is each task's workspace) and its task file,
/// hidden around the workspace: a command of task `a` can neither read nor write task `b`'s
/// working copy, its result and patch, a directory made in `OUT` after `a` started, the
/// batch's results or the task file, under either tier, with `OUT` outside `/tmp` (whose
/// private copy under bwrap would hide it anyway); and its own workspace works as ever.
#[test]
fn what_is_hidden_around_the_workspace_is_out_of_reach_but_the_workspace_is_not() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let out = root.join("out");
        let workspace = out.join("a/work");
        std::fs::create_dir_all(&workspace).expect("workspace");
        let git = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&workspace)
            .status()
            .expect("git");
        assert!(git.success());
        let tasks = root.join("tasks.jsonl");
        let theirs = [
            out.join("b/work/answer.py"),
            out.join("b/result.json"),
            out.join("b/patch.diff"),
            out.join("results.jsonl"),
            tasks.clone(),
        ];
        for (n, path) in theirs.iter().enumerate() {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, format!("secret-{n}\n")).expect("write");
        }
        let confinement = Confinement::new(&workspace)
            .home(root.join("home"))
            .hide_around(&out)
            .hide_around(&tasks);
        let runner = runner(tier, confinement);
        let options = RunOptions::new(&workspace);
        // Own work first: a file written, and git sees it.
        let outcome = runner
            .run(
                &[
                    "sh",
                    "-c",
                    "echo own-work > mine.txt && git status --porcelain",
                ],
                &options,
            )
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(outcome.is_success(), "{tier}: {text}");
        assert!(text.contains("?? mine.txt"), "{tier}: {text}");
        assert_eq!(
            std::fs::read_to_string(workspace.join("mine.txt")).ok(),
            Some("own-work\n".to_owned()),
            "{tier}: not written in the workspace"
        );
        // Made after the task started, by another task.
        let late = out.join("c/work/late.txt");
        std::fs::create_dir_all(late.parent().expect("parent")).expect("mkdir");
        std::fs::write(&late, "secret-late\n").expect("late");
        let mut reached: Vec<&std::path::Path> = theirs.iter().map(AsRef::as_ref).collect();
        reached.push(&late);
        for path in reached {
            let before = std::fs::read_to_string(path).expect("read");
            let script = "cat \"$0\"; ls \"$(dirname \"$0\")\"; echo changed >> \"$0\"; \
                          echo new > \"$(dirname \"$0\")/new\"; cat mine.txt";
            let outcome = runner
                .run(
                    &["sh", "-c", script, path.to_str().expect("utf-8")],
                    &options,
                )
                .expect("runs");
            let text = outcome.to_model_text();
            assert!(
                !text.contains("secret"),
                "{tier}: {} read\n{text}",
                path.display()
            );
            assert!(
                text.contains("own-work"),
                "{tier}: own file not read\n{text}"
            );
            assert_eq!(
                std::fs::read_to_string(path).expect("read"),
                before,
                "{tier}: {} written",
                path.display()
            );
            let new = path.parent().expect("parent").join("new");
            assert!(!new.exists(), "{tier}: {} made", new.display());
        }
        // Nor listed: the other tasks' names are no more the command's than their files (the
        // task file's name in its directory is, as a hidden file's always is).
        let outcome = runner
            .run(
                &["sh", "-c", "ls \"$0\"", out.to_str().expect("utf-8")],
                &options,
            )
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(!text.contains("results.jsonl"), "{tier}: listed\n{text}");
        assert!(
            !text.lines().any(|line| line == "b" || line == "c"),
            "{tier}: listed\n{text}"
        );
        // Other spellings of the same places: relative, through a symlink the command makes
        // in its workspace, through /proc, from a directory it changes to, and from a
        // process it leaves running in the background for the command's last moment.
        let spellings = "cat ../../b/result.json; cat ../../results.jsonl; \
                         ln -s ../../b sideways && cat sideways/result.json sideways/work/answer.py; \
                         cat /proc/self/cwd/../../b/patch.diff; \
                         (cd ../.. && cat b/result.json results.jsonl); \
                         (sleep 0.2; cat ../../b/result.json > from-background.txt) & \
                         sleep 0.5; cat from-background.txt; rm -f sideways; exit 0";
        let outcome = runner
            .run(&["sh", "-c", spellings], &options)
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(!text.contains("secret"), "{tier}: read\n{text}");
        let background = std::fs::read_to_string(workspace.join("from-background.txt"));
        assert!(
            !background.unwrap_or_default().contains("secret"),
            "{tier}: read in the background"
        );
    }
}

/// A writable path that holds the output directory (`--writable ~` with `OUT` under the
/// home) neither shows it again nor lets a command move it out of hiding: the cover is a
/// mount point under bwrap, which cannot be renamed, and under Landlock the writable path is
/// granted entry by entry, without the right to rename its entries.
#[test]
fn a_writable_path_holding_what_is_hidden_around_the_workspace_does_not_show_it() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let home = root.join("home");
        let out = home.join("out");
        let workspace = out.join("a/work");
        std::fs::create_dir_all(&workspace).expect("workspace");
        std::fs::create_dir_all(home.join("cache")).expect("cache");
        std::fs::create_dir_all(out.join("b")).expect("b");
        std::fs::write(out.join("b/result.json"), "secret\n").expect("result");
        let confinement = Confinement::new(&workspace)
            .home(root.join("elsewhere"))
            .writable(&home)
            .hide_around(&out);
        let script = "cat \"$0\"/out/b/result.json; mv \"$0\"/out \"$0\"/moved; \
                      echo x > \"$0\"/cache/file; echo own > mine.txt";
        let options = RunOptions::new(&workspace);
        let outcome = runner(tier, confinement.clone())
            .run(
                &["sh", "-c", script, home.to_str().expect("utf-8")],
                &options,
            )
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(!text.contains("secret"), "{tier}: read\n{text}");
        assert!(out.join("b/result.json").is_file(), "{tier}: moved\n{text}");
        assert!(!home.join("moved").exists(), "{tier}: moved\n{text}");
        assert!(
            home.join("cache/file").is_file(),
            "{tier}: the writable path\n{text}"
        );
        assert!(
            workspace.join("mine.txt").is_file(),
            "{tier}: the workspace\n{text}"
        );
    }
}

/// A hidden file below the top (`config/.env`) stays unreadable, by its path and by a
/// walk of its directory, while the files beside it are read and written as ever: every
/// directory between the top and the hidden path is split, not granted whole.
#[test]
fn a_hidden_file_deep_in_the_workspace_stays_unreadable_and_its_neighbours_work() {
    for tier in real_tiers() {
        let (_dir, root) = scratch();
        let workspace = top_of_a_real_workspace(&root);
        std::fs::create_dir_all(workspace.join("config/deploy")).expect("dirs");
        std::fs::write(
            workspace.join("config/deploy/.env"),
            "SECRET=hunter2-deep\n",
        )
        .expect("write");
        std::fs::write(workspace.join("config/deploy/app.toml"), "name = 'app'\n").expect("write");
        let script = "cat config/deploy/app.toml; echo more >> config/deploy/app.toml; \
                      echo new > config/deploy/new.toml; mkdir config/deploy/d; ls config/deploy; \
                      cat config/deploy/.env; cat config/deploy/.e*; grep -r SECRET config; \
                      exit 0";
        let outcome = runner(tier, hiding_env(&workspace, &root))
            .policy(Policy::allowlist(["sh", "cat", "grep", "ls", "mkdir"]))
            .run(&["sh", "-c", script], &RunOptions::new(&workspace))
            .expect("runs");
        let text = outcome.to_model_text();
        assert!(text.contains("name = 'app'"), "{tier}: {text}");
        assert!(
            text.lines().any(|line| line == "new.toml"),
            "{tier}: {text}"
        );
        assert!(workspace.join("config/deploy/d").is_dir(), "{tier}: {text}");
        assert!(!text.contains("hunter2-deep"), "{tier}: .env read\n{text}");
        assert_eq!(
            std::fs::read_to_string(workspace.join("config/deploy/app.toml")).expect("read"),
            "name = 'app'\nmore\n",
            "{tier}: {text}"
        );
    }
}
