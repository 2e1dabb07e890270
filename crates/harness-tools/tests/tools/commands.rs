//! `run_command`: through the runner, in the workspace, with the policy and the timeouts.

use std::thread;
use std::time::{Duration, Instant};

use harness_exec::Policy;
use harness_tools::{Detail, Status, ToolResult, Toolbox};
use serde_json::json;

use crate::support::{Fixture, assert_error, ok};

#[test]
fn a_command_runs_in_the_workspace_root() {
    let fixture = Fixture::new();
    let result = fixture.call("run_command", json!({"argv": ["pwd"]}));
    assert_eq!(ok(&result), format!("exit=0\n{}", fixture.root.display()));
    assert!(result.may_have_changed_workspace());
    assert!(
        result
            .summary()
            .to_string()
            .starts_with("run_command pwd  exit=0 ")
    );
}

#[test]
fn a_non_zero_exit_is_a_result_not_an_error() {
    let fixture = Fixture::new();
    let result = fixture.call(
        "run_command",
        json!({"argv": ["sh", "-c", "echo boom; exit 3"]}),
    );
    assert_eq!(ok(&result), "exit=3\nboom");
    assert!(result.may_have_changed_workspace());
    let Detail::Ran { status, .. } = result.summary().detail() else {
        panic!("a command that ran: {:?}", result.summary());
    };
    assert_eq!(*status, Status::Exited(3));
    assert_eq!(result.summary().target(), "sh -c 'echo boom; exit 3'");
}

#[test]
fn run_command_of_sudo_ls_is_refused() {
    let fixture = Fixture::new();
    let result = fixture.call("run_command", json!({"argv": ["sudo", "ls"]}));
    assert_error(&result, "Error: command refused: ");
    assert!(result.text().contains("sudo"), "{}", result.text());
    assert_eq!(result.summary().to_string(), "run_command sudo ls  error");
    // Every run_command counts as a possible change, refused or not.
    assert!(result.may_have_changed_workspace());
}

#[test]
fn a_missing_program_is_an_error() {
    let fixture = Fixture::new();
    let result = fixture.call("run_command", json!({"argv": ["no-such-program-here"]}));
    assert_eq!(
        result.text(),
        "Error: command not found: no-such-program-here"
    );
    assert!(result.is_error());
}

#[test]
fn the_allowlist_refuses_every_other_program() {
    let fixture = Fixture::new();
    let toolbox = fixture
        .builder()
        .policy(Policy::allowlist(["echo"]))
        .build();
    let allowed = toolbox.call("run_command", &json!({"argv": ["echo", "hi"]}));
    assert_eq!(ok(&allowed), "exit=0\nhi");
    let refused = toolbox.call("run_command", &json!({"argv": ["ls"]}));
    assert_error(&refused, "Error: command refused: ");
}

#[test]
fn a_timeout_above_the_maximum_is_lowered_and_the_model_is_told() {
    let fixture = Fixture::new();
    let toolbox = fixture
        .builder()
        .max_timeout(Duration::from_secs(1))
        .build();
    let started = Instant::now();
    let result = toolbox.call(
        "run_command",
        &json!({"argv": ["sleep", "30"], "timeout_s": 100}),
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the command was not stopped"
    );
    assert_eq!(
        result.text(),
        "Error: command exceeded 1s and was killed.\n[timeout_s 100 was lowered to the maximum of 1s]"
    );
    assert!(result.is_error());
    assert!(result.may_have_changed_workspace());
    assert!(
        result
            .summary()
            .to_string()
            .starts_with("run_command sleep 30  timed out ")
    );
}

/// `sleep 30`, asking for no timeout, run with `limit` left.
fn sleep_within(toolbox: &Toolbox, limit: Duration) -> ToolResult {
    toolbox.call_within("run_command", &json!({"argv": ["sleep", "30"]}), limit)
}

