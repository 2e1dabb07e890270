//! Running commands: results, errors, output, environment and limits, with
//! real processes.

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::thread;
use std::time::Duration;

use harness_exec::{
    EnvPolicy, Error, Limits, Policy, REDACTED, RunOptions, Runner, Status, is_secret_name,
};
use support::{NO_HANG, run, scratch};

const SHORT: Duration = Duration::from_secs(20);

#[test]
fn non_zero_exit_is_a_result() {
    let outcome = run(&["sh", "-c", "echo out; echo err >&2; exit 3"], SHORT);
    assert_eq!(outcome.status(), Status::Exited(3));
    assert!(!outcome.is_success());
    assert_eq!(outcome.output(), "out\nerr\n");
    assert_eq!(outcome.to_model_text(), "exit=3\nout\nerr");
    assert!(!outcome.is_truncated());
    assert_eq!((outcome.total_bytes(), outcome.total_lines()), (8, 2));
}

#[test]
fn stdout_and_stderr_keep_their_order() {
    let outcome = run(
        &["sh", "-c", "echo 1; echo 2 >&2; echo 3; echo 4 >&2; echo 5"],
        SHORT,
    );
    assert_eq!(outcome.output(), "1\n2\n3\n4\n5\n");
    assert!(outcome.is_success());
}

#[test]
fn death_by_signal_is_reported() {
    let outcome = run(&["sh", "-c", "echo before; kill -SEGV $$"], SHORT);
    assert_eq!(outcome.status(), Status::Signaled(11));
    assert_eq!(
        outcome.to_model_text(),
        "killed by signal 11 (SIGSEGV)\nbefore"
    );
}

#[test]
fn a_missing_program_is_not_found() {
    let (_dir, options) = scratch(SHORT);
    let error = Runner::new()
        .run(&["no-such-program-4711", "-x"], &options)
        .expect_err("not found");
    assert!(matches!(&error, Error::NotFound { program } if program == "no-such-program-4711"));
    assert_eq!(
        error.to_model_text(),
        "Error: command not found: no-such-program-4711"
    );
    let error = Runner::new()
        .run(&["./missing.sh"], &options)
        .expect_err("not found");
    assert_eq!(
        error.to_model_text(),
        "Error: command not found: ./missing.sh"
    );
}

#[test]
fn a_file_without_execute_permission_is_not_executable() {
    let (dir, options) = scratch(SHORT);
    fs::write(dir.path().join("build.sh"), "#!/bin/sh\necho built\n").expect("write");
    let error = Runner::new()
        .run(&["./build.sh"], &options)
        .expect_err("not executable");
    assert!(matches!(&error, Error::NotExecutable { program, .. } if program == "./build.sh"));
    assert!(
        error
            .to_model_text()
            .starts_with("Error: command not executable: ./build.sh ("),
        "{error}"
    );
    // The advice works.
    let outcome = Runner::new()
        .run(&["sh", "./build.sh"], &options)
        .expect("runs");
    assert_eq!(outcome.output(), "built\n");
}

#[test]
fn a_missing_interpreter_is_a_spawn_error() {
    let (dir, options) = scratch(SHORT);
    let script = dir.path().join("tool");
    fs::write(&script, "#!/no/such/interpreter\n").expect("write");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).expect("chmod");
    let error = Runner::new()
        .run(&["./tool"], &options)
        .expect_err("cannot start");
    assert!(
        matches!(&error, Error::Spawn { program, .. } if program == "./tool"),
        "{error:?}"
    );
    assert!(
        error
            .to_model_text()
            .starts_with("Error: could not start ./tool: "),
        "{error}"
    );
}

#[test]
fn cat_with_no_input_returns_at_once() {
    let outcome = run(&["cat"], Duration::from_secs(30));
    assert_eq!(outcome.status(), Status::Exited(0));
    assert_eq!(outcome.output(), "");
    assert!(outcome.duration() < NO_HANG, "{:?}", outcome.duration());
}

#[test]
fn a_command_that_closes_its_output_still_runs_to_its_end() {
    let outcome = run(
        &["sh", "-c", "echo bye; exec >&- 2>&-; sleep 0.3; exit 3"],
        SHORT,
    );
    assert_eq!(outcome.status(), Status::Exited(3));
    assert_eq!(outcome.output(), "bye\n");
}

