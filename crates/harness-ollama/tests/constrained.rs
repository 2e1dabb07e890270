//! Constrained replies over a real socket: what each API is sent, how the replies read, a
//! server that refuses, and the probe.

mod support;

use harness_ollama::{
    Api, CallOrigin, Config, ConstraintSupport, Error, FinishReason, Message, ReplyFormat,
};
use harness_stub_server::{Reply, StubServer};
use serde_json::{Value, json};
use support::{body, client, config, read_file_tool, run_command_tool, stub};

const OLLAMA_CHAT: &str = "/api/chat";
const OPENAI_CHAT: &str = "/v1/chat/completions";

fn constrained(api: Api, server: &StubServer) -> Config {
    let mut config = config(api, server);
    config.context_length = Some(4096);
    config.reply_format = ReplyFormat::Constrained;
    config
}

/// An Ollama stream of `text` in pieces of 7 bytes, then the final chunk.
fn ollama_reply(text: &str) -> Reply {
    let mut body = String::new();
    for piece in pieces(text) {
        body += &format!(
            "{}\n",
            json!({"message": {"content": piece}, "done": false})
        );
    }
    body += "{\"message\":{\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n";
    Reply::ndjson(body)
}

/// An OpenAI-compatible stream of `text` in pieces of 7 bytes, then the finish.
fn openai_reply(text: &str) -> Reply {
    let mut body = String::new();
    for piece in pieces(text) {
        let chunk = json!({"choices": [{"delta": {"content": piece}, "finish_reason": null}]});
        body += &format!("data: {chunk}\n\n");
    }
    body += "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    Reply::sse(body)
}

fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(7)
        .map(|piece| piece.iter().collect())
        .collect()
}

fn expected_schema() -> Value {
    let form = |tool: Value| {
        json!({
            "type": "object",
            "properties": {
                "name": {"const": tool["function"]["name"]},
                "arguments": tool["function"]["parameters"],
            },
            "required": ["name", "arguments"],
            "additionalProperties": false,
        })
    };
    json!({"anyOf": [
        form(read_file_tool()),
        form(run_command_tool()),
        {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
            "additionalProperties": false,
        },
    ]})
}

const CALL: &str =
    r#"{"name": "run_command", "arguments": {"argv": ["python3", "-m", "unittest"]}}"#;

#[test]
fn ollama_is_sent_the_schema_as_format_and_the_tools_in_the_system_message() {
    let server = stub();
    server.reply("POST", OLLAMA_CHAT, ollama_reply(CALL));
    let tools = [read_file_tool(), run_command_tool()];

    let response = client(constrained(Api::Ollama, &server))
        .chat(
            &[
                Message::system("You fix bugs."),
                Message::user("Run the tests"),
            ],
            &tools,
            |_| {},
        )
        .unwrap();

    let sent = body(&server.requests()[0]);
    assert_eq!(sent["format"], expected_schema());
    assert_eq!(sent.get("tools"), None, "tools go in the system message");
    let system = sent["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You fix bugs.\n\nReply with exactly one JSON object"));
    assert!(system.contains("\n- run_command: Run a program with arguments in the repository."));
    assert_eq!(
        sent["messages"][1],
        json!({"role": "user", "content": "Run the tests"})
    );

    assert_eq!(response.tool_calls.len(), 1);
    let call = &response.tool_calls[0];
    assert_eq!(call.name, "run_command");
    assert_eq!(
        call.arguments,
        json!({"argv": ["python3", "-m", "unittest"]})
    );
    assert_eq!(call.origin, CallOrigin::Constrained);
    assert_eq!(response.finish, FinishReason::Stop);
}

