//! A broken or hostile server cannot exhaust memory: each reply it streams, over a real
//! socket, is bounded by the client's [`ReplyLimits`], and the client stops reading at the
//! limit with [`Error::ReplyTooLarge`] naming it, long before the server is done sending.

mod support;

use harness_ollama::{Api, Client, Error, Limit, Message, ReplyLimits};
use harness_stub_server::{Reply, StubServer};
use serde_json::json;
use support::{config, stub};

const MIB: usize = 1024 * 1024;

/// 64 KiB of text that never repeats a line, so loop detection does not cut it first.
fn piece() -> String {
    (0..4096)
        .map(|n| format!("line {n:>5} of a long reply. \n"))
        .collect::<String>()[..64 * 1024]
        .to_owned()
}

/// A client of `api` at `server` with `limits`.
fn limited(api: Api, server: &StubServer, limits: ReplyLimits) -> Client {
    let mut config = config(api, server);
    config.context_length = Some(4096);
    config.reply_limits = limits;
    Client::new(config).expect("the stub server's URL is a valid address")
}

/// Small limits, so a flood passes them quickly; each test floods one of them.
fn small() -> ReplyLimits {
    let mut limits = ReplyLimits::default();
    limits.text_bytes = MIB;
    limits.arguments_bytes = MIB;
    limits.tool_calls = 16;
    limits.line_bytes = 2 * MIB;
    limits.body_bytes = 32 * MIB as u64;
    limits
}

/// What `floods` bytes of `unit` add up to, for the assertion that reading stopped early.
fn total(unit: &str, floods: u64) -> u64 {
    unit.len() as u64 * floods
}

const OLLAMA_DONE: &str =
    "{\"message\":{\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n";
const OPENAI_DONE: &str =
    "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

/// Sends `reply` to `api`'s chat endpoint, asks, and returns the error, the text passed on
/// and the bytes the server managed to send.
fn ask(api: Api, limits: ReplyLimits, reply: Reply) -> (Error, usize, u64) {
    let server = stub();
    let sent = reply.sent();
    let path = match api {
        Api::Ollama => "/api/chat",
        _ => "/v1/chat/completions",
    };
    server.reply("POST", path, reply);
    let client = limited(api, &server, limits);
    let mut shown = 0;
    let result = client.chat(&[Message::user("hi")], &[], |text| shown += text.len());
    let error = match result {
        Ok(response) => panic!(
            "a reply past the limits was taken whole: {} bytes of text, {} tool calls",
            response.content.len(),
            response.tool_calls.len()
        ),
        Err(error) => error,
    };
    drop(client);
    drop(server);
    (error, shown, sent.get())
}

fn ollama_text_unit() -> String {
    format!(
        "{}\n",
        json!({"message": {"content": format!("{{n}} {}", piece())}, "done": false})
    )
}

fn openai_text_unit() -> String {
    format!(
        "data: {}\n\n",
        json!({"choices": [{"delta": {"content": format!("{{n}} {}", piece())}}]})
    )
}

#[test]
fn endless_text_stops_at_the_text_limit_for_both_apis() {
    for (api, unit, done) in [
        (Api::Ollama, ollama_text_unit(), OLLAMA_DONE),
        (Api::OpenAi, openai_text_unit(), OPENAI_DONE),
    ] {
        let floods = 400; // about 26 MB
        let reply = Reply::chunks("text/plain", Vec::new()).flood(&unit, floods, done);
        let (error, shown, sent) = ask(api, small(), reply);
        assert!(
            matches!(&error, Error::ReplyTooLarge { limit: Limit::Text(bytes), .. } if *bytes == MIB),
            "{api}: {error}"
        );
        assert!(
            shown <= MIB,
            "{api}: {shown} bytes of text passed on past the limit"
        );
        assert!(
            sent < total(&unit, floods) / 2,
            "{api}: read on to {sent} bytes"
        );
        assert!(
            error
                .to_string()
                .contains("went past the limit of 1 MiB of text"),
            "{error}"
        );
    }
}

#[test]
fn endless_text_stops_at_the_default_limit_of_8_mib() {
    let unit = openai_text_unit();
    let floods = 600; // about 40 MB
    let reply = Reply::chunks("text/event-stream", Vec::new()).flood(&unit, floods, OPENAI_DONE);
    let (error, shown, sent) = ask(Api::OpenAi, ReplyLimits::default(), reply);
    assert!(
        matches!(
            error,
            Error::ReplyTooLarge {
                limit: Limit::Text(ReplyLimits::DEFAULT_TEXT_BYTES),
                ..
            }
        ),
        "{error}"
    );
    assert!(shown <= ReplyLimits::DEFAULT_TEXT_BYTES);
    assert!(sent < total(&unit, floods) / 2, "read on to {sent} bytes");
}

