//! The scanner of the languages whose blocks are braces: JavaScript and TypeScript, Rust,
//! Go. A definition starts a line and ends where the braces it opens close, or at its `;`
//! (or, in Go, its line) when it opens none.

use std::sync::LazyLock;

use regex::Regex;

use super::{DefinitionKind, Found};

/// Which brace language a file is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Syntax {
    /// JavaScript and TypeScript.
    JavaScript,
    Rust,
    Go,
}

fn pattern(source: &str) -> Regex {
    Regex::new(source).unwrap_or_else(|_| unreachable!("a valid pattern: {source}"))
}

/// Rust items: the kind word and the name.
static RUST: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r#"^\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:(?:const|async|unsafe|default|extern\s*(?:""\s*)?)\s+)*(fn|struct|enum|union|trait|type|mod)\s+([A-Za-z_][A-Za-z0-9_]*)"#,
    )
});

/// A Rust `impl` block: the implementing type's name after any `Trait for`.
static RUST_IMPL: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"^\s*(?:unsafe\s+)?impl\b(?:\s*<[^{]*?>)?\s+(?:[^{]*?\bfor\s+)?(?:&\s*)?(?:[A-Za-z_][A-Za-z0-9_]*::)*([A-Za-z_][A-Za-z0-9_]*)",
    )
});

/// Go functions and methods (the receiver's type, then the name), and types.
static GO_FUNC: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"^func\s*(?:\(\s*(?:[A-Za-z_][A-Za-z0-9_]*\s+)?\*?\s*([A-Za-z_][A-Za-z0-9_]*)[^)]*\)\s*)?([A-Za-z_][A-Za-z0-9_]*)",
    )
});
static GO_TYPE: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"^type\s+([A-Za-z_][A-Za-z0-9_]*)\s+(?:\[[^\]]*\]\s*)?(?:struct|interface|func|map|chan|\*|\[|[A-Za-z_])",
    )
});

/// JavaScript and TypeScript functions, classes and types.
static JS_FUNCTION: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][A-Za-z0-9_$]*)",
    )
});
static JS_CLASS: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(class|interface|enum|type)\s+([A-Za-z_$][A-Za-z0-9_$]*)",
    )
});
/// `const name = (…) => …`, `const name = async function …`, `let name = x => …`.
static JS_BOUND: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][A-Za-z0-9_$]*)\s*(?::[^=]*)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)?\s*(?::[^=]*)?(?:=>|$)|[A-Za-z_$][A-Za-z0-9_$]*\s*=>)",
    )
});
/// A method in a class body: modifiers, a name, maybe type parameters, `(`.
static JS_METHOD: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"^\s*(?:(?:public|private|protected|static|async|readonly|override|abstract|get|set)\s+)*\*?\s*#?([A-Za-z_$][A-Za-z0-9_$]*)\s*(?:<[^>]*>)?\s*\(",
    )
});

/// Words a method pattern would take for a name.
const JS_NOT_METHODS: &[&str] = &[
    "if", "for", "while", "switch", "catch", "return", "function", "with", "super", "await",
    "typeof", "new", "delete", "void", "throw",
];

/// The definitions of a source file of `syntax`.
pub(super) fn scan(text: &str, syntax: Syntax) -> Vec<Found> {
    let lines = lex(text, syntax);
    let mut found = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some((name, kind, parent)) = definition(&line.code, syntax) else {
            continue;
        };
        let end = end_of(&lines, index, syntax);
        found.push(Found {
            name,
            kind,
            line: first_line(&lines, index, syntax) + 1,
            end_line: end + 1,
            parent,
        });
    }
    if syntax == Syntax::JavaScript {
        found.extend(methods(&lines, &found));
    }
    found
}

