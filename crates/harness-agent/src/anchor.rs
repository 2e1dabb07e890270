//! Code an answer shows for part of a file, put where it belongs.
//!
//! Small models answer "change `add` to this" with the function alone: in a block under no
//! path, or under the path of a file it does not cover whole. Written over the file, such a
//! snippet would drop everything it does not repeat; put in place of the one definition it
//! redefines, it is the change the model meant. [`place`] does that when there is exactly
//! one reading:
//!
//! - every function the snippet defines (`def`, `fn`, `function`, a method `name(…) {`, a
//!   shell `name() {`) is defined exactly once in the file, and no two of them in the same
//!   place (a function shown as the file has it and then again, changed, is the change);
//! - every other line of the snippet is a line the file already has (a class or `impl`
//!   header around a method, an unchanged statement), a comment, an import, which is
//!   added after the file's imports, or a line that only demonstrates the change
//!   ([`Placement::left_out`]), which is left out;
//! - the snippet's braces balance, or, for Python, its functions' bodies are indented.
//!
//! Anything else is [`Unplaced`], with the reason: the model is told, and nothing changes.
//! The functions keep the file's indentation and line endings. Nothing here writes a file:
//! the caller turns a [`Placement`] into an `edit_file` call ([`minimal_edit`]), which goes
//! through the toolbox like any other.

mod demonstration;

use std::collections::HashSet;

pub(crate) use self::demonstration::left_out_note;
use self::demonstration::{demonstration_blocks, is_compiled_main, is_demonstration};

/// Where a snippet goes in a file.
#[derive(Debug, PartialEq)]
pub(crate) struct Placement {
    /// The file's text with the snippet in place.
    pub(crate) content: String,
    /// Whether the snippet defines every function the file defines at its top level: then
    /// it is more likely the whole file (which may also delete lines) than a part of it.
    pub(crate) covers_all: bool,
    /// The lines of the snippet left out because they only demonstrate its functions, as
    /// small models end an answer ("Example usage:" and `print(add(2, 3))`): a top-level
    /// call of a function the snippet shows (printed, logged or asserted, or bare), an
    /// `if __name__ == "__main__":` or `if (require.main === module)` block, and a Rust or
    /// Go `main` function, each only where the file has none of its own. Trimmed, in order.
    pub(crate) left_out: Vec<String>,
}

/// Why a snippet does not go in a file.
#[derive(Debug, PartialEq)]
pub(crate) enum Unplaced {
    /// The snippet defines no function: it is not something to place.
    NoFunction,
    /// None of its functions is defined in the file.
    Absent,
    /// The file defines its functions, but the snippet cannot be placed, for this reason.
    Refused(String),
}

/// Which part of a snippet goes in one file, when its functions belong in several (a fix
/// and the test it makes pass, shown together).
#[derive(Debug, Default)]
pub(crate) struct Part<'a> {
    /// The functions to place in this file; `None`: all of them.
    pub(crate) only: Option<Vec<&'a str>>,
    /// The lines of the other files the snippet's other functions go to: a line outside
    /// the functions that one of them has is not new.
    pub(crate) elsewhere: Vec<&'a str>,
    /// Whether the snippet's new imports go to this file.
    pub(crate) imports: bool,
}

impl Part<'_> {
    /// All of the snippet, in one file.
    pub(crate) fn whole() -> Part<'static> {
        Part {
            only: None,
            elsewhere: Vec::new(),
            imports: true,
        }
    }
}

/// The names of the functions `snippet` defines, outermost only, in order; an error when
/// one of them does not end.
pub(crate) fn functions(snippet: &str) -> Result<Vec<&str>, String> {
    let lines: Vec<&str> = snippet.lines().collect();
    Ok(top_level_definitions(&lines)?
        .into_iter()
        .map(|function| function.name)
        .collect())
}

/// Whether `snippet` defines a Rust `fn main` or a Go `func main` at its top level, which
/// [`place_part`] leaves out as a demonstration where the file has none.
pub(crate) fn shows_compiled_main(snippet: &str) -> bool {
    let lines: Vec<&str> = snippet.lines().collect();
    top_level_definitions(&lines).is_ok_and(|found| {
        found
            .iter()
            .any(|f| f.name == "main" && is_compiled_main(lines[f.start]))
    })
}

/// How many times `file` defines a function named `name` (nested ones too).
pub(crate) fn definitions_of(file: &str, name: &str) -> usize {
    let lines: Vec<&str> = file.lines().collect();
    all_definitions(&lines)
        .iter()
        .filter(|definition| definition.name == name)
        .count()
}

/// Where `snippet` goes in the file whose text is `file`, named `path` in messages.
pub(crate) fn place(snippet: &str, file: &str, path: &str) -> Result<Placement, Unplaced> {
    place_part(snippet, file, path, &Part::whole())
}

