//! Unified diffs of a change, computed with a deadline.
//!
//! Only the changed region is diffed: the common prefix and suffix of the two
//! texts are found by comparing bytes, and the line diff runs on what lies
//! between them plus [`CONTEXT`] lines on each side. For a one-line edit in a
//! large file that is a few lines, not the whole file; the output is the same
//! as diffing everything, because a line diff would keep that prefix and
//! suffix as they are anyway.
//!
//! The line diff (Myers, from `similar`) gets a deadline. When it passes, the
//! part still being searched is reported as all of its old lines removed and
//! all of its new lines added: a coarser diff, but still a correct one (it
//! turns the old text into the new text), and the harness never waits for it.

use std::fmt::Write as _;
use std::time::Duration;

use similar::{Algorithm, ChangeTag, DiffOp, TextDiff};

use crate::text::line_count_before;

/// Lines of unchanged context around each change, as `diff -u` and git show.
const CONTEXT: usize = 3;

/// A unified diff and its size in lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Diff {
    /// `--- old` and `+++ new` headers and the hunks; empty when nothing changed.
    pub(crate) text: String,
    /// Lines added.
    pub(crate) added: usize,
    /// Lines removed.
    pub(crate) removed: usize,
}

/// The unified diff turning `old` into `new`, under the header names
/// `old_name` and `new_name`, with the line diff stopped after `timeout`.
pub(crate) fn unified(
    old_name: &str,
    new_name: &str,
    old: &str,
    new: &str,
    timeout: Duration,
) -> Diff {
    let region = Region::of(old, new);
    let old_window = &old[region.start..region.old_end];
    let new_window = &new[region.start..region.new_end];
    // Lines before the window: the same in both texts.
    let skipped = line_count_before(&old.as_bytes()[..region.start]);

    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(timeout)
        .diff_lines(old_window, new_window);

    let mut out = Diff::default();
    for (i, hunk) in diff.grouped_ops(CONTEXT).iter().enumerate() {
        if i == 0 {
            out.text = format!("--- {old_name}\n+++ {new_name}\n");
        }
        write_hunk_header(&mut out.text, hunk, skipped);
        for change in hunk.iter().flat_map(|op| diff.iter_changes(op)) {
            match change.tag() {
                ChangeTag::Equal => out.text.push(' '),
                ChangeTag::Delete => {
                    out.text.push('-');
                    out.removed += 1;
                }
                ChangeTag::Insert => {
                    out.text.push('+');
                    out.added += 1;
                }
            }
            out.text.push_str(change.value());
            if change.missing_newline() {
                out.text.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// The byte range the line diff has to look at: from the start of the first
/// changed line, minus context, to the end of the last changed line, plus
/// context. Both texts share the bytes before `start` and after their `end`.
#[derive(Debug, PartialEq, Eq)]
struct Region {
    /// Where the window starts in both texts: a line start.
    start: usize,
    /// Where it ends in the old text: a line start or the end.
    old_end: usize,
    /// Where it ends in the new text: a line start or the end.
    new_end: usize,
}

impl Region {
    fn of(old: &str, new: &str) -> Region {
        let prefix = common_prefix_len(old.as_bytes(), new.as_bytes());
        // Back to the start of the line holding the first difference.
        // Bytes, not str: a common prefix or suffix may end inside a character
        // (é and è share their first byte), but a line break never does.
        let changed_from = old.as_bytes()[..prefix]
            .iter()
            .rposition(|&byte| byte == b'\n')
            .map_or(0, |at| at + 1);
        let suffix = common_suffix_len(
            &old.as_bytes()[changed_from..],
            &new.as_bytes()[changed_from..],
        );
        // Forward to the first line start inside the common suffix: the
        // suffix may begin mid-line, and only whole lines can be left out.
        let whole_lines = old.as_bytes()[old.len() - suffix..]
            .iter()
            .position(|&byte| byte == b'\n')
            .map_or(0, |at| suffix - at - 1);
        let context = lines_forward(&old[old.len() - whole_lines..], CONTEXT);
        Region {
            start: lines_back(old, changed_from, CONTEXT),
            old_end: old.len() - whole_lines + context,
            new_end: new.len() - whole_lines + context,
        }
    }
}

/// The start of the line `count` lines before the line starting at `at`.
fn lines_back(text: &str, mut at: usize, count: usize) -> usize {
    for _ in 0..count {
        if at == 0 {
            break;
        }
        at = text[..at - 1].rfind('\n').map_or(0, |newline| newline + 1);
    }
    at
}

/// The byte length of the first `count` lines of `text` (all of it if it has fewer).
fn lines_forward(text: &str, count: usize) -> usize {
    let mut at = 0;
    for _ in 0..count {
        match text[at..].find('\n') {
            Some(newline) => at += newline + 1,
            None => return text.len(),
        }
    }
    at
}

/// `@@ -a,b +c,d @@` for a hunk whose line numbers start `skipped` lines into the file.
fn write_hunk_header(out: &mut String, hunk: &[DiffOp], skipped: usize) {
    let (Some(first), Some(last)) = (hunk.first(), hunk.last()) else {
        return;
    };
    let old = first.old_range().start..last.old_range().end;
    let new = first.new_range().start..last.new_range().end;
    // Infallible: writing to a String.
    let _ = writeln!(
        out,
        "@@ -{} +{} @@",
        HunkRange(skipped + old.start, old.len()),
        HunkRange(skipped + new.start, new.len())
    );
}

/// A hunk's line range in unified-diff form: `start,len`, just `start` for
/// one line, and for no lines the line before (as `diff -u` writes it).
struct HunkRange(usize, usize);

impl std::fmt::Display for HunkRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let HunkRange(start, len) = *self;
        match len {
            0 => write!(f, "{start},0"),
            1 => write!(f, "{}", start + 1),
            _ => write!(f, "{},{len}", start + 1),
        }
    }
}

/// Bytes compared at once by [`common_prefix_len`] and [`common_suffix_len`].
const CHUNK: usize = 64;

/// The length of the longest common prefix of `a` and `b`.
fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    // Whole chunks first: slice equality is a memcmp, far faster than a byte
    // loop over the megabytes a large file has in common. The first
    // difference then lies in the next chunk.
    let chunks = a
        .chunks(CHUNK)
        .zip(b.chunks(CHUNK))
        .take_while(|(x, y)| x == y)
        .count();
    let len = (chunks * CHUNK).min(a.len()).min(b.len());
    len + a[len..]
        .iter()
        .zip(&b[len..])
        .take(CHUNK)
        .take_while(|(x, y)| x == y)
        .count()
}

/// The length of the longest common suffix of `a` and `b`.
fn common_suffix_len(a: &[u8], b: &[u8]) -> usize {
    let chunks = a
        .rchunks(CHUNK)
        .zip(b.rchunks(CHUNK))
        .take_while(|(x, y)| x == y)
        .count();
    let len = (chunks * CHUNK).min(a.len()).min(b.len());
    len + a[..a.len() - len]
        .iter()
        .rev()
        .zip(b[..b.len() - len].iter().rev())
        .take(CHUNK)
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    use proptest::prelude::*;

    const NO_HURRY: Duration = Duration::from_secs(60);

    fn diff(old: &str, new: &str) -> Diff {
        unified("a/f", "b/f", old, new, NO_HURRY)
    }

    /// Applies a unified diff to `old`: the test oracle for "the diff is correct".
    pub(crate) fn apply(old: &str, diff: &str) -> String {
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut next = 0; // index of the next old line not yet copied
        let mut lines = diff.split_inclusive('\n').skip(2).peekable();
        while let Some(header) = lines.next() {
            let old_range = header
                .strip_prefix("@@ -")
                .and_then(|rest| rest.split(' ').next())
                .unwrap_or_else(|| panic!("a hunk header, got {header:?}"));
            let mut parts = old_range.split(',');
            let start: usize = parts.next().unwrap().parse().unwrap();
            let len: usize = parts.next().map_or(1, |len| len.parse().unwrap());
            let first = if len == 0 { start } else { start - 1 };
            assert!(first >= next, "hunks out of order in {diff}");
            for line in &old_lines[next..first] {
                out.push_str(line);
            }
            next = first;
            while let Some(line) = lines.next_if(|line| !line.starts_with("@@")) {
                let (tag, body) = line.split_at(1);
                let mut body = body.to_owned();
                if lines.next_if(|l| l.starts_with("\\ No newline")).is_some() {
                    assert_eq!(body.pop(), Some('\n'));
                }
                match tag {
                    " " => {
                        assert_eq!(old_lines[next], body, "context mismatch in {diff}");
                        out.push_str(&body);
                        next += 1;
                    }
                    "-" => {
                        assert_eq!(old_lines[next], body, "removed line mismatch in {diff}");
                        next += 1;
                    }
                    "+" => out.push_str(&body),
                    _ => panic!("unexpected diff line {line:?}"),
                }
            }
        }
        for line in &old_lines[next..] {
            out.push_str(line);
        }
        out
    }

    #[test]
    fn no_change_no_diff() {
        assert_eq!(diff("a\nb\n", "a\nb\n"), Diff::default());
        assert_eq!(diff("", ""), Diff::default());
    }

    #[test]
    fn one_line_changed_with_three_lines_of_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        let diff = diff(old, new);
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
        assert_eq!((diff.added, diff.removed), (1, 1));
    }

    #[test]
    fn change_on_the_first_line() {
        let diff = diff("a\nb\nc\nd\ne\n", "A\nb\nc\nd\ne\n");
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n"
        );
    }

    #[test]
    fn change_on_the_last_line() {
        let diff = diff("a\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n");
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n@@ -2,4 +2,4 @@\n b\n c\n d\n-e\n+E\n"
        );
    }

    #[test]
    fn far_apart_changes_make_two_hunks() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new = old
            .replacen("2\n", "two\n", 1)
            .replace("19\n", "nineteen\n");
        let diff = diff(&old, &new);
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n\
             @@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n\
             @@ -16,5 +16,5 @@\n 16\n 17\n 18\n-19\n+nineteen\n 20\n"
        );
        assert_eq!((diff.added, diff.removed), (2, 2));
    }

    #[test]
    fn added_lines_only() {
        let diff = diff("a\nb\n", "a\nx\ny\nb\n");
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,4 @@\n a\n+x\n+y\n b\n"
        );
        assert_eq!((diff.added, diff.removed), (2, 0));
    }

    #[test]
    fn removed_lines_only() {
        let diff = diff("a\nx\ny\nb\n", "a\nb\n");
        assert_eq!((diff.added, diff.removed), (0, 2));
    }

    #[test]
    fn creation_diff_starts_at_line_zero() {
        let diff = unified("/dev/null", "b/new.txt", "", "x\ny\n", NO_HURRY);
        assert_eq!(
            diff.text,
            "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n"
        );
    }

    #[test]
    fn single_line_ranges_have_no_length() {
        let diff = diff("", "x\n");
        assert_eq!(diff.text, "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+x\n");
        let diff = self::diff("x\n", "");
        assert_eq!(diff.text, "--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-x\n");
    }

    #[test]
    fn missing_final_newline_is_marked() {
        let diff = diff("a\nb", "a\nc");
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n\
             +c\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn adding_a_final_newline_is_a_change() {
        let diff = diff("a\nb", "a\nb\n");
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
        );
    }

    #[test]
    fn crlf_lines_keep_their_cr() {
        let diff = diff("a\r\nb\r\n", "a\r\nc\r\n");
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n"
        );
    }

    #[test]
    fn a_change_inside_a_line_in_a_long_file() {
        let old: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 500\n", "line five hundred\n");
        let diff = diff(&old, &new);
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n@@ -497,7 +497,7 @@\n line 497\n line 498\n line 499\n\
             -line 500\n+line five hundred\n line 501\n line 502\n line 503\n"
        );
    }

    #[test]
    fn a_changed_suffix_of_a_line_keeps_the_line_whole() {
        // The common suffix starts mid-line ("ne\n..."); the line still shows whole.
        let diff = diff("x\none\ny\n", "x\nnone\ny\n");
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n x\n-one\n+none\n y\n"
        );
    }

    #[test]
    fn region_is_the_changed_lines_plus_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = old.replace("5\n", "five\n");
        assert_eq!(
            Region::of(old, &new),
            Region {
                start: 2,
                old_end: 16,
                new_end: 19
            }
        );
    }

    #[test]
    fn region_of_identical_texts_is_empty_at_the_end() {
        let text = "a\nb\n";
        let region = Region::of(text, text);
        assert_eq!((region.old_end, region.new_end), (text.len(), text.len()));
    }

    #[test]
    fn lines_back_stops_at_the_start() {
        let text = "a\nb\nc\n";
        assert_eq!(lines_back(text, 4, 1), 2);
        assert_eq!(lines_back(text, 4, 2), 0);
        assert_eq!(lines_back(text, 4, 5), 0);
        assert_eq!(lines_back(text, 0, 1), 0);
    }

    #[test]
    fn lines_forward_stops_at_the_end() {
        assert_eq!(lines_forward("a\nb\nc", 2), 4);
        assert_eq!(lines_forward("a\nb\nc", 3), 5);
        assert_eq!(lines_forward("a\n", 1), 2);
        assert_eq!(lines_forward("", 3), 0);
    }

    #[test]
    fn common_prefix_and_suffix_across_chunks() {
        let a = format!("{}x{}", "p".repeat(130), "s".repeat(70));
        let b = format!("{}y{}", "p".repeat(130), "s".repeat(70));
        assert_eq!(common_prefix_len(a.as_bytes(), b.as_bytes()), 130);
        assert_eq!(common_suffix_len(a.as_bytes(), b.as_bytes()), 70);
        assert_eq!(common_prefix_len(b"abc", b"ab"), 2);
        assert_eq!(common_suffix_len(b"abc", b"bc"), 2);
        let long = "z".repeat(150);
        assert_eq!(common_prefix_len(long.as_bytes(), long.as_bytes()), 150);
        assert_eq!(common_suffix_len(long.as_bytes(), long.as_bytes()), 150);
        assert_eq!(
            common_prefix_len(long.as_bytes(), &long.as_bytes()[..140]),
            140
        );
        assert_eq!(
            common_suffix_len(long.as_bytes(), &long.as_bytes()[..140]),
            140
        );
        assert_eq!(common_prefix_len(b"", b"abc"), 0);
        assert_eq!(common_suffix_len(b"abc", b""), 0);
    }

    /// Every other line changed: many small edits, the hard case for Myers.
    fn interleaved(lines: usize) -> (String, String) {
        let old: String = (0..lines).map(|i| format!("line {i}\n")).collect();
        let new: String = (0..lines)
            .map(|i| {
                if i % 2 == 0 {
                    format!("line {i}\n")
                } else {
                    format!("changed {i}\n")
                }
            })
            .collect();
        (old, new)
    }

    #[test]
    fn a_passed_deadline_gives_a_coarser_but_correct_diff() {
        let (old, new) = interleaved(2000);
        let exact = unified("a/f", "b/f", &old, &new, NO_HURRY);
        let coarse = unified("a/f", "b/f", &old, &new, Duration::ZERO);
        assert_eq!((exact.added, exact.removed), (1000, 1000));
        assert!(coarse.removed > exact.removed, "{} removed", coarse.removed);
        assert_eq!(coarse.added - coarse.removed, 0);
        assert_eq!(apply(&old, &coarse.text), new);
        assert_eq!(apply(&old, &exact.text), new);
    }

    /// Small texts over a small alphabet of lines, so edits collide often.
    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                Just("a\n"),
                Just("b\n"),
                Just("c\r\n"),
                Just("\n"),
                Just("ab"),
                Just("é"),
                Just("è"),
                Just("ĩ\n"),
            ],
            0..30,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #[test]
        fn diff_applies(old in text(), new in text()) {
            let diff = diff(&old, &new);
            prop_assert_eq!(apply(&old, &diff.text), new);
        }

        #[test]
        fn diff_matches_a_diff_of_the_whole_texts(old in text(), new in text()) {
            let whole = TextDiff::configure()
                .algorithm(Algorithm::Myers)
                .diff_lines(&old, &new)
                .unified_diff()
                .header("a/f", "b/f")
                .to_string();
            prop_assert_eq!(diff(&old, &new).text, whole);
        }

        #[test]
        fn prefix_and_suffix_lengths_match_a_byte_loop(
            common in prop::collection::vec(0_u8..3, 0..300),
            x in prop::collection::vec(0_u8..3, 0..150),
            y in prop::collection::vec(0_u8..3, 0..150),
        ) {
            let (a, b) = ([&common[..], &x].concat(), [&common[..], &y].concat());
            let prefix = a.iter().zip(&b).take_while(|(p, q)| p == q).count();
            prop_assert_eq!(common_prefix_len(&a, &b), prefix);
            let (a, b) = ([&x[..], &common].concat(), [&y[..], &common].concat());
            let suffix = a.iter().rev().zip(b.iter().rev()).take_while(|(p, q)| p == q).count();
            prop_assert_eq!(common_suffix_len(&a, &b), suffix);
        }

        #[test]
        fn counts_match_the_diff_lines(old in text(), new in text()) {
            let diff = diff(&old, &new);
            let body = diff.text.lines().skip(2);
            let added = body.clone().filter(|line| line.starts_with('+')).count();
            let removed = body.filter(|line| line.starts_with('-')).count();
            prop_assert_eq!((diff.added, diff.removed), (added, removed));
        }
    }
}
