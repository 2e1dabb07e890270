//! What the harness protects and what it does not, said the same way everywhere: the one
//! statement every front end gives (`harness run` at the start and end of a run,
//! `harness mcp` on stderr and to its client), the command policy in a sentence, and the
//! whole account `harness sandbox explain` prints.

use harness_exec::Tier;
use harness_exec::corpus::{Expect, HOSTILE_COMMANDS};
use harness_ollama::{Limit, ReplyLimits};

/// Printed at the start and at the end of every run, and given to an MCP client.
pub const STATEMENT: &str = "Path confinement and a command policy stop accidents, not \
    an adversary: a model trying to escape, or following instructions injected through a file \
    it read, can get out through a command it is allowed to run. Use a container, VM or \
    separate user for untrusted input.";

/// What the active configuration does and does not protect, for `harness sandbox explain`:
/// the boundary statement, the table of what commands can do under `tier` (from the
/// hostile-command corpus the tests assert, on a kernel of Landlock ABI `abi`), what the
/// tier leaves open, and the guards of the harness itself. `shown_kib` is the most of one
/// reply's text the front end shows; `command` writes a `harness` command line the way the
/// user runs the harness (`command("sandbox doctor")`).
pub fn explain(
    policy: &str,
    tier: Tier,
    abi: u32,
    shown_kib: usize,
    command: impl Fn(&str) -> String,
) -> String {
    let mut text = format!(
        "{STATEMENT}\n\
         \n\
         What is active (isolation tier: {tier}):\n\
         \n\
         Commands under {tier}: each row is asserted under every tier by the test named on it.\n\
         \n"
    );
    for row in HOSTILE_COMMANDS {
        let result = result(row.expected(tier, abi), row.legitimate);
        text.push_str(&format!(
            "  {result:<8} {:<56} {}\n",
            row.what,
            row.test_name()
        ));
    }
    if tier == Tier::Landlock {
        text.push_str(
            "\n  (Landlock grants by hierarchy and cannot take a subtree back. So that commands\n\
             \x20  can make, rename and remove entries at the top of the workspace (touch\n\
             \x20  new.txt, rm old.txt, a first build's target/), the top is granted that, and\n\
             \x20  with it everything below: the rows marked repaired are done, then undone.\n\
             \x20  Before each command the harness records .git (all but its objects, each of\n\
             \x20  which it holds open), harness.toml and the git directories of repositories\n\
             \x20  in the workspace; once every process of the command is gone it puts back\n\
             \x20  what changed, makes again what was removed (rm -rf .git included), moves\n\
             \x20  aside what was added, and the command's result says so\n\
             \x20  (harness-exec::what_a_command_writes_in_git_or_harness_toml_is_refused_or_put_back_and_said,\n\
             \x20  harness-exec::a_git_file_replaced_with_a_directory_is_put_back,\n\
             \x20  harness-cli::ordinary_work_at_the_top_is_done_undone_and_redone_exactly_under_both_tiers).\n\
             \x20  A hidden file's content stays unreadable, and a name a command gives it\n\
             \x20  (ln, mv) is removed or renamed back after the command\n\
             \x20  (harness-exec::a_hidden_file_cannot_be_given_a_readable_name).)\n",
        );
    }
    text.push_str(&format!("\nLeft open under {tier}:\n\n"));
    for line in open(tier, abi, command) {
        text.push_str(&format!("  NOT      {line}\n"));
    }
    text.push_str(&format!(
        "\nWhat the harness itself guards, under every tier:\n\
         \n\
         \x20 protected  path confinement: every path a tool takes is resolved inside the\n\
         \x20            workspace, one name at a time from an open handle, so `..`, absolute\n\
         \x20            paths, symbolic links out and sibling-prefix tricks are refused\n\
         \x20            (harness-sandbox::nothing_resolved_or_opened_lies_outside_the_root)\n\
         \x20 protected  secrets and git: .env, .env.*, *.pem, *.key and SSH keys cannot be read;\n\
         \x20            .git/ and harness.toml cannot be written by the file tools\n\
         \x20            (harness-sandbox::secrets_are_neither_read_nor_written,\n\
         \x20            harness-sandbox::git_internals_are_readable_but_not_writable)\n\
         \x20 protected  commands run as an argv, never through a shell, with stdin closed, a\n\
         \x20            timeout that kills the whole process tree, and output cut to a bound\n\
         \x20            (harness-exec::arguments_are_never_shell_code,\n\
         \x20            harness-exec::an_escapee_without_group_or_marker_is_killed_at_the_timeout)\n\
         \x20 protected  git's programs: the .git of each submodule and other repository in\n\
         \x20            the workspace is read-only to commands under bwrap, put back after\n\
         \x20            each command under Landlock, and\n\
         \x20            one made in its place, or anywhere in the workspace, is moved\n\
         \x20            aside, so no command plants a core.fsmonitor or hook for your git\n\
         \x20            to run; so are the hooks directory and monitor your git\n\
         \x20            configuration names (husky's .husky/_); the git the harness runs\n\
         \x20            itself runs no hook, monitor or filter driver, and never in a\n\
         \x20            submodule\n\
         \x20            (harness-cli::a_command_cannot_plant_a_program_for_git_to_run_in_a_submodule,\n\
         \x20            harness-cli::a_command_cannot_plant_a_hook_or_monitor_where_your_git_configuration_looks,\n\
         \x20            harness-cli::a_repository_a_command_makes_in_the_workspace_is_not_left_as_one,\n\
         \x20            harness-undo::no_program_a_submodule_s_configuration_names_is_run,\n\
         \x20            harness-undo::no_program_the_repository_s_configuration_names_is_run)\n\
         \x20 protected  the programs the harness runs itself: bwrap and git come only from\n\
         \x20            absolute PATH directories commands cannot write (not the workspace, nor\n\
         \x20            a --writable path for bwrap), so a command cannot plant one there\n\
         \x20            (harness-cli::a_bwrap_or_git_a_command_writes_where_path_looks_is_never_run_by_the_harness,\n\
         \x20            harness-exec::no_bwrap_from_the_workspace_a_writable_path_or_the_current_directory_is_run)\n\
         \x20 protected  your work: a dirty tree is refused (or snapshotted with --allow-dirty),\n\
         \x20            every step is a checkpoint, each also copied to a store outside the\n\
         \x20            workspace ($XDG_STATE_HOME/harness), so `harness undo` restores the\n\
         \x20            pre-run files even after a command deleted the run's refs or .git (a\n\
         \x20            deleted .git loses the index and history); refs a command removes are\n\
         \x20            put back after it, and access it takes with chmod (to the workspace,\n\
         \x20            .git or the store) is given back; ignored files the file tools write\n\
         \x20            are saved first; files over 64 MiB a command writes are left out\n\
         \x20            and named (harness-undo::undo_restores_the_user_and_redo_the_agent_exactly,\n\
         \x20            harness-undo::undo_after_rm_rf_git_restores_the_working_tree_from_the_store,\n\
         \x20            harness-cli::a_model_that_prunes_the_runs_refs_or_removes_git_cannot_take_the_users_edit,\n\
         \x20            harness-undo::a_store_made_unreadable_is_given_back_and_the_run_still_undone,\n\
         \x20            harness-cli::a_file_too_large_to_record_is_named_and_never_read_whole)\n\
         \x20 protected  what git ignores: caches, virtual environments, node_modules/.bin\n\
         \x20            a command writes are listed in the summary and diff --stat, removed\n\
         \x20            or restored by undo, and put back before every verification, so a\n\
         \x20            planted .pyc or interpreter cannot make a check pass; their content\n\
         \x20            is saved at the start up to 4 MiB a file, 64 MiB and 20,000 files;\n\
         \x20            one beyond that which a command changes is named, and a check that\n\
         \x20            passes with it in place is not counted as verified; one changed\n\
         \x20            after the run finished (its change time says so) is yours: undo and\n\
         \x20            redo leave it, naming it if it was there before\n\
         \x20            (harness-cli::issue_45_planted_bytecode_is_listed_undone_and_cannot_make_a_check_pass,\n\
         \x20            harness-undo::issue_45_a_planted_bytecode_cache_is_shown_removed_before_a_check_and_undone,\n\
         \x20            harness-undo::a_hard_link_or_a_symlinked_directory_is_never_written_through,\n\
         \x20            harness-undo::undo_leaves_ignored_files_the_user_made_or_changed_after_the_run_and_names_the_changed)\n\
         \x20 protected  the verification: a pass counts only if what it loads besides the\n\
         \x20            code is as before the run (tests by each runner's discovery rules,\n\
         \x20            snapshots, golden files, fixtures, runner configuration, and what the\n\
         \x20            runner loads its own code from: a module shadowing the standard\n\
         \x20            library or the runner, sitecustomize, .pth, node_modules, Cargo's\n\
         \x20            runner); otherwise the outcome is \"tests changed\", naming them;\n\
         \x20            --allow-test-edits lets tests change, never the runner\n\
         \x20            (harness-cli::issue_45_a_weakened_tests_py_is_refused_by_the_tools_and_not_verified_after_a_command,\n\
         \x20            harness-cli::issue_45_a_unittest_package_that_exits_0_is_not_verified_written_or_made,\n\
         \x20            harness-cli::issue_45_with_allow_test_edits_tests_may_change_but_the_runner_may_not)\n\
         \x20 protected  the run's own records: what the harness hides (deny rules, .env,\n\
         \x20            keys) is recorded in the store only, never in the workspace's .git,\n\
         \x20            whose refs point to copies without it (git show, cat-file, log -p\n\
         \x20            find nothing), and undo still brings it back byte for byte; the\n\
         \x20            stores, runs and transcripts are yours alone (0700, files 0600), a\n\
         \x20            wider one made private when found; a run in progress (a live run or\n\
         \x20            mcp session holds a lock) is never pruned or removed\n\
         \x20            (harness-undo::issue_45_no_hidden_content_reaches_the_workspaces_objects_and_undo_is_still_exact,\n\
         \x20            harness-cli::issue_45_with_allow_dirty_no_command_reads_a_hidden_file_from_the_runs_records,\n\
         \x20            harness-cli::issue_45_stores_runs_and_transcripts_are_private_whatever_the_umask,\n\
         \x20            harness-cli::issue_45_prune_keeps_a_run_another_process_has_in_progress)\n\
         \x20 protected  memory, from a broken or hostile model server: one reply holds at most\n\
         \x20            {text}, {arguments},\n\
         \x20            {calls}, {line} and {body}; past any of these\n\
         \x20            the run ends with exit 3 naming the limit, and the terminal shows at\n\
         \x20            most {shown} KiB of one reply's text\n\
         \x20            (harness-ollama::endless_text_stops_at_the_text_limit_for_both_apis,\n\
         \x20            harness-ollama::endless_tool_call_arguments_stop_at_the_arguments_limit_for_both_apis,\n\
         \x20            harness-ollama::endless_tool_calls_stop_at_the_call_limit_for_both_apis,\n\
         \x20            harness-ollama::a_line_without_end_stops_at_the_line_limit_for_both_apis,\n\
         \x20            harness-cli::an_endless_reply_ends_the_run_with_exit_3_and_prints_a_bounded_part_of_it)\n\
         \x20 seatbelt   the undo store: with no kernel tier a command runs as you and can\n\
         \x20            reach the store too, or forge objects in .git that are read before the\n\
         \x20            store's\n\
         \x20 seatbelt   the command policy: {policy}. It matches the\n\
         \x20            program and its arguments; an allowed interpreter (python3, sh, node)\n\
         \x20            can still do anything the tier above lets it\n\
         \x20 seatbelt   secrets are redacted from what the model and the transcript see, by\n\
         \x20            a table of credential shapes and by name and value together, as\n\
         \x20            [REDACTED:<rule>:<n>]; an unusual secret can get through. The\n\
         \x20            file tools write a marker back as its value (held in memory only,\n\
         \x20            never on disk), refuse an unknown one where the file held a secret,\n\
         \x20            and refuse a command that holds a marker\n\
         \x20 NOT        prompt injection: the model is told that tool results are data, not\n\
         \x20            instructions, and nothing it reads changes the workspace or the policy,\n\
         \x20            but no prompt makes a model immune\n",
        text = Limit::Text(ReplyLimits::DEFAULT_TEXT_BYTES),
        arguments = Limit::Arguments(ReplyLimits::DEFAULT_ARGUMENTS_BYTES),
        calls = Limit::ToolCalls(ReplyLimits::DEFAULT_TOOL_CALLS),
        line = Limit::Line(ReplyLimits::DEFAULT_LINE_BYTES),
        body = Limit::Body(ReplyLimits::DEFAULT_BODY_BYTES),
        shown = shown_kib,
    ));
    text
}

