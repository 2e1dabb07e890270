//! Output captured while it streams, in memory bounded by the output limit.
//!
//! The model needs the beginning of the output (what ran) and the end (the
//! error), not the middle. So the first half of the limit is kept as the head,
//! the last half in a ring buffer as the tail, and everything in between is
//! only counted.

use std::collections::VecDeque;

use memchr::memchr_iter;

use crate::ansi::AnsiStripper;

/// A command's output as it arrives: ANSI escapes stripped, head and tail kept.
#[derive(Debug)]
pub(crate) struct Capture {
    ansi: AnsiStripper,
    text: BoundedText,
}

impl Capture {
    /// A capture that keeps at most `limit` bytes of text.
    pub(crate) fn new(limit: usize) -> Capture {
        Capture {
            ansi: AnsiStripper::default(),
            text: BoundedText::new(limit),
        }
    }

    /// Records a chunk of raw output.
    pub(crate) fn push(&mut self, raw: &[u8]) {
        let Capture { ansi, text } = self;
        ansi.feed(raw, |plain| text.record(plain));
    }

    /// The text kept, decoded.
    pub(crate) fn finish(self) -> CapturedText {
        self.text.finish()
    }
}

/// The kept text, decoded as lossy UTF-8 without splitting a character.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct CapturedText {
    /// The whole text, or its beginning when something was cut.
    pub(crate) head: String,
    /// What was cut between `head` and `tail`, if anything was.
    pub(crate) cut: Option<Cut>,
    /// The end of the text; empty when nothing was cut.
    pub(crate) tail: String,
    /// Bytes of text the command wrote, after ANSI escapes were removed.
    pub(crate) total_bytes: u64,
    /// Lines of text the command wrote; a last line without `\n` counts.
    pub(crate) total_lines: u64,
}

/// The part of the output left out between head and tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cut {
    /// Bytes left out.
    pub(crate) bytes: u64,
    /// Line breaks left out.
    pub(crate) lines: u64,
}

impl Cut {
    /// The line that stands in for the cut text: `[… 12 bytes, 3 lines truncated …]`.
    pub(crate) fn marker(&self) -> String {
        format!("[… {} bytes, {} lines truncated …]", self.bytes, self.lines)
    }
}

/// Head, tail ring and totals of a stream of text bytes.
#[derive(Debug)]
struct BoundedText {
    /// The first bytes, up to `head_limit`.
    head: Vec<u8>,
    /// Capacity of `head`: half the limit.
    head_limit: usize,
    /// The last bytes after the head, up to `tail_limit`: a ring buffer.
    tail: VecDeque<u8>,
    /// Capacity of `tail`: the other half of the limit.
    tail_limit: usize,
    /// Every byte recorded.
    total_bytes: u64,
    /// Every `\n` recorded.
    total_newlines: u64,
    /// Whether the last byte recorded was `\n` (a last line without one still counts).
    ends_with_newline: bool,
}

impl BoundedText {
    fn new(limit: usize) -> BoundedText {
        let head_limit = limit / 2;
        BoundedText {
            head: Vec::new(),
            head_limit,
            tail: VecDeque::new(),
            tail_limit: limit - head_limit,
            total_bytes: 0,
            total_newlines: 0,
            ends_with_newline: false,
        }
    }

    fn record(&mut self, text: &[u8]) {
        let Some(&last) = text.last() else { return };
        self.total_bytes += text.len() as u64;
        self.total_newlines += memchr_iter(b'\n', text).count() as u64;
        self.ends_with_newline = last == b'\n';

        let room = self.head_limit - self.head.len();
        let (to_head, rest) = text.split_at(room.min(text.len()));
        self.head.extend_from_slice(to_head);
        // Only the last `tail_limit` bytes can survive; older ones leave the ring.
        let rest = &rest[rest.len() - rest.len().min(self.tail_limit)..];
        let overflow = (self.tail.len() + rest.len()).saturating_sub(self.tail_limit);
        self.tail.drain(..overflow);
        self.tail.extend(rest);
    }

