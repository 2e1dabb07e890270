//! `cargo xtask structure`: the structure targets of issue #46, measured over the whole
//! workspace (every crate under `crates/`, and xtask).
//!
//! 1. Production lines per crate: the lines of each file under `src/` before its first
//!    `#[cfg(test)]` line, summed; `harness-cli`'s total against [`CLI_LINES`].
//! 2. Every production file over [`FILE_LINES`] lines.
//! 3. Import circles inside each crate, between its top-level modules (`src/a.rs`,
//!    `src/a/mod.rs` and every file under `src/a/` are the module `a`): an edge `a → b` for
//!    each path `crate::b…` (in a `use`, grouped ones included, or in code), each `super::`
//!    path that leaves `a` for `b`, and each `crate::Name` that the crate root re-exports
//!    from `b`. Each set of modules that reach each other is a circle, unless it is a
//!    builder and what it builds ([`BUILDER_PAIRS`]).
//! 4. Every function in `crates/harness-cli/src/commands/**` over [`FUNCTION_LINES`] lines,
//!    counted from the line of its `fn` to the line of its closing brace.
//! 5. The crate roots as a map: every file a crate root's `//!` names (a backticked
//!    `name.rs` or `dir/name.rs`) exists under its `src/`, and the four things a newcomer
//!    looks for first ([`FIRST_FINDS`]: where a path is confined, a process tree is killed,
//!    a snapshot is stored, the model is called) are each said in their crate's root, with
//!    the file right after.
//!
//! Comments and the contents of string and character literals are blanked before anything
//! is looked for, so a path in a doc comment or a brace in a string counts for nothing.
//! The lexer is simple: it knows `//`, nested `/* */`, `"…"`, `r#"…"#` and `'x'` apart from
//! a lifetime, which is enough for this workspace's code; code after a test module's
//! `#[cfg(test)]` is not production and is not read.
//!
//! `--check` exits 1 when a target is missed. It reads the sources only: it builds
//! nothing and runs no `cargo`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::check_args::CheckArgs;

use self::circles::{Circle, Graph, is_builder_pair};
use self::lexer::{blank_comments_and_strings, functions};
use self::roots::{named_files, names_a_file, root_docs, says_where};

mod circles;
mod lexer;
mod roots;

const USAGE: &str = "\
usage: cargo xtask structure [--check] [--root DIR]

