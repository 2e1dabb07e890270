//! [`SymbolIndex`]: where the workspace's source files define their functions, methods,
//! classes and types, found by a small scanner per language.
//!
//! A model handed a failing test in a large repository must first find the code the test
//! calls; small local models do not search for it (issue #49: a 1.5B model answered three
//! attempts with invented versions of a function it never read). The index lets the
//! harness find it instead, as a repository map does: by name, with the file and the
//! lines.
//!
//! The scanners are regular expressions over lines whose strings and comments have been
//! blanked out, with indentation (Python) or braces (JavaScript, TypeScript, Rust, Go)
//! telling where each definition ends. They are not parsers: a definition they miss is
//! still there for `search_text`, and one they misplace is shown with its line numbers,
//! which the model can read on from. Tree-sitter would be exact, and would cost minutes of
//! build time on the machines this runs on.

mod braces;
mod python;

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use harness_sandbox::{Access, Workspace};

use crate::walk::{self, Kind as EntryKind};

/// The definitions of a workspace's source files, as the tools may read them.
///
/// Built by [`Toolbox::symbols`](crate::Toolbox::symbols): only files `list_dir` shows and
/// `read_file` may read are scanned (no hidden file, nothing the deny rules protect or the
/// ignore files leave out, no file with another hard link, no symbolic link followed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolIndex {
    /// Every definition found, file by file in path order, each file's in line order.
    definitions: Vec<Definition>,
    /// The files scanned, in path order, with their number of lines.
    files: Vec<(String, usize)>,
    /// Whether a bound stopped the scan before every source file was read.
    incomplete: bool,
}

/// One definition in a source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    /// Its name as written (`parse_line`, `UrlJoin`).
    pub name: String,
    /// What it defines.
    pub kind: DefinitionKind,
    /// The file, relative to the workspace root.
    pub path: String,
    /// Its first line, 1-based: the first decorator or attribute line where it has some.
    pub line: usize,
    /// Its last line, 1-based, as far as the scanner can tell.
    pub end_line: usize,
    /// The definition it is inside (a method's class or impl, a nested function's
    /// function), by name; `None` at the top level of its file.
    pub parent: Option<String>,
}

/// What a [`Definition`] defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DefinitionKind {
    /// A function, at the top level or nested in another.
    Function,
    /// A function inside a class, impl, trait or interface.
    Method,
    /// A class (Python, JavaScript, TypeScript).
    Class,
    /// A struct, enum, union, trait, interface or type alias.
    Type,
    /// A Rust `impl` block, named by its type.
    Impl,
    /// A Rust `mod` with a body.
    Module,
}

/// How much one index may read: a scan that reaches a bound stops there and keeps what it
/// found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SymbolLimits {
    /// The most files scanned. Default: 5,000.
    pub files: usize,
    /// Larger files are not scanned. Default: 2 MiB (a generated file, not code to read).
    pub file_bytes: u64,
    /// The most bytes scanned in all. Default: 64 MiB.
    pub total_bytes: u64,
    /// The longest the scan may take. Default: 3 s.
    pub time: Duration,
}

impl Default for SymbolLimits {
    fn default() -> SymbolLimits {
        SymbolLimits {
            files: 5_000,
            file_bytes: 2 * 1024 * 1024,
            total_bytes: 64 * 1024 * 1024,
            time: Duration::from_secs(3),
        }
    }
}

impl SymbolIndex {
    /// Every definition, file by file in path order, each file's in line order.
    pub fn definitions(&self) -> &[Definition] {
        &self.definitions
    }

    /// The source files scanned, in path order, each with its number of lines.
    pub fn files(&self) -> &[(String, usize)] {
        &self.files
    }

    /// True if and only if a bound of [`SymbolLimits`] stopped the scan before every
    /// source file was read.
    pub fn is_incomplete(&self) -> bool {
        self.incomplete
    }

    /// The number of lines of `path`, if it was scanned.
    pub fn lines_of(&self, path: &str) -> Option<usize> {
        self.files
            .iter()
            .find(|(file, _)| file == path)
            .map(|(_, lines)| *lines)
    }
}