    fn finish(mut self) -> CapturedText {
        let total_lines =
            self.total_newlines + u64::from(self.total_bytes > 0 && !self.ends_with_newline);
        let tail = self.tail.make_contiguous();
        let kept = (self.head.len() + tail.len()) as u64;
        if kept == self.total_bytes {
            // Nothing was dropped: head and tail are one contiguous text, and a
            // character spanning the two must be decoded whole.
            self.head.extend_from_slice(tail);
            return CapturedText {
                head: String::from_utf8_lossy(&self.head).into_owned(),
                cut: None,
                tail: String::new(),
                total_bytes: self.total_bytes,
                total_lines,
            };
        }
        let head = complete_prefix(&self.head);
        let tail = complete_suffix(tail);
        let newlines_kept =
            (memchr_iter(b'\n', head).count() + memchr_iter(b'\n', tail).count()) as u64;
        CapturedText {
            head: String::from_utf8_lossy(head).into_owned(),
            cut: Some(Cut {
                bytes: self.total_bytes - (head.len() + tail.len()) as u64,
                lines: self.total_newlines - newlines_kept,
            }),
            tail: String::from_utf8_lossy(tail).into_owned(),
            total_bytes: self.total_bytes,
            total_lines,
        }
    }
}

/// `bytes` without an incomplete UTF-8 character at its end.
fn complete_prefix(bytes: &[u8]) -> &[u8] {
    // An incomplete character is a lead byte followed by fewer continuation
    // bytes than it announces: at most 3 bytes from the end.
    for back in 1..=bytes.len().min(3) {
        let at = bytes.len() - back;
        let byte = bytes[at];
        if !is_continuation(byte) {
            return if utf8_width(byte) > back {
                &bytes[..at]
            } else {
                bytes
            };
        }
    }
    bytes
}

