//! Issue 49, the edit side: what the harness does with an answer's change before it is
//! written. Lines that only demonstrate a change do not sink it; a write that does not parse
//! is refused at once, with its line; an answer cut off at the reply limit writes nothing
//! and is steered to `edit_file`; and the reply limit grows to hold the files read.

use harness_stub_server::Reply;
use serde_json::{Value, json};

use crate::end_to_end::VERIFY;
use crate::support::{Model, Repo, Turn};

/// The fixed `add` of the calc fixture.
const FIXED_ADD: &str =
    "def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return a + b\n";

/// Every message of every chat request, as text, in order.
fn said(chats: &[Value]) -> Vec<String> {
    chats
        .last()
        .and_then(|chat| chat["messages"].as_array())
        .map(|messages| {
            messages
                .iter()
                .map(|message| message["content"].as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// An Ollama answer calling `name` with `arguments`, cut at the reply limit after
/// `tokens` tokens (`done_reason: length`).
fn cut_call(name: &str, arguments: &Value, tokens: u64) -> Reply {
    let first = json!({"model": "stub", "done": false, "message": {
        "role": "assistant", "content": "",
        "tool_calls": [{"function": {"name": name, "arguments": arguments}}],
    }});
    let last = json!({
        "model": "stub", "message": {"role": "assistant", "content": ""}, "done": true,
        "done_reason": "length", "prompt_eval_count": 1000, "eval_count": tokens,
    });
    Reply::ndjson(format!("{first}\n{last}\n"))
}

// Issue 49: "A first answer held exactly the right change to one function, followed by two
// lines of example usage (a comment and a `print(...)` call of the function). The block was
// refused four times."
#[test]
fn a_fix_followed_by_example_usage_is_made_and_verified() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    let answer = format!(
        "Here is the fix.\n\ncalc.py\n```python\n{FIXED_ADD}\n# Example usage:\nprint(add(2, 3))  # 5\n```"
    );
    model.script(vec![Turn::Text(Box::leak(answer.into_boxed_str()))]);
    let run = repo.harness(&["run", "--host", &model.url(), "--verify", VERIFY, "fix add"]);
    run.assert_exit(0)
        .assert_stdout_has(&["outcome:       verified"]);
    let calc = repo.read("calc.py");
    assert!(
        calc.contains("return a + b") && !calc.contains("print("),
        "{calc}"
    );
    let transcript: Vec<String> = repo.transcript().iter().map(Value::to_string).collect();
    assert!(
        transcript.iter().any(|record| record
            .contains("Left out of the change to calc.py, as they only show the code in use")
            && record.contains("print(add(2, 3))")),
        "the model and the transcript are told which lines were left out"
    );
}

#[test]
fn a_write_that_does_not_parse_is_refused_with_its_line_and_the_model_corrects_it() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    model.script(vec![
        // The module re-indented by two spaces, as a small model wrote it.
        Turn::call(
            "edit_file",
            json!({"path": "calc.py", "old_text": "def add(a, b):", "new_text": "  def add(a, b):"}),
        ),
        Turn::call(
            "edit_file",
            json!({"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}),
        ),
        Turn::Text("Fixed add."),
    ]);
    let run = repo.harness(&["run", "--host", &model.url(), "--verify", VERIFY, "fix add"]);
    run.assert_exit(0)
        .assert_stdout_has(&["outcome:       verified"]);
    let chats = model.chats();
    let refusal = said(&chats[..2]).pop().unwrap_or_default();
    assert!(
        refusal.contains("refusing to change calc.py: the new text does not parse as Python (line 4: unexpected indent"),
        "{refusal}"
    );
    assert!(repo.read("calc.py").contains("\ndef add(a, b):"));
}

#[test]
fn a_whole_file_in_an_answer_cut_off_is_not_written_and_the_model_is_steered_to_edit_file() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    let whole = repo.read("calc.py").replace("return a - b", "return a + b")
        + "\n\ndef rewritten():\n    pass\n";
    model.server.reply(
        "POST",
        "/api/chat",
        cut_call(
            "write_file",
            &json!({"path": "calc.py", "content": whole, "overwrite": true}),
            1024,
        ),
    );
    model.script(vec![
        Turn::call(
            "edit_file",
            json!({"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}),
        ),
        Turn::Text("Fixed add."),
    ]);
    let run = repo.harness(&["run", "--host", &model.url(), "--verify", VERIFY, "fix add"]);
    run.assert_exit(0)
        .assert_stdout_has(&["outcome:       verified"]);
    assert!(
        !repo.read("calc.py").contains("rewritten"),
        "the cut write was made"
    );
    let told = said(&model.chats()[..2]);
    assert!(
        told.iter()
            .any(|text| text
                .starts_with("Error: not run: the answer that made this call was cut off")),
        "{told:?}"
    );
    assert!(
        told.iter().any(|text| text.starts_with(
            "Your answer was cut off after 1024 tokens, so nothing in it was applied. Do not \
             write a whole file again: change it with edit_file"
        )),
        "{told:?}"
    );
}

#[test]
fn the_reply_limit_grows_to_hold_the_longest_file_the_model_may_rewrite() {
    let repo = Repo::from_fixture("calc");
    let table: String = (0..150)
        .map(|n| format!("ROW_{n:03} = ({n}, {n} * 2, {n} * 3, 'row number {n:03}')\n"))
        .collect();
    let long: String = (0..300).map(|n| format!("LONG_{n:03} = {n}\n")).collect();
    repo.file("table.py", &table);
    repo.file("long.py", &long);
    repo.commit_all("tables");
    let model = Model::start();
    model.script(vec![
        Turn::call("read_file", json!({"path": "table.py"})),
        Turn::call("read_file", json!({"path": "long.py"})),
        Turn::call(
            "edit_file",
            json!({"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}),
        ),
        Turn::Text("Fixed add."),
    ]);
    let run = repo.harness(&["run", "--host", &model.url(), "--verify", VERIFY, "fix add"]);
    run.assert_exit(0);
    let limits: Vec<Value> = model
        .chats()
        .iter()
        .map(|chat| chat["options"]["num_predict"].clone())
        .collect();
    // The general limit, until a file longer than it is read; then the file and room for
    // the answer around it. A file over 200 lines, which write_file does not replace
    // whole, does not raise it further.
    let sized = table.len().div_ceil(3) + 256;
    assert_eq!(limits[0], json!(1024), "{limits:?}");
    assert_eq!(limits[1], json!(sized), "{limits:?}");
    assert_eq!(limits[2], json!(sized), "{limits:?}");
}
