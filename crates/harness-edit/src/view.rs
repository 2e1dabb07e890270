//! Numbered lines of a file, capped so one look cannot flood a model's context.

use std::fmt;

use camino::Utf8Path;

use crate::Error;
use crate::text::line_count;

/// Lines of a text file, numbered, as [`Editor::view`](crate::Editor::view) shows them.
///
/// Each line is `{number:>6}\t{line}`, the format of `cat -n`, without the
/// line's `\r\n` or `\n`. When not every line of the file is shown, a last
/// line in brackets says which lines are and how to see the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    text: String,
    first_line: usize,
    last_line: usize,
    total_lines: usize,
}

impl View {
    /// The numbered lines, and the note on the rest when some are not shown.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The 1-based number of the first line shown.
    pub fn first_line(&self) -> usize {
        self.first_line
    }

    /// The 1-based number of the last line shown; `first_line() - 1` when no line is.
    pub fn last_line(&self) -> usize {
        self.last_line
    }

    /// The number of lines in the file.
    pub fn total_lines(&self) -> usize {
        self.total_lines
    }
}

impl fmt::Display for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// How much one view may show.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ViewCap {
    /// The most lines shown.
    pub(crate) lines: usize,
    /// The most bytes of numbered text shown (a longer single line is cut).
    pub(crate) bytes: usize,
}

/// The view of lines `start..=end` (1-based; `None`: from the first, to the
/// last) of `body`, the text of the file at `path`.
pub(crate) fn view(
    path: &Utf8Path,
    body: &str,
    start: Option<usize>,
    end: Option<usize>,
    cap: ViewCap,
) -> Result<View, Error> {
    let total = line_count(body);
    let first = start.unwrap_or(1);
    // An empty file has no line 1, but viewing it from the start is fine.
    if first == 0 || first > total.max(1) {
        return Err(Error::LineOutOfRange {
            path: path.into(),
            argument: "start_line",
            value: first,
            min: 1,
            lines: total,
        });
    }
    if let Some(end) = end
        && end < first
    {
        return Err(Error::InvalidRange {
            path: path.into(),
            start: first,
            end,
        });
    }
    let wanted_last = end.map_or(total, |end| end.min(total));

    let mut text = String::new();
    let mut last = first - 1;
    for line in body.split_inclusive('\n').skip(first - 1) {
        if last == wanted_last || last + 1 - first == cap.lines {
            break;
        }
        let numbered = numbered_line(last + 1, line);
        if text.len() + numbered.len() > cap.bytes {
            if text.is_empty() {
                // A single line over the cap is shown cut, or nothing would be.
                text = cut_line(&numbered, line, cap.bytes);
                last += 1;
            }
            break;
        }
        text.push_str(&numbered);
        last += 1;
    }

    if total == 0 {
        text.push_str(&format!("[{path} is empty]\n"));
    } else if last < wanted_last {
        text.push_str(&format!(
            "[lines {first}-{last} of {total} shown: a view shows at most {} lines or {} \
             bytes; to see more, view again with start_line={}]\n",
            cap.lines,
            cap.bytes,
            last + 1
        ));
    } else if first > 1 || last < total {
        text.push_str(&format!("[lines {first}-{last} of {total} shown]\n"));
    }
    Ok(View {
        text,
        first_line: first,
        last_line: last,
        total_lines: total,
    })
}

/// Line `number` (1-based) of a file as a view shows it, with its line break
/// as a plain `\n`.
pub(crate) fn numbered_line(number: usize, line: &str) -> String {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    format!("{number:>6}\t{line}\n")
}

