//! The one error type of this crate.
//!
//! Every message names the file and the argument at fault and says what to do
//! instead, in the words of the tool arguments a model sends (`old_text`,
//! `new_text`, `start_line`, `end_line`, `after_line`, `overwrite`).

use std::fmt;

use camino::Utf8PathBuf;

/// Why a view or an edit was refused. Nothing was written when one is returned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The workspace refused the path or the file operation: an escape, a
    /// deny rule, a missing file, an I/O error. Kept as the workspace made it,
    /// so an escape stays an escape.
    #[error(transparent)]
    Workspace(#[from] harness_sandbox::Error),

    /// The editor's [`WriteGuard`](crate::WriteGuard) refused the change.
    #[error("refusing to change {path}: {reason}")]
    Refused {
        /// The file, relative to the workspace.
        path: Utf8PathBuf,
        /// Why, as the guard said it.
        reason: String,
    },

    /// The file has a NUL byte in its first 8 KiB.
    #[error(
        "{path} looks like a binary file (it has a NUL byte in its first 8 KiB); \
         only UTF-8 text files can be viewed or edited with this tool"
    )]
    Binary {
        /// The file, relative to the workspace.
        path: Utf8PathBuf,
    },

    /// The file is not valid UTF-8.
    #[error(
        "{path} is not valid UTF-8 (the first invalid byte is on line {line}); \
         only UTF-8 text files can be viewed or edited with this tool"
    )]
    InvalidUtf8 {
        /// The file, relative to the workspace.
        path: Utf8PathBuf,
        /// The 1-based line holding the first invalid byte.
        line: usize,
    },

    /// The file, or the content it would get, is over the size limit.
    #[error(
        "{path}: {len} bytes is over the {max_len}-byte limit for files this tool views \
         or edits; read a larger file in parts with a command such as `sed -n` or \
         `grep -n`, and keep written content under the limit"
    )]
    TooLarge {
        /// The file, relative to the workspace.
        path: Utf8PathBuf,
        /// Its size in bytes.
        len: u64,
        /// The limit in bytes.
        max_len: u64,
    },

    /// `old_text` is empty, so there is nothing to look for.
    #[error(
        "old_text is empty; copy the exact text to replace from {path} (view it first), \
         or use insert to add lines without replacing any"
    )]
    EmptyOldText {
        /// The file, relative to the workspace.
        path: Utf8PathBuf,
    },

    /// `old_text` and `new_text` are the same, so the edit would change nothing.
    #[error(
        "old_text and new_text are identical, so nothing in {path} would change; \
         put the changed text in new_text"
    )]
    NothingToChange {
        /// The file, relative to the workspace.
        path: Utf8PathBuf,
    },

    /// `old_text` occurs nowhere in the file.
    #[error("old_text was not found in {path}. {}", NoMatchHint(.closest.as_ref()))]
    NoMatch {
        /// The file, relative to the workspace.
        path: Utf8PathBuf,
        /// The region most like `old_text`, if any region is.
        closest: Option<Closest>,
    },

    /// `old_text` occurs more than once in the file.
    #[error(
        "old_text matches {count} places in {path} (starting on lines {}); it must match \
         exactly once: add surrounding lines to old_text (and the same lines to new_text) \
         until it does, or, to change every one of them (a rename), set replace_all to true",
        LineList::new(.lines, *.count)
    )]
    AmbiguousMatch {
        /// The file, relative to the workspace.
        path: Utf8PathBuf,
        /// How many times `old_text` occurs (overlapping occurrences count).
        count: usize,
        /// The 1-based line where each of the first ten matches starts.
        lines: Vec<usize>,
    },

    /// `create`, or `write` without `overwrite`, found the file already there.
    #[error(
        "{path} already exists; to change part of it use replace (old_text and new_text), \
         to replace all of its content use write with overwrite=true"
    )]
    AlreadyExists {
        /// The file, relative to the workspace.
        path: Utf8PathBuf,
    },

    /// A line-number argument lies outside the file.
    #[error(
        "{argument} {value} is out of range: {path} has {lines} lines, so {argument} must be \
         from {min} to {max}",
        max = .lines.max(.min)
    )]
    LineOutOfRange {
        /// The file, relative to the workspace.
        path: Utf8PathBuf,
        /// The argument's name, such as `start_line`.
        argument: &'static str,
        /// The value given.
        value: usize,
        /// The smallest value allowed.
        min: usize,
        /// The number of lines in the file.
        lines: usize,
    },

    /// `end_line` comes before `start_line`.
    #[error(
        "end_line {end} is before start_line {start}; give an end_line at or after \
         start_line, or leave it out to view to the end of {path}"
    )]
    InvalidRange {
        /// The file, relative to the workspace.
        path: Utf8PathBuf,
        /// The 1-based first line asked for.
        start: usize,
        /// The 1-based last line asked for.
        end: usize,
    },

    /// The text to insert is empty.
    #[error("the text to insert into {path} is empty; give the lines to insert")]
    EmptyInsert {
        /// The file, relative to the workspace.
        path: Utf8PathBuf,
    },
}