/// Where `part` of `snippet` goes in the file whose text is `file`.
pub(crate) fn place_part(
    snippet: &str,
    file: &str,
    path: &str,
    part: &Part<'_>,
) -> Result<Placement, Unplaced> {
    let shown: Vec<&str> = snippet.lines().collect();
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let bodies: Vec<&str> = lines.iter().map(|line| without_ending(line)).collect();
    let mut all = top_level_definitions(&shown).map_err(Unplaced::Refused)?;
    let demonstrations = demonstration_blocks(&shown, &mut all, &bodies, path);
    if all.is_empty() {
        return Err(Unplaced::NoFunction);
    }
    let functions: Vec<&Definition<'_>> = all
        .iter()
        .filter(|f| part.only.as_ref().is_none_or(|only| only.contains(&f.name)))
        .collect();
    let defined = all_definitions(&bodies);
    let functions = without_quoted_originals(functions, &defined, &bodies, &shown);
    if !functions
        .iter()
        .any(|function| defined.iter().any(|d| d.name == function.name))
    {
        return Err(Unplaced::Absent);
    }

    let mut spans: Vec<(Definition<'_>, &Definition<'_>)> = Vec::new();
    for &function in &functions {
        let mut matching = defined.iter().filter(|d| d.name == function.name);
        match (matching.next(), matching.next()) {
            (Some(target), None) => spans.push((target.clone(), function)),
            (None, _) => {
                return Err(Unplaced::Refused(format!(
                    "`{}` is not defined in {path}",
                    function.name
                )));
            }
            (Some(_), Some(_)) => {
                return Err(Unplaced::Refused(format!(
                    "`{}` is defined more than once in {path}, so where it goes is not clear",
                    function.name
                )));
            }
        }
    }
    spans.sort_by_key(|(target, _)| target.start);
    if spans.windows(2).any(|pair| pair[1].0.start < pair[0].0.end) {
        return Err(Unplaced::Refused(format!(
            "two functions in the code block are in the same place in {path}"
        )));
    }

    let known: HashSet<&str> = bodies
        .iter()
        .chain(&part.elsewhere)
        .map(|line| line.trim())
        .collect();
    let names: Vec<&str> = all.iter().map(|f| f.name).collect();
    let mut imports = Vec::new();
    let mut left_out = Vec::new();
    // Names that demonstration lines bound (`result = add(2, 3)`), which later ones print.
    let mut bound: Vec<&str> = Vec::new();
    for (number, line) in shown.iter().enumerate() {
        // Every function's lines, this file's and the others', are placed, not checked.
        let inside = all.iter().any(|f| (f.start..f.end).contains(&number));
        let text = line.trim();
        if inside || text.is_empty() || is_comment(text) || known.contains(text) {
            continue;
        }
        // A line the file has is never left out (it was `known`); one that only uses the
        // change is, and the model is told which.
        let demonstrates = demonstrations.iter().any(|block| block.contains(&number))
            || (indent_width(line) == 0
                && is_demonstration(text, &names, &mut bound, &bodies, &shown, &all));
        if demonstrates {
            left_out.push(text.to_owned());
            continue;
        }
        if is_import(text) {
            if part.imports {
                imports.push(text);
            }
            continue;
        }
        return Err(Unplaced::Refused(format!(
            "the line `{text}` of the code block is outside the functions it shows and not in \
             {path}, so where it goes is not clear"
        )));
    }

    let newline = if file.contains("\r\n") { "\r\n" } else { "\n" };
    let after_imports = import_insertion_line(&bodies);
    let mut content = String::with_capacity(file.len() + snippet.len());
    let mut spans = spans.iter().peekable();
    let mut at = 0;
    while at <= lines.len() {
        if at == after_imports {
            for import in &imports {
                if !content.is_empty() && !content.ends_with('\n') {
                    content.push_str(newline);
                }
                content.push_str(import);
                content.push_str(newline);
            }
        }
        if at == lines.len() {
            break;
        }
        match spans.next_if(|(target, _)| target.start == at) {
            Some((target, function)) => {
                let replacement = reindent(
                    &shown[function.start..function.end],
                    leading_whitespace(bodies[target.start]),
                );
                content.push_str(&replacement.join(newline));
                // The span's last line keeps its ending (or its lack of one, at the end).
                let last = lines[target.end - 1];
                content.push_str(&last[without_ending(last).len()..]);
                at = target.end;
            }
            None => {
                content.push_str(lines[at]);
                at += 1;
            }
        }
    }

    let top_level: Vec<&Definition<'_>> = defined.iter().filter(|d| d.indent == 0).collect();
    let covers_all = !top_level.is_empty()
        && top_level
            .iter()
            .all(|d| functions.iter().any(|f| f.name == d.name));
    Ok(Placement {
        content,
        covers_all,
        left_out,
    })
}

/// The file whose text is `file` with the imports `snippet` adds, when the snippet is
/// imports and nothing else (comments and blank lines aside), as small models answer a
/// missing import: "add this line at the top of stats.py" and `import math`. Each import
/// the file lacks goes where [`place`] puts a snippet's new imports; one it has is not
/// added again, so the text may come back unchanged. `None` when the snippet holds anything
/// but imports, and when the file itself is imports and nothing else: a block of imports
/// may then be the whole file, with one taken out.
pub(crate) fn add_imports(snippet: &str, file: &str) -> Option<String> {
    let code = |text: &str| !text.is_empty() && !is_comment(text);
    let wanted: Vec<&str> = snippet.lines().map(str::trim).filter(|t| code(t)).collect();
    let more_than_imports = file
        .lines()
        .map(str::trim)
        .any(|text| code(text) && !is_import(text));
    if wanted.is_empty() || !wanted.iter().all(|text| is_import(text)) || !more_than_imports {
        return None;
    }
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let bodies: Vec<&str> = lines.iter().map(|line| without_ending(line)).collect();
    let has: HashSet<&str> = bodies.iter().map(|line| line.trim()).collect();
    let mut missing: Vec<&str> = Vec::new();
    for import in wanted {
        if !has.contains(import) && !missing.contains(&import) {
            missing.push(import);
        }
    }
    let newline = if file.contains("\r\n") { "\r\n" } else { "\n" };
    let at = import_insertion_line(&bodies);
    let mut content: String = lines[..at].concat();
    if !content.is_empty() && !content.ends_with('\n') {
        content.push_str(newline);
    }
    for import in missing {
        content.push_str(import);
        content.push_str(newline);
    }
    content.push_str(&lines[at..].concat());
    Some(content)
}

