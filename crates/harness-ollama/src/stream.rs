//! Incremental decoding of streamed answers: bytes in, records out, one answer at the end.
//!
//! Both APIs stream the same way: a body cut into records (newline-delimited JSON lines for
//! Ollama, server-sent events for OpenAI-compatible servers), each record a JSON chunk that
//! may add text, add to tool calls, or end the answer. [`ChatStream`] is that shared
//! skeleton; a [`ChatFormat`] is what one API adds: its framing and what one of its chunks
//! says.
//!
//! The framings accept the body in pieces of any size, split anywhere, and produce the same
//! output as for the whole body at once; they never fail on arbitrary bytes except when a
//! record grows past the limit.
//!
//! Everything a reply holds is bounded by [`ReplyLimits`]: a record, the text, the tool
//! calls and their arguments, and the bytes of the whole body. Each is checked as it grows,
//! before more is taken, so a misbehaving server takes at most the limits (and one piece of
//! the body) of memory, and the caller is never handed text past the text limit.

use std::ops::ControlFlow;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Error;
use crate::config::{RepeatedOutput, ReplyLimits};
use crate::error::{Limit, error_text, excerpt};
use crate::message::ToolCall;
use crate::repetition::{Repetition, find_loop};
use crate::response::{ChatResponse, FinishReason, Usage};

/// One API's streamed chat answer: how its body is framed, and what one record says.
pub(crate) trait ChatFormat: Default {
    /// How the body is cut into records.
    type Framing: Framing;

    /// Reads one record and returns the text it adds. Records after the answer's final one
    /// are ignored.
    fn take_record(&mut self, url: &str, record: &[u8]) -> Result<Option<String>, Error>;

    /// Ends the answer: what came besides the text, or, when the final record never came,
    /// how the stream ended (for [`Error::StreamCut`]).
    fn finish(self) -> Result<Ending, String>;

    /// The tool calls so far, when the client cut the answer before its end.
    fn cut_short(self) -> Vec<ToolCall>;

    /// How many tool calls are held so far, and the bytes of their arguments as JSON text.
    fn calls_held(&self) -> (usize, usize);
}

/// What an answer says besides its text, known once its final record arrived.
#[derive(Debug)]
pub(crate) struct Ending {
    pub(crate) tool_calls: Vec<ToolCall>,
    pub(crate) finish: FinishReason,
    pub(crate) usage: Usage,
}

/// How a body is cut into records.
pub(crate) trait Framing {
    /// A framing that refuses records longer than `limit` bytes.
    fn new(limit: usize) -> Self;

    /// Takes the next piece of the body; returns the records it completes. A record, or the
    /// part of one held, longer than the limit is refused.
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, LineTooLong>;

    /// Ends the body: the last record if it is complete without its terminator, or how the
    /// body was cut inside it.
    fn finish(&mut self) -> Result<Option<Vec<u8>>, String>;
}

/// Assembles one streamed answer: the framing, the API's reading of each record, and the
/// text so far, watched for a loop.
#[derive(Debug)]
pub(crate) struct ChatStream<F: ChatFormat> {
    url: String,
    framing: F::Framing,
    format: F,
    /// The text of the answer so far, as passed to the callback (once cut, up to the loop).
    content: String,
    /// Whether the text is watched for a loop.
    repeated_output: RepeatedOutput,
    /// How much the reply may hold.
    limits: ReplyLimits,
    /// The bytes of the body taken so far.
    body_bytes: u64,
    /// The loop the text fell into, once found: the answer is over.
    repetition: Option<Repetition>,
}

impl<F: ChatFormat> ChatStream<F> {
    pub(crate) fn new(
        url: &str,
        repeated_output: RepeatedOutput,
        limits: ReplyLimits,
    ) -> ChatStream<F> {
        ChatStream {
            url: url.to_owned(),
            framing: F::Framing::new(limits.line_bytes),
            format: F::default(),
            content: String::new(),
            repeated_output,
            limits,
            body_bytes: 0,
            repetition: None,
        }
    }

