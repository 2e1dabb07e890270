//! Finding `old_text` exactly once, and explaining a miss.
//!
//! A miss is explained by the region of the file most like `old_text`: the
//! window of lines where most lines of `old_text` occur when whitespace is
//! ignored, or, when no line does, the lines around the one sharing the most
//! words with the longest line of `old_text`. The region and `old_text` are
//! then aligned line by line (by a diff that ignores whitespace, so a missing
//! or extra line shows as one) and each pair is compared to say what
//! differs: indentation, other whitespace, line ending, or the text.

use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::{Duration, Instant};

use camino::Utf8Path;
use similar::{Algorithm, DiffOp, DiffTag};

use crate::error::{Closest, Error};
use crate::text::line_count_before;
use crate::view::numbered_line;

/// How many match lines an ambiguous-match error keeps.
const LISTED_MATCHES: usize = 10;

/// How long aligning old_text with the region may take; past it, the
/// alignment is coarser (more lines reported as differing), never wrong.
const ALIGN_TIMEOUT: Duration = Duration::from_millis(100);

/// How many region lines a no-match error shows, and how many differences it lists.
const SHOWN_REGION_LINES: usize = 30;
const LISTED_DIFFERENCES: usize = 10;

/// Work limit for the vote count in [`start_by_votes`]: a long `old_text` of
/// repeated lines against a file of the same lines must not stall an error message.
const VOTE_BUDGET: usize = 4_000_000;

