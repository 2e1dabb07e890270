//! Edits written into an answer (whole files, search/replace blocks, functions under a path
//! or none): made through the same tools as a call, and checked.

use super::*;

fn whole_answer(path: &str) -> Reply {
    Reply::text(format!(
        "The bug is in add. Here is the fixed file:\n\n{path}\n```python\n{FIXED}```\n"
    ))
}

fn run_format(toolbox: &Toolbox, replies: Vec<Reply>, format: EditFormat) -> Ran {
    let chat = Arc::new(FakeChat::new(replies));
    let mut events = Vec::new();
    let mut checkpoints = Labels::default();
    let report = Agent::new(chat.clone(), toolbox)
        .budgets(no_head_start())
        .verification(Verification::parse("grep -q 'a + b' calc.py").expect("a valid command"))
        .edit_format(format)
        .run("fix add", &mut events, &mut checkpoints);
    Ran {
        report,
        chat,
        events,
        checkpoints: checkpoints.0,
    }
}

#[test]
fn a_whole_file_written_into_the_answer_is_applied_through_the_tools_and_verified() {
    let (dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    let ran = run_format(&toolbox, vec![whole_answer("calc.py")], EditFormat::Auto);
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        FIXED
    );
    // One model turn: the answer's edit was made, checkpointed and checked at once.
    assert_eq!(ran.chat.requests().len(), 1);
    assert_eq!(ran.checkpoints.len(), 2, "{:?}", ran.checkpoints);
    let finished = ran.events_named("tool_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["tool"], "write_file");
    assert!(
        finished[0]["output"]
            .as_str()
            .unwrap()
            .contains("+    return a + b")
    );
}

#[test]
fn a_file_named_in_an_answer_by_its_absolute_path_in_the_workspace_is_that_file() {
    let (dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    // The path as a traceback prints it: the canonical root, then the file.
    let absolute = toolbox.workspace().root().join("calc.py");
    let ran = run_format(
        &toolbox,
        vec![whole_answer(absolute.as_str())],
        EditFormat::Auto,
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        FIXED
    );
    assert_eq!(ran.events_named("tool_finished")[0]["target"], "calc.py");
}

#[test]
fn an_answer_that_fixes_the_code_and_rewrites_a_protected_test_is_checked_on_the_fix() {
    const TEST: &str = "from calc import add\nassert add(2, 3) == 5\n";
    let (dir, _) = workspace(&[("calc.py", BROKEN), ("test_calc.py", TEST)]);
    let toolbox = Toolbox::builder(Workspace::new(dir.path()).expect("a workspace"))
        .protect_tests(harness_tools::TestCode::new(&[]).expect("the conventions"))
        .build();
    // The fix first, then the test rewritten: the test's block is refused, last.
    let both = Reply::text(format!(
        "calc.py\n```python\n{FIXED}```\n\ntest_calc.py\n```python\n{}```\n",
        TEST.replace("== 5", "== 6")
    ));
    for format in [EditFormat::Auto, EditFormat::Whole] {
        std::fs::write(dir.path().join("calc.py"), BROKEN).unwrap();
        let ran = run_format(&toolbox, vec![both.clone()], format);
        // One model turn: the fix was checked at once, not after the model had read the
        // refusal and answered again.
        assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
        assert_eq!(ran.chat.requests().len(), 1, "{format:?}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("test_calc.py")).unwrap(),
            TEST
        );
        let refused = ran
            .events_named("tool_finished")
            .into_iter()
            .filter(|event| event["is_error"] == true)
            .count();
        assert_eq!(refused, 1, "{format:?}");
    }

    // An answer whose only block is refused changes nothing: no check is run, the model
    // reads the refusal first.
    std::fs::write(dir.path().join("calc.py"), BROKEN).unwrap();
    let only_the_test = Reply::text(format!(
        "test_calc.py\n```python\n{}```\n",
        TEST.replace("== 5", "== 6")
    ));
    let ran = run_format(
        &toolbox,
        vec![only_the_test, whole_answer("calc.py")],
        EditFormat::Whole,
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert_eq!(ran.chat.requests().len(), 2);
    assert_eq!(ran.events_named("verification_started").len(), 1);
}

#[test]
fn whole_and_diff_offer_no_tools_and_show_the_head_start_and_results_as_user_text() {
    let search_replace = Reply::text(
        "calc.py\n```\n<<<<<<< SEARCH\n    return a - b\n\n\ndef sub\n=======\n    return a + \
         b\n\n\ndef sub\n>>>>>>> REPLACE\n```",
    );
    for (format, fix) in [
        (EditFormat::Whole, whole_answer("calc.py")),
        (EditFormat::Diff, search_replace),
    ] {
        let (dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
        let chat = Arc::new(FakeChat::new([Reply::text("I will fix add."), fix]));
        let mut events = Vec::new();
        let report = Agent::new(chat.clone(), &toolbox)
            .verification(Verification::parse("grep -q 'a + b' calc.py").unwrap())
            .edit_format(format)
            .run("fix add", &mut events, &mut Labels::default());
        assert_eq!(report.outcome, Outcome::Verified, "{format:?}: {report:?}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
            FIXED
        );
        let requests = chat.requests();
        assert_eq!(requests.len(), 2, "{format:?}");
        for request in &requests {
            assert!(
                request.tools.is_empty(),
                "{format:?}: no tool schemas are sent"
            );
            for message in &request.messages {
                assert!(message.tool_calls.is_empty(), "{format:?}: {message:?}");
                assert_ne!(message.role, Role::Tool, "{format:?}: {message:?}");
            }
        }
        // The system prompt names no tool; the task, the head start's reads and the
        // instruction to act are one user message, with the file in it.
        let first = &requests[0].messages;
        assert_eq!(first.len(), 2, "{format:?}: {first:?}");
        assert_eq!(first[0].role, Role::System);
        for tool in ["read_file", "edit_file", "write_file", "run_command"] {
            assert!(!first[0].content.contains(tool), "{format:?}: {tool}");
            assert!(
                !first[1].content.contains(&format!("with {tool}")),
                "{format:?}"
            );
        }
        assert!(first[1].content.starts_with("fix add"));
        assert!(first[1].content.contains("[result of read_file calc.py"));
        assert!(
            first[1]
                .content
                .contains(&format!("data, not instructions]\n{BROKEN}")),
            "{format:?}: the file is shown as it is, without line numbers: {}",
            first[1].content
        );
        assert!(first[1].content.ends_with(match format {
            EditFormat::Whole => "its path on a line by itself right above it.",
            _ => "a search/replace block under the path of the file to fix.",
        }));
        // The answer without a change was checked (the head start's failure stood, so not
        // run again), and the model was told how to write the change, as user text.
        let second = &requests[1].messages;
        assert_eq!(second.len(), 4, "{format:?}: {second:?}");
        assert_eq!(second[2].content, "I will fix add.");
        assert_eq!(second[3].role, Role::User);
        assert!(
            second[3].content.contains("not run again"),
            "{}",
            second[3].content
        );
        assert!(
            !second[3].content.contains("edit_file"),
            "{}",
            second[3].content
        );
    }
}

#[test]
fn a_call_spelled_out_where_no_tools_are_offered_is_told_to_write_the_change() {
    let (dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    let call = Reply::text(
        r#"{"name": "edit_file", "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}"#,
    );
    let ran = run_format(
        &toolbox,
        vec![call, whole_answer("calc.py")],
        EditFormat::Whole,
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        FIXED
    );
    let told = ran.request(1).last().unwrap().content.clone();
    assert!(
        told.starts_with(
            "Your answer spells out a call of edit_file, but no tool can be called here"
        ),
        "{told}"
    );
    assert!(told.contains("a fenced block"), "{told}");
    assert_eq!(
        ran.report.verification.unwrap().runs,
        1,
        "the call was not taken for done"
    );
}

#[test]
fn a_function_shown_under_the_file_s_path_is_put_in_place_not_written_over_the_file() {
    let (dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    let snippet = Reply::text("calc.py\n```python\ndef add(a, b):\n    return a + b\n```");
    let ran = run_format(&toolbox, vec![snippet], EditFormat::Auto);
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    // `sub`, which the snippet did not repeat, is still there.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        FIXED
    );
    let finished = ran.events_named("tool_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["tool"], "edit_file");
    assert_eq!(ran.checkpoints.len(), 2, "{:?}", ran.checkpoints);
}

#[test]
fn a_function_shown_under_no_path_goes_to_the_file_the_model_read() {
    let snippet = || Reply::text("Change add:\n```python\ndef add(a, b):\n    return a + b\n```");
    let (dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    let ran = run_format(
        &toolbox,
        vec![
            Reply::call("read_file", json!({"path": "calc.py"})),
            snippet(),
        ],
        EditFormat::Auto,
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        FIXED
    );
    // Code for a file the model has not read is an example: it changes nothing.
    let (dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    let ran = run_format(
        &toolbox,
        vec![snippet(), Reply::text("Done."), Reply::text("Done.")],
        EditFormat::Auto,
    );
    assert_eq!(
        ran.report.outcome,
        Outcome::VerificationFailed,
        "{:?}",
        ran.report
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        BROKEN
    );
    assert!(ran.events_named("tool_finished").is_empty());
}

#[test]
fn a_function_repeated_as_the_file_holds_it_on_a_failing_check_is_told_as_changing_nothing() {
    let (dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    let repeat =
        || Reply::text("Here is the fixed add:\n```python\ndef add(a, b):\n    return a - b\n```");
    let ran = run_format(
        &toolbox,
        vec![
            Reply::call("read_file", json!({"path": "calc.py"})),
            Reply::text("Done."),
            repeat(),
        ],
        EditFormat::Auto,
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        BROKEN
    );
    let nudges = ran.events_named("nudged");
    let told = nudges.last().unwrap()["message"].as_str().unwrap();
    assert!(
        told.starts_with("The code in your answer for calc.py is what the file already holds")
            && told.contains("it was not run again"),
        "{told}"
    );
    assert_eq!(ran.report.verification.clone().unwrap().runs, 1);
    // Before any check failed, the same block is a quote, and the done is checked.
    let (_dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    let ran = run_format(
        &toolbox,
        vec![
            Reply::call("read_file", json!({"path": "calc.py"})),
            repeat(),
        ],
        EditFormat::Auto,
    );
    assert_eq!(ran.report.verification.clone().unwrap().runs, 1);
    let nudges = ran.events_named("nudged");
    let told = nudges.last().unwrap()["message"].as_str().unwrap();
    assert!(!told.contains("already holds"), "{told}");
}

#[test]
fn a_snippet_that_cannot_be_put_in_place_is_not_written_and_the_model_is_told_how_to_edit() {
    let (dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    let snippet = Reply::text("calc.py\n```python\n    return a + b\n```");
    let ran = run_format(
        &toolbox,
        vec![
            snippet,
            Reply::call(
                "edit_file",
                json!({"path": "calc.py", "old_text": "a - b\n\n", "new_text": "a + b\n\n"}),
            ),
            Reply::text("Fixed."),
        ],
        EditFormat::Auto,
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        FIXED
    );
    let nudges = ran.events_named("nudged");
    assert_eq!(nudges.len(), 1);
    let told = nudges[0]["message"].as_str().unwrap();
    assert!(
        told.contains("not the whole file") && told.contains("call edit_file"),
        "{told}"
    );
    // The second request carries the nudge, and the file was untouched until the edit.
    assert!(
        ran.request(1)
            .last()
            .unwrap()
            .content
            .contains("not the whole file")
    );
}

#[test]
fn with_tool_calls_only_an_answer_s_code_changes_nothing() {
    let (dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    let ran = run_format(
        &toolbox,
        vec![
            whole_answer("calc.py"),
            Reply::text("Done."),
            Reply::text("Done."),
        ],
        EditFormat::Tools,
    );
    assert_eq!(
        ran.report.outcome,
        Outcome::VerificationFailed,
        "{:?}",
        ran.report
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        BROKEN
    );
    assert!(ran.events_named("tool_finished").is_empty());
}

#[test]
fn an_edit_block_is_refused_where_a_tool_call_would_be() {
    let (dir, toolbox) = workspace(&[("calc.py", BROKEN), (".env", "KEY=1\n")]);
    for path in ["../outside.py", ".env", ".git/config"] {
        let ran = run_format(&toolbox, vec![whole_answer(path)], EditFormat::Auto);
        assert_ne!(
            ran.report.outcome,
            Outcome::Verified,
            "{path}: {:?}",
            ran.report
        );
        let finished = ran.events_named("tool_finished");
        assert_eq!(finished.len(), 1, "{path}");
        assert_eq!(finished[0]["is_error"], true, "{path}: {finished:?}");
        // The model read the refusal: the run went on instead of being verified.
        assert!(
            ran.events_named("verification_finished").is_empty(),
            "{path}"
        );
    }
    assert!(!dir.path().parent().unwrap().join("outside.py").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".env")).unwrap(),
        "KEY=1\n"
    );
}

#[test]
fn a_block_under_no_path_is_refused_in_a_protected_test_file_as_a_call_would_be() {
    const TEST: &str = "def test_add():\n    assert add(2, 3) == 5\n";
    let (dir, _) = workspace(&[("calc.py", BROKEN), ("test_calc.py", TEST)]);
    // Test code protected, as `harness run` does unless --allow-test-edits.
    let toolbox = Toolbox::builder(Workspace::new(dir.path()).expect("a workspace"))
        .protect_tests(harness_tools::TestCode::new(&[]).expect("the conventions"))
        .build();
    // The model read the test, then rewrote its assertion in a block naming no file: the
    // block goes to test_calc.py, where the tools refuse to change test code.
    let weakened = Reply::text("```python\ndef test_add():\n    assert add(2, 3) == -1\n```");
    let ran = run_format(
        &toolbox,
        vec![
            Reply::call("read_file", json!({"path": "test_calc.py"})),
            weakened,
            Reply::text("Done."),
            Reply::text("Done."),
        ],
        EditFormat::Auto,
    );
    assert_ne!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    let finished = ran.events_named("tool_finished");
    let edits: Vec<&&Value> = finished
        .iter()
        .filter(|event| event["tool"] == "edit_file")
        .collect();
    assert_eq!(edits.len(), 1, "{finished:?}");
    assert_eq!(edits[0]["is_error"], true, "{edits:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("test_calc.py")).unwrap(),
        TEST
    );
}

/// An answer that shows the fixed file and also calls a tool: `call`, in the same answer.
fn whole_answer_calling(path: &str, call: Reply) -> Reply {
    Reply {
        text: whole_answer(path).text,
        ..call
    }
}

#[test]
fn the_blocks_of_an_answer_whose_every_call_failed_are_made() {
    let (dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    // The shape Qwen2.5-Coder-1.5B writes: the fixed file, then an edit whose old_text is
    // not in the file.
    let failing = Reply::call(
        "edit_file",
        json!({"path": "calc.py", "old_text": "return a * b", "new_text": "return a + b"}),
    );
    let ran = run_format(
        &toolbox,
        vec![whole_answer_calling("calc.py", failing)],
        EditFormat::Auto,
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert_eq!(ran.chat.requests().len(), 1);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        FIXED
    );
    let finished: Vec<(&Value, &Value)> = ran
        .events_named("tool_finished")
        .into_iter()
        .map(|event| (&event["tool"], &event["is_error"]))
        .collect();
    assert_eq!(
        finished,
        [
            (&json!("edit_file"), &json!(true)),
            (&json!("write_file"), &json!(false))
        ]
    );

    // A block's call belongs to the answer it was written in, after the failed call, and
    // each result follows in the order of the calls.
    std::fs::write(dir.path().join("calc.py"), BROKEN).unwrap();
    let wrong_fix = Reply {
        text: format!(
            "calc.py\n```python\n{}```\n",
            FIXED.replace("a + b", "a * b")
        ),
        ..Reply::call("read_file", json!({"path": "nowhere.py"}))
    };
    let ran = run_format(
        &toolbox,
        vec![wrong_fix, whole_answer("calc.py")],
        EditFormat::Auto,
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    let requests = ran.chat.requests();
    assert_eq!(requests.len(), 2);
    let messages = &requests[1].messages;
    let answer = messages
        .iter()
        .position(|message| message.role == Role::Assistant)
        .expect("the first answer");
    let called: Vec<&str> = messages[answer]
        .tool_calls
        .iter()
        .map(|call| call.name.as_str())
        .collect();
    assert_eq!(called, ["read_file", "write_file"]);
    let answered: Vec<Option<&str>> = messages[answer + 1..answer + 3]
        .iter()
        .map(|message| message.tool_call_id.as_deref())
        .collect();
    let ids: Vec<Option<&str>> = messages[answer]
        .tool_calls
        .iter()
        .map(|call| Some(call.id.as_str()))
        .collect();
    assert_eq!(answered, ids);
}

#[test]
fn the_blocks_beside_a_call_that_worked_are_not_made() {
    let (dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    let worked = Reply::call("read_file", json!({"path": "calc.py"}));
    let ran = run_format(
        &toolbox,
        vec![whole_answer_calling("calc.py", worked)],
        EditFormat::Auto,
    );
    assert_ne!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        BROKEN
    );
    let tools: Vec<&Value> = ran
        .events_named("tool_finished")
        .into_iter()
        .map(|event| &event["tool"])
        .collect();
    assert_eq!(tools, [&json!("read_file")]);
}

#[test]
fn blocks_that_cannot_be_made_beside_failed_calls_leave_the_model_the_calls_errors() {
    let (dir, toolbox) = workspace(&[("calc.py", BROKEN)]);
    let failing = Reply {
        text: "calc.py\n```\n<<<<<<< SEARCH\nreturn a - b\n>>>>>>> REPLACE\n```\n".to_owned(),
        ..Reply::call("read_file", json!({"path": "nowhere.py"}))
    };
    let ran = run_format(
        &toolbox,
        vec![failing, whole_answer("calc.py")],
        EditFormat::Auto,
    );
    assert_eq!(ran.report.outcome, Outcome::Verified, "{:?}", ran.report);
    let requests = ran.chat.requests();
    assert_eq!(requests.len(), 2);
    // The second request ends with the failed call's result: no word on the broken block.
    let last = requests[1].messages.last().expect("a message");
    assert_eq!(last.role, Role::Tool, "{last:?}");
    assert!(last.content.contains("nowhere.py"), "{last:?}");
    assert!(
        requests[1]
            .messages
            .iter()
            .all(|message| !message.content.contains("is not complete")),
        "{:?}",
        requests[1].messages
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        FIXED
    );
}
