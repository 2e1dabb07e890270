//! Degenerate output: an answer that repeats the same text until the token limit.
//!
//! A small model sometimes falls into a loop, writing the same few lines (or the same few
//! words) again and again until the output limit, which takes minutes on a laptop. The loop
//! is visible while the answer streams: the end of the text becomes periodic. This module
//! finds that moment, so the client can cut the request and say what repeated.
//!
//! Code repeats legitimately too: similar test lines, tables, long import lists, a matrix of
//! zeros. Those are similar but not identical (names and numbers change from line to line),
//! or identical but short. So only an *exact* repetition counts, and only once it is long:
//!
//! 1. the end of the text is periodic: it is one unit written at least twice in a row,
//!    exactly, byte for byte (the last copy may be unfinished);
//! 2. the unit is at most [`MAX_UNIT_BYTES`] long;
//! 3. the unit stands at least [`MIN_COPIES`] times in a row, and the copies together are at
//!    least [`MIN_SPAN_BYTES`] long: a loop of one short line must run for dozens of lines,
//!    a loop of a long paragraph for three copies.
//!
//! A loop whose copies differ (a counter that goes up, a word that changes) is not found.

use std::fmt;

/// The longest unit looked for, in bytes: a loop of a long paragraph or a whole function.
pub(crate) const MAX_UNIT_BYTES: usize = 2048;

/// The fewest copies of the unit in a row that count as a loop.
pub(crate) const MIN_COPIES: usize = 3;

/// The least length of the copies together, in bytes: about 150 tokens of a small model,
/// some seconds of generation on a laptop, and far longer than the identical runs legitimate
/// code has (a few blank lines, a separator line, a short row repeated a few times).
pub(crate) const MIN_SPAN_BYTES: usize = 600;

/// What repeated in an answer that was cut for repeating itself: see
/// [`FinishReason::Repetition`](crate::FinishReason::Repetition).
///
/// Its `Display` is a sentence for the model, naming what it repeated, e.g. `your answer
/// repeated the same 3 lines 6 times in a row and was cut off: "..."`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Repetition {
    /// One copy of the text that repeated, starting at a line's start when it spans lines.
    pub unit: String,
    /// How many copies stood in a row when the answer was cut: the length of the repeating
    /// text over the unit's, at least [`MIN_COPIES`](Repetition::MIN_COPIES).
    pub copies: usize,
}

impl Repetition {
    /// The fewest copies in a row that count as a loop.
    pub const MIN_COPIES: usize = MIN_COPIES;

    /// A repetition of `copies` copies of `unit`, for a caller's own tests (the client finds
    /// them itself).
    pub fn new(unit: impl Into<String>, copies: usize) -> Repetition {
        Repetition {
            unit: unit.into(),
            copies,
        }
    }
}

impl fmt::Display for Repetition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines = self.unit.matches('\n').count();
        let what = match lines {
            0 => format!("the same text ({} characters)", self.unit.chars().count()),
            1 => "the same line".to_owned(),
            n => format!("the same {n} lines"),
        };
        let excerpt: String = self.unit.chars().take(200).collect();
        let more = if excerpt.len() < self.unit.len() {
            "..."
        } else {
            ""
        };
        write!(
            f,
            "your answer repeated {what} {} times in a row and was cut off: {excerpt:?}{more}",
            self.copies
        )
    }
}

/// A loop found at the end of a text.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Loop {
    /// Where the text worth keeping ends: after the first copy of the unit.
    pub(crate) keep: usize,
    /// What repeated.
    pub(crate) repetition: Repetition,
}

/// The loop the end of `text` is in, if it is one by the rules of this module.
///
/// The shortest unit that qualifies is taken, so a line repeated is reported as that line,
/// not as two of them.
pub(crate) fn find_loop(text: &str) -> Option<Loop> {
    let bytes = text.as_bytes();
    let longest = MAX_UNIT_BYTES.min(bytes.len() / MIN_COPIES);
    let period = (1..=longest).find(|&period| {
        let needed = copies_needed(period) * period;
        needed <= bytes.len() && periodic_tail(bytes, period, needed) >= needed
    })?;
    let span = periodic_tail(bytes, period, bytes.len());
    Some(describe(text, period, span))
}

/// How many copies a unit of `period` bytes needs to count as a loop.
fn copies_needed(period: usize) -> usize {
    MIN_COPIES.max(MIN_SPAN_BYTES.div_ceil(period))
}

/// The length of the longest end of `bytes` that has period `period` (counting the first
/// copy), looking no further than `limit` bytes back.
fn periodic_tail(bytes: &[u8], period: usize, limit: usize) -> usize {
    let end = bytes.len();
    let limit = limit.min(end);
    let mut length = period;
    while length < limit && bytes[end - length - 1] == bytes[end - length - 1 + period] {
        length += 1;
    }
    length.min(end)
}