#[test]
fn the_command_inherits_no_other_file_descriptor() {
    // A descriptor this process leaves inheritable, as a careless library or
    // a parent's jobserver would.
    let leaky = fs::File::open("/dev/null").expect("open");
    rustix::io::fcntl_setfd(&leaky, rustix::io::FdFlags::empty()).expect("clear close-on-exec");
    // Listing /proc/self/fd opens one more descriptor for the listing itself.
    let script = "import os; print(sorted(int(fd) for fd in os.listdir('/proc/self/fd')))";
    let outcome = run(&["python3", "-c", script], SHORT);
    assert_eq!(outcome.output(), "[0, 1, 2, 3]\n");
    drop(leaky);
}

#[test]
fn the_command_leads_its_own_session_without_a_terminal() {
    let script = "import os; print(os.getsid(0) == os.getpid() == os.getpgid(0))";
    let outcome = run(&["python3", "-c", script], SHORT);
    assert_eq!(outcome.output(), "True\n");
    // A prompt on the terminal fails at once instead of waiting for the timeout.
    let outcome = run(&["cat", "/dev/tty"], Duration::from_secs(30));
    assert_eq!(outcome.status(), Status::Exited(1));
    assert!(
        outcome.output().contains("No such device or address"),
        "{}",
        outcome.output()
    );
}

#[test]
fn stdin_is_dev_null() {
    let outcome = run(
        &[
            "sh",
            "-c",
            "read line; echo \"read=$?\"; ls -l /proc/self/fd/0",
        ],
        SHORT,
    );
    assert!(
        outcome.output().starts_with("read=1\n"),
        "{}",
        outcome.output()
    );
    assert!(
        outcome.output().trim_end().ends_with("-> /dev/null"),
        "{}",
        outcome.output()
    );
}

#[test]
fn the_command_runs_in_the_given_directory() {
    let (dir, options) = scratch(SHORT);
    let outcome = Runner::new().run(&["pwd"], &options).expect("runs");
    let expected = dir.path().canonicalize().expect("canonical");
    assert_eq!(
        outcome.output().trim_end(),
        expected.to_str().expect("utf-8")
    );
}

#[test]
fn arguments_are_never_shell_code() {
    let outcome = run(&["echo", "$HOME; touch pwned && `id` $(id) *"], SHORT);
    assert_eq!(outcome.output(), "$HOME; touch pwned && `id` $(id) *\n");
}

#[test]
fn the_program_keeps_the_name_it_was_given() {
    let outcome = run(&["sh", "-c", "echo $0"], SHORT);
    assert_eq!(outcome.output(), "sh\n");
}

#[test]
fn a_bad_working_directory_is_refused() {
    let (dir, _) = scratch(SHORT);
    let missing = RunOptions::new(dir.path().join("missing"));
    let error = Runner::new().run(&["true"], &missing).expect_err("missing");
    assert!(matches!(error, Error::WorkingDirectory { .. }), "{error:?}");
    assert!(
        error.to_string().contains("missing cannot be used"),
        "{error}"
    );
    let file = dir.path().join("file");
    fs::write(&file, "").expect("write");
    let error = Runner::new()
        .run(&["true"], &RunOptions::new(&file))
        .expect_err("a file");
    assert!(matches!(error, Error::WorkingDirectory { .. }), "{error:?}");
    assert!(error.to_string().contains("not a directory"), "{error}");
}

#[test]
fn an_empty_command_is_an_error() {
    let (_dir, options) = scratch(SHORT);
    let error = Runner::new().run::<&str>(&[], &options).expect_err("empty");
    assert!(matches!(error, Error::EmptyCommand));
}

#[test]
fn a_timeout_above_the_maximum_is_refused() {
    let (_dir, options) = scratch(Duration::from_secs(11));
    let runner = Runner::new().max_timeout(Duration::from_secs(10));
    let error = runner.run(&["true"], &options).expect_err("too long");
    assert_eq!(
        error.to_model_text(),
        "Error: a timeout of 11s is longer than the maximum of 10s: ask for at most 10s"
    );
}

