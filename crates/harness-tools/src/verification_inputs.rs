//! [`VerificationInputs`]: what a verification loads besides the code under test, by each
//! test runner's own discovery rules, and the judgement of a run's changes against it.
//!
//! A passing verification shows the code was fixed only if the verification measured the
//! code with the instrument the user had before the run: the same tests, snapshots, golden
//! files and fixtures, the same runner configuration, and the same runner. A model that
//! cannot fix the code can instead weaken `tests.py`, set `addopts = -k nothing`, rewrite a
//! snapshot, or write a `unittest/` package that exits 0 without running a test. The file
//! tools refuse the first kinds early ([`TestCode`]), but a command can do any of them, so
//! the root is here: when the verification passes, the run's changes since the pre-run state
//! are judged against these inputs, and a change makes the outcome "tests changed", not
//! "verified".
//!
//! # What counts, runner by runner
//!
//! Each rule names the discovery rule it follows. Paths are relative to the workspace root
//! and match at any depth.
//!
//! | runner | rule followed | inputs |
//! |---|---|---|
//! | unittest | `TestLoader.discover`'s default pattern `test*.py` (Django's runner the same, so `tests.py`) | `test*.py` |
//! | pytest | `python_files = test_*.py *_test.py`, `conftest.py` at any level, configuration read from `pytest.ini`, `.pytest.ini`, `tox.ini`, `setup.cfg`, `pyproject.toml` | those files; the test settings of `pyproject.toml` (changed lines naming pytest, unittest, `testpaths`, `python_files`, `addopts`, `pythonpath`, …) |
//! | node --test | its default patterns `**/*.test.?(c\|m)js`, `*-test.*`, `*_test.*`, `test-*.*`, `test.*`, `**/test/**` | those files |
//! | Jest, Vitest, Mocha | `testMatch` (`**/__tests__/**`, `*.spec.*`, `*.test.*`), Mocha's `./test/`, snapshots in `__snapshots__/*.snap`; `jest.config.*`, `vitest.config.*`, `vitest.workspace.*`, `vite.config.*`, `.mocharc.*`, `babel.config.*`, `.babelrc*` | those files; `package.json`'s lines naming `scripts`, `test`, a runner, or a `file:`/`link:` dependency |
//! | cargo test | the integration tests in `tests/` and benchmarks in `benches/`; `Cargo.toml`'s targets (`test = false`, `harness = false`, `[[test]]`, `autotests`, `path`, `[patch]`, profiles) | those files and lines (`#[cfg(test)]` modules are code the file tools guard, not files) |
//! | go test | `*_test.go` and `testdata/`, which `go` ignores when building | those files |
//! | bats, shell | `*.bats`, `test_*.sh`, `*_test.sh`, `test/`, `tests/` | those files |
//! | snapshots and golden files | `__snapshots__/`, `*.snap` (Jest, Vitest, insta), `*.golden`, `golden/`, `testdata/`, `fixtures/` | those files |
//! | the verification command | its program when it is a path in the workspace (`./run_tests.sh`, `scripts/test`); a file it hands an interpreter whose name says it is a check (`sh test.sh`); the recipe file of `make`, `just`, `nox`, `tox`, `rake` | those files |
//!
//! Those are the run's *tests*: with `--allow-test-edits` the user lets them change.
//!
//! # What the runner loads its own code from
//!
//! These are never for a run to change, `--allow-test-edits` or not: a test edit changes what
//! is measured, these change the measuring.
//!
//! 1. A new Python module or package (`X.py`, `X/__init__.py`, a compiled `X.*.so`) on a
//!    directory Python puts on `sys.path` for the verification (the workspace root, which is
//!    the working directory of `python3 -m unittest` and unittest's top-level directory, and a
//!    test directory or `src/` that is not a package, which pytest inserts), where `X` is a
//!    standard library module (`sys.stdlib_module_names` of the `python3` on `PATH`, asked
//!    once, with 3.11's list built in as a fallback), the runner's own (`pytest`, `_pytest`,
//!    `pluggy`, `nose2`, …) or a pytest plugin installed for it (its `pytest11` entry
//!    points). Other installed packages are the code's dependencies: a new module named
//!    after one is left to the tests' review.
//! 2. `sitecustomize.py`, `usercustomize.py` and `*.pth` files anywhere: Python runs them at
//!    startup.
//! 3. `node_modules/` and Plug'n'Play's `.pnp.*`: where Node resolves the runner and its
//!    plugins from.
//! 4. Cargo's `.cargo/config` and `.cargo/config.toml` (a `runner` replaces the test
//!    binary), `rust-toolchain` and `rust-toolchain.toml`.
//! 5. Go's `go.mod`, `go.work` (a `replace` points a package elsewhere) and `vendor/`.
//!
//! # What this module does not do
//!
//! It reads no history: the caller hands it the run's changes ([`Change`]), from the undo
//! record. Files git ignores are not in those changes; the harness resets what commands wrote
//! there before each verification, elsewhere.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::sync::LazyLock;

