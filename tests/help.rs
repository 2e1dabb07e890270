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

/// The subcommands `harness --help` lists, clap's own `help` aside.
fn subcommands(repo: &Repo) -> Vec<String> {
    let help = repo.harness(&["--help"]);
    help.assert_exit(0);
    let names: Vec<String> = help
        .stdout
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    for expected in ["run", "undo", "sandbox", "completions", "man"] {
        assert!(names.iter().any(|name| name == expected), "{names:?}");
    }
    names
}

#[test]
fn completions_for_every_shell_are_written_from_the_parser() {
    let repo = Repo::plain("calc");
    let names = subcommands(&repo);
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = repo.harness(&["completions", shell]);
        script.assert_exit(0);
        for name in &names {
            assert!(
                script.stdout.contains(name.as_str()),
                "the {shell} script lacks {name}"
            );
        }
    }
    let bash = repo.harness(&["completions", "bash"]);
    assert!(bash.stdout.contains("complete -F"), "{}", bash.stdout);
    // bash itself reads the script without a syntax error.
    let path = repo.outer.join("harness.bash");
    std::fs::write(&path, &bash.stdout).unwrap();
    let check = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .output()
        .expect("bash runs");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    // An unknown shell is a usage error that names the choices.
    repo.harness(&["completions", "tcsh"])
        .assert_exit(2)
        .assert_stderr_has(&["bash", "zsh", "fish"]);
}

#[test]
fn the_man_page_has_a_page_for_every_subcommand() {
    let repo = Repo::plain("calc");
    let names = subcommands(&repo);
    let man = repo.harness(&["man"]);
    man.assert_exit(0);
    assert!(man.stdout.contains(".TH harness 1"), "{}", man.stdout);
    for name in &names {
        assert!(
            man.stdout.contains(&format!(".TH harness\\-{name} 1"))
                || man.stdout.contains(&format!(".TH harness-{name} 1")),
            "no page for {name}"
        );
    }
    // The page of `run` documents its flags, from the same definitions as --help.
    assert!(
        man.stdout.contains("\\-\\-verify"),
        "no --verify in the page"
    );
}