/// The smallest `edit_file` arguments that turn `old` into `new`: the whole lines that
/// differ, widened by a line at a time until the old text is unique in `old`, so that the
/// edit applies where it was meant. `None` when they are equal.
pub(crate) fn minimal_edit(old: &str, new: &str) -> Option<(String, String)> {
    if old == new {
        return None;
    }
    let before: Vec<&str> = old.split_inclusive('\n').collect();
    let after: Vec<&str> = new.split_inclusive('\n').collect();
    let mut prefix = before
        .iter()
        .zip(&after)
        .take_while(|(a, b)| a == b)
        .count();
    let most = before.len().min(after.len()) - prefix;
    let mut suffix = before
        .iter()
        .rev()
        .zip(after.iter().rev())
        .take(most)
        .take_while(|(a, b)| a == b)
        .count();
    loop {
        let old_text: String = before[prefix..before.len() - suffix].concat();
        let new_text: String = after[prefix..after.len() - suffix].concat();
        let unique = !old_text.is_empty() && old.matches(old_text.as_str()).count() == 1;
        if unique {
            return Some((old_text, new_text));
        }
        if prefix > 0 {
            prefix -= 1;
        } else if suffix > 0 {
            suffix -= 1;
        } else {
            // The whole file, which is unique in itself; only an empty file gets here.
            return Some((old.to_owned(), new.to_owned()));
        }
    }
}

/// A function definition: its name, the lines it spans and its indentation.
#[derive(Clone, Debug, PartialEq)]
struct Definition<'a> {
    name: &'a str,
    /// Its first line (the one that names it) and one past its last.
    start: usize,
    end: usize,
    /// The width of its first line's indentation.
    indent: usize,
}

/// `functions` without each one that quotes the file's own definition (every line it has
/// is a line of the file's one definition of that name) and is defined again later in the
/// snippet: small models show a function as it is, then as it should be ("# Original",
/// "# Fixed"), and the later one is meant, as the language itself reads a name defined
/// twice. Any other function shown twice has no one reading, and is left to be refused.
fn without_quoted_originals<'s, 'a>(
    functions: Vec<&'s Definition<'a>>,
    defined: &[Definition<'_>],
    file: &[&str],
    snippet: &[&str],
) -> Vec<&'s Definition<'a>> {
    let quotes_the_file = |function: &Definition<'_>| {
        let mut matching = defined.iter().filter(|d| d.name == function.name);
        let (Some(target), None) = (matching.next(), matching.next()) else {
            return false;
        };
        let original: HashSet<&str> = file[target.start..target.end]
            .iter()
            .map(|line| line.trim())
            .collect();
        snippet[function.start..function.end]
            .iter()
            .map(|line| line.trim())
            .all(|line| line.is_empty() || original.contains(line))
    };
    functions
        .iter()
        .enumerate()
        .filter(|&(at, function)| {
            let defined_again = functions[at + 1..]
                .iter()
                .any(|later| later.name == function.name);
            !(defined_again && quotes_the_file(function))
        })
        .map(|(_, function)| *function)
        .collect()
}

/// The functions a snippet defines, outermost only (a method's own nested functions are
/// part of it). A definition that does not end (braces that do not balance) is an error.
fn top_level_definitions<'a>(lines: &[&'a str]) -> Result<Vec<Definition<'a>>, String> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        if let Some(name) = defined_name(lines[at]) {
            let Some(end) = extent(lines, at) else {
                return Err(format!(
                    "the function `{name}` in the code block is not complete"
                ));
            };
            found.push(Definition {
                name,
                start: at,
                end,
                indent: indent_width(lines[at]),
            });
            at = end;
        } else {
            at += 1;
        }
    }
    Ok(found)
}

/// Every function a file defines, nested ones too (a snippet may show a method without its
/// class). Lines that look like a definition but do not end are not counted.
fn all_definitions<'a>(lines: &[&'a str]) -> Vec<Definition<'a>> {
    (0..lines.len())
        .filter_map(|at| {
            let name = defined_name(lines[at])?;
            let end = extent(lines, at)?;
            Some(Definition {
                name,
                start: at,
                end,
                indent: indent_width(lines[at]),
            })
        })
        .collect()
}

/// The name a line defines a function by, if it does: `def name(`, `fn name(` or
/// `fn name<`, `function name(`, a method or shell function `name(…) {`.
fn defined_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    while let Some(after) = MODIFIERS.iter().find_map(|word| rest.strip_prefix(word)) {
        rest = after.trim_start();
    }
    for keyword in ["def ", "fn ", "func ", "function ", "function* "] {
        if let Some(after) = rest.strip_prefix(keyword) {
            let after = after.trim_start();
            let name = identifier(after)?;
            let next = after[name.len()..].trim_start();
            return (next.starts_with('(') || (keyword == "fn " && next.starts_with('<')))
                .then_some(name);
        }
    }
    // A method (`area(r) {`) or a shell function (`greet() {`): a name, its parameters and
    // the opening brace on one line. A call cannot be followed by a block in these
    // languages, except after the control keywords.
    let name = identifier(rest)?;
    let after = rest[name.len()..].trim_start();
    let opens_block = after.starts_with('(') && after.trim_end().ends_with('{');
    (opens_block && !CONTROL.contains(&name)).then_some(name)
}

