//! The model probe: how the model is asked to reply follows from what its server says, and
//! the run's header says what was chosen and why.

use harness_stub_server::Reply;
use serde_json::json;

use crate::end_to_end::{VERIFY, fix_script};
use crate::support::{Model, Repo, Turn};

/// A stub server whose model's chat template takes no tools.
fn model_without_tools() -> Model {
    let model = Model::start();
    let show = json!({
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
        "capabilities": ["completion"],
    });
    model
        .server
        .reply_always("POST", "/api/show", Reply::json(200, show.to_string()));
    model
}

#[test]
fn a_model_whose_template_takes_no_tools_gets_replies_constrained_to_a_call_or_an_answer() {
    let repo = Repo::from_fixture("calc");
    let model = model_without_tools();
    model.script(vec![
        // The probe: a reply under the schema is JSON.
        Turn::Text(r#"{"answer": "Hello."}"#),
        Turn::Text(
            r#"{"name": "edit_file", "arguments": {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}}"#,
        ),
        Turn::Text(r#"{"answer": "Fixed add."}"#),
    ]);
    let run = repo.harness(&["run", "--host", &model.url(), "--verify", VERIFY, "fix add"]);
    run.assert_exit(0).assert_stdout_has(&[
        "replies:    constrained by the server to one tool call or a final answer: the \
         model's chat template takes no tools",
        "▸ edit_file calc.py  +1 −1",
        "outcome:       verified",
    ]);
    // The probe and the edit: the quick check after the edit passed.
    let chats = model.chats();
    assert_eq!(chats.len(), 2);
    for chat in &chats[1..] {
        assert!(chat["format"]["anyOf"].is_array(), "{chat}");
        assert!(chat.get("tools").is_none(), "{chat}");
    }
}

#[test]
fn a_model_whose_template_takes_tools_makes_native_calls_and_nothing_is_probed() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    model.script(fix_script());
    let run = repo.harness(&[
        "run",
        "--json",
        "--host",
        &model.url(),
        "--verify",
        VERIFY,
        "fix add",
    ]);
    run.assert_exit(0);
    let header: serde_json::Value =
        serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(header["replies"], "native");
    assert!(
        header["replies_why"]
            .as_str()
            .unwrap()
            .contains("the server says the model's chat template takes tools"),
        "{header}"
    );
    let chats = model.chats();
    // Read, then edit, whose quick check passed.
    assert_eq!(chats.len(), 2, "one chat per turn, none to probe");
    assert!(chats[0]["tools"].is_array());
    assert!(chats[0].get("format").is_none());
}

#[test]
fn constrained_replies_a_server_cannot_give_are_refused_before_the_run_begins() {
    let repo = Repo::from_fixture("calc");
    let before = repo.snapshot();
    let model = Model::start();
    model.script(vec![Turn::Text("Hello! How can I help?")]);
    let run = repo.harness(&[
        "run",
        "--host",
        &model.url(),
        "--verify",
        VERIFY,
        "--replies",
        "constrained",
        "fix add",
    ]);
    run.assert_exit(2).assert_stderr_has(&[
        "--replies constrained: the model server ignores a JSON schema for replies",
        "Hello! How can I help?",
    ]);
    assert_eq!(model.chats().len(), 1, "only the probe was sent");
    assert_eq!(repo.snapshot(), before);
    repo.harness(&["runs"])
        .assert_exit(0)
        .assert_stdout_has(&["no harness run is recorded in"]);
}

#[test]
fn a_model_that_can_only_write_calls_as_text_gets_its_whole_files_applied() {
    let repo = Repo::from_fixture("calc");
    let fixed = std::fs::read_to_string(repo.root.join("calc.py"))
        .unwrap()
        .replace("return a - b", "return a + b");
    let model = model_without_tools();
    model.script(vec![
        // The probe: the server ignores the schema, so replies are not constrained.
        Turn::Text("Hello! How can I help?"),
        // A scripted turn lives as long as the test's server.
        Turn::Text(format!("The fix:\n\ncalc.py\n```python\n{fixed}```\n").leak()),
        Turn::Text("Fixed add."),
    ]);
    let run = repo.harness(&["run", "--host", &model.url(), "--verify", VERIFY, "fix add"]);
    run.assert_exit(0).assert_stdout_has(&[
        "edits:      whole files written into answers, and no tools offered: the model's \
         template takes no tools and replies are not constrained",
        "outcome:       verified",
    ]);
    assert_eq!(
        std::fs::read_to_string(repo.root.join("calc.py")).unwrap(),
        fixed
    );
    let system = model.chats()[1]["messages"][0]["content"].to_string();
    assert!(
        system.contains("the WHOLE new content of the file"),
        "{system}"
    );
    assert!(
        model.chats()[1].get("tools").is_none(),
        "no tool schemas are sent: {}",
        model.chats()[1]
    );
}
