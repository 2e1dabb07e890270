//! Finding `old_text` exactly once, and explaining a miss.
//!
//! A miss is explained by the region of the file most like `old_text`: the
//! window of lines where most lines of `old_text` occur when whitespace is
//! ignored, or, when no line does, the line most similar to the most
//! distinctive line of `old_text`. Each line of that region is then compared
//! with `old_text` to say what differs.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use camino::Utf8Path;

use crate::error::{Closest, Error};
use crate::text::line_count_before;
use crate::view::numbered_line;

/// How many match lines an ambiguous-match error keeps.
const LISTED_MATCHES: usize = 10;

/// How many region lines a no-match error shows, and how many differences it lists.
const SHOWN_REGION_LINES: usize = 30;
const LISTED_DIFFERENCES: usize = 10;

/// Work limit for the vote count in [`start_by_votes`]: a long `old_text` of
/// repeated lines against a file of the same lines must not stall an error message.
const VOTE_BUDGET: usize = 4_000_000;

/// How similar (0 to 1, as `similar` measures it) a line must be to count as
/// close when no line matches with whitespace ignored.
const SIMILARITY_CUTOFF: f32 = 0.6;

/// The byte offset of the only occurrence of `needle` in `text`.
///
/// Overlapping occurrences count: `aa` occurs twice in `aaa`, and replacing
/// either would be a guess.
pub(crate) fn find_unique(path: &Utf8Path, text: &str, needle: &str) -> Result<usize, Error> {
    let mut starts = Vec::new();
    let mut count = 0;
    let mut from = 0;
    // The step to the next possible start: one character, so overlaps are found.
    let step = needle.chars().next().map_or(1, char::len_utf8);
    while let Some(found) = text[from..].find(needle) {
        let at = from + found;
        count += 1;
        if starts.len() < LISTED_MATCHES {
            starts.push(at);
        }
        from = at + step;
    }
    match count {
        0 => Err(Error::NoMatch {
            path: path.into(),
            closest: closest(text, needle),
        }),
        1 => Ok(starts[0]),
        _ => Err(Error::AmbiguousMatch {
            path: path.into(),
            count,
            lines: line_numbers(text, &starts),
        }),
    }
}

/// The 1-based line of each of the ascending byte offsets `starts`.
fn line_numbers(text: &str, starts: &[usize]) -> Vec<usize> {
    let mut line = 1;
    let mut counted = 0;
    starts
        .iter()
        .map(|&at| {
            line += line_count_before(&text.as_bytes()[counted..at]);
            counted = at;
            line
        })
        .collect()
}

/// The region of `text` most like `needle`, and what differs, if any region
/// is like it at all.
fn closest(text: &str, needle: &str) -> Option<Closest> {
    let file: Vec<&str> = lines(text).collect();
    let old: Vec<&str> = lines(needle).collect();
    let start =
        start_by_votes(&file, &old, VOTE_BUDGET).or_else(|| start_by_similarity(&file, &old))?;
    // A window starting before the file: its first lines of old_text are
    // compared with nothing.
    let skipped = usize::try_from(-start).unwrap_or(0);
    let first = usize::try_from(start).unwrap_or(0);
    let end = (first + old.len() - skipped).min(file.len());
    let region = &file[first..end];

    let mut text = String::new();
    for (i, line) in region.iter().take(SHOWN_REGION_LINES).enumerate() {
        text.push_str(&numbered_line(first + i + 1, line));
    }
    if region.len() > SHOWN_REGION_LINES {
        text.push_str(&format!(
            "   ...\t({} more lines)\n",
            region.len() - SHOWN_REGION_LINES
        ));
    }

    let mut differences = Vec::new();
    if skipped > 0 {
        differences.push(format!(
            "the first {skipped} lines of old_text are not at the start of the file"
        ));
    }
    differences.extend(line_differences(
        first,
        region,
        &old,
        skipped,
        needle.ends_with('\n'),
    ));
    if differences.len() > LISTED_DIFFERENCES {
        let more = differences.len() - LISTED_DIFFERENCES;
        differences.truncate(LISTED_DIFFERENCES);
        differences.push(format!("... and {more} more lines differ"));
    }
    Some(Closest {
        first_line: first + 1,
        last_line: end,
        text,
        differences,
    })
}