#[test]
fn the_default_timeout_applies_when_the_call_sets_none() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runner = Runner::new().timeout(Duration::from_millis(300));
    let outcome = runner
        .run(&["sleep", "100"], &RunOptions::new(dir.path()))
        .expect("runs");
    assert_eq!(
        outcome.status(),
        Status::TimedOut(Duration::from_millis(300))
    );
}

#[test]
fn a_refused_command_never_starts() {
    let (dir, options) = scratch(SHORT);
    let marker = dir.path().join("ran");
    let script = format!("touch {}", marker.display());
    let runner = Runner::new().policy(Policy::allowlist(["echo"]));
    let error = runner
        .run(&["sh", "-c", &script], &options)
        .expect_err("refused");
    assert!(matches!(&error, Error::Refused(refusal) if refusal.program() == "sh"));
    let text = error.to_model_text();
    assert!(
        text.starts_with("Error: command refused: `sh` is not on the allowlist (allowed: echo)."),
        "{text}"
    );
    assert!(text.contains("`python -c`"), "{text}");
    assert!(!marker.exists());
    let error = Runner::new()
        .run(&["env", "sudo", "true"], &options)
        .expect_err("refused");
    assert!(matches!(error, Error::Refused(_)));
}

#[test]
fn the_policy_resolves_programs_on_the_commands_path_and_home() {
    let (dir, options) = scratch(SHORT);
    let bin = dir.path().join("bin");
    fs::create_dir(&bin).expect("mkdir");
    std::os::unix::fs::symlink("/bin/true", bin.join("harmless")).expect("symlink");
    let runner = Runner::new().parent_env([
        ("PATH", bin.as_os_str()),
        ("HOME", "/home/someone".as_ref()),
    ]);
    // `harmless` is `true` under another name: resolving it on the command's
    // PATH finds `true`, which is allowed and runs.
    assert!(
        runner
            .run(&["harmless"], &options)
            .expect("runs")
            .is_success()
    );
    std::os::unix::fs::symlink("/bin/mount", bin.join("mnt")).expect("symlink");
    let error = runner.run(&["mnt"], &options).expect_err("refused");
    assert!(error.to_string().contains("`mnt` runs `mount`"), "{error}");
    let error = runner
        .run(&["rm", "-rf", "/home/someone"], &options)
        .expect_err("refused");
    assert!(
        error
            .to_string()
            .contains("would delete the home directory or a directory that contains it"),
        "{error}"
    );
}

#[test]
fn the_home_directory_is_recognised_through_a_symlinked_working_directory() {
    let (dir, _) = scratch(SHORT);
    let home = dir.path().join("home");
    fs::create_dir_all(home.join("project")).expect("mkdir");
    std::os::unix::fs::symlink(&home, dir.path().join("link")).expect("symlink");
    let path = std::env::var_os("PATH").expect("PATH");
    let runner =
        Runner::new().parent_env([("PATH", path), ("HOME", home.clone().into_os_string())]);
    let options = RunOptions::new(dir.path().join("link/project"));
    let error = runner
        .run(&["rm", "-rf", ".."], &options)
        .expect_err("refused");
    assert!(error.to_string().contains("`rm` aimed at `..`"), "{error}");
    assert!(home.exists());
}

#[test]
fn the_spec_timeout_returns_an_error_not_a_hang() {
    let outcome = run(
        &["python3", "-c", "import time; time.sleep(100)"],
        Duration::from_millis(500),
    );
    assert_eq!(
        outcome.status(),
        Status::TimedOut(Duration::from_millis(500))
    );
    assert!(
        outcome.to_model_text().contains("exceeded"),
        "{}",
        outcome.to_model_text()
    );
    assert_eq!(
        outcome.to_model_text(),
        "Error: command exceeded 0.5s and was killed."
    );
    assert!(outcome.duration() < NO_HANG, "{:?}", outcome.duration());
}