#[test]
fn no_command_outlasts_the_limit_its_caller_has_left_whatever_it_asks_for() {
    let fixture = Fixture::new();
    let toolbox = fixture.builder().timeout(Duration::from_secs(100)).build();
    for arguments in [
        json!({"argv": ["sleep", "30"]}),
        json!({"argv": ["sleep", "30"], "timeout_s": 100}),
        json!({"argv": ["sleep", "30"], "timeout_s": 600}),
    ] {
        let started = Instant::now();
        let result = toolbox.call_within("run_command", &arguments, Duration::from_millis(1_200));
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{arguments} outlasted the limit"
        );
        assert!(result.is_error(), "{arguments}");
        let text = result.text();
        assert!(
            text.starts_with("Error: command exceeded 2s and was killed."),
            "{arguments}: {text}"
        );
        assert!(
            text.ends_with("\n[stopped at the 2s the run had left]"),
            "{arguments}: {text}"
        );
    }
    // A whole number of seconds is not rounded up.
    let whole = sleep_within(&toolbox, Duration::from_secs(2));
    assert!(
        whole
            .text()
            .starts_with("Error: command exceeded 2s and was killed.")
    );
    // Nothing left still lets a command start, for one second.
    let result = sleep_within(&toolbox, Duration::ZERO);
    assert!(
        result
            .text()
            .starts_with("Error: command exceeded 1s and was killed.")
    );
}

#[test]
fn a_limit_no_shorter_than_the_timeout_changes_nothing() {
    let fixture = Fixture::new();
    let toolbox = fixture.builder().timeout(Duration::from_secs(1)).build();
    let stopped = sleep_within(&toolbox, Duration::from_secs(500));
    assert_eq!(stopped.text(), "Error: command exceeded 1s and was killed.");
    let equal = sleep_within(&toolbox, Duration::from_secs(1));
    assert_eq!(equal.text(), "Error: command exceeded 1s and was killed.");
    let ran = toolbox.call_within(
        "run_command",
        &json!({"argv": ["echo", "hi"]}),
        Duration::from_millis(1),
    );
    assert_eq!(ok(&ran), "exit=0\nhi");
}

#[test]
fn a_timeout_at_the_maximum_is_kept_without_a_note() {
    let fixture = Fixture::new();
    let toolbox = fixture
        .builder()
        .max_timeout(Duration::from_secs(1))
        .build();
    let result = toolbox.call(
        "run_command",
        &json!({"argv": ["sleep", "5"], "timeout_s": 1}),
    );
    assert_eq!(result.text(), "Error: command exceeded 1s and was killed.");
}

#[test]
fn a_timeout_below_the_maximum_is_kept() {
    let fixture = Fixture::new();
    let result = fixture.call(
        "run_command",
        json!({"argv": ["sleep", "5"], "timeout_s": 1}),
    );
    assert_eq!(result.text(), "Error: command exceeded 1s and was killed.");
}

#[test]
fn the_default_timeout_applies_and_is_capped_by_the_maximum() {
    let fixture = Fixture::new();
    let short = fixture.builder().timeout(Duration::from_secs(1)).build();
    let result = short.call("run_command", &json!({"argv": ["sleep", "5"]}));
    assert_eq!(result.text(), "Error: command exceeded 1s and was killed.");
    let capped = fixture
        .builder()
        .timeout(Duration::from_secs(30))
        .max_timeout(Duration::from_secs(1))
        .build();
    let result = capped.call("run_command", &json!({"argv": ["sleep", "5"]}));
    assert_eq!(result.text(), "Error: command exceeded 1s and was killed.");
}

#[test]
fn long_output_is_cut_in_the_middle() {
    let fixture = Fixture::new();
    let toolbox = fixture.builder().output_limit(100).build();
    let result = toolbox.call("run_command", &json!({"argv": ["seq", "1", "1000"]}));
    let text = ok(&result);
    assert!(text.starts_with("exit=0\n1\n2\n"), "{text}");
    assert!(text.ends_with("\n999\n1000"), "{text}");
    assert!(text.contains("truncated"), "{text}");
    assert!(text.len() < 300, "{text}");
}