    /// Takes the next piece of the body, passing new text to `on_text`. Breaks when the
    /// answer fell into a loop: the rest of the body is not wanted.
    pub(crate) fn feed(
        &mut self,
        bytes: &[u8],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ControlFlow<()>, Error> {
        self.body_bytes = self.body_bytes.saturating_add(bytes.len() as u64);
        if self.body_bytes > self.limits.body_bytes {
            return Err(self.too_large(Limit::Body(self.limits.body_bytes)));
        }
        let records = self
            .framing
            .push(bytes)
            .map_err(|error| error.into_error(&self.url))?;
        for record in records {
            self.take_record(&record, on_text)?;
            if self.repetition.is_some() {
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Ends the body: the answer, if it was complete, or as far as it was kept when it was
    /// cut for repeating itself.
    pub(crate) fn finish(mut self, on_text: &mut dyn FnMut(&str)) -> Result<ChatResponse, Error> {
        if let Some(repetition) = self.repetition {
            return Ok(ChatResponse {
                content: self.content,
                tool_calls: self.format.cut_short(),
                finish: FinishReason::Repetition(repetition),
                usage: Usage::default(),
            });
        }
        let last = self.framing.finish().map_err(|detail| Error::StreamCut {
            url: self.url.clone(),
            detail,
        })?;
        if let Some(record) = last {
            self.take_record(&record, on_text)?;
        }
        let ending = self.format.finish().map_err(|detail| Error::StreamCut {
            url: self.url,
            detail,
        })?;
        Ok(ChatResponse {
            content: self.content,
            tool_calls: ending.tool_calls,
            finish: ending.finish,
            usage: ending.usage,
        })
    }

    fn take_record(&mut self, record: &[u8], on_text: &mut dyn FnMut(&str)) -> Result<(), Error> {
        let text = self.format.take_record(&self.url, record)?;
        let (calls, arguments) = self.format.calls_held();
        if calls > self.limits.tool_calls {
            return Err(self.too_large(Limit::ToolCalls(self.limits.tool_calls)));
        }
        if arguments > self.limits.arguments_bytes {
            return Err(self.too_large(Limit::Arguments(self.limits.arguments_bytes)));
        }
        if let Some(text) = text {
            // Checked before the text is passed on: the caller never sees more than the limit.
            if self.content.len().saturating_add(text.len()) > self.limits.text_bytes {
                return Err(self.too_large(Limit::Text(self.limits.text_bytes)));
            }
            on_text(&text);
            self.content.push_str(&text);
            if self.repeated_output == RepeatedOutput::Cut
                && let Some(found) = find_loop(&self.content)
            {
                self.content.truncate(found.keep);
                self.repetition = Some(found.repetition);
            }
        }
        Ok(())
    }
}

impl<F: ChatFormat> ChatStream<F> {
    fn too_large(&self, limit: Limit) -> Error {
        Error::ReplyTooLarge {
            url: self.url.clone(),
            limit,
        }
    }
}

/// Decodes a whole body at once: the answer and the text deltas passed on (for tests).
#[cfg(test)]
pub(crate) fn decode_whole<F: ChatFormat>(
    url: &str,
    body: &[u8],
) -> (Result<ChatResponse, Error>, Vec<String>) {
    decode_whole_within::<F>(url, body, ReplyLimits::default())
}

/// [`decode_whole`] under `limits`.
#[cfg(test)]
pub(crate) fn decode_whole_within<F: ChatFormat>(
    url: &str,
    body: &[u8],
    limits: ReplyLimits,
) -> (Result<ChatResponse, Error>, Vec<String>) {
    let mut deltas = Vec::new();
    let mut on_text = |text: &str| deltas.push(text.to_owned());
    let mut stream = ChatStream::<F>::new(url, RepeatedOutput::Cut, limits);
    let result = stream
        .feed(body, &mut on_text)
        .and_then(|_| stream.finish(&mut on_text));
    (result, deltas)
}

/// Reads one record as the API's chunk type.
pub(crate) fn parse_record<T: DeserializeOwned>(url: &str, record: &[u8]) -> Result<T, Error> {
    serde_json::from_slice(record).map_err(|error| Error::MalformedLine {
        url: url.to_owned(),
        line: excerpt(record),
        detail: error.to_string(),
    })
}

/// A chunk's `error` field, if it has one, as the error it reports.
pub(crate) fn reported_error(url: &str, error: Option<Value>) -> Result<(), Error> {
    match error {
        Some(error) => Err(Error::StreamError {
            url: url.to_owned(),
            message: error_text(&error),
        }),
        None => Ok(()),
    }
}

/// A line grew longer than the decoder's limit.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct LineTooLong {
    /// The limit, in bytes.
    pub(crate) limit: usize,
}

impl LineTooLong {
    pub(crate) fn into_error(self, url: &str) -> crate::Error {
        crate::Error::ReplyTooLarge {
            url: url.to_owned(),
            limit: Limit::Line(self.limit),
        }
    }
}

/// Splits a byte stream into lines ending in `\n` or `\r\n`, as newline-delimited JSON is.
#[derive(Debug)]
pub(crate) struct Lines {
    /// The bytes after the last line break seen.
    partial: Vec<u8>,
    /// The longest `partial` allowed.
    limit: usize,
}

impl Lines {
    pub(crate) fn new(limit: usize) -> Lines {
        Lines {
            partial: Vec::new(),
            limit,
        }
    }

    /// Takes the next piece of the body; returns the lines it completes, without their
    /// line breaks.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, LineTooLong> {
        let mut lines = Vec::new();
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&byte| byte == b'\n') {
            self.partial.extend_from_slice(&rest[..end]);
            let mut line = std::mem::take(&mut self.partial);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            lines.push(line);
            rest = &rest[end + 1..];
        }
        self.partial.extend_from_slice(rest);
        if self.partial.len() > self.limit {
            return Err(LineTooLong { limit: self.limit });
        }
        Ok(lines)
    }

    /// Ends the stream: returns the last line if the body did not end with a line break.
    pub(crate) fn take_rest(&mut self) -> Option<Vec<u8>> {
        let rest = std::mem::take(&mut self.partial);
        (!rest.is_empty()).then_some(rest)
    }
}

/// Newline-delimited JSON: one record a line. A last line without its line break is used if
/// it is whole JSON; if it does not parse, the body was cut inside it.
impl Framing for Lines {
    fn new(limit: usize) -> Lines {
        Lines::new(limit)
    }

    fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, LineTooLong> {
        Lines::push(self, bytes)
    }

    fn finish(&mut self) -> Result<Option<Vec<u8>>, String> {
        match self.take_rest() {
            Some(rest) if serde_json::from_slice::<Value>(&rest).is_err() => {
                Err("it stopped in the middle of a line".to_owned())
            }
            rest => Ok(rest),
        }
    }
}

/// Decodes server-sent events into the `data` of each event.
///
/// Following the event-stream format: lines starting with `:` are comments; a `data` field
/// adds a line to the event's data (one space after the colon is dropped); other fields
/// (`event`, `id`, `retry`) are ignored; a blank line dispatches the event. Lines end in
/// `\n` or `\r\n`; a lone `\r` is not a line break here, since no model server sends one.
#[derive(Debug)]
pub(crate) struct Events {
    lines: Lines,
    /// The data lines of the event being read, joined with `\n`; `None` before the first.
    data: Option<Vec<u8>>,
    /// The longest data an event may have: many short `data` lines make a long record too.
    limit: usize,
}

impl Events {
    pub(crate) fn new(limit: usize) -> Events {
        Events {
            lines: Lines::new(limit),
            data: None,
            limit,
        }
    }

    /// Takes the next piece of the body; returns the data of the events it completes.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, LineTooLong> {
        let mut events = Vec::new();
        for line in self.lines.push(bytes)? {
            if let Some(event) = self.take_line(&line) {
                events.push(event);
            }
            if self
                .data
                .as_ref()
                .is_some_and(|data| data.len() > self.limit)
            {
                return Err(LineTooLong { limit: self.limit });
            }
        }
        Ok(events)
    }

    /// Ends the stream: returns an event whose data lines were complete but whose blank
    /// line never came (a lenient reading; a cut line is dropped, never half-used).
    pub(crate) fn finish(&mut self) -> Option<Vec<u8>> {
        self.data.take()
    }

    fn take_line(&mut self, line: &[u8]) -> Option<Vec<u8>> {
        if line.is_empty() {
            return self.data.take();
        }
        let (field, value) = match line.iter().position(|&byte| byte == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        // A comment has an empty field name, so it falls through here too.
        if field == b"data" {
            match &mut self.data {
                Some(data) => {
                    data.push(b'\n');
                    data.extend_from_slice(value);
                }
                None => self.data = Some(value.to_vec()),
            }
        }
        None
    }
}

/// Server-sent events: one record an event's data.
impl Framing for Events {
    fn new(limit: usize) -> Events {
        Events::new(limit)
    }

    fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, LineTooLong> {
        Events::push(self, bytes)
    }

