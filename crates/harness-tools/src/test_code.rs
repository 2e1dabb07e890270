//! [`TestCode`]: which code is test code, so that the file tools do not change it.
//!
//! A small model that cannot fix the code often "fixes" the test instead: weakens an
//! assertion, deletes a test, or hard-codes the value a test expects. Refusing changes to
//! test code keeps a passing verification meaning that the code was fixed.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use camino::Utf8Path;
use globset::{Glob, GlobSet, GlobSetBuilder};
use harness_edit::WriteGuard;

use regex::Regex;

use crate::python_modules::runner_file_by_name;

/// Test files by each runner's own discovery rules, matched against the path relative to
/// the workspace root at any depth: what a runner would run as a test, and the snapshots,
/// golden files, fixtures and configuration it reads. The table of rules and what each
/// follows is in [`VerificationInputs`](crate::VerificationInputs)'s module docs; this list
/// is its whole-file part, shared by the file tools' refusal and the verification's
/// judgement, so the two cannot disagree.
pub const CONVENTIONAL: &[&str] = &[
    // Python. unittest's `TestLoader.discover` default pattern is `test*.py` (so Django's
    // `tests.py` too); pytest's `python_files` default is `test_*.py *_test.py`, and it
    // loads every `conftest.py` on the way; its configuration files.
    "**/test*.py",
    "**/*_test.py",
    "**/conftest.py",
    "**/pytest.ini",
    "**/.pytest.ini",
    "**/tox.ini",
    "**/setup.cfg",
    // JavaScript and TypeScript. Jest's and Vitest's `testMatch`/`include` (`*.test.*`,
    // `*.spec.*`, `__tests__/`); node --test's defaults (`*.test.*`, `*-test.*`,
    // `*_test.*`, `test-*.*`, `test.*`, `test/**`); Mocha's `./test/`; their configuration
    // files, and Babel's, which Jest transforms every test with.
    "**/*.test.{js,mjs,cjs,jsx,ts,mts,cts,tsx}",
    "**/*.spec.{js,mjs,cjs,jsx,ts,mts,cts,tsx}",
    "**/*{-,_}test.{js,mjs,cjs}",
    "**/test-*.{js,mjs,cjs}",
    "**/test.{js,mjs,cjs}",
    "**/__tests__/**",
    "**/jest.config.*",
    "**/jest.setup.*",
    "**/vitest.config.*",
    "**/vitest.workspace.*",
    "**/vite.config.*",
    "**/.mocharc*",
    "**/babel.config.*",
    "**/.babelrc*",
    // Go: `*_test.go`, and `testdata/`, which the go tool ignores when building.
    "**/*_test.go",
    "**/testdata/**",
    // Ruby, Java and Kotlin, C#.
    "**/*_spec.rb",
    "**/spec/**",
    "**/*Test.{java,kt}",
    "**/*Tests.{java,kt,cs}",
    // Shell: bats and the test_ / _test naming.
    "**/*.bats",
    "**/test_*.sh",
    "**/*_test.sh",
    // Directories of tests: Rust's integration tests and benchmarks, and most other
    // ecosystems'.
    "**/tests/**",
    "**/test/**",
    "**/benches/**",
    // Snapshots and golden files: Jest's and Vitest's `__snapshots__/*.snap`, insta's
    // `*.snap`, Go's and others' `*.golden` and `golden/`, fixtures.
    "**/__snapshots__/**",
    "**/*.snap",
    "**/*.golden",
    "**/golden/**",
    "**/fixtures/**",
];

