//! Tool calls: in order, refused or invalid ones back to the model, repeats and failures in
//! a row, files saved before they are written, checkpoints.

use super::*;

#[test]
fn several_calls_in_one_turn_run_in_order_and_one_checkpoint_follows() {
    let (dir, toolbox) = workspace(&[]);
    let ran = run(
        &toolbox,
        vec![
            Reply::calls([
                ("write_file", json!({"path": "a.txt", "content": "one\n"})),
                (
                    "edit_file",
                    json!({"path": "a.txt", "old_text": "one", "new_text": "two"}),
                ),
                ("read_file", json!({"path": "a.txt"})),
            ]),
            Reply::text("Done."),
        ],
        None,
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "two\n"
    );
    let second = ran.request(1);
    let results: Vec<&Message> = second.iter().filter(|m| m.role == Role::Tool).collect();
    let ids: Vec<&str> = results
        .iter()
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    assert_eq!(ids, ["call_0", "call_1", "call_2"]);
    assert!(
        results[0].content.contains("+++ b/a.txt"),
        "{}",
        results[0].content
    );
    assert!(
        results[1].content.contains("-one\n+two"),
        "{}",
        results[1].content
    );
    assert!(
        results[2].content.contains("1\ttwo"),
        "{}",
        results[2].content
    );
    assert_eq!(
        ran.checkpoints,
        ["step 1: write_file a.txt; edit_file a.txt"],
        "one checkpoint for the step, naming the changing calls"
    );
    assert_eq!(ran.report.tool_calls, 3);
    assert_eq!(ran.report.outcome, Outcome::Unverified);
}

#[test]
fn invalid_arguments_go_back_to_the_model_and_the_run_goes_on() {
    let (_dir, toolbox) = workspace(&[("a.txt", "x\n")]);
    let ran = run(
        &toolbox,
        vec![
            Reply::call("edit_file", json!({"path": "a.txt"})),
            Reply::text("Gave up."),
        ],
        None,
    );
    let results = ran.tool_results(1);
    assert!(
        results[0].contains("Error: edit_file: missing required argument \"old_text\""),
        "{}",
        results[0]
    );
    assert_eq!(ran.report.outcome, Outcome::Unverified);
    assert_eq!(ran.report.steps, 2);
    assert!(ran.checkpoints.is_empty(), "nothing changed");
}

#[test]
fn an_unknown_tool_goes_back_to_the_model_and_the_run_goes_on() {
    let (_dir, toolbox) = workspace(&[]);
    let ran = run(
        &toolbox,
        vec![
            Reply::call("delete_everything", json!({})),
            Reply::text("Fine."),
        ],
        None,
    );
    let results = ran.tool_results(1);
    assert!(results[0].contains("Error:"), "{}", results[0]);
    assert!(results[0].contains("delete_everything"), "{}", results[0]);
    assert_eq!(ran.report.steps, 2);
}

#[test]
fn refusals_go_back_to_the_model_and_nothing_outside_changes() {
    let outside = tempfile::tempdir().unwrap();
    let (dir, toolbox) = workspace(&[]);
    let escape = format!(
        "../{}/x",
        outside.path().file_name().unwrap().to_str().unwrap()
    );
    let _ = dir;
    let ran = run(
        &toolbox,
        vec![
            Reply::call("read_file", json!({"path": "/etc/hostname"})),
            Reply::call("write_file", json!({"path": escape, "content": "x"})),
            Reply::call("run_command", json!({"argv": ["sudo", "ls"]})),
            Reply::text("I could not."),
        ],
        None,
    );
    let results = ran.tool_results(3);
    assert_eq!(results.len(), 3);
    for result in &results {
        assert!(result.contains("\nError: "), "{result}");
    }
    assert!(results[2].contains("command refused"), "{}", results[2]);
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    assert_eq!(ran.report.outcome, Outcome::Unverified);
}

#[test]
fn the_same_call_three_times_gets_a_nudge_and_five_times_ends_the_run() {
    let (_dir, toolbox) = workspace(&[("a.txt", "x\n")]);
    let same = || Reply::call("read_file", json!({"path": "a.txt"}));
    let ran = run(
        &toolbox,
        vec![same(), same(), same(), same(), same(), same()],
        None,
    );
    assert_eq!(ran.report.outcome, Outcome::Stuck);
    assert_eq!(
        ran.report.reason,
        "the model called read_file with the same arguments 5 times in a row"
    );
    assert_eq!(ran.report.tool_calls, 4, "the fifth call does not run");
    assert_eq!(ran.chat.remaining(), 1);
    let nudges = |n: usize| -> usize {
        ran.request(n)
            .iter()
            .filter(|m| m.role == Role::User && m.content.contains("same arguments"))
            .count()
    };
    assert_eq!(nudges(2), 0, "two calls: no nudge yet");
    assert_eq!(nudges(3), 1, "the nudge comes after the third call");
    assert_eq!(nudges(4), 1, "and only once");
    let nudge = ran.request(3).last().unwrap().clone();
    assert_eq!(nudge.role, Role::User);
    assert!(
        nudge
            .content
            .contains("read_file with the same arguments 3 times")
    );
    assert_eq!(ran.events_named("nudged").len(), 1);
}

