//! A broken or hostile model server cannot exhaust memory nor flood the terminal: a reply
//! past the client's limits ends the run with exit 3 and a message naming the limit, and
//! what the run printed of it is bounded.

use harness_stub_server::Reply;
use serde_json::json;

use crate::end_to_end::VERIFY;
use crate::support::{Model, Repo};

/// 64 KiB of text whose lines differ, so the loop detection does not cut it first.
fn piece() -> String {
    let text: String = (0..4096)
        .map(|n| format!("line {n:>5} of an endless reply.\n"))
        .collect();
    text[..64 * 1024].to_owned()
}

/// Runs `harness run` against a server that streams `unit` a thousand times (about 66 MB),
/// then checks what both floods must show: exit 3, a message naming `limit`, and a client
/// that stopped reading before half of it. Returns the run for further checks.
fn flooded_run(unit: &str, limit: &str) -> crate::support::Run {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    let floods = 1000; // about 66 MB, eight times the 8 MiB limits
    let reply = Reply::chunks("application/x-ndjson", Vec::new()).flood(
        unit,
        floods,
        "{\"message\":{\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n",
    );
    let sent = reply.sent();
    model.server.reply("POST", "/api/chat", reply);

    let run = repo.harness(&["run", "--host", &model.url(), "--verify", VERIFY, "fix add"]);

    run.assert_exit(3);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        all.contains(limit),
        "no message naming the limit\n{}",
        &all[all.len().saturating_sub(4000)..]
    );
    let total = unit.len() as u64 * floods;
    assert!(
        sent.get() < total / 2,
        "the client read on to {} bytes",
        sent.get()
    );
    run
}

#[test]
fn an_endless_reply_ends_the_run_with_exit_3_and_prints_a_bounded_part_of_it() {
    let unit = format!(
        "{}\n",
        json!({"message": {"role": "assistant", "content": format!("{{n}} {}", piece())}, "done": false})
    );
    let run = flooded_run(&unit, "went past the limit of 8 MiB of text");
    assert!(
        run.stdout
            .contains("[… the rest of this reply is not shown: over 64 KiB]"),
        "no note where the shown text stops"
    );
    let printed = run.stdout_bytes.len() + run.stderr_bytes.len();
    assert!(printed < 256 * 1024, "{printed} bytes printed");
}

#[test]
fn endless_tool_call_arguments_end_the_run_with_exit_3() {
    let unit = format!(
        "{}\n",
        json!({"message": {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "write_file", "arguments": {"path": "calc.py", "content": piece()}}}
        ]}, "done": false})
    );
    flooded_run(&unit, "went past the limit of");
}