/// Which code the file tools may not change: test files (by [`CONVENTIONAL`] and the
/// configuration's globs), and the `#[cfg(test)]` modules of Rust files.
///
/// ```
/// use harness_tools::TestCode;
///
/// let tests = TestCode::new(&["checks/*.txt"])?;
/// assert!(tests.is_test_file("test_calc.py"));
/// assert!(tests.is_test_file("src/tests/parse.rs"));
/// assert!(tests.is_test_file("checks/one.txt"));
/// assert!(!tests.is_test_file("calc.py"));
/// # Ok::<(), harness_tools::TestCodeError>(())
/// ```
#[derive(Debug, Clone)]
pub struct TestCode {
    files: GlobSet,
    /// The files a verification command runs that are named as its tests or checks
    /// ([`TestCode::with_checks_run_by`]).
    checks: BTreeSet<String>,
}

/// A glob of the configuration's `tests` list that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("the tests glob {glob:?} is not valid: {source}")]
pub struct TestCodeError {
    /// The glob as written.
    glob: String,
    /// What was wrong with it.
    source: globset::Error,
}

impl TestCode {
    /// The conventional test files, and those matching `globs` (paths relative to the
    /// workspace root; `*` stays within a directory, `**` crosses them).
    ///
    /// # Errors
    ///
    /// [`TestCodeError`] naming the first glob that does not parse.
    pub fn new(globs: &[&str]) -> Result<TestCode, TestCodeError> {
        let mut builder = GlobSetBuilder::new();
        for glob in CONVENTIONAL.iter().chain(globs) {
            let parsed = Glob::new(glob).map_err(|source| TestCodeError {
                glob: (*glob).to_owned(),
                source,
            })?;
            builder.add(parsed);
        }
        let files = builder.build().map_err(|source| TestCodeError {
            glob: globs.join(", "),
            source,
        })?;
        Ok(TestCode {
            files,
            checks: BTreeSet::new(),
        })
    }

    /// The conventional test files alone: [`TestCode::new`] with no globs of the user's,
    /// which cannot fail since [`CONVENTIONAL`] parses (tested).
    pub fn conventional() -> TestCode {
        let mut builder = GlobSetBuilder::new();
        for glob in CONVENTIONAL {
            if let Ok(glob) = Glob::new(glob) {
                builder.add(glob);
            }
        }
        TestCode {
            files: builder.build().unwrap_or_else(|_| GlobSet::empty()),
            checks: BTreeSet::new(),
        }
    }

    /// The same test code, and the files `command` (a verification command's words) runs
    /// whose path says they are its tests or checks: `sh test.sh`, `./run_tests.sh`,
    /// `python3 checks/verify.py`, also inside `sh -c "..."` or a flag's `=value`, its path
    /// read as the tools read one (`./`, `..`). Rewriting such a file makes
    /// the check pass without fixing anything, whatever the ecosystem's conventions call
    /// it; a file the command runs that is named otherwise (`python3 main.py`) may be the
    /// code to fix, and is left to the conventions.
    ///
    /// ```
    /// use harness_tools::TestCode;
    ///
    /// let tests = TestCode::new(&[])?.with_checks_run_by(&["sh", "test.sh"]);
    /// assert!(tests.is_test_file("test.sh"));
    /// assert!(!tests.is_test_file("countdown.sh"));
    /// # Ok::<(), harness_tools::TestCodeError>(())
    /// ```
    pub fn with_checks_run_by<S: AsRef<str>>(mut self, command: &[S]) -> TestCode {
        let words = command.iter().flat_map(|word| {
            word.as_ref()
                .split(|c: char| c.is_whitespace() || ";&|()'\"`=".contains(c))
        });
        for word in words {
            // `./test` or `ci/check` is a path; `test` alone is one only with an extension
            // (`cargo test` and `make check` name no file).
            let a_path = word.contains(['/', '.']);
            if let Some(path) = normalized(word).filter(|path| a_path && names_a_check(path)) {
                self.checks.insert(path);
            }
        }
        self
    }

    /// True if the file at `path` (relative to the workspace root) is a test file.
    pub fn is_test_file(&self, path: &str) -> bool {
        self.files.is_match(path) || self.checks.contains(path)
    }