/// Scans the source files of `workspace` (see [`SymbolIndex`]) within `limits`.
pub(crate) fn index(workspace: &Workspace, limits: SymbolLimits) -> SymbolIndex {
    let started = Instant::now();
    let mut index = SymbolIndex::default();
    let mut bytes_read = 0u64;
    let walked = walk::visit(workspace, ".", None, |entry, dir| {
        if entry.kind != EntryKind::File || is_hidden(&entry.relative) {
            return ControlFlow::Continue(());
        }
        let Some(language) = Language::of(&entry.relative) else {
            return ControlFlow::Continue(());
        };
        if index.files.len() >= limits.files
            || bytes_read >= limits.total_bytes
            || started.elapsed() >= limits.time
        {
            index.incomplete = true;
            return ControlFlow::Break(());
        }
        // The walk leaves out what the deny rules protect; asked again on the path, as
        // `read_file` asks, so the index never holds what the tools could not show.
        if workspace.check(&entry.relative, Access::Read).is_err() {
            return ControlFlow::Continue(());
        }
        let fits = dir.metadata(&entry.name).is_ok_and(|metadata| {
            metadata.len() <= limits.file_bytes && bytes_read + metadata.len() <= limits.total_bytes
        });
        // Through the directory's handle: no link followed, no file with another hard link.
        let Some(bytes) = fits.then(|| dir.read(&entry.name).ok()).flatten() else {
            return ControlFlow::Continue(());
        };
        bytes_read += bytes.len() as u64;
        if bytes[..bytes.len().min(8 * 1024)].contains(&0) {
            return ControlFlow::Continue(());
        }
        let text = String::from_utf8_lossy(&bytes);
        let mut found = language.scan(&text);
        assign_parents(&mut found);
        index
            .files
            .push((entry.relative.clone(), text.lines().count()));
        index
            .definitions
            .extend(found.into_iter().map(|found| Definition {
                name: found.name,
                kind: found.kind,
                path: entry.relative.clone(),
                line: found.line,
                end_line: found.end_line,
                parent: found.parent,
            }));
        ControlFlow::Continue(())
    });
    if walked.is_err() {
        index.incomplete = true;
    }
    index
}

/// A definition as a scanner finds it, before it knows its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Found {
    pub(super) name: String,
    pub(super) kind: DefinitionKind,
    /// 1-based, decorators included.
    pub(super) line: usize,
    /// 1-based.
    pub(super) end_line: usize,
    pub(super) parent: Option<String>,
}

/// The languages with a scanner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Language {
    Python,
    Braces(braces::Syntax),
}

impl Language {
    /// The language of a file, by its extension.
    fn of(path: &str) -> Option<Language> {
        let extension = path.rsplit_once('.')?.1;
        Some(match extension {
            "py" | "pyi" => Language::Python,
            "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => {
                Language::Braces(braces::Syntax::JavaScript)
            }
            "rs" => Language::Braces(braces::Syntax::Rust),
            "go" => Language::Braces(braces::Syntax::Go),
            _ => return None,
        })
    }

    fn scan(self, text: &str) -> Vec<Found> {
        match self {
            Language::Python => python::scan(text),
            Language::Braces(syntax) => braces::scan(text, syntax),
        }
    }
}

/// Sets each definition's parent to the innermost other definition whose lines hold its
/// own, and makes a function inside a class, impl, trait or type a method.
fn assign_parents(found: &mut [Found]) {
    found.sort_by_key(|found| (found.line, std::cmp::Reverse(found.end_line)));
    let mut open: Vec<usize> = Vec::new();
    for index in 0..found.len() {
        while let Some(&top) = open.last() {
            if found[top].end_line >= found[index].end_line && found[top].line <= found[index].line
            {
                break;
            }
            open.pop();
        }
        if let Some(&top) = open.last() {
            let (parent_name, parent_kind) = (found[top].name.clone(), found[top].kind);
            let this = &mut found[index];
            this.parent = Some(parent_name);
            let in_a_type = matches!(
                parent_kind,
                DefinitionKind::Class | DefinitionKind::Impl | DefinitionKind::Type
            );
            if this.kind == DefinitionKind::Function && in_a_type {
                this.kind = DefinitionKind::Method;
            }
        }
        open.push(index);
    }
}

