//! The head start: which files the harness reads for the model before its first turn.
//!
//! A person handed a failing project looks at the files the failure names and, in a small
//! project, at all of it. Small local models do not: measured on this kind of machine, a
//! bash-only agent driving Qwen2.5-Coder-1.5B never opened a source file in 8 small bug-fix
//! tasks. So the harness opens them itself, through the same `read_file` tool, within the
//! head start's budget.
//!
//! In a large repository the file the failure names is the test, and the code it tests is
//! one module among dozens, often thousands of lines long: too long to show whole. There the
//! harness looks up the names the task and the failure mention in the workspace's
//! [`SymbolIndex`] and shows those definitions, each with its line numbers, plus a short
//! map of where the rest is defined (issue #49: shown only the listing and the failure,
//! Qwen2.5-Coder-1.5B answered three attempts with invented versions of a function it never
//! read, and made no tool call to find it).

use std::sync::LazyLock;

use harness_sandbox::Access;
use harness_tools::{Definition, DefinitionKind, SymbolIndex, Toolbox};
use regex::Regex;

use crate::edit_format::EditFormat;

/// A project with at most this many files in its listing is small: all of its files are
/// candidates, not only the ones the failure names.
pub(crate) const SMALL_PROJECT_FILES: usize = 12;

/// Files larger than this are never read for the head start.
const MAX_FILE_BYTES: u64 = 16 * 1024;

/// The files to read for the model, in order: those the verification output names (in the
/// order it names them), then, in a small project, the other files of the listing, smallest
/// first. Only regular files of at most [`MAX_FILE_BYTES`] that the workspace lets the
/// tools read (its deny rules and hard-link refusal, judged on the resolved path, as
/// `read_file` judges it) and that `list_dir` would show ([`Toolbox::is_listed`]: nothing
/// the workspace's `.gitignore` keeps out of git, such as a local settings file, even when
/// the output names it or a listed link leads to it); hidden files only when the output
/// names them. The head start is read before the model says anything, and its files go
/// into the first request: the harness picks them, so it picks only what the user would
/// show anyone who has the repository.
///
/// The files `is_protected_test` picks (tests the tools may not change) come before all
/// the others, each group in that order, so that the file the model reads last, the one
/// its answer most likely changes, is code it may change. (Seen with Qwen2.5-Coder-1.5B on
/// the task suite: where a shell test was read last, the model set out to change the
/// test's own helper instead of the code under test. Marking each test's result as a test
/// not to change was tried with it, and dropped: the suite run had 14 refused test edits
/// against 4-8 in the four runs before, and solved no more.)
pub(crate) fn files_to_read(
    toolbox: &Toolbox,
    listing: &str,
    verification_output: &str,
    is_protected_test: impl Fn(&str) -> bool,
) -> Vec<String> {
    let workspace = toolbox.workspace();
    let readable = |path: &str| -> Option<u64> {
        workspace.check(path, Access::Read).ok()?;
        if !toolbox.is_listed(path) {
            return None;
        }
        let metadata = workspace.metadata(path).ok()?;
        (metadata.is_file() && metadata.len() <= MAX_FILE_BYTES).then(|| metadata.len())
    };
    let mut chosen: Vec<String> = Vec::new();
    for candidate in named_paths(verification_output, workspace.root().as_str()) {
        if !chosen.contains(&candidate) && readable(&candidate).is_some() {
            chosen.push(candidate);
        }
    }
    let listed = listed_files(listing);
    if listed.len() <= SMALL_PROJECT_FILES {
        let mut rest: Vec<(u64, String)> = listed
            .into_iter()
            .filter(|path| !is_hidden(path) && !chosen.iter().any(|c| c == path))
            .filter_map(|path| readable(path).map(|size| (size, path.to_owned())))
            .collect();
        rest.sort();
        chosen.extend(rest.into_iter().map(|(_, path)| path));
    }
    let (tests, code): (Vec<String>, Vec<String>) =
        chosen.into_iter().partition(|path| is_protected_test(path));
    tests.into_iter().chain(code).collect()
}

/// True if and only if the listing shows a small project, whose files the head start reads
/// whole: at most [`SMALL_PROJECT_FILES`] files.
pub(crate) fn is_small_project(listing: &str) -> bool {
    listed_files(listing).len() <= SMALL_PROJECT_FILES
}

/// The most definitions the head start shows.
const MAX_DEFINITIONS: usize = 4;