    /// Why a change of `path` from `before` (`None`: a new file) to `after` changes test
    /// code, or `None` when it does not.
    pub fn changes_test_code(
        &self,
        path: &str,
        before: Option<&str>,
        after: &str,
    ) -> Option<String> {
        if self.is_test_file(path) {
            return Some(format!("{path} is a test file"));
        }

        if !path.ends_with(".rs") {
            return None;
        }
        let tests_before = before.map(rust_test_modules).unwrap_or_default();
        let tests_after = rust_test_modules(after);
        (tests_before != tests_after)
            .then(|| format!("the change touches a #[cfg(test)] module of {path}"))
    }
}

impl WriteGuard for TestCode {
    fn check(&self, path: &Utf8Path, before: Option<&str>, after: &str) -> Result<(), String> {
        if let Some(why) = runner_file_by_name(path.as_str(), before.is_none()) {
            return Err(format!(
                "{why}: the verification would no longer run with the runner it had before \
                 the run, and a pass would not count (--allow-test-edits or not), so the \
                 harness does not let the tools write it; fix the code under test instead"
            ));
        }
        match self.changes_test_code(path.as_str(), before, after) {
            Some(why) => Err(format!(
                "{why}, and the harness does not let the tools change test code: fix the code \
                 under test so that the tests pass as they are (a user who wants the tests \
                 changed runs with --allow-test-edits)"
            )),
            None => Ok(()),
        }
    }
}

/// `path` the way the tools name a file: without `.`, empty parts or a leading `/`, each
/// `..` taking away the part before it. `None` when nothing is left, or a `..` climbs above
/// the start.
pub(crate) fn normalized(path: &str) -> Option<String> {
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Whether a path a command names marks itself as a test or a check: one of its parts
/// (split at `/`, `.`, `_` and `-`) is `test`, `tests`, `check`, `checks`, `spec`, `specs`
/// or `verify`, as in `test.sh`, `run_tests.sh` or `checks/verify.py`.
fn names_a_check(path: &str) -> bool {
    const PARTS: [&str; 7] = [
        "test", "tests", "check", "checks", "spec", "specs", "verify",
    ];
    path.to_ascii_lowercase()
        .split(['/', '.', '_', '-'])
        .any(|part| PARTS.contains(&part))
}

/// The text of every `#[cfg(test)]` module of a Rust file, attribute to closing brace, in
/// order: the part of the file a change must leave alone.
fn rust_test_modules(source: &str) -> Vec<&str> {
    const ATTRIBUTE: &str = "#[cfg(test)]";
    let mut modules = Vec::new();
    // Where the last module found ends: an attribute inside it is part of it.
    let mut covered = 0;
    for (start, _) in source.match_indices(ATTRIBUTE) {
        if start < covered {
            continue;
        }
        let after = start + ATTRIBUTE.len();
        let Some(open) = module_body(&source[after..]) else {
            continue;
        };
        let end = matching_brace(source, after + open).unwrap_or(source.len());
        modules.push(&source[start..end]);
        covered = end;
    }
    modules
}

/// Where the `{` of a module declared at the start of `rest` is: after other attributes,
/// `pub` and `mod NAME`. `None` when `rest` declares no inline module there.
fn module_body(rest: &str) -> Option<usize> {
    let mut declaration = rest.trim_start();
    while let Some(attribute) = declaration.strip_prefix("#[") {
        declaration = attribute.split_once(']')?.1.trim_start();
    }
    let declaration = declaration
        .strip_prefix("pub(crate) ")
        .or_else(|| declaration.strip_prefix("pub "))
        .unwrap_or(declaration);
    let after_mod = declaration.strip_prefix("mod ")?;
    let (name, _) = after_mod.split_once('{')?;
    let name = name.trim();
    (!name.is_empty() && name.chars().all(is_ident))
        .then(|| rest.len() - after_mod.len() + after_mod.find('{').unwrap_or(0))
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The end (one past the `}`) of the block whose `{` is at `open`, skipping braces in
/// strings, raw strings, characters and comments. `None` when no block starts at `open`
/// or it is not closed.
fn matching_brace(source: &str, open: usize) -> Option<usize> {
    let rest = source.get(open..)?;
    if !rest.starts_with('{') {
        return None;
    }
    let mut depth = 0usize;
    for token in TOKENS.find_iter(rest) {
        match token.as_str() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + token.end());
                }
            }
            // A string, a character or a comment: its braces are not the code's.
            _ => {}
        }
    }
    None
}

