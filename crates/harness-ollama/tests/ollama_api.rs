//! The Ollama API against a stub server replaying recorded responses: what the client
//! sends, and what it makes of each answer.

mod support;

use std::time::Duration;

use harness_ollama::{
    Api, CallOrigin, DEFAULT_REPEAT_PENALTY, Error, Limit, Message, TextToolCalls, ToolCall,
};
use harness_stub_server::{Reply, StubServer};
use serde_json::json;
use support::{
    MODEL, QWEN, a_conversation, body, chat, chat_collecting, client, config, fixture, json_file,
    ndjson_file, ollama, ollama_answering_every_chat, ollama_showing, read_file_tool, routes,
    run_command_tool, stub, the_tests_pass,
};

/// A stub that knows the model (32k context, tools) and answers one chat with `fixture`.
fn serving(chat_fixture: &str) -> StubServer {
    let server = ollama_showing(QWEN);
    server.reply("POST", "/api/chat", Reply::ndjson(fixture(chat_fixture)));
    server
}

#[test]
fn plain_text_streams_in_deltas_and_ends_with_the_final_statistics() {
    let server = serving("ollama/chat_text.ndjson");
    let client = client(config(Api::Ollama, &server));

    let response = the_tests_pass(chat_collecting(
        &client,
        &[Message::user("Do the tests pass?")],
        &[],
    ));

    assert_eq!(
        response.usage.total_duration,
        Some(Duration::from_nanos(4_883_583_458))
    );
    assert_eq!(
        response.usage.load_duration,
        Some(Duration::from_nanos(1_334_875))
    );
    assert_eq!(
        response.usage.prompt_duration,
        Some(Duration::from_nanos(342_546_000))
    );
    assert_eq!(
        response.usage.generation_duration,
        Some(Duration::from_nanos(4_535_599_000))
    );

    assert_eq!(routes(&server), ["POST /api/show", "POST /api/chat"]);
    let requests = server.requests();
    assert_eq!(body(&requests[0]), json!({"model": MODEL}));
    assert_eq!(
        body(&requests[1]),
        json!({
            "model": MODEL,
            "messages": [{"role": "user", "content": "Do the tests pass?"}],
            "stream": true,
            // The model knows 32768 tokens; the default maximum is 16384.
            "options": {"num_ctx": 16384, "repeat_penalty": DEFAULT_REPEAT_PENALTY},
        })
    );
    assert_eq!(requests[1].header("content-type"), Some("application/json"));
}

#[test]
fn one_tool_call_is_returned_with_the_tools_sent() {
    let server = serving("ollama/chat_tool_call.ndjson");
    let client = client(config(Api::Ollama, &server));
    let tools = [read_file_tool(), run_command_tool()];

    let response = client
        .chat(&[Message::user("Show me src/lib.rs")], &tools, |_| {})
        .unwrap();

    assert_eq!(
        response.tool_calls,
        [ToolCall {
            id: "call_0".to_owned(),
            name: "read_file".to_owned(),
            arguments: json!({"path": "src/lib.rs"}),
            origin: CallOrigin::Structured,
        }]
    );
    assert_eq!(response.content, "");
    let sent = body(&server.requests_to("/api/chat")[0]);
    assert_eq!(sent["tools"], json!(tools));
}

#[test]
fn several_tool_calls_keep_their_order_and_ids() {
    let server = serving("ollama/chat_tool_calls.ndjson");
    let client = client(config(Api::Ollama, &server));

    let response = client
        .chat(
            &[Message::user("Test it")],
            &[read_file_tool(), run_command_tool()],
            |_| {},
        )
        .unwrap();

    let calls: Vec<(&str, &str, serde_json::Value)> = response
        .tool_calls
        .iter()
        .map(|call| (call.id.as_str(), call.name.as_str(), call.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_x1", "read_file", json!({"path": "Cargo.toml"})),
            ("call_x2", "run_command", json!({"argv": ["cargo", "test"]})),
        ]
    );
    assert_eq!(response.usage.completion_tokens, Some(51));
}

#[test]
fn a_tool_call_written_as_fenced_text_is_recovered_and_the_text_kept() {
    let server = serving("ollama/chat_fenced_tool_call.ndjson");
    let client = client(config(Api::Ollama, &server));

    let (result, deltas) = chat_collecting(
        &client,
        &[Message::user("What is in main?")],
        &[read_file_tool()],
    );
    let response = result.unwrap();

    assert_eq!(deltas.len(), 6, "the text still streams: {deltas:?}");
    assert!(
        response
            .content
            .starts_with("I'll read the file first.\n\n```json\n{")
    );
    assert_eq!(
        response.tool_calls,
        [ToolCall {
            id: "call_0".to_owned(),
            name: "read_file".to_owned(),
            arguments: json!({"path": "src/main.rs"}),
            origin: CallOrigin::RecoveredFromText,
        }]
    );
}