/// The corpus as docs/security.md's markdown table: one row per command, its result under
/// each tier (Landlock at the ABI that blocks most, with the ABI a row needs), and its test.
/// A test checks that docs/security.md holds it as it is.
#[cfg(test)]
fn corpus_markdown() -> String {
    let mut text =
        String::from("| command | none | landlock | bwrap | test |\n|---|---|---|---|---|\n");
    for row in HOSTILE_COMMANDS {
        let landlock = match (row.landlock, row.landlock_abi) {
            (Expect::Blocked, abi) if abi > 1 => {
                format!("{} (ABI {abi}+)", result(Expect::Blocked, row.legitimate))
            }
            (expected, _) => result(expected, row.legitimate).to_owned(),
        };
        text.push_str(&format!(
            "| {} | {} | {landlock} | {} | `{}` |\n",
            row.what.replace('|', "\\|"),
            result(row.none, row.legitimate),
            result(row.bwrap, row.legitimate),
            row.test_name()
        ));
    }
    text
}

/// A row's result as the table says it: for legitimate work, whether it works.
fn result(expected: Expect, legitimate: bool) -> &'static str {
    match (expected, legitimate) {
        (Expect::Allowed, true) => "works",
        (Expect::Blocked, true) => "fails",
        (Expect::Allowed, false) => "allowed",
        (Expect::Blocked, false) => "blocked",
        (Expect::Repaired, true) => "works",
        (Expect::Repaired, false) => "repaired",
    }
}