/// The tokens of Rust source that can hold a brace that is not one: comments, strings (an
/// unclosed one runs to the end), raw strings with up to three `#`, character literals;
/// and the braces themselves. Leftmost first, so a `"` inside a comment is the comment's.
static TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?s)//[^\n]*",
        r"|/\*.*?(?:\*/|$)",
        r##"|\br".*?""##,
        r###"|\br#".*?"#"###,
        r####"|\br##".*?"##"####,
        r#####"|\br###".*?"###"#####,
        r#"|"(?:\\.|[^"\\])*(?:"|$)"#,
        r"|'(?:\\(?:'|[^']+)|[^'\\])'",
        r"|[{}]",
    ))
    .expect("the token pattern is written here and compiles (tested)")
});

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        let brace = '}';\n        let text = \"}\";\n        let raw = r#\"\"}\"#;\n        /* } */\n        // } in a comment\n        assert_eq!(add(1, 2), 3);\n    }\n}\n";

    fn tests() -> TestCode {
        TestCode::new(&[]).expect("the conventional globs parse")
    }

    #[test]
    fn conventional_test_files_are_test_files_and_code_is_not() {
        let tests = tests();
        for path in [
            "test_calc.py",
            "pkg/test_calc.py",
            "calc_test.py",
            "conftest.py",
            "csv.test.js",
            "src/app.spec.ts",
            "__tests__/x.js",
            "tests/cli.rs",
            "crate/tests/it.rs",
            "test/run.sh",
            "math_test.go",
            "spec/calc_spec.rb",
            "src/CalcTest.java",
            "t.bats",
            "test_countdown.sh",
        ] {
            assert!(tests.is_test_file(path), "{path}");
        }
        for path in [
            "calc.py",
            "contest.py",
            "src/testing.rs",
            "latest.js",
            "src/lib.rs",
            "attest/x.py",
            "countdown.sh",
        ] {
            assert!(!tests.is_test_file(path), "{path}");
        }
        let custom = TestCode::new(&["checks/**"]).expect("valid");
        assert!(custom.is_test_file("checks/a/b.txt"));
        assert!(!tests.is_test_file("checks/a/b.txt"));
    }

    #[test]
    fn the_checks_a_verification_command_runs_are_test_files_and_the_code_it_runs_is_not() {
        let cases: &[(&[&str], &[&str], &[&str])] = &[
            // (command, protected, not protected)
            (&["sh", "test.sh"], &["test.sh"], &["countdown.sh", "sh"]),
            (&["./run_tests.sh"], &["run_tests.sh"], &["run.sh"]),
            (
                &["bash", "ci/Smoke-Test.bash"],
                &["ci/Smoke-Test.bash"],
                &[],
            ),
            (
                &["python3", "checks/verify.py", "-v"],
                &["checks/verify.py"],
                &["-v"],
            ),
            (&["sh", "-c", "make && ./check"], &["check"], &["make"]),
            (&["node", "spec.mjs"], &["spec.mjs"], &[]),
            (&["bash", "-c", "sh 'tests.sh'; true"], &["tests.sh"], &[]),
            // The code the command runs, other files, subcommands and flags.
            (&["python3", "main.py"], &[], &["main.py"]),
            (
                &["python3", "contest.py", "latest.sh"],
                &[],
                &["contest.py", "latest.sh"],
            ),
            (&["cargo", "test", "-q"], &[], &["test"]),
            (&["make", "check"], &[], &["check"]),
            (&["node", "--test"], &[], &["--test", "test"]),
            (&["sh", "../test.sh"], &[], &["test.sh", "../test.sh"]),
            (
                &["sh", "lib/run.sh", "testdata"],
                &[],
                &["lib/run.sh", "testdata"],
            ),
        ];
        for (command, protected, not_protected) in cases {
            let tests = TestCode::new(&[])
                .expect("the conventions")
                .with_checks_run_by(command);
            for path in *protected {
                assert!(tests.is_test_file(path), "{command:?}: {path}");
            }
            for path in *not_protected {
                assert!(!tests.is_test_file(path), "{command:?}: {path}");
            }
        }
        // The conventions still hold beside them.
        let tests = tests().with_checks_run_by(&["sh", "test.sh"]);
        assert!(tests.is_test_file("test_calc.py") && tests.is_test_file("tests/parse.rs"));
    }

    #[test]
    fn an_invalid_glob_is_named() {
        let error = TestCode::new(&["ok/*", "bad/[z-a]"]).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("the tests glob \"bad/[z-a]\" is not valid"),
            "{error}"
        );
    }

    #[test]
    fn a_rust_test_module_is_found_whole_whatever_its_braces_in_strings_and_comments() {
        let modules = rust_test_modules(LIB);
        assert_eq!(modules.len(), 1);
        assert!(modules[0].starts_with("#[cfg(test)]\nmod tests {"));
        assert!(modules[0].ends_with("    }\n}"), "{:?}", modules[0]);
        let two = format!(
            "{LIB}\n#[cfg(test)]\n#[allow(dead_code)]\npub(crate) mod more {{ fn f() {{}} }}\n#[cfg(test)]\nmod external;\n#[cfg(test)]\nfn helper() {{}}\n"
        );
        let modules = rust_test_modules(&two);
        assert_eq!(modules.len(), 2, "{modules:?}");
        assert_eq!(
            modules[1],
            "#[cfg(test)]\n#[allow(dead_code)]\npub(crate) mod more { fn f() {} }"
        );
    }

    #[test]
    fn strings_characters_and_comments_hide_their_braces_and_lifetimes_do_not_confuse() {
        let cases = [
            ("{ }", Some(3)),
            ("{ { } }", Some(7)),
            ("{ \"ab}cd\" }", Some(11)),
            ("{ \"a\\\"}b\" }", Some(11)),
            ("{ r\"a}b\" }", Some(10)),
            ("{ r#\"a\"}b\"# }", Some(13)),
            ("{ r##\"\"#}\"## }", Some(14)),
            ("{ r###\"}\"###\n}", Some(14)),
            ("{ ar\"\\\"}\" }", Some(11)),
            ("{ '}' }", Some(7)),
            ("{ '\"' }", Some(7)),
            ("{ '\\'' '}' }", Some(12)),
            ("{ '\\u{7d}' }", Some(12)),
            ("{ &'a} }", Some(6)),
            ("{ fn f<'a>(x: &'a str) {} }", Some(27)),
            ("{ x; // } y\n }", Some(14)),
            ("{ x; /* } */ \"}\" }", Some(18)),
            ("{ /* \"\n */ }", Some(12)),
            ("{ a / b }", Some(9)),
            ("{ br }", Some(6)),
            ("{ {", None),
            ("{ \"}", None),
            ("{ /* }", None),
            ("x {}", None),
        ];
        for (text, end) in cases {
            assert_eq!(matching_brace(text, 0), end, "{text:?}");
        }
        // From the middle of a file, and a module holding another cfg(test) attribute.
        assert_eq!(matching_brace("x { } y", 2), Some(5));
        let nested = "#[cfg(test)]\nmod a {\n    #[cfg(test)]\n    mod b {}\n}\nfn after() {}\n";
        assert_eq!(
            rust_test_modules(nested),
            ["#[cfg(test)]\nmod a {\n    #[cfg(test)]\n    mod b {}\n}"]
        );
        assert_eq!(module_body(" #[a] #[b(c)] pub mod m { }"), Some(24));
        assert_eq!(module_body(" mod { }"), None);
        assert_eq!(module_body(" mod a::b { }"), None);
        assert_eq!(module_body(" fn f() {}"), None);
        assert_eq!(module_body(" #[broken mod m {}"), None);
    }

    #[test]
    fn a_change_to_a_rust_test_module_is_test_code_and_one_outside_it_is_not() {
        let tests = tests();
        let fixed = LIB.replace("a - b", "a + b");
        assert_eq!(
            tests.changes_test_code("src/lib.rs", Some(LIB), &fixed),
            None
        );
        let weakened = LIB.replace("assert_eq!(add(1, 2), 3);", "");
        let removed = LIB.split("#[cfg(test)]").next().unwrap().to_owned();
        let added = format!("{fixed}#[cfg(test)]\nmod more {{}}\n");
        for after in [weakened.as_str(), removed.as_str(), added.as_str()] {
            let why = tests.changes_test_code("src/lib.rs", Some(LIB), after);
            assert_eq!(
                why.as_deref(),
                Some("the change touches a #[cfg(test)] module of src/lib.rs"),
                "{after}"
            );
        }
        // A new Rust file with a test module, and any change to a test file.
        assert!(tests.changes_test_code("src/new.rs", None, LIB).is_some());
        assert_eq!(tests.changes_test_code("src/new.rs", None, &removed), None);
        assert_eq!(
            tests
                .changes_test_code("test_calc.py", Some("a"), "b")
                .as_deref(),
            Some("test_calc.py is a test file")
        );
        // Other languages have no inline test modules.
        assert_eq!(
            tests.changes_test_code("lib.py", Some(LIB), &weakened),
            None
        );
    }

    #[test]
    fn the_guard_refuses_a_file_that_would_take_the_runners_place() {
        let tests = tests();
        for (path, before, why) in [
            (
                "unittest/__init__.py",
                None,
                "unittest/__init__.py would shadow the standard library's unittest",
            ),
            (
                "json.py",
                None,
                "json.py would shadow the standard library's json",
            ),
            (
                "pytest.py",
                None,
                "pytest.py would shadow the test runner's pytest",
            ),
            (
                "sitecustomize.py",
                Some("x"),
                "sitecustomize.py is a file Python runs at startup",
            ),
            (
                "lib/site.pth",
                None,
                "lib/site.pth is a file Python runs at startup",
            ),
        ] {
            let refused = tests.check(Utf8Path::new(path), before, "y").unwrap_err();
            assert!(refused.starts_with(why), "{refused}");
            assert!(refused.contains("--allow-test-edits or not"), "{refused}");
        }
        // The repository's own module, a module in a package, a name nothing loads.
        for (path, before) in [
            ("json.py", Some("x")),
            ("pkg/json.py", None),
            ("unittest/helpers.py", None),
            ("calc_helpers.py", None),
        ] {
            assert_eq!(
                tests.check(Utf8Path::new(path), before, "y"),
                Ok(()),
                "{path}"
            );
        }
    }

    #[test]
    fn the_guard_refuses_with_the_way_forward() {
        let tests = tests();
        let refused = tests
            .check(Utf8Path::new("test_calc.py"), Some("a"), "b")
            .unwrap_err();
        assert!(
            refused.starts_with("test_calc.py is a test file, and the harness"),
            "{refused}"
        );
        assert!(
            refused.contains("fix the code under test") && refused.contains("--allow-test-edits")
        );
        assert_eq!(
            tests.check(Utf8Path::new("calc.py"), Some("a"), "b"),
            Ok(())
        );
    }
}