/// The byte offset of the only occurrence of `needle` in `text`.
///
/// Overlapping occurrences count: `aa` occurs twice in `aaa`, and replacing
/// either would be a guess.
pub(crate) fn find_unique(path: &Utf8Path, text: &str, needle: &str) -> Result<usize, Error> {
    let mut starts = Vec::new();
    let mut count = 0;
    let finder = memchr::memmem::Finder::new(needle);
    let mut rest = text;
    while let Some(found) = finder.find(rest.as_bytes()) {
        // A match of UTF-8 in UTF-8 starts on a character boundary.
        let from_match = &rest[found..];
        count += 1;
        if starts.len() < LISTED_MATCHES {
            starts.push(text.len() - from_match.len());
        }
        // On by one character, not past the match, so overlapping matches count.
        let mut chars = from_match.chars();
        chars.next();
        rest = chars.as_str();
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

/// The byte offset of every occurrence of `needle` in `text`, left to right, each one
/// starting after the one before it ends; [`Error::NoMatch`] when there is none.
pub(crate) fn find_all(path: &Utf8Path, text: &str, needle: &str) -> Result<Vec<usize>, Error> {
    let starts: Vec<usize> =
        memchr::memmem::find_iter(text.as_bytes(), needle.as_bytes()).collect();
    if starts.is_empty() {
        return Err(Error::NoMatch {
            path: path.into(),
            closest: closest(text, needle),
        });
    }
    Ok(starts)
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
    let aligned = match start_by_votes(&file, &old, VOTE_BUDGET) {
        Some(start) => align_by_diff(&file, &old, start),
        None => align_by_offset(&file, &old, start_by_similarity(&file, &old)?),
    };
    let first = aligned.iter().filter_map(Aligned::file_line).min()?;
    let last = aligned.iter().filter_map(Aligned::file_line).max()?;

    let mut text = String::new();
    for (i, line) in file[first..=last]
        .iter()
        .take(SHOWN_REGION_LINES)
        .enumerate()
    {
        text.push_str(&numbered_line(first + i + 1, line));
    }
    let region_len = last + 1 - first;
    if region_len > SHOWN_REGION_LINES {
        text.push_str(&format!(
            "   ...\t({} more lines)\n",
            region_len - SHOWN_REGION_LINES
        ));
    }

    let mut differences = differences(&file, &old, &aligned, needle.ends_with('\n'))
        .unwrap_or_else(|| {
            // Every line agrees, so the miss is the line break after the last
            // one: old_text has it and the file, at its end, does not.
            vec![format!(
                "line {}: old_text ends with a line break, but the file's last line has none; \
                 leave it out of old_text",
                last + 1
            )]
        });
    if differences.len() > LISTED_DIFFERENCES {
        let more = differences.len() - LISTED_DIFFERENCES;
        differences.truncate(LISTED_DIFFERENCES);
        differences.push(format!("... and {more} more lines differ"));
    }
    Some(Closest {
        first_line: first + 1,
        last_line: last + 1,
        text,
        differences,
    })
}

/// A line of the comparison of a file region with `old_text` (indices are
/// 0-based lines of the file and of `old_text`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Aligned {
    /// A line of the file and the line of `old_text` meant to be it.
    Both(usize, usize),
    /// A line of the file that `old_text` leaves out.
    FileOnly(usize),
    /// A line of `old_text` the file does not have, before 0-based file
    /// line `.1` (so after 1-based line `.1`).
    OldOnly(usize, usize),
}

impl Aligned {
    fn file_line(&self) -> Option<usize> {
        match *self {
            Aligned::Both(line, _) | Aligned::FileOnly(line) => Some(line),
            Aligned::OldOnly(..) => None,
        }
    }
}

/// Lines of `old` aligned with the file around a window starting at line
/// `start`, by a diff that ignores whitespace (so lines that differ only in
/// whitespace pair up, and missing or extra lines show as such). File lines
/// before the first and after the last line of `old_text` are left out.
fn align_by_diff(file: &[&str], old: &[&str], start: isize) -> Vec<Aligned> {
    // Room on both sides: old_text may have lines the file lacks, or lack some.
    let k = signed(old.len());
    let from = usize::try_from(start - k).unwrap_or(0);
    let to = usize::try_from(start + 2 * k).unwrap_or(0).min(file.len());
    fn words<'a>(line: &&'a str) -> Vec<&'a str> {
        line.split_whitespace().collect()
    }
    let window: Vec<Vec<&str>> = file[from..to].iter().map(words).collect();
    let old_words: Vec<Vec<&str>> = old.iter().map(words).collect();
    let deadline = Instant::now().checked_add(ALIGN_TIMEOUT);
    let ops =
        similar::capture_diff_slices_deadline(Algorithm::Myers, &window, &old_words, deadline);

    // Before the first agreeing line and after the last one, file lines
    // past old_text's ends are not part of the region.
    let leading = ops
        .iter()
        .take_while(|op| op.tag() != DiffTag::Equal)
        .count();
    let (before, rest) = ops.split_at(leading);
    let trailing = rest
        .iter()
        .rev()
        .take_while(|op| op.tag() != DiffTag::Equal)
        .count();
    let (middle, after) = rest.split_at(rest.len() - trailing);
    let ranges = |op: &DiffOp| {
        let (_, file_range, old_range) = op.as_tag_tuple();
        (from + file_range.start..from + file_range.end, old_range)
    };

    let mut aligned = Vec::new();
    for (file_range, old_range) in before.iter().map(ranges) {
        // Lines next to the first agreeing line pair up; old_text's extra
        // lines come before them.
        let pairs = file_range.len().min(old_range.len());
        aligned.extend(
            (old_range.start..old_range.end - pairs).map(|j| Aligned::OldOnly(j, file_range.start)),
        );
        aligned.extend(
            (file_range.end - pairs..file_range.end)
                .zip(old_range.end - pairs..old_range.end)
                .map(|(i, j)| Aligned::Both(i, j)),
        );
    }
    for (file_range, old_range) in middle.iter().map(ranges) {
        // Between agreeing lines: pair from the start; the rest of either
        // side is a line only it has.
        let pairs = file_range.len().min(old_range.len());
        aligned.extend(
            file_range
                .clone()
                .zip(old_range.clone())
                .map(|(i, j)| Aligned::Both(i, j)),
        );
        aligned.extend(file_range.clone().skip(pairs).map(Aligned::FileOnly));
        aligned.extend(
            old_range
                .skip(pairs)
                .map(|j| Aligned::OldOnly(j, file_range.end)),
        );
    }
    for (file_range, old_range) in after.iter().map(ranges) {
        // Lines next to the last agreeing line pair up; old_text's extra
        // lines come after them.
        let pairs = file_range.len().min(old_range.len());
        aligned.extend(
            file_range
                .clone()
                .zip(old_range.clone())
                .map(|(i, j)| Aligned::Both(i, j)),
        );
        aligned.extend(
            old_range
                .skip(pairs)
                .map(|j| Aligned::OldOnly(j, file_range.end)),
        );
    }
    aligned
}

