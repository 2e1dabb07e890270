//! What the benches that run the `harness` binary share: a stub model server and git
//! with no configuration of the user's.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use harness_stub_server::{Reply, StubServer};
use serde_json::json;

/// A stub Ollama that answers every chat with "Done." after `delay`, any number at once.
pub(crate) fn stub_model(delay: Duration) -> StubServer {
    let server = StubServer::start().unwrap();
    let show = json!({
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
        "capabilities": ["completion", "tools"],
    });
    server.reply_always("POST", "/api/show", Reply::json(200, show.to_string()));
    let answer = json!({"model": "stub", "message": {"role": "assistant", "content": "Done."}, "done": false});
    let end = json!({
        "model": "stub",
        "message": {"role": "assistant", "content": ""},
        "done": true,
        "done_reason": "stop",
        "prompt_eval_count": 10,
        "eval_count": 1,
    });
    server.reply_always(
        "POST",
        "/api/chat",
        Reply::ndjson(format!("{answer}\n{end}\n")).delay_first_byte(delay),
    );
    server
}

/// git with no global or system configuration and a fixed identity.
pub(crate) fn git(root: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.org")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.org");
    command
}