Measures the structure targets of issue #46 over every crate under crates/ and xtask:
production lines per crate (src/ before each file's first #[cfg(test)]), harness-cli's
total against 3000, production files over 800 lines, import circles between the
top-level modules of a crate (builder pairs aside), and functions over 60 lines in
crates/harness-cli/src/commands.

  --check      exit 1 when a target is missed
  --root DIR   the workspace to measure (default: this workspace)
  -h, --help   print this message
";

/// The most production lines `harness-cli` may have.
const CLI_LINES: usize = 3_000;

/// The most production lines of one file.
const FILE_LINES: usize = 800;

/// The most lines of one function in `harness-cli`'s commands.
const FUNCTION_LINES: usize = 60;

/// Where the functions [`FUNCTION_LINES`] bounds live.
const COMMANDS: &str = "crates/harness-cli/src/commands";

/// A builder and what it builds, by crate: each uses the other (the builder makes the
/// value, the value hands out its builder), and that circle is allowed.
const BUILDER_PAIRS: &[(&str, &str, &str)] = &[
    ("harness-sandbox", "builder", "workspace"),
    ("harness-tools", "builder", "toolbox"),
];

/// What a newcomer looks for first, and the crate whose root must say where it is: the
/// phrase (matched without case, across line breaks), followed within [`FIND_REACH`]
/// characters by a file it names that exists.
const FIRST_FINDS: &[(&str, &str)] = &[
    ("harness-sandbox", "a path is confined"),
    ("harness-exec", "a process tree is killed"),
    ("harness-undo", "where a snapshot is stored"),
    ("harness-agent", "where the model is called"),
];

/// How far after its phrase a first find's file may be named: a table row or a bullet.
const FIND_REACH: usize = 300;

/// Runs `cargo xtask structure [--check] [--root DIR]`.
pub(crate) fn run(args: &[String]) -> Result<ExitCode> {
    let (check, root) = match CheckArgs::parse(args, USAGE)? {
        CheckArgs::Run { check, root } => (check, root),
        CheckArgs::Exit(code) => return Ok(code),
    };
    let report = Report::measure(&root)?;
    print!("{}", report.render());
    let missed = report.missed();
    if missed == 0 {
        println!("structure: every target is met");
        return Ok(ExitCode::SUCCESS);
    }
    println!("structure: {missed} target(s) missed");
    Ok(if check {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// What the task measured.
#[derive(Debug, Default)]
struct Report {
    /// Production lines by crate name.
    crate_lines: BTreeMap<String, usize>,
    /// Production files over [`FILE_LINES`] lines, with their lines, by path from the root.
    long_files: Vec<(usize, String)>,
    /// The import circles of each crate, builder pairs left out.
    circles: Vec<(String, Circle)>,
    /// Functions over [`FUNCTION_LINES`] lines in the commands: lines, file, name.
    long_functions: Vec<(usize, String, String)>,
    /// Files a crate root names that do not exist: crate, file.
    missing_files: Vec<(String, String)>,
    /// [`FIRST_FINDS`] a crate root does not say where to find: crate, phrase.
    missing_finds: Vec<(String, String)>,
}

impl Report {
    /// Reads every crate of the workspace at `root`.
    fn measure(root: &Path) -> Result<Report> {
        let mut report = Report::default();
        for (name, dir) in crates(root)? {
            let src = dir.join("src");
            let mut files = Vec::new();
            let mut root_code = String::new();
            for path in rust_files(&src)? {
                let text = fs::read_to_string(&path)
                    .with_context(|| format!("reading {}", path.display()))?;
                let production = production(&text);
                let lines = production.lines().count();
                *report.crate_lines.entry(name.clone()).or_default() += lines;
                let shown = shown_path(root, &path);
                if lines > FILE_LINES {
                    report.long_files.push((lines, shown.clone()));
                }
                if path.starts_with(root.join(COMMANDS)) {
                    let code = blank_comments_and_strings(production);
                    for function in functions(&code) {
                        if function.lines > FUNCTION_LINES {
                            report.long_functions.push((
                                function.lines,
                                shown.clone(),
                                function.name,
                            ));
                        }
                    }
                }
                match module_path(&src, &path) {
                    Some(module) => files.push((module, blank_comments_and_strings(production))),
                    None if path.parent() == Some(src.as_path()) => {
                        root_code.push_str(&blank_comments_and_strings(production));
                    }
                    None => {}
                }
            }
            report.read_root_docs(&name, &src)?;
            let graph = Graph::of(&root_code, &files);
            for circle in graph.circles() {
                if !is_builder_pair(&name, &circle) {
                    report.circles.push((name.clone(), circle));
                }
            }
        }
        report.long_files.sort_by(|a, b| b.cmp(a));
        report.long_functions.sort_by(|a, b| b.cmp(a));
        Ok(report)
    }

    /// Checks the `//!` docs of the root of crate `name` (`src/lib.rs`, else `src/main.rs`):
    /// the files they name, and the first finds that are this crate's.
    fn read_root_docs(&mut self, name: &str, src: &Path) -> Result<()> {
        let Some(root_file) = ["lib.rs", "main.rs"]
            .iter()
            .map(|file| src.join(file))
            .find(|path| path.is_file())
        else {
            return Ok(());
        };
        let text = fs::read_to_string(&root_file)
            .with_context(|| format!("reading {}", root_file.display()))?;
        let docs = root_docs(&text);
        for file in named_files(&docs) {
            if !names_a_file(src, &file)? {
                self.missing_files.push((name.to_owned(), file));
            }
        }
        for (krate, phrase) in FIRST_FINDS.iter().filter(|(krate, _)| *krate == name) {
            if !says_where(&docs, phrase, src) {
                self.missing_finds
                    .push(((*krate).to_owned(), (*phrase).to_owned()));
            }
        }
        Ok(())
    }

    /// How many targets are missed: harness-cli's lines, long files, circles, long
    /// functions, the crate roots as a map.
    fn missed(&self) -> usize {
        let cli = self.crate_lines.get("harness-cli").copied().unwrap_or(0);
        [
            cli > CLI_LINES,
            !self.long_files.is_empty(),
            !self.circles.is_empty(),
            !self.long_functions.is_empty(),
            !self.missing_files.is_empty() || !self.missing_finds.is_empty(),
        ]
        .into_iter()
        .filter(|missed| *missed)
        .count()
    }

    /// The report as the task prints it.
    fn render(&self) -> String {
        let mut text = String::from(
            "production lines per crate (src/, each file before its first #[cfg(test)])\n",
        );
        for (name, lines) in &self.crate_lines {
            let _ = write!(text, "  {name:<22} {lines:>6}");
            if name == "harness-cli" {
                let verdict = if *lines > CLI_LINES { "MISSED" } else { "met" };
                let _ = write!(text, "   target <= {CLI_LINES}: {verdict}");
            }
            text.push('\n');
        }
        let total: usize = self.crate_lines.values().sum();
        let _ = writeln!(text, "  {:<22} {total:>6}", "total");
        let _ = writeln!(
            text,
            "\nproduction files over {FILE_LINES} lines (target: none): {}",
            self.long_files.len()
        );
        for (lines, path) in &self.long_files {
            let _ = writeln!(text, "  {lines:>6} {path}");
        }
        let pairs: Vec<String> = BUILDER_PAIRS
            .iter()
            .map(|(krate, builder, built)| format!("{krate} {builder} <-> {built}"))
            .collect();
        let _ = writeln!(
            text,
            "\nimport circles inside crates (target: none; allowed: {}): {}",
            pairs.join(", "),
            self.circles.len()
        );
        for (krate, circle) in &self.circles {
            let _ = writeln!(text, "  {krate}: {}", circle.render());
        }
        let _ = writeln!(
            text,
            "\nfunctions over {FUNCTION_LINES} lines in {COMMANDS} (target: none): {}",
            self.long_functions.len()
        );
        for (lines, path, name) in &self.long_functions {
            let _ = writeln!(text, "  {lines:>6} {path} {name}");
        }
        let _ = writeln!(
            text,
            "\ncrate roots as a map (target: every file they name exists; each says where {}): {} missing",
            FIRST_FINDS
                .iter()
                .map(|(_, phrase)| *phrase)
                .collect::<Vec<_>>()
                .join(", "),
            self.missing_files.len() + self.missing_finds.len()
        );
        for (krate, file) in &self.missing_files {
            let _ = writeln!(text, "  {krate}: names {file}, which is not in its src/");
        }
        for (krate, phrase) in &self.missing_finds {
            let _ = writeln!(
                text,
                "  {krate}: does not say {phrase:?} with a file of its own"
            );
        }
        text.push('\n');
        text
    }
}

/// The crates of the workspace at `root`: each directory under `crates/` with a
/// `Cargo.toml`, and `xtask`, by name (the directory's), in order.
fn crates(root: &Path) -> Result<Vec<(String, PathBuf)>> {
    let dir = root.join("crates");
    let mut found = Vec::new();
    for entry in fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.join("Cargo.toml").is_file() {
            found.push(path);
        }
    }
    found.push(root.join("xtask"));
    found.sort();
    Ok(found
        .into_iter()
        .filter(|path| path.join("src").is_dir())
        .map(|path| {
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            (name, path)
        })
        .collect())
}

/// Every `.rs` file under `dir`, in order.
pub(super) fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// `path` relative to `root`, with `/`, as the report shows it.
fn shown_path(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The production part of a source file: every line before its first `#[cfg(test)]` line.
fn production(text: &str) -> &str {
    let mut end = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        end += line.len();
    }
    &text[..end]
}

/// The module path of the file `path` of the crate whose sources are `src`: `["a", "b"]`
/// for `src/a/b.rs`, `["a"]` for `src/a.rs` and `src/a/mod.rs`; `None` for a crate root
/// (`lib.rs`, `main.rs`, `bin/*.rs`), which is no module of its own.
fn module_path(src: &Path, path: &Path) -> Option<Vec<String>> {
    let relative = path.strip_prefix(src).ok()?.with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.first().is_some_and(|first| first == "bin") {
        return None;
    }
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    match parts.as_slice() {
        [] => None,
        [only] if only == "lib" || only == "main" => None,
        _ => Some(parts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The roots of this workspace's crates are the map a newcomer reads: this holds them to
    /// it (the other targets are reported by `cargo xtask structure`).
    #[test]
    fn the_crate_roots_name_files_that_exist_and_say_where_the_first_finds_are() {
        let report = Report::measure(&crate::eval::workspace_root()).expect("the workspace");
        assert!(
            report.missing_files.is_empty() && report.missing_finds.is_empty(),
            "{}",
            report.render()
        );
    }

    #[test]
    fn production_lines_end_at_the_first_test_module() {
        let text = "//! A module.\n\nfn f() {}\n\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n";
        assert_eq!(production(text).lines().count(), 4);
        assert_eq!(production("fn f() {}\n").lines().count(), 1);
        assert_eq!(production("    #[cfg(test)]\nmod t {}\n"), "");
    }

    #[test]
    fn module_paths_follow_the_file_layout() {
        let src = Path::new("/w/src");
        let path = |file: &str| module_path(src, &src.join(file));
        assert_eq!(path("lib.rs"), None);
        assert_eq!(path("main.rs"), None);
        assert_eq!(path("bin/tool.rs"), None);
        assert_eq!(path("a.rs"), Some(vec!["a".to_owned()]));
        assert_eq!(path("a/mod.rs"), Some(vec!["a".to_owned()]));
        assert_eq!(path("a/b.rs"), Some(vec!["a".to_owned(), "b".to_owned()]));
    }
}