/// Lines of `old` aligned with the file by position, `old`'s first line on
/// file line `start` (negative: before the file).
fn align_by_offset(file: &[&str], old: &[&str], start: isize) -> Vec<Aligned> {
    (0..old.len())
        .map(|j| match usize::try_from(start + signed(j)) {
            Ok(i) if i < file.len() => Aligned::Both(i, j),
            Ok(_) => Aligned::OldOnly(j, file.len()),
            Err(_) => Aligned::OldOnly(j, 0),
        })
        .collect()
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
/// the longest line of `old` on the line of `file` sharing the most words
/// with it; `None` when no line shares at least half of their words.
///
/// Words, not characters: counting shared words is linear in the file's
/// size, where a character diff per line could stall on long lines.
fn start_by_similarity(file: &[&str], old: &[&str]) -> Option<isize> {
    let (j, probe) = old
        .iter()
        .enumerate()
        .max_by_key(|&(j, line)| (line.trim().len(), Reverse(j)))?;
    let probe: HashSet<&str> = words(probe).collect();
    let mut best: Option<(usize, usize, usize)> = None; // (line, shared, total)
    for (i, line) in file.iter().enumerate() {
        let words: HashSet<&str> = words(line).collect();
        let shared = words.intersection(&probe).count();
        let total = words.len() + probe.len();
        // shared / total beats best_shared / best_total, in integers; ties keep the earlier line.
        let better = best
            .is_none_or(|(_, best_shared, best_total)| shared * best_total > best_shared * total);
        // At least half shared: 2 * shared / total >= 1/2.
        if 4 * shared >= total && shared > 0 && better {
            best = Some((i, shared, total));
        }
    }
    let (i, _, _) = best?;
    Some(signed(i) - signed(j))
}

/// The words of `line`: runs of letters, digits and `_`.
fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
}

/// A line index as a signed number; no text has `isize::MAX` lines.
fn signed(index: usize) -> isize {
    isize::try_from(index).expect("a line index fits in isize: texts are far smaller")
}