use globset::{Glob, GlobSet, GlobSetBuilder};
use regex::Regex;

use crate::python_modules::{python_module_stem, python_modules};
use crate::test_code::{TestCode, TestCodeError};

/// One path the run changed since its pre-run state, as the undo record's diff has it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Change {
    /// The path after the change (before it, for a deleted file), relative to the root.
    pub path: String,
    /// The path before a rename.
    pub old_path: Option<String>,
    /// How it changed.
    pub kind: ChangeKind,
    /// Its unified diff (headers, then hunks), for files whose test settings are a part of
    /// them (`pyproject.toml`, `package.json`, `Cargo.toml`).
    pub patch: String,
}

impl Change {
    /// A change of `path` of `kind`, with its unified diff `patch`.
    pub fn new(path: String, old_path: Option<String>, kind: ChangeKind, patch: String) -> Change {
        Change {
            path,
            old_path,
            kind,
            patch,
        }
    }
}

/// How a path changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeKind {
    /// The run created it.
    Added,
    /// The run deleted it.
    Deleted,
    /// Its content or mode changed.
    Modified,
    /// It moved from [`Change::old_path`].
    Renamed,
    /// It changed kind (a file became a symbolic link).
    TypeChanged,
}

/// What a finding says about the verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Role {
    /// A test, snapshot, fixture or test configuration: `--allow-test-edits` lets it change.
    Tests,
    /// Where the runner loads its own code from: never for the run to change.
    Runner,
}

/// One verification input the run changed, with what the change does.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// The path, relative to the workspace root.
    pub path: String,
    /// Which kind of input it is.
    pub role: Role,
    /// What changed, in a few words: `tests.py changed`, `unittest/__init__.py shadows the
    /// standard library's unittest`.
    pub what: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.what)
    }
}

/// Whole-file runner inputs: where the runner loads its own code from (see the module docs).
const RUNNER_FILES: &[&str] = &[
    // Python runs these at startup, from any directory on sys.path or a site directory.
    "**/sitecustomize.py",
    "**/usercustomize.py",
    "**/*.pth",
    // Node resolves the runner and its plugins here (Yarn Plug'n'Play: the .pnp files).
    "**/node_modules/**",
    "**/.pnp.*",
    // Cargo's configuration may name a `runner` for test binaries; the toolchain file picks
    // the compiler and its test harness.
    "**/.cargo/config",
    "**/.cargo/config.toml",
    "**/rust-toolchain",
    "**/rust-toolchain.toml",
    // Go: `replace` directives and vendored packages take the place of the real ones.
    "**/go.mod",
    "**/go.work",
    "**/go.work.sum",
    "**/vendor/**",
];