fn is_hidden(path: &str) -> bool {
    path.split('/').any(|name| name.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(name: &str, kind: DefinitionKind, line: usize, end_line: usize) -> Found {
        Found {
            name: name.to_owned(),
            kind,
            line,
            end_line,
            parent: None,
        }
    }

    #[test]
    fn parents_are_the_innermost_enclosing_definitions() {
        let mut all = vec![
            found("method", DefinitionKind::Function, 2, 4),
            found("Class", DefinitionKind::Class, 1, 9),
            found("inner", DefinitionKind::Function, 3, 4),
            found("after", DefinitionKind::Function, 10, 12),
        ];
        assign_parents(&mut all);
        let parents: Vec<(&str, Option<&str>, DefinitionKind)> = all
            .iter()
            .map(|f| (f.name.as_str(), f.parent.as_deref(), f.kind))
            .collect();
        assert_eq!(
            parents,
            [
                ("Class", None, DefinitionKind::Class),
                ("method", Some("Class"), DefinitionKind::Method),
                ("inner", Some("method"), DefinitionKind::Function),
                ("after", None, DefinitionKind::Function),
            ]
        );
    }

    /// Issue #49: the index feeds the head start, which goes to the model before it says
    /// anything; it holds only what `list_dir` shows and `read_file` may read.
    #[test]
    fn only_files_the_tools_may_list_and_read_are_indexed() {
        let directory = tempfile::tempdir().expect("a temporary directory");
        let root = directory.path();
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("directories");
            std::fs::write(path, text).expect("written");
        };
        write(
            "pkg/utils.py",
            "def urljoin(base, url):\n    return base + url\n",
        );
        write("web/app.ts", "export function route() {}\n");
        write("secret/keys.py", "def denied_helper():\n    pass\n");
        write("local_settings.py", "def ignored_helper():\n    pass\n");
        write("build/out.js", "function ignored_output() {}\n");
        write(".hidden/tool.py", "def hidden_helper():\n    pass\n");
        write("notes.md", "def not_code():\n");
        write(".gitignore", "local_settings.py\nbuild/\n");
        let outside = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(
            outside.path().join("out.py"),
            "def outside_helper():\n    pass\n",
        )
        .expect("written");
        std::os::unix::fs::symlink(outside.path().join("out.py"), root.join("linked.py"))
            .expect("a link");
        std::os::unix::fs::symlink(outside.path(), root.join("linked_dir")).expect("a link");
        std::fs::hard_link(outside.path().join("out.py"), root.join("hard.py")).expect("a link");
        let workspace = Workspace::builder(root)
            .deny("/secret/")
            .build()
            .expect("a workspace");

        let index = index(&workspace, SymbolLimits::default());
        let names: Vec<(&str, &str)> = index
            .definitions()
            .iter()
            .map(|d| (d.path.as_str(), d.name.as_str()))
            .collect();
        assert_eq!(
            names,
            [("pkg/utils.py", "urljoin"), ("web/app.ts", "route")]
        );
        assert_eq!(index.lines_of("pkg/utils.py"), Some(2));
        assert!(!index.is_incomplete());
    }

    #[test]
    fn a_bound_stops_the_scan_and_says_so() {
        let directory = tempfile::tempdir().expect("a temporary directory");
        for n in 0..3 {
            std::fs::write(
                directory.path().join(format!("m{n}.py")),
                "def f():\n    pass\n",
            )
            .expect("written");
        }
        let workspace = Workspace::new(directory.path()).expect("a workspace");
        let limits = SymbolLimits {
            files: 2,
            ..SymbolLimits::default()
        };
        let index = index(&workspace, limits);
        assert_eq!(index.files().len(), 2);
        assert!(index.is_incomplete());
    }

    #[test]
    fn languages_are_told_by_extension() {
        assert_eq!(Language::of("a/b.py"), Some(Language::Python));
        assert_eq!(
            Language::of("x.tsx"),
            Some(Language::Braces(braces::Syntax::JavaScript))
        );
        assert_eq!(Language::of("README"), None);
        assert_eq!(Language::of("notes.md"), None);
    }
}