/// What `tier` does not cover, on a kernel of Landlock ABI `abi`; `command` as
/// [`explain`] takes it.
pub fn open(tier: Tier, abi: u32, command: impl Fn(&str) -> String) -> Vec<String> {
    let mut lines: Vec<String> = match tier {
        Tier::None => vec![
            format!(
                "kernel isolation: commands run as you, with your files, network, processes \
                 and credentials (choose --sandbox bwrap or landlock; `{}`)",
                command("sandbox doctor")
            ),
            "the way back: a command can delete the undo store ($XDG_STATE_HOME/harness) or \
             .git, and a run's work can then no longer be undone"
                .into(),
            "a harness killed with SIGKILL together with its reaper (kill -9 of its process \
             group) leaves its running command to run on"
                .into(),
        ],
        Tier::Bwrap => vec![
            "reads: commands can read every file you can outside the hidden secret locations \
             and deny rules (other projects, /etc)"
                .into(),
            "--network shares the host's network: with it, commands reach everything you can"
                .into(),
        ],
        Tier::Landlock => {
            let mut lines = vec![
                "--network lets commands reach everything you can through every kind of \
                 socket (Landlock's network rules cover TCP only)"
                    .to_owned(),
                "reads: commands can read every file you can outside the hidden secret \
                 locations and deny rules (other projects, /etc)"
                    .to_owned(),
                "the modes, times and extended attributes of your files outside the \
                 workspace (Landlock does not cover them): a command can chmod, touch or \
                 setfattr any file your user owns (harness-exec::chmod_home_file), and, \
                 when the harness runs as root, any file root owns (chmod 666 /etc/shadow); \
                 only setuid and setgid bits are refused (harness-exec::setuid_program). \
                 Use bwrap where it works"
                    .to_owned(),
                "the scheduling of your other processes: a command can lower their priority \
                 or pin them to a CPU (setpriority, sched_setscheduler, sched_setaffinity), \
                 the harness's included (it cannot trace them or set their resource limits)"
                    .to_owned(),
                "a harness killed with SIGKILL together with its reaper (kill -9 of its \
                 process group) leaves its running command to run on (Ctrl-C, SIGTERM and \
                 every other ending signal it can catch kill it first; the reaper, what a \
                 harness killed alone left)"
                    .to_owned(),
            ];
            lines.push(
                "what a command does in .git, harness.toml or another repository's .git \
                 while it runs: put back after it, not refused, so a git the command runs \
                 itself reads it meanwhile; a file of .git/objects rewritten in place (made \
                 writable with chmod first) is said, not undone; past 20,000 entries or 64 MiB \
                 of .git besides its objects, or 10,000 object files, changes there are said \
                 to be out of reach, not put back"
                    .to_owned(),
            );
            lines.push(
                "when the workspace hides a path (.env), a file a command makes at the top, \
                 or in a directory holding a hidden path, is readable from the next command \
                 on, not by the one that made it: a first build there fails once \
                 (harness-exec::ordinary_work_at_the_top_of_the_workspace_works_and_a_hidden_file_stays_unreadable)"
                    .to_owned(),
            );
            if abi < 6 {
                lines.push(format!(
                    "signals to processes outside: this kernel's Landlock ABI {abi} cannot \
                     scope them (6+ needed)"
                ));
            }
            lines
        }
    };
    if tier != Tier::None {
        lines.push(
            "the workspace's secrets (.env, *.pem, *.key, the deny globs) are hidden from \
             commands as they are when the run starts, under every other name (hard link) they \
             have in the workspace too; one created during the run is kept from the file tools \
             only, and what git has recorded of one (committed or staged) stays readable \
             through git (git show HEAD:.env)"
                .into(),
        );
        lines.push(
            "the kernel itself: a kernel exploit gets past any tier (commands give up every \
             capability, even when the harness runs as root); memory, CPU and disk use are \
             not bounded"
                .into(),
        );
    }
    lines
}