/// Files whose test settings are only part of them, with the changed lines that touch them.
/// A change to their other lines (a dependency, a version) is the code's.
static PARTLY_TESTS: LazyLock<Vec<(GlobSet, Regex)>> = LazyLock::new(|| {
    let rules: [(&str, &str); 3] = [
        // pytest reads `[tool.pytest.ini_options]`; coverage, tox and hatch their own
        // sections; `pythonpath` decides what `import` finds.
        (
            "**/pyproject.toml",
            r"(?i)pytest|unittest|nose|testpaths|python_(files|classes|functions)|addopts|pythonpath|norecursedirs|confcutdir|rootdir|\[tool\.(coverage|tox|hatch)",
        ),
        // npm test runs `scripts.test`; Jest, Mocha and Ava read their keys here; a `file:`
        // or `link:` dependency or an override can put another package in a runner's place.
        (
            "**/package.json",
            r#"(?i)"(scripts|test|pretest|posttest|jest|vitest|mocha|ava|tap|c8|nyc|type|imports|overrides|resolutions|pnpm|workspaces)"\s*:|jest|vitest|mocha|"(file|link|portal):"#,
        ),
        // Cargo's targets and their `test`/`harness` flags, test paths, and what replaces a
        // dependency.
        (
            "**/Cargo.toml",
            r"^\s*(\[\[?\s*(test|bench|lib|bin|example|profile|target|patch|replace|workspace|features)\b|(test|harness|doctest|bench|autotests|autobenches|autobins|path|required-features|members|exclude|default-members)\s*=)",
        ),
    ];
    rules
        .iter()
        .filter_map(|(glob, lines)| {
            let glob = Glob::new(glob).ok()?;
            let set = GlobSetBuilder::new().add(glob).build().ok()?;
            Some((set, Regex::new(lines).ok()?))
        })
        .collect()
});

/// Recipe files of programs that run what their recipe says: the verification `make test`
/// runs whatever the Makefile's `test` target says.
const RECIPES: &[(&str, &[&str])] = &[
    ("make", &["Makefile", "makefile", "GNUmakefile"]),
    ("just", &["justfile", "Justfile", ".justfile"]),
    ("nox", &["noxfile.py"]),
    ("tox", &["tox.ini"]),
    ("rake", &["Rakefile", "rakefile"]),
];

/// What a run's verification loads besides the code under test; see the module docs.
///
/// ```
/// use harness_tools::{Change, ChangeKind, TestCode, VerificationInputs};
///
/// let inputs = VerificationInputs::new(TestCode::new(&[])?, &["python3", "-m", "unittest"]);
/// let weakened = Change::new("tests.py".into(), None, ChangeKind::Modified, String::new());
/// let fixed = Change::new("calc.py".into(), None, ChangeKind::Modified, String::new());
/// let root = std::path::Path::new("/nonexistent");
/// let found = inputs.judge(root, &[weakened, fixed], false);
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].to_string(), "tests.py changed");
/// # Ok::<(), harness_tools::TestCodeError>(())
/// ```
#[derive(Debug, Clone)]
pub struct VerificationInputs {
    /// The test files, with the checks the command runs.
    tests: TestCode,
    /// [`RUNNER_FILES`].
    runner: GlobSet,
    /// The recipe files the command's program reads, and the program itself when it is a
    /// path in the workspace.
    named: BTreeSet<String>,
}

impl VerificationInputs {
    /// The inputs of a verification running `argv`, with the test files of `tests` (the
    /// conventions and the user's globs).
    pub fn new<S: AsRef<str>>(tests: TestCode, argv: &[S]) -> VerificationInputs {
        let tests = tests.with_checks_run_by(argv);
        let mut builder = GlobSetBuilder::new();
        for glob in RUNNER_FILES {
            if let Ok(glob) = Glob::new(glob) {
                builder.add(glob);
            }
        }
        let runner = builder.build().unwrap_or_else(|_| GlobSet::empty());
        let mut named = BTreeSet::new();
        if let Some(program) = argv.first().map(AsRef::as_ref) {
            // `./run_tests.sh` or `scripts/test` is the workspace's own file; `pytest` is
            // looked up on PATH.
            if program.contains('/')
                && let Some(path) = crate::test_code::normalized(program)
            {
                named.insert(path);
            }
            let base = program.rsplit('/').next().unwrap_or(program);
            for (recipe_of, files) in RECIPES {
                if base == *recipe_of {
                    named.extend(files.iter().map(|file| (*file).to_owned()));
                }
            }
        }
        VerificationInputs {
            tests,
            runner,
            named,
        }
    }

