//! A file's bytes as text we can edit, and back, in the file's own style.
//!
//! A file keeps what an editor would keep: its line-ending style (text a model
//! sends is converted to it), its UTF-8 byte-order mark, and whether its last
//! line ends with a line break. Binary files and invalid UTF-8 are refused
//! before anything else looks at them.

use std::borrow::Cow;

use camino::Utf8Path;

use crate::Error;

/// How many leading bytes are searched for a NUL to call a file binary (what
/// git and GNU diff do: text files do not contain NUL).
pub(crate) const BINARY_SNIFF_LEN: usize = 8 * 1024;

/// The UTF-8 encoding of U+FEFF, which some Windows tools put at the start of a file.
const BOM: &str = "\u{feff}";

/// A text file decoded for editing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextFile {
    /// The text after the byte-order mark, byte for byte as in the file.
    pub(crate) body: String,
    /// Whether the file started with a UTF-8 byte-order mark.
    bom: bool,
    /// The style of the file's first line break; `None` while it has none.
    line_ending: Option<LineEnding>,
    /// How the last line ends.
    ending: Ending,
}

/// A line-break style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEnding {
    /// `\n`, as on Unix.
    Lf,
    /// `\r\n`, as on Windows.
    CrLf,
}

/// How a file's text ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// The file is empty: there is no convention to keep.
    Empty,
    /// The last line ends with a line break.
    LineBreak,
    /// The last line has no line break.
    NoLineBreak,
}

impl TextFile {
    /// Decodes `bytes` read from `path`, refusing what this crate cannot edit
    /// safely: binary content and invalid UTF-8. (The size limit is checked
    /// before reading: see [`check_len`].)
    pub(crate) fn decode(path: &Utf8Path, bytes: Vec<u8>) -> Result<Self, Error> {
        if is_binary(&bytes) {
            return Err(Error::Binary { path: path.into() });
        }
        let mut text = String::from_utf8(bytes).map_err(|err| {
            let valid = &err.as_bytes()[..err.utf8_error().valid_up_to()];
            Error::InvalidUtf8 {
                path: path.into(),
                line: line_count_before(valid) + 1,
            }
        })?;
        let bom = text.starts_with(BOM);
        if bom {
            text.drain(..BOM.len());
        }
        let ending = if text.is_empty() {
            Ending::Empty
        } else if text.ends_with('\n') {
            Ending::LineBreak
        } else {
            Ending::NoLineBreak
        };
        Ok(TextFile {
            line_ending: LineEnding::detect(&text),
            body: text,
            bom,
            ending,
        })
    }

    /// Converts the line breaks of `text` (from a model) to this file's
    /// style. A file without any line break yet has no style, so `text` is
    /// kept as it is.
    pub(crate) fn conform(&self, text: &str) -> String {
        match self.line_ending {
            None => text.to_owned(),
            Some(LineEnding::Lf) => text.replace("\r\n", "\n"),
            Some(LineEnding::CrLf) => text.replace("\r\n", "\n").replace('\n', "\r\n"),
        }
    }

    /// The line break to use where this file needs a new one.
    pub(crate) fn newline(&self) -> &'static str {
        match self.line_ending {
            Some(LineEnding::CrLf) => "\r\n",
            Some(LineEnding::Lf) | None => "\n",
        }
    }

    /// Gives an edited body the ending the file had: a final line break is
    /// added back if the file had one, and removed if it had none. An empty
    /// file had no convention, and an emptied body stays empty.
    pub(crate) fn keep_ending(&self, mut body: String) -> String {
        match self.ending {
            Ending::LineBreak if !body.is_empty() && !body.ends_with('\n') => {
                body.push_str(self.newline());
            }
            Ending::NoLineBreak if body.ends_with('\n') => {
                body.pop();
                if body.ends_with('\r') {
                    body.pop();
                }
            }
            Ending::Empty | Ending::LineBreak | Ending::NoLineBreak => {}
        }
        body
    }

    /// The bytes to write for an edited body: the byte-order mark goes back
    /// in front (without it, the body is written as it is, not copied).
    pub(crate) fn encode<'a>(&self, body: &'a str) -> Cow<'a, [u8]> {
        if self.bom {
            Cow::Owned([BOM.as_bytes(), body.as_bytes()].concat())
        } else {
            Cow::Borrowed(body.as_bytes())
        }
    }
}

