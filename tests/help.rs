//! What `--help` promises: the exit statuses, and every flag of `harness run`.

use crate::support::Repo;

#[test]
fn help_documents_the_exit_statuses() {
    let repo = Repo::plain("calc");
    for args in [&["--help"][..], &["run", "--help"]] {
        let help = repo.harness(args);
        help.assert_exit(0);
        let text = help.stdout.replace('\n', " ");
        for status in [
            "0 verified",
            "1 not verified",
            "2 usage or configuration error",
            "3 model server problem",
            "130 interrupted",
        ] {
            // The top-level help aligns the numbers in a column; compare word by word.
            let words: Vec<&str> = text.split_whitespace().collect();
            let wanted: Vec<&str> = status.split_whitespace().collect();
            assert!(
                words.windows(wanted.len()).any(|window| window
                    .iter()
                    .map(|w| w.trim_end_matches([';', ':', ',', '.']))
                    .eq(wanted.iter().copied())),
                "`harness {}` lacks {status:?}\n{help}",
                args.join(" ")
            );
        }
    }
}

#[test]
fn run_help_lists_every_flag_and_where_settings_come_from() {
    let repo = Repo::plain("calc");
    repo.harness(&["run", "--help"])
        .assert_exit(0)
        .assert_stdout_has(&[
            "--workspace <DIR>",
            "--allow-dirty",
            "--init",
            "--verify <CMD>",
            "--model <M>",
            "--host <URL>",
            "--api <API>",
            "--max-steps <N>",
            "--timeout <S>",
            "--allow <PROGRAM>",
            "--json",
            "--verbose",
            "<TASK>",
            "harness.toml",
            "~/.config/harness/config.toml",
        ]);
}

#[test]
fn a_usage_error_exits_2() {
    let repo = Repo::plain("calc");
    repo.harness(&["run", "--no-such-flag", "t"])
        .assert_exit(2)
        .assert_stderr_has(&["--no-such-flag"]);
    repo.harness(&["run", "--max-steps", "0", "t"])
        .assert_exit(2)
        .assert_stderr_has(&["--max-steps"]);
}

#[test]
fn verbose_adds_tracing_logs_on_stderr() {
    let repo = Repo::from_fixture("calc");
    let url = harness_stub_server::closed_port_url().unwrap();
    let quiet = repo.harness(&["run", "--host", &url, "t"]);
    quiet.assert_exit(3);
    assert!(!quiet.stderr.contains("settings resolved"), "{quiet}");
    repo.harness(&["-v", "run", "--host", &url, "t"])
        .assert_exit(3)
        .assert_stderr_has(&["INFO", "settings resolved", "asking the model server"]);
}
