//! `search_text`: the lines of files under a path that match a regular expression.

use std::fmt::Write as _;
use std::ops::ControlFlow;

use globset::{GlobBuilder, GlobMatcher};
use harness_sandbox::{Access, Error as SandboxError, Workspace};
use harness_schema::{SearchText, ToolName};
use regex::Regex;

use crate::failure::{Failure, sandbox};
use crate::limits::Limits;
use crate::result::{Detail, Summary, ToolResult};
use crate::walk::{self, Kind};

/// The matches of a search, ready for the model.
struct Matches {
    /// `path:line: text` lines, then notes on what was left out.
    text: String,
    /// Matching lines shown.
    shown: usize,
    /// Matching lines found.
    total: usize,
}

/// How far into a file to look for a NUL byte, the sign of a binary file (as git does).
const BINARY_PROBE: usize = 8 * 1024;

/// Searches the files at and under `args.path` (the whole workspace when absent) whose path
/// matches `args.glob` for lines matching `args.pattern`.
///
/// Files are visited in path order, each line at most once. Binary files, files larger than
/// [`Limits::search_file_len`], symbolic links and whatever the walk leaves out (see
/// [`walk::entries`]) are not searched. Text that is not valid UTF-8 is searched with the
/// invalid bytes replaced. At most [`Limits::search_matches`] lines are shown, each cut to
/// [`Limits::search_line_chars`] characters.
pub(crate) fn search_text(workspace: &Workspace, args: &SearchText, limits: &Limits) -> ToolResult {
    match matches(workspace, args, limits) {
        Ok(Matches { text, shown, total }) => {
            let detail = Detail::Found {
                shown,
                matches: total,
            };
            ToolResult::success(
                Summary::new(ToolName::SearchText.as_str(), &args.pattern, detail),
                text,
            )
        }
        Err(failure) => ToolResult::failure(
            ToolName::SearchText.as_str(),
            &args.pattern,
            failure.message(),
        ),
    }
}

/// The matches of `args`, or why there are none to show.
fn matches(workspace: &Workspace, args: &SearchText, limits: &Limits) -> Result<Matches, Failure> {
    let regex = Regex::new(&args.pattern).map_err(|error| {
        Failure::new(format!(
            "\"pattern\" is not a valid regular expression: {error}\nIt uses Rust regex syntax: \
             to match one of ( ) [ ] {{ }} . * + ? | ^ $ \\ literally, put a backslash before it"
        ))
    })?;
    let glob = args.glob.as_deref().map(compile_glob).transpose()?;
    let candidate = args.path.as_deref().unwrap_or(".");
    workspace
        .check(candidate, Access::Read)
        .map_err(|error| sandbox(&error))?;
    // The check resolves a path that does not exist yet, as a write needs; a search needs
    // something to search.
    workspace
        .metadata(candidate)
        .map_err(|error| sandbox(&error))?;

    let mut text = String::new();
    let mut shown = 0;
    let mut total = 0;
    let mut searched = 0;
    let mut too_large = 0;
    let mut hard_links = 0;
    walk::visit(workspace, candidate, None, |entry, dir| {
        if entry.kind != Kind::File
            || !glob
                .as_ref()
                .is_none_or(|glob| glob.matches(&entry.relative))
        {
            return ControlFlow::Continue(());
        }
        let Ok(metadata) = dir.metadata(&entry.name) else {
            return ControlFlow::Continue(());
        };
        if metadata.len() > limits.search_file_len {
            too_large += 1;
            return ControlFlow::Continue(());
        }
        // Through the directory's handle: confined, checked against the deny rules and the
        // hard-link refusal again, whatever changed since the listing.
        let bytes = match dir.read(&entry.name) {
            Ok(bytes) => bytes,
            Err(SandboxError::HardLink { .. }) => {
                hard_links += 1;
                return ControlFlow::Continue(());
            }
            Err(_) => return ControlFlow::Continue(()),
        };
        if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
            return ControlFlow::Continue(());
        }
        searched += 1;
        let contents = String::from_utf8_lossy(&bytes);
        for (index, line) in contents.lines().enumerate() {
            let Some(found) = regex.find(line) else {
                continue;
            };
            total += 1;
            if shown < limits.search_matches {
                shown += 1;
                let excerpt = excerpt(line, found.start(), limits.search_line_chars);
                // Writing to a String cannot fail.
                let _ = writeln!(text, "{}:{}: {excerpt}", entry.relative, index + 1);
            }
        }
        ControlFlow::Continue(())
    })
    .map_err(|error| sandbox(&error))?;
    if total == 0 {
        let _ = writeln!(
            text,
            "No matches for {:?} in {searched} files searched under {candidate}",
            args.pattern
        );
    }
    if shown < total {
        let _ = writeln!(
            text,
            "[{shown} of {total} matching lines shown: narrow the search with path or glob]"
        );
    }
    if too_large > 0 {
        let _ = writeln!(
            text,
            "[{too_large} files larger than {} bytes were not searched]",
            limits.search_file_len
        );
    }
    if hard_links > 0 {
        let _ = writeln!(
            text,
            "[{hard_links} files with more than one hard link were not searched: another of \
             their names may be outside the workspace or a file the workspace protects]"
        );
    }
    Ok(Matches { text, shown, total })
}

