//! The OpenAI-compatible API against a stub server replaying recorded server-sent events.

mod support;

use std::time::Duration;

use harness_ollama::{
    Api, CallOrigin, Client, DEFAULT_REPEAT_PENALTY, Error, FinishReason, Message, ToolCall,
};
use harness_stub_server::{Reply, StubServer, closed_port_url};
use serde_json::{Value, json};
use support::{
    MODEL, a_conversation, body, chat, chat_collecting, client, config, fixture, json_file,
    read_file_tool, routes, run_command_tool, sse_file, stub, the_tests_pass,
};

const CHAT: &str = "/v1/chat/completions";

fn serving(chat_fixture: &str) -> StubServer {
    let server = stub();
    server.reply("POST", CHAT, Reply::sse(fixture(chat_fixture)));
    server
}

#[test]
fn plain_text_streams_as_events_and_ends_with_usage() {
    let server = serving("openai/chat_text.sse");
    let client = client(config(Api::OpenAi, &server));

    the_tests_pass(chat_collecting(
        &client,
        &[Message::user("Do the tests pass?")],
        &[],
    ));

    assert_eq!(
        routes(&server),
        [format!("POST {CHAT}")],
        "no context length is asked"
    );
    assert_eq!(
        body(&server.requests()[0]),
        json!({
            "model": MODEL,
            "messages": [{"role": "user", "content": "Do the tests pass?"}],
            "stream": true,
            "stream_options": {"include_usage": true},
            "repeat_penalty": DEFAULT_REPEAT_PENALTY,
        })
    );
}

#[test]
fn tool_call_deltas_are_assembled_by_index_from_argument_fragments() {
    let server = serving("openai/chat_tool_calls.sse");
    let tools = [read_file_tool(), run_command_tool()];

    let response = client(config(Api::OpenAi, &server))
        .chat(&[Message::user("Test it")], &tools, |_| {})
        .unwrap();

    assert_eq!(response.finish, FinishReason::ToolCalls);
    assert_eq!(
        response.tool_calls,
        [
            ToolCall {
                id: "call_DdmO9pD3xa9XTPNJ32zg2hcA".to_owned(),
                name: "read_file".to_owned(),
                arguments: json!({"path": "Cargo.toml"}),
                origin: CallOrigin::Structured,
            },
            ToolCall {
                id: "call_Yq3NJ2ZzL6cRbFsBDiPo0kWu".to_owned(),
                name: "run_command".to_owned(),
                arguments: json!({"argv": ["cargo", "test"]}),
                origin: CallOrigin::Structured,
            },
        ]
    );
    assert_eq!(body(&server.requests()[0])["tools"], json!(tools));
}

#[test]
fn a_fenced_tool_call_from_llama_server_is_recovered_and_its_timings_read() {
    let server = serving("openai/chat_fenced_tool_call.sse");

    let response = client(config(Api::OpenAi, &server))
        .chat(
            &[Message::user("What is in main?")],
            &[read_file_tool()],
            |_| {},
        )
        .unwrap();

    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(response.tool_calls[0].name, "read_file");
    assert_eq!(
        response.tool_calls[0].arguments,
        json!({"path": "src/main.rs"})
    );
    assert_eq!(response.tool_calls[0].origin, CallOrigin::RecoveredFromText);
    assert_eq!(response.usage.prompt_duration, Some(Duration::from_secs(6)));
    assert_eq!(response.usage.prompt_tokens_per_second(), Some(50.0));
    assert_eq!(response.usage.generation_tokens_per_second(), Some(16.0));
}

#[test]
fn a_whole_conversation_is_sent_in_openai_shape_with_sampling() {
    let server = serving("openai/chat_text.sse");
    let mut config = config(Api::OpenAi, &server);
    config.temperature = Some(0.0);
    config.seed = Some(7);
    config.max_output_tokens = Some(300);

    client(config)
        .chat(
            &a_conversation(CallOrigin::RecoveredFromText),
            &[read_file_tool()],
            |_| {},
        )
        .unwrap();

    let sent = body(&server.requests()[0]);
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "system", "content": "You are a careful coding agent."},
            {"role": "user", "content": "Show me src/lib.rs"},
            {"role": "assistant", "content": "", "tool_calls": [{
                "id": "call_0",
                "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\":\"src/lib.rs\"}"},
            }]},
            {"role": "tool", "content": "pub fn answer() -> u8 { 42 }", "tool_call_id": "call_0"},
        ])
    );
    assert_eq!(
        (&sent["temperature"], &sent["seed"], &sent["max_tokens"]),
        (&json!(0.0), &json!(7), &json!(300))
    );
}