/// Words that may come before a definition's keyword.
const MODIFIERS: [&str; 11] = [
    "pub(crate) ",
    "pub(super) ",
    "pub ",
    "export default ",
    "export ",
    "async ",
    "static ",
    "unsafe ",
    "const ",
    "extern \"C\" ",
    "local ",
];

/// Words that are followed by `(…) {` without defining anything.
const CONTROL: [&str; 9] = [
    "if", "for", "while", "switch", "catch", "with", "return", "elif", "function",
];

/// The identifier `text` starts with.
fn identifier(text: &str) -> Option<&str> {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(text.len());
    let name = &text[..end];
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

/// One past the last line of the definition that starts on line `start`: for Python, its
/// signature and the lines indented under it; otherwise up to the brace that closes the
/// first one it opens. `None` if it does not end.
fn extent(lines: &[&str], start: usize) -> Option<usize> {
    if lines[start]
        .trim_start()
        .trim_start_matches("async ")
        .starts_with("def ")
    {
        python_extent(lines, start)
    } else {
        brace_extent(lines, start)
    }
}

fn python_extent(lines: &[&str], start: usize) -> Option<usize> {
    let indent = indent_width(lines[start]);
    // The signature may span lines: it ends where its parentheses close.
    let mut depth = 0i64;
    let mut signature_end = start;
    loop {
        let code = python_code(lines[signature_end]);
        depth += paren_balance(code);
        if depth <= 0 {
            if !code.trim_end().ends_with(':') {
                // `def f(): return 1`, all on one line.
                return (code.contains(':')).then_some(signature_end + 1);
            }
            break;
        }
        signature_end += 1;
        if signature_end >= lines.len() {
            return None;
        }
    }
    let mut end = signature_end + 1;
    let mut last = end;
    while end < lines.len() {
        let line = lines[end];
        end += 1;
        if line.trim().is_empty() {
            continue;
        }
        if indent_width(line) <= indent {
            break;
        }
        last = end;
    }
    (last > signature_end + 1).then_some(last)
}

fn brace_extent(lines: &[&str], start: usize) -> Option<usize> {
    let mut depth = 0i64;
    let mut opened = false;
    for (number, line) in lines.iter().enumerate().skip(start) {
        for c in code_chars(line) {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return Some(number + 1);
        }
        // A declaration without a body, or a signature that never opens one.
        if !opened && (line.trim_end().ends_with(';') || number > start + 8) {
            return None;
        }
    }
    None
}

/// The characters of a line of C-like code outside string literals and `//` comments.
/// A `'` starts a literal only as a character literal (`'{'`, `'\n'`), so that Rust
/// lifetimes (`&'a str`) do not hide the braces after them.
fn code_chars(line: &str) -> Vec<char> {
    let chars: Vec<char> = line.chars().collect();
    let mut code = Vec::with_capacity(chars.len());
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        match c {
            '/' if chars.get(at + 1) == Some(&'/') => break,
            '"' | '`' => {
                at += 1;
                while at < chars.len() && chars[at] != c {
                    at += if chars[at] == '\\' { 2 } else { 1 };
                }
            }
            '\'' if chars.get(at + 2) == Some(&'\'') => at += 2,
            '\'' if chars.get(at + 1) == Some(&'\\') => {
                at += 2;
                while at < chars.len() && chars[at] != '\'' {
                    at += 1;
                }
            }
            _ => code.push(c),
        }
        at += 1;
    }
    code
}

/// A Python line without its comment (a `#` outside a string).
fn python_code(line: &str) -> &str {
    let mut quote = None;
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (None, '#') => return &line[..at],
            (None, '"' | '\'') => quote = Some(c),
            (Some(open), _) if c == open => quote = None,
            _ => {}
        }
    }
    line
}

fn paren_balance(code: &str) -> i64 {
    code.chars()
        .map(|c| match c {
            '(' | '[' => 1,
            ')' | ']' => -1,
            _ => 0,
        })
        .sum()
}

/// A function's lines from the snippet, moved from the snippet's indentation (its first
/// line's) to `to`, the file's: a line that starts with the snippet's indentation keeps
/// the rest as written (tabs stay tabs); one that does not is put at `to`.
fn reindent(lines: &[&str], to: &str) -> Vec<String> {
    let from = lines.first().map_or("", |line| leading_whitespace(line));
    lines
        .iter()
        .map(|line| {
            if line.trim().is_empty() {
                return String::new();
            }
            match line.strip_prefix(from) {
                Some(rest) => format!("{to}{rest}"),
                None => format!("{to}{}", line.trim_start()),
            }
        })
        .collect()
}