/// A glob over workspace-relative paths. Without a `/` it matches a file name at any depth
/// (`*.rs`); with one, the whole path (`tests/**/*.py`). `*` never crosses a `/`.
struct PathGlob {
    /// The compiled glob.
    matcher: GlobMatcher,
    /// Whether to match the file name only.
    name_only: bool,
}

impl PathGlob {
    fn matches(&self, relative: &str) -> bool {
        let subject = if self.name_only {
            relative.rsplit('/').next().unwrap_or(relative)
        } else {
            relative
        };
        self.matcher.is_match(subject)
    }
}

fn compile_glob(glob: &str) -> Result<PathGlob, Failure> {
    let compiled = GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map_err(|error| {
            Failure::new(format!(
                "\"glob\" is not a valid glob: {error}; write one such as \"*.rs\" or \
                 \"tests/**/*.py\""
            ))
        })?;
    Ok(PathGlob {
        matcher: compiled.compile_matcher(),
        name_only: !glob.contains('/'),
    })
}

/// `line` cut to at most `max` characters around byte offset `at` (where the match starts),
/// with `…` where text was cut.
///
/// The excerpt starts a quarter of `max` before the match, so the match and what follows it
/// are shown along with some text before it; a line that fits is shown whole.
fn excerpt(line: &str, at: usize, max: usize) -> String {
    let length = line.chars().count();
    let match_char = line[..at].chars().count();
    let start = match_char
        .saturating_sub(max / 4)
        .min(length.saturating_sub(max));
    let mut excerpt: String = line.chars().skip(start).take(max).collect();
    if start > 0 {
        excerpt.insert(0, '…');
    }
    if start + max < length {
        excerpt.push('…');
    }
    excerpt
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! excerpts {
        ($($name:ident: ($line:expr, $at:expr, $max:expr) => $expected:expr,)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(excerpt($line, $at, $max), $expected);
            }
        )*};
    }

    excerpts! {
        a_line_that_fits_is_whole: ("abcdef", 3, 6) => "abcdef",
        a_short_line_is_whole: ("abc", 2, 6) => "abc",
        a_match_near_the_start_keeps_the_start: ("abcdefghij", 1, 8) => "abcdefgh…",
        a_match_in_the_middle_shows_a_quarter_before: ("abcdefghijklmnop", 8, 8) => "…ghijklmn…",
        a_match_at_the_end_shows_the_last_characters: ("abcdefghij", 9, 4) => "…ghij",
        characters_not_bytes: ("ééééééééé", 10, 4) => "…éééé…",
    }

    #[test]
    fn globs_without_a_slash_match_names_at_any_depth() {
        let glob = compile_glob("*.rs").expect("valid");
        assert!(glob.matches("a.rs"));
        assert!(glob.matches("src/deep/a.rs"));
        assert!(!glob.matches("src/a.py"));
    }

    #[test]
    fn globs_with_a_slash_match_the_whole_path() {
        let glob = compile_glob("tests/*.py").expect("valid");
        assert!(glob.matches("tests/a.py"));
        assert!(!glob.matches("tests/deep/a.py"));
        assert!(!glob.matches("a.py"));
        let deep = compile_glob("tests/**/*.py").expect("valid");
        assert!(deep.matches("tests/deep/a.py"));
    }

    #[test]
    fn an_invalid_glob_says_what_to_write() {
        let failure = compile_glob("src/[").err().expect("unclosed class");
        assert!(
            failure
                .message()
                .starts_with("\"glob\" is not a valid glob: "),
            "{failure:?}"
        );
        assert!(
            failure
                .message()
                .ends_with("write one such as \"*.rs\" or \"tests/**/*.py\"")
        );
    }
}