/// The most lines of one definition the head start shows; `read_file` reads on.
pub(crate) const MAX_DEFINITION_LINES: usize = 60;

/// A name that matches more definitions than this outside test files points nowhere in
/// particular (`get`, `__init__`, `parse` in a parser library), unless it is all there is.
const MAX_MATCHES_PER_NAME: usize = 3;

/// The definitions to show, best first: first those holding a line the verification
/// output points at ([`pointed_at`]: a traceback's or a panic's `path:line` in a file too
/// long to have been read whole), then those of the names the task and the output mention
/// ([`mentioned_names`]), looked up by their [`key`](name_key) (so `parse_line`,
/// `parseLine` and `ParseLine` are one name); all the code before any test. At most
/// [`MAX_DEFINITIONS`], of which one of a test the tools may not change (a failure points
/// at every failing test; the code is what the answer changes), none inside another one
/// shown, none in a file of `shown` (read whole already), and no `impl` block or module (a
/// name for a whole file's worth of code). A name the task mentions comes before one only
/// the output does, and a name written as code (`parse_line`, `urlJoin`, `urljoin(`, a
/// traceback's function) before a plain word that happens to name a definition. `root` is
/// the workspace's, for the absolute paths of the output.
pub(crate) fn definitions_to_show<'i>(
    index: &'i SymbolIndex,
    (task, output, root): (&str, &str, &str),
    shown: &[String],
    is_protected_test: impl Fn(&str) -> bool,
) -> Vec<&'i Definition> {
    let mut chosen: Vec<&Definition> = Vec::new();
    let consider = |candidates: Vec<&'i Definition>, chosen: &mut Vec<&'i Definition>| {
        let (tests, code): (Vec<&Definition>, Vec<&Definition>) = candidates
            .into_iter()
            .filter(|d| !shown.contains(&d.path))
            .partition(|d| is_protected_test(&d.path));
        for definition in code.into_iter().chain(tests) {
            let is_test = is_protected_test(&definition.path);
            let overlaps = chosen.iter().any(|c| {
                c.path == definition.path
                    && c.line <= definition.end_line
                    && definition.line <= c.end_line
            });
            let tests_chosen = chosen.iter().filter(|c| is_protected_test(&c.path)).count();
            if !overlaps && chosen.len() < MAX_DEFINITIONS && !(is_test && tests_chosen > 0) {
                chosen.push(definition);
            }
        }
    };
    consider(pointed_at(index, output, root), &mut chosen);
    let mut names = mentioned_names(task, output);
    // Stable: the order of mention stays within each strength.
    names.sort_by_key(|name| std::cmp::Reverse(name.strong));
    for name in names {
        let matching: Vec<&Definition> = index
            .definitions()
            .iter()
            .filter(|d| !matches!(d.kind, DefinitionKind::Impl | DefinitionKind::Module))
            .filter(|d| name_key(&d.name) == name.key && !shown.contains(&d.path))
            .collect();
        let in_code = matching
            .iter()
            .filter(|d| !is_protected_test(&d.path))
            .count();
        if in_code > MAX_MATCHES_PER_NAME && !name.strong {
            continue;
        }
        let (tests, code): (Vec<&Definition>, Vec<&Definition>) = matching
            .into_iter()
            .partition(|d| is_protected_test(&d.path));
        let candidates = code
            .into_iter()
            .chain(tests)
            .take(MAX_MATCHES_PER_NAME)
            .collect();
        consider(candidates, &mut chosen);
    }
    // The code first, wherever its test was found: a test is there to show what the code
    // must do.
    let (tests, code): (Vec<&Definition>, Vec<&Definition>) =
        chosen.into_iter().partition(|d| is_protected_test(&d.path));
    code.into_iter().chain(tests).collect()
}