fn leading_whitespace(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The line before which new imports go: after the file's last top-level import, or after
/// what must open the file ([`header_end`]) when it has none.
fn import_insertion_line(lines: &[&str]) -> usize {
    let last_import = lines
        .iter()
        .rposition(|line| indent_width(line) == 0 && is_import(line.trim()));
    match last_import {
        Some(at) => at + 1,
        None => header_end(lines),
    }
}

/// The lines that open a file before any import: a `#!` line, then a Python module
/// docstring, JavaScript's `"use strict"`, or Rust's inner docs and attributes (`//!`,
/// `#![…]`). An import put above them would take their place: the docstring would no
/// longer document the module, strict mode would be off.
fn header_end(lines: &[&str]) -> usize {
    let mut at = usize::from(lines.first().is_some_and(|line| line.starts_with("#!")));
    if let Some(first) = lines.get(at) {
        for quote in ["\"\"\"", "'''"] {
            let Some(rest) = first.trim_start().strip_prefix(quote) else {
                continue;
            };
            let closing = if rest.contains(quote) {
                Some(at)
            } else {
                (at + 1..lines.len()).find(|&n| lines[n].contains(quote))
            };
            // An unclosed docstring is not one: nothing is skipped for it.
            if let Some(closing) = closing {
                at = closing + 1;
            }
        }
    }
    while lines.get(at).is_some_and(|line| {
        let text = line.trim();
        text.starts_with("//!")
            || text.starts_with("#![")
            || ["'use strict'", "\"use strict\""]
                .iter()
                .any(|strict| text.trim_end_matches(';') == *strict)
    }) {
        at += 1;
    }
    at
}

fn is_import(text: &str) -> bool {
    text.starts_with("import ")
        || (text.starts_with("from ") && text.contains(" import "))
        || (text.starts_with("use ") && text.ends_with(';'))
        || (text.starts_with("const ") && text.contains("require("))
}

fn is_comment(text: &str) -> bool {
    ["#", "//", "/*", "*", "..."]
        .iter()
        .any(|start| text.starts_with(start))
        && !text.starts_with("#!")
        && !text.starts_with("#[")
}

fn indent_width(line: &str) -> usize {
    line.chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

fn without_ending(line: &str) -> &str {
    line.trim_end_matches(['\n', '\r'])
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALC: &str = "import math\n\n\ndef add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n";

    fn placed(snippet: &str, file: &str) -> String {
        match place(snippet, file, "f") {
            Ok(placement) => placement.content,
            Err(why) => panic!("not placed: {why:?}"),
        }
    }

    #[test]
    fn a_python_function_replaces_the_one_of_its_name() {
        let snippet = "def add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a + b";
        assert_eq!(
            placed(snippet, CALC),
            CALC.replacen("return a - b", "return a + b", 1)
        );
        let placement = place(snippet, CALC, "calc.py").map_err(|e| format!("{e:?}"));
        assert_eq!(placement.map(|p| p.covers_all), Ok(false));
    }

    #[test]
    fn a_function_shown_as_it_is_and_then_changed_is_the_change() {
        // As Qwen2.5-Coder-1.5B answered: the function as the file has it (its docstring
        // left out), then fixed, in one block.
        let snippet = "# Original add\ndef add(a, b):\n    return a - b\n\n# Fixed add\n\
                       def add(a, b):\n    return a + b";
        assert_eq!(
            placed(snippet, CALC),
            CALC.replacen(
                "    \"\"\"Sum.\"\"\"\n    return a - b",
                "    return a + b",
                1
            )
        );
        // Two versions, neither as the file has it: no one reading.
        for twice in [
            "def add(a, b):\n    return a * b\n\ndef add(a, b):\n    return a + b",
            "def add(a, b):\n    return a + b\n\ndef add(a, b):\n    return a * b",
        ] {
            assert_eq!(
                place(twice, CALC, "calc.py"),
                Err(Unplaced::Refused(
                    "two functions in the code block are in the same place in calc.py".into()
                )),
                "{twice}"
            );
        }
        // The file's own version shown last is no change to the one before it.
        let back = "def add(a, b):\n    return a - b\n\ndef add(a, b):\n    return a + b\n\n\
                    def add(a, b):\n    return a - b";
        assert!(place(back, CALC, "calc.py").is_err());
    }

    #[test]
    fn a_method_shown_without_its_class_keeps_the_class_indentation() {
        let file = "class Shape:\n    def area(self):\n        return 0\n\n    def name(self):\n        return 'shape'\n";
        assert_eq!(
            placed("def area(self):\n    return 1\n", file),
            file.replace("return 0", "return 1")
        );
        // With its class header, which the file has, it is the same.
        assert_eq!(
            placed(
                "class Shape:\n    def area(self):\n        return 1\n",
                file
            ),
            file.replace("return 0", "return 1")
        );
    }

    #[test]
    fn brace_languages_replace_up_to_the_closing_brace() {
        let js = "function slug(s) {\n  return s;\n}\n\nfunction other() {\n  return '{';\n}\n";
        assert_eq!(
            placed(
                "function slug(s) {\n  if (!s) { return ''; }\n  return s.trim();\n}",
                js
            ),
            js.replace(
                "  return s;\n",
                "  if (!s) { return ''; }\n  return s.trim();\n"
            )
        );
        let rust = "pub fn parse<'a>(s: &'a str) -> &'a str {\n    s\n}\n\nfn main() {}\n";
        assert_eq!(
            placed(
                "pub fn parse<'a>(s: &'a str) -> &'a str {\n    s.trim()\n}",
                rust
            ),
            rust.replace("    s\n", "    s.trim()\n")
        );
        let shell = "greet() {\n  echo hi\n}\nmain() {\n  greet\n}\n";
        assert_eq!(
            placed("greet() {\n  echo hello\n}", shell),
            shell.replace("echo hi", "echo hello")
        );
        let tabs = "class A {\n\tarea(r) {\n\t\treturn r;\n\t}\n}\n";
        assert_eq!(
            placed("area(r) {\n\treturn r * r;\n}", tabs),
            tabs.replace("return r;", "return r * r;"),
            "tabs stay tabs"
        );
        let class = "class A {\n  area(r) {\n    return r;\n  }\n}\n";
        assert_eq!(
            placed("area(r) {\n  return r * r;\n}", class),
            class.replace("return r;", "return r * r;")
        );
    }

    #[test]
    fn crlf_stays_crlf_and_a_missing_import_is_added_after_the_others() {
        let file = "import os\r\n\r\ndef f():\r\n    return 1\r\n";
        assert_eq!(
            placed("import sys\ndef f():\n    return sys.maxsize\n", file),
            "import os\r\nimport sys\r\n\r\ndef f():\r\n    return sys.maxsize\r\n"
        );
        let no_imports = "def f():\n    return 1\n";
        assert_eq!(
            placed("import math\n\ndef f():\n    return math.pi", no_imports),
            "import math\ndef f():\n    return math.pi\n"
        );
    }

    #[test]
    fn imports_alone_are_added_after_the_file_s_own_or_its_header() {
        let stats =
            "\"\"\"Summary statistics.\"\"\"\n\n\ndef mean(values):\n    return sum(values)\n";
        assert_eq!(
            add_imports("import math\n", stats).as_deref(),
            Some(
                "\"\"\"Summary statistics.\"\"\"\nimport math\n\n\ndef mean(values):\n    return sum(values)\n"
            )
        );
        let long_docstring = "#!/usr/bin/env python3\n'''Stats.\n\nMore.\n'''\nX = 1\n";
        assert_eq!(
            add_imports("# the module it needs\nimport math", long_docstring).as_deref(),
            Some("#!/usr/bin/env python3\n'''Stats.\n\nMore.\n'''\nimport math\nX = 1\n")
        );
        let strict = "'use strict';\r\n\r\nfunction f() {}\r\n";
        assert_eq!(
            add_imports("const fs = require('fs');", strict).as_deref(),
            Some("'use strict';\r\nconst fs = require('fs');\r\n\r\nfunction f() {}\r\n")
        );
        let rust = "//! Sizes.\n#![forbid(unsafe_code)]\nuse std::fmt;\n\npub fn f() {}";
        assert_eq!(
            add_imports("use std::fmt;\nuse std::io;\nuse std::io;\n", rust).as_deref(),
            Some(
                "//! Sizes.\n#![forbid(unsafe_code)]\nuse std::fmt;\nuse std::io;\n\npub fn f() {}"
            )
        );
        let rust_without_imports =
            "//! Sizes.\n//! In bytes.\n#![forbid(unsafe_code)]\n\npub fn f() {}";
        assert_eq!(
            add_imports("use std::io;", rust_without_imports).as_deref(),
            Some(
                "//! Sizes.\n//! In bytes.\n#![forbid(unsafe_code)]\nuse std::io;\n\npub fn f() {}"
            )
        );
        let attribute_alone = "#![allow(dead_code)]\nfn f() {}\n";
        assert_eq!(
            add_imports("use std::io;", attribute_alone).as_deref(),
            Some("#![allow(dead_code)]\nuse std::io;\nfn f() {}\n")
        );
        let no_header = "X = 1";
        assert_eq!(
            add_imports("import os", no_header).as_deref(),
            Some("import os\nX = 1")
        );
        // One it has already: the file as it is.
        assert_eq!(add_imports("use std::fmt;", rust).as_deref(), Some(rust));
        // An unclosed docstring is no header.
        assert_eq!(
            add_imports("import os", "'''open\nX = 1\n").as_deref(),
            Some("import os\n'''open\nX = 1\n")
        );
    }

    #[test]
    fn a_block_with_more_than_imports_or_a_file_of_imports_alone_adds_none() {
        let file = "import os\n\ndef f():\n    return 1\n";
        assert_eq!(add_imports("import sys\nprint(sys.argv)", file), None);
        assert_eq!(add_imports("# nothing\n\n", file), None);
        assert_eq!(add_imports("import sys", "import os\nimport re\n"), None);
    }

    #[test]
    fn what_has_no_one_reading_is_not_placed() {
        let twice = "class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 2\n";
        for (snippet, file, why) in [
            ("x = 1\nprint(x)", CALC, Err(Unplaced::NoFunction)),
            (
                "def mul(a, b):\n    return a * b",
                CALC,
                Err(Unplaced::Absent),
            ),
            (
                "def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b",
                CALC,
                Err(Unplaced::Refused("`mul` is not defined in f".into())),
            ),
            (
                "def f(self):\n    return 3",
                twice,
                Err(Unplaced::Refused(
                    "`f` is defined more than once in f, so where it goes is not clear".into(),
                )),
            ),
            (
                "RATE = 2\n\ndef add(a, b):\n    return a + b",
                CALC,
                Err(Unplaced::Refused(
                    "the line `RATE = 2` of the code block is outside the functions it shows \
                     and not in f, so where it goes is not clear"
                        .into(),
                )),
            ),
            (
                "function slug(s) {\n  return s;\n",
                "function slug(s) {\n  return 1;\n}\n",
                Err(Unplaced::Refused(
                    "the function `slug` in the code block is not complete".into(),
                )),
            ),
        ] {
            assert_eq!(place(snippet, file, "f"), why, "{snippet}");
        }
    }

    /// Where `snippet` goes in `file` (at `path`), and the lines left out.
    fn placed_leaving(snippet: &str, file: &str, path: &str) -> (String, Vec<String>) {
        match place(snippet, file, path) {
            Ok(placement) => (placement.content, placement.left_out),
            Err(why) => panic!("not placed: {why:?}\n{snippet}"),
        }
    }

    fn refusal(snippet: &str, file: &str, path: &str) -> String {
        match place(snippet, file, path) {
            Err(Unplaced::Refused(why)) => why,
            other => panic!("not refused: {other:?}\n{snippet}"),
        }
    }

    // Issue 49: a first answer held the right change to `add` and two lines of example
    // usage, and was refused four times.
    #[test]
    fn python_demonstration_lines_are_left_out_and_the_change_placed() {
        let fixed = CALC.replacen("return a - b", "return a + b", 1);
        let function = "def add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a + b\n";
        for (demonstration, left_out) in [
            (
                "\n# Example usage:\nprint(add(2, 3))  # 5\n",
                vec!["print(add(2, 3))  # 5"],
            ),
            ("\nadd(2, 3)\n", vec!["add(2, 3)"]),
            ("\nassert add(2, 3) == 5\n", vec!["assert add(2, 3) == 5"]),
            (
                "\nresult = add(2, 3)\nprint(f\"2 + 3 = {result}\")\n",
                vec!["result = add(2, 3)", "print(f\"2 + 3 = {result}\")"],
            ),
            (
                "\nif __name__ == \"__main__\":\n    x = add(1, 2)\n\n    print(x)\n",
                vec!["if __name__ == \"__main__\":", "x = add(1, 2)", "print(x)"],
            ),
            (
                "\nif __name__ == '__main__':\n    print(add(1, 2))\n",
                vec!["if __name__ == '__main__':", "print(add(1, 2))"],
            ),
        ] {
            let snippet = format!("{function}{demonstration}");
            assert_eq!(
                placed_leaving(&snippet, CALC, "calc.py"),
                (
                    fixed.clone(),
                    left_out.iter().map(|l| (*l).to_owned()).collect()
                ),
                "{snippet}"
            );
        }
        // Nothing is left out of a change that shows none.
        assert_eq!(
            placed_leaving(function, CALC, "calc.py").1,
            Vec::<String>::new()
        );
    }

    #[test]
    fn python_lines_the_change_needs_or_the_file_has_are_not_taken_for_demonstrations() {
        let function = "def add(a, b):\n    return (a + b) * RATE\n";
        // A new constant the function uses, a name it uses bound by a call, a call of a
        // function the block does not show: real code, refused as before.
        for (line, why) in [
            ("RATE = 2", "the line `RATE = 2`"),
            ("RATE = add(1, 1)", "the line `RATE = add(1, 1)`"),
            ("print(sub(1, 2))", "the line `print(sub(1, 2))`"),
            ("print(RATE)", "the line `print(RATE)`"),
            ("add(1, 2) + 1", "the line `add(1, 2) + 1`"),
        ] {
            let snippet = format!("{function}\n{line}\n");
            assert!(refusal(&snippet, CALC, "calc.py").contains(why), "{line}");
        }
        // A file with a main block of its own: a changed one is not a demonstration.
        let with_main = format!("{CALC}\n\nif __name__ == \"__main__\":\n    print(add(1, 1))\n");
        let snippet = "def add(a, b):\n    return a + b\n\nif __name__ == \"__main__\":\n    \
                       print(add(2, 2))\n";
        assert!(
            refusal(snippet, &with_main, "calc.py").contains("`print(add(2, 2))`"),
            "{snippet}"
        );
        // The same main block as the file has is the file's, kept, and nothing left out.
        let same = "def add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a + b\n\nif __name__ == \"__main__\":\n    \
                    print(add(1, 1))\n";
        let (content, left_out) = placed_leaving(same, &with_main, "calc.py");
        assert_eq!(
            content,
            with_main.replacen("return a - b", "return a + b", 1)
        );
        assert!(left_out.is_empty(), "{left_out:?}");
        // A top-level line the file has stays in the file.
        let called = format!("{CALC}print(add(1, 1))\n");
        let (content, left_out) = placed_leaving(
            "def add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a + b\n\nprint(add(1, 1))\n",
            &called,
            "c.py",
        );
        assert_eq!(content, called.replacen("return a - b", "return a + b", 1));
        assert!(left_out.is_empty(), "{left_out:?}");
    }

    #[test]
    fn javascript_demonstration_lines_are_left_out_and_real_code_is_not() {
        let js =
            "'use strict';\n\nfunction slug(s) {\n  return s;\n}\n\nmodule.exports = { slug };\n";
        let fixed = js.replace("  return s;\n", "  return s.trim().toLowerCase();\n");
        let function = "function slug(s) {\n  return s.trim().toLowerCase();\n}\n";
        for (demonstration, left_out) in [
            (
                "\n// Example usage\nconsole.log(slug(' A '));  // 'a'\n",
                vec!["console.log(slug(' A '));  // 'a'"],
            ),
            (
                "\nconst out = slug(' B ');\nconsole.log(out);\n",
                vec!["const out = slug(' B ');", "console.log(out);"],
            ),
            (
                "\nif (require.main === module) {\n  console.log(slug(' C '));\n}\n",
                vec![
                    "if (require.main === module) {",
                    "console.log(slug(' C '));",
                ],
            ),
        ] {
            let snippet = format!("{function}{demonstration}");
            assert_eq!(
                placed_leaving(&snippet, js, "slug.js"),
                (
                    fixed.clone(),
                    left_out.iter().map(|l| (*l).to_owned()).collect()
                ),
                "{snippet}"
            );
        }
        for line in [
            "const LIMIT = 3;",
            "console.log(other(1));",
            "exports.x = slug(1);",
        ] {
            let snippet = format!("{function}\n{line}\n");
            assert!(
                refusal(&snippet, js, "slug.js").contains(&format!("the line `{line}`")),
                "{line}"
            );
        }
    }

    #[test]
    fn a_compiled_main_is_left_out_only_of_a_file_that_is_no_program() {
        let lib = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
        let snippet = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn main() {\n    \
                       println!(\"{}\", add(2, 3));\n}\n";
        let (content, left_out) = placed_leaving(snippet, lib, "src/lib.rs");
        assert_eq!(content, lib.replace("a - b", "a + b"));
        assert_eq!(left_out, ["fn main() {", "println!(\"{}\", add(2, 3));"]);
        assert!(shows_compiled_main(snippet));
        // The program's own file: `main` is looked for, and is not there.
        assert_eq!(
            refusal(snippet, lib, "src/main.rs"),
            "`main` is not defined in src/main.rs"
        );
        // A file with a `main` of its own: the shown one replaces it.
        let program = format!("{lib}\nfn main() {{\n    println!(\"{{}}\", add(1, 1));\n}}\n");
        let (content, left_out) = placed_leaving(snippet, &program, "src/lib.rs");
        assert_eq!(
            content,
            program
                .replace("a - b", "a + b")
                .replace("add(1, 1)", "add(2, 3)")
        );
        assert!(left_out.is_empty());
        // Go, in a package that is not `main`.
        let go = "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n";
        let snippet = "func Add(a, b int) int {\n\treturn a + b\n}\n\nfunc main() {\n\t\
                       fmt.Println(Add(2, 3))\n}\n";
        let (content, left_out) = placed_leaving(snippet, go, "calc.go");
        assert_eq!(content, go.replace("a - b", "a + b"));
        assert_eq!(left_out, ["func main() {", "fmt.Println(Add(2, 3))"]);
        let go_main = go.replace("package calc", "package main");
        assert!(refusal(snippet, &go_main, "calc.go").contains("`main` is not defined"));
    }

    #[test]
    fn a_snippet_defining_every_function_covers_all() {
        let all = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n";
        assert_eq!(place(all, CALC, "f").map(|p| p.covers_all), Ok(true));
    }

    #[test]
    fn comments_and_lines_the_file_has_are_allowed_outside_functions() {
        let snippet =
            "import math\n# ... the rest is unchanged\ndef sub(a, b):\n    return b - a\n";
        assert_eq!(
            placed(snippet, CALC),
            CALC.replace(
                "def sub(a, b):\n    return a - b",
                "def sub(a, b):\n    return b - a"
            )
        );
    }

    #[test]
    fn definitions_are_recognised_by_their_keyword_or_their_block() {
        for (line, name) in [
            ("def f(x):", Some("f")),
            ("    async def fetch(url):", Some("fetch")),
            ("pub(crate) fn run<T>(t: T) {", Some("run")),
            ("pub async unsafe fn go() {", Some("go")),
            ("export default function App() {", Some("App")),
            ("function* gen() {", Some("gen")),
            ("  area(r) {", Some("area")),
            ("greet() {", Some("greet")),
            ("if (x) {", None),
            ("} else if (y) {", None),
            ("main()", None),
            ("print(f(x))", None),
            ("definitely(x)", None),
            ("fn", None),
            ("def 9(x):", None),
        ] {
            assert_eq!(defined_name(line), name, "{line}");
        }
    }

    #[test]
    fn a_one_line_or_multi_line_python_signature_has_its_extent() {
        let lines = ["def f(", "    a,", "):", "    return a", "", "x = 1"];
        assert_eq!(extent(&lines, 0), Some(4));
        assert_eq!(extent(&["def f(): return 1", "g()"], 0), Some(1));
        assert_eq!(extent(&["def f():", "x = 1"], 0), None);
        assert_eq!(extent(&["fn f();", "fn g() {}"], 0), None);
        assert_eq!(extent(&["fn g() { \"}\" }", "x"], 0), Some(1));
        assert_eq!(extent(&["fn g() { '}' } // }", "x"], 0), Some(1));
    }

    #[test]
    fn the_minimal_edit_is_unique_and_whole_lines() {
        assert_eq!(minimal_edit("a\nb\n", "a\nb\n"), None);
        assert_eq!(
            minimal_edit("a\nb\nc\n", "a\nB\nc\n"),
            Some(("b\n".into(), "B\n".into()))
        );
        // `x` alone is twice in the file: the edit takes the line before with it.
        assert_eq!(
            minimal_edit("x\ny\nx\n", "x\ny\nX\n"),
            Some(("y\nx\n".into(), "y\nX\n".into()))
        );
        // A pure insertion takes a line next to it, since old text must not be empty.
        assert_eq!(
            minimal_edit("a\nc\n", "a\nb\nc\n"),
            Some(("a\n".into(), "a\nb\n".into()))
        );
        assert_eq!(minimal_edit("", "x\n"), Some((String::new(), "x\n".into())));
    }
}
