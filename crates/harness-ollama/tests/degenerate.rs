//! Degenerate output over a real socket: an answer that repeats itself is cut while it
//! streams, and legitimately repetitive code is not.

mod support;

use std::time::Duration;

use harness_ollama::{Api, FinishReason, Message, RepeatedOutput, Repetition};
use harness_stub_server::Reply;
use serde_json::json;
use support::{chat_collecting, client, config, ndjson_file, ollama, stub};

/// Three lines a 1.5B model repeated until its token limit, in the issue's runs.
const LOOP: [&str; 3] = [
    "The function `mean` divides the sum by the count.\n",
    "To fix it, return the sum divided by the length of the list.\n",
    "Here is the corrected code:\n",
];

/// How many lines the scripted server would send: far more than the cut needs.
const LINES_SENT: usize = 600;

/// An Ollama stream of `lines`, one chunk each, then the final chunk.
fn ollama_stream(lines: impl Iterator<Item = String>) -> Vec<u8> {
    let mut body = String::new();
    for line in lines {
        let chunk = json!({"message": {"role": "assistant", "content": line}, "done": false});
        body += &format!("{chunk}\n");
    }
    body += "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"length\",\"eval_count\":1024}\n";
    body.into_bytes()
}

/// An OpenAI-compatible stream of `pieces`, one event each, then the finish and `[DONE]`.
fn openai_stream(pieces: impl Iterator<Item = String>) -> Vec<u8> {
    let mut body = String::new();
    for piece in pieces {
        let chunk =
            json!({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]});
        body += &format!("data: {chunk}\n\n");
    }
    body += "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n";
    body.into_bytes()
}

fn looping_lines() -> impl Iterator<Item = String> {
    std::iter::once("I see the problem.\n".to_owned())
        .chain((0..LINES_SENT).map(|n| LOOP[n % 3].to_owned()))
}

#[test]
fn an_ollama_answer_that_loops_is_cut_within_a_few_copies_and_says_what_repeated() {
    let server = stub();
    // 600 lines, 10 ms apart: six seconds if the client read them all.
    server.reply(
        "POST",
        "/api/chat",
        Reply::ndjson(ollama_stream(looping_lines())).chunk_gap(Duration::from_millis(10)),
    );
    server.reply("POST", "/api/chat", ndjson_file("ollama/chat_text.ndjson"));
    let client = client(ollama(&server));

    let (result, deltas) = chat_collecting(&client, &[Message::user("fix mean")], &[]);
    let response = result.unwrap();

    let unit = LOOP.concat();
    let FinishReason::Repetition(repetition) = &response.finish else {
        panic!("not cut: {:?}", response.finish);
    };
    assert_eq!(repetition.unit, unit);
    assert!(repetition.copies >= Repetition::MIN_COPIES);
    assert_eq!(response.content, format!("I see the problem.\n{unit}"));
    assert!(
        deltas.len() < 20,
        "stopped reading after {} of {LINES_SENT} lines",
        deltas.len()
    );
    assert!(
        repetition.to_string().starts_with(
            "your answer repeated the same 3 lines 5 times in a row and was cut off: \"The function"
        ),
        "{repetition}"
    );

    // The cut connection is not reused: the next answer comes whole on a fresh one.
    let next = client.chat(&[Message::user("hi")], &[], |_| {}).unwrap();
    assert_eq!(next.content, "The tests pass.");
    let connections: Vec<usize> = server.requests().iter().map(|r| r.connection).collect();
    assert_eq!(connections, [0, 1]);
}

#[test]
fn an_openai_answer_that_loops_on_a_phrase_is_cut_and_a_call_in_the_kept_text_recovered() {
    let server = stub();
    let call = "{\"name\": \"read_file\", \"arguments\": {\"path\": \"stats.py\"}}\n";
    let pieces = (0..LINES_SENT).map(|_| call.to_owned());
    server.reply(
        "POST",
        "/v1/chat/completions",
        Reply::sse(openai_stream(pieces)).chunk_gap(Duration::from_millis(10)),
    );

    let (result, deltas) = chat_collecting(
        &client(config(Api::OpenAi, &server)),
        &[Message::user("fix mean")],
        &[support::read_file_tool()],
    );
    let response = result.unwrap();

    assert!(
        matches!(&response.finish, FinishReason::Repetition(r) if r.unit == call),
        "{:?}",
        response.finish
    );
    assert_eq!(response.content, call);
    assert!(deltas.len() < 20, "read {} events", deltas.len());
    assert_eq!(response.tool_calls.len(), 1, "one call, not one per copy");
    assert_eq!(
        response.tool_calls[0].arguments,
        json!({"path": "stats.py"})
    );
}

#[test]
fn with_repetition_allowed_the_whole_loop_is_read() {
    let server = stub();
    server.reply(
        "POST",
        "/api/chat",
        Reply::ndjson(ollama_stream(looping_lines())),
    );
    let mut config = ollama(&server);
    config.repeated_output = RepeatedOutput::Allow;

    let (result, deltas) = chat_collecting(&client(config), &[Message::user("fix mean")], &[]);
    let response = result.unwrap();

    assert_eq!(response.finish, FinishReason::Length);
    assert_eq!(deltas.len(), LINES_SENT + 1);
    assert_eq!(response.usage.completion_tokens, Some(1024));
}

#[test]
fn legitimately_repetitive_code_streams_whole() {
    // A test file as a model writes it: a header, a long import list, 150 similar
    // assertions, a table of zeros, closing lines: repetitive, never a loop.
    let mut lines = vec!["```python\n".to_owned(), "import unittest\n".to_owned()];
    lines.extend((0..40).map(|n| format!("from geometry.shapes{n} import area_{n}\n")));
    lines.push("\n\nclass TestArea(unittest.TestCase):\n".to_owned());
    lines.push("    def test_areas(self):\n".to_owned());
    lines.extend((0..150).map(|n| {
        format!(
            "        self.assertEqual(area_{}({n}), {})\n",
            n % 40,
            n * n
        )
    }));
    lines.push("        grid = [\n".to_owned());
    lines.extend((0..10).map(|_| "            [0, 0, 0, 0, 0, 0, 0, 0],\n".to_owned()));
    lines.push("        ]\n".to_owned());
    lines.extend(["\n".to_owned(), "\n".to_owned(), "\n".to_owned()]);
    lines.push("if __name__ == \"__main__\":\n    unittest.main()\n```\n".to_owned());
    let whole: String = lines.concat();
    let server = stub();
    server.reply(
        "POST",
        "/api/chat",
        Reply::ndjson(ollama_stream(lines.into_iter())),
    );

    let response = client(ollama(&server))
        .chat(&[Message::user("write the tests")], &[], |_| {})
        .unwrap();

    assert_eq!(response.finish, FinishReason::Length);
    assert_eq!(response.content, whole);
}
