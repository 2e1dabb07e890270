//! Faults over a real socket: refused connections, retries, slow and silent servers,
//! streams cut short, and how the body is framed.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use harness_ollama::{Api, Client, Config, Error, Message, Retry};
use harness_stub_server::{Reply, closed_port_url};
use support::{
    chat, chat_collecting, client, config, fixture, json_file, ndjson_file, ollama,
    ollama_answering_every_chat, routes, sse_file, stub,
};

#[test]
fn connection_refused_names_the_server_and_how_to_start_it_after_retrying() {
    let url = closed_port_url().unwrap();
    let mut config = Config::new(Api::Ollama, "m");
    config.host = url.clone();
    config.retry = Retry::new(2, Duration::from_millis(10), Duration::from_millis(10));

    let error = Client::new(config)
        .unwrap()
        .chat(&[], &[], |_| {})
        .unwrap_err();

    assert!(
        matches!(error, Error::ConnectionRefused { .. }),
        "{error:?}"
    );
    assert!(error.is_unreachable());
    assert_eq!(
        error.to_string(),
        format!("no Ollama server at {url}: start it with \"ollama serve\" or set OLLAMA_HOST")
    );
}

#[test]
fn a_503_while_the_model_loads_is_retried_until_the_answer_comes() {
    let server = stub();
    for _ in 0..2 {
        server.reply(
            "POST",
            "/v1/chat/completions",
            json_file(503, "openai/error_loading.json"),
        );
    }
    server.reply(
        "POST",
        "/v1/chat/completions",
        sse_file("openai/chat_text.sse"),
    );

    let response = chat(config(Api::OpenAi, &server)).unwrap();

    assert_eq!(response.content, "The tests pass.");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_503_that_lasts_is_reported_with_the_servers_message() {
    let server = stub();
    server.reply_always(
        "POST",
        "/api/chat",
        Reply::json(503, r#"{"error":"server busy"}"#),
    );
    let mut config = ollama(&server);
    config.retry = Retry::new(1, Duration::ZERO, Duration::ZERO);

    let error = chat(config).unwrap_err();

    assert!(
        matches!(error, Error::Status { status: 503, .. }),
        "{error:?}"
    );
    assert!(error.to_string().ends_with("answered 503: server busy"));
    assert_eq!(server.requests().len(), 2, "one try and one retry");
}

#[test]
fn a_stream_cut_midway_is_an_error_and_never_retried() {
    let server = stub();
    server.reply_always(
        "POST",
        "/api/chat",
        ndjson_file("ollama/chat_text.ndjson").cut_after_chunks(2),
    );

    let (result, deltas) = chat_collecting(&client(ollama(&server)), &[Message::user("hi")], &[]);
    let error = result.unwrap_err();

    assert_eq!(deltas, ["The", " tests"], "what arrived was delivered");
    assert!(matches!(error, Error::StreamCut { .. }), "{error:?}");
    assert!(
        error.to_string().contains("ended before its final chunk"),
        "{error}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "a partial stream is not retried"
    );
}

#[test]
fn an_sse_stream_cut_midway_is_an_error() {
    let server = stub();
    server.reply(
        "POST",
        "/v1/chat/completions",
        sse_file("openai/chat_tool_calls.sse").cut_after_chunks(4),
    );

    let error = chat(config(Api::OpenAi, &server)).unwrap_err();

    assert!(matches!(error, Error::StreamCut { .. }), "{error:?}");
}

#[test]
fn a_slow_first_byte_within_the_idle_timeout_is_waited_for() {
    let server = stub();
    server.reply(
        "POST",
        "/api/chat",
        ndjson_file("ollama/chat_text.ndjson").delay_first_byte(Duration::from_millis(700)),
    );
    let mut config = ollama(&server);
    config.idle_timeout = Duration::from_secs(5);

    assert_eq!(chat(config).unwrap().content, "The tests pass.");
}

#[test]
fn no_first_byte_within_the_idle_timeout_is_an_idle_timeout() {
    let server = stub();
    server.reply(
        "POST",
        "/api/chat",
        ndjson_file("ollama/chat_text.ndjson").delay_first_byte(Duration::from_secs(30)),
    );
    let mut config = ollama(&server);
    config.idle_timeout = Duration::from_millis(300);

    let started = Instant::now();
    let error = chat(config).unwrap_err();

    assert!(
        started.elapsed() < Duration::from_secs(10),
        "it does not wait for the server"
    );
    assert!(matches!(error, Error::IdleTimeout { .. }), "{error:?}");
    assert!(
        error.to_string().contains("the model may still be loading"),
        "{error}"
    );
    assert_eq!(server.requests().len(), 1, "a timeout is not retried");
}

#[test]
fn silence_in_the_middle_of_a_stream_is_an_idle_timeout() {
    let server = stub();
    server.reply(
        "POST",
        "/api/chat",
        ndjson_file("ollama/chat_text.ndjson").chunk_gap(Duration::from_secs(30)),
    );
    let mut config = ollama(&server);
    config.idle_timeout = Duration::from_millis(300);

    let (result, deltas) = chat_collecting(&client(config), &[], &[]);

    assert!(
        matches!(result, Err(Error::IdleTimeout { .. })),
        "{result:?}"
    );
    assert_eq!(deltas, ["The"]);
}

#[test]
fn a_stream_that_trickles_past_the_total_timeout_is_a_total_timeout() {
    let line = "{\"message\":{\"role\":\"assistant\",\"content\":\".\"},\"done\":false}\n";
    let server = stub();
    server.reply(
        "POST",
        "/api/chat",
        Reply::ndjson(line.repeat(200)).chunk_gap(Duration::from_millis(50)),
    );
    let mut config = ollama(&server);
    config.idle_timeout = Duration::from_secs(5);
    config.total_timeout = Duration::from_millis(600);

    let started = Instant::now();
    let error = chat(config).unwrap_err();

    assert!(
        started.elapsed() < Duration::from_secs(8),
        "it does not wait for the stream"
    );
    assert!(matches!(error, Error::TotalTimeout { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .contains("took longer than the total timeout"),
        "{error}"
    );
}

#[test]
fn lines_split_across_http_chunks_are_reassembled() {
    let body = fixture("ollama/chat_text.ndjson");
    let chunks: Vec<Vec<u8>> = body.chunks(7).map(<[u8]>::to_vec).collect();
    let server = stub();
    server.reply(
        "POST",
        "/api/chat",
        Reply::chunks("application/x-ndjson", chunks),
    );

    assert_eq!(chat(ollama(&server)).unwrap().content, "The tests pass.");
}

#[test]
fn events_split_across_http_chunks_are_reassembled() {
    let body = fixture("openai/chat_tool_calls.sse");
    let chunks: Vec<Vec<u8>> = body.chunks(5).map(<[u8]>::to_vec).collect();
    let server = stub();
    server.reply(
        "POST",
        "/v1/chat/completions",
        Reply::chunks("text/event-stream", chunks),
    );

    let response = chat(config(Api::OpenAi, &server)).unwrap();

    assert_eq!(response.tool_calls.len(), 2);
}

#[test]
fn a_body_with_content_length_instead_of_chunks_is_read_too() {
    let server = stub();
    server.reply(
        "POST",
        "/api/chat",
        ndjson_file("ollama/chat_text.ndjson").length_framed(),
    );

    assert_eq!(chat(ollama(&server)).unwrap().content, "The tests pass.");
}

#[test]
fn one_client_reuses_its_connection_across_requests() {
    let server = ollama_answering_every_chat();
    let client = client(config(Api::Ollama, &server));

    for _ in 0..3 {
        client.chat(&[Message::user("hi")], &[], |_| {}).unwrap();
    }

    assert_eq!(routes(&server).len(), 4);
    let connections: Vec<usize> = server.requests().iter().map(|r| r.connection).collect();
    assert_eq!(connections, [0, 0, 0, 0]);
}

#[test]
fn a_server_that_hangs_up_without_answering_is_unreachable_after_two_resends() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let hang_up = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut accepted = 0;
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                drop(stream);
                accepted += 1;
            }
            accepted
        })
    };
    let mut config = Config::new(Api::Ollama, "m");
    config.host = format!("http://{addr}");
    config.context_length = Some(4096);
    config.retry = Retry::NONE;

    let error = Client::new(config)
        .unwrap()
        .chat(&[], &[], |_| {})
        .unwrap_err();
    stop.store(true, Ordering::SeqCst);
    let _ = std::net::TcpStream::connect(addr); // wakes the accepting thread to stop
    let connections = hang_up.join().unwrap();

    assert!(matches!(error, Error::Unreachable { .. }), "{error:?}");
    assert!(error.is_unreachable());
    assert_eq!(
        error.to_string(),
        format!(
            "cannot reach http://{addr}/api/chat: the server closed the connection without \
             answering"
        )
    );
    assert_eq!(connections, 3, "the first try and two resends");
}

#[test]
fn a_kept_alive_connection_the_server_closed_is_replaced_by_a_fresh_one() {
    // llama.cpp's server closes the connection after a streamed answer, without saying so;
    // the next request on it dies unanswered and must go out again on a new connection.
    let server = stub();
    server.reply(
        "POST",
        "/v1/chat/completions",
        sse_file("openai/chat_text.sse").close_on_next_request(),
    );
    server.reply(
        "POST",
        "/v1/chat/completions",
        sse_file("openai/chat_text.sse"),
    );
    let mut config = config(Api::OpenAi, &server);
    config.retry = Retry::NONE;
    let client = client(config);

    client.chat(&[Message::user("one")], &[], |_| {}).unwrap();
    let second = client.chat(&[Message::user("two")], &[], |_| {}).unwrap();

    assert_eq!(second.content, "The tests pass.");
    let connections: Vec<usize> = server.requests().iter().map(|r| r.connection).collect();
    assert_eq!(
        connections,
        [0, 0, 1],
        "answered, hung up on, answered afresh"
    );
}
