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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

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
    let mut check = false;
    let mut root = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--check" => check = true,
            "--root" => {
                let dir = args.next().context("--root needs a directory")?;
                root = Some(PathBuf::from(dir));
            }
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            other => {
                eprint!("error: unknown argument {other:?}\n\n{USAGE}");
                return Ok(ExitCode::from(2));
            }
        }
    }
    let root = root.unwrap_or_else(crate::eval::workspace_root);
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

/// The `//!` lines of a crate root, without their markers, joined by newlines.
fn root_docs(text: &str) -> String {
    text.lines()
        .filter_map(|line| line.trim_start().strip_prefix("//!"))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The source files `docs` names in backticks: `name.rs` or `dir/name.rs`, relative to
/// `src/`. A path from elsewhere (`src/main.rs` as an example of a model's path, or
/// `../tests/x.rs`) is not the crate's map and is left out.
fn named_files(docs: &str) -> Vec<String> {
    let mut files = Vec::new();
    for (i, span) in docs.split('`').enumerate() {
        // The odd pieces are inside backticks.
        let is_name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.');
        if i % 2 == 1
            && span.ends_with(".rs")
            && span.chars().all(is_name)
            && !span.starts_with("src/")
            && !span.contains("..")
            && !files.iter().any(|file| file == span)
        {
            files.push(span.to_owned());
        }
    }
    files
}

/// Whether `docs` says `phrase` and, within [`FIND_REACH`] characters after it, names a file
/// that exists under `src` ([`names_a_file`]).
fn says_where(docs: &str, phrase: &str, src: &Path) -> bool {
    let flat = docs.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = flat.to_lowercase();
    lower.match_indices(&phrase.to_lowercase()).any(|(at, _)| {
        let after: String = flat[at..].chars().take(phrase.len() + FIND_REACH).collect();
        named_files(&after)
            .iter()
            .any(|file| names_a_file(src, file).unwrap_or(false))
    })
}

/// Whether `file` is a file under `src`: `src/file`, or a file whose path ends with it (a
/// root that says "`ignored/` (`list.rs` lists …)" names `ignored/list.rs`).
fn names_a_file(src: &Path, file: &str) -> Result<bool> {
    if src.join(file).is_file() {
        return Ok(true);
    }
    Ok(rust_files(src)?.iter().any(|path| {
        path.strip_prefix(src)
            .is_ok_and(|relative| relative.ends_with(file))
    }))
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
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
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

/// `text` with every comment and the contents of every string and character literal
/// replaced by spaces, line breaks kept: what is left is code, on the lines it was on.
fn blank_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(&chars, i) {
            // `r#"…"#` (or `br"…"`): no escapes; it ends at a quote and as many hashes.
            let open = chars[i..].iter().position(|&c| c == '"').unwrap_or(0) + 1;
            out.extend(chars[i..i + open].iter());
            i += open;
            while i < chars.len() {
                let closes =
                    chars[i] == '"' && (0..hashes).all(|n| chars.get(i + 1 + n) == Some(&'#'));
                if closes {
                    out.push('"');
                    out.extend(std::iter::repeat_n('#', hashes));
                    i += 1 + hashes;
                    break;
                }
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\''
            && let Some(len) = char_literal_len(&chars, i)
        {
            out.push('\'');
            out.extend(std::iter::repeat_n(' ', len - 2));
            out.push('\'');
            i += len;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The number of `#` of a raw string literal starting at `i` (`r"`, `r#"`, `br##"`), or
/// `None` when none starts there (an identifier that merely ends in `r` does not).
fn raw_string_start(chars: &[char], i: usize) -> Option<usize> {
    let previous = i.checked_sub(1).map(|at| chars[at]);
    if previous.is_some_and(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let mut at = i;
    if chars.get(at) == Some(&'b') {
        at += 1;
    }
    if chars.get(at) != Some(&'r') {
        return None;
    }
    at += 1;
    let hashes = chars[at..].iter().take_while(|&&c| c == '#').count();
    (chars.get(at + hashes) == Some(&'"')).then_some(hashes)
}

/// The length of the character literal starting at `i` (`'x'`, `'\n'`, `'\u{1F600}'`),
/// quotes included; `None` for a lifetime or a label (`'a`, `'outer:`).
fn char_literal_len(chars: &[char], i: usize) -> Option<usize> {
    match chars.get(i + 1)? {
        // The escaped character is never the closing quote (`'\''`).
        '\\' => {
            let close = chars.get(i + 3..)?.iter().position(|&c| c == '\'')?;
            Some(close + 4)
        }
        _ => (chars.get(i + 2) == Some(&'\'')).then_some(3),
    }
}

/// A function found in code, and how many lines it spans.
#[derive(Debug, PartialEq, Eq)]
struct Function {
    /// Its name.
    name: String,
    /// From the line of `fn` to the line of its closing brace, both counted.
    lines: usize,
}

/// Every function with a body in `code` (comments and strings blanked), nested ones too.
fn functions(code: &str) -> Vec<Function> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut line = 1;
    for (i, &c) in chars.iter().enumerate() {
        if c == '\n' {
            line += 1;
        }
        if c != 'f' || chars.get(i + 1) != Some(&'n') || !is_word_start(&chars, i) {
            continue;
        }
        // `fn` then space then a name: not `fn(` of a function pointer type.
        let after = chars.get(i + 2).copied();
        if !after.is_some_and(char::is_whitespace) {
            continue;
        }
        let name_start = (i + 2..chars.len()).find(|&at| !chars[at].is_whitespace());
        let Some(name_start) = name_start else {
            continue;
        };
        let name: String = chars[name_start..]
            .iter()
            .take_while(|c| c.is_alphanumeric() || **c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        if let Some(end_line) = body_end_line(&chars, name_start, line) {
            found.push(Function {
                name,
                lines: end_line - line + 1,
            });
        }
    }
    found
}

/// True if and only if a word starts at `i`: the character before is not part of one.
fn is_word_start(chars: &[char], i: usize) -> bool {
    let previous = i.checked_sub(1).map(|at| chars[at]);
    !previous.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// The line of the brace that closes the body of the function whose signature starts at
/// `start`, on line `line`; `None` for a declaration without a body (`fn f();`).
fn body_end_line(chars: &[char], start: usize, line: usize) -> Option<usize> {
    let mut line = line;
    let mut at = start;
    // The body opens at the first `{` outside the signature's parentheses and brackets.
    let mut nesting = 0i32;
    loop {
        match chars.get(at)? {
            '\n' => line += 1,
            '(' | '[' => nesting += 1,
            ')' | ']' => nesting -= 1,
            ';' if nesting == 0 => return None,
            '{' if nesting == 0 => break,
            _ => {}
        }
        at += 1;
    }
    let mut depth = 0usize;
    for &c in &chars[at..] {
        match c {
            '\n' => line += 1,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(line);
                }
            }
            _ => {}
        }
    }
    None
}

/// The module graph of one crate: which top-level module uses which.
#[derive(Debug, Default)]
struct Graph {
    /// Each top-level module with the modules it uses (itself left out).
    edges: BTreeMap<String, BTreeSet<String>>,
}

/// Modules that reach each other, and the edges between them.
#[derive(Debug, PartialEq, Eq)]
struct Circle {
    /// The modules, in order.
    modules: Vec<String>,
    /// Every edge between two of them.
    edges: Vec<(String, String)>,
}

impl Circle {
    /// `a ↔ b` for two modules, `a → b, b → c, c → a` for more.
    fn render(&self) -> String {
        if let [a, b] = self.modules.as_slice() {
            return format!("{a} <-> {b}");
        }
        let edges: Vec<String> = self
            .edges
            .iter()
            .map(|(from, to)| format!("{from} -> {to}"))
            .collect();
        format!("{} ({})", self.modules.join(", "), edges.join(", "))
    }
}

impl Graph {
    /// The graph of a crate: `root` is its root's code, `files` each module path with its
    /// code (comments and strings blanked, production part only). A name the root
    /// re-exports from a module (`pub use list::Entry`) leads to that module.
    fn of(root: &str, files: &[(Vec<String>, String)]) -> Graph {
        let modules: BTreeSet<String> = files.iter().map(|(path, _)| path[0].clone()).collect();
        let mut reexports: BTreeMap<String, String> = BTreeMap::new();
        for used in paths(root, |tokens, i| (tokens[i] == "use").then_some(i + 1)) {
            let mut segments = used
                .path
                .iter()
                .skip_while(|s| *s == "self" || *s == "crate");
            if let Some(module) = segments.next()
                && modules.contains(module)
                && segments.next().is_some()
                && used.binding != "*"
            {
                reexports.insert(used.binding.clone(), module.clone());
            }
        }
        let mut graph = Graph::default();
        for (path, code) in files {
            for used in paths(code, starts_at_crate_or_super) {
                let target = resolve(path, &used.path)
                    .filter(|target| modules.contains(target))
                    .or_else(|| reexported(&used.path, &reexports));
                if let Some(target) = target.filter(|target| *target != path[0]) {
                    graph
                        .edges
                        .entry(path[0].clone())
                        .or_default()
                        .insert(target);
                }
            }
        }
        graph
    }

    /// The sets of more than one module that reach each other, each with its edges.
    fn circles(&self) -> Vec<Circle> {
        let reach: BTreeMap<&String, BTreeSet<&String>> = self
            .edges
            .keys()
            .map(|from| (from, self.reachable(from)))
            .collect();
        let mut circles: Vec<Circle> = Vec::new();
        for (from, reached) in &reach {
            let modules: Vec<String> = reached
                .iter()
                .filter(|to| reach.get(*to).is_some_and(|back| back.contains(from)))
                .map(|module| (*module).clone())
                .collect();
            let known = circles.iter().any(|circle| circle.modules.contains(*from));
            if modules.len() < 2 || known {
                continue;
            }
            let edges = modules
                .iter()
                .flat_map(|from| self.edges[from].iter().map(move |to| (from, to)))
                .filter(|(_, to)| modules.contains(to))
                .map(|(from, to)| (from.clone(), to.clone()))
                .collect();
            circles.push(Circle { modules, edges });
        }
        circles
    }

    /// Every module reachable from `from` through one edge or more.
    fn reachable(&self, from: &String) -> BTreeSet<&String> {
        let mut reached = BTreeSet::new();
        let mut pending: Vec<&String> = self.edges.get(from).into_iter().flatten().collect();
        while let Some(module) = pending.pop() {
            if reached.insert(module) {
                pending.extend(self.edges.get(module).into_iter().flatten());
            }
        }
        reached
    }
}

/// The module `crate::Name` leads to when the crate root re-exports `Name` from it.
fn reexported(used: &[String], reexports: &BTreeMap<String, String>) -> Option<String> {
    match used {
        [first, name, ..] if first == "crate" => reexports.get(name).cloned(),
        _ => None,
    }
}

/// True if and only if `circle` of the crate `krate` is a builder and what it builds.
fn is_builder_pair(krate: &str, circle: &Circle) -> bool {
    BUILDER_PAIRS.iter().any(|(pair_crate, builder, built)| {
        let mut pair = [*builder, *built];
        pair.sort_unstable();
        *pair_crate == krate && circle.modules == pair
    })
}

/// The top-level module a path used in the module at `from` leads to: `crate::b::…` to
/// `b`, `super::…` from `a::x` to what follows in `a` (from `a` itself, to the crate's
/// module named next); `None` for any other path.
fn resolve(from: &[String], used: &[String]) -> Option<String> {
    match used.first()?.as_str() {
        "crate" => used.get(1).cloned(),
        "super" => {
            let supers = used
                .iter()
                .take_while(|segment| *segment == "super")
                .count();
            let base = from.len().checked_sub(supers)?;
            from[..base].iter().chain(&used[supers..]).next().cloned()
        }
        _ => None,
    }
}

/// A path a `use` brings in, and the name it binds.
#[derive(Debug, PartialEq, Eq)]
struct Used {
    /// Its segments, `crate` or `self` included.
    path: Vec<String>,
    /// The name it is known by: its last segment, or what follows `as`.
    binding: String,
}

/// Every path in `code` that starts where `start` says (given the tokens and an index, the
/// index of the path's first token, or `None`), groups expanded: `use crate::{a, b::{c,
/// d}}` is `crate::a`, `crate::b::c` and `crate::b::d`.
fn paths(code: &str, start: impl Fn(&[String], usize) -> Option<usize>) -> Vec<Used> {
    let tokens = tokens(code);
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match start(&tokens, i) {
            Some(first) => {
                let (paths, end) = path_tree(&tokens, first, &[]);
                found.extend(paths);
                i = end.max(i + 1);
            }
            None => i += 1,
        }
    }
    found
}

/// Where a path starting at `crate` or `super` begins (not `$crate`, nor a `super` of
/// `super::super`).
fn starts_at_crate_or_super(tokens: &[String], i: usize) -> Option<usize> {
    let begins = (tokens[i] == "crate" || tokens[i] == "super")
        && (i == 0 || (tokens[i - 1] != "::" && tokens[i - 1] != "$"));
    begins.then_some(i)
}

/// The paths of the path tree starting at token `i` (segments joined by `::`, `{…}`
/// groups, `as` renames, `*`), under `prefix`; and the token after it.
fn path_tree(tokens: &[String], mut i: usize, prefix: &[String]) -> (Vec<Used>, usize) {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(i).map(String::as_str) {
            Some("{") => {
                let mut found = Vec::new();
                i += 1;
                while let Some(token) = tokens.get(i) {
                    match token.as_str() {
                        "}" => return (found, i + 1),
                        "," => i += 1,
                        _ => {
                            let (paths, end) = path_tree(tokens, i, &path);
                            found.extend(paths);
                            i = end.max(i + 1);
                        }
                    }
                }
                return (found, i);
            }
            Some(token) if is_identifier(token) || token == "*" => {
                path.push(token.to_owned());
                i += 1;
                if tokens.get(i).map(String::as_str) == Some("::") {
                    i += 1;
                    continue;
                }
                let mut binding = token.to_owned();
                if tokens.get(i).map(String::as_str) == Some("as")
                    && let Some(alias) = tokens.get(i + 1)
                {
                    binding = alias.clone();
                    i += 2;
                }
                if binding == "self" {
                    path.pop();
                    binding = path.last().cloned().unwrap_or_default();
                }
                return (vec![Used { path, binding }], i);
            }
            _ => return (Vec::new(), i),
        }
    }
}

/// True if and only if `token` is an identifier (a keyword such as `crate` included).
fn is_identifier(token: &str) -> bool {
    token
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// The tokens of `code` this task reads: identifiers, `::`, and every other character
/// that is not whitespace, one by one.
fn tokens(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let word: String = chars[i..]
                .iter()
                .take_while(|c| c.is_alphanumeric() || **c == '_')
                .collect();
            i += word.chars().count();
            tokens.push(word);
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push("::".to_owned());
            i += 2;
        } else {
            if !c.is_whitespace() {
                tokens.push(c.to_string());
            }
            i += 1;
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(path: &str, code: &str) -> (Vec<String>, String) {
        let path = path.split("::").map(str::to_owned).collect();
        (path, blank_comments_and_strings(code))
    }

    #[test]
    fn a_crate_root_names_its_files_and_where_the_first_finds_are() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let src = dir.path();
        fs::create_dir_all(src.join("run")).expect("run/");
        for file in ["tree.rs", "run/ask.rs"] {
            fs::write(src.join(file), "").expect("a source file");
        }
        let docs = root_docs(
            "//! A model's path (`src/main.rs`, `../x.rs`) is no file of ours.\n\
             //! | a process tree is killed | `tree.rs` |\n\
             //! - Where the model is\n//!   called: under `run/` (`ask.rs`); `gone.rs`, `tree.rs`.\n\
             fn main() {}\n",
        );
        assert_eq!(named_files(&docs), ["tree.rs", "ask.rs", "gone.rs"]);
        let exists = |file: &str| names_a_file(src, file).expect("src is readable");
        assert!(exists("tree.rs") && exists("ask.rs") && exists("run/ask.rs"));
        assert!(!exists("gone.rs") && !exists("un/ask.rs.bak"));
        assert!(says_where(&docs, "a process tree is killed", src));
        assert!(says_where(&docs, "where the model is called", src));
        assert!(!says_where(&docs, "where a snapshot is stored", src));
        // Said, but with no file of the crate's after it.
        let vague = root_docs("//! Where a snapshot is stored: in the store (`gone.rs`).\n");
        assert!(!says_where(&vague, "where a snapshot is stored", src));
    }

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
    fn comments_and_strings_count_for_nothing() {
        let code = blank_comments_and_strings(
            "let a = \"crate::x }\"; // crate::y\n/* crate::z /* } */ */ let b = ['}', '\\'', '\\u{7d}'];\n\
             let c = r#\"crate::w \"}\"#; let d: &'static str = \"\\\"{\";\n",
        );
        assert!(!code.contains("crate"), "{code}");
        assert_eq!(code.matches('}').count(), 0, "{code}");
        assert_eq!(code.matches('{').count(), 0, "{code}");
        assert!(code.contains("'static"), "{code}");
        assert_eq!(code.lines().count(), 3);
    }

    #[test]
    fn a_function_is_counted_from_fn_to_its_closing_brace() {
        let code = blank_comments_and_strings(
            "fn short() {}\n\
             pub(crate) fn long(\n    a: u32,\n) -> Result<(), String> {\n    \
             let text = \"}\";\n    // }\n    if a > 0 {\n        return Ok(());\n    }\n    \
             Ok(())\n}\n\
             trait T {\n    fn declared(&self);\n    fn given(&self) -> fn(u32) -> u32 {\n        \
             |x| x\n    }\n}\n",
        );
        assert_eq!(
            functions(&code),
            [
                Function {
                    name: "short".into(),
                    lines: 1
                },
                Function {
                    name: "long".into(),
                    lines: 10
                },
                Function {
                    name: "given".into(),
                    lines: 3
                },
            ]
        );
    }

    #[test]
    fn a_two_module_cycle_is_a_circle_and_a_one_way_use_is_not() {
        let files = [
            module("error", "use crate::preflight::Unavailable;\n"),
            module(
                "preflight",
                "use crate::{runner::Runner, tier::{self, Tier}};\n\
                 pub(crate) fn f() -> crate::error::Error { todo!() }\n",
            ),
            module("runner", "use super::tier::Tier;\npub(super) fn run() {}\n"),
            module(
                "tier",
                "// use crate::error::Error;\nconst NAME: &str = \"crate::runner\";\n",
            ),
            module(
                "tier::names",
                "use super::Tier;\nuse super::super::limits::Limits;\n",
            ),
            module("limits", "use std::fmt;\n"),
        ];
        let graph = Graph::of("", &files);
        let edges = |from: &str| -> Vec<&str> {
            graph
                .edges
                .get(from)
                .into_iter()
                .flatten()
                .map(String::as_str)
                .collect()
        };
        assert_eq!(edges("preflight"), ["error", "runner", "tier"]);
        assert_eq!(edges("runner"), ["tier"]);
        assert_eq!(edges("tier"), ["limits"]);
        let circles = graph.circles();
        assert_eq!(
            circles,
            [Circle {
                modules: vec!["error".into(), "preflight".into()],
                edges: vec![
                    ("error".into(), "preflight".into()),
                    ("preflight".into(), "error".into()),
                ],
            }]
        );
        assert_eq!(circles[0].render(), "error <-> preflight");
    }

    #[test]
    fn a_name_the_root_re_exports_leads_to_its_module() {
        let root = blank_comments_and_strings(
            "mod limits;\nmod list;\npub use limits::{Limits as Caps};\npub use self::list::*;\n",
        );
        let files = [
            module("limits", "use crate::Caps as _;\nuse crate::list::Entry;\n"),
            module("list", "fn f(caps: &crate::Caps) {}\n"),
        ];
        assert!(Graph::of("", &files).circles().is_empty());
        let circles = Graph::of(&root, &files).circles();
        assert_eq!(circles.len(), 1);
        assert_eq!(circles[0].render(), "limits <-> list");
    }

    #[test]
    fn a_builder_pair_is_allowed_and_only_in_its_crate() {
        let files = [
            module("builder", "use crate::toolbox::Toolbox;\n"),
            module("toolbox", "use crate::builder::ToolboxBuilder;\n"),
        ];
        let circles = Graph::of("", &files).circles();
        assert_eq!(circles.len(), 1);
        assert!(is_builder_pair("harness-tools", &circles[0]));
        assert!(!is_builder_pair("harness-agent", &circles[0]));
        let three = [
            module("builder", "use crate::toolbox::Toolbox;\n"),
            module("toolbox", "use crate::list::list;\n"),
            module("list", "use crate::builder::Limits;\n"),
        ];
        let circles = Graph::of("", &three).circles();
        assert!(!is_builder_pair("harness-tools", &circles[0]));
        assert_eq!(
            circles[0].render(),
            "builder, list, toolbox (builder -> toolbox, list -> builder, toolbox -> list)"
        );
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
