//! Steering: a call spelled out as JSON that could not be read, and the same answer again.

use super::*;

/// What Qwen2.5-Coder-1.5B wrote: a call as JSON, with Python's triple quotes unescaped.
const UNREADABLE_EDIT: &str = "```json\n{\n  \"name\": \"edit_file\",\n  \"arguments\": {\"path\": \"calc.py\", \"old_text\": \"def add(a, b):\\n    \"\"\"Sum.\"\"\"\"}\n}\n```";

#[test]
fn a_call_spelled_out_as_unreadable_json_is_not_done_and_the_model_is_told() {
    let (dir, toolbox) = workspace(&[("calc.py", "x = 1 - 2\n")]);
    let ran = run(
        &toolbox,
        vec![
            Reply::text(UNREADABLE_EDIT),
            Reply::call(
                "edit_file",
                json!({"path": "calc.py", "old_text": "1 - 2", "new_text": "1 + 2"}),
            ),
            Reply::text("calc.py now adds."),
        ],
        Some("grep -q '1 + 2' calc.py"),
    );
    assert_eq!(
        ran.report.outcome,
        Outcome::Verified,
        "{}",
        ran.report.reason
    );
    let verification = ran.report.verification.clone().unwrap();
    assert_eq!(
        verification.runs, 1,
        "the unreadable call was not taken for done"
    );
    let told = ran.request(1).pop().unwrap();
    assert_eq!(told.role, Role::User);
    assert!(
        told.content
            .starts_with("Your answer spells out a call of edit_file, but it did not run"),
        "{}",
        told.content
    );
    assert_eq!(ran.events_named("nudged").len(), 1);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        "x = 1 + 2\n"
    );
}

#[test]
fn unreadable_calls_count_as_failed_calls() {
    let (_dir, toolbox) = workspace(&[("calc.py", "x\n")]);
    let budgets = Budgets {
        max_failed_calls: 3,
        ..no_head_start()
    };
    let replies = vec![
        Reply::call("read_file", json!({"path": "missing.py"})),
        Reply::text(UNREADABLE_EDIT),
        Reply::text(UNREADABLE_EDIT),
        Reply::text("never asked"),
    ];
    let ran = run_with(&toolbox, FakeChat::new(replies), budgets, Some("true"));
    assert_eq!(ran.report.outcome, Outcome::Stuck);
    assert_eq!(
        ran.report.reason,
        "3 tool calls in a row failed (the last, a call of edit_file, could not be read)"
    );
    assert_eq!(ran.chat.requests().len(), 3);
    assert_eq!(ran.report.verification.clone().unwrap().runs, 0);
}

#[test]
fn the_same_answer_again_gets_the_next_request_sampled_differently_until_an_answer_differs() {
    let (_dir, toolbox) = workspace(&[("a.txt", "x\n"), ("b.txt", "y\n")]);
    let same = || Reply::call("read_file", json!({"path": "a.txt"}));
    let ran = run(
        &toolbox,
        vec![
            same(),
            same(),
            same(),
            Reply::call("read_file", json!({"path": "b.txt"})),
            Reply::text("Done."),
        ],
        None,
    );
    assert_eq!(ran.report.outcome, Outcome::Unverified, "{:?}", ran.report);
    let resampled: Vec<u32> = ran.chat.requests().iter().map(|r| r.resample).collect();
    // Answers 2 and 3 repeat the one before: requests 3 and 4 are retries 1 and 2; answer 4
    // differs, and request 5 is a plain one again.
    assert_eq!(resampled, [0, 0, 1, 2, 0]);
}