/// The innermost definition (no `impl` block or module) holding each line `output` points
/// at, in order, each once: `File "pkg/core.py", line 1203` (Python), `src/lib.rs:120:9`
/// (a Rust panic, a compiler), `lib/url.js:88:5` (a JavaScript stack), `url.go:45`, with
/// an absolute path read relative to `root`.
fn pointed_at<'i>(index: &'i SymbolIndex, output: &str, root: &str) -> Vec<&'i Definition> {
    let prefix = format!("{}/", root.trim_end_matches('/'));
    let mut found: Vec<&Definition> = Vec::new();
    for location in LOCATION.captures_iter(output) {
        let (Some(path), Some(line)) = (
            location.get(1).or_else(|| location.get(3)),
            location.get(2).or_else(|| location.get(4)),
        ) else {
            continue;
        };
        let Ok(line) = line.as_str().parse::<usize>() else {
            continue;
        };
        let path = path.as_str();
        let path = path
            .strip_prefix(&prefix)
            .unwrap_or_else(|| path.strip_prefix("./").unwrap_or(path));
        let innermost = index
            .definitions()
            .iter()
            .filter(|d| !matches!(d.kind, DefinitionKind::Impl | DefinitionKind::Module))
            .filter(|d| d.path == path && d.line <= line && line <= d.end_line)
            .max_by_key(|d| d.line);
        if let Some(definition) = innermost
            && !found.contains(&definition)
        {
            found.push(definition);
        }
    }
    found
}

/// A place in a file, as a Python traceback writes it or as `path:line` (a column may
/// follow).
static LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"File "([^"]+)", line (\d+)|([A-Za-z0-9_./-]+\.[A-Za-z0-9]+):(\d+)"#)
        .unwrap_or_else(|_| unreachable!("a valid pattern"))
});

/// A name the task or the verification output mentions, to look up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MentionedName {
    /// Its [`name_key`].
    pub(crate) key: String,
    /// Whether it was written as code, or as a test's name, rather than as a word that
    /// may be one.
    pub(crate) strong: bool,
}

/// The names to look up, in order of mention, the task's first, each once (the stronger
/// mention kept):
///
/// 1. in the task, every identifier: strong when written as code (in backticks, followed
///    by `(`, dotted, with an underscore or an inner capital), weak when a plain word of
///    four letters or more that is not common prose;
/// 2. in the output, the functions of a traceback's frames (`line 12, in parse_line`,
///    `at urlJoin (`) and
///    every identifier followed by `(` (a call in a quoted source line, a JavaScript or Go
///    stack frame), strong; other identifiers written as code, weak;
/// 3. for every test's name among them (`test_parse_line`, `TestUrlJoin`,
///    `testParseLine`, `parse_line_test`), the name it tests (`parse_line`, `url_join`),
///    strong.
pub(crate) fn mentioned_names(task: &str, output: &str) -> Vec<MentionedName> {
    let mut names: Vec<MentionedName> = Vec::new();
    let mut add = |name: &str, strong: bool| {
        let mut forms = vec![(name_key(name), strong)];
        if let Some(tested) = tested_name(name) {
            forms.push((name_key(tested), true));
        }
        for (key, strong) in forms {
            if key.len() < 3 {
                continue;
            }
            match names.iter_mut().find(|known| known.key == key) {
                Some(known) => known.strong |= strong,
                None => names.push(MentionedName { key, strong }),
            }
        }
    };
    for (word, code) in identifiers(task) {
        let prose = word.len() < 4 || PROSE.contains(&word.to_lowercase().as_str());
        if code || !prose {
            add(word, code);
        }
    }
    for frame in FRAME.captures_iter(output) {
        if let Some(name) = frame.get(1).or_else(|| frame.get(2)) {
            add(name.as_str(), true);
        }
    }
    for (word, code) in identifiers(output) {
        if code {
            add(word, output_call(output, word));
        }
    }
    names
}

/// A frame's function: in a Python traceback (`line 12, in parse_line`), or a JavaScript
/// stack (`at urlJoin (`, `at Parser.parse (`).
static FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"line \d+, in ([A-Za-z_][A-Za-z0-9_]*)|\bat (?:new )?(?:[A-Za-z_$][A-Za-z0-9_$]*\.)*([A-Za-z_$][A-Za-z0-9_$]*) \(")
        .unwrap_or_else(|_| unreachable!("a valid pattern"))
});

static IDENTIFIER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z_$][A-Za-z0-9_$]*").unwrap_or_else(|_| unreachable!("a valid pattern"))
});

/// Words of a task's prose that name definitions in many projects and point at none.
const PROSE: &[&str] = &[
    "that",
    "this",
    "with",
    "from",
    "when",
    "what",
    "should",
    "which",
    "function",
    "method",
    "class",
    "file",
    "files",
    "test",
    "tests",
    "code",
    "return",
    "returns",
    "value",
    "values",
    "make",
    "pass",
    "passes",
    "fail",
    "fails",
    "failing",
    "error",
    "errors",
    "wrong",
    "right",
    "correct",
    "correctly",
    "instead",
    "there",
    "their",
    "they",
    "then",
    "than",
    "does",
    "into",
    "only",
    "some",
    "have",
    "must",
    "will",
    "would",
    "could",
    "about",
    "after",
    "before",
    "other",
    "input",
    "output",
    "result",
    "results",
    "string",
    "number",
    "list",
    "true",
    "false",
    "none",
    "null",
    "self",
    "change",
    "changes",
    "bug",
    "fix",
    "works",
];

