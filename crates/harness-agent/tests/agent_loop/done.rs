//! Done is the verification command's word: checks after a "done", a standing failure, the
//! model's own run of the check, a run that ends on its own, and what a pass must not change.

use super::*;

#[test]
fn without_a_verification_command_done_is_unverified() {
    let (_dir, toolbox) = workspace(&[]);
    let ran = run(&toolbox, vec![Reply::text("All fixed, trust me.")], None);
    assert_eq!(ran.report.outcome, Outcome::Unverified);
    assert_eq!(ran.report.verification, None);
    assert_eq!(ran.report.final_text, "All fixed, trust me.");
    assert!(ran.events_named("verification_started").is_empty());
}

#[test]
fn a_failed_verification_goes_back_to_the_model_which_then_fixes_it() {
    let (dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    let ran = run_with(
        &toolbox,
        FakeChat::new(vec![
            Reply::text("Done already."),
            Reply::call(
                "edit_file",
                json!({"path": "state.txt", "old_text": "bad", "new_text": "good"}),
            ),
            Reply::text("Fixed now."),
        ]),
        on_done_only(),
        Some("grep -c good state.txt"),
    );
    assert_eq!(
        ran.report.outcome,
        Outcome::Verified,
        "{}",
        ran.report.reason
    );
    assert_eq!(
        ran.report.reason,
        "`grep -c good state.txt` exited 0 (the check on done)"
    );
    let verification = ran.report.verification.clone().unwrap();
    assert_eq!((verification.runs, verification.passed), (2, true));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("state.txt")).unwrap(),
        "good\n"
    );

    // What the model saw after its first "done": the check's output as a tool result of a
    // call on its own message, then the harness's word that the task is not done.
    let second = ran.request(1);
    let done = &second[second.len() - 3];
    assert_eq!(done.role, Role::Assistant);
    assert_eq!(done.content, "Done already.");
    assert_eq!(done.tool_calls[0].name, "run_command");
    assert_eq!(
        done.tool_calls[0].arguments["argv"],
        json!(["grep", "-c", "good", "state.txt"])
    );
    let output = &second[second.len() - 2];
    assert_eq!(output.role, Role::Tool);
    assert_eq!(output.tool_call_id.as_deref(), Some("verification_1"));
    assert!(output.content.contains("exit=1\n0"), "{}", output.content);
    let told = &second[second.len() - 1];
    assert_eq!(told.role, Role::User);
    assert!(
        told.content.contains("The task is not done"),
        "{}",
        told.content
    );
    assert!(told.content.contains("check 1 of 3"), "{}", told.content);
    assert!(
        told.content.contains("no file has been changed yet"),
        "{}",
        told.content
    );
    assert!(
        told.content
            .contains("answering with the path of the file to fix on a line by itself"),
        "a model that described a change is shown how to write it, in the run's edit format \
         (auto: a code block): {}",
        told.content
    );

    let finished: Vec<bool> = ran
        .events_named("verification_finished")
        .iter()
        .map(|e| e["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(finished, [false, true]);
}

#[test]
fn a_verification_that_keeps_failing_ends_the_run_after_three_checks() {
    let (_dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    let done = || Reply::text("Done.");
    let write = |content: &str| {
        Reply::call(
            "write_file",
            json!({"path": "state.txt", "content": content, "overwrite": true}),
        )
    };
    // Each check follows a change: a "done" with nothing changed is not checked again.
    let ran = run_with(
        &toolbox,
        FakeChat::new(vec![
            done(),
            write("worse\n"),
            done(),
            write("still bad\n"),
            done(),
            done(),
        ]),
        on_done_only(),
        Some("grep -q good state.txt"),
    );
    assert_eq!(ran.report.outcome, Outcome::VerificationFailed);
    let reason = &ran.report.reason;
    assert!(
        reason.starts_with("`grep -q good state.txt` failed 3 times (exit=1 "),
        "{reason}"
    );
    assert!(reason.ends_with("s the last time)"), "{reason}");
    assert_eq!(ran.report.verification.clone().unwrap().runs, 3);
    assert_eq!(ran.chat.remaining(), 1, "no fourth chance");
}

#[test]
fn a_done_with_nothing_changed_since_the_check_failed_is_not_checked_again() {
    let (dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    let done = || Reply::text("Done.");
    let ran = run(
        &toolbox,
        vec![
            done(),
            done(),
            Reply::call(
                "write_file",
                json!({"path": "state.txt", "content": "good\n", "overwrite": true}),
            ),
            done(),
        ],
        Some("grep -q good state.txt"),
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("state.txt")).unwrap(),
        "good\n"
    );
    let checks = ran.events_named("verification_started");
    assert_eq!(
        checks.len(),
        2,
        "one check after the first done, one after the write: {checks:?}"
    );
    let nudges: Vec<String> = ran
        .events_named("nudged")
        .iter()
        .map(|n| n["message"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(nudges.len(), 2, "{nudges:?}");
    assert!(nudges[0].contains("check 1 of 3"), "{}", nudges[0]);
    assert!(
        nudges[1].contains("`grep -q good state.txt` fails")
            && nudges[1].contains("no file has been changed yet")
            && nudges[1].contains("it was not run again, and this counts as check 2 of 3"),
        "{}",
        nudges[1]
    );
    // The model is told in the conversation itself, not only in the events.
    assert!(
        ran.request(2)
            .last()
            .unwrap()
            .content
            .contains("it was not run again")
    );
}

#[test]
fn the_head_start_s_failing_check_stands_until_a_file_changes() {
    let (_dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    let ran = run_with(
        &toolbox,
        FakeChat::new(vec![Reply::text("Done."); 4]),
        Budgets::default(),
        Some("grep -q good state.txt"),
    );
    assert_eq!(ran.report.outcome, Outcome::VerificationFailed);
    assert_eq!(
        ran.report.verification.clone().unwrap().runs,
        0,
        "the head start already ran it, and nothing changed"
    );
    assert!(
        ran.report
            .reason
            .contains("said it was done 3 times, 3 of them with nothing changed since it failed"),
        "{}",
        ran.report.reason
    );
    assert_eq!(ran.chat.remaining(), 1, "no fourth chance");
}

#[test]
fn the_model_s_own_run_of_the_check_decides_whether_its_failure_stands() {
    let (_dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    let check = || {
        Reply::call(
            "run_command",
            json!({"argv": ["grep", "-q", "good", "state.txt"]}),
        )
    };
    // Another command may change files: the failure no longer stands, and done is checked.
    let other = || Reply::call("run_command", json!({"argv": ["true"]}));
    let done = || Reply::text("Done.");
    let ran = run(
        &toolbox,
        vec![check(), done(), other(), done(), done()],
        Some("grep -q good state.txt"),
    );
    let checks = ran.events_named("verification_started");
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert_eq!(ran.chat.remaining(), 0);
    let nudges = ran.events_named("nudged");
    let told: Vec<&str> = nudges
        .iter()
        .map(|n| n["message"].as_str().unwrap())
        .collect();
    assert_eq!(told.len(), 2, "{told:?}");
    assert!(told[0].contains("it was not run again"), "{told:?}");
    assert!(told[1].contains("check 2 of 3"), "{told:?}");
    assert_eq!(ran.report.outcome, Outcome::VerificationFailed);
    assert!(
        ran.report.reason.contains("2 of them with nothing changed"),
        "{}",
        ran.report.reason
    );
}

#[test]
fn dones_on_a_standing_failure_share_the_checks_of_the_attempt() {
    let (_dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    let done = || Reply::text("Done.");
    let read = || Reply::call("read_file", json!({"path": "state.txt"}));
    // A check, then two dones with only a read between: three checks of three.
    let ran = run(
        &toolbox,
        vec![done(), done(), read(), done(), done()],
        Some("grep -q good state.txt"),
    );
    assert_eq!(ran.report.outcome, Outcome::VerificationFailed);
    assert_eq!(ran.report.verification.clone().unwrap().runs, 1);
    assert_eq!(ran.chat.remaining(), 1, "no fourth chance");
}

#[test]
fn a_verification_the_policy_refuses_fails_like_any_other() {
    let (_dir, toolbox) = workspace(&[]);
    let done = || Reply::text("Done.");
    let ran = run(&toolbox, vec![done(), done(), done()], Some("sudo true"));
    assert_eq!(ran.report.outcome, Outcome::VerificationFailed);
    let output = ran.tool_results(1).pop().unwrap();
    assert!(output.contains("command refused"), "{output}");
    assert_eq!(
        ran.report.verification.clone().unwrap().runs,
        1,
        "the refusal stands like any failure while nothing changes"
    );
}

/// An edit that makes `grep -q good state.txt` pass.
fn fix_state() -> Reply {
    Reply::call(
        "edit_file",
        json!({"path": "state.txt", "old_text": "bad", "new_text": "good"}),
    )
}

fn check_state() -> Reply {
    Reply::call(
        "run_command",
        json!({"argv": ["grep", "-q", "good", "state.txt"]}),
    )
}

fn checks(ran: &Ran) -> Vec<bool> {
    ran.events_named("verification_finished")
        .iter()
        .map(|event| event["passed"] == true)
        .collect()
}

#[test]
fn the_model_s_own_passing_run_of_the_verification_after_an_edit_ends_the_run_verified() {
    let (_dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    let looping = || Reply::call("read_file", json!({"path": "state.txt"}));
    let ran = run(
        &toolbox,
        vec![fix_state(), check_state(), looping(), looping()],
        Some("grep -q good state.txt"),
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    // The harness checked at once, after the model's own passing run: it was not asked again.
    assert_eq!(ran.chat.requests().len(), 2);
    assert_eq!(ran.chat.remaining(), 2);
    assert_eq!(checks(&ran), [true]);
}

#[test]
fn a_passing_run_of_another_command_or_before_any_edit_is_not_taken_for_done() {
    for replies in [
        // The check passes before the model changed anything (the file is already good):
        // the model may still be looking.
        vec![check_state(), Reply::text("Done.")],
        // After the edit, a command that is not the verification passed.
        vec![
            fix_state(),
            Reply::call(
                "run_command",
                json!({"argv": ["grep", "-q", "o", "state.txt"]}),
            ),
            Reply::text("Done."),
        ],
    ] {
        let (_dir, toolbox) = workspace(&[("state.txt", "good bad\n")]);
        let ran = run(&toolbox, replies, Some("grep -q good state.txt"));
        assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
        assert_eq!(ran.chat.remaining(), 0, "every reply was asked for");
        assert_eq!(checks(&ran), [true]);
    }
}

#[test]
fn a_run_that_ends_stuck_or_out_of_steps_after_an_edit_is_checked_once_on_what_was_left() {
    let same = || Reply::call("read_file", json!({"path": "state.txt"}));
    let (dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    let ran = run(
        &toolbox,
        vec![fix_state(), same(), same(), same(), same(), same()],
        Some("grep -q good state.txt"),
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert!(
        ran.report.reason.starts_with(
            "`grep -q good state.txt` exited 0 on the files as the model left them, after the \
             run ended: the model called read_file with the same arguments 5 times"
        ),
        "{}",
        ran.report.reason
    );
    assert_eq!(checks(&ran), [true]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("state.txt")).unwrap(),
        "good\n"
    );

    // Out of steps, with an edit that did not fix it: checked, and still out of steps.
    let (_dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    let wrong = Reply::call(
        "edit_file",
        json!({"path": "state.txt", "old_text": "bad", "new_text": "worse"}),
    );
    let budgets = Budgets {
        max_steps: 2,
        ..no_head_start()
    };
    let ran = run_with(
        &toolbox,
        FakeChat::new(vec![wrong, same(), same()]),
        budgets,
        Some("grep -q good state.txt"),
    );
    assert_eq!(ran.report.outcome, Outcome::StepLimit, "{:?}", ran.report);
    assert_eq!(checks(&ran), [false]);

    // Stuck without any edit: nothing the model did to check.
    let (_dir, toolbox) = workspace(&[("state.txt", "good\n")]);
    let ran = run(
        &toolbox,
        vec![same(), same(), same(), same(), same()],
        Some("grep -q good state.txt"),
    );
    assert_eq!(ran.report.outcome, Outcome::Stuck, "{:?}", ran.report);
    assert_eq!(checks(&ran), Vec::<bool>::new());
}

/// Checkpoints whose record of the run's changes is `changes`: a list, or a failure to make
/// one.
struct Changed(Result<Vec<harness_tools::Change>, String>);

impl Checkpoints for Changed {
    fn checkpoint(
        &mut self,
        _label: &str,
    ) -> Result<Option<u32>, Box<dyn std::error::Error + Send + Sync>> {
        Ok(None)
    }

    fn changes(
        &mut self,
    ) -> Result<Option<Vec<harness_tools::Change>>, Box<dyn std::error::Error + Send + Sync>> {
        self.0.clone().map(Some).map_err(Into::into)
    }
}

/// A run whose verification (`true`) passes, judged with `changes`.
fn judged_run(changes: Result<Vec<harness_tools::Change>, String>, attempts: u32) -> RunReport {
    let (_dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    let chat = Arc::new(FakeChat::new([
        Reply::text("Done."),
        Reply::text("Done."),
        Reply::text("Done."),
    ]));
    let inputs =
        harness_tools::VerificationInputs::new(harness_tools::TestCode::conventional(), &["true"]);
    Agent::new(chat, &toolbox)
        .budgets(Budgets {
            attempts,
            max_verifications: 1,
            ..no_head_start()
        })
        .verification(Verification::parse("true").expect("a valid command"))
        .verification_inputs(inputs, false)
        .run("fix add", &mut (), &mut Changed(changes))
}

#[test]
fn a_pass_whose_changes_cannot_be_listed_is_not_verified() {
    let report = judged_run(Err("the store is gone".to_owned()), 1);
    assert_eq!(report.outcome, Outcome::TestsChanged, "{report:?}");
    assert!(
        report.reason.contains("the store is gone"),
        "{}",
        report.reason
    );
    let verification = report.verification.expect("a verification report");
    assert!(!verification.passed);
    assert_eq!(verification.changed.len(), 1);
}

#[test]
fn a_pass_with_only_code_changed_is_verified_and_one_with_a_test_changed_is_not() {
    let code = harness_tools::Change::new(
        "calc.py".to_owned(),
        None,
        harness_tools::ChangeKind::Modified,
        String::new(),
    );
    let report = judged_run(Ok(vec![code.clone()]), 1);
    assert_eq!(report.outcome, Outcome::Verified, "{report:?}");
    let test = harness_tools::Change::new(
        "tests.py".to_owned(),
        None,
        harness_tools::ChangeKind::Modified,
        String::new(),
    );
    let report = judged_run(Ok(vec![code, test]), 1);
    assert_eq!(report.outcome, Outcome::TestsChanged, "{report:?}");
    assert!(
        report.reason.ends_with(": tests.py changed"),
        "{}",
        report.reason
    );
    // Another attempt may differ: the run tries again (and here cannot revert, so stops
    // with a warning saying so), rather than ending as if nothing could change.
    let test = harness_tools::Change::new(
        "tests.py".to_owned(),
        None,
        harness_tools::ChangeKind::Modified,
        String::new(),
    );
    let report = judged_run(Ok(vec![test]), 2);
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("no other attempt was made")),
        "{report:?}"
    );
}

/// Checkpoints that put back `put_back` before every check, as the undo session does with
/// what commands wrote where git does not look.
struct PuttingBack(Vec<String>);

impl Checkpoints for PuttingBack {
    fn checkpoint(
        &mut self,
        _label: &str,
    ) -> Result<Option<u32>, Box<dyn std::error::Error + Send + Sync>> {
        Ok(None)
    }

    fn before_verification(
        &mut self,
    ) -> Result<harness_agent::PutBack, Box<dyn std::error::Error + Send + Sync>> {
        Ok(harness_agent::PutBack {
            put_back: self.0.clone(),
            left: Vec::new(),
        })
    }
}

/// A check that fails after the harness put back what commands wrote where git does not
/// look tells the model and the user what was put back, so a missing install or build is
/// not a mystery; one with nothing put back says nothing of it.
#[test]
fn what_was_put_back_before_a_failed_check_is_said_to_the_model_and_the_user() {
    let run = |put_back: Vec<String>| {
        let (_dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
        let chat = Arc::new(FakeChat::new([Reply::text("Done."), Reply::text("Done.")]));
        let report = Agent::new(chat.clone(), &toolbox)
            .budgets(Budgets {
                attempts: 1,
                max_verifications: 2,
                ..no_head_start()
            })
            .verification(Verification::parse("grep -q good state.txt").expect("a command"))
            .run("fix it", &mut (), &mut PuttingBack(put_back));
        let told: Vec<String> = chat.requests()[1]
            .messages
            .iter()
            .map(|message| message.content.clone())
            .collect();
        (report, told.join("\n"))
    };
    let paths: Vec<String> = (1..=7).map(|n| format!(".venv/lib/m{n}.py")).collect();
    let (report, told) = run(paths);
    assert!(
        told.contains(
            "Before check 1, the harness put back 7 paths that commands wrote where git does \
             not look (.venv/lib/m1.py, .venv/lib/m2.py, .venv/lib/m3.py, .venv/lib/m4.py, \
             .venv/lib/m5.py and 2 more)"
        ),
        "{told}"
    );
    assert!(
        report
            .warnings
            .iter()
            .any(|warning| warning.starts_with("before check 1, the harness put back 7 paths")),
        "{:?}",
        report.warnings
    );

    let (report, told) = run(Vec::new());
    assert!(!told.contains("put back"), "{told}");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

/// The edit that fixes `state.txt` for `grep -q good state.txt`, and one that does not.
fn edit_state(to: &str) -> Reply {
    Reply::call(
        "edit_file",
        json!({"path": "state.txt", "old_text": "bad", "new_text": to}),
    )
}

#[test]
fn a_quick_check_runs_after_an_editing_step_and_its_pass_ends_the_run_without_another_turn() {
    let (_dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    // With the head start, whose run of the check measured it quick.
    let ran = run_with(
        &toolbox,
        FakeChat::new(vec![edit_state("good"), Reply::text("never asked")]),
        Budgets::default(),
        Some("grep -q good state.txt"),
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert_eq!(
        ran.report.reason,
        "`grep -q good state.txt` exited 0 (the check after step 1)"
    );
    assert_eq!(
        ran.chat.requests().len(),
        1,
        "the model was not asked again"
    );
    let started = ran.events_named("verification_started");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["reason"], "after_edit");
}

#[test]
fn a_failed_quick_check_goes_on_the_step_s_result_and_is_not_one_of_the_checks() {
    let (_dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    let budgets = Budgets {
        max_verifications: 1,
        ..Budgets::default()
    };
    let ran = run_with(
        &toolbox,
        FakeChat::new(vec![
            edit_state("worse"),
            Reply::call(
                "edit_file",
                json!({"path": "state.txt", "old_text": "worse", "new_text": "good"}),
            ),
        ]),
        budgets,
        Some("grep -c good state.txt"),
    );
    // One check allowed per attempt, and the failed quick one did not use it.
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert_eq!(
        ran.report.reason,
        "`grep -c good state.txt` exited 0 (the check after step 2)"
    );
    assert_eq!(ran.report.verification.clone().unwrap().runs, 2);
    // The second request ends with the edit's result, the check's output on it: no turn of
    // its own, no message of the harness's after it.
    let second = ran.request(1);
    let last = second.last().unwrap();
    assert_eq!(last.role, Role::Tool, "{last:?}");
    assert!(last.content.contains("+worse"), "{}", last.content);
    assert!(
        last.content
            .contains("The harness ran `grep -c good state.txt` after this step (exit=1 ")
            && last
                .content
                .contains("the task is not done yet:\n[result of run_command"),
        "{}",
        last.content
    );
    assert!(
        last.content.ends_with("exit=1\n0\n[end of result]"),
        "{}",
        last.content
    );
}

#[test]
fn a_slow_check_and_a_quick_check_turned_off_wait_for_done() {
    let (dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    let replies = || vec![edit_state("good"), Reply::text("Fixed.")];
    // Slower than the limit: 0.3 s against 0.1 s.
    let slow = Budgets {
        quick_check: Some(Duration::from_millis(100)),
        ..Budgets::default()
    };
    let off = Budgets {
        quick_check: None,
        ..Budgets::default()
    };
    for (budgets, check) in [
        (slow, "sh -c 'sleep 0.3; grep -q good state.txt'"),
        (off, "grep -q good state.txt"),
    ] {
        std::fs::write(dir.path().join("state.txt"), "bad\n").unwrap();
        let ran = run_with(&toolbox, FakeChat::new(replies()), budgets, Some(check));
        assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
        assert!(
            ran.report.reason.ends_with("exited 0 (the check on done)"),
            "{}",
            ran.report.reason
        );
        assert_eq!(ran.chat.requests().len(), 2, "{check}");
    }
}

#[test]
fn without_a_head_start_the_first_check_measures_the_command() {
    let (_dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    let ran = run(
        &toolbox,
        vec![
            Reply::text("Done."),
            edit_state("good"),
            Reply::text("never asked"),
        ],
        Some("grep -q good state.txt"),
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert_eq!(
        ran.report.reason,
        "`grep -q good state.txt` exited 0 (the check after step 2)"
    );
    assert_eq!(ran.chat.remaining(), 1);
}

#[test]
fn failed_quick_checks_do_not_use_up_the_checks_on_done() {
    let (_dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    let budgets = Budgets {
        max_verifications: 2,
        ..Budgets::default()
    };
    let ran = run_with(
        &toolbox,
        FakeChat::new(vec![
            edit_state("worse"),
            Reply::call(
                "write_file",
                json!({"path": "notes.txt", "content": "tried worse\n"}),
            ),
            Reply::text("Done."),
            Reply::call(
                "edit_file",
                json!({"path": "state.txt", "old_text": "worse", "new_text": "good"}),
            ),
        ]),
        budgets,
        Some("grep -q good state.txt"),
    );
    // Two quick checks failed; the "done" on their standing failure is the first of the two
    // checks on done the attempt may use, not the third.
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert_eq!(ran.report.verification.clone().unwrap().runs, 3);
    let told = ran.request(3).pop().unwrap();
    assert!(
        told.content.contains("this counts as check 1 of 2"),
        "{}",
        told.content
    );
}

#[test]
fn a_quick_check_s_pass_with_a_test_changed_does_not_count() {
    let (_dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    let chat = Arc::new(FakeChat::new([
        Reply::call(
            "edit_file",
            json!({"path": "calc.py", "old_text": "return a - b\n\n\ndef sub", "new_text": "return a + b\n\n\ndef sub"}),
        ),
        Reply::text("Done."),
    ]));
    let inputs =
        harness_tools::VerificationInputs::new(harness_tools::TestCode::conventional(), &["true"]);
    let test = harness_tools::Change::new(
        "tests.py".to_owned(),
        None,
        harness_tools::ChangeKind::Modified,
        String::new(),
    );
    let mut events = Vec::new();
    let report = Agent::new(chat.clone(), &toolbox)
        .budgets(Budgets {
            max_verifications: 1,
            ..Budgets::default()
        })
        .verification(Verification::parse("true").expect("a valid command"))
        .verification_inputs(inputs, false)
        .run("fix add", &mut events, &mut Changed(Ok(vec![test])));
    assert_eq!(report.outcome, Outcome::TestsChanged, "{report:?}");
    let started: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "verification_started")
        .collect();
    assert_eq!(started[0]["reason"], "after_edit");
    // The model read, on its edit's result, why the pass did not count.
    let edit_result = chat.requests()[1].messages.last().unwrap().content.clone();
    assert!(
        edit_result.contains(
            "it exited 0, but what it loads besides the code under test changed since the run \
             began: tests.py changed"
        ),
        "{edit_result}"
    );
}

#[test]
fn a_check_after_an_edit_that_turns_slow_is_stopped_and_the_check_waits_for_done() {
    let (_dir, toolbox) = workspace(&[("state.txt", "bad\n")]);
    // Quick at first; once the file says "slow", the check would take 10 s.
    let check = "sh -c 'if grep -q slow state.txt; then sleep 10; fi; grep -q good state.txt'";
    let budgets = Budgets {
        quick_check: Some(Duration::from_millis(300)),
        ..Budgets::default()
    };
    let ran = run_with(
        &toolbox,
        FakeChat::new(vec![
            edit_state("slow"),
            Reply::call(
                "edit_file",
                json!({"path": "state.txt", "old_text": "slow", "new_text": "good"}),
            ),
            Reply::text("Fixed."),
        ]),
        budgets,
        Some(check),
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert!(
        ran.report.reason.ends_with("(the check on done)"),
        "{}",
        ran.report.reason
    );
    // The check after the first edit was stopped at ten times the quick limit (3 s), and
    // none ran after the second.
    let reasons: Vec<&Value> = ran
        .events_named("verification_started")
        .iter()
        .map(|e| &e["reason"])
        .collect();
    assert_eq!(reasons, [&json!("after_edit"), &json!("done")]);
    assert!(
        ran.report.duration < Duration::from_secs(8),
        "{:?}",
        ran.report.duration
    );
}