/// How the command policy of a run reads in a sentence.
pub fn policy(allowlist: &[String]) -> String {
    if allowlist.is_empty() {
        "a blocklist of accidents (sudo, su, rm -rf /, mkfs, dd, shutdown, ...)".to_owned()
    } else {
        format!("an allowlist: only {} may run", allowlist.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command lines of a harness run as `harness`, and what `harness` shows of a reply.
    fn command(rest: &str) -> String {
        format!("harness {rest}")
    }
    const SHOWN_KIB: usize = 64;

    #[test]
    fn the_explanation_says_what_is_not_protected() {
        let text = explain(&policy(&[]), Tier::None, 7, SHOWN_KIB, command);
        assert!(text.starts_with(STATEMENT));
        assert!(text.contains("isolation tier: none"));
        assert!(text.contains("NOT      kernel isolation"));
        assert!(text.contains("blocklist of accidents"));
        let allow = explain(
            &policy(&["python3".to_owned(), "git".to_owned()]),
            Tier::None,
            7,
            SHOWN_KIB,
            command,
        );
        assert!(allow.contains("an allowlist: only python3, git may run"));
        assert!(text.contains("a store outside the\n"), "{text}");
        assert!(
            text.contains("can\n             reach the store too"),
            "{text}"
        );
    }

    #[test]
    fn every_row_of_the_corpus_is_in_the_table_with_its_test_and_tier_result() {
        let text = explain(&policy(&[]), Tier::Landlock, 7, SHOWN_KIB, command);
        for row in HOSTILE_COMMANDS {
            let line = text
                .lines()
                .find(|line| line.contains(row.what) && line.ends_with(&row.test_name()))
                .unwrap_or_else(|| panic!("no line for {}", row.id));
            let expected = result(row.expected(Tier::Landlock, 7), row.legitimate);
            assert!(line.trim_start().starts_with(expected), "{line}");
        }
        let none = explain(&policy(&[]), Tier::None, 7, SHOWN_KIB, command);
        assert!(none.contains("allowed  rm -rf .git"));
        assert!(text.contains("repaired rm -rf .git"));
        assert!(text.contains("works    create a new entry at the top"));
        assert!(none.contains("works    create a new entry at the top"));
    }

    #[test]
    fn the_readme_holds_the_corpus_table_as_generated() {
        // The name is older than docs/: the table moved from the README to the security
        // model, and the claims name this test.
        let docs = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/security.md"
        ))
        .expect("docs/security.md");
        let table = corpus_markdown();
        assert!(
            docs.contains(&table),
            "docs/security.md's isolation table differs from the corpus; paste this:\n{table}"
        );
        assert!(table.contains("| rm -rf .git (the undo path) | allowed | repaired | blocked |"));
        assert!(table.contains(
            "| kill a process started outside the command | allowed | blocked (ABI 6+) | blocked |"
        ));
    }

    #[test]
    fn what_landlock_leaves_open_depends_on_the_kernels_abi() {
        // The socket filter refuses every network socket below ABI 4, so the
        // ABI matters for signals only.
        let old = open(Tier::Landlock, 3, command).join("\n");
        assert!(old.contains("ABI 3 cannot scope them"), "{old}");
        assert!(!old.contains("TCP:") && !old.contains("UDP"), "{old}");
        let new = open(Tier::Landlock, 7, command).join("\n");
        assert!(!new.contains("cannot scope"), "{new}");
        assert!(
            new.contains("--network lets commands reach everything"),
            "{new}"
        );
        assert!(
            open(Tier::Landlock, 5, command)
                .join("\n")
                .contains("ABI 5 cannot scope")
        );
        assert!(
            !open(Tier::Bwrap, 0, command)
                .join("\n")
                .contains("kernel isolation: commands")
        );
    }
}
