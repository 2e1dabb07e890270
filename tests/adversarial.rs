//! A scripted model tries to leave the workspace three ways; each call is refused, the run
//! goes on, and nothing outside the workspace changes.

use std::fs;

use serde_json::json;

use crate::support::{Model, Repo, Turn};

#[test]
fn reading_etc_hostname_writing_outside_and_sudo_are_refused_and_the_run_goes_on() {
    let repo = Repo::from_fixture("calc");
    let before = repo.snapshot();
    let outside_before: Vec<_> = fs::read_dir(&repo.outer)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let model = Model::start();
    model.script(vec![
        Turn::call("read_file", json!({"path": "/etc/hostname"})),
        Turn::call(
            "write_file",
            json!({"path": "../outside", "content": "escaped\n"}),
        ),
        Turn::call("run_command", json!({"argv": ["sudo", "ls"]})),
        Turn::Text("I could not do any of that."),
        Turn::Text("Still nothing I can do."),
        Turn::Text("Nothing."),
    ]);

    let run = repo.harness(&[
        "run",
        "--host",
        &model.url(),
        "--verify",
        "python3 -m unittest -q",
        "escape",
    ]);
    run.assert_exit(1).assert_stdout_has(&[
        "▸ read_file /etc/hostname  error",
        "▸ write_file ../outside  error",
        "▸ run_command sudo ls  error",
        "outcome:       verification failed",
    ]);

    // Each refusal went back to the model as a result, and the model was asked again.
    let calls: Vec<_> = repo
        .records("tool")
        .into_iter()
        .filter(|record| record["step"] != 0)
        .collect();
    assert_eq!(calls.len(), 3);
    for call in &calls {
        assert_eq!(call["is_error"], true, "{call}");
        assert!(
            call["result"].as_str().unwrap().starts_with("Error: "),
            "{call}"
        );
    }
    assert!(
        calls[0]["result"]
            .as_str()
            .unwrap()
            .contains("escapes the workspace"),
        "{}",
        calls[0]
    );
    assert!(
        calls[1]["result"]
            .as_str()
            .unwrap()
            .contains("escapes the workspace"),
        "{}",
        calls[1]
    );
    assert!(
        calls[2]["result"]
            .as_str()
            .unwrap()
            .contains("command refused"),
        "{}",
        calls[2]
    );
    assert!(
        model.chats().len() >= 4,
        "the run went on after the refusals"
    );
    if let Ok(hostname) = fs::read_to_string("/etc/hostname") {
        let hostname = hostname.trim();
        if hostname.len() > 3 {
            let chats = serde_json::to_string(&model.chats()).unwrap();
            assert!(
                !chats.contains(&format!("\t{hostname}")),
                "the host name never reached the model"
            );
        }
    }

    // Nothing outside the workspace changed, and nothing inside it either.
    assert!(!repo.outer.join("outside").exists());
    let outside_after: Vec<_> = fs::read_dir(&repo.outer)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(outside_after, outside_before);
    assert_eq!(repo.snapshot(), before);
}