#[test]
fn recovery_can_be_turned_off() {
    let server = serving("ollama/chat_fenced_tool_call.ndjson");
    let mut config = config(Api::Ollama, &server);
    config.text_tool_calls = TextToolCalls::LeaveAsText;

    let response = client(config)
        .chat(
            &[Message::user("What is in main?")],
            &[read_file_tool()],
            |_| {},
        )
        .unwrap();

    assert!(response.tool_calls.is_empty());
    assert!(response.content.contains("\"read_file\""));
}

#[test]
fn a_whole_conversation_is_sent_in_ollama_shape_with_sampling_options() {
    let server = serving("ollama/chat_text.ndjson");
    let mut config = config(Api::Ollama, &server);
    config.temperature = Some(0.2);
    config.seed = Some(42);
    config.max_output_tokens = Some(512);
    config.keep_alive = Some("30m".to_owned());

    client(config)
        .chat(
            &a_conversation(CallOrigin::Structured),
            &[read_file_tool()],
            |_| {},
        )
        .unwrap();

    let sent = body(&server.requests_to("/api/chat")[0]);
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "system", "content": "You are a careful coding agent."},
            {"role": "user", "content": "Show me src/lib.rs"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "read_file", "arguments": {"path": "src/lib.rs"}}}
            ]},
            {"role": "tool", "content": "pub fn answer() -> u8 { 42 }", "tool_name": "read_file"},
        ])
    );
    assert_eq!(
        sent["options"],
        json!({
            "num_ctx": 16384, "temperature": 0.2, "seed": 42, "num_predict": 512,
            "repeat_penalty": DEFAULT_REPEAT_PENALTY,
        })
    );
    assert_eq!(sent["keep_alive"], json!("30m"));
    assert_eq!(sent["stream"], json!(true));
}

#[test]
fn a_configured_context_length_is_sent_without_asking_the_server() {
    let server = stub();
    server.reply("POST", "/api/chat", ndjson_file("ollama/chat_text.ndjson"));
    let mut config = config(Api::Ollama, &server);
    config.context_length = Some(12_000);

    let client = client(config);
    client.chat(&[Message::user("hi")], &[], |_| {}).unwrap();

    assert_eq!(routes(&server), ["POST /api/chat"]);
    assert_eq!(
        body(&server.requests()[0])["options"]["num_ctx"],
        json!(12_000)
    );
    assert_eq!(client.context_length().unwrap(), 12_000);
}

#[test]
fn the_context_length_is_capped_by_the_users_maximum_whatever_its_source() {
    let server = stub();
    server.reply("POST", "/api/chat", ndjson_file("ollama/chat_text.ndjson"));
    let mut config = config(Api::Ollama, &server);
    config.context_length = Some(65_536);
    config.max_context_length = 8192;

    chat(config).unwrap();

    assert_eq!(
        body(&server.requests()[0])["options"]["num_ctx"],
        json!(8192)
    );
}

#[test]
fn a_model_with_a_smaller_context_gets_its_own_length() {
    let server = ollama_showing("ollama/show_small_context.json");
    server.reply("POST", "/api/chat", ndjson_file("ollama/chat_text.ndjson"));

    chat(config(Api::Ollama, &server)).unwrap();

    assert_eq!(
        body(&server.requests_to("/api/chat")[0])["options"]["num_ctx"],
        json!(4096)
    );
}

#[test]
fn the_context_length_is_asked_once_per_client() {
    let server = ollama_answering_every_chat();
    let client = client(config(Api::Ollama, &server));

    client.chat(&[Message::user("one")], &[], |_| {}).unwrap();
    client.chat(&[Message::user("two")], &[], |_| {}).unwrap();

    assert_eq!(
        routes(&server),
        ["POST /api/show", "POST /api/chat", "POST /api/chat"]
    );
}

#[test]
fn after_model_info_the_context_length_is_not_asked_again() {
    let server = ollama_answering_every_chat();
    let mut config = config(Api::Ollama, &server);
    config.max_context_length = 65_536;
    let client = client(config);

    let info = client.model_info().unwrap();
    let length = client.context_length().unwrap();
    client.chat(&[Message::user("one")], &[], |_| {}).unwrap();

    assert_eq!(Some(length), info.context_length);
    assert_eq!(routes(&server), ["POST /api/show", "POST /api/chat"]);
}