/// The name and kind a line defines, if it starts a definition, with the type a Go
/// method's receiver names.
fn definition(code: &str, syntax: Syntax) -> Option<(String, DefinitionKind, Option<String>)> {
    match syntax {
        Syntax::Rust => {
            if let Some(captures) = RUST.captures(code) {
                let kind = match &captures[1] {
                    "fn" => DefinitionKind::Function,
                    "mod" => DefinitionKind::Module,
                    _ => DefinitionKind::Type,
                };
                return Some((captures[2].to_owned(), kind, None));
            }
            let captures = RUST_IMPL.captures(code)?;
            Some((captures[1].to_owned(), DefinitionKind::Impl, None))
        }
        Syntax::Go => {
            if let Some(captures) = GO_FUNC.captures(code) {
                let receiver = captures.get(1).map(|receiver| receiver.as_str().to_owned());
                let kind = match receiver {
                    Some(_) => DefinitionKind::Method,
                    None => DefinitionKind::Function,
                };
                return Some((captures[2].to_owned(), kind, receiver));
            }
            // Only `type Name …`: the specs of a `type ( … )` group are not told apart
            // from a struct's fields here.
            let captures = GO_TYPE.captures(code)?;
            Some((captures[1].to_owned(), DefinitionKind::Type, None))
        }
        Syntax::JavaScript => {
            if let Some(captures) = JS_FUNCTION.captures(code) {
                return Some((captures[1].to_owned(), DefinitionKind::Function, None));
            }
            if let Some(captures) = JS_CLASS.captures(code) {
                let kind = match &captures[1] {
                    "class" => DefinitionKind::Class,
                    _ => DefinitionKind::Type,
                };
                return Some((captures[2].to_owned(), kind, None));
            }
            let captures = JS_BOUND.captures(code)?;
            Some((captures[1].to_owned(), DefinitionKind::Function, None))
        }
    }
}

/// The methods of each JavaScript class: lines at the top level of its body that look
/// like a method's head.
fn methods(lines: &[Line], classes: &[Found]) -> Vec<Found> {
    let mut found = Vec::new();
    for class in classes.iter().filter(|c| c.kind == DefinitionKind::Class) {
        let (first, last) = (class.line - 1, class.end_line - 1);
        let Some(body_depth) = lines.get(first).map(|line| line.depth + 1) else {
            continue;
        };
        for index in first + 1..=last.min(lines.len().saturating_sub(1)) {
            let line = &lines[index];
            if line.depth != body_depth {
                continue;
            }
            let Some(captures) = JS_METHOD.captures(&line.code) else {
                continue;
            };
            let name = &captures[1];
            if JS_NOT_METHODS.contains(&name) {
                continue;
            }
            found.push(Found {
                name: name.to_owned(),
                kind: DefinitionKind::Method,
                line: first_line(lines, index, Syntax::JavaScript) + 1,
                end_line: end_of(lines, index, Syntax::JavaScript) + 1,
                parent: None,
            });
        }
    }
    found
}

/// The first line of the definition on line `index`: the attribute (Rust) or decorator
/// (TypeScript) lines right above it, and (Go, Rust) no doc comment: comments are blanked.
fn first_line(lines: &[Line], index: usize, syntax: Syntax) -> usize {
    let mut first = index;
    while first > 0 {
        let above = lines[first - 1].code.trim_start();
        let is_attribute = match syntax {
            Syntax::Rust => above.starts_with("#["),
            Syntax::JavaScript => above.starts_with('@'),
            Syntax::Go => false,
        };
        if !is_attribute {
            break;
        }
        first -= 1;
    }
    first
}

/// The last line (0-based) of the definition starting on line `index`: where the first
/// brace it opens at its own depth closes; where a `;` ends it first outside brackets;
/// in Go, the end of a line that opened nothing and leaves no bracket open.
fn end_of(lines: &[Line], index: usize, syntax: Syntax) -> usize {
    let start_depth = lines[index].depth;
    let mut depth = start_depth;
    let mut brackets = 0usize;
    let mut opened = false;
    for (offset, line) in lines[index..].iter().enumerate() {
        for c in line.code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => {
                    depth = depth.saturating_sub(1);
                    if opened && depth <= start_depth {
                        return index + offset;
                    }
                }
                '(' | '[' => brackets += 1,
                ')' | ']' => brackets = brackets.saturating_sub(1),
                ';' if !opened && brackets == 0 => return index + offset,
                _ => {}
            }
        }
        let continues = line
            .code
            .trim_end()
            .ends_with([',', '=', '(', '>', '|', '&', '+']);
        if syntax == Syntax::Go && !opened && brackets == 0 && !continues {
            return index + offset;
        }
    }
    lines.len().saturating_sub(1).max(index)
}