    /// The inputs of the conventions and the user's `globs`, for `argv`.
    ///
    /// # Errors
    ///
    /// [`TestCodeError`] for a glob that does not parse.
    pub fn with_globs<S: AsRef<str>>(
        globs: &[&str],
        argv: &[S],
    ) -> Result<VerificationInputs, TestCodeError> {
        Ok(VerificationInputs::new(TestCode::new(globs)?, argv))
    }

    /// The verification inputs among `changes`, the run's changes since its pre-run state in
    /// the workspace at `root`. With `tests_may_change` (`--allow-test-edits`), only what the
    /// runner loads its own code from counts.
    pub fn judge(&self, root: &Path, changes: &[Change], tests_may_change: bool) -> Vec<Finding> {
        let mut found = Vec::new();
        for change in changes {
            let finding = self
                .runner_input(root, change)
                .or_else(|| self.test_input(change));
            if let Some(finding) = finding
                && !(tests_may_change && finding.role == Role::Tests)
            {
                found.push(finding);
            }
        }
        found
    }

    /// The finding when `change` touches what the runner loads its own code from.
    fn runner_input(&self, root: &Path, change: &Change) -> Option<Finding> {
        for path in paths_of(change) {
            if self.runner.is_match(path) {
                return Some(Finding {
                    path: path.to_owned(),
                    role: Role::Runner,
                    what: format!("{} (the test runner loads it)", described(change, path)),
                });
            }
        }
        let new = matches!(
            change.kind,
            ChangeKind::Added | ChangeKind::Renamed | ChangeKind::TypeChanged
        );
        if new && let Some(shadowed) = shadowed_python_module(root, &change.path) {
            return Some(Finding {
                path: change.path.clone(),
                role: Role::Runner,
                what: format!("{} shadows {shadowed}", change.path),
            });
        }
        None
    }

    /// The finding when `change` touches a test, a snapshot, a fixture or the test
    /// configuration.
    fn test_input(&self, change: &Change) -> Option<Finding> {
        for path in paths_of(change) {
            if self.tests.is_test_file(path) || self.named.contains(path) {
                return Some(Finding {
                    path: path.to_owned(),
                    role: Role::Tests,
                    what: described(change, path),
                });
            }
        }
        let (_, lines) = PARTLY_TESTS
            .iter()
            .find(|(files, _)| files.is_match(&change.path))?;
        let line = changed_lines(&change.patch).find(|line| lines.is_match(line))?;
        Some(Finding {
            path: change.path.clone(),
            role: Role::Tests,
            what: format!(
                "{}'s test settings changed ({:?})",
                change.path,
                line.trim()
            ),
        })
    }
}

/// The paths a change touches: its path, and the one it was renamed from.
fn paths_of(change: &Change) -> impl Iterator<Item = &str> {
    std::iter::once(change.path.as_str()).chain(change.old_path.as_deref())
}

/// `tests.py changed`, `was deleted`, `was created`, `was renamed to …`.
fn described(change: &Change, path: &str) -> String {
    match change.kind {
        ChangeKind::Added => format!("{path} was created"),
        ChangeKind::Deleted => format!("{path} was deleted"),
        ChangeKind::Modified => format!("{path} changed"),
        ChangeKind::TypeChanged => format!("{path} changed kind (a file became a link, or back)"),
        ChangeKind::Renamed => match &change.old_path {
            Some(old) if old == path => format!("{old} was renamed to {}", change.path),
            Some(old) => format!("{path} was renamed from {old}"),
            None => format!("{path} changed"),
        },
    }
}

/// The added and removed lines of a unified diff, without its headers.
fn changed_lines(patch: &str) -> impl Iterator<Item = &str> {
    patch
        .lines()
        .skip_while(|line| !line.starts_with("@@"))
        .filter(|line| !line.starts_with("@@"))
        .filter_map(|line| line.strip_prefix('+').or_else(|| line.strip_prefix('-')))
}

