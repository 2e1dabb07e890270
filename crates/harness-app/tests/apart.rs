//! What a front end hides around the workspace ([`Plan::hide_around`]), through the toolbox
//! every run's commands and file tools go through, with the real tiers: a batch's output
//! directory and task file, as `harness batch` names them for each task. `OUT` lies outside
//! `/tmp` here, where bwrap's private `/tmp` would hide it anyway. A tier this machine
//! cannot run is skipped with the reason, unless `HARNESS_CI_ALL_TIERS=1` says every tier
//! must run.

use std::path::{Path, PathBuf};

use harness_app::settings::ToolboxSettings;
use harness_app::toolbox::Plan;
use harness_exec::{Sandbox, Tier, preflight};
use harness_tools::Toolbox;
use serde_json::json;

/// The real tiers this machine can run, each skipped one saying why on stderr.
#[allow(clippy::print_stderr)]
fn real_tiers() -> Vec<Tier> {
    [Tier::Bwrap, Tier::Landlock]
        .into_iter()
        .filter(|&tier| match preflight::probe(tier) {
            Ok(()) => true,
            Err(unavailable) => {
                assert!(
                    std::env::var_os("HARNESS_CI_ALL_TIERS").is_none_or(|value| value != "1"),
                    "HARNESS_CI_ALL_TIERS=1 but {unavailable}"
                );
                eprintln!("skipped: {unavailable}");
                false
            }
        })
        .collect()
}

/// A batch as `harness batch` leaves it while task `a` runs: `OUT/a/work` its workspace (a
/// repository), task `b`'s working copy, result and patch, the batch's results, and the task
/// file beside `OUT`.
struct Batch {
    _dir: tempfile::TempDir,
    out: PathBuf,
    workspace: PathBuf,
    tasks: PathBuf,
    /// What is not task `a`'s, each holding `secret`.
    theirs: Vec<PathBuf>,
}

fn batch() -> Batch {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let out = root.join("out");
    let workspace = out.join("a/work");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&workspace)
        .status()
        .expect("git");
    assert!(init.success());
    let tasks = root.join("tasks.jsonl");
    let theirs = vec![
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
    Batch {
        _dir: dir,
        out,
        workspace,
        tasks,
        theirs,
    }
}

/// The toolbox of task `a` under `tier`, with the output directory and the task file hidden
/// around its workspace.
fn toolbox(batch: &Batch, tier: Tier) -> Toolbox {
    let settings = ToolboxSettings {
        sandbox: Sandbox::Only(tier),
        ..ToolboxSettings::default()
    };
    let (toolbox, choice) = Plan::check(&batch.workspace, &settings)
        .expect("plan")
        .hide_around(&[batch.out.clone(), batch.tasks.clone()])
        .build()
        .expect("toolbox");
    assert_eq!(choice.tier, tier);
    toolbox
}

fn command(toolbox: &Toolbox, script: &str, path: &Path) -> String {
    let argv = json!(["sh", "-c", script, path]);
    toolbox
        .call("run_command", &json!({ "argv": argv }))
        .text()
        .to_owned()
}

/// A directory task `c` makes after `a` started; returns its file.
fn made_later(batch: &Batch) -> PathBuf {
    let late = batch.out.join("c/work/late.txt");
    std::fs::create_dir_all(late.parent().expect("parent")).expect("mkdir");
    std::fs::write(&late, "secret-late\n").expect("late");
    late
}

#[test]
fn a_task_s_commands_reach_nothing_of_the_batch_but_their_own_working_copy() {
    for tier in real_tiers() {
        let batch = batch();
        let toolbox = toolbox(&batch, tier);
        let own = command(
            &toolbox,
            "echo own-work > mine.txt && git status --porcelain",
            &batch.workspace,
        );
        assert!(own.contains("?? mine.txt"), "{tier}: {own}");
        assert_eq!(
            std::fs::read_to_string(batch.workspace.join("mine.txt")).ok(),
            Some("own-work\n".to_owned()),
            "{tier}: {own}"
        );
        let late = made_later(&batch);
        for path in batch.theirs.iter().chain([&late]) {
            let script = "cat \"$0\"; echo changed >> \"$0\"; echo new > \"$(dirname \"$0\")/new\"; \
                          cat mine.txt";
            let text = command(&toolbox, script, path);
            assert!(
                !text.contains("secret"),
                "{tier}: {} read\n{text}",
                path.display()
            );
            assert!(text.contains("own-work"), "{tier}: own file\n{text}");
            let content = std::fs::read_to_string(path).expect("read");
            assert!(
                content.starts_with("secret") && !content.contains("changed"),
                "{tier}"
            );
            let new = path.parent().expect("parent").join("new");
            assert!(!new.exists(), "{tier}: {} made", new.display());
        }
        let listing = command(&toolbox, "ls \"$0\"", &batch.out);
        assert!(!listing.contains("results.jsonl"), "{tier}: {listing}");
    }
}

/// The file tools reach nothing outside the workspace under any tier, by a relative path,
/// an absolute one, or a link the model makes in the workspace; and under `none`, which
/// confines nothing (as the docs say), a command does read what the tiers hide.
#[test]
fn the_file_tools_reach_nothing_of_the_batch_and_none_hides_nothing_from_commands() {
    for tier in real_tiers().into_iter().chain([Tier::None]) {
        let batch = batch();
        let toolbox = toolbox(&batch, tier);
        let result = batch.out.join("b/result.json");
        std::os::unix::fs::symlink(&result, batch.workspace.join("link")).expect("link");
        let absolute = result.to_str().expect("utf-8");
        for path in ["../b/result.json", "../../results.jsonl", absolute, "link"] {
            let read = toolbox.call("read_file", &json!({ "path": path }));
            assert!(read.is_error(), "{tier}: {path} read: {}", read.text());
            assert!(!read.text().contains("secret"), "{tier}: {}", read.text());
            let written = toolbox.call("write_file", &json!({ "path": path, "content": "x" }));
            assert!(written.is_error(), "{tier}: {path} written");
        }
        let listed = toolbox.call("list_dir", &json!({ "path": "../.." }));
        assert!(listed.is_error(), "{tier}: {}", listed.text());
        assert_eq!(
            std::fs::read_to_string(&result).ok(),
            Some("secret-1\n".to_owned())
        );
        if tier == Tier::None {
            let text = command(&toolbox, "cat \"$0\"", &result);
            assert!(text.contains("secret-1"), "none hid it: {text}");
        }
    }
}