/// The lines of `text` without their `\n` (a `\r` before it stays, so line
/// endings can be compared).
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive('\n')
        .map(|line| line.strip_suffix('\n').unwrap_or(line))
}

/// The 0-based first line (negative: before the file) of the window of
/// `file` in which the most lines of `old` occur at their own place when
/// whitespace is ignored; `None` when no line does. Ties go to the earliest
/// window. Counting stops after `budget` votes, keeping the best window so far.
fn start_by_votes(file: &[&str], old: &[&str], budget: usize) -> Option<isize> {
    let mut wanted: HashMap<u64, Vec<usize>> = HashMap::new();
    for (j, line) in old.iter().enumerate() {
        if let Some(key) = whitespace_blind_key(line) {
            wanted.entry(key).or_default().push(j);
        }
    }
    // votes[s] counts the lines that agree with a window starting at line
    // s - (old.len() - 1): shifted so that windows starting before the
    // file (old_text's first lines missing from the file) need no negative index.
    let shift = old.len().saturating_sub(1);
    let mut votes = vec![0_usize; file.len() + shift];
    let mut remaining = budget;
    'count: for (i, line) in file.iter().enumerate() {
        let Some(positions) = whitespace_blind_key(line).and_then(|key| wanted.get(&key)) else {
            continue;
        };
        for &j in positions {
            if remaining == 0 {
                break 'count;
            }
            remaining -= 1;
            votes[i + shift - j] += 1;
        }
    }
    let (best, &count) = votes
        .iter()
        .enumerate()
        .max_by_key(|&(shifted, &count)| (count, Reverse(shifted)))?;
    (count > 0).then(|| signed(best) - signed(shift))
}

/// A hash of the words of `line`, blind to indentation, spacing and line
/// ending; `None` for a blank line, which says nothing about where it is.
fn whitespace_blind_key(line: &str) -> Option<u64> {
    let mut words = line.split_whitespace().peekable();
    words.peek()?;
    let mut hasher = DefaultHasher::new();
    for word in words {
        word.hash(&mut hasher);
    }
    Some(hasher.finish())
}

/// The 0-based first line (negative: before the file) of a window placing
/// the longest line of `old` on the line of `file` most similar to it; `None`
/// when no line is similar enough.
fn start_by_similarity(file: &[&str], old: &[&str]) -> Option<isize> {
    let (j, probe) = old
        .iter()
        .map(|line| line.trim())
        .enumerate()
        .max_by_key(|&(j, line)| (line.len(), Reverse(j)))?;
    let candidates: Vec<&str> = file.iter().map(|line| line.trim()).collect();
    let best = similar::get_close_matches(probe, &candidates, 1, SIMILARITY_CUTOFF);
    let i = candidates
        .iter()
        .position(|line| Some(line) == best.first())?;
    Some(signed(i) - signed(j))
}

/// A line index as a signed number; no text has `isize::MAX` lines.
fn signed(index: usize) -> isize {
    isize::try_from(index).expect("a line index fits in isize: texts are far smaller")
}

