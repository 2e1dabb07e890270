//! Shared by the integration tests: fixtures, tools, and clients aimed at a stub server.

// Each test file uses a different part of this module.
#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use harness_ollama::{Api, Client, Config, Retry};
use harness_stub_server::{Request, StubServer};
use serde_json::{Value, json};

/// The model the fixtures were recorded for.
pub(crate) const MODEL: &str = "qwen2.5-coder:7b";

/// The bytes of `tests/fixtures/<name>`.
pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("reading {}: {error}", path.display()))
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