/// The identifiers of `text`, each with whether it is written as code: in backticks,
/// followed by `(`, part of a dotted name, or spelled as no word of prose is (an
/// underscore, a capital after a lower-case letter).
fn identifiers(text: &str) -> Vec<(&str, bool)> {
    IDENTIFIER
        .find_iter(text)
        .map(|found| {
            let word = found.as_str();
            let before = text[..found.start()].chars().next_back();
            let after = text[found.end()..].chars().next();
            let dotted = before == Some('.')
                || (after == Some('.')
                    && text[found.end() + 1..].starts_with(|c: char| c.is_alphabetic()));
            let spelled = word.trim_matches('_').contains('_')
                || word
                    .as_bytes()
                    .windows(2)
                    .any(|pair| pair[0].is_ascii_lowercase() && pair[1].is_ascii_uppercase());
            let code = before == Some('`') || after == Some('(') || dotted || spelled;
            (word, code)
        })
        .collect()
}

/// True if and only if `word` is called somewhere in `output` (`word(`).
fn output_call(output: &str, word: &str) -> bool {
    output.match_indices(word).any(|(at, _)| {
        let before = output[..at].chars().next_back();
        let starts = !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
        starts && output[at + word.len()..].starts_with('(')
    })
}

/// The name a test's name says it tests, if it is one: `test_parse_line` and
/// `parse_line_test` test `parse_line`; `TestUrlJoin`, `testUrlJoin` and `UrlJoinTests`
/// test `UrlJoin`.
fn tested_name(name: &str) -> Option<&str> {
    let camel_prefix = |prefix: &str| {
        name.strip_prefix(prefix)
            .filter(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()))
    };
    let tested = name
        .strip_prefix("test_")
        .or_else(|| camel_prefix("Test"))
        .or_else(|| camel_prefix("test"))
        .or_else(|| name.strip_suffix("_test"))
        .or_else(|| name.strip_suffix("Tests"))
        .or_else(|| name.strip_suffix("Test"))?;
    let tested = tested.trim_matches('_');
    (!tested.is_empty()).then_some(tested)
}

/// The form a name is looked up by: lower case, without `_` and `$`, so that snake case,
/// camel case and Pascal case of one name meet.
pub(crate) fn name_key(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '$'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// A short map of where a large project defines its code: each source file of the index
/// that defines something, with its number of lines and its top-level definitions
/// (`name:line`), at most
/// `max_chars` characters, ending with how many files were left out. `None` when the index
/// has nothing to show or `max_chars` leaves room for no file.
pub(crate) fn map(index: &SymbolIndex, max_chars: usize) -> Option<String> {
    /// The most names shown for one file.
    const NAMES_PER_FILE: usize = 12;
    let mut text = String::from(
        "Where the repository's source files define their code (each file with its number \
         of lines, then its top-level definitions as name:line). To see one, call read_file \
         with its path and start_line; search_text finds any name.\n",
    );
    let header = text.len();
    let mut left_out = 0;
    for (path, lines) in index.files() {
        let top: Vec<String> = index
            .definitions()
            .iter()
            .filter(|d| &d.path == path && d.parent.is_none())
            .filter(|d| !matches!(d.kind, DefinitionKind::Module))
            .map(|d| format!("{}:{}", d.name, d.line))
            .collect();
        // A file that defines nothing (a package's empty `__init__.py`) is in the listing
        // already.
        if top.is_empty() {
            continue;
        }
        let mut entry = format!(
            "{path} ({lines} lines): {}",
            top[..top.len().min(NAMES_PER_FILE)].join(", ")
        );
        if top.len() > NAMES_PER_FILE {
            entry.push_str(&format!(" and {} more", top.len() - NAMES_PER_FILE));
        }
        entry.push('\n');
        // Room is kept for the line saying how many were left out.
        if left_out > 0 || text.len() + entry.len() + 80 > max_chars {
            left_out += 1;
        } else {
            text.push_str(&entry);
        }
    }
    if text.len() == header {
        return None;
    }
    if left_out > 0 {
        text.push_str(&format!(
            "[{left_out} more source files not shown: list_dir and search_text find them]\n"
        ));
    }
    Some(text)
}

/// What follows the lines of a definition shown from `path`, a file of `total` lines, when
/// they are not the whole file: which lines they are, and, for a file longer than
/// `rewrite_lines` (too long for `write_file` to replace), how to change it in `format`.
pub(crate) fn part_note(
    (path, first, last, total): (&str, usize, usize, usize),
    rewrite_lines: usize,
    format: EditFormat,
) -> String {
    let mut note = format!(
        "[Lines {first}-{last} of the {total} of {path}; read_file with start_line shows \
         more."
    );
    if total > rewrite_lines {
        note.push_str(match format {
            EditFormat::Whole => {
                " The file is too long to write whole: answer with only the function you \
                 change, under the file's path."
            }
            EditFormat::Diff => {
                " The file is too long to write whole: change it with a search/replace \
                 block of these lines."
            }
            _ => {
                " The file is too long to write whole: change it with edit_file, old_text \
                 copied exactly from these lines."
            }
        });
    }
    note.push(']');
    note
}

/// The files of a `list_dir` listing: not its directories, nor its notes.
fn listed_files(listing: &str) -> Vec<&str> {
    listing
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.ends_with('/') && !line.starts_with('['))
        .collect()
}