#[test]
fn different_arguments_are_not_a_repeat() {
    let (_dir, toolbox) = workspace(&[("a.txt", "1\n2\n3\n4\n5\n6\n")]);
    let replies = (1..=6)
        .map(|line| Reply::call("read_file", json!({"path": "a.txt", "start_line": line})))
        .chain([Reply::text("Read it all.")])
        .collect();
    let ran = run(&toolbox, replies, None);
    assert_eq!(ran.report.outcome, Outcome::Unverified);
    assert!(ran.events_named("nudged").is_empty());
}

#[test]
fn five_failed_calls_in_a_row_end_the_run_and_a_success_resets_the_count() {
    let (_dir, toolbox) = workspace(&[("a.txt", "x\n")]);
    let fail = |n: usize| Reply::call("read_file", json!({"path": format!("missing{n}.txt")}));
    let ok = Reply::call("read_file", json!({"path": "a.txt"}));
    let mut replies: Vec<Reply> = (0..4).map(fail).collect();
    replies.push(ok);
    replies.extend((4..8).map(fail));
    replies.push(Reply::text("Done."));
    let ran = run(&toolbox, replies, None);
    assert_eq!(
        ran.report.outcome,
        Outcome::Unverified,
        "{}",
        ran.report.reason
    );

    let replies: Vec<Reply> = (0..6).map(fail).collect();
    let ran = run(&toolbox, replies, None);
    assert_eq!(ran.report.outcome, Outcome::Stuck);
    assert_eq!(ran.report.reason, "5 tool calls in a row failed");
    assert_eq!(ran.report.tool_calls, 5);
}

#[test]
fn a_failed_checkpoint_is_a_warning_not_the_end() {
    struct Broken;
    impl Checkpoints for Broken {
        fn checkpoint(
            &mut self,
            _label: &str,
        ) -> Result<Option<u32>, Box<dyn std::error::Error + Send + Sync>> {
            Err("the index is locked".into())
        }
    }
    let (_dir, toolbox) = workspace(&[]);
    let chat = Arc::new(FakeChat::new([
        Reply::call("write_file", json!({"path": "a.txt", "content": "a"})),
        Reply::text("Done."),
    ]));
    let report = Agent::new(chat, &toolbox)
        .budgets(no_head_start())
        .run("t", &mut (), &mut Broken);
    assert_eq!(report.outcome, Outcome::Unverified);
    assert_eq!(
        report.warnings,
        ["checkpoint after step 1 failed: the index is locked"]
    );
    assert_eq!(report.checkpoints, 0);
}

/// A file no undo could bring back is not written: when saving it first fails, the file
/// tool is refused and the model told why, for every tool that changes files.
#[test]
fn a_file_that_could_not_be_saved_first_is_not_written() {
    struct Unsaveable;
    impl Checkpoints for Unsaveable {
        fn checkpoint(
            &mut self,
            _label: &str,
        ) -> Result<Option<u32>, Box<dyn std::error::Error + Send + Sync>> {
            Ok(None)
        }
        fn protect(&mut self, path: &str) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
            Err(format!("{path} is larger than 64 MiB").into())
        }
    }
    let calls = [
        Reply::call("write_file", json!({"path": "a.txt", "content": "theirs"})),
        Reply::call(
            "edit_file",
            json!({"path": "a.txt", "old_text": "mine", "new_text": "theirs"}),
        ),
        Reply::call("write_file", json!({"path": "new.txt", "content": "new"})),
    ];
    for call in calls {
        let (dir, toolbox) = workspace(&[("a.txt", "mine")]);
        let chat = Arc::new(FakeChat::new([call, Reply::text("Done.")]));
        let mut events: Vec<Value> = Vec::new();
        let report = Agent::new(chat, &toolbox).budgets(no_head_start()).run(
            "t",
            &mut events,
            &mut Unsaveable,
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "mine"
        );
        assert!(!dir.path().join("new.txt").exists());
        let finished = events
            .iter()
            .find(|e| e["event"] == "tool_finished")
            .expect("the call is shown as finished");
        assert_eq!(finished["is_error"], true, "{finished}");
        let output = finished["output"].as_str().unwrap();
        assert!(
            output.starts_with("Error: ") && output.contains("could not be saved for undo first"),
            "{output}"
        );
        assert!(output.contains("is larger than 64 MiB"), "{output}");
        assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    }
}