/// When `path` (new in the run) is a Python module or package that takes the place of one
/// the verification loads from elsewhere: which (`the standard library's json`, `calc.py`).
/// Python finds a module in the first `sys.path` entry that has it, and the verification's
/// entries come first: the working directory, unittest's top-level directory, pytest's
/// inserted test directories. In one directory a package `X/` and an extension module
/// `X.*.so` come before `X.py`, so either takes the place of the code under test.
fn shadowed_python_module(root: &Path, path: &str) -> Option<String> {
    let parts: Vec<&str> = path.split('/').collect();
    let (file, dirs) = parts.split_last()?;
    // `X.py`, `X.pyc`, `X.cpython-311-x86_64-linux-gnu.so`: module X in `dirs`. A package's
    // `X/__init__.py`: module X in the directory above.
    let stem = python_module_stem(file)?;
    let (module, directory) = if stem == "__init__" {
        let (package, above) = dirs.split_last()?;
        ((*package).to_owned(), above)
    } else {
        (stem.to_owned(), dirs)
    };
    if !on_sys_path(root, directory) {
        return None;
    }
    let beside: String = directory
        .iter()
        .map(|part| format!("{part}/"))
        .chain([format!("{module}.py")])
        .collect();
    let takes_precedence = stem == "__init__" || file.ends_with(".so") || file.ends_with(".pyd");
    if takes_precedence && root.join(&beside).is_file() {
        return Some(beside);
    }
    let whose = python_modules().whose(&module)?;
    Some(format!("{whose} {module}"))
}