/// One sentence per line of `old` (from line `skipped` on) that differs
/// from the `region` of the file starting at 0-based line `first`.
fn line_differences(
    first: usize,
    region: &[&str],
    old: &[&str],
    skipped: usize,
    old_ends_with_newline: bool,
) -> Vec<String> {
    let compared = &old[skipped..];
    let mut found: Vec<String> = region
        .iter()
        .zip(compared)
        .enumerate()
        .filter_map(|(i, (file_line, old_line))| {
            // old_text may start in the middle of its first line and end in
            // the middle of its last one.
            let j = skipped + i;
            let partial = (j == 0 && file_line.ends_with(old_line))
                || (j + 1 == old.len()
                    && !old_ends_with_newline
                    && file_line.starts_with(old_line));
            if partial {
                return None;
            }
            describe(first + i + 1, file_line, old_line)
        })
        .collect();
    if compared.len() > region.len() {
        found.push(format!(
            "old_text has {} lines, but the file ends after line {}",
            old.len(),
            first + region.len()
        ));
    } else if found.is_empty() && skipped == 0 {
        // Every line agrees, so the miss is the line break after the last
        // one: old_text has it and the file, at its end, does not.
        found.push(format!(
            "line {}: old_text ends with a line break, but the file's last line has none; \
             leave it out of old_text",
            first + region.len()
        ));
    }
    found
}

/// What differs between line `number` of the file and the line of
/// `old_text` compared with it; `None` if nothing does.
fn describe(number: usize, file: &str, old: &str) -> Option<String> {
    if file == old {
        return None;
    }
    let file_cr = file.ends_with('\r');
    let old_cr = old.ends_with('\r');
    let file = file.trim_end_matches('\r');
    let old = old.trim_end_matches('\r');
    let sentence = if file == old {
        format!(
            "line {number}: the line ending differs: the file ends the line with {}, old_text with {}",
            ending_name(file_cr),
            ending_name(old_cr)
        )
    } else if file.trim_start() == old.trim_start() {
        format!(
            "line {number}: the indentation differs: the file has {:?}, old_text has {:?}",
            leading_whitespace(file),
            leading_whitespace(old)
        )
    } else if file.trim_end() == old.trim_end() {
        format!(
            "line {number}: the trailing whitespace differs: the file has {:?}, old_text has {:?}",
            &file[file.trim_end().len()..],
            &old[old.trim_end().len()..]
        )
    } else if file.split_whitespace().eq(old.split_whitespace()) {
        format!(
            "line {number}: the whitespace inside the line differs: the file has {file:?}, \
             old_text has {old:?}"
        )
    } else {
        format!("line {number}: the text differs: the file has {file:?}, old_text has {old:?}")
    };
    Some(sentence)
}

fn ending_name(crlf: bool) -> &'static str {
    if crlf { "CRLF (\\r\\n)" } else { "LF (\\n)" }
}