#[test]
fn an_openai_compatible_server_is_sent_a_json_schema_response_format() {
    let server = stub();
    server.reply("POST", OPENAI_CHAT, openai_reply(CALL));
    let tools = [read_file_tool(), run_command_tool()];

    let response = client(constrained(Api::OpenAi, &server))
        .chat(&[Message::user("Run the tests")], &tools, |_| {})
        .unwrap();

    let sent = body(&server.requests()[0]);
    assert_eq!(
        sent["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "reply", "schema": expected_schema()}})
    );
    assert_eq!(sent.get("tools"), None);
    assert_eq!(sent["messages"][0]["role"], json!("system"), "added first");
    assert_eq!(response.tool_calls[0].name, "run_command");
    assert_eq!(response.tool_calls[0].origin, CallOrigin::Constrained);
}

#[test]
fn a_final_answer_reads_as_text_even_when_it_quotes_a_call() {
    let answer = r#"Done. I ran {"name": "read_file", "arguments": {"path": "a"}} first."#;
    let reply = json!({"answer": answer}).to_string();
    for api in [Api::Ollama, Api::OpenAi] {
        let server = stub();
        let (path, reply) = match api {
            Api::Ollama => (OLLAMA_CHAT, ollama_reply(&reply)),
            Api::OpenAi => (OPENAI_CHAT, openai_reply(&reply)),
        };
        server.reply("POST", path, reply);

        let response = client(constrained(api, &server))
            .chat(&[Message::user("go")], &[read_file_tool()], |_| {})
            .unwrap();

        assert_eq!(response.content, answer, "{api}");
        assert!(
            response.tool_calls.is_empty(),
            "{api}: an answer is not a call"
        );
        assert_eq!(response.to_message().content, answer);
    }
}

#[test]
fn free_replies_send_neither_format_nor_response_format() {
    let server = stub();
    server.reply("POST", OLLAMA_CHAT, ollama_reply("hi"));
    server.reply("POST", OPENAI_CHAT, openai_reply("hi"));
    let mut ollama = config(Api::Ollama, &server);
    ollama.context_length = Some(4096);
    client(ollama)
        .chat(&[Message::user("go")], &[read_file_tool()], |_| {})
        .unwrap();
    client(config(Api::OpenAi, &server))
        .chat(&[Message::user("go")], &[read_file_tool()], |_| {})
        .unwrap();

    for request in server.requests() {
        let sent = body(&request);
        assert_eq!(sent.get("format"), None);
        assert_eq!(sent.get("response_format"), None);
        assert_eq!(sent["tools"], json!([read_file_tool()]));
        assert_eq!(sent["messages"], json!([{"role": "user", "content": "go"}]));
    }
}

#[test]
fn a_server_that_refuses_the_constraint_gives_its_own_error() {
    let refusals = [
        (
            Api::Ollama,
            OLLAMA_CHAT,
            r#"{"error":"invalid format: expected \"json\" or a JSON schema"}"#,
        ),
        (
            Api::OpenAi,
            OPENAI_CHAT,
            r#"{"error":{"code":400,"message":"response_format type must be text or json_object","type":"invalid_request_error"}}"#,
        ),
    ];
    for (api, path, refusal) in refusals {
        let server = stub();
        server.reply("POST", path, Reply::json(400, refusal));

        let error = client(constrained(api, &server))
            .chat(&[Message::user("go")], &[read_file_tool()], |_| {})
            .unwrap_err();

        let Error::ConstrainedRepliesRefused { url, message } = &error else {
            panic!("{api}: {error:?}");
        };
        assert_eq!(url, &format!("{}{path}", server.url()));
        assert!(message.contains("format"), "{message}");
        assert!(
            error.to_string().contains("refused constrained replies")
                && error
                    .to_string()
                    .contains("use free replies with this server"),
            "{error}"
        );
        assert_eq!(server.requests().len(), 1, "not retried");
    }
}

#[test]
fn other_errors_of_a_constrained_chat_stay_what_they_are() {
    let server = stub();
    server.reply(
        "POST",
        OPENAI_CHAT,
        Reply::json(
            400,
            r#"{"error":{"message":"the request exceeds the available context size"}}"#,
        ),
    );

    let error = client(constrained(Api::OpenAi, &server))
        .chat(&[Message::user("go")], &[], |_| {})
        .unwrap_err();

    assert!(
        matches!(error, Error::Status { status: 400, .. }),
        "{error:?}"
    );
}

#[test]
fn the_probe_tells_supported_from_ignored_from_refused() {
    let cases = [
        (
            ollama_reply(r#"{"answer": "Hel"#),
            ConstraintSupport::Supported,
        ),
        (
            ollama_reply("Hello! How can"),
            ConstraintSupport::Ignored {
                reply: "Hello! How can".to_owned(),
            },
        ),
        (
            Reply::json(
                400,
                r#"{"error":"invalid format: expected \"json\" or a JSON schema"}"#,
            ),
            ConstraintSupport::Refused {
                message: "invalid format: expected \"json\" or a JSON schema".to_owned(),
            },
        ),
    ];
    for (reply, expected) in cases {
        let server = stub();
        server.reply("POST", OLLAMA_CHAT, reply);
        // The probe is asked of a client made for free replies, with its usual settings.
        let mut config = config(Api::Ollama, &server);
        config.context_length = Some(4096);
        config.temperature = Some(0.0);

        let support = client(config).probe_constrained_replies().unwrap();

        assert_eq!(support, expected);
        assert_eq!(
            support.is_supported(),
            expected == ConstraintSupport::Supported
        );
        let sent = body(&server.requests()[0]);
        assert_eq!(
            sent["format"]["anyOf"][0]["required"],
            json!(["answer"]),
            "only an answer is offered"
        );
        assert_eq!(sent["options"]["num_predict"], json!(8), "a tiny request");
        assert_eq!(
            sent["options"]["num_ctx"],
            json!(4096),
            "as every chat, no reload"
        );
        assert_eq!(sent["options"]["temperature"], json!(0.0));
    }
}

#[test]
fn the_probe_of_an_openai_compatible_server_sends_a_response_format() {
    let server = stub();
    server.reply("POST", OPENAI_CHAT, openai_reply("{\"answer\""));

    let support = client(config(Api::OpenAi, &server))
        .probe_constrained_replies()
        .unwrap();

    assert_eq!(support, ConstraintSupport::Supported);
    assert_eq!(support.to_string(), "constrained replies: supported");
    let sent = body(&server.requests()[0]);
    assert_eq!(sent["response_format"]["type"], json!("json_schema"));
    assert_eq!(sent["max_tokens"], json!(8));
}

#[test]
fn the_probe_reports_a_server_that_is_not_there_as_an_error() {
    let mut config = Config::new(Api::Ollama, "m");
    config.host = harness_stub_server::closed_port_url().unwrap();
    config.retry = harness_ollama::Retry::NONE;
    config.context_length = Some(4096);

    let error = client(config).probe_constrained_replies().unwrap_err();

    assert!(
        matches!(error, Error::ConnectionRefused { .. }),
        "{error:?}"
    );
}
