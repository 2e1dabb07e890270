//! Streaming removal of ANSI escape sequences (colours, cursor moves, titles).
//!
//! Output arrives in chunks of arbitrary size, so a sequence may start in one
//! chunk and end in the next: the stripper keeps its state between calls.

use memchr::memchr;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;

/// Removes ANSI escape sequences from a byte stream fed in arbitrary chunks.
///
/// Recognised, following ECMA-48: CSI sequences (`ESC [` … final byte),
/// control strings (OSC `ESC ]`, DCS `ESC P`, SOS `ESC X`, PM `ESC ^`,
/// APC `ESC _`) ended by BEL or `ESC \`, escapes with intermediate bytes
/// (`ESC ( B`) and two-byte escapes (`ESC c`). A malformed sequence ends at
/// the first byte that cannot belong to it, and that byte is kept as text, so a
/// stray `ESC [` cannot swallow the output that follows it.
#[derive(Debug, Default)]
pub(crate) struct AnsiStripper {
    /// Where the last chunk left off.
    state: State,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Plain text.
    #[default]
    Text,
    /// After `ESC`.
    Escape,
    /// After `ESC` and one or more intermediate bytes (`ESC (`).
    Intermediate,
    /// Inside `ESC [`, before the final byte.
    Csi,
    /// Inside a control string such as an OSC window title.
    ControlString,
    /// After an `ESC` inside a control string: `\` ends the string.
    ControlStringEscape,
}

/// What one byte does to a sequence in progress.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// The byte belongs to the sequence; continue in this state.
    Consume(State),
    /// The byte cannot belong to the sequence: drop the sequence so far and
    /// read the byte again as text.
    Abort,
}

impl AnsiStripper {
    /// Feeds `input`, calling `emit` with each run of text that is not part of
    /// an escape sequence (a run may be empty).
    pub(crate) fn feed(&mut self, mut input: &[u8], mut emit: impl FnMut(&[u8])) {
        while let Some(&byte) = input.first() {
            if self.state == State::Text {
                // The fast path: copy everything up to the next ESC at once.
                let Some(at) = memchr(ESC, input) else {
                    emit(input);
                    return;
                };
                emit(&input[..at]);
                self.state = State::Escape;
                input = &input[at + 1..];
                continue;
            }
            match step(self.state, byte) {
                Step::Consume(next) => {
                    self.state = next;
                    input = &input[1..];
                }
                Step::Abort => self.state = State::Text,
            }
        }
    }
}

/// The transition for `byte` inside a sequence (`state` is never `Text`).
fn step(state: State, byte: u8) -> Step {
    use State::*;
    let next = match (state, byte) {
        (Escape, b'[') => Csi,
        (Escape, b']' | b'P' | b'X' | b'^' | b'_') => ControlString,
        (Escape | Intermediate, 0x20..=0x2f) => Intermediate,
        (Escape | Intermediate, 0x30..=0x7e) => Text,
        (Csi, 0x40..=0x7e) => Text,
        (Csi, 0x20..=0x3f) => Csi,
        (ControlString, BEL) => Text,
        (ControlString, ESC) => ControlStringEscape,
        (ControlStringEscape, b'\\') => Text,
        // A window title never spans lines; a newline means the terminator
        // was lost, and the lines after it are output the model must see.
        (ControlString | ControlStringEscape, b'\n') => return Step::Abort,
        (ControlString | ControlStringEscape, _) => ControlString,
        _ => return Step::Abort,
    };
    Step::Consume(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(chunks: &[&[u8]]) -> Vec<u8> {
        let mut stripper = AnsiStripper::default();
        let mut out = Vec::new();
        for chunk in chunks {
            stripper.feed(chunk, |text| out.extend_from_slice(text));
        }
        out
    }

    macro_rules! strips {
        ($($name:ident: $input:expr => $expected:expr;)*) => {$(
            #[test]
            fn $name() {
                let input: &[u8] = $input;
                let expected: &[u8] = $expected;
                assert_eq!(strip(&[input]), expected, "whole input");
                // Every split point must give the same text: sequences cross chunks.
                for cut in 0..=input.len() {
                    let (a, b) = input.split_at(cut);
                    assert_eq!(strip(&[a, b]), expected, "split at {cut}");
                }
            }
        )*};
    }

    strips! {
        plain_text_is_untouched: b"hello\nworld\n" => b"hello\nworld\n";
        empty_input: b"" => b"";
        sgr_colour: b"\x1b[1;31merror\x1b[0m: bad" => b"error: bad";
        csi_with_private_parameters: b"a\x1b[?25lb\x1b[?25hc" => b"abc";
        csi_with_intermediate_byte: b"a\x1b[1 qb" => b"ab";
        cursor_movement: b"\x1b[2K\x1b[1Gdone" => b"done";
        osc_title_ended_by_bel: b"\x1b]0;title\x07text" => b"text";
        osc_hyperlink_ended_by_st: b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\" => b"link";
        dcs_string: b"a\x1bPq#0;2;0;0;0\x1b\\b" => b"ab";
        apc_pm_sos_strings: b"\x1b_x\x1b\\\x1b^y\x1b\\\x1bXz\x1b\\t" => b"t";
        esc_inside_string_that_is_not_st: b"\x1b]0;a\x1bb\x07c" => b"c";
        charset_designation: b"\x1b(Bplain\x1b)0" => b"plain";
        two_byte_escape: b"\x1bcreset\x1b7\x1b8" => b"reset";
        tilde_is_a_final_byte: b"\x1b~x\x1b[~y" => b"xy";
        csi_aborted_by_newline_keeps_newline: b"\x1b[12\nnext" => b"\nnext";
        csi_aborted_by_utf8_keeps_the_character: "\x1b[1é".as_bytes() => "é".as_bytes();
        csi_aborted_by_delete: b"\x1b[\x7fx" => b"\x7fx";
        escape_followed_by_control_byte: b"\x1b\nx" => b"\nx";
        escape_followed_by_delete: b"\x1b\x7fx" => b"\x7fx";
        intermediate_followed_by_newline: b"\x1b(\nx" => b"\nx";
        osc_aborted_by_newline: b"\x1b]0;title\nrest" => b"\nrest";
        osc_escape_aborted_by_newline: b"\x1b]0;title\x1b\nrest" => b"\nrest";
        escape_escape: b"\x1b\x1b[31mred" => b"red";
        utf8_text_survives: "naïve — ✓\n".as_bytes() => "naïve — ✓\n".as_bytes();
    }

    #[test]
    fn state_is_kept_between_many_small_chunks() {
        let input = b"\x1b[38;5;196mred\x1b[0m \x1b]2;t\x07ok";
        let chunks: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(strip(&chunks), b"red ok");
    }
}