fn leading_whitespace(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(text: &str, needle: &str) -> Result<usize, Error> {
        find_unique(Utf8Path::new("f.py"), text, needle)
    }

    fn closest_of(text: &str, needle: &str) -> Closest {
        match find(text, needle) {
            Err(Error::NoMatch {
                closest: Some(closest),
                ..
            }) => closest,
            other => panic!("expected a no-match with a closest region, got {other:?}"),
        }
    }

    fn ambiguity(text: &str, needle: &str) -> (usize, Vec<usize>) {
        match find(text, needle) {
            Err(Error::AmbiguousMatch { count, lines, .. }) => (count, lines),
            other => panic!("expected an ambiguous match, got {other:?}"),
        }
    }

    #[test]
    fn a_unique_match_gives_its_offset() {
        assert_eq!(find("ab\ncd\nef\n", "cd\ne").expect("unique"), 3);
        assert_eq!(find("xyz", "xyz").expect("unique"), 0);
    }

    #[test]
    fn two_matches_are_refused_with_their_lines() {
        assert_eq!(ambiguity("a\na\n", "a"), (2, vec![1, 2]));
    }

    #[test]
    fn overlapping_matches_count() {
        assert_eq!(ambiguity("aaa", "aa"), (2, vec![1, 1]));
    }

    #[test]
    fn overlapping_matches_of_multibyte_text_count() {
        assert_eq!(ambiguity("ééé", "éé"), (2, vec![1, 1]));
    }

    #[test]
    fn ambiguous_lines_are_counted_across_matches() {
        assert_eq!(ambiguity("x\n\nx\nx\n\n\nx", "x"), (4, vec![1, 3, 4, 7]));
    }

    #[test]
    fn only_the_first_ten_match_lines_are_kept() {
        let text = "x\n".repeat(12);
        let (count, lines) = ambiguity(&text, "x");
        assert_eq!(count, 12);
        assert_eq!(lines, (1..=10).collect::<Vec<_>>());
    }

    #[test]
    fn no_region_like_it() {
        assert!(matches!(
            find("alpha\nbeta\n", "zzzz qqqq"),
            Err(Error::NoMatch { closest: None, .. })
        ));
    }

    #[test]
    fn blank_old_text_has_no_closest_region() {
        assert!(matches!(
            find("alpha\n", "   \n \n"),
            Err(Error::NoMatch { closest: None, .. })
        ));
    }

    #[test]
    fn indentation_difference_is_named() {
        let text = "def f():\n    return 1\n\ndef g():\n    return 2\n";
        let closest = closest_of(text, "def g():\n  return 2\n");
        assert_eq!((closest.first_line, closest.last_line), (4, 5));
        assert_eq!(closest.text, "     4\tdef g():\n     5\t    return 2\n");
        assert_eq!(
            closest.differences,
            ["line 5: the indentation differs: the file has \"    \", old_text has \"  \""]
        );
    }

    #[test]
    fn tabs_against_spaces_are_an_indentation_difference() {
        let closest = closest_of("if x:\n\tgo()\n", "if x:\n    go()");
        assert_eq!(
            closest.differences,
            ["line 2: the indentation differs: the file has \"\\t\", old_text has \"    \""]
        );
    }

    #[test]
    fn trailing_whitespace_difference_is_named() {
        let closest = closest_of("a = 1  \nb = 2\n", "a = 1\nb = 2\n");
        assert_eq!(
            closest.differences,
            ["line 1: the trailing whitespace differs: the file has \"  \", old_text has \"\""]
        );
    }

    #[test]
    fn inner_whitespace_difference_is_named() {
        let closest = closest_of("x\nf(a,  b)\n", "x\nf(a, b)\n");
        assert_eq!(
            closest.differences,
            [
                "line 2: the whitespace inside the line differs: the file has \"f(a,  b)\", \
                 old_text has \"f(a, b)\""
            ]
        );
    }

    #[test]
    fn line_ending_difference_is_named() {
        // A mixed file: the old text came in CRLF (the file's first style),
        // but these lines end in LF.
        let closest = closest_of("head\r\nb\nc\n", "b\r\nc\r\n");
        assert_eq!(
            closest.differences,
            [
                "line 2: the line ending differs: the file ends the line with LF (\\n), \
                 old_text with CRLF (\\r\\n)",
                "line 3: the line ending differs: the file ends the line with LF (\\n), \
                 old_text with CRLF (\\r\\n)",
            ]
        );
    }

    #[test]
    fn crlf_in_the_file_against_lf_in_old_text() {
        let closest = closest_of("head\nb\r\nc\n", "head\nb\nc\n");
        assert_eq!(
            closest.differences,
            [
                "line 2: the line ending differs: the file ends the line with CRLF (\\r\\n), \
                 old_text with LF (\\n)"
            ]
        );
    }

    #[test]
    fn changed_text_is_shown_both_ways() {
        let closest = closest_of("a\nb = 1\nc\n", "a\nb = 2\nc\n");
        assert_eq!(
            closest.differences,
            ["line 2: the text differs: the file has \"b = 1\", old_text has \"b = 2\""]
        );
    }

    #[test]
    fn old_text_may_start_and_end_mid_line() {
        // The first line matches the end of its file line and the last line
        // the start of its file line; only the middle line differs.
        let closest = closest_of(
            "let a = 1;\nlet b = 2;\nlet c = 3;\n",
            "a = 1;\nlet b = 9;\nlet c",
        );
        assert_eq!(
            closest.differences,
            ["line 2: the text differs: the file has \"let b = 2;\", old_text has \"let b = 9;\""]
        );
    }

    #[test]
    fn a_mid_line_start_is_only_allowed_on_the_first_line() {
        let closest = closest_of("a\nxb\nc\n", "a\nb\nc\n");
        assert_eq!(
            closest.differences,
            ["line 2: the text differs: the file has \"xb\", old_text has \"b\""]
        );
    }

    #[test]
    fn a_mid_line_end_is_only_allowed_without_a_final_line_break() {
        let closest = closest_of("a\nbx\n", "a\nb\n");
        assert_eq!(
            closest.differences,
            ["line 2: the text differs: the file has \"bx\", old_text has \"b\""]
        );
    }

    #[test]
    fn a_mid_line_end_is_only_allowed_on_the_last_line() {
        let closest = closest_of("a\nbx\nc\n", "a\nb\nc");
        assert_eq!(
            closest.differences,
            ["line 2: the text differs: the file has \"bx\", old_text has \"b\""]
        );
    }

    #[test]
    fn a_final_line_break_the_file_lacks_is_named() {
        let closest = closest_of("a\nb", "a\nb\n");
        assert_eq!(
            closest.differences,
            [
                "line 2: old_text ends with a line break, but the file's last line has none; \
                 leave it out of old_text"
            ]
        );
    }

    #[test]
    fn old_text_running_past_the_end_of_the_file_is_named() {
        let closest = closest_of("x\ny\n", "x\ny\nz\n");
        assert_eq!((closest.first_line, closest.last_line), (1, 2));
        assert_eq!(
            closest.differences,
            ["old_text has 3 lines, but the file ends after line 2"]
        );
    }

    #[test]
    fn the_window_with_the_most_agreeing_lines_wins() {
        let text = "fn a() {\n    one();\n}\nfn b() {\n    two();\n    three();\n}\n";
        let closest = closest_of(text, "fn b() {\n    two();\n    four();\n}\n");
        assert_eq!((closest.first_line, closest.last_line), (4, 7));
    }

    #[test]
    fn ties_go_to_the_earliest_window() {
        let closest = closest_of("k\nv1\nk\nv2\n", "k\nv3\n");
        assert_eq!(closest.first_line, 1);
    }

    #[test]
    fn a_window_may_start_before_the_file() {
        // old_text's first line is missing from the file: its second line
        // agrees with line 1.
        let closest = closest_of("middle\nend\n", "missing\nmiddle\n");
        assert_eq!((closest.first_line, closest.last_line), (1, 1));
        assert_eq!(closest.text, "     1\tmiddle\n");
        assert_eq!(
            closest.differences,
            ["the first 1 lines of old_text are not at the start of the file"]
        );
    }

    #[test]
    fn a_window_before_the_file_compares_the_lines_it_holds() {
        let closest = closest_of("b\n  c\nd\n", "a\nb\nc\n");
        assert_eq!((closest.first_line, closest.last_line), (1, 2));
        assert_eq!(
            closest.differences,
            [
                "the first 1 lines of old_text are not at the start of the file",
                "line 2: the indentation differs: the file has \"  \", old_text has \"\"",
            ]
        );
    }

    #[test]
    fn similarity_window_may_start_before_the_file() {
        let closest = closest_of(
            "let value = compute(1, 2, 3);\nz\n",
            "q\nlet value = compute(1, 2, 4);\n",
        );
        assert_eq!((closest.first_line, closest.last_line), (1, 1));
        assert_eq!(closest.differences.len(), 2, "{:?}", closest.differences);
    }

    #[test]
    fn similar_line_is_found_when_no_line_agrees() {
        let text = "alpha\nfn compute(x: i32) -> i32 {\nomega\n";
        let closest = closest_of(text, "fn compute(x: i64) -> i64 {");
        assert_eq!((closest.first_line, closest.last_line), (2, 2));
    }

    #[test]
    fn similarity_places_the_window_around_the_longest_line() {
        let text = "one\ntwo\nlet value = compute(1, 2, 3);\nfour\n";
        let closest = closest_of(text, "x\nlet value = compute(1, 2, 4);\ny\n");
        assert_eq!((closest.first_line, closest.last_line), (2, 4));
    }

    #[test]
    fn similarity_prefers_the_first_of_equally_long_lines() {
        let text = "aaaa bbbb\nzzzz\n";
        let closest = closest_of(text, "aaaa bbbc\nqqqq yyyy\n");
        assert_eq!(closest.first_line, 1);
    }

    #[test]
    fn similarity_prefers_the_earliest_equal_line() {
        let text = "zz\nabcdefgh\nabcdefgh\n";
        let closest = closest_of(text, "abcdefgx");
        assert_eq!(closest.first_line, 2);
    }

    #[test]
    fn a_long_region_is_shortened() {
        let text: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let needle = text.replace("line 39", "line 99");
        let closest = closest_of(&text, &needle);
        assert_eq!((closest.first_line, closest.last_line), (1, 40));
        assert_eq!(closest.text.lines().count(), SHOWN_REGION_LINES + 1);
        assert!(
            closest.text.ends_with("   ...\t(10 more lines)\n"),
            "{}",
            closest.text
        );
    }

    #[test]
    fn a_region_of_exactly_the_shown_length_is_not_shortened() {
        let text: String = (0..SHOWN_REGION_LINES)
            .map(|i| format!("line {i}\n"))
            .collect();
        let needle = text.replace("line 0\n", "line x\n");
        let closest = closest_of(&text, &needle);
        assert_eq!(closest.text.lines().count(), SHOWN_REGION_LINES);
    }

    #[test]
    fn many_differences_are_shortened() {
        let text: String = (0..12).map(|i| format!("v{i} = {i}\n")).collect();
        let needle: String = (0..12).map(|i| format!("v{i} =  {i}\n")).collect();
        let closest = closest_of(&text, &needle);
        assert_eq!(closest.differences.len(), LISTED_DIFFERENCES + 1);
        assert_eq!(
            closest.differences[LISTED_DIFFERENCES],
            "... and 2 more lines differ"
        );
    }

    #[test]
    fn exactly_the_listed_number_of_differences_is_not_shortened() {
        let text: String = (0..LISTED_DIFFERENCES)
            .map(|i| format!("v{i} = {i}\n"))
            .collect();
        let needle = text.replace(" = ", " =  ");
        let closest = closest_of(&text, &needle);
        assert_eq!(closest.differences.len(), LISTED_DIFFERENCES);
    }

    #[test]
    fn votes_stop_at_the_budget() {
        let file = ["a", "b", "x", "b"];
        let old = ["x", "b"];
        // Unlimited: "x b" at lines 3-4 wins with two votes.
        assert_eq!(start_by_votes(&file, &old, usize::MAX), Some(2));
        // One vote only: the "b" on line 2 is the only line counted.
        assert_eq!(start_by_votes(&file, &old, 1), Some(0));
        assert_eq!(start_by_votes(&["b"], &old, 1), Some(-1));
        assert_eq!(start_by_votes(&file, &old, 0), None);
    }

    #[test]
    fn blank_lines_do_not_vote() {
        assert_eq!(start_by_votes(&["", "  "], &["", "\t"], usize::MAX), None);
    }

    #[test]
    fn whitespace_blind_keys() {
        assert_eq!(
            whitespace_blind_key("  a  b\r"),
            whitespace_blind_key("a b")
        );
        assert_ne!(whitespace_blind_key("a b"), whitespace_blind_key("ab"));
        assert_eq!(whitespace_blind_key(" \t\r"), None);
    }
}
