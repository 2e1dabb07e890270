//! [`SyntaxCheck`]: every write of a file in a language whose parser is on the machine is
//! parsed first, and refused, with the parser's message and line, when it does not parse.
//!
//! A small model that re-indents a module by two spaces, or drops a closing brace, writes a
//! file that fails at import; without this check the failure is found by the verification,
//! an attempt later. The parser is the language's own, run on a copy of the new text, never
//! on the workspace:
//!
//! | language | files | parser |
//! |---|---|---|
//! | Python | `.py`, `.pyw` | `python3 -I -c` with `ast.parse` (parses, runs nothing) |
//! | JavaScript | `.js`, `.mjs`, `.cjs` | `node --check` (a module where the text has `import`/`export` lines; JSX, which node does not parse, is written unchecked) |
//! | Go | `.go` | `gofmt -l -e` |
//!
//! The decision, in order:
//!
//! 1. A file of another language is written unchecked, and nothing is said.
//! 2. The new text parses: it is written.
//! 3. The parser could not say (it is not installed, it failed otherwise, it took longer
//!    than the timeout, 5 s, and was killed): the text is written, and the result records
//!    that it was not syntax-checked ([`crate::ToolResult`]'s debug form), nothing more.
//! 4. It does not parse, and the file is new or its current text parses: refused, with the
//!    parser's message and line, so the model can correct it in the same turn.
//! 5. It does not parse, and neither does the current text: written. A fix in progress of a
//!    file that was already broken is not blocked by the old error.
//!
//! Each parser runs through a [`Runner`]: its own process group, killed at the timeout, its
//! output capped, a scrubbed environment, in a scratch directory of its own outside the
//! workspace, under the run's isolation tier with the network off (`bwrap` and Landlock;
//! the `none` tier cuts nothing).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use camino::Utf8Path;
use harness_exec::{Confinement, Isolation, Outcome, RunOptions, Runner, Status, Tier};

/// How long one parse may take before it is killed and the write goes unchecked.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Bytes of a parser's output kept: its message is in the first lines.
const OUTPUT_LIMIT: usize = 4 * 1024;

/// Parses the new text of every write of Python, JavaScript or Go with the language's own
/// parser, outside the workspace and bounded in time, and refuses one that does not parse
/// where the file did. A parser that is missing, fails or is too slow lets the write
/// through, noted in [`ToolResult::not_syntax_checked`](crate::ToolResult::not_syntax_checked).
#[derive(Debug)]
pub struct SyntaxCheck {
    /// Runs the parsers, confined to `scratch`.
    runner: Runner,
    /// The directory the copies are parsed in, removed with the check.
    scratch: tempfile::TempDir,
    /// Numbers each copy, so that concurrent checks do not share one.
    copies: AtomicU64,
    /// The parsers by language.
    parsers: Vec<Parser>,
}

/// What a parse of one text found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// It parses, or it is of no language this check knows.
    Parses,
    /// It does not parse: the parser's message, with the line.
    Broken(String),
    /// The parser could not tell, for this reason: it is written unchecked.
    Unchecked(String),
}

impl SyntaxCheck {
    /// A check whose parsers run under `tier` (with the network off) in a new scratch
    /// directory under the system's temporary directory.
    ///
    /// # Errors
    ///
    /// The scratch directory could not be created.
    pub fn new(tier: Tier) -> std::io::Result<SyntaxCheck> {
        SyntaxCheck::with_parsers(tier, Parser::all(), TIMEOUT)
    }

    fn with_parsers(
        tier: Tier,
        parsers: Vec<Parser>,
        timeout: Duration,
    ) -> std::io::Result<SyntaxCheck> {
        let scratch = tempfile::Builder::new()
            .prefix("harness-syntax-")
            .tempdir()?;
        let confinement = Confinement::new(scratch.path()).network(false);
        let runner = Runner::new()
            .timeout(timeout)
            .output_limit(OUTPUT_LIMIT)
            .isolation(Isolation::new(tier, confinement));
        Ok(SyntaxCheck {
            runner,
            scratch,
            copies: AtomicU64::new(0),
            parsers,
        })
    }

