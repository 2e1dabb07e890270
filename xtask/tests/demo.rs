//! `cargo xtask demo` against a scripted Ollama server: it says what it builds, and every
//! command it and the harness print at the end works as printed (issue #44: the summary's
//! `harness undo ...` was "command not found" after the demo).

use std::process::Command;

use harness_stub_server::{Reply, StubServer};
use serde_json::json;

/// One answer of the model, as Ollama streams it.
fn turn(message: serde_json::Value) -> Reply {
    let first = json!({"model": "stub", "message": message, "done": false});
    let last = json!({"model": "stub", "message": {"role": "assistant", "content": ""},
        "done": true, "done_reason": "stop", "prompt_eval_count": 10, "eval_count": 5});
    Reply::ndjson(format!("{first}\n{last}\n"))
}

fn call(name: &str, arguments: serde_json::Value) -> Reply {
    turn(json!({"role": "assistant", "content": "",
        "tool_calls": [{"function": {"name": name, "arguments": arguments}}]}))
}

#[test]
fn the_demo_says_what_it_builds_and_its_printed_undo_works_as_printed() {
    let server = StubServer::start().expect("a stub server");
    server.reply_always(
        "GET",
        "/api/version",
        Reply::json(200, r#"{"version":"0.9.0"}"#),
    );
    let show = json!({"model_info": {"general.architecture": "qwen2",
        "qwen2.context_length": 32768}, "capabilities": ["completion", "tools"]});
    server.reply_always("POST", "/api/show", Reply::json(200, show.to_string()));
    for reply in [
        call(
            "edit_file",
            json!({"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}),
        ),
        turn(json!({"role": "assistant", "content": "Fixed add: it subtracted."})),
    ] {
        server.reply("POST", "/api/chat", reply);
    }
    let home = tempfile::tempdir().expect("a temporary home");
    // No harness on PATH: the system's directories only.
    let path = "/usr/local/bin:/usr/bin:/bin";
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let cargo_dir = std::path::Path::new(&cargo)
        .parent()
        .map(|dir| dir.display().to_string())
        .unwrap_or_default();
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("demo")
        .env("OLLAMA_HOST", server.url())
        .env("HOME", home.path())
        .env("PATH", format!("{cargo_dir}:{path}"))
        .env("CARGO", &cargo)
        .env("NO_COLOR", "1")
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .expect("xtask runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("building the harness (cargo build"),
        "{stderr}"
    );

    let repository = stdout
        .lines()
        .find_map(|line| line.strip_prefix("The demo repository is "))
        .unwrap_or_else(|| panic!("no repository named\n{stdout}"))
        .trim()
        .to_owned();
    let undo = stdout
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("undo:"))
        .next_back()
        .unwrap_or_else(|| panic!("no undo line\n{stdout}"))
        .trim()
        .to_owned();
    assert!(!undo.starts_with("harness "), "{undo}");

    // Pasted into a shell without harness on PATH, from elsewhere, it undoes the run.
    let pasted = Command::new("sh")
        .arg("-c")
        .arg(format!("cd / && {undo}"))
        .env("HOME", home.path())
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env_remove("XDG_STATE_HOME")
        .output()
        .expect("sh runs");
    assert!(
        pasted.status.success(),
        "{undo}: {}",
        String::from_utf8_lossy(&pasted.stderr)
    );
    let unquoted = repository.trim_matches('\'');
    let calc = std::fs::read_to_string(format!("{unquoted}/calc.py")).expect("calc.py");
    assert!(calc.contains("return a - b"), "not undone:\n{calc}");
    let _ = std::fs::remove_dir_all(unquoted);
}