impl LineEnding {
    /// The style of the first line break in `text`, `None` without one.
    ///
    /// The first line break decides, as in most editors: a mixed file keeps
    /// its odd lines untouched, and only new text takes the first style.
    fn detect(text: &str) -> Option<LineEnding> {
        let newline = text.find('\n')?;
        if text[..newline].ends_with('\r') {
            Some(LineEnding::CrLf)
        } else {
            Some(LineEnding::Lf)
        }
    }
}

/// Refuses a file or content of more than `max_len` bytes.
pub(crate) fn check_len(path: &Utf8Path, len: u64, max_len: u64) -> Result<(), Error> {
    if len > max_len {
        return Err(Error::TooLarge {
            path: path.into(),
            len,
            max_len,
        });
    }
    Ok(())
}

/// True if and only if a NUL byte occurs in the first [`BINARY_SNIFF_LEN`] bytes.
fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF_LEN)].contains(&0)
}

/// The number of line breaks in `bytes`: the 0-based line at its end.
pub(crate) fn line_count_before(bytes: &[u8]) -> usize {
    // memchr counts with SIMD: ten times a byte loop on a large file.
    memchr::memchr_iter(b'\n', bytes).count()
}

/// The number of lines in `text`; a last line without a line break counts.
pub(crate) fn line_count(text: &str) -> usize {
    let breaks = line_count_before(text.as_bytes());
    if text.is_empty() || text.ends_with('\n') {
        breaks
    } else {
        breaks + 1
    }
}