#[test]
fn a_timeout_sends_sigterm_first() {
    let script = "trap 'echo got TERM; exit 7' TERM; echo ready; while :; do sleep 0.05; done";
    let outcome = run(&["sh", "-c", script], Duration::from_millis(500));
    assert_eq!(
        outcome.status(),
        Status::TimedOut(Duration::from_millis(500))
    );
    // The shell may also report its `sleep` child as "Terminated".
    assert!(
        outcome.output().starts_with("ready\n"),
        "{}",
        outcome.output()
    );
    assert!(
        outcome.output().ends_with("got TERM\n"),
        "{}",
        outcome.output()
    );
    assert!(
        outcome
            .to_model_text()
            .starts_with("Error: command exceeded 0.5s and was killed.\nready\n")
    );
}

#[test]
fn a_command_ignoring_sigterm_is_killed_after_the_grace_period() {
    let outcome = run(
        &["sh", "-c", "trap '' TERM; echo ready; sleep 100"],
        Duration::from_millis(300),
    );
    assert_eq!(
        outcome.status(),
        Status::TimedOut(Duration::from_millis(300))
    );
    assert_eq!(outcome.output(), "ready\n");
    // SIGKILL comes a grace period after SIGTERM, not at once.
    assert!(
        outcome.duration() >= Duration::from_millis(1300),
        "{:?}",
        outcome.duration()
    );
    assert!(outcome.duration() < NO_HANG, "{:?}", outcome.duration());
}

#[test]
fn the_spec_truncation_cuts_the_middle() {
    let (_dir, options) = scratch(SHORT);
    let runner = Runner::new().output_limit(4000);
    let outcome = runner
        .run(&["python3", "-c", "print('x' * 10000)"], &options)
        .expect("runs");
    assert!(outcome.output().len() < 4500, "{}", outcome.output().len());
    assert!(outcome.output().contains("truncated"));
    assert!(outcome.is_truncated());
    assert_eq!(outcome.total_bytes(), 10_001);
    assert!(
        outcome
            .output()
            .contains("[… 6001 bytes, 0 lines truncated …]\n"),
        "{}",
        outcome.output()
    );
}

#[test]
fn head_and_tail_of_a_100_mb_flood_are_kept_with_exact_totals() {
    let script = "echo START; yes 012345678 | head -n 10000000; echo END";
    let outcome = run(&["sh", "-c", script], Duration::from_secs(60));
    assert!(outcome.is_success(), "{:?}", outcome.status());
    assert_eq!(outcome.total_bytes(), 6 + 100_000_000 + 4);
    assert_eq!(outcome.total_lines(), 10_000_002);
    assert!(outcome.is_truncated());
    let output = outcome.output();
    assert!(
        output.starts_with("START\n012345678\n012345678\n"),
        "{}",
        &output[..64]
    );
    assert!(
        output.ends_with("012345678\n012345678\nEND\n"),
        "{}",
        &output[output.len() - 64..]
    );
    // 4 KiB of head and 4 KiB of tail, cut between lines.
    let cut = 100_000_010 - 8192;
    let lines = 10_000_002 - output.matches('\n').count() as u64 + 1;
    let marker = format!("\n[… {cut} bytes, {lines} lines truncated …]\n");
    assert!(output.contains(&marker), "{marker} not in the output");
    assert_eq!(output.len(), 8192 + marker.len() - 1);
}

#[test]
fn a_zero_limit_shows_only_the_marker() {
    let (_dir, options) = scratch(SHORT);
    let runner = Runner::new().output_limit(0);
    let outcome = runner.run(&["echo", "abc"], &options).expect("runs");
    assert_eq!(outcome.output(), "[… 4 bytes, 1 lines truncated …]\n");
}

#[test]
fn a_multibyte_character_at_the_cut_is_not_split() {
    let (_dir, options) = scratch(SHORT);
    // Limit 8: the head's 4 bytes end inside the first `€`, the tail's 4
    // bytes start inside the last one.
    let script = "import sys; sys.stdout.write('abc€' + '-' * 20 + '€xyz')";
    let outcome = Runner::new()
        .output_limit(8)
        .run(&["python3", "-c", script], &options)
        .expect("runs");
    assert_eq!(
        outcome.output(),
        "abc\n[… 26 bytes, 0 lines truncated …]\nxyz"
    );
    assert!(!outcome.output().contains('\u{fffd}'));
}