/// `bytes` without the continuation bytes of a character cut at its start.
fn complete_suffix(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|&&b| is_continuation(b))
        .count();
    &bytes[skip..]
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// The length of the UTF-8 sequence `lead` starts (1 for an invalid lead byte,
/// which lossy decoding replaces on its own).
fn utf8_width(lead: u8) -> usize {
    match lead {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(limit: usize, chunks: &[&[u8]]) -> CapturedText {
        let mut capture = Capture::new(limit);
        for chunk in chunks {
            capture.push(chunk);
        }
        capture.finish()
    }

    #[test]
    fn short_output_is_kept_whole() {
        let text = capture(16, &[b"one\n", b"two\n"]);
        assert_eq!(text.head, "one\ntwo\n");
        assert_eq!(text.cut, None);
        assert_eq!(text.tail, "");
        assert_eq!((text.total_bytes, text.total_lines), (8, 2));
    }

    #[test]
    fn output_of_exactly_the_limit_is_not_cut() {
        let text = capture(8, &[b"abcdefgh"]);
        assert_eq!(text.head, "abcdefgh");
        assert_eq!(text.cut, None);
    }

    #[test]
    fn one_byte_over_the_limit_is_cut_from_the_middle() {
        let text = capture(8, &[b"abcdefghi"]);
        assert_eq!(text.head, "abcd");
        assert_eq!(text.tail, "fghi");
        assert_eq!(text.cut, Some(Cut { bytes: 1, lines: 0 }));
    }

    #[test]
    fn an_odd_limit_gives_the_extra_byte_to_the_tail() {
        let text = capture(5, &[b"0123456789"]);
        assert_eq!(text.head, "01");
        assert_eq!(text.tail, "789");
    }

    #[test]
    fn head_and_tail_survive_many_chunks() {
        let mut chunks: Vec<Vec<u8>> = vec![b"START\n".to_vec()];
        chunks.extend((0..1000).map(|i| format!("line {i}\n").into_bytes()));
        chunks.push(b"the error is here\n".to_vec());
        let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        let total: usize = chunks.iter().map(Vec::len).sum();

        let text = capture(64, &refs);
        assert!(text.head.starts_with("START\nline 0\n"), "{:?}", text.head);
        assert!(
            text.tail.ends_with("line 999\nthe error is here\n"),
            "{:?}",
            text.tail
        );
        assert_eq!(text.head.len() + text.tail.len(), 64);
        assert_eq!(text.total_bytes, total as u64);
        assert_eq!(text.total_lines, 1002);
        let cut = text.cut.expect("cut");
        assert_eq!(cut.bytes, total as u64 - 64);
        let kept_lines = text.head.matches('\n').count() + text.tail.matches('\n').count();
        assert_eq!(cut.lines, 1002 - kept_lines as u64);
    }

    #[test]
    fn a_chunk_larger_than_the_tail_replaces_it() {
        let text = capture(8, &[b"abcd", b"xy", b"0123456789"]);
        assert_eq!(text.head, "abcd");
        assert_eq!(text.tail, "6789");
        assert_eq!(text.cut, Some(Cut { bytes: 8, lines: 0 }));
    }

    #[test]
    fn a_chunk_exactly_the_tail_size_replaces_it() {
        let text = capture(8, &[b"abcd", b"wxyz", b"1234"]);
        assert_eq!(text.tail, "1234");
    }

    #[test]
    fn the_ring_keeps_the_latest_bytes_in_order() {
        let text = capture(8, &[b"abcd", b"12", b"34", b"56"]);
        assert_eq!(text.tail, "3456");
        assert_eq!(text.cut, Some(Cut { bytes: 2, lines: 0 }));
    }

    #[test]
    fn a_last_line_without_newline_counts() {
        assert_eq!(capture(64, &[b"a\nb"]).total_lines, 2);
        assert_eq!(capture(64, &[b"a\nb\n"]).total_lines, 2);
        assert_eq!(capture(64, &[b"a\n", b"b", b""]).total_lines, 2);
        assert_eq!(capture(64, &[]).total_lines, 0);
    }

    #[test]
    fn cut_lines_count_the_newlines_left_out() {
        let text = capture(4, &[b"a\nb\nc\nd\ne\n"]);
        assert_eq!(text.head, "a\n");
        assert_eq!(text.tail, "e\n");
        assert_eq!(text.cut, Some(Cut { bytes: 6, lines: 3 }));
    }

    #[test]
    fn ansi_escapes_are_not_counted_or_kept() {
        let text = capture(64, &[b"\x1b[31mred\x1b[0m\n"]);
        assert_eq!(text.head, "red\n");
        assert_eq!(text.total_bytes, 4);
    }

    #[test]
    fn a_character_across_the_head_cut_is_dropped_whole() {
        // Head holds "ab" + the first byte of "é"; the cut must not leave half of it.
        let text = capture(6, &["abé".as_bytes(), b"-----", b"xyz"]);
        assert_eq!(text.head, "ab");
        assert_eq!(text.tail, "xyz");
        assert_eq!(text.cut.expect("cut").bytes, 2 + 5);
    }

    #[test]
    fn a_character_across_the_tail_cut_is_dropped_whole() {
        // The ring keeps the last 3 bytes of "…€x": the two of "€" would be garbage.
        let text = capture(6, &[b"abc", "------€x".as_bytes()]);
        assert_eq!(text.head, "abc");
        assert_eq!(text.tail, "x");
        assert_eq!(text.cut.expect("cut").bytes, 9);
        let text = capture(8, &[b"abcd", "---€".as_bytes()]);
        assert_eq!(text.tail, "-€");
    }

    #[test]
    fn a_character_across_head_and_tail_is_whole_when_nothing_is_cut() {
        let text = capture(4, &["aé".as_bytes(), b"b"]);
        assert_eq!(text.head, "aéb");
        assert_eq!(text.cut, None);
    }

    #[test]
    fn invalid_utf8_is_replaced_not_dropped() {
        let text = capture(64, &[b"a\xffb\n"]);
        assert_eq!(text.head, "a\u{fffd}b\n");
    }

    #[test]
    fn a_zero_limit_keeps_nothing_but_counts() {
        let text = capture(0, &[b"abc\n"]);
        assert_eq!((text.head.as_str(), text.tail.as_str()), ("", ""));
        assert_eq!(text.cut, Some(Cut { bytes: 4, lines: 1 }));
    }

    #[test]
    fn marker_names_bytes_and_lines() {
        assert_eq!(
            Cut {
                bytes: 123_456,
                lines: 2048
            }
            .marker(),
            "[… 123456 bytes, 2048 lines truncated …]"
        );
    }

    macro_rules! prefixes {
        ($($name:ident: $input:expr => $len:expr;)*) => {$(
            #[test]
            fn $name() {
                let input: &[u8] = $input;
                assert_eq!(complete_prefix(input).len(), $len);
            }
        )*};
    }

    prefixes! {
        prefix_empty: b"" => 0;
        prefix_ascii: b"ab" => 2;
        prefix_complete_two_byte: "aé".as_bytes() => 3;
        prefix_lead_of_two_byte: b"a\xc3" => 1;
        prefix_complete_three_byte: "a€".as_bytes() => 4;
        prefix_two_of_three_bytes: b"a\xe2\x82" => 1;
        prefix_one_of_three_bytes: b"a\xe2" => 1;
        prefix_complete_four_byte: "a😀".as_bytes() => 5;
        prefix_three_of_four_bytes: b"a\xf0\x9f\x98" => 1;
        prefix_only_continuations: b"a\x80\x80\x80" => 4;
        prefix_invalid_lead: b"a\xff" => 2;
        prefix_lone_lead_at_start: b"\xe2\x82" => 0;
    }

    #[test]
    fn suffix_skips_at_most_three_continuation_bytes() {
        assert_eq!(complete_suffix(b"\x82\xacx"), b"x");
        assert_eq!(complete_suffix(b"\x80\x80\x80\x80x"), b"\x80x");
        assert_eq!(complete_suffix(b"x\x80"), b"x\x80");
        assert_eq!(complete_suffix(b""), b"");
    }

    #[test]
    fn utf8_widths() {
        for (lead, width) in [
            (b'a', 1),
            (0x80, 1),
            (0xc0, 2),
            (0xdf, 2),
            (0xe0, 3),
            (0xef, 3),
            (0xf0, 4),
            (0xf7, 4),
            (0xf8, 1),
        ] {
            assert_eq!(utf8_width(lead), width, "{lead:#x}");
        }
    }

    proptest::proptest! {
        #[test]
        fn kept_text_is_a_prefix_and_suffix_of_the_whole(
            text in "[a-z\n é€😀]{0,200}",
            limit in 0usize..64,
            chunk in 1usize..17,
        ) {
            let bytes = text.as_bytes();
            let chunks: Vec<&[u8]> = bytes.chunks(chunk).collect();
            let captured = capture(limit, &chunks);
            proptest::prop_assert_eq!(captured.total_bytes, bytes.len() as u64);
            match captured.cut {
                None => proptest::prop_assert_eq!(&captured.head, &text),
                Some(cut) => {
                    proptest::prop_assert!(text.starts_with(&captured.head));
                    proptest::prop_assert!(text.ends_with(&captured.tail));
                    proptest::prop_assert_eq!(
                        cut.bytes as usize + captured.head.len() + captured.tail.len(),
                        bytes.len()
                    );
                    proptest::prop_assert!(captured.head.len() + captured.tail.len() <= limit);
                }
            }
        }
    }
}