/// Whether the directory `parts` (relative to `root`) is one the verification may put on
/// `sys.path`: the root, or a test directory or `src/` or a directory holding test files,
/// when it is not a package (pytest's "rootdir-based" insertion adds the first directory up
/// from a test file that has no `__init__.py`).
fn on_sys_path(root: &Path, parts: &[&str]) -> bool {
    let Some(last) = parts.last() else {
        return true;
    };
    let directory = root.join(parts.join("/"));
    if directory.join("__init__.py").exists() {
        return false;
    }
    if matches!(*last, "tests" | "test" | "src" | "testing") {
        return true;
    }
    std::fs::read_dir(&directory).is_ok_and(|entries| {
        entries.flatten().any(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".py")
                && (name.starts_with("test") || name.ends_with("_test.py") || name == "conftest.py")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, kind: ChangeKind) -> Change {
        Change::new(path.to_owned(), None, kind, String::new())
    }

    fn judged(
        argv: &[&str],
        root: &Path,
        changes: &[Change],
        tests_may_change: bool,
    ) -> Vec<String> {
        VerificationInputs::new(TestCode::conventional(), argv)
            .judge(root, changes, tests_may_change)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// Each whole-file rule, by the runner whose discovery rule it follows, and files that
    /// are code.
    #[test]
    fn every_runners_test_files_are_inputs_and_code_is_not() {
        let root = Path::new("/nonexistent");
        let inputs = [
            "tests.py",
            "app/tests.py",
            "testing_utils.py",
            "pkg/calc_test.py",
            "conftest.py",
            "pytest.ini",
            ".pytest.ini",
            "tox.ini",
            "setup.cfg",
            "sum.test.js",
            "src/a.spec.ts",
            "sum-test.mjs",
            "sum_test.cjs",
            "test-sum.js",
            "test.js",
            "__tests__/a.js",
            "jest.config.js",
            "vitest.config.ts",
            "vite.config.mjs",
            ".mocharc.yml",
            "babel.config.js",
            ".babelrc",
            "tests/it.rs",
            "benches/b.rs",
            "math_test.go",
            "testdata/in.txt",
            "t.bats",
            "test_x.sh",
            "x_test.sh",
            "test/helper.bash",
            "__snapshots__/a.snap",
            "src/snapshots/x.snap",
            "out.golden",
            "golden/a.txt",
            "fixtures/a.json",
        ];
        for path in inputs {
            let found = judged(
                &["true"],
                root,
                &[change(path, ChangeKind::Modified)],
                false,
            );
            assert_eq!(found, [format!("{path} changed")], "{path}");
            // The tests may change with --allow-test-edits.
            let found = judged(&["true"], root, &[change(path, ChangeKind::Modified)], true);
            assert!(found.is_empty(), "{path}: {found:?}");
        }
        for path in [
            "calc.py",
            "contest.py",
            "src/lib.rs",
            "latest.js",
            "Cargo.lock",
            "README.md",
        ] {
            let found = judged(
                &["true"],
                root,
                &[change(path, ChangeKind::Modified)],
                false,
            );
            assert!(found.is_empty(), "{path}: {found:?}");
        }
    }

    #[test]
    fn what_the_runner_loads_its_code_from_counts_even_when_tests_may_change() {
        let root = Path::new("/nonexistent");
        for path in [
            "sitecustomize.py",
            "lib/usercustomize.py",
            "x.pth",
            "node_modules/jest/index.js",
            ".pnp.cjs",
            ".cargo/config.toml",
            "sub/.cargo/config",
            "rust-toolchain.toml",
            "rust-toolchain",
            "go.mod",
            "go.work",
            "vendor/a/b.go",
        ] {
            let found = judged(&["true"], root, &[change(path, ChangeKind::Added)], true);
            assert_eq!(
                found,
                [format!("{path} was created (the test runner loads it)")],
                "{path}"
            );
        }
    }

    #[test]
    fn how_a_test_changed_is_said() {
        let root = Path::new("/nonexistent");
        let renamed = Change::new(
            "kept.txt".to_owned(),
            Some("test_calc.py".to_owned()),
            ChangeKind::Renamed,
            String::new(),
        );
        let into = Change::new(
            "test_new.py".to_owned(),
            Some("notes.txt".to_owned()),
            ChangeKind::Renamed,
            String::new(),
        );
        let found = judged(
            &["true"],
            root,
            &[
                renamed,
                into,
                change("test_a.py", ChangeKind::Deleted),
                change("test_b.py", ChangeKind::Added),
                change("test_c.py", ChangeKind::TypeChanged),
            ],
            false,
        );
        assert_eq!(
            found,
            [
                "test_calc.py was renamed to kept.txt",
                "test_new.py was renamed from notes.txt",
                "test_a.py was deleted",
                "test_b.py was created",
                "test_c.py changed kind (a file became a link, or back)",
            ]
        );
    }

    #[test]
    fn the_program_the_verification_names_and_its_recipes_are_inputs() {
        let root = Path::new("/nonexistent");
        let cases: &[(&[&str], &str, bool)] = &[
            (&["./run_tests.sh"], "run_tests.sh", true),
            (&["scripts/ci"], "scripts/ci", true),
            (&["make", "check"], "Makefile", true),
            (&["/usr/bin/make", "check"], "GNUmakefile", true),
            (&["just", "test"], "justfile", true),
            (&["nox"], "noxfile.py", true),
            (&["rake"], "Rakefile", true),
            (&["sh", "test.sh"], "test.sh", true),
            // A program on PATH is not the workspace's file; a make recipe is not cargo's.
            (&["pytest"], "pytest", false),
            (&["cargo", "test"], "Makefile", false),
            (&["python3", "main.py"], "main.py", false),
        ];
        for (argv, path, input) in cases {
            let found = judged(argv, root, &[change(path, ChangeKind::Modified)], false);
            assert_eq!(
                found.len(),
                usize::from(*input),
                "{argv:?} {path}: {found:?}"
            );
        }
    }

    #[test]
    fn a_shared_files_test_settings_count_and_its_other_lines_do_not() {
        let root = Path::new("/nonexistent");
        let patch = |path: &str, lines: &str| {
            Change::new(
                path.to_owned(),
                None,
                ChangeKind::Modified,
                format!(
                    "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,2 +1,2 @@\n context\n{lines}\n"
                ),
            )
        };
        let counted = [
            patch("pyproject.toml", "+addopts = \"-k nothing\""),
            patch("pyproject.toml", "+[tool.pytest.ini_options]"),
            patch("sub/pyproject.toml", "-testpaths = [\"tests\"]"),
            patch("pyproject.toml", "+pythonpath = [\"fake\"]"),
            patch("package.json", "-    \"test\": \"jest\","),
            patch("package.json", "+    \"jest\": \"file:./fake\","),
            patch("package.json", "+  \"scripts\": {},"),
            patch("Cargo.toml", "+test = false"),
            patch("Cargo.toml", "+harness = false"),
            patch("Cargo.toml", "+[[test]]"),
            patch("Cargo.toml", "+[patch.crates-io]"),
            patch("Cargo.toml", "+autotests = false"),
        ];
        for change in &counted {
            let found = judged(&["true"], root, std::slice::from_ref(change), false);
            assert_eq!(found.len(), 1, "{}: {found:?}", change.patch);
            assert!(found[0].contains("'s test settings changed"), "{found:?}");
        }
        let code = [
            patch("pyproject.toml", "+dependencies = [\"attrs>=22\"]"),
            patch("package.json", "+  \"description\": \"adds\","),
            patch("Cargo.toml", "+libc = \"0.3\""),
            patch("Cargo.toml", "+version = \"0.2.0\""),
            // The headers name the file, not a setting.
            patch("pyproject.toml", "+name = \"x\""),
            patch("pytest_tools/pyproject.toml", "+name = \"x\""),
        ];
        for change in &code {
            let found = judged(&["true"], root, std::slice::from_ref(change), false);
            assert!(found.is_empty(), "{}: {found:?}", change.patch);
        }
    }

    #[test]
    fn a_new_python_module_on_the_verifications_path_shadows_what_it_is_named_after() {
        let dir = tempfile::tempdir().expect("a directory");
        let root = dir.path();
        std::fs::write(root.join("calc.py"), "").expect("write");
        std::fs::create_dir_all(root.join("pkg")).expect("mkdir");
        std::fs::write(root.join("pkg/__init__.py"), "").expect("write");
        std::fs::create_dir_all(root.join("checks")).expect("mkdir");
        std::fs::write(root.join("checks/test_a.py"), "").expect("write");
        std::fs::create_dir_all(root.join("docs")).expect("mkdir");
        // A directory of code, one with a conftest.py, one with a `_test.py`.
        for (dir, file) in [
            ("lib", "helpers.py"),
            ("conf", "conftest.py"),
            ("it", "calc_test.py"),
        ] {
            std::fs::create_dir_all(root.join(dir)).expect("mkdir");
            std::fs::write(root.join(dir).join(file), "").expect("write");
        }
        let cases: &[(&str, Option<&str>)] = &[
            (
                "unittest/__init__.py",
                Some("the standard library's unittest"),
            ),
            ("json.py", Some("the standard library's json")),
            ("os.pyc", Some("the standard library's os")),
            ("pytest.py", Some("the test runner's pytest")),
            ("_pytest/__init__.py", Some("the test runner's _pytest")),
            ("src/json.py", Some("the standard library's json")),
            ("tests/json.py", Some("the standard library's json")),
            ("checks/json.py", Some("the standard library's json")),
            ("calc/__init__.py", Some("calc.py")),
            ("calc.cpython-311-x86_64-linux-gnu.so", Some("calc.py")),
            ("conf/json.py", Some("the standard library's json")),
            ("it/json.py", Some("the standard library's json")),
            // In a package, a module is the package's: `pkg.json`, not `json`.
            ("pkg/json.py", None),
            // A directory of code is on no path the verification makes.
            ("lib/json.py", None),
            // Not on the path, not a module, not a name anything loads.
            ("docs/json.py", None),
            ("json.txt", None),
            ("mycalc_helpers.py", None),
            // A plain module beside calc.py loses to it.
            ("calc.pyc", None),
        ];
        for (path, shadowed) in cases {
            let found = judged(&["true"], root, &[change(path, ChangeKind::Added)], true);
            let expected: Vec<String> = shadowed
                .iter()
                .map(|what| format!("{path} shadows {what}"))
                .collect();
            assert_eq!(found, expected, "{path}");
        }
        // Only a new module shadows: one the repository had is the user's.
        let found = judged(
            &["true"],
            root,
            &[change("json.py", ChangeKind::Modified)],
            true,
        );
        assert!(found.is_empty(), "{found:?}");
    }
}