#[test]
fn ansi_escapes_are_stripped() {
    let outcome = run(
        &[
            "printf",
            "\\033[1;31merror\\033[0m: \\033]0;title\\007bad\\n",
        ],
        SHORT,
    );
    assert_eq!(outcome.output(), "error: bad\n");
    assert_eq!(outcome.total_bytes(), 11);
}

#[test]
fn invalid_utf8_is_replaced() {
    let outcome = run(&["printf", "a\\377b\\n"], SHORT);
    assert_eq!(outcome.output(), "a\u{fffd}b\n");
}

#[test]
fn the_environment_is_scrubbed() {
    let (_dir, options) = scratch(SHORT);
    let path = std::env::var_os("PATH").expect("PATH");
    let runner = Runner::new().parent_env([
        ("PATH", path.to_str().expect("utf-8")),
        ("HOME", "/home/someone"),
        ("LC_ALL", "C"),
        ("EDITOR", "vi"),
        ("GITHUB_TOKEN", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
        ("OPENAI_API_KEY", "sk-abcdefghijklmnopqrstuvwx"),
        ("DB_PASSWORD", "hunter2hunter2"),
        ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG"),
        ("GOOGLE_APPLICATION_CREDENTIALS", "/secret/creds.json"),
        ("LC_API_KEY", "sneaky-value"),
    ]);
    let outcome = runner.run(&["env"], &options).expect("runs");
    let names: Vec<&str> = outcome
        .output()
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(n, _)| n)
        .collect();
    for name in &names {
        assert!(
            !is_secret_name(name),
            "{name} reached the command: {}",
            outcome.output()
        );
    }
    for expected in ["PATH", "HOME", "LC_ALL"] {
        assert!(names.contains(&expected), "{expected} missing: {names:?}");
    }
    assert!(!names.contains(&"EDITOR"));
    assert!(
        names
            .iter()
            .any(|name| name.starts_with("HARNESS_EXEC_RUN_")),
        "{names:?}"
    );

    // Named explicitly, a secret passes, and its value is still redacted.
    let runner = runner.env(
        EnvPolicy::scrubbed()
            .pass("GITHUB_TOKEN")
            .set("NO_COLOR", "1"),
    );
    let outcome = runner.run(&["env"], &options).expect("runs");
    assert!(
        harness_exec::plain_markers(outcome.output())
            .contains(&format!("GITHUB_TOKEN={REDACTED}\n")),
        "{}",
        outcome.output()
    );
    assert!(
        outcome.output().contains("NO_COLOR=1\n"),
        "{}",
        outcome.output()
    );
}

#[test]
fn the_real_environment_is_scrubbed_too() {
    let outcome = run(&["env"], SHORT);
    for line in outcome.output().lines() {
        let name = line.split_once('=').map_or(line, |(name, _)| name);
        assert!(!is_secret_name(name), "{name} reached the command");
    }
}

#[test]
fn output_is_redacted() {
    let (_dir, options) = scratch(SHORT);
    let runner = Runner::new().parent_env([
        ("PATH", std::env::var_os("PATH").expect("PATH")),
        ("OLLAMA_API_KEY", "literal-secret-123".into()),
    ]);
    let script = "echo literal-secret-123 AKIAIOSFODNN7EXAMPLE PASSWORD=hunter2 ok";
    let outcome = runner.run(&["sh", "-c", script], &options).expect("runs");
    assert_eq!(
        harness_exec::plain_markers(outcome.output()),
        "[REDACTED] [REDACTED] PASSWORD=[REDACTED] ok\n"
    );
}

#[test]
fn url_passwords_in_output_are_redacted() {
    let (dir, options) = scratch(SHORT);
    std::fs::write(
        dir.path().join(".env"),
        "DATABASE_URL=postgres://app:pw@host/db\nREDIS=redis://:p@ss:w0rd@cache:6379\nmail me@example.com\n",
    )
    .expect("write");
    let outcome = Runner::new().run(&["cat", ".env"], &options).expect("runs");
    assert_eq!(
        harness_exec::plain_markers(outcome.output()),
        "DATABASE_URL=postgres://app:[REDACTED]@host/db\nREDIS=redis://:[REDACTED]@cache:6379\nmail me@example.com\n"
    );
}

