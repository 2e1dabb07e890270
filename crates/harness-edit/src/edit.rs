//! The edits themselves: a file's new text, computed in memory from its old one.
//!
//! Text from the model is converted to the file's line-ending style first, and
//! the result keeps the file's final-newline convention; see [`TextFile`].

use camino::Utf8Path;

use crate::Error;
use crate::matching::{find_all, find_unique};
use crate::text::{TextFile, line_count, line_start};

/// `file`'s text with the only occurrence of `old_text` replaced by `new_text`.
pub(crate) fn replace(
    file: &TextFile,
    path: &Utf8Path,
    old_text: &str,
    new_text: &str,
) -> Result<String, Error> {
    let (old, new) = conformed(file, path, old_text, new_text)?;
    let at = find_unique(path, &file.body, &old)?;
    let mut body = String::with_capacity(file.body.len() - old.len() + new.len());
    body.push_str(&file.body[..at]);
    body.push_str(&new);
    body.push_str(&file.body[at + old.len()..]);
    Ok(file.keep_ending(body))
}

/// `file`'s text with every occurrence of `old_text` replaced by `new_text`, taken left to
/// right without overlaps (as [`str::replace`] takes them); at least one must exist.
pub(crate) fn replace_all(
    file: &TextFile,
    path: &Utf8Path,
    old_text: &str,
    new_text: &str,
) -> Result<String, Error> {
    let (old, new) = conformed(file, path, old_text, new_text)?;
    let starts = find_all(path, &file.body, &old)?;
    let mut body = String::with_capacity(file.body.len());
    let mut copied = 0;
    for at in starts {
        body.push_str(&file.body[copied..at]);
        body.push_str(&new);
        copied = at + old.len();
    }
    body.push_str(&file.body[copied..]);
    Ok(file.keep_ending(body))
}

/// `file`'s text with `text` inserted as whole lines after line `after_line`
/// (1-based; 0 inserts before the first line).
pub(crate) fn insert(
    file: &TextFile,
    path: &Utf8Path,
    after_line: usize,
    text: &str,
) -> Result<String, Error> {
    if text.is_empty() {
        return Err(Error::EmptyInsert { path: path.into() });
    }
    let lines = line_count(&file.body);
    if after_line > lines {
        return Err(Error::LineOutOfRange {
            path: path.into(),
            argument: "after_line",
            value: after_line,
            min: 0,
            lines,
        });
    }
    let at = line_start(&file.body, after_line);
    let (before, after) = file.body.split_at(at);
    let text = file.conform(text);
    let mut body = String::with_capacity(file.body.len() + text.len() + 4);
    body.push_str(before);
    // After a last line without a line break, the new lines need one first.
    if !before.is_empty() && !before.ends_with('\n') {
        body.push_str(file.newline());
    }
    body.push_str(&text);
    // Before more lines, the inserted ones must end with a line break.
    if !after.is_empty() && !text.ends_with('\n') {
        body.push_str(file.newline());
    }
    body.push_str(after);
    Ok(file.keep_ending(body))
}