#[test]
fn a_resampled_retry_raises_the_temperature_and_draws_a_seed_of_its_own_and_zero_is_a_plain_chat() {
    let server = stub();
    server.reply_always("POST", CHAT, Reply::sse(fixture("openai/chat_text.sse")));
    let mut config = config(Api::OpenAi, &server);
    config.temperature = Some(0.2);
    let client = client(config);
    let conversation = a_conversation(CallOrigin::RecoveredFromText);
    for resample in [0, 1, 1, 2, 9] {
        client
            .chat_resampled(&conversation, &[read_file_tool()], |_| {}, resample)
            .unwrap();
    }
    let sampling: Vec<(Value, Value)> = server
        .requests()
        .iter()
        .map(|request| {
            let sent = body(request);
            (sent["temperature"].clone(), sent["seed"].clone())
        })
        .collect();
    let near = |value: &Value, expected: f64| (value.as_f64().unwrap() - expected).abs() < 1e-9;
    assert_eq!(
        sampling[0],
        (json!(0.2), Value::Null),
        "resample 0 is the plain chat"
    );
    for (at, temperature) in [(1, 0.3), (2, 0.3), (3, 0.4), (4, 1.0)] {
        assert!(near(&sampling[at].0, temperature), "{sampling:?}");
    }
    // Every retry draws its own seed, the same retry asked twice included, and one a
    // 32-bit seed holds.
    let seeds: Vec<u64> = sampling[1..]
        .iter()
        .map(|(_, seed)| seed.as_u64().expect("a seed"))
        .collect();
    assert!(seeds.iter().all(|&seed| seed <= 0x7fff_ffff), "{seeds:?}");
    let distinct: std::collections::BTreeSet<u64> = seeds.iter().copied().collect();
    assert_eq!(distinct.len(), seeds.len(), "{seeds:?}");
}

#[test]
fn a_base_url_ending_in_v1_and_an_api_key_are_accepted() {
    let server = serving("openai/chat_text.sse");
    let mut config = config(Api::OpenAi, &server);
    config.host = format!("{}/v1/", server.url());
    config.api_key = Some("sk-local".to_owned());

    let client = client(config);
    client.chat(&[Message::user("hi")], &[], |_| {}).unwrap();

    assert_eq!(client.base_url(), server.url());
    assert_eq!(server.requests()[0].path, CHAT);
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer sk-local")
    );
}

#[test]
fn model_info_prefers_the_servers_context_length_to_the_trained_one() {
    let server = stub();
    server.reply_always(
        "GET",
        "/v1/models",
        json_file(200, "openai/models_llama_server.json"),
    );
    server.reply_always("GET", "/props", json_file(200, "openai/props.json"));
    let client = client(config(Api::OpenAi, &server));

    let info = client.model_info().unwrap();

    assert_eq!(info.context_length, Some(8192));
    assert_eq!(
        info.supports_tools(),
        Some(true),
        "llama.cpp's chat template takes tools"
    );
    assert_eq!(client.context_length().unwrap(), 8192);
}

#[test]
fn without_props_the_listed_context_length_is_used_and_capped() {
    let server = stub();
    server.reply_always(
        "GET",
        "/v1/models",
        json_file(200, "openai/models_llama_server.json"),
    );
    let client = client(config(Api::OpenAi, &server));

    let info = client.model_info().unwrap();
    assert_eq!(info.context_length, Some(32768));
    assert_eq!(info.supports_tools(), None, "the API does not say");
    assert_eq!(
        client.context_length().unwrap(),
        16384,
        "the default maximum"
    );
    assert_eq!(
        client.list_models().unwrap(),
        ["qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"]
    );
    assert_eq!(client.version().unwrap(), None);
}

