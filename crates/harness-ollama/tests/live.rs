//! A real tool-calling round trip against a real model server, when one is named.
//!
//! Opt in with `HARNESS_LIVE_URL` (the server's address) and `HARNESS_LIVE_API`
//! (`ollama`, the default, or `openai`); `HARNESS_LIVE_MODEL` picks the model (default
//! `qwen2.5-coder:7b`; llama.cpp's server ignores it). Without `HARNESS_LIVE_URL` the test
//! says so and passes. For a server on any machine: `cargo xtask local-model`, then
//!
//! ```sh
//! HARNESS_LIVE_URL=http://127.0.0.1:8080 HARNESS_LIVE_API=openai \
//!     cargo test -p harness-ollama --test live -- --nocapture
//! ```

// The live test reports what the server did: its answers and its speed.
#![allow(clippy::print_stdout)]

use std::time::Duration;

use harness_ollama::{Api, Client, Config, DEFAULT_MODEL, Message};
use serde_json::json;

#[test]
fn a_real_tool_calling_round_trip() {
    let Ok(url) = std::env::var("HARNESS_LIVE_URL") else {
        println!(
            "live test skipped: set HARNESS_LIVE_URL (and HARNESS_LIVE_API=ollama|openai) to run \
             a tool-calling round trip against a real server"
        );
        return;
    };
    let api: Api = std::env::var("HARNESS_LIVE_API")
        .unwrap_or_else(|_| "ollama".to_owned())
        .parse()
        .unwrap();
    let model = std::env::var("HARNESS_LIVE_MODEL").unwrap_or_else(|_| DEFAULT_MODEL.to_owned());
    let mut config = Config::new(api, model);
    config.host = url;
    config.temperature = Some(0.0);
    config.seed = Some(42);
    config.max_output_tokens = Some(200);
    config.max_context_length = 8192;
    config.idle_timeout = Duration::from_secs(900);
    let client = Client::new(config).unwrap();
    println!("server: {} ({api})", client.base_url());
    println!("context length: {}", client.context_length().unwrap());

    let tools = [json!({
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file from the user's project and return its contents.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "Path of the file."}},
                "required": ["path"],
            },
        },
    })];
    let mut conversation = vec![
        // Small models repeat a call unless told what to do with its result.
        Message::system(
            "You are a helpful assistant. You cannot see the user's files: when you need one, \
             call read_file. When you have a tool result, answer the user's question in one \
             sentence without calling tools again.",
        ),
        Message::user("Use the read_file tool to read notes.txt, then tell me its secret word."),
    ];

    let first = client
        .chat(&conversation, &tools, |text| print!("{text}"))
        .unwrap();
    println!(
        "\n-- first answer: {:?}, usage {:?}",
        first.finish, first.usage
    );
    report_speed(&first.usage);
    let call = first
        .tool_calls
        .first()
        .unwrap_or_else(|| panic!("the model called no tool; it said {:?}", first.content));
    println!(
        "-- tool call: {} {} ({:?})",
        call.name, call.arguments, call.origin
    );
    assert_eq!(call.name, "read_file");
    assert!(
        call.arguments["path"]
            .as_str()
            .is_some_and(|path| path.ends_with("notes.txt")),
        "{}",
        call.arguments
    );

    conversation.push(first.to_message());
    conversation.push(Message::tool_result(call, "The secret word is: pelican"));
    let second = client
        .chat(&conversation, &tools, |text| print!("{text}"))
        .unwrap();
    println!(
        "\n-- second answer: {:?}, usage {:?}",
        second.finish, second.usage
    );
    report_speed(&second.usage);
    assert!(
        second.content.to_lowercase().contains("pelican"),
        "{:?}",
        second.content
    );
}

fn report_speed(usage: &harness_ollama::Usage) {
    if let Some(rate) = usage.prompt_tokens_per_second() {
        println!("   prompt: {rate:.1} tokens/s");
    }
    if let Some(rate) = usage.generation_tokens_per_second() {
        println!("   generation: {rate:.1} tokens/s");
    }
}