/// `old_text` and `new_text` in `file`'s line-ending style, once it is clear that replacing
/// one with the other would change something.
fn conformed(
    file: &TextFile,
    path: &Utf8Path,
    old_text: &str,
    new_text: &str,
) -> Result<(String, String), Error> {
    if old_text.is_empty() {
        return Err(Error::EmptyOldText { path: path.into() });
    }
    let old = file.conform(old_text);
    let new = file.conform(new_text);
    if old == new {
        return Err(Error::NothingToChange { path: path.into() });
    }
    Ok((old, new))
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    fn file(text: &str) -> TextFile {
        TextFile::decode(Utf8Path::new("f.py"), text.as_bytes().to_vec())
            .expect("test text is valid")
    }

    fn replaced(text: &str, old: &str, new: &str) -> Result<String, Error> {
        replace(&file(text), Utf8Path::new("f.py"), old, new)
    }

    fn inserted(text: &str, after_line: usize, new: &str) -> Result<String, Error> {
        insert(&file(text), Utf8Path::new("f.py"), after_line, new)
    }

    macro_rules! replaces {
        ($($name:ident: $text:expr, $old:expr, $new:expr => $expected:expr,)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(replaced($text, $old, $new).expect("a valid replace"), $expected);
            }
        )*};
    }

    replaces! {
        replaces_the_only_match: "a = 1\nb = 2\n", "b = 2", "b = 3" => "a = 1\nb = 3\n",
        replaces_across_lines: "x\ny\nz\n", "x\ny\n", "w\n" => "w\nz\n",
        replaces_at_the_very_end: "x\ny", "y", "Y" => "x\nY",
        replacement_in_crlf_file_is_crlf: "a\r\nb\r\n", "a\nb", "a\nx\nb" => "a\r\nx\r\nb\r\n",
        deleting_the_last_line_keeps_the_final_newline: "a\nb\n", "\nb\n", "" => "a\n",
        replacing_with_nothing: "keep drop keep\n", " drop", "" => "keep keep\n",
        no_final_newline_is_kept: "a\nb", "b", "c\n" => "a\nc",
        multibyte_text: "é = 1\n", "é", "è" => "è = 1\n",
    }

    #[test]
    fn test_edit_requires_a_unique_match() {
        // The spec's required test: "a" occurs twice in "a\na\n".
        let err = replaced("a\na\n", "a", "b").expect_err("ambiguous");
        assert!(
            matches!(&err, Error::AmbiguousMatch { count: 2, lines, .. } if lines == &[1, 2]),
            "{err:?}"
        );
    }

    #[test]
    fn empty_old_text_is_refused() {
        assert!(matches!(
            replaced("a\n", "", "b"),
            Err(Error::EmptyOldText { .. })
        ));
    }

    #[test]
    fn identical_old_and_new_text_is_refused() {
        assert!(matches!(
            replaced("a\n", "a", "a"),
            Err(Error::NothingToChange { .. })
        ));
    }

    #[test]
    fn texts_that_differ_only_in_line_ending_change_nothing() {
        assert!(matches!(
            replaced("a\nb\n", "a\nb", "a\r\nb"),
            Err(Error::NothingToChange { .. })
        ));
    }

    #[test]
    fn missing_old_text_is_refused() {
        assert!(matches!(
            replaced("a\n", "zzz", "b"),
            Err(Error::NoMatch { .. })
        ));
    }

    macro_rules! inserts {
        ($($name:ident: $text:expr, $after:expr, $new:expr => $expected:expr,)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(inserted($text, $after, $new).expect("a valid insert"), $expected);
            }
        )*};
    }

    inserts! {
        insert_at_the_top: "a\nb\n", 0, "x" => "x\na\nb\n",
        insert_in_the_middle: "a\nb\n", 1, "x\n" => "a\nx\nb\n",
        insert_several_lines: "a\nb\n", 1, "x\ny" => "a\nx\ny\nb\n",
        insert_at_the_end: "a\nb\n", 2, "x" => "a\nb\nx\n",
        insert_after_an_unterminated_last_line: "a\nb", 2, "x\n" => "a\nb\nx",
        insert_into_crlf: "a\r\nb\r\n", 1, "x\ny" => "a\r\nx\r\ny\r\nb\r\n",
        insert_after_an_unterminated_crlf_line: "a\r\nb", 2, "x" => "a\r\nb\r\nx",
        insert_into_an_empty_file: "", 0, "x" => "x",
        insert_into_a_one_line_file_without_break: "a", 0, "x" => "x\na",
        insert_a_blank_line: "a\nb\n", 1, "\n" => "a\n\nb\n",
    }

    #[test]
    fn insert_past_the_end_is_refused() {
        let err = inserted("a\nb\n", 3, "x").expect_err("out of range");
        assert!(
            matches!(
                err,
                Error::LineOutOfRange {
                    argument: "after_line",
                    value: 3,
                    min: 0,
                    lines: 2,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn empty_insert_is_refused() {
        assert!(matches!(
            inserted("a\n", 1, ""),
            Err(Error::EmptyInsert { .. })
        ));
    }

    /// Lines from a small alphabet, so that random `old` texts often occur.
    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                Just("a"),
                Just("b"),
                Just("\n"),
                Just("\r\n"),
                Just(" "),
                Just("é")
            ],
            0..40,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #[test]
        fn random_edits_never_panic(
            original in text(),
            old in text(),
            new in text(),
            after_line in 0_usize..50,
        ) {
            let file = file(&original);
            let path = Utf8Path::new("f.py");
            let _ = replace(&file, path, &old, &new);
            let _ = insert(&file, path, after_line, &new);
        }

        #[test]
        fn replace_then_inverse_replace_round_trips(
            before in "[a-c\n]{0,20}",
            old in "[x-z]{1,5}\n?[x-z]{0,5}",
            new in "[d-f]{1,5}\n?[d-f]{0,5}",
            after in "[a-c\n]{0,20}[a-c]\n?",
        ) {
            // `old` occurs once (its letters occur nowhere else), so does `new`
            // after the edit. `after` ends with a letter, so the edits never
            // touch the file's last line break.
            let original = format!("{before}{old}{after}");
            let edited = replaced(&original, &old, &new).expect("old occurs once");
            let back = replaced(&edited, &new, &old).expect("new occurs once");
            prop_assert_eq!(back, original);
        }

        #[test]
        fn insert_adds_exactly_the_given_lines(
            lines in prop::collection::vec("[a-c]{0,3}", 0..10),
            new in prop::collection::vec("[x-z]{1,3}", 1..4),
            at in any::<prop::sample::Index>(),
        ) {
            let original: String = lines.iter().map(|line| format!("{line}\n")).collect();
            let after_line = at.index(lines.len() + 1);
            let text = format!("{}\n", new.join("\n"));
            let edited = inserted(&original, after_line, &text).expect("in range");
            let mut expected = lines.clone();
            expected.splice(after_line..after_line, new.iter().cloned());
            let expected: String = expected.iter().map(|line| format!("{line}\n")).collect();
            prop_assert_eq!(edited, expected);
        }
    }
}