/// A workspace holding `calc.py` and a protected test of it, and a toolbox refusing edits
/// of the test.
fn protected_test() -> (TempDir, Toolbox) {
    const TEST: &str = "from calc import add\nassert add(2, 3) == 5\n";
    let (dir, _) = workspace(&[("calc.py", BROKEN), ("test_calc.py", TEST)]);
    let toolbox = Toolbox::builder(Workspace::new(dir.path()).expect("a workspace"))
        .protect_tests(harness_tools::TestCode::new(&[]).expect("the conventions"))
        .build();
    (dir, toolbox)
}

/// A rewrite of the protected test, with `blanks` between two of its words.
fn rewrite_the_test(blanks: &str) -> Reply {
    Reply::call(
        "write_file",
        json!({"path": "test_calc.py", "content": format!("assert add(2, 3) =={blanks}6\n")}),
    )
}

#[test]
fn a_refusal_met_twice_is_told_with_its_alternative_and_the_third_ends_the_attempt_unrun() {
    let (dir, toolbox) = protected_test();
    let ran = run(
        &toolbox,
        vec![
            rewrite_the_test(" "),
            rewrite_the_test("  "),
            rewrite_the_test("\t "),
            Reply::text("never asked"),
        ],
        Some("false"),
    );
    assert_eq!(ran.report.outcome, Outcome::Stuck, "{:?}", ran.report);
    assert_eq!(
        ran.report.reason,
        "the model made a call of write_file that was refused 2 times already, and it was not \
         run again"
    );
    assert_eq!(ran.report.tool_calls, 2, "the third call did not run");
    assert_eq!(ran.chat.remaining(), 1);
    // The first refusal is the model's to read; the second changes the request: it names
    // what was refused and quotes the refusal, which says what to do instead, and the next
    // answer is sampled differently.
    let told = |n: usize| -> Vec<String> {
        ran.request(n)
            .into_iter()
            .filter(|m| m.role == Role::User && m.content.contains("second time"))
            .map(|m| m.content)
            .collect()
    };
    assert!(told(1).is_empty());
    let second = told(2);
    assert_eq!(second.len(), 1);
    assert!(
        second[0].starts_with(
            "The harness refused write_file test_calc.py, and this is the second time"
        ),
        "{}",
        second[0]
    );
    assert!(
        second[0].contains("test_calc.py is a test file") && second[0].contains("fix the code"),
        "{}",
        second[0]
    );
    let resampled: Vec<u32> = ran.chat.requests().iter().map(|r| r.resample).collect();
    assert_eq!(resampled, [0, 0, 1]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("test_calc.py")).unwrap(),
        "from calc import add\nassert add(2, 3) == 5\n"
    );
}

#[test]
fn the_same_refusal_from_different_calls_ends_the_attempt_at_the_third() {
    let (_dir, toolbox) = protected_test();
    let ran = run(
        &toolbox,
        vec![
            rewrite_the_test(" "),
            Reply::call("read_file", json!({"path": "calc.py"})),
            Reply::call(
                "edit_file",
                json!({"path": "test_calc.py", "old_text": "== 5", "new_text": "== 6"}),
            ),
            Reply::call(
                "edit_file",
                json!({"path": "test_calc.py", "old_text": "add(2, 3)", "new_text": "5"}),
            ),
            Reply::text("never asked"),
        ],
        Some("false"),
    );
    assert_eq!(ran.report.outcome, Outcome::Stuck, "{:?}", ran.report);
    assert!(
        ran.report.reason.starts_with(
            "the same refusal came 3 times in this attempt: refusing to change test_calc.py"
        ),
        "{}",
        ran.report.reason
    );
    assert_eq!(ran.report.tool_calls, 4, "each call was a new one, and ran");
    assert_eq!(
        ran.events_named("nudged").len(),
        1,
        "told once, at the second"
    );
}

#[test]
fn different_refusals_do_not_add_up() {
    let (_dir, toolbox) = protected_test();
    let missing = |n: u32| Reply::call("read_file", json!({"path": format!("missing{n}.py")}));
    let ran = run(
        &toolbox,
        vec![
            rewrite_the_test(" "),
            missing(1),
            missing(2),
            Reply::call("run_command", json!({"argv": ["sudo", "ls"]})),
            Reply::call("read_file", json!({"path": "calc.py"})),
            missing(3),
            Reply::text("I could not."),
        ],
        None,
    );
    assert_eq!(ran.report.outcome, Outcome::Unverified, "{:?}", ran.report);
    assert!(ran.events_named("nudged").is_empty());
    assert_eq!(ran.report.tool_calls, 6);
}