/// One physical line of a brace language.
#[derive(Debug)]
struct Line {
    /// The line's code: strings' contents removed (their quotes kept), comments removed.
    code: String,
    /// The brace depth where the line starts.
    depth: usize,
}

/// What the lexer is inside of at a line's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Open {
    Code,
    BlockComment,
    /// A string that may span lines, closed by this character (JavaScript's template
    /// literal, Go's raw string) or, for a Rust string, `"` followed by `hashes` `#`s.
    String {
        close: char,
        hashes: usize,
    },
}

/// The lines of `text`, lexed just enough to know strings, comments and braces.
fn lex(text: &str, syntax: Syntax) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut open = Open::Code;
    let mut depth = 0usize;
    for raw in text.lines() {
        let start_depth = depth;
        let chars: Vec<char> = raw.chars().collect();
        let mut code = String::new();
        let mut at = 0;
        while at < chars.len() {
            let c = chars[at];
            match open {
                Open::BlockComment => {
                    if chars[at..].starts_with(&['*', '/']) {
                        open = Open::Code;
                        at += 2;
                    } else {
                        at += 1;
                    }
                    continue;
                }
                Open::String { close, hashes } => {
                    // Go's raw strings and Rust's raw strings know no escapes.
                    let raw = hashes > 0 || (close == '`' && syntax == Syntax::Go);
                    if c == '\\' && !raw {
                        at += 2;
                        continue;
                    }
                    let closes = c == close
                        && chars[at + 1..]
                            .iter()
                            .take(hashes)
                            .filter(|&&h| h == '#')
                            .count()
                            == hashes;
                    if closes {
                        code.push(close);
                        open = Open::Code;
                        at += 1 + hashes;
                    } else {
                        at += 1;
                    }
                    continue;
                }
                Open::Code => {}
            }
            match c {
                '/' if chars.get(at + 1) == Some(&'/') => break,
                '/' if chars.get(at + 1) == Some(&'*') => {
                    open = Open::BlockComment;
                    at += 2;
                }
                '"' => {
                    code.push('"');
                    open = Open::String {
                        close: '"',
                        hashes: 0,
                    };
                    at += 1;
                }
                'r' if syntax == Syntax::Rust && raw_string_hashes(&chars[at + 1..]).is_some() => {
                    let hashes = raw_string_hashes(&chars[at + 1..]).unwrap_or(0);
                    code.push('"');
                    open = Open::String { close: '"', hashes };
                    at += 2 + hashes;
                }
                '`' if syntax != Syntax::Rust => {
                    code.push('`');
                    open = Open::String {
                        close: '`',
                        hashes: 0,
                    };
                    at += 1;
                }
                '\'' => {
                    code.push('\'');
                    at += 1 + quoted_length(&chars[at + 1..], syntax);
                }
                '{' => {
                    depth += 1;
                    code.push(c);
                    at += 1;
                }
                '}' => {
                    depth = depth.saturating_sub(1);
                    code.push(c);
                    at += 1;
                }
                _ => {
                    code.push(c);
                    at += 1;
                }
            }
        }
        // A string in double quotes ends with its line in these languages unless it is a
        // Rust string, which may span lines.
        if let Open::String {
            close: '"',
            hashes: 0,
        } = open
            && syntax != Syntax::Rust
        {
            open = Open::Code;
        }
        lines.push(Line {
            code,
            depth: start_depth,
        });
    }
    lines
}

/// After an `r`, the number of `#`s of a Rust raw string's opening (`r"`, `r#"`), if one
/// opens here.
fn raw_string_hashes(rest: &[char]) -> Option<usize> {
    let hashes = rest.iter().take_while(|&&c| c == '#').count();
    (rest.get(hashes) == Some(&'"')).then_some(hashes)
}