/// One sentence per line that differs between the file and `old`, as
/// `aligned` pairs them; `None` when none does.
fn differences(
    file: &[&str],
    old: &[&str],
    aligned: &[Aligned],
    old_ends_with_newline: bool,
) -> Option<Vec<String>> {
    let found: Vec<String> = aligned
        .iter()
        .filter_map(|&item| match item {
            Aligned::Both(i, j) => {
                // old_text may start in the middle of its first line and end
                // in the middle of its last one.
                let partial = (j == 0 && file[i].ends_with(old[j]))
                    || (j + 1 == old.len()
                        && !old_ends_with_newline
                        && file[i].starts_with(old[j]));
                if partial {
                    None
                } else {
                    describe(i + 1, file[i], old[j])
                }
            }
            Aligned::FileOnly(i) => Some(format!(
                "line {}: old_text leaves out this line of the file: {:?}",
                i + 1,
                file[i].trim_end_matches('\r')
            )),
            Aligned::OldOnly(j, before) => Some(format!(
                "old_text has a line the file does not have {}: {:?}",
                if before == 0 {
                    "before line 1".to_owned()
                } else {
                    format!("after line {before}")
                },
                old[j].trim_end_matches('\r')
            )),
        })
        .collect();
    (!found.is_empty()).then_some(found)
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
            ["old_text has a line the file does not have after line 2: \"z\""]
        );
    }

    #[test]
    fn a_line_old_text_leaves_out_is_named() {
        let closest = closest_of("a\nb\nc\nd\n", "a\nc\nd\n");
        assert_eq!((closest.first_line, closest.last_line), (1, 4));
        assert_eq!(
            closest.differences,
            ["line 2: old_text leaves out this line of the file: \"b\""]
        );
    }

    #[test]
    fn a_line_old_text_adds_is_named() {
        let closest = closest_of("a\nc\nd\n", "a\nb\nc\n");
        assert_eq!((closest.first_line, closest.last_line), (1, 2));
        assert_eq!(
            closest.differences,
            ["old_text has a line the file does not have after line 1: \"b\""]
        );
    }

    #[test]
    fn a_changed_first_line_pairs_with_the_line_before_the_agreeing_ones() {
        let text = "x\ny\nw\ndef g(a, b):\n    return a\n    pass\n";
        let closest = closest_of(text, "def g(a, c):\n    return a\n    pass\n");
        assert_eq!((closest.first_line, closest.last_line), (4, 6));
        assert_eq!(
            closest.differences,
            [
                "line 4: the text differs: the file has \"def g(a, b):\", old_text has \
                 \"def g(a, c):\""
            ]
        );
    }

    #[test]
    fn extra_old_lines_before_the_agreeing_ones_are_named() {
        let text = "one\ntwo\nthree\n";
        let closest = closest_of(text, "zero\nhalf\none\ntwo\n");
        assert_eq!((closest.first_line, closest.last_line), (1, 2));
        assert_eq!(
            closest.differences,
            [
                "old_text has a line the file does not have before line 1: \"zero\"",
                "old_text has a line the file does not have before line 1: \"half\"",
            ]
        );
    }

    #[test]
    fn a_changed_last_line_pairs_with_the_line_after_the_agreeing_ones() {
        let text = "p\nq\nr\nfn h(x) {}\nz\nzz\n";
        let closest = closest_of(text, "p\nq\nr\nfn h(y) {}\n");
        assert_eq!((closest.first_line, closest.last_line), (1, 4));
        assert_eq!(
            closest.differences,
            ["line 4: the text differs: the file has \"fn h(x) {}\", old_text has \"fn h(y) {}\""]
        );
    }

    #[test]
    fn extra_old_lines_after_a_changed_last_line_are_named() {
        let closest = closest_of("a\nb\nX\n", "a\nb\nY\nZ\n");
        assert_eq!((closest.first_line, closest.last_line), (1, 3));
        assert_eq!(
            closest.differences,
            [
                "line 3: the text differs: the file has \"X\", old_text has \"Y\"",
                "old_text has a line the file does not have after line 3: \"Z\"",
            ]
        );
    }

    #[test]
    fn similarity_window_may_run_past_the_end_of_the_file() {
        let text = "a\nlet value = compute(1, 2, 3);\n";
        let closest = closest_of(text, "let value = compute(1, 2, 4);\nextra\n");
        assert_eq!((closest.first_line, closest.last_line), (2, 2));
        assert_eq!(
            closest.differences,
            [
                "line 2: the text differs: the file has \"let value = compute(1, 2, 3);\", \
                 old_text has \"let value = compute(1, 2, 4);\"",
                "old_text has a line the file does not have after line 2: \"extra\"",
            ]
        );
    }

    #[test]
    fn a_changed_middle_of_another_length_is_paired_then_named() {
        let closest = closest_of("a\nb1\nb2\nc\n", "a\nB\nc\n");
        assert_eq!((closest.first_line, closest.last_line), (1, 4));
        assert_eq!(
            closest.differences,
            [
                "line 2: the text differs: the file has \"b1\", old_text has \"B\"",
                "line 3: old_text leaves out this line of the file: \"b2\"",
            ]
        );
    }

    #[test]
    fn more_old_lines_in_a_changed_middle_are_named() {
        let closest = closest_of("a\nb\nc\n", "a\nB1\nB2\nc\n");
        assert_eq!(
            closest.differences,
            [
                "line 2: the text differs: the file has \"b\", old_text has \"B1\"",
                "old_text has a line the file does not have after line 2: \"B2\"",
            ]
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
            ["old_text has a line the file does not have before line 1: \"missing\""]
        );
    }

    #[test]
    fn a_window_before_the_file_compares_the_lines_it_holds() {
        let closest = closest_of("b\n  c\nd\n", "a\nb\nc\n");
        assert_eq!((closest.first_line, closest.last_line), (1, 2));
        assert_eq!(
            closest.differences,
            [
                "old_text has a line the file does not have before line 1: \"a\"",
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
        let text = "zz\nlet a = 1;\nlet a = 1;\n";
        let closest = closest_of(text, "let a = 2;");
        assert_eq!(closest.first_line, 2);
    }

    #[test]
    fn similarity_prefers_more_shared_words() {
        let text = "let a = f(x);\nlet a = f(y);\n";
        let closest = closest_of(text, "let a = f(y, z);");
        assert_eq!(closest.first_line, 2);
    }

    #[test]
    fn similarity_needs_half_of_the_words() {
        // One shared word of three and three: not close.
        assert!(matches!(
            find("alpha beta gamma\n", "alpha delta epsilon"),
            Err(Error::NoMatch { closest: None, .. })
        ));
        // One of two and two: exactly half, close.
        let closest = closest_of("x\na c\n", "a b");
        assert_eq!(closest.first_line, 2);
    }

    #[test]
    fn lines_without_words_are_never_similar() {
        assert!(matches!(
            find("alpha\n{}\n", "( )"),
            Err(Error::NoMatch { closest: None, .. })
        ));
    }

    #[test]
    fn words_are_runs_of_letters_digits_and_underscores() {
        let found: Vec<&str> = words("  fn add_one(x: i32) -> é2 {").collect();
        assert_eq!(found, ["fn", "add_one", "x", "i32", "é2"]);
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
    fn a_long_region_down_the_file_counts_its_own_lines() {
        let text: String = (0..45).map(|i| format!("line {i}\n")).collect();
        let needle: String = (5..45).map(|i| format!("line {i}\n")).collect();
        let closest = closest_of(&text, &needle.replace("line 44", "line 99"));
        assert_eq!((closest.first_line, closest.last_line), (6, 45));
        assert!(
            closest.text.ends_with("   ...\t(10 more lines)\n"),
            "{}",
            closest.text
        );
    }

    #[test]
    fn lines_missing_after_the_first_are_found_left_of_the_window() {
        // The best window starts at line 5 (d, e, f agree there); a is four
        // lines before it, as far left as the alignment looks.
        let closest = closest_of("a\nb1\nb2\nb3\nc\nd\ne\nf\n", "a\nd\ne\nf\n");
        assert_eq!((closest.first_line, closest.last_line), (1, 8));
        assert_eq!(closest.differences.len(), 4, "{:?}", closest.differences);
        assert_eq!(
            closest.differences[0],
            "line 2: old_text leaves out this line of the file: \"b1\""
        );
    }

    #[test]
    fn lines_missing_before_the_last_are_found_right_of_the_window() {
        // The best window starts at line 1 (a, b, c agree there); z is four
        // lines past its end, as far right as the alignment looks.
        let closest = closest_of("a\nb\nc\nm1\nm2\nm3\nm4\nz\n", "a\nb\nc\nz\n");
        assert_eq!((closest.first_line, closest.last_line), (1, 8));
        assert_eq!(closest.differences.len(), 4, "{:?}", closest.differences);
        assert_eq!(
            closest.differences[3],
            "line 7: old_text leaves out this line of the file: \"m4\""
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