#[test]
fn an_interrupted_command_is_an_error() {
    let fixture = Fixture::new();
    let toolbox = fixture.builder().build();
    let interrupter = toolbox.interrupter();
    let helper = thread::spawn(move || {
        // Until the command is registered, there is nothing to interrupt.
        for _ in 0..1000 {
            if interrupter.interrupt() > 0 {
                return true;
            }
            thread::sleep(Duration::from_millis(10));
        }
        false
    });
    let result = toolbox.call("run_command", &json!({"argv": ["sleep", "30"]}));
    assert!(
        helper.join().expect("the helper thread"),
        "nothing was interrupted"
    );
    assert_eq!(result.text(), "Error: command was interrupted by the user.");
    assert!(result.is_error());
    assert!(
        result
            .summary()
            .to_string()
            .starts_with("run_command sleep 30  interrupted ")
    );
}

/// What the runner moves aside or puts back after a command (here a `.git` the command made,
/// which commands may not leave as a repository, under each kernel tier) is the result's
/// `put_back`, one line each, redacted like the rest of the result.
#[test]
fn what_the_runner_put_back_is_in_the_result_redacted() {
    use harness_exec::{Confinement, Isolation, Runner, Tier, preflight};
    // A directory name that is a credential's shape: the line naming it must not show it.
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    for tier in [Tier::Bwrap, Tier::Landlock] {
        if let Err(unavailable) = preflight::probe(tier) {
            assert!(
                std::env::var_os("HARNESS_CI_ALL_TIERS").is_none(),
                "HARNESS_CI_ALL_TIERS=1 but {unavailable}"
            );
            continue;
        }
        let fixture = Fixture::new();
        fixture.file("README", "hello\n");
        let runner = Runner::new()
            .policy(Policy::allowlist(["mkdir"]))
            .isolation(Isolation::new(tier, Confinement::new(&fixture.root)));
        let toolbox = fixture.builder().runner(runner).build();
        let result = toolbox.call(
            "run_command",
            &json!({"argv": ["mkdir", "-p", format!("{token}/.git")]}),
        );
        let lines = result.put_back();
        assert_eq!(lines.len(), 1, "{tier}: {lines:?} {}", result.text());
        assert!(lines[0].contains("/.git"), "{tier}: {lines:?}");
        assert!(lines[0].contains("moved to"), "{tier}: {lines:?}");
        assert!(!lines[0].contains(token), "{tier}: {lines:?}");
        assert!(!result.text().contains(token), "{tier}: {}", result.text());
    }
}

/// Under Landlock, which cannot keep a command out of `.git`, what the runner repaired there
/// after the command is in the result, one line per path; a `git status` that only refreshed
/// the index is repaired too but not reported, since it is no change of the command's.
#[test]
fn what_landlock_repaired_in_git_is_in_the_result_and_a_refreshed_index_is_not() {
    use harness_exec::{Confinement, Isolation, Runner, Tier, preflight};
    if let Err(unavailable) = preflight::probe(Tier::Landlock) {
        assert!(
            std::env::var_os("HARNESS_CI_ALL_TIERS").is_none(),
            "HARNESS_CI_ALL_TIERS=1 but {unavailable}"
        );
        return;
    }
    let fixture = Fixture::new();
    fixture.file("README", "hello\n");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(&fixture.root)
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "README"]);
    git(&["commit", "-qm", "init"]);
    let toolbox = |root: &std::path::Path| {
        let runner = Runner::new()
            .policy(Policy::allowlist(["sh", "git", "touch"]))
            .isolation(Isolation::new(Tier::Landlock, Confinement::new(root)));
        fixture.builder().runner(runner).build()
    };

    let hook = toolbox(&fixture.root).call(
        "run_command",
        &json!({"argv": ["sh", "-c", "echo 'echo pwned' > .git/hooks/pre-commit"]}),
    );
    let lines = hook.put_back();
    assert_eq!(lines.len(), 1, "{lines:?} {}", hook.text());
    assert!(lines[0].contains(".git/hooks/pre-commit"), "{lines:?}");
    assert!(!fixture.path(".git/hooks/pre-commit").exists());

    // A tracked file with a new time makes `git status` rewrite the index's stat data.
    let refresh = toolbox(&fixture.root).call(
        "run_command",
        &json!({"argv": ["sh", "-c", "touch -d '2001-01-01' README && git status --short"]}),
    );
    assert!(
        refresh.put_back().is_empty(),
        "{:?} {}",
        refresh.put_back(),
        refresh.text()
    );
}