/// The region of a file most like an `old_text` that did not match, so a
/// model can see what it got wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closest {
    /// The region's 1-based first line.
    pub first_line: usize,
    /// The region's 1-based last line.
    pub last_line: usize,
    /// The region as the file has it, numbered as `view` numbers lines
    /// (long regions are shortened).
    pub text: String,
    /// One sentence for each line of `old_text` that differs from the file,
    /// saying how: indentation, other whitespace, line ending, or the text itself.
    pub differences: Vec<String>,
}

impl fmt::Display for Closest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.first_line == self.last_line {
            writeln!(f, "The closest region is line {}:", self.first_line)?;
        } else {
            writeln!(
                f,
                "The closest region is lines {}-{}:",
                self.first_line, self.last_line
            )?;
        }
        f.write_str(&self.text)?;
        if !self.text.ends_with('\n') {
            f.write_str("\n")?;
        }
        writeln!(f, "What differs from old_text:")?;
        for difference in &self.differences {
            writeln!(f, "- {difference}")?;
        }
        write!(
            f,
            "Copy the text exactly as the file has it (without the line numbers) and try again."
        )
    }
}

/// The advice after "old_text was not found".
struct NoMatchHint<'a>(Option<&'a Closest>);

impl fmt::Display for NoMatchHint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(closest) => closest.fmt(f),
            None => f.write_str(
                "No region of the file resembles it; view the file and copy the exact text \
                 to replace.",
            ),
        }
    }
}

/// The first line numbers of `count` matches, and how many more there are.
struct LineList<'a> {
    lines: &'a [usize],
    count: usize,
}

impl<'a> LineList<'a> {
    fn new(lines: &'a [usize], count: usize) -> Self {
        LineList { lines, count }
    }
}

impl fmt::Display for LineList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, line) in self.lines.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{line}")?;
        }
        if self.count > self.lines.len() {
            write!(f, " and {} more", self.count - self.lines.len())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ambiguous(count: usize, lines: Vec<usize>) -> String {
        Error::AmbiguousMatch {
            path: "f.py".into(),
            count,
            lines,
        }
        .to_string()
    }

    #[test]
    fn ambiguous_match_lists_the_lines() {
        assert_eq!(
            ambiguous(2, vec![1, 2]),
            "old_text matches 2 places in f.py (starting on lines 1, 2); it must match \
             exactly once: add surrounding lines to old_text (and the same lines to \
             new_text) until it does, or, to change every one of them (a rename), set \
             replace_all to true"
        );
    }

    #[test]
    fn ambiguous_match_says_how_many_lines_it_left_out() {
        let message = ambiguous(13, (1..=10).collect());
        assert!(
            message.contains(
                "13 places in f.py (starting on lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 3 more);"
            ),
            "{message}"
        );
    }

    #[test]
    fn line_out_of_range_names_the_allowed_range() {
        let err = Error::LineOutOfRange {
            path: "f.py".into(),
            argument: "after_line",
            value: 9,
            min: 0,
            lines: 3,
        };
        assert_eq!(
            err.to_string(),
            "after_line 9 is out of range: f.py has 3 lines, so after_line must be from 0 to 3"
        );
    }

    #[test]
    fn line_out_of_range_in_an_empty_file_allows_the_minimum() {
        let err = Error::LineOutOfRange {
            path: "f.py".into(),
            argument: "start_line",
            value: 2,
            min: 1,
            lines: 0,
        };
        assert!(err.to_string().ends_with("must be from 1 to 1"), "{err}");
    }

    #[test]
    fn no_match_without_a_closest_region_says_to_view_the_file() {
        let err = Error::NoMatch {
            path: "f.py".into(),
            closest: None,
        };
        assert_eq!(
            err.to_string(),
            "old_text was not found in f.py. No region of the file resembles it; view the \
             file and copy the exact text to replace."
        );
    }

    #[test]
    fn no_match_shows_the_closest_region_and_what_differs() {
        let closest = Closest {
            first_line: 2,
            last_line: 3,
            text: "     2\tdef f():\n     3\t    return 1".into(),
            differences: vec!["line 3: indentation differs".into()],
        };
        let err = Error::NoMatch {
            path: "f.py".into(),
            closest: Some(closest),
        };
        assert_eq!(
            err.to_string(),
            "old_text was not found in f.py. The closest region is lines 2-3:\n\
             \x20    2\tdef f():\n\
             \x20    3\t    return 1\n\
             What differs from old_text:\n\
             - line 3: indentation differs\n\
             Copy the text exactly as the file has it (without the line numbers) and try again."
        );
    }

    #[test]
    fn closest_text_ending_in_a_newline_gets_no_blank_line() {
        let closest = Closest {
            first_line: 1,
            last_line: 1,
            text: "     1\tx\n".into(),
            differences: vec![],
        };
        assert!(closest.to_string().contains("     1\tx\nWhat differs"));
        assert!(
            closest
                .to_string()
                .starts_with("The closest region is line 1:\n")
        );
    }
}