/// `numbered`, the numbered form of `line`, cut to at most `max_len` bytes on
/// a character boundary, saying so.
fn cut_line(numbered: &str, line: &str, max_len: usize) -> String {
    let cut = (0..=max_len.min(numbered.len()))
        .rev()
        .find(|&at| numbered.is_char_boundary(at))
        .unwrap_or(0);
    format!(
        "{} [... line cut: it is {} bytes long; use a command such as `cut -c` to see all of it]\n",
        &numbered[..cut],
        line.trim_end_matches(['\n', '\r']).len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: ViewCap = ViewCap {
        lines: 400,
        bytes: 32 * 1024,
    };

    fn show(body: &str, start: Option<usize>, end: Option<usize>, cap: ViewCap) -> View {
        view(Utf8Path::new("f.txt"), body, start, end, cap).expect("a valid view")
    }

    fn refusal(body: &str, start: Option<usize>, end: Option<usize>) -> Error {
        view(Utf8Path::new("f.txt"), body, start, end, CAP).expect_err("an invalid view")
    }

    fn numbered(lines: usize) -> String {
        (1..=lines).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn whole_small_file_has_no_note() {
        let view = show("a\r\nb\n", None, None, CAP);
        assert_eq!(view.text(), "     1\ta\n     2\tb\n");
        assert_eq!(
            (view.first_line(), view.last_line(), view.total_lines()),
            (1, 2, 2)
        );
        assert_eq!(view.to_string(), view.text());
    }

    #[test]
    fn last_line_without_newline_is_shown() {
        assert_eq!(
            show("a\nb", None, None, CAP).text(),
            "     1\ta\n     2\tb\n"
        );
    }

    #[test]
    fn a_range_is_shown_with_where_it_is() {
        let view = show(&numbered(10), Some(3), Some(4), CAP);
        assert_eq!(
            view.text(),
            "     3\tline 3\n     4\tline 4\n[lines 3-4 of 10 shown]\n"
        );
        assert_eq!((view.first_line(), view.last_line()), (3, 4));
    }

    #[test]
    fn a_range_to_the_end_from_the_middle_says_where_it_starts() {
        let view = show(&numbered(3), Some(2), None, CAP);
        assert_eq!(
            view.text(),
            "     2\tline 2\n     3\tline 3\n[lines 2-3 of 3 shown]\n"
        );
    }

    #[test]
    fn a_range_from_the_start_short_of_the_end_says_so() {
        let view = show(&numbered(3), Some(1), Some(2), CAP);
        assert_eq!(
            view.text(),
            "     1\tline 1\n     2\tline 2\n[lines 1-2 of 3 shown]\n"
        );
    }

    #[test]
    fn end_past_the_file_is_clamped() {
        let view = show(&numbered(3), Some(3), Some(99), CAP);
        assert_eq!(view.text(), "     3\tline 3\n[lines 3-3 of 3 shown]\n");
    }

    #[test]
    fn single_line_range() {
        let view = show(&numbered(3), Some(2), Some(2), CAP);
        assert_eq!((view.first_line(), view.last_line()), (2, 2));
    }

    #[test]
    fn line_cap_cuts_and_says_how_to_go_on() {
        let cap = ViewCap {
            lines: 2,
            bytes: 1024,
        };
        let view = show(&numbered(5), None, None, cap);
        assert_eq!(
            view.text(),
            "     1\tline 1\n     2\tline 2\n[lines 1-2 of 5 shown: a view shows at most 2 \
             lines or 1024 bytes; to see more, view again with start_line=3]\n"
        );
        let rest = show(&numbered(5), Some(3), None, cap);
        assert_eq!((rest.first_line(), rest.last_line()), (3, 4));
    }

    #[test]
    fn exactly_the_line_cap_is_whole() {
        let cap = ViewCap {
            lines: 3,
            bytes: 1024,
        };
        assert_eq!(show(&numbered(3), None, None, cap).last_line(), 3);
    }

    #[test]
    fn byte_cap_cuts_between_lines() {
        // Each numbered line is 14 bytes: "     1\tline 1\n".
        let cap = ViewCap {
            lines: 100,
            bytes: 28,
        };
        let view = show(&numbered(5), None, None, cap);
        assert_eq!(view.last_line(), 2);
        assert!(view.text().contains("start_line=3]"), "{}", view.text());
        let cap = ViewCap {
            lines: 100,
            bytes: 27,
        };
        assert_eq!(show(&numbered(5), None, None, cap).last_line(), 1);
    }

    #[test]
    fn one_long_line_is_cut_on_a_character_boundary() {
        let cap = ViewCap {
            lines: 100,
            bytes: 10,
        };
        let view = show("ééééééééé\nnext\n", None, None, cap);
        assert_eq!(
            view.text(),
            "     1\té [... line cut: it is 18 bytes long; use a command such as `cut -c` \
             to see all of it]\n[lines 1-1 of 2 shown: a view shows at most 100 lines or 10 \
             bytes; to see more, view again with start_line=2]\n"
        );
    }

    #[test]
    fn a_line_exactly_at_the_byte_cap_is_not_cut() {
        // "     1\tab\n" is 10 bytes.
        let cap = ViewCap {
            lines: 100,
            bytes: 10,
        };
        assert_eq!(show("ab", None, None, cap).text(), "     1\tab\n");
        let cap = ViewCap {
            lines: 100,
            bytes: 9,
        };
        assert!(
            show("ab", None, None, cap)
                .text()
                .starts_with("     1\tab [... line cut")
        );
    }

    #[test]
    fn empty_file_says_it_is_empty() {
        let view = show("", None, None, CAP);
        assert_eq!(view.text(), "[f.txt is empty]\n");
        assert_eq!(
            (view.first_line(), view.last_line(), view.total_lines()),
            (1, 0, 0)
        );
        assert_eq!(show("", Some(1), Some(5), CAP).text(), "[f.txt is empty]\n");
    }

    #[test]
    fn start_line_zero_is_refused() {
        assert!(matches!(
            refusal("a\n", Some(0), None),
            Error::LineOutOfRange {
                argument: "start_line",
                value: 0,
                min: 1,
                lines: 1,
                ..
            }
        ));
    }

    #[test]
    fn start_past_the_end_is_refused() {
        assert!(matches!(
            refusal("a\nb\n", Some(3), None),
            Error::LineOutOfRange {
                value: 3,
                lines: 2,
                ..
            }
        ));
        assert!(matches!(
            refusal("", Some(2), None),
            Error::LineOutOfRange {
                value: 2,
                lines: 0,
                ..
            }
        ));
    }

    #[test]
    fn last_line_as_start_is_fine() {
        assert_eq!(show("a\nb\n", Some(2), None, CAP).last_line(), 2);
    }

    #[test]
    fn end_before_start_is_refused() {
        assert!(matches!(
            refusal(&numbered(5), Some(3), Some(2)),
            Error::InvalidRange {
                start: 3,
                end: 2,
                ..
            }
        ));
    }

    #[test]
    fn numbered_lines_drop_their_line_break() {
        assert_eq!(numbered_line(7, "x\r\n"), "     7\tx\n");
        assert_eq!(numbered_line(7, "x\n"), "     7\tx\n");
        assert_eq!(numbered_line(1234567, "x\r"), "1234567\tx\n");
        assert_eq!(numbered_line(1, "a\rb"), "     1\ta\rb\n");
    }
}