#[test]
fn endless_tool_call_arguments_stop_at_the_arguments_limit_for_both_apis() {
    // OpenAI-compatible servers stream one call's arguments in fragments.
    let head = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"write_file\",\"arguments\":\"\"}}]}}]}\n\n";
    let fragment = format!(
        "data: {}\n\n",
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": piece()}}]}}]})
    );
    // Ollama sends each call whole, in one line: many of them add up.
    let call = format!(
        "{}\n",
        json!({"message": {"content": "", "tool_calls": [{"function": {"name": "write_file", "arguments": {"text": piece()}}}]}, "done": false})
    );
    let mut limits = small();
    limits.tool_calls = 10_000;
    for (api, head, unit, done) in [
        (Api::OpenAi, head, fragment, OPENAI_DONE),
        (Api::Ollama, "", call, OLLAMA_DONE),
    ] {
        let floods = 400;
        let reply =
            Reply::chunks("text/plain", vec![head.as_bytes().to_vec()]).flood(&unit, floods, done);
        let (error, _, sent) = ask(api, limits, reply);
        assert!(
            matches!(&error, Error::ReplyTooLarge { limit: Limit::Arguments(bytes), .. } if *bytes == MIB),
            "{api}: {error}"
        );
        assert!(
            sent < total(&unit, floods) / 2,
            "{api}: read on to {sent} bytes"
        );
    }
}

#[test]
fn endless_tool_calls_stop_at_the_call_limit_for_both_apis() {
    let openai = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":{n},\"function\":{\"name\":\"read_file\",\"arguments\":\"{}\"}}]}}]}\n\n";
    let ollama = "{\"message\":{\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"read_file\",\"arguments\":{\"path\":\"{n}\"}}}]},\"done\":false}\n";
    for (api, unit, done) in [
        (Api::OpenAi, openai, OPENAI_DONE),
        (Api::Ollama, ollama, OLLAMA_DONE),
    ] {
        let floods = 200_000;
        let reply = Reply::chunks("text/plain", Vec::new()).flood(unit, floods, done);
        let (error, _, sent) = ask(api, small(), reply);
        assert!(
            matches!(
                error,
                Error::ReplyTooLarge {
                    limit: Limit::ToolCalls(16),
                    ..
                }
            ),
            "{api}: {error}"
        );
        assert!(
            sent < total(unit, floods) / 2,
            "{api}: read on to {sent} bytes"
        );
    }
}

#[test]
fn a_line_without_end_stops_at_the_line_limit_for_both_apis() {
    let endless = "x".repeat(64 * 1024);
    let ollama_head = "{\"message\":{\"content\":\"";
    let openai_head = "data: {\"choices\":[{\"delta\":{\"content\":\"";
    for (api, head) in [(Api::Ollama, ollama_head), (Api::OpenAi, openai_head)] {
        let floods = 400;
        let reply = Reply::chunks("text/plain", vec![head.as_bytes().to_vec()]).flood(
            &endless,
            floods,
            "\"}}]}\n\n",
        );
        let (error, _, sent) = ask(api, small(), reply);
        assert!(
            matches!(&error, Error::ReplyTooLarge { limit: Limit::Line(bytes), .. } if *bytes == 2 * MIB),
            "{api}: {error}"
        );
        assert!(
            sent < total(&endless, floods) / 2,
            "{api}: read on to {sent} bytes"
        );
    }
}

#[test]
fn an_event_of_endless_short_data_lines_stops_at_the_line_limit() {
    let unit = format!("data: {}\n", "y".repeat(1000));
    let floods = 30_000;
    let reply = Reply::chunks("text/event-stream", Vec::new()).flood(&unit, floods, "\n");
    let (error, _, sent) = ask(Api::OpenAi, small(), reply);
    assert!(
        matches!(
            error,
            Error::ReplyTooLarge {
                limit: Limit::Line(_),
                ..
            }
        ),
        "{error}"
    );
    assert!(sent < total(&unit, floods) / 2, "read on to {sent} bytes");
}

#[test]
fn a_body_of_nothing_but_keep_alives_stops_at_the_body_limit_for_both_apis() {
    // Nothing here is held; the limit bounds the time and bandwidth such a server takes.
    let comment = format!(": {}\n\n", "keep-alive ".repeat(6000));
    let blank = "\n".repeat(64 * 1024);
    for (api, unit, done) in [
        (Api::OpenAi, comment, OPENAI_DONE),
        (Api::Ollama, blank, OLLAMA_DONE),
    ] {
        let floods = 2000; // over 100 MB
        let reply = Reply::chunks("text/plain", Vec::new()).flood(&unit, floods, done);
        let (error, _, sent) = ask(api, small(), reply);
        assert!(
            matches!(error, Error::ReplyTooLarge { limit: Limit::Body(bytes), .. } if bytes == 32 * MIB as u64),
            "{api}: {error}"
        );
        assert!(
            sent < total(&unit, floods) / 2,
            "{api}: read on to {sent} bytes"
        );
    }
}

#[test]
fn replies_within_the_limits_are_taken_whole() {
    // The limits stop floods, not honest work: a reply just under each is read as it came.
    let unit = openai_text_unit();
    let reply = Reply::chunks("text/event-stream", Vec::new()).flood(&unit, 15, OPENAI_DONE);
    let server = stub();
    server.reply("POST", "/v1/chat/completions", reply);
    let client = limited(Api::OpenAi, &server, small());
    let response = client.chat(&[Message::user("hi")], &[], |_| {}).unwrap();
    assert!(response.content.len() > 15 * 64 * 1024 && response.content.len() <= MIB);
}
