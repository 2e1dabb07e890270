//! The cases both streamed formats are tried on, side by side: a body that must read as a
//! given text, one that must fail with a given error, and an answer that repeats itself,
//! with helpers that the formats' own tests use to compare what an answer reads as.
//! Test code only.

use crate::Error;
use crate::ollama::Chunks as Ollama;
use crate::openai::Chunks as OpenAi;
use std::time::Duration;

use serde_json::json;

use crate::response::{ChatResponse, FinishReason, Usage};
use crate::stream::ChatFormat;

const OLLAMA: &str = "http://h/api/chat";
const OPENAI: &str = "http://h/v1/chat/completions";

/// Decodes a whole body of Ollama's stream: the answer, and the text deltas passed on.
pub(crate) fn ollama(body: &[u8]) -> (Result<ChatResponse, Error>, Vec<String>) {
    crate::stream::decode_whole::<Ollama>(OLLAMA, body)
}

/// Decodes a whole body of an OpenAI-compatible stream.
pub(crate) fn openai(body: &[u8]) -> (Result<ChatResponse, Error>, Vec<String>) {
    crate::stream::decode_whole::<OpenAi>(OPENAI, body)
}

/// Tests that each body fails to decode with the error matching its pattern.
macro_rules! decoding_fails {
    ($($name:ident: $format:ty, $url:expr, $body:expr => $pattern:pat,)*) => {$(
        #[test]
        fn $name() {
            let (result, _) = crate::stream::decode_whole::<$format>($url, $body);
            let error = result.unwrap_err();
            assert!(matches!(error, $pattern), "{error:?}");
        }
    )*};
}

/// Tests that each body decodes to an answer whose text is the one given.
macro_rules! decoding_reads {
    ($($name:ident: $format:ty, $url:expr, $body:expr => $content:expr,)*) => {$(
        #[test]
        fn $name() {
            let (result, _) = crate::stream::decode_whole::<$format>($url, $body);
            assert_eq!(result.unwrap().content, $content);
        }
    )*};
}

/// What a decoded answer says in text and counts, for tests to compare whole.
#[derive(Debug, PartialEq)]
pub(crate) struct Reading {
    /// The text deltas passed on, in order.
    pub(crate) deltas: Vec<String>,
    /// The answer's text.
    pub(crate) content: String,
    /// Why the model stopped.
    pub(crate) finish: FinishReason,
    /// The prompt's tokens, as counted by the server.
    pub(crate) prompt_tokens: Option<u64>,
    /// The tokens generated, as counted by the server.
    pub(crate) completion_tokens: Option<u64>,
}

impl Reading {
    /// The reading of an answer streamed as `deltas` (so its text is theirs, joined).
    pub(crate) fn of(
        deltas: &[&str],
        finish: FinishReason,
        prompt_tokens: Option<u64>,
        completion_tokens: Option<u64>,
    ) -> Reading {
        Reading {
            deltas: deltas.iter().map(|delta| (*delta).to_owned()).collect(),
            content: deltas.concat(),
            finish,
            prompt_tokens,
            completion_tokens,
        }
    }
}

/// Decodes a whole body that must succeed: what it reads as, and its usage in full.
pub(crate) fn read_whole<F: ChatFormat>(url: &str, body: &[u8]) -> (Reading, Usage) {
    let (result, deltas) = crate::stream::decode_whole::<F>(url, body);
    let response = result.unwrap();
    let reading = Reading {
        deltas,
        content: response.content,
        finish: response.finish,
        prompt_tokens: response.usage.prompt_tokens,
        completion_tokens: response.usage.completion_tokens,
    };
    (reading, response.usage)
}

/// Decodes a body of one record (`call`) that makes a tool call, then the record `again`
/// 200 times, each adding the text "again and ": the answer is cut for repeating itself,
/// its text is one "again and " and the call is kept. Returns the answer, for what the
/// format adds.
pub(crate) fn decode_a_repeating_answer<F: ChatFormat>(
    url: &str,
    call: &[u8],
    again: &[u8],
) -> ChatResponse {
    let mut body = call.to_vec();
    for _ in 0..200 {
        body.extend_from_slice(again);
    }
    let (result, _) = crate::stream::decode_whole::<F>(url, &body);
    let response = result.unwrap();
    assert!(
        matches!(response.finish, FinishReason::Repetition(_)),
        "{:?}",
        response.finish
    );
    assert_eq!(response.content, "again and ");
    assert_eq!(response.tool_calls.len(), 1);
    response
}

decoding_reads! {
    ollama_a_whole_last_line_without_its_line_break_is_used: Ollama, OLLAMA,
        br#"{"message":{"content":"hi"},"done":true}"# => "hi",
    openai_a_done_without_a_blank_line_at_the_end_is_complete: OpenAi, OPENAI,
        b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n" => "x",
    ollama_lines_after_the_final_chunk_and_blank_lines_are_ignored: Ollama, OLLAMA,
        b"\n{\"message\":{\"content\":\"a\"},\"done\":true}\n\r\n{\"message\":{\"content\":\"b\"}}\nnot json\n" => "a",
    openai_events_after_done_are_ignored: OpenAi, OPENAI,
        b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\ndata: nonsense\n\n" => "x",
}