/// Workspace-relative paths that `output` mentions: words that, with quotes, trailing
/// punctuation and a `:line:column` suffix taken off, are relative paths or absolute paths
/// under `root`. Whether they exist is for the caller to check.
fn named_paths(output: &str, root: &str) -> Vec<String> {
    let prefix = format!("{}/", root.trim_end_matches('/'));
    output
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | ','))
        .filter_map(|word| {
            let word = word.trim_end_matches(['.', ';']);
            // `src/lib.rs:12:5` and `calc.py:6:` name the file.
            let word = word.split(':').next().unwrap_or(word);
            let relative = match word.strip_prefix(&prefix) {
                Some(relative) => relative,
                None if word.starts_with('/') => return None,
                None => word.strip_prefix("./").unwrap_or(word),
            };
            // A file name has an extension, or at least a directory: this keeps words of
            // prose ("FAILED", "test") out.
            let looks_like_a_file = relative.contains('.') || relative.contains('/');
            (looks_like_a_file && !relative.is_empty() && !relative.contains(".."))
                .then(|| relative.to_owned())
        })
        .collect()
}

fn is_hidden(path: &str) -> bool {
    path.split('/').any(|name| name.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! tested {
        ($($name:ident: $input:expr => $expected:expr,)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(tested_name($input), $expected);
            }
        )*};
    }

    tested! {
        a_snake_test_tests_its_rest: "test_parse_line" => Some("parse_line"),
        a_pascal_test_class_tests_its_rest: "TestUrlJoin" => Some("UrlJoin"),
        a_camel_test_tests_its_rest: "testParseLine" => Some("ParseLine"),
        a_suffix_names_a_test_too: "UrlJoinTests" => Some("UrlJoin"),
        a_snake_suffix_too: "parse_line_test" => Some("parse_line"),
        a_word_that_starts_with_test_is_no_test: "testimony" => None,
        a_bare_test_tests_nothing: "test_" => None,
        not_a_test: "parse_line" => None,
    }

    #[test]
    fn names_are_one_across_snake_camel_and_pascal_case() {
        assert_eq!(name_key("parse_line"), name_key("parseLine"));
        assert_eq!(name_key("ParseLine"), name_key("parse_line"));
        assert_eq!(name_key("url_join"), name_key("UrlJoin"));
    }

    fn keys(names: &[MentionedName]) -> Vec<(&str, bool)> {
        names.iter().map(|n| (n.key.as_str(), n.strong)).collect()
    }

    #[test]
    fn the_task_names_code_strongly_and_words_weakly() {
        let task = "Fix `quote` in the utils module: urljoin() drops the path, and parseLine \
                    should keep a trailing slash. See requests.compat for the function.";
        assert_eq!(
            keys(&mentioned_names(task, "")),
            [
                ("quote", true),
                ("utils", false),
                ("module", false),
                ("urljoin", true),
                ("drops", false),
                ("path", false),
                ("parseline", true),
                ("keep", false),
                ("trailing", false),
                ("slash", false),
                ("requests", true),
                ("compat", true),
            ],
            "prose words (fix, the, should, function) are left out"
        );
    }

    #[test]
    fn the_output_names_frames_calls_and_tests() {
        let output = "FAIL: test_urljoin_relative (tests.test_utils.TestUrlJoin)\n\
                      Traceback (most recent call last):\n  \
                      File \"/w/tests/test_utils.py\", line 40, in test_urljoin_relative\n    \
                      self.assertEqual(join_parts(a, b), expected)\n\
                      AssertionError: 'a' != 'b'\n\
                      FAILED (failures=1)\n";
        let names = mentioned_names("The tests fail.", output);
        let strong: Vec<&str> = names
            .iter()
            .filter(|n| n.strong)
            .map(|n| n.key.as_str())
            .collect();
        for expected in [
            "testurljoinrelative",
            "urljoinrelative",
            "joinparts",
            "urljoin",
        ] {
            assert!(strong.contains(&expected), "{expected} in {names:?}");
        }
        assert!(
            !names
                .iter()
                .any(|n| n.key == "failed" || n.key == "traceback"),
            "words of the output are not code: {names:?}"
        );
    }

    /// A workspace holding `files` (path, text), and its symbol index.
    fn indexed(files: &[(&str, &str)]) -> (tempfile::TempDir, SymbolIndex) {
        let directory = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = directory.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let toolbox = Toolbox::new(harness_sandbox::Workspace::new(directory.path()).unwrap());
        let index = toolbox.symbols(harness_tools::SymbolLimits::default());
        (directory, index)
    }

    fn shown(definitions: &[&Definition]) -> Vec<(String, String)> {
        definitions
            .iter()
            .map(|d| (d.path.clone(), d.name.clone()))
            .collect()
    }

    #[test]
    fn the_definitions_named_are_found_best_first_and_never_twice() {
        let (_dir, index) = indexed(&[
            (
                "pkg/utils.py",
                "def urljoin(a, b):\n    return a\n\n\nclass Parser:\n    def parse_line(self):\n        pass\n",
            ),
            (
                "pkg/more.py",
                "def parseLine():\n    pass\n\ndef path():\n    pass\n",
            ),
            (
                "tests/test_utils.py",
                "def test_urljoin():\n    assert urljoin('a', 'b')\n",
            ),
        ]);
        let task = "urljoin drops the path";
        let output = "FAIL: test_parse_line\n";
        let is_test = |path: &str| path.starts_with("tests/");
        assert_eq!(
            shown(&definitions_to_show(
                &index,
                (task, output, "/w"),
                &[],
                is_test
            )),
            [
                ("pkg/more.py".to_owned(), "parseLine".to_owned()),
                ("pkg/utils.py".to_owned(), "parse_line".to_owned()),
                ("pkg/utils.py".to_owned(), "urljoin".to_owned()),
                ("pkg/more.py".to_owned(), "path".to_owned()),
            ],
            "strong names (the test's) before the task's plain words, in order of mention"
        );
        let read = ["pkg/more.py".to_owned()];
        assert_eq!(
            shown(&definitions_to_show(
                &index,
                (task, output, "/w"),
                &read,
                is_test
            )),
            [
                ("pkg/utils.py".to_owned(), "parse_line".to_owned()),
                ("pkg/utils.py".to_owned(), "urljoin".to_owned()),
            ],
            "nothing from a file read whole"
        );
    }

    #[test]
    fn the_lines_a_traceback_or_a_panic_points_at_are_shown_by_their_definitions() {
        let (dir, index) = indexed(&[
            (
                "pkg/core.py",
                "class Parser:\n    def parse(self, line):\n        return line[1:]\n\n\ndef other():\n    pass\n",
            ),
            (
                "src/lib.rs",
                "impl Url {\n    pub fn join(&self) -> u8 {\n        1\n    }\n}\n",
            ),
            (
                "lib/url.js",
                "function urlJoin(a, b) {\n  return a + b;\n}\n",
            ),
        ]);
        let root = dir.path().to_str().unwrap();
        let output = format!(
            "  File \"{root}/pkg/core.py\", line 3, in parse\n\
             thread 'main' panicked at src/lib.rs:3:9:\n\
             file lib/url.js:2:3 and /elsewhere/pkg/core.py:6 and notes.md:1\n"
        );
        assert_eq!(
            shown(&definitions_to_show(
                &index,
                ("", &output, root),
                &[],
                |_| false
            )),
            [
                ("pkg/core.py".to_owned(), "parse".to_owned()),
                ("src/lib.rs".to_owned(), "join".to_owned()),
                ("lib/url.js".to_owned(), "urlJoin".to_owned()),
            ],
            "the innermost definition of each line, never an impl block; a path outside \
             the workspace points at nothing"
        );
    }

    /// Seen on idna 3.21: every failing test's traceback points at its test, and the
    /// tests took the room of the function the tracebacks end in.
    #[test]
    fn the_code_a_failure_points_at_comes_before_its_tests_and_one_test_is_enough() {
        let (dir, index) = indexed(&[
            ("pkg/core.py", "def check(label):\n    return label[1:3]\n"),
            (
                "tests/test_core.py",
                "def test_a():\n    check('a')\n\n\ndef test_b():\n    check('b')\n",
            ),
        ]);
        let root = dir.path().to_str().unwrap();
        let output = "  File \"tests/test_core.py\", line 2, in test_a\n  \
                      File \"pkg/core.py\", line 2, in check\n  \
                      File \"tests/test_core.py\", line 6, in test_b\n";
        let is_test = |path: &str| path.starts_with("tests/");
        assert_eq!(
            shown(&definitions_to_show(
                &index,
                ("", output, root),
                &[],
                is_test
            )),
            [
                ("pkg/core.py".to_owned(), "check".to_owned()),
                ("tests/test_core.py".to_owned(), "test_a".to_owned()),
            ]
        );
        // Seen on pyparsing 3.3.3: the class the task names, found by its name, comes
        // before the test the traceback points at.
        let only_test = "  File \"tests/test_core.py\", line 2, in test_a\n";
        let task = "`check` fails";
        assert_eq!(
            shown(&definitions_to_show(
                &index,
                (task, only_test, root),
                &[],
                is_test
            )),
            [
                ("pkg/core.py".to_owned(), "check".to_owned()),
                ("tests/test_core.py".to_owned(), "test_a".to_owned()),
            ]
        );
    }

    #[test]
    fn a_javascript_stack_names_its_functions() {
        let output = "TypeError: x\n    at Parser.parseRow (/w/lib/csv.js:12:9)\n    at new Reader (/w/lib/r.js:3:1)\n";
        let names = mentioned_names("", output);
        for expected in ["parserow", "reader"] {
            assert!(
                names.iter().any(|n| n.key == expected && n.strong),
                "{expected} in {names:?}"
            );
        }
    }

    #[test]
    fn a_plain_word_that_names_many_definitions_points_at_none() {
        let files: Vec<(String, String)> = (0..5)
            .map(|n| (format!("m{n}.py"), "def parse():\n    pass\n".to_owned()))
            .collect();
        let borrowed: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let (_dir, index) = indexed(&borrowed);
        assert!(
            definitions_to_show(&index, ("parse is wrong", "", "/w"), &[], |_| false).is_empty()
        );
        assert_eq!(
            definitions_to_show(&index, ("`parse` is wrong", "", "/w"), &[], |_| false).len(),
            MAX_MATCHES_PER_NAME,
            "written as code, it is shown where it is defined first"
        );
    }

    #[test]
    fn the_map_lists_files_with_their_top_level_definitions_within_its_bound() {
        let (_dir, index) = indexed(&[
            (
                "a.py",
                "def one():\n    def inner():\n        pass\n\nclass Two:\n    def m(self):\n        pass\n",
            ),
            ("b.rs", "pub fn three() {}\n"),
            ("empty.py", "import os\n"),
        ]);
        let map = map(&index, 2_000).unwrap();
        assert!(!map.contains("empty.py"), "{map}");
        assert!(
            map.contains("\na.py (7 lines): one:1, Two:5\nb.rs (1 lines): three:1\n"),
            "{map}"
        );
        // Room for the header and a.py, and for the line saying what was left out.
        let short = map_of(&index, map.find("b.rs").unwrap() + 80);
        assert!(short.contains("a.py") && !short.contains("b.rs"), "{short}");
        assert!(
            short
                .ends_with("[1 more source files not shown: list_dir and search_text find them]\n"),
            "{short}"
        );
        assert!(super::map(&index, 10).is_none());
    }

    fn map_of(index: &SymbolIndex, max: usize) -> String {
        map(index, max).unwrap()
    }

    #[test]
    fn a_part_of_a_long_file_is_to_be_changed_with_edit_file() {
        let note = part_note(("u.py", 10, 20, 900), 200, EditFormat::Tools);
        assert!(
            note.starts_with("[Lines 10-20 of the 900 of u.py;"),
            "{note}"
        );
        assert!(note.contains("change it with edit_file"), "{note}");
        let whole = part_note(("u.py", 10, 20, 900), 200, EditFormat::Whole);
        assert!(whole.contains("only the function you change"), "{whole}");
        let short = part_note(("u.py", 10, 20, 150), 200, EditFormat::Tools);
        assert!(!short.contains("edit_file"), "{short}");
    }

    fn workspace(files: &[(&str, usize)]) -> (tempfile::TempDir, Toolbox) {
        let directory = tempfile::tempdir().unwrap();
        for (path, size) in files {
            let path = directory.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x".repeat(*size)).unwrap();
        }
        let workspace = harness_sandbox::Workspace::new(directory.path()).unwrap();
        (directory, Toolbox::new(workspace))
    }

    #[test]
    fn named_files_come_first_then_a_small_projects_files_smallest_first() {
        let (_dir, workspace) = workspace(&[
            ("test_calc.py", 300),
            ("calc.py", 200),
            ("README.md", 70),
            (".gitignore", 10),
            (".env", 10),
            ("big.bin", 20_000),
        ]);
        let listing = ".env\n.gitignore\nREADME.md\nbig.bin\ncalc.py\nsrc/\ntest_calc.py\n";
        let root = workspace.workspace().root().to_string();
        let output = format!("File \"{root}/test_calc.py\", line 8\nmissing.py: nope\n.env");
        assert_eq!(
            files_to_read(&workspace, listing, &output, |_| false),
            ["test_calc.py", "README.md", "calc.py"],
            "named first; then by size; never hidden, denied, missing or big files"
        );
    }

    /// Issue #45: the head start went into the first request before the model said
    /// anything, and read a git-ignored local file the verification output named.
    #[test]
    fn files_git_ignores_are_never_read_named_listed_or_through_a_link() {
        let (dir, toolbox) = workspace(&[
            ("calc.py", 100),
            ("local_settings.py", 50),
            ("cache/state.txt", 50),
        ]);
        std::fs::write(dir.path().join(".gitignore"), "local_settings.py\ncache/\n").unwrap();
        std::os::unix::fs::symlink("local_settings.py", dir.path().join("settings.py")).unwrap();
        let listing = ".gitignore\ncalc.py\nsettings.py\n";
        let output = "File \"local_settings.py\", line 1\ncache/state.txt: read\ncalc.py:3";
        assert_eq!(
            files_to_read(&toolbox, listing, output, |_| false),
            ["calc.py"],
            "neither the ignored files the output names nor the link to one"
        );
        assert!(toolbox.is_listed("calc.py"));
        assert!(!toolbox.is_listed("local_settings.py"));
        assert!(!toolbox.is_listed("settings.py"));
        assert!(!toolbox.is_listed("cache/state.txt"));
    }

    #[test]
    fn protected_tests_are_read_before_everything_else_each_group_in_its_order() {
        let (_dir, workspace) = workspace(&[
            ("lib.sh", 100),
            ("test.sh", 200),
            ("calc.py", 300),
            ("test_calc.py", 400),
            ("notes.md", 500),
        ]);
        let listing = "calc.py\nlib.sh\nnotes.md\ntest.sh\ntest_calc.py\n";
        let is_test = |path: &str| path.starts_with("test");
        assert_eq!(
            files_to_read(&workspace, listing, "notes.md: see", is_test),
            ["test.sh", "test_calc.py", "notes.md", "lib.sh", "calc.py"]
        );
    }

    #[test]
    fn in_a_larger_project_only_named_files_are_read() {
        let files: Vec<(String, usize)> = (0..=SMALL_PROJECT_FILES)
            .map(|n| (format!("f{n}.py"), 10))
            .collect();
        let borrowed: Vec<(&str, usize)> = files.iter().map(|(p, s)| (p.as_str(), *s)).collect();
        let (_dir, workspace) = workspace(&borrowed);
        let listing: String = files.iter().map(|(p, _)| format!("{p}\n")).collect();
        assert_eq!(
            files_to_read(&workspace, &listing, "f3.py:1: error", |_| false),
            ["f3.py"]
        );
        let small: String = files
            .iter()
            .skip(1)
            .map(|(p, _)| format!("{p}\n"))
            .collect();
        assert_eq!(
            files_to_read(&workspace, &small, "", |_| false).len(),
            SMALL_PROJECT_FILES
        );
    }
}