    /// The directory the parsers run in, which must not be inside a workspace.
    pub(crate) fn scratch(&self) -> &Path {
        self.scratch.path()
    }

    /// Whether the write of `after` to `path`, whose current text is `before` (`None` for
    /// a new file), may go ahead: `Err` with the reason when it does not parse and
    /// `before` did; `Ok` with the reason it was not checked, when it was not.
    pub(crate) fn check(
        &self,
        path: &Utf8Path,
        before: Option<&str>,
        after: &str,
    ) -> Result<Option<String>, String> {
        let Some(parser) = self.parser_for(path) else {
            return Ok(None);
        };
        match self.parse(parser, path, after) {
            Verdict::Parses => Ok(None),
            Verdict::Unchecked(why) => Ok(Some(why)),
            Verdict::Broken(message) => {
                if let Some(before) = before
                    && let Verdict::Broken(_) = self.parse(parser, path, before)
                {
                    return Ok(Some(format!(
                        "written though it does not parse, as it did not before either: {message}"
                    )));
                }
                Err(format!(
                    "the new text does not parse as {} ({message}), so nothing was written. \
                     Correct that line and send the change again.",
                    parser.language
                ))
            }
        }
    }

    fn parser_for(&self, path: &Utf8Path) -> Option<&Parser> {
        let extension = path.extension()?;
        self.parsers
            .iter()
            .find(|parser| parser.extensions.contains(&extension))
    }

    /// What `parser` makes of `text`, written to a copy in the scratch directory named
    /// after `path`'s kind.
    pub(crate) fn parse(&self, parser: &Parser, path: &Utf8Path, text: &str) -> Verdict {
        let number = self.copies.fetch_add(1, Ordering::Relaxed);
        let extension = (parser.copy_extension)(path, text);
        let copy = self.scratch.path().join(format!("{number}.{extension}"));
        if let Err(error) = std::fs::write(&copy, text) {
            return Verdict::Unchecked(format!("the copy could not be written: {error}"));
        }
        let mut argv: Vec<String> = parser.argv.iter().map(|&word| word.to_owned()).collect();
        argv.push(copy.to_string_lossy().into_owned());
        let ran = self
            .runner
            .run(&argv, &RunOptions::new(self.scratch.path()));
        // The copy goes at once: a large file's copies would pile up over a run.
        let _ = std::fs::remove_file(&copy);
        match ran {
            Ok(outcome) => (parser.read)(&outcome, &copy),
            Err(error) => Verdict::Unchecked(format!("{} did not run: {error}", argv[0])),
        }
    }
}

/// One language's parser: which files it takes, how it is run on a copy, how its outcome
/// reads.
#[derive(Debug)]
pub(crate) struct Parser {
    /// The language, as the model is told.
    language: &'static str,
    /// The extensions of its files, without the dot.
    extensions: &'static [&'static str],
    /// The command, to which the copy's path is added.
    argv: &'static [&'static str],
    /// The extension of the copy of a text for the file at a path.
    copy_extension: fn(&Utf8Path, &str) -> &'static str,
    /// What its outcome says of the copy at the path.
    read: fn(&Outcome, &Path) -> Verdict,
}

/// Parses a Python file without running it; a syntax error is exit 3 and one line.
const PYTHON: &str = "import ast, sys\n\
try:\n    ast.parse(open(sys.argv[1], 'rb').read())\n\
except SyntaxError as e:\n    text = (e.text or '').strip()\n    \
print(f'line {e.lineno}: {e.msg}' + (f': `{text}`' if text else ''))\n    sys.exit(3)\n";