#[test]
fn head_and_tail_are_redacted_separately() {
    let (_dir, options) = scratch(SHORT);
    let script = "echo 'token=abcdef123456'; head -c 100000 /dev/zero | tr '\\0' '-'; echo; echo 'ghp_16C7e42F292c6912E7710c838347Ae178B4a'";
    let outcome = Runner::new()
        .output_limit(128)
        .run(&["sh", "-c", script], &options)
        .expect("runs");
    assert!(
        harness_exec::plain_markers(outcome.output()).starts_with("token=[REDACTED]\n"),
        "{}",
        outcome.output()
    );
    assert!(
        harness_exec::plain_markers(outcome.output()).ends_with("-\n[REDACTED]\n"),
        "{}",
        outcome.output()
    );
    assert!(
        outcome.output().contains(" lines truncated …]\n"),
        "{}",
        outcome.output()
    );
}

#[test]
fn a_custom_redactor_replaces_the_default() {
    let (_dir, options) = scratch(SHORT);
    let runner =
        Runner::new().redactor(harness_exec::Redactor::new().with_secret("project-codename"));
    let outcome = runner
        .run(&["echo", "project-codename"], &options)
        .expect("runs");
    assert_eq!(
        harness_exec::plain_markers(outcome.output()),
        "[REDACTED]\n"
    );
}

#[test]
fn a_runner_sharing_markers_gives_out_markers_the_other_redactor_puts_back() {
    let (_dir, options) = scratch(SHORT);
    let toolbox = harness_exec::Redactor::new();
    let runner = Runner::new().share_markers(&toolbox);
    let outcome = runner
        .run(&["echo", "token = \"k8Jd9s7Fq2LmZx4Vb1Nc\""], &options)
        .expect("runs");
    assert!(
        !outcome.output().contains("k8Jd9s7Fq2LmZx4Vb1Nc"),
        "{}",
        outcome.output()
    );
    // The file tools' redactor writes the value back where the command's output had its
    // marker: the two share one set of markers.
    let restored = toolbox.restore(outcome.output());
    assert_eq!(restored.text, "token = \"k8Jd9s7Fq2LmZx4Vb1Nc\"\n");
    assert!(restored.unknown.is_empty());
}

#[test]
fn core_dumps_are_always_off() {
    let outcome = run(&["sh", "-c", "ulimit -c; ulimit -Hc"], SHORT);
    assert_eq!(outcome.output(), "0\n0\n");
}

#[test]
fn the_file_size_limit_stops_a_large_write() {
    let (dir, options) = scratch(SHORT);
    let runner = Runner::new().limits(Limits::new().max_file_size(4096));
    let outcome = runner
        .run(
            &["sh", "-c", "head -c 10000 /dev/zero > big; echo $?"],
            &options,
        )
        .expect("runs");
    assert_ne!(outcome.output(), "0\n");
    assert_eq!(
        fs::metadata(dir.path().join("big")).expect("written").len(),
        4096
    );
}

/// The "Max processes" line of a `/proc/<pid>/limits` text.
fn max_processes(limits: &str) -> String {
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max processes"))
        .expect("listed");
    line.split_whitespace()
        .nth(2)
        .expect("soft limit")
        .to_owned()
}

#[test]
fn the_process_limit_applies_when_not_root() {
    let (_dir, options) = scratch(SHORT);
    let runner = Runner::new().limits(Limits::new().max_processes(4242));
    let outcome = runner
        .run(&["cat", "/proc/self/limits"], &options)
        .expect("runs");
    let ours = fs::read_to_string("/proc/self/limits").expect("limits");
    let expected = if rustix::process::geteuid().is_root() {
        max_processes(&ours)
    } else {
        "4242".to_owned()
    };
    assert_eq!(max_processes(outcome.output()), expected);
}

/// Interrupts once a command is running (at most 10 s from now).
fn interrupt_when_running(interrupter: &harness_exec::Interrupter) {
    for _ in 0..500 {
        if interrupter.interrupt() > 0 {
            return;
        }
        thread::sleep(Duration::from_millis(20));
    }
    panic!("no command started within 10 s");
}