/// The byte offset where 0-based line `line` starts, or the text's length
/// when `text` has fewer lines.
pub(crate) fn line_start(text: &str, line: usize) -> usize {
    if line == 0 {
        return 0;
    }
    memchr::memchr_iter(b'\n', text.as_bytes())
        .nth(line - 1)
        .map_or(text.len(), |at| at + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> Result<TextFile, Error> {
        TextFile::decode(Utf8Path::new("f.txt"), bytes.to_vec())
    }

    fn file(text: &str) -> TextFile {
        decode(text.as_bytes()).expect("test text is valid")
    }

    /// Runs an edit the way the editor does: conform, edit, keep the ending, encode.
    fn roundtrip(original: &str, edit: impl Fn(&TextFile, &str) -> String) -> String {
        let file = file(original);
        let edited = edit(&file, &file.body);
        String::from_utf8(file.encode(&file.keep_ending(edited)).into_owned())
            .expect("utf-8 in, utf-8 out")
    }

    macro_rules! line_endings {
        ($($name:ident: $text:expr => $expected:expr,)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(LineEnding::detect($text), $expected);
            }
        )*};
    }

    line_endings! {
        no_line_break_has_no_style: "abc" => None,
        empty_has_no_style: "" => None,
        lf: "a\nb\n" => Some(LineEnding::Lf),
        crlf: "a\r\nb\r\n" => Some(LineEnding::CrLf),
        first_break_decides_crlf: "a\r\nb\nc\n" => Some(LineEnding::CrLf),
        first_break_decides_lf: "a\nb\r\nc\r\n" => Some(LineEnding::Lf),
        lone_cr_elsewhere_is_not_crlf: "a\rb\n" => Some(LineEnding::Lf),
        crlf_on_an_empty_first_line: "\r\n" => Some(LineEnding::CrLf),
    }

    macro_rules! conform {
        ($($name:ident: $file:expr, $text:expr => $expected:expr,)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(file($file).conform($text), $expected);
            }
        )*};
    }

    conform! {
        lf_text_into_crlf_file: "a\r\n", "x\ny\n" => "x\r\ny\r\n",
        crlf_text_into_crlf_file_is_not_doubled: "a\r\n", "x\r\ny" => "x\r\ny",
        mixed_text_into_crlf_file: "a\r\n", "x\r\ny\nz" => "x\r\ny\r\nz",
        crlf_text_into_lf_file: "a\n", "x\r\ny\r\n" => "x\ny\n",
        lone_cr_is_kept_in_lf_file: "a\n", "x\ry" => "x\ry",
        text_kept_as_is_without_a_style: "abc", "x\r\ny\n" => "x\r\ny\n",
    }

    #[test]
    fn newline_follows_the_style() {
        assert_eq!(file("a\r\n").newline(), "\r\n");
        assert_eq!(file("a\n").newline(), "\n");
        assert_eq!(file("a").newline(), "\n");
    }

    macro_rules! keep_ending {
        ($($name:ident: $file:expr, $edited:expr => $expected:expr,)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(file($file).keep_ending($edited.to_owned()), $expected);
            }
        )*};
    }

    keep_ending! {
        final_newline_is_added_back: "a\n", "b" => "b\n",
        final_crlf_is_added_back: "a\r\n", "b" => "b\r\n",
        final_newline_is_not_doubled: "a\n", "b\n" => "b\n",
        emptied_file_stays_empty: "a\n", "" => "",
        missing_final_newline_stays_missing: "a", "b\n" => "b",
        missing_final_crlf_stays_missing: "a\r\nb", "a\r\nc\r\n" => "a\r\nc",
        only_one_line_break_is_removed: "a", "b\n\n" => "b\n",
        lone_cr_before_the_removed_newline_goes_too: "a", "b\r\n" => "b",
        no_final_newline_and_none_added: "a", "b" => "b",
        empty_file_keeps_what_it_gets: "", "b\n" => "b\n",
        empty_file_keeps_no_newline: "", "b" => "b",
    }

    #[test]
    fn bom_is_stripped_for_editing_and_written_back() {
        let file = file("\u{feff}a\n");
        assert_eq!(file.body, "a\n");
        assert_eq!(*file.encode("b\n"), *b"\xef\xbb\xbfb\n");
    }

    #[test]
    fn no_bom_is_added() {
        assert_eq!(*file("a\n").encode("b\n"), *b"b\n");
    }

    #[test]
    fn bom_only_file_is_empty() {
        let file = file("\u{feff}");
        assert_eq!(file.body, "");
        assert_eq!(file.keep_ending("x".to_owned()), "x");
    }

    #[test]
    fn crlf_file_roundtrip_keeps_every_byte_it_did_not_edit() {
        let out = roundtrip("\u{feff}one\r\ntwo\r\nthree", |file, body| {
            body.replace("two", &file.conform("2\nand a half"))
        });
        assert_eq!(out, "\u{feff}one\r\n2\r\nand a half\r\nthree");
    }

    #[test]
    fn nul_in_the_first_8_kib_is_binary() {
        let mut bytes = vec![b'a'; 9000];
        bytes[8191] = 0;
        assert!(matches!(decode(&bytes), Err(Error::Binary { .. })));
    }

    #[test]
    fn nul_after_the_first_8_kib_is_not_looked_for() {
        let mut bytes = vec![b'a'; 9000];
        bytes[8192] = 0;
        assert!(decode(&bytes).is_ok());
    }

    #[test]
    fn nul_in_a_short_file_is_binary() {
        assert!(matches!(decode(b"a\0b"), Err(Error::Binary { .. })));
    }

    #[test]
    fn binary_wins_over_invalid_utf8() {
        assert!(matches!(decode(b"\xff\0"), Err(Error::Binary { .. })));
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let err = decode(b"ok\nok\nbad \xff here\n").expect_err("invalid UTF-8");
        assert!(matches!(err, Error::InvalidUtf8 { line: 3, .. }), "{err:?}");
    }

    #[test]
    fn invalid_utf8_on_the_first_line() {
        let err = decode(b"\xc3(").expect_err("invalid UTF-8");
        assert!(matches!(err, Error::InvalidUtf8 { line: 1, .. }), "{err:?}");
    }

    #[test]
    fn length_limit_is_inclusive() {
        let path = Utf8Path::new("f.txt");
        assert!(check_len(path, 10, 10).is_ok());
        let err = check_len(path, 11, 10).expect_err("over the limit");
        assert!(
            matches!(
                err,
                Error::TooLarge {
                    len: 11,
                    max_len: 10,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    macro_rules! line_counts {
        ($($name:ident: $text:expr => $expected:expr,)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(line_count($text), $expected);
            }
        )*};
    }

    line_counts! {
        empty_has_no_lines: "" => 0,
        one_unterminated_line: "a" => 1,
        one_terminated_line: "a\n" => 1,
        two_lines_unterminated: "a\nb" => 2,
        one_empty_line: "\n" => 1,
        blank_lines_count: "\n\n\n" => 3,
    }

    #[test]
    fn line_starts() {
        let text = "ab\ncd\nef";
        assert_eq!(line_start(text, 0), 0);
        assert_eq!(line_start(text, 1), 3);
        assert_eq!(line_start(text, 2), 6);
        assert_eq!(line_start(text, 3), text.len());
        assert_eq!(line_start(text, 9), text.len());
        assert_eq!(line_start("ab\n", 1), 3);
    }
}