decoding_fails! {
    ollama_a_line_that_is_not_json: Ollama, OLLAMA,
        b"{\"message\":{\"content\":\"a\"}}\nnot json\n" => Error::MalformedLine { .. },
    openai_an_event_that_is_not_json: OpenAi, OPENAI,
        b"data: {\"choices\":\n\n" => Error::MalformedLine { .. },
    ollama_a_line_of_the_wrong_shape: Ollama, OLLAMA,
        b"{\"message\":\"text\"}\n" => Error::MalformedLine { .. },
    ollama_an_error_chunk: Ollama, OLLAMA,
        b"{\"error\":\"out of memory\"}\n" => Error::StreamError { .. },
    openai_an_error_event: OpenAi, OPENAI,
        b"data: {\"error\":{\"code\":500,\"message\":\"context overflow\"}}\n\n" => Error::StreamError { .. },
    ollama_no_final_chunk: Ollama, OLLAMA,
        b"{\"message\":{\"content\":\"a\"},\"done\":false}\n" => Error::StreamCut { .. },
    ollama_a_body_cut_inside_a_line: Ollama, OLLAMA,
        b"{\"message\":{\"content\":\"a\"},\"do" => Error::StreamCut { .. },
    openai_a_stream_cut_before_its_end: OpenAi, OPENAI,
        b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {\"cho" => Error::StreamCut { .. },
    ollama_an_empty_body: Ollama, OLLAMA, b"" => Error::StreamCut { .. },
    openai_an_empty_body: OpenAi, OPENAI, b"" => Error::StreamCut { .. },
}

#[test]
fn ollama_text_arrives_in_deltas_and_the_final_chunk_gives_reason_and_usage() {
    let body = br#"{"message":{"role":"assistant","content":"Hel"},"done":false}
{"message":{"role":"assistant","content":"lo"},"done":false}
{"message":{"role":"assistant","content":""},"done":true,"done_reason":"length","prompt_eval_count":26,"eval_count":2,"total_duration":5000000000,"load_duration":1000,"prompt_eval_duration":2000000000,"eval_duration":500000000}
"#;
    let (reading, usage) = read_whole::<Ollama>(OLLAMA, body);
    assert_eq!(
        reading,
        Reading::of(&["Hel", "lo"], FinishReason::Length, Some(26), Some(2))
    );
    assert_eq!(usage.total_duration, Some(Duration::from_secs(5)));
    assert_eq!(usage.load_duration, Some(Duration::from_micros(1)));
    assert_eq!(usage.prompt_tokens_per_second(), Some(13.0));
    assert_eq!(usage.generation_tokens_per_second(), Some(4.0));
}

#[test]
fn openai_text_deltas_finish_reason_usage_and_timings() {
    let body = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there\"},\"finish_reason\":null}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"timings\":{\"prompt_n\":50,\"prompt_ms\":1000.0,\"predicted_n\":8,\"predicted_ms\":500.0}}\n\n\
data: {\"choices\":[],\"usage\":{\"prompt_tokens\":51,\"completion_tokens\":9,\"total_tokens\":60}}\n\n\
data: [DONE]\n\n";
    let (reading, usage) = read_whole::<OpenAi>(OPENAI, body);
    assert_eq!(
        reading,
        Reading::of(&["Hi", " there"], FinishReason::Stop, Some(51), Some(9))
    );
    assert_eq!(usage.prompt_duration, Some(Duration::from_secs(1)));
    assert_eq!(usage.generation_duration, Some(Duration::from_millis(500)));
}

#[test]
fn ollama_an_answer_cut_for_repeating_itself_keeps_the_calls_so_far() {
    let response = decode_a_repeating_answer::<Ollama>(
        OLLAMA,
        br#"{"message":{"content":"","tool_calls":[{"function":{"name":"a","arguments":{"x":1}}}]},"done":false}
"#,
        b"{\"message\":{\"content\":\"again and \"},\"done\":false}\n",
    );
    assert_eq!(response.tool_calls[0].arguments, json!({"x": 1}));
    assert_eq!(response.usage, Usage::default(), "no counts arrived");
}

#[test]
fn openai_an_answer_cut_for_repeating_itself_keeps_the_calls_so_far() {
    let response = decode_a_repeating_answer::<OpenAi>(
        OPENAI,
        br#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]}}]}

"#,
        b"data: {\"choices\":[{\"delta\":{\"content\":\"again and \"}}]}\n\n",
    );
    assert_eq!(response.tool_calls[0].arguments, json!({"path": "a"}));
}