#[test]
fn an_interrupt_reaches_the_command() {
    let (dir, options) = scratch(Duration::from_secs(30));
    let runner = Runner::new();
    let interrupter = runner.interrupter();
    // `ready` appears once the trap is set.
    let script = "trap 'echo got INT; exit 130' INT; touch ready; while :; do sleep 0.05; done";
    let running = thread::spawn(move || runner.run(&["sh", "-c", script], &options).expect("runs"));
    for _ in 0..500 {
        if dir.path().join("ready").exists() {
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    interrupt_when_running(&interrupter);
    let outcome = running.join().expect("no panic");
    assert_eq!(outcome.status(), Status::Interrupted);
    // The command had the grace period to handle SIGINT its own way.
    assert_eq!(outcome.output(), "got INT\n");
    assert_eq!(
        outcome.to_model_text().lines().next(),
        Some("Error: command was interrupted by the user.")
    );
    assert!(outcome.duration() < NO_HANG, "{:?}", outcome.duration());
}

#[test]
fn a_command_ignoring_the_interrupt_is_ended_anyway() {
    let (_dir, options) = scratch(Duration::from_secs(30));
    let runner = Runner::new();
    let interrupter = runner.interrupter();
    let running = thread::spawn(move || {
        runner
            .run(&["sh", "-c", "trap '' INT; sleep 100"], &options)
            .expect("runs")
    });
    interrupt_when_running(&interrupter);
    let outcome = running.join().expect("no panic");
    assert_eq!(outcome.status(), Status::Interrupted);
    // SIGTERM comes a grace period after SIGINT, not at once.
    assert!(
        outcome.duration() >= Duration::from_secs(1),
        "{:?}",
        outcome.duration()
    );
    assert!(outcome.duration() < NO_HANG, "{:?}", outcome.duration());
    assert_eq!(
        interrupter.interrupt(),
        0,
        "the finished command is no longer registered"
    );
}

/// True if process `pid` is running (neither gone nor a zombie).
fn is_alive(pid: &str) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'))
}

#[test]
fn kill_ends_every_command_with_all_its_processes_before_it_returns() {
    let (dir, options) = scratch(Duration::from_secs(60));
    let runner = Runner::new();
    let interrupter = runner.interrupter();
    // Deaf to every signal that can be ignored, with a child of its own that is deaf too.
    let script = "trap '' INT TERM HUP; (trap '' INT TERM HUP; sleep 100) & echo $! > child; \
                  touch ready; sleep 100";
    let running = thread::spawn(move || runner.run(&["sh", "-c", script], &options));
    for _ in 0..500 {
        if dir.path().join("ready").exists() {
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    let child = fs::read_to_string(dir.path().join("child")).expect("the child's pid");
    let child = child.trim();
    assert!(is_alive(child), "the child runs before the kill");
    assert_eq!(interrupter.kill(), 1);
    assert!(!is_alive(child), "the command's child outlived kill");
    let outcome = running.join().expect("no panic").expect("runs");
    assert_eq!(outcome.status(), Status::Interrupted);
    assert_eq!(interrupter.kill(), 0, "nothing is left to kill");
}

#[test]
fn an_interrupt_after_a_timeout_keeps_the_timeout() {
    let (_dir, options) = scratch(Duration::from_millis(200));
    let runner = Runner::new();
    let interrupter = runner.interrupter();
    let running =
        thread::spawn(move || runner.run(&["sh", "-c", "trap '' TERM INT; sleep 100"], &options));
    // The command ignores SIGTERM, so it is still there during the grace period.
    thread::sleep(Duration::from_millis(600));
    interrupter.interrupt();
    let outcome = running.join().expect("no panic").expect("runs");
    assert_eq!(
        outcome.status(),
        Status::TimedOut(Duration::from_millis(200))
    );
}

#[test]
fn one_runner_runs_commands_in_parallel() {
    let runner = Runner::new();
    let dir = tempfile::tempdir().expect("tempdir");
    thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let runner = &runner;
                let options = RunOptions::new(dir.path()).timeout(SHORT);
                scope.spawn(move || {
                    runner.run(&["sh", "-c", &format!("sleep 0.2; echo {i}")], &options)
                })
            })
            .collect();
        for (i, handle) in handles.into_iter().enumerate() {
            let outcome = handle.join().expect("no panic").expect("runs");
            assert_eq!(outcome.output(), format!("{i}\n"));
        }
    });
}