impl Parser {
    fn all() -> Vec<Parser> {
        vec![
            Parser {
                language: "Python",
                extensions: &["py", "pyw"],
                argv: &["python3", "-I", "-c", PYTHON],
                copy_extension: |_, _| "py",
                read: read_python,
            },
            Parser {
                language: "JavaScript",
                extensions: &["js", "mjs", "cjs"],
                argv: &["node", "--check"],
                copy_extension: javascript_kind,
                read: read_node,
            },
            Parser {
                language: "Go",
                extensions: &["go"],
                argv: &["gofmt", "-l", "-e"],
                copy_extension: |_, _| "go",
                read: read_gofmt,
            },
        ]
    }
}

/// `mjs` for a text node must parse as a module (its file says so, or it has `import` or
/// `export` lines), `cjs` otherwise: `node --check` reads a `.js` file as CommonJS, where
/// `import` is an error.
fn javascript_kind(path: &Utf8Path, text: &str) -> &'static str {
    match path.extension() {
        Some("mjs") => "mjs",
        Some("cjs") => "cjs",
        _ if text.lines().any(|line| {
            ["import ", "import{", "export "]
                .iter()
                .any(|start| line.starts_with(start))
        }) =>
        {
            "mjs"
        }
        _ => "cjs",
    }
}

fn read_python(outcome: &Outcome, _copy: &Path) -> Verdict {
    match outcome.status() {
        Status::Exited(0) => Verdict::Parses,
        Status::Exited(3) => Verdict::Broken(first_line(outcome.output()).to_owned()),
        _ => unchecked("python3", outcome),
    }
}

/// `node --check` prints `<copy>:<line>`, the line, a caret, and `SyntaxError: <message>`.
fn read_node(outcome: &Outcome, copy: &Path) -> Verdict {
    let output = outcome.output();
    let error = output.lines().find(|line| line.starts_with("SyntaxError"));
    match (outcome.status(), error) {
        (Status::Exited(0), _) => Verdict::Parses,
        // JSX (React's `<App />` in a `.js` file) is no JavaScript node parses: a file of
        // it is not the model's slip.
        (Status::Exited(1), Some(error)) if error.contains("Unexpected token '<'") => {
            Verdict::Unchecked(format!("node cannot parse JSX: {error}"))
        }
        (Status::Exited(1), Some(error)) => {
            let prefix = format!("{}:", copy.display());
            let mut lines = output.lines();
            let line = lines
                .find_map(|line| line.strip_prefix(&prefix))
                .and_then(|number| number.trim().parse::<u64>().ok());
            let code = lines.next().map(str::trim).filter(|code| !code.is_empty());
            Verdict::Broken(match (line, code) {
                (Some(line), Some(code)) => format!("line {line}: {error}: `{code}`"),
                (Some(line), None) => format!("line {line}: {error}"),
                _ => error.to_owned(),
            })
        }
        _ => unchecked("node", outcome),
    }
}

/// `gofmt -e` prints `<copy>:<line>:<column>: <message>` for each error, and exits 2.
fn read_gofmt(outcome: &Outcome, copy: &Path) -> Verdict {
    let prefix = format!("{}:", copy.display());
    let error = outcome.output().lines().find_map(|line| {
        let rest = line.strip_prefix(&prefix)?;
        let (line, rest) = rest.split_once(':')?;
        let (column, message) = rest.split_once(':')?;
        Some(format!("line {line}, column {column}: {}", message.trim()))
    });
    match (outcome.status(), error) {
        (Status::Exited(0), _) => Verdict::Parses,
        (Status::Exited(2), Some(error)) => Verdict::Broken(error),
        _ => unchecked("gofmt", outcome),
    }
}

