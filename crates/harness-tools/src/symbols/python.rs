//! The Python scanner: `def`, `async def` and `class` at the start of a logical line,
//! ended by the first later line indented no deeper.

use std::sync::LazyLock;

use regex::Regex;

use super::{DefinitionKind, Found};

static DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\s*)(?:async\s+)?(def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")
        .unwrap_or_else(|_| unreachable!("a valid pattern"))
});

/// The definitions of a Python source file.
///
/// A line counts only where a logical line starts: not inside a string (a docstring that
/// shows `def f():` defines nothing), not inside open brackets (a multi-line signature's
/// later lines), not after a backslash. A definition's decorators are its first lines, and
/// it ends at the last non-blank line before the next logical line indented no deeper.
pub(super) fn scan(text: &str) -> Vec<Found> {
    let lines = logical_lines(text);
    let mut found: Vec<Found> = Vec::new();
    // Definitions not yet ended: (index in `found`, indentation).
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut last_non_blank = 0;
    let mut decorators_from: Option<(usize, usize)> = None;
    for (index, line) in lines.iter().enumerate() {
        let number = index + 1;
        if line.starts_logical && !line.code.trim().is_empty() {
            let indent = line.code.len() - line.code.trim_start().len();
            while open
                .last()
                .is_some_and(|&(_, open_indent)| open_indent >= indent)
            {
                if let Some((at, _)) = open.pop() {
                    found[at].end_line = last_non_blank;
                }
            }
            let code = line.code.trim_start();
            if code.starts_with('@') {
                if decorators_from.is_none_or(|(_, at_indent)| at_indent != indent) {
                    decorators_from = Some((number, indent));
                }
            } else {
                if let Some(captures) = DEFINITION.captures(&line.code) {
                    let kind = match &captures[2] {
                        "class" => DefinitionKind::Class,
                        _ => DefinitionKind::Function,
                    };
                    let first = decorators_from
                        .filter(|&(_, at_indent)| at_indent == indent)
                        .map_or(number, |(from, _)| from);
                    open.push((found.len(), indent));
                    found.push(Found {
                        name: captures[3].to_owned(),
                        kind,
                        line: first,
                        end_line: number,
                        parent: None,
                    });
                }
                decorators_from = None;
            }
        }
        if !line.raw_blank {
            last_non_blank = number;
        }
    }
    for (at, _) in open {
        found[at].end_line = last_non_blank;
    }
    found
}

/// One physical line, with its strings' contents and its comment blanked out.
#[derive(Debug)]
struct Line {
    /// The line's code: each string's contents removed (its quotes kept), no comment.
    code: String,
    /// Whether a logical line starts here (not inside a string or brackets, not after a
    /// backslash).
    starts_logical: bool,
    /// Whether the line, as written, is blank or only a comment.
    raw_blank: bool,
}

/// The lines of `text`, lexed just enough to know strings, comments and brackets.
fn logical_lines(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    // The quote of the triple-quoted string open at the end of the last line.
    let mut in_triple: Option<char> = None;
    let mut brackets = 0usize;
    let mut continued = false;
    for raw in text.lines() {
        let starts_logical = in_triple.is_none() && brackets == 0 && !continued;
        let mut code = String::new();
        let chars: Vec<char> = raw.chars().collect();
        let mut at = 0;
        while at < chars.len() {
            if let Some(quote) = in_triple {
                if chars[at] == '\\' {
                    at += 2;
                    continue;
                }
                if chars[at..].starts_with(&[quote; 3]) {
                    in_triple = None;
                    code.extend([quote; 3]);
                    at += 3;
                } else {
                    at += 1;
                }
                continue;
            }
            let c = chars[at];
            match c {
                '#' => break,
                '\'' | '"' if chars[at..].starts_with(&[c; 3]) => {
                    in_triple = Some(c);
                    code.extend([c; 3]);
                    at += 3;
                }
                '\'' | '"' => {
                    code.push(c);
                    at += 1;
                    while at < chars.len() && chars[at] != c {
                        at += if chars[at] == '\\' { 2 } else { 1 };
                    }
                    code.push(c);
                    at += 1;
                }
                '(' | '[' | '{' => {
                    brackets += 1;
                    code.push(c);
                    at += 1;
                }
                ')' | ']' | '}' => {
                    brackets = brackets.saturating_sub(1);
                    code.push(c);
                    at += 1;
                }
                _ => {
                    code.push(c);
                    at += 1;
                }
            }
        }
        continued = in_triple.is_none() && raw.trim_end().ends_with('\\');
        let trimmed = raw.trim();
        lines.push(Line {
            code,
            starts_logical,
            raw_blank: trimmed.is_empty() || (starts_logical && trimmed.starts_with('#')),
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (name, kind, line, end_line) of each definition, in line order.
    fn definitions(text: &str) -> Vec<(String, DefinitionKind, usize, usize)> {
        let mut found = scan(text);
        super::super::assign_parents(&mut found);
        found
            .into_iter()
            .map(|f| (f.name, f.kind, f.line, f.end_line))
            .collect()
    }

    fn owned(
        expected: &[(&str, DefinitionKind, usize, usize)],
    ) -> Vec<(String, DefinitionKind, usize, usize)> {
        expected
            .iter()
            .map(|(name, kind, line, end)| ((*name).to_owned(), *kind, *line, *end))
            .collect()
    }

    use DefinitionKind::{Class, Function, Method};

    #[test]
    fn functions_classes_methods_and_nested_functions() {
        let text = "import os\n\
                    \n\
                    def top(a, b):\n    \
                        def inner():\n        \
                            return a\n    \
                        return inner()\n\
                    \n\
                    \n\
                    class Parser(object):\n    \
                        \"\"\"Parses.\"\"\"\n\
                    \n    \
                        async def parse_line(self, line):\n        \
                            return line\n\
                    \n    \
                        # a comment at the method's depth\n    \
                        x = 1\n\
                    \n\
                    VALUE = 3\n";
        assert_eq!(
            definitions(text),
            owned(&[
                ("top", Function, 3, 6),
                ("inner", Function, 4, 5),
                ("Parser", Class, 9, 16),
                ("parse_line", Method, 12, 13),
            ])
        );
    }

    #[test]
    fn decorators_open_the_definition() {
        let text = "class A:\n    @property\n    @cache(\n        size=3,\n    )\n    def name(self):\n        return 1\n\n@decorate\ndef f(): pass\n";
        assert_eq!(
            definitions(text),
            owned(&[
                ("A", Class, 1, 7),
                ("name", Method, 2, 7),
                ("f", Function, 9, 10)
            ])
        );
    }

    #[test]
    fn a_multi_line_signature_is_one_definition() {
        let text = "def urljoin(\nbase,\n    url,\n):\n    return base + url\nrest = 1\n";
        assert_eq!(definitions(text), owned(&[("urljoin", Function, 1, 5)]));
    }

    #[test]
    fn strings_and_comments_that_look_like_definitions_define_nothing() {
        let text = "def real():\n    \"\"\"Example:\n\ndef fake():\n    pass\n\"\"\"\n    s = 'def also_fake(): x'\n    # def commented(): y\n    return s\n\nt = '''\nclass Nope:\n'''\n";
        assert_eq!(definitions(text), owned(&[("real", Function, 1, 9)]));
    }

    #[test]
    fn a_docstring_less_indented_than_its_function_does_not_end_it() {
        let text = "def f():\n    x = \"\"\"\nnot indented\n\"\"\"\n    return x\ny = 2\n";
        assert_eq!(definitions(text), owned(&[("f", Function, 1, 5)]));
    }
}
