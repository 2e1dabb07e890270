//! Shared by the integration tests: fixtures, tools, and clients aimed at a stub server.

// Each test file uses a different part of this module.
#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use harness_ollama::{
    Api, CallOrigin, ChatResponse, Client, Config, Error, Message, Retry, ToolCall,
};
use harness_stub_server::{Reply, Request, StubServer};
use serde_json::{Value, json};

/// The model the fixtures were recorded for.
pub(crate) const MODEL: &str = "qwen2.5-coder:7b";

/// What `/api/show` says of it: a 32k context, and tools.
pub(crate) const QWEN: &str = "ollama/show_qwen2.5-coder.json";

/// The bytes of `tests/fixtures/<name>`.
pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("reading {}: {error}", path.display()))
}

/// A JSON reply with `status` whose body is the fixture `name`.
pub(crate) fn json_file(status: u16, name: &str) -> Reply {
    Reply::json(status, fixture(name))
}

/// A streamed Ollama answer recorded in the fixture `name`.
pub(crate) fn ndjson_file(name: &str) -> Reply {
    Reply::ndjson(fixture(name))
}

/// A streamed OpenAI-compatible answer recorded in the fixture `name`.
pub(crate) fn sse_file(name: &str) -> Reply {
    Reply::sse(fixture(name))
}

/// A stub server on a free loopback port.
pub(crate) fn stub() -> StubServer {
    StubServer::start().expect("binding a loopback port for the stub server")
}

/// Settings aimed at `server`, with short timeouts and quick retries so faults show fast.
pub(crate) fn config(api: Api, server: &StubServer) -> Config {
    let mut config = Config::new(api, MODEL);
    config.host = server.url();
    config.connect_timeout = Duration::from_secs(2);
    config.idle_timeout = Duration::from_secs(10);
    config.total_timeout = Duration::from_secs(30);
    config.retry = Retry::new(3, Duration::from_millis(10), Duration::from_millis(40));
    config
}

pub(crate) fn client(config: Config) -> Client {
    Client::new(config).expect("the stub server's URL is a valid address")
}

/// The JSON body of a recorded request.
pub(crate) fn body(request: &Request) -> Value {
    serde_json::from_slice(&request.body)
        .unwrap_or_else(|error| panic!("{error} in the body {:?}", request.body_text()))
}

/// Method and path of every request the server received, in order.
pub(crate) fn routes(server: &StubServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|request| format!("{} {}", request.method, request.path))
        .collect()
}

pub(crate) fn read_file_tool() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file of the repository.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "Relative path."}},
                "required": ["path"],
            },
        },
    })
}

pub(crate) fn run_command_tool() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": "run_command",
            "description": "Run a program with arguments in the repository.",
            "parameters": {
                "type": "object",
                "properties": {"argv": {"type": "array", "items": {"type": "string"}}},
                "required": ["argv"],
            },
        },
    })
}

/// Runs a chat and collects the text deltas passed to the callback.
pub(crate) fn chat_collecting(
    client: &Client,
    messages: &[harness_ollama::Message],
    tools: &[Value],
) -> (
    Result<harness_ollama::ChatResponse, harness_ollama::Error>,
    Vec<String>,
) {
    let mut deltas = Vec::new();
    let result = client.chat(messages, tools, |text| deltas.push(text.to_owned()));
    (result, deltas)
}

/// An Ollama client aimed at `server` that needs no `/api/show` (its context length is
/// configured), so a test scripts only the chat.
pub(crate) fn ollama(server: &StubServer) -> Config {
    let mut config = config(Api::Ollama, server);
    config.context_length = Some(4096);
    config
}

/// One chat of "hi", no tools offered, with a client of `config`.
pub(crate) fn chat(config: Config) -> Result<ChatResponse, Error> {
    client(config).chat(&[Message::user("hi")], &[], |_| {})
}

/// The call `a_conversation` makes, kept as `origin` says.
pub(crate) fn a_call(origin: CallOrigin) -> ToolCall {
    ToolCall {
        id: "call_0".to_owned(),
        name: "read_file".to_owned(),
        arguments: json!({"path": "src/lib.rs"}),
        origin,
    }
}

/// A system prompt, the user's request, the model's call of `read_file` (see `a_call`)
/// and its result: what both APIs' conversation tests send.
pub(crate) fn a_conversation(origin: CallOrigin) -> [Message; 4] {
    let call = a_call(origin);
    [
        Message::system("You are a careful coding agent."),
        Message::user("Show me src/lib.rs"),
        Message::assistant("", vec![call.clone()]),
        Message::tool_result(&call, "pub fn answer() -> u8 { 42 }"),
    ]
}

/// Checks the answer recorded in both APIs' `chat_text` fixtures: "The tests pass." in
/// three deltas, stopped, 26 prompt and 3 generated tokens. Returns it for the rest.
pub(crate) fn the_tests_pass(
    (result, deltas): (Result<ChatResponse, Error>, Vec<String>),
) -> ChatResponse {
    let response = result.expect("the recorded answer reads");
    assert_eq!(deltas, ["The", " tests", " pass."]);
    assert_eq!(response.content, "The tests pass.");
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.finish, harness_ollama::FinishReason::Stop);
    assert_eq!(response.usage.prompt_tokens, Some(26));
    assert_eq!(response.usage.completion_tokens, Some(3));
    response
}

/// A stub that answers the first `/api/show` with the fixture `show`, so the client learns
/// the model's context length from it; the test scripts the chat.
pub(crate) fn ollama_showing(show: &str) -> StubServer {
    let server = stub();
    server.reply("POST", "/api/show", json_file(200, show));
    server
}

/// A stub that shows the model (32k context, tools) once and answers every chat with
/// Ollama's recorded text answer.
pub(crate) fn ollama_answering_every_chat() -> StubServer {
    let server = ollama_showing(QWEN);
    server.reply_always("POST", "/api/chat", ndjson_file("ollama/chat_text.ndjson"));
    server
}