#[test]
fn a_model_the_server_does_not_serve_is_named_with_those_it_does() {
    let server = stub();
    server.reply(
        "POST",
        CHAT,
        json_file(404, "openai/error_model_not_found.json"),
    );
    server.reply(
        "GET",
        "/v1/models",
        Reply::json(200, r#"{"data":[{"id":"a"},{"id":"b"}]}"#),
    );
    let mut config = config(Api::OpenAi, &server);
    config.model = "gpt-9".to_owned();

    let error = chat(config).unwrap_err();

    assert_eq!(
        error.to_string(),
        "the server does not serve model \"gpt-9\": pick one it serves (a, b)"
    );
}

#[test]
fn an_error_status_carries_the_servers_message() {
    let server = stub();
    server.reply(
        "POST",
        CHAT,
        json_file(400, "openai/error_bad_request.json"),
    );

    let error = chat(config(Api::OpenAi, &server)).unwrap_err();

    assert_eq!(
        error.to_string(),
        format!(
            "{}{CHAT} answered 400: the request exceeds the available context size, try \
             increasing it",
            server.url()
        )
    );
}

#[test]
fn a_wrong_base_url_is_explained() {
    let server = stub();
    let error = chat(config(Api::OpenAi, &server)).unwrap_err();

    assert!(matches!(error, Error::EndpointNotFound { .. }), "{error:?}");
    assert!(error.to_string().contains("check the base URL"), "{error}");
}

#[test]
fn connection_refused_names_the_base_url() {
    let url = closed_port_url().unwrap();
    let mut config = harness_ollama::Config::new(Api::OpenAi, "m");
    config.host = url.clone();
    config.retry = harness_ollama::Retry::NONE;

    let error = Client::new(config)
        .unwrap()
        .chat(&[], &[], |_| {})
        .unwrap_err();

    assert_eq!(
        error.to_string(),
        format!(
            "no OpenAI-compatible server at {url}: start it (llama-server, vLLM, LM Studio, ...) \
             or pass the base URL it listens on"
        )
    );
}

/// How strict servers refuse a field they do not know: OpenAI's own wording, and a
/// validation error of a Python server that forbids extra fields.
const REFUSALS: [(u16, &str); 2] = [
    (
        400,
        r#"{"error":{"message":"Unrecognized request argument supplied: repeat_penalty","type":"invalid_request_error","param":null,"code":null}}"#,
    ),
    (
        422,
        r#"{"detail":[{"type":"extra_forbidden","loc":["body","repeat_penalty"],"msg":"Extra inputs are not permitted"}]}"#,
    ),
];

#[test]
fn a_server_that_refuses_repeat_penalty_is_asked_again_without_it_and_not_sent_it_again() {
    for (status, refusal) in REFUSALS {
        let server = stub();
        server.reply("POST", CHAT, Reply::json(status, refusal));
        server.reply_always("POST", CHAT, sse_file("openai/chat_text.sse"));
        let client = client(config(Api::OpenAi, &server));

        let first = client.chat(&[Message::user("hi")], &[], |_| {}).unwrap();
        client.chat(&[Message::user("again")], &[], |_| {}).unwrap();

        assert_eq!(first.content, "The tests pass.");
        let bodies: Vec<_> = server.requests().iter().map(body).collect();
        assert_eq!(bodies.len(), 3, "refused, asked again, then the next chat");
        assert_eq!(bodies[0]["repeat_penalty"], json!(DEFAULT_REPEAT_PENALTY));
        assert_eq!(bodies[1].get("repeat_penalty"), None);
        assert_eq!(bodies[1]["messages"], bodies[0]["messages"]);
        assert_eq!(bodies[2].get("repeat_penalty"), None, "remembered");
    }
}

#[test]
fn a_refusal_that_names_no_field_of_ours_is_reported_and_not_retried() {
    let server = stub();
    server.reply_always(
        "POST",
        CHAT,
        Reply::json(
            400,
            r#"{"error":{"message":"Unrecognized request argument supplied: foo"}}"#,
        ),
    );
    let mut config = config(Api::OpenAi, &server);
    config.repeat_penalty = None;
    server.reply(
        "POST",
        CHAT,
        Reply::json(
            400,
            r#"{"error":{"message":"Unrecognized request argument supplied: repeat_penalty"}}"#,
        ),
    );

    // Without a repeat penalty configured, a refusal naming it is not ours to work around.
    let error = chat(config).unwrap_err();
    assert!(
        matches!(error, Error::Status { status: 400, .. }),
        "{error:?}"
    );
    let error = chat(support::config(Api::OpenAi, &server)).unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("Unrecognized request argument supplied: foo"),
        "{error}"
    );
    assert_eq!(server.requests().len(), 2, "neither is sent again");
}