/// Names the loop of `period` bytes that covers the last `span` bytes of `text`.
fn describe(text: &str, period: usize, span: usize) -> Loop {
    let copies = span / period;
    let mut start = text.len() - span;
    // The copies are byte for byte equal, so once `start` is on a character boundary, so is
    // every copy's start; step over a partial character first.
    while !text.is_char_boundary(start) {
        start += 1;
    }
    // A unit of lines reads best from a line's start: when the copies begin inside a line,
    // turn the unit to begin after its first line break. That break lies within the first
    // copy, and at least two more copies follow, so a whole copy still comes after it.
    let at_line_start = start == 0 || text.as_bytes()[start - 1] == b'\n';
    if !at_line_start && let Some(newline) = text[start..start + period].find('\n') {
        start += newline + 1;
    }
    let keep = start + period;
    Loop {
        keep,
        repetition: Repetition {
            unit: text[start..keep].to_owned(),
            copies,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The text as it would stream: does a loop show at any point, and where is it first?
    fn first_loop(text: &str) -> Option<(usize, Loop)> {
        // Checking at every character boundary is what the stream does at every delta, at
        // its finest.
        text.char_indices()
            .map(|(index, c)| index + c.len_utf8())
            .find_map(|end| find_loop(&text[..end]).map(|found| (end, found)))
    }

    fn repeat(unit: &str, times: usize) -> String {
        unit.repeat(times)
    }

    // Degenerate answers, in the shapes small models produce them.

    const THREE_LINES: &str = "The function `mean` divides the sum by the count.\n\
        To fix it, return the sum divided by the length of the list.\n\
        Here is the corrected code:\n";

    #[test]
    fn three_lines_repeated_are_cut_after_a_few_copies_keeping_the_first() {
        let prefix = "I see the problem.\n";
        let text = format!("{prefix}{}", repeat(THREE_LINES, 40));
        let (seen_at, found) = first_loop(&text).expect("a loop");
        assert_eq!(found.repetition.unit, THREE_LINES);
        assert_eq!(&text[..found.keep], format!("{prefix}{THREE_LINES}"));
        // Cut as soon as the copies reach the span: the fifth copy of 139 bytes.
        let needed = copies_needed(THREE_LINES.len());
        assert_eq!(needed, 5);
        assert!(seen_at <= prefix.len() + needed * THREE_LINES.len());
        assert_eq!(found.repetition.copies, needed);
    }

    #[test]
    fn one_line_repeated_is_named_as_that_line() {
        let line = "I will now read the file to understand the problem.\n";
        let text = repeat(line, 100);
        let (_, found) = first_loop(&text).expect("a loop");
        assert_eq!(found.repetition.unit, line);
        assert_eq!(found.repetition.copies, MIN_SPAN_BYTES.div_ceil(line.len()));
        assert_eq!(&text[..found.keep], line);
        assert_eq!(
            found.repetition,
            Repetition::new(line, found.repetition.copies)
        );
        assert_eq!(
            found.repetition.to_string(),
            format!(
                "your answer repeated the same line {} times in a row and was cut off: {line:?}",
                found.repetition.copies
            )
        );
    }

    #[test]
    fn a_long_unit_is_quoted_shortened_and_a_short_one_whole() {
        let long = Repetition::new(format!("{}\n", "x".repeat(300)), 3);
        assert_eq!(
            long.to_string(),
            format!(
                "your answer repeated the same line 3 times in a row and was cut off: {:?}...",
                "x".repeat(200)
            )
        );
        let exact = Repetition::new("y".repeat(200), 3);
        assert!(!exact.to_string().ends_with("..."), "{exact}");
    }

    #[test]
    fn a_loop_that_begins_at_a_line_start_is_not_turned() {
        // The unit spans a line break but does not end in one; the copies begin right
        // after the prefix's line break.
        let unit = "Step one: read the file.\nStep two: edit it. ";
        let text = format!("Plan:\n{}", repeat(unit, 30));
        let (_, found) = first_loop(&text).expect("a loop");
        assert_eq!(found.repetition.unit, unit);
        assert_eq!(&text[..found.keep], format!("Plan:\n{unit}"));
    }

    #[test]
    fn words_repeated_without_line_breaks_are_found() {
        let text = format!("The fix is {}", repeat("to return the mean and ", 100));
        let (_, found) = first_loop(&text).expect("a loop");
        assert_eq!(found.repetition.unit.len(), "to return the mean and ".len());
        assert!(text[..found.keep].starts_with("The fix is "));
        assert!(
            found
                .repetition
                .to_string()
                .contains("the same text (23 characters)")
        );
    }

    #[test]
    fn a_tool_call_written_again_and_again_keeps_one_copy() {
        let call = "{\"name\": \"read_file\", \"arguments\": {\"path\": \"geometry.py\"}}\n";
        let text = repeat(call, 30);
        let (_, found) = first_loop(&text).expect("a loop");
        assert_eq!(&text[..found.keep], call);
    }

    #[test]
    fn a_whole_function_repeated_three_times_is_a_loop() {
        let function = "def mean(values):\n    \"\"\"The arithmetic mean of a non-empty list.\"\"\"\n    \
            if not values:\n        raise ValueError(\"mean of an empty list\")\n    total = 0\n    \
            for value in values:\n        total += value\n    return total / len(values)\n\n";
        assert!(function.len() >= MIN_SPAN_BYTES / MIN_COPIES);
        let text = format!("```python\n{}", repeat(function, 3));
        let (_, found) = first_loop(&text).expect("a loop");
        assert_eq!(found.repetition.unit, function);
        let twice = format!("```python\n{}", repeat(function, 2));
        assert_eq!(first_loop(&twice), None, "a file shown twice is not a loop");
    }

    #[test]
    fn a_single_character_loop_and_blank_lines_without_end_are_found() {
        assert!(first_loop(&repeat("!", 2000)).is_some());
        assert!(first_loop(&format!("Done.{}", repeat("\n", 2000))).is_some());
        let (_, found) = first_loop(&repeat("!", 2000)).unwrap();
        assert_eq!(found.repetition.unit, "!");
        assert_eq!(found.repetition.copies, MIN_SPAN_BYTES);
    }

    #[test]
    fn a_loop_of_multibyte_characters_is_cut_on_a_character_boundary() {
        // "©" ends in the byte 0xA9, as "é" does: the repeating bytes begin inside "©".
        let text = format!("©{}", repeat("ça va très bien, merci é", 40));
        let (_, found) = first_loop(&text).expect("a loop");
        assert_eq!(found.repetition.unit, "ça va très bien, merci é");
        assert_eq!(&text[..found.keep], format!("©{}", found.repetition.unit));
    }

    // Legitimate repetitive output: similar lines, short identical runs.

    fn lines(count: usize, line: impl Fn(usize) -> String) -> String {
        (0..count).map(|n| line(n) + "\n").collect()
    }

    #[test]
    fn many_similar_test_assertions_are_not_a_loop() {
        let text = lines(200, |n| {
            format!("        self.assertEqual(add({n}, 1), {})", n + 1)
        });
        assert_eq!(first_loop(&text), None);
    }

    #[test]
    fn many_similar_rust_tests_are_not_a_loop() {
        let text = lines(60, |n| {
            format!(
                "    #[test]\n    fn parses_case_{n}() {{\n        assert!(parse(\"{n}\").is_ok());\n    }}\n"
            )
        });
        assert_eq!(first_loop(&text), None);
    }

    #[test]
    fn a_long_import_list_is_not_a_loop() {
        let modules = [
            "os", "sys", "json", "re", "math", "time", "pathlib", "typing",
        ];
        let text = lines(120, |n| {
            format!("from {}.sub{} import name_{n}", modules[n % 8], n / 8)
        });
        assert_eq!(first_loop(&text), None);
    }

    #[test]
    fn a_table_with_rows_of_equal_shape_is_not_a_loop() {
        let mut text = "| input | expected |\n|-------|----------|\n".to_owned();
        text += &lines(100, |n| format!("| {n:5} | {:8} |", n * n));
        assert_eq!(first_loop(&text), None);
    }

    #[test]
    fn a_matrix_of_zeros_and_separator_lines_are_not_a_loop() {
        let row = "    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],\n";
        let text = format!(
            "# {}\ngrid = [\n{}]\n# {}\n",
            "=".repeat(78),
            repeat(row, 12),
            "-".repeat(120)
        );
        assert_eq!(first_loop(&text), None);
    }

    #[test]
    fn closing_braces_blank_lines_and_a_few_equal_lines_are_not_a_loop() {
        let text = format!(
            "fn f() {{\n    if a {{\n        if b {{\n            g();\n        }}\n    }}\n}}\n\n\n\n{}",
            repeat("    counter.increment();\n", 8)
        );
        assert_eq!(first_loop(&text), None);
    }

    #[test]
    fn json_records_with_ids_are_not_a_loop() {
        let text = lines(80, |n| {
            format!("  {{\"id\": {n}, \"name\": \"user\", \"active\": true}},")
        });
        assert_eq!(first_loop(&text), None);
    }

    proptest! {
        // Each case streams its text a character at a time: fewer cases keep this quick.
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn any_unit_repeated_long_enough_is_found_and_one_copy_kept(
            prefix in "[a-z .\n]{0,40}",
            unit in "[a-z(){}=;, \n]{1,120}",
        ) {
            let text = format!("{prefix}{}", unit.repeat(copies_needed(unit.len()) + 1));
            let (_, found) = first_loop(&text).expect("a loop");
            // The unit found may be a shorter period of `unit`, or a turn of it.
            prop_assert!(found.repetition.unit.len() <= unit.len());
            prop_assert!(found.repetition.copies >= MIN_COPIES);
            prop_assert!(text[found.keep..].starts_with(&found.repetition.unit));
            prop_assert!(found.keep <= prefix.len() + 2 * unit.len());
        }

        #[test]
        fn lines_that_all_differ_are_never_a_loop(
            words in proptest::collection::vec("[a-z]{1,8}", 1..6),
            count in 1usize..300,
        ) {
            let text = lines(count, |n| format!("{} {n}", words[n % words.len()]));
            prop_assert_eq!(first_loop(&text), None);
        }
    }
}