fn unchecked(parser: &str, outcome: &Outcome) -> Verdict {
    Verdict::Unchecked(format!(
        "{parser} ended {:?}: {}",
        outcome.status(),
        first_line(outcome.output())
    ))
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use harness_exec::{Sandbox, preflight};
    use harness_sandbox::Workspace;
    use serde_json::json;

    use super::*;
    use crate::Toolbox;

    /// A toolbox over a new directory whose writes go through `check`.
    fn toolbox(check: SyntaxCheck) -> (tempfile::TempDir, Toolbox) {
        let directory = tempfile::tempdir().expect("a temporary directory");
        let workspace = Workspace::new(directory.path()).expect("a workspace");
        let toolbox = Toolbox::builder(workspace).syntax_check(check).build();
        (directory, toolbox)
    }

    fn checked() -> (tempfile::TempDir, Toolbox) {
        toolbox(SyntaxCheck::new(Tier::None).expect("a scratch directory"))
    }

    /// Whether `program` is on this machine: a test of its parser returns early without.
    fn installed(program: &str) -> bool {
        std::process::Command::new(program)
            .arg("--help")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok()
    }

    fn write(toolbox: &Toolbox, path: &str, content: &str) -> crate::ToolResult {
        toolbox.call(
            "write_file",
            &json!({"path": path, "content": content, "overwrite": true}),
        )
    }

    #[test]
    fn each_language_s_refusal_names_the_line_and_writes_nothing() {
        let (directory, toolbox) = checked();
        for (program, path, broken, says) in [
            (
                "python3",
                "calc.py",
                "def add(a, b):\n    return a + b\n\n  def sub(a, b):\n    return a - b\n",
                "line 4: unindent does not match any outer indentation level",
            ),
            (
                "node",
                "slug.js",
                "function slug(s) {\n  return s.trim();\n}}\n",
                "line 3: SyntaxError: Unexpected token '}': `}}`",
            ),
            (
                "node",
                "esm.js",
                "import fs from 'fs';\nexport function f() {\n  return 1 +;\n}\n",
                "line 3: SyntaxError: Unexpected token ';'",
            ),
            (
                "gofmt",
                "calc.go",
                "package calc\n\nfunc Add(a, b int) int {\n\treturn a +\n}\n",
                "line 5, column 1: expected operand",
            ),
        ] {
            if !installed(program) {
                continue;
            }
            let result = write(&toolbox, path, broken);
            assert!(result.is_error(), "{path}: {}", result.text());
            assert!(
                result.text().contains(says) && result.text().contains("nothing was written"),
                "{path}: {}",
                result.text()
            );
            assert!(!directory.path().join(path).exists(), "{path} was written");
        }
    }

    #[test]
    fn a_valid_write_or_edit_passes_and_a_broken_edit_is_refused() {
        let (directory, toolbox) = checked();
        for (program, path, valid) in [
            (
                "python3",
                "calc.py",
                "import os\n\n\ndef add(a, b):\n    return a + b\n",
            ),
            (
                "node",
                "slug.js",
                "'use strict';\nconst slug = (s) => s.trim();\nmodule.exports = { slug };\n",
            ),
            (
                "node",
                "mod.mjs",
                "export const x = await Promise.resolve(1);\n",
            ),
            (
                "gofmt",
                "calc.go",
                "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
            ),
        ] {
            if !installed(program) {
                continue;
            }
            let result = write(&toolbox, path, valid);
            assert!(!result.is_error(), "{path}: {}", result.text());
            assert_eq!(result.not_syntax_checked(), None, "{path}");
            let on_disk = std::fs::read_to_string(directory.path().join(path));
            assert_eq!(on_disk.ok().as_deref(), Some(valid));
        }
        if installed("python3") {
            let edit = toolbox.call(
                "edit_file",
                &json!({"path": "calc.py", "old_text": "    return a + b", "new_text": "  return a + b\n    x"}),
            );
            assert!(
                edit.text().contains("line 6: unexpected indent: `x`"),
                "{}",
                edit.text()
            );
        }
    }

    #[test]
    fn jsx_in_a_js_file_is_written_unchecked() {
        if !installed("node") {
            return;
        }
        let (_directory, toolbox) = checked();
        let jsx = "export function App() {\n  return <div className=\"app\">Hi</div>;\n}\n";
        let result = write(&toolbox, "App.js", jsx);
        assert!(!result.is_error(), "{}", result.text());
        let why = result.not_syntax_checked().unwrap_or("");
        assert!(why.starts_with("node cannot parse JSX"), "{why}");
    }

    #[test]
    fn a_file_that_was_already_broken_stays_writable() {
        if !installed("python3") {
            return;
        }
        let (directory, toolbox) = checked();
        let broken = "def add(a, b)\n    return a - b\n";
        std::fs::write(directory.path().join("calc.py"), broken).expect("a file");
        // Still broken (the colon is missing), but the bug beside it is fixed.
        let edit = toolbox.call(
            "edit_file",
            &json!({"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}),
        );
        assert!(!edit.is_error(), "{}", edit.text());
        let written = edit.not_syntax_checked().unwrap_or("");
        assert!(written.contains("did not before either"), "{written}");
        // And then fixed.
        let edit = toolbox.call(
            "edit_file",
            &json!({"path": "calc.py", "old_text": "(a, b)\n", "new_text": "(a, b):\n"}),
        );
        assert!(!edit.is_error(), "{}", edit.text());
        assert_eq!(edit.not_syntax_checked(), None);
    }

    /// A parser for `.py` files that is `argv`.
    fn only(argv: &'static [&'static str]) -> Vec<Parser> {
        vec![Parser {
            language: "Python",
            extensions: &["py"],
            argv,
            copy_extension: |_, _| "py",
            read: read_python,
        }]
    }

    #[test]
    fn a_parser_that_hangs_is_cut_off_and_the_write_goes_unchecked() {
        let hangs = only(&["sh", "-c", "sleep 30"]);
        let check = SyntaxCheck::with_parsers(Tier::None, hangs, Duration::from_secs(1));
        let (directory, toolbox) = toolbox(check.expect("a scratch directory"));
        let started = Instant::now();
        let result = write(&toolbox, "calc.py", "x = (\n");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert!(!result.is_error(), "{}", result.text());
        assert!(result.not_syntax_checked().is_some(), "{result:?}");
        assert!(
            !result.text().contains("syntax"),
            "nothing noisy: {}",
            result.text()
        );
        assert!(directory.path().join("calc.py").exists());
    }

    #[test]
    fn an_absent_parser_writes_unchecked() {
        let absent = only(&["harness-no-such-parser"]);
        let check = SyntaxCheck::with_parsers(Tier::None, absent, TIMEOUT);
        let (_directory, toolbox) = toolbox(check.expect("a scratch directory"));
        let result = write(&toolbox, "calc.py", "x = (\n");
        assert!(!result.is_error(), "{}", result.text());
        let why = result.not_syntax_checked().unwrap_or("");
        assert!(why.contains("harness-no-such-parser"), "{why}");
        // A language it does not know is written unchecked, and nothing said.
        let result = write(&toolbox, "notes.txt", "x = (\n");
        assert_eq!(result.not_syntax_checked(), None);
    }

    #[test]
    fn the_parser_runs_under_the_strongest_tier_outside_the_workspace() {
        if !installed("python3") {
            return;
        }
        let Ok(choice) = preflight::choose(Sandbox::Auto) else {
            return;
        };
        let check = SyntaxCheck::new(choice.tier).expect("a scratch directory");
        let (directory, toolbox) = toolbox(check);
        assert!(
            !toolbox
                .syntax
                .as_ref()
                .is_some_and(|s| s.scratch().starts_with(directory.path()))
        );
        let result = write(&toolbox, "calc.py", "def f(:\n    pass\n");
        assert!(result.text().contains("line 1:"), "{}", result.text());
        let result = write(&toolbox, "calc.py", "def f():\n    pass\n");
        assert!(!result.is_error(), "{}", result.text());
        assert_eq!(result.not_syntax_checked(), None, "{:?}", choice.tier);
    }
}