#[test]
fn model_info_gives_the_context_length_and_capabilities() {
    let server = ollama_showing(QWEN);

    let info = client(config(Api::Ollama, &server)).model_info().unwrap();

    assert_eq!(info.name, MODEL);
    assert_eq!(info.context_length, Some(32768));
    assert_eq!(info.capabilities, ["completion", "tools", "insert"]);
    assert_eq!(info.supports_tools(), Some(true));
}

#[test]
fn installed_models_and_the_version_are_listed() {
    let server = stub();
    server.reply("GET", "/api/tags", json_file(200, "ollama/tags.json"));
    server.reply("GET", "/api/version", json_file(200, "ollama/version.json"));
    let client = client(config(Api::Ollama, &server));

    assert_eq!(
        client.list_models().unwrap(),
        ["qwen2.5-coder:7b", "gemma:2b", "llama3.2:latest"]
    );
    assert_eq!(client.version().unwrap().as_deref(), Some("0.9.0"));
}

#[test]
fn a_model_that_is_not_installed_is_named_with_the_pull_command_and_the_installed_ones() {
    let server = stub();
    server.reply(
        "POST",
        "/api/show",
        json_file(404, "ollama/error_model_not_found.json"),
    );
    server.reply("GET", "/api/tags", json_file(200, "ollama/tags.json"));
    let mut config = config(Api::Ollama, &server);
    config.model = "qwen2.5-coder:14b".to_owned();

    let error = chat(config).unwrap_err();

    assert!(matches!(error, Error::ModelNotFound { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "model \"qwen2.5-coder:14b\" is not installed: run \"ollama pull qwen2.5-coder:14b\" \
         (installed: qwen2.5-coder:7b, gemma:2b, llama3.2:latest)"
    );
    assert_eq!(
        routes(&server),
        ["POST /api/show", "GET /api/tags"],
        "no chat was sent"
    );
}

#[test]
fn a_missing_model_reported_by_the_chat_itself_is_explained_the_same_way() {
    let server = stub();
    server.reply(
        "POST",
        "/api/chat",
        json_file(404, "ollama/error_model_not_found.json"),
    );
    server.reply("GET", "/api/tags", Reply::json(200, r#"{"models":[]}"#));
    let mut config = ollama(&server);
    config.model = "qwen2.5-coder:14b".to_owned();

    let error = chat(config).unwrap_err();

    assert_eq!(
        error.to_string(),
        "model \"qwen2.5-coder:14b\" is not installed: run \"ollama pull qwen2.5-coder:14b\" \
         (none are installed)"
    );
}

#[test]
fn a_model_without_tool_support_is_named_with_installed_models_that_have_it() {
    let server = stub();
    server.reply(
        "POST",
        "/api/show",
        json_file(200, "ollama/show_gemma.json"),
    );
    server.reply(
        "POST",
        "/api/chat",
        json_file(400, "ollama/error_no_tools.json"),
    );
    server.reply("GET", "/api/tags", json_file(200, "ollama/tags.json"));
    for show in [
        "show_qwen2.5-coder.json",
        "show_gemma.json",
        "show_llama3.2.json",
    ] {
        server.reply(
            "POST",
            "/api/show",
            json_file(200, &format!("ollama/{show}")),
        );
    }
    let mut config = config(Api::Ollama, &server);
    config.model = "gemma:2b".to_owned();

    let error = client(config)
        .chat(&[Message::user("hi")], &[read_file_tool()], |_| {})
        .unwrap_err();

    assert!(matches!(error, Error::ToolsUnsupported { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "model \"gemma:2b\" does not support tools: use one that does: qwen2.5-coder:7b, \
         llama3.2:latest"
    );
    let shown: Vec<String> = server.requests_to("/api/show")[1..]
        .iter()
        .map(|request| body(request)["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(shown, ["qwen2.5-coder:7b", "gemma:2b", "llama3.2:latest"]);
}

#[test]
fn a_server_error_carries_the_servers_message() {
    let server = stub();
    server.reply(
        "POST",
        "/api/chat",
        json_file(500, "ollama/error_runner_killed.json"),
    );
    let config = ollama(&server);

    let error = chat(config).unwrap_err();

    assert!(
        matches!(error, Error::Status { status: 500, .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "{}/api/chat answered 500: llama runner process has terminated: signal: killed",
            server.url()
        )
    );
}

#[test]
fn a_server_that_is_not_ollama_gets_a_hint_at_the_api() {
    let server = stub();
    server.reply(
        "POST",
        "/api/chat",
        Reply::text(404, fixture("ollama/error_no_route.txt")),
    );
    let config = ollama(&server);

    let error = chat(config).unwrap_err();

    assert_eq!(
        error.to_string(),
        format!(
            "{}/api/chat does not exist (404 page not found): is this an Ollama server? For \
             llama.cpp's llama-server, vLLM or LM Studio use the OpenAI-compatible API",
            server.url()
        )
    );
}

#[test]
fn an_error_in_the_middle_of_the_stream_is_its_own_error() {
    let server = serving("ollama/chat_error_midstream.ndjson");
    let (result, deltas) = chat_collecting(&client(config(Api::Ollama, &server)), &[], &[]);
    let error = result.unwrap_err();

    assert_eq!(deltas, ["Let me"]);
    assert!(matches!(error, Error::StreamError { .. }), "{error:?}");
    assert!(error.to_string().ends_with(
        "reported an error in the middle of its answer: an error was encountered while running \
         the model: unexpected EOF"
    ));
}

#[test]
fn a_malformed_line_is_quoted_in_the_error() {
    let server = serving("ollama/chat_malformed.ndjson");
    let error = client(config(Api::Ollama, &server))
        .chat(&[], &[], |_| {})
        .unwrap_err();

    assert!(matches!(error, Error::MalformedLine { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("sent a malformed stream line (EOF while parsing a string"),
        "{message}"
    );
    assert!(
        message.ends_with(
            r#": {"model":"qwen2.5-coder:7b","message":{"role":"assistant","content":"trunc"#
        ),
        "{message}"
    );
}

#[test]
fn at_most_32_installed_models_are_examined_for_tool_support() {
    let names: Vec<String> = (0..33).map(|n| format!("m{n}")).collect();
    let tags =
        json!({"models": names.iter().map(|name| json!({"name": name})).collect::<Vec<_>>()});
    let server = stub();
    server.reply(
        "POST",
        "/api/chat",
        json_file(400, "ollama/error_no_tools.json"),
    );
    server.reply("GET", "/api/tags", Reply::json(200, tags.to_string()));
    server.reply_always(
        "POST",
        "/api/show",
        json_file(200, "ollama/show_llama3.2.json"),
    );
    let config = ollama(&server);

    let error = client(config)
        .chat(&[], &[read_file_tool()], |_| {})
        .unwrap_err();

    let Error::ToolsUnsupported { with_tools, .. } = error else {
        panic!("{error:?}")
    };
    assert_eq!(with_tools, names[..32]);
    assert_eq!(server.requests_to("/api/show").len(), 32);
}

#[test]
fn structured_calls_leave_calls_written_in_the_text_alone() {
    let stream = concat!(
        r#"{"message":{"content":"{\"name\":\"read_file\",\"arguments\":{\"path\":\"text.rs\"}}","tool_calls":[{"function":{"name":"read_file","arguments":{"path":"structured.rs"}}}]},"done":true}"#,
        "\n"
    );
    let server = stub();
    server.reply("POST", "/api/chat", Reply::ndjson(stream));
    let config = ollama(&server);

    let response = client(config)
        .chat(&[], &[read_file_tool()], |_| {})
        .unwrap();

    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(
        response.tool_calls[0].arguments,
        json!({"path": "structured.rs"})
    );
    assert_eq!(response.tool_calls[0].origin, CallOrigin::Structured);
}

#[test]
fn a_listing_up_to_8_mib_is_read_and_a_larger_one_refused() {
    const LIMIT: usize = 8 * 1024 * 1024;
    let listing = |size: usize| {
        let json = r#"{"models":[]}"#;
        format!("{json}{}", " ".repeat(size - json.len()))
    };
    let server = stub();
    server.reply("GET", "/api/tags", Reply::json(200, listing(LIMIT)));
    server.reply("GET", "/api/tags", Reply::json(200, listing(LIMIT + 1)));
    let client = client(config(Api::Ollama, &server));

    assert_eq!(client.list_models().unwrap(), Vec::<String>::new());
    let error = client.list_models().unwrap_err();
    assert!(
        matches!(
            error,
            Error::ReplyTooLarge {
                limit: Limit::Body(8388608),
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("limit of 8 MiB in all"),
        "{error}"
    );
}