    fn finish(&mut self) -> Result<Option<Vec<u8>>, String> {
        Ok(Events::finish(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lines_of(pieces: &[&[u8]]) -> (Vec<Vec<u8>>, Option<Vec<u8>>) {
        let mut lines = Lines::new(ReplyLimits::DEFAULT_LINE_BYTES);
        let mut out = Vec::new();
        for piece in pieces {
            out.extend(lines.push(piece).unwrap());
        }
        (out, lines.take_rest())
    }

    fn events_of(pieces: &[&[u8]]) -> (Vec<Vec<u8>>, Option<Vec<u8>>) {
        let mut events = Events::new(ReplyLimits::DEFAULT_LINE_BYTES);
        let mut out = Vec::new();
        for piece in pieces {
            out.extend(events.push(piece).unwrap());
        }
        (out, events.finish())
    }

    #[test]
    fn lines_end_in_lf_or_crlf_and_may_span_pieces() {
        let (lines, rest) = lines_of(&[b"{\"a\":", b"1}\r\n{\"b\"", b":2}\n\n", b"tail"]);
        assert_eq!(lines, [&b"{\"a\":1}"[..], b"{\"b\":2}", b""]);
        assert_eq!(rest.as_deref(), Some(&b"tail"[..]));
        assert_eq!(lines_of(&[b"x\n"]).1, None);
    }

    #[test]
    fn a_line_longer_than_the_limit_is_refused() {
        let mut lines = Lines::new(4);
        assert_eq!(lines.push(b"abcd").unwrap(), Vec::<Vec<u8>>::new());
        assert_eq!(lines.push(b"e"), Err(LineTooLong { limit: 4 }));
        let mut lines = Lines::new(4);
        assert_eq!(lines.push(b"abcdefgh\nab").unwrap(), [b"abcdefgh".to_vec()]);
    }

    /// The default limits but what `set` changes.
    fn only(set: impl FnOnce(&mut ReplyLimits)) -> ReplyLimits {
        let mut limits = ReplyLimits::default();
        set(&mut limits);
        limits
    }

    fn ollama_within(body: &str, limits: ReplyLimits) -> Result<crate::ChatResponse, crate::Error> {
        decode_whole_within::<crate::ollama::Chunks>("http://h/api/chat", body.as_bytes(), limits).0
    }

    fn openai_within(body: &str, limits: ReplyLimits) -> Result<crate::ChatResponse, crate::Error> {
        decode_whole_within::<crate::openai::Chunks>(
            "http://h/v1/chat/completions",
            body.as_bytes(),
            limits,
        )
        .0
    }

    const OLLAMA_DONE: &str = "{\"done\":true}\n";

    fn limit_of(result: Result<crate::ChatResponse, crate::Error>) -> Option<Limit> {
        match result {
            Err(crate::Error::ReplyTooLarge { limit, .. }) => Some(limit),
            Err(other) => panic!("{other}"),
            Ok(_) => None,
        }
    }

    #[test]
    fn each_limit_takes_a_reply_exactly_at_it_and_refuses_one_byte_or_call_more() {
        let text =
            |content: &str| format!("{{\"message\":{{\"content\":\"{content}\"}}}}\n{OLLAMA_DONE}");
        let at = only(|l| l.text_bytes = 5);
        assert_eq!(limit_of(ollama_within(&text("abcde"), at)), None);
        assert_eq!(
            limit_of(ollama_within(&text("abcdef"), at)),
            Some(Limit::Text(5))
        );

        let calls = |n: usize| {
            let call = r#"{"function":{"name":"f","arguments":{"a":1}}}"#;
            let list = vec![call; n].join(",");
            format!("{{\"message\":{{\"tool_calls\":[{list}]}}}}\n{OLLAMA_DONE}")
        };
        let at = only(|l| l.tool_calls = 2);
        assert_eq!(limit_of(ollama_within(&calls(2), at)), None);
        assert_eq!(
            limit_of(ollama_within(&calls(3), at)),
            Some(Limit::ToolCalls(2))
        );
        // `{"a":1}` is 7 bytes of JSON: two calls are 14.
        let at = only(|l| l.arguments_bytes = 14);
        assert_eq!(limit_of(ollama_within(&calls(2), at)), None);
        let under = only(|l| l.arguments_bytes = 13);
        assert_eq!(
            limit_of(ollama_within(&calls(2), under)),
            Some(Limit::Arguments(13))
        );

        let fragments = |arguments: &str| {
            format!(
                "data: {{\"choices\":[{{\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"name\":\"f\",\"arguments\":\"{arguments}\"}}}}]}}}}]}}\n\n\
                 data: {{\"choices\":[{{\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\n"
            )
        };
        let at = only(|l| l.arguments_bytes = 4);
        assert_eq!(limit_of(openai_within(&fragments("abcd"), at)), None);
        assert_eq!(
            limit_of(openai_within(&fragments("abcde"), at)),
            Some(Limit::Arguments(4))
        );

        let body = text("ab");
        let at = only(|l| l.body_bytes = body.len() as u64);
        assert_eq!(limit_of(ollama_within(&body, at)), None);
        let under = only(|l| l.body_bytes = body.len() as u64 - 1);
        assert_eq!(
            limit_of(ollama_within(&body, under)),
            Some(Limit::Body(body.len() as u64 - 1))
        );
    }

    #[test]
    fn a_limit_error_names_the_server_and_the_limit() {
        let body = format!("{{\"message\":{{\"content\":\"abc\"}}}}\n{OLLAMA_DONE}");
        let error = ollama_within(&body, only(|l| l.text_bytes = 2)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the reply from http://h/api/chat went past the limit of 2 bytes of text: the server \
             is broken or is not a model server, so the reply was dropped; check the server and \
             its log"
        );
        let error = LineTooLong { limit: 4 }.into_error("http://h/x");
        assert!(matches!(
            error,
            crate::Error::ReplyTooLarge { url, limit: Limit::Line(4) } if url == "http://h/x"
        ));
    }

    #[test]
    fn an_event_of_many_short_data_lines_longer_than_the_limit_is_refused() {
        let mut events = Events::new(8);
        assert_eq!(
            events.push(b"data: abc\ndata: defg\n\n").unwrap(),
            [b"abc\ndefg".to_vec()],
            "exactly at the limit"
        );
        let mut events = Events::new(8);
        assert_eq!(
            events.push(b"data: abc\ndata: de\n").unwrap(),
            Vec::<Vec<u8>>::new()
        );
        assert_eq!(events.push(b"data: fg\n"), Err(LineTooLong { limit: 8 }));
        let mut events = Events::new(8);
        assert_eq!(
            events
                .push(b"data: abc\ndata: de\n\ndata: fgh\n\n")
                .unwrap(),
            [b"abc\nde".to_vec(), b"fgh".to_vec()]
        );
    }

    #[test]
    fn events_join_data_lines_and_skip_comments_and_other_fields() {
        let body =
            b": keep-alive\nevent: message\nid: 3\ndata: {\"a\":\ndata:1}\n\ndata: [DONE]\n\n";
        let (events, rest) = events_of(&[body]);
        assert_eq!(events, [&b"{\"a\":\n1}"[..], b"[DONE]"]);
        assert_eq!(rest, None);
    }

    #[test]
    fn a_blank_line_without_data_dispatches_nothing() {
        assert_eq!(events_of(&[b"\n\n: ping\n\n"]).0, Vec::<Vec<u8>>::new());
    }

    #[test]
    fn data_without_a_colon_is_an_empty_line_of_data() {
        assert_eq!(events_of(&[b"data\n\n"]).0, [b"".to_vec()]);
    }

    #[test]
    fn a_complete_event_missing_its_blank_line_is_kept_at_the_end_and_a_cut_line_is_not() {
        assert_eq!(events_of(&[b"data: [DONE]\n"]).1, Some(b"[DONE]".to_vec()));
        assert_eq!(events_of(&[b"data: {\"cho"]).1, None);
    }

    fn split_at_points(bytes: &[u8], points: &[usize]) -> Vec<Vec<u8>> {
        let mut cuts: Vec<usize> = points.iter().map(|p| p % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut pieces = Vec::new();
        let mut start = 0;
        for cut in cuts {
            pieces.push(bytes[start..cut].to_vec());
            start = cut;
        }
        pieces.push(bytes[start..].to_vec());
        pieces
    }

    proptest! {
        #[test]
        fn decoders_never_panic_and_ignore_where_the_body_is_split(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(b':'), Just(b' '), any::<u8>()],
                0..400,
            ),
            points in proptest::collection::vec(any::<usize>(), 0..8),
        ) {
            let pieces = split_at_points(&bytes, &points);
            let pieces: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(lines_of(&pieces), lines_of(&[&bytes]));
            prop_assert_eq!(events_of(&pieces), events_of(&[&bytes]));
        }
    }
}