/// How many characters after an opening `'` belong to the quoted text, its closing quote
/// included: a JavaScript string runs to its closing quote; a Rust or Go character is
/// one character or an escape, and a Rust `'` with no closing quote near is a lifetime.
fn quoted_length(rest: &[char], syntax: Syntax) -> usize {
    if syntax == Syntax::JavaScript {
        let mut at = 0;
        while at < rest.len() && rest[at] != '\'' {
            at += if rest[at] == '\\' { 2 } else { 1 };
        }
        return (at + 1).min(rest.len());
    }
    match rest {
        ['\\', ..] => rest
            .iter()
            .skip(1)
            .position(|&c| c == '\'')
            .map_or(0, |at| at + 2),
        [_, '\'', ..] => 2,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DefinitionKind::{Class, Function, Impl, Method, Module, Type};

    fn definitions(
        text: &str,
        syntax: Syntax,
    ) -> Vec<(String, DefinitionKind, usize, usize, Option<String>)> {
        let mut found = scan(text, syntax);
        super::super::assign_parents(&mut found);
        found
            .into_iter()
            .map(|f| (f.name, f.kind, f.line, f.end_line, f.parent))
            .collect()
    }

    fn owned(
        expected: &[(&str, DefinitionKind, usize, usize, Option<&str>)],
    ) -> Vec<(String, DefinitionKind, usize, usize, Option<String>)> {
        expected
            .iter()
            .map(|(name, kind, line, end, parent)| {
                (
                    (*name).to_owned(),
                    *kind,
                    *line,
                    *end,
                    parent.map(str::to_owned),
                )
            })
            .collect()
    }

    #[test]
    fn rust_items_impls_methods_and_attributes() {
        let text = r##"//! fn not_in_a_comment() {}
use std::fmt;

#[derive(Debug)]
pub struct Point {
    x: i32,
}

pub(crate) struct Unit;

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = "fn fake() {";
        let c = '{';
        write!(f, "{}", s)
    }
}

pub async fn parse_line<'a>(
    line: &'a str,
) -> Option<&'a str>
where
    'a: 'static,
{
    let raw = r#"}"#;
    fn nested() {}
    Some(line)
}

mod tests {
    /* fn commented() { */
    fn t() {}
}
"##;
        assert_eq!(
            definitions(text, Syntax::Rust),
            owned(&[
                ("Point", Type, 4, 7, None),
                ("Unit", Type, 9, 9, None),
                ("Point", Impl, 11, 17, None),
                ("fmt", Method, 12, 16, Some("Point")),
                ("parse_line", Function, 19, 28, None),
                ("nested", Function, 26, 26, Some("parse_line")),
                ("tests", Module, 30, 33, None),
                ("t", Function, 32, 32, Some("tests")),
            ])
        );
    }

    #[test]
    fn go_functions_methods_and_types() {
        let text = "package url\n\n// func commented() {\ntype URL struct {\n\tPath string\n}\n\ntype Mode int\n\nfunc (u *URL) String() string {\n\ts := `func fake() {\n}`\n\treturn s + \"}\"\n}\n\nfunc Join(\n\tbase string,\n\tref string,\n) string {\n\tif base == \"\" {\n\t\treturn ref\n\t}\n\treturn base\n}\n";
        assert_eq!(
            definitions(text, Syntax::Go),
            owned(&[
                ("URL", Type, 4, 6, None),
                ("Mode", Type, 8, 8, None),
                ("String", Method, 10, 14, Some("URL")),
                ("Join", Function, 16, 24, None),
            ])
        );
    }

    #[test]
    fn javascript_and_typescript_functions_classes_and_methods() {
        let text = "// function commented() {}\nexport function parseLine(line) {\n  const s = 'function fake() {';\n  return `${s}\n}`;\n}\n\nexport default class Parser extends Base {\n  @memo\n  static async parse(text: string): Promise<void> {\n    if (text) {\n      return;\n    }\n  }\n\n  get size() { return 1; }\n}\n\nconst urlJoin = (base, ref) => {\n  return base + ref;\n};\nconst double = x => x * 2;\nexport interface Options {\n  strict: boolean;\n}\nfunction* gen(\n  a,\n) {\n  yield a;\n}\n";
        assert_eq!(
            definitions(text, Syntax::JavaScript),
            owned(&[
                ("parseLine", Function, 2, 6, None),
                ("Parser", Class, 8, 17, None),
                ("parse", Method, 9, 14, Some("Parser")),
                ("size", Method, 16, 16, Some("Parser")),
                ("urlJoin", Function, 19, 21, None),
                ("double", Function, 22, 22, None),
                ("Options", Type, 23, 25, None),
                ("gen", Function, 26, 30, None),
            ])
        );
    }
}
