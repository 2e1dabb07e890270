//! Lines of an answer that only demonstrate the code it changes (a call printed, a main
//! block, an example `main`), which [`place`](super::place) leaves out.

use std::ops::Range;

use super::{Definition, all_definitions, brace_extent, identifier, indent_width};

/// The blocks of a snippet (`shown`) that only demonstrate its functions, by line range:
/// a Rust or Go `main` function where the file (`file`, at `path`) has none and is no
/// program's main file (taken out of `functions`, so that it is not looked for in the
/// file), and a Python `if __name__ == "__main__":` or Node `if (require.main === module)`
/// block where the file has no such block. A `main` is taken out only beside another
/// function: a snippet that is `main` alone is no demonstration of anything.
pub(super) fn demonstration_blocks(
    shown: &[&str],
    functions: &mut Vec<Definition<'_>>,
    file: &[&str],
    path: &str,
) -> Vec<Range<usize>> {
    let mut blocks = Vec::new();
    let has_main = all_definitions(file).iter().any(|d| d.name == "main");
    if !has_main && !is_main_file(path, file) && functions.iter().any(|f| f.name != "main") {
        functions.retain(|function| {
            let demonstrates = function.name == "main" && is_compiled_main(shown[function.start]);
            if demonstrates {
                blocks.push(function.start..function.end);
            }
            !demonstrates
        });
    }
    if !file.iter().any(|line| is_main_guard(line.trim())) {
        let mut at = 0;
        while at < shown.len() {
            if indent_width(shown[at]) == 0 && is_main_guard(shown[at].trim()) {
                let end = guard_extent(shown, at);
                blocks.push(at..end);
                at = end;
            } else {
                at += 1;
            }
        }
    }
    blocks
}

/// Whether the file at `path`, whose lines are `file`, is a program's entry point, where a
/// `main` is the program's, not an example: Rust's `main.rs`, `build.rs` or `src/bin/`,
/// Go's `package main`.
fn is_main_file(path: &str, file: &[&str]) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(name, "main.rs" | "main.go" | "build.rs")
        || path.contains("src/bin/")
        || file.iter().any(|line| line.trim() == "package main")
}

/// Whether a definition's first line is a Rust `fn main(` or a Go `func main(`.
pub(super) fn is_compiled_main(line: &str) -> bool {
    let text = line.trim_start();
    ["fn main(", "func main("]
        .iter()
        .any(|start| text.starts_with(start))
}

/// Whether `text` opens a block that runs only when the file is run as a program:
/// `if __name__ == "__main__":` (either quote, either order) or
/// `if (require.main === module) {`.
fn is_main_guard(text: &str) -> bool {
    let compact: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| if c == '\'' { '"' } else { c })
        .collect();
    [
        "if__name__==\"__main__\"",
        "if\"__main__\"==__name__",
        "if(require.main===module)",
    ]
    .iter()
    .any(|guard| compact.starts_with(guard))
}

/// One past the last line of the main guard that starts on line `start`: the lines
/// indented under it (Python), or up to its closing brace.
fn guard_extent(lines: &[&str], start: usize) -> usize {
    if lines[start].trim_end().ends_with(':') {
        let mut last = start + 1;
        for (number, line) in lines.iter().enumerate().skip(start + 1) {
            if line.trim().is_empty() {
                continue;
            }
            if indent_width(line) == 0 {
                break;
            }
            last = number + 1;
        }
        last
    } else {
        brace_extent(lines, start).unwrap_or(start + 1)
    }
}

/// Whether a top-level line of a snippet, `text`, only demonstrates the functions it
/// shows (`names`): a call of one of them, bare, printed, logged or asserted
/// (`print(add(2, 3))  # 5`, `console.log(slug(" A "));`, `assert add(2, 3) == 5`), or a
/// printout of a name an earlier such line bound. A line binding a call's result
/// (`result = add(2, 3)`) demonstrates only when the name is nowhere in the file (`file`)
/// nor in the snippet's functions (`functions` of `shown`): a name they use is one the
/// change needs. Such a name is added to `bound`.
pub(super) fn is_demonstration<'a>(
    text: &'a str,
    names: &[&str],
    bound: &mut Vec<&'a str>,
    file: &[&str],
    shown: &[&str],
    functions: &[Definition<'_>],
) -> bool {
    let code = without_comment(text)
        .trim_end()
        .trim_end_matches(';')
        .trim_end();
    let calls_shown = || names.iter().any(|name| calls(code, name));
    let printed = PRINTERS.iter().any(|printer| code.starts_with(printer)) && code.ends_with(')');
    if printed || code.starts_with("assert ") || code.starts_with("assert(") {
        return calls_shown() || bound.iter().any(|name| has_word(code, name));
    }
    if code.ends_with(')')
        && names
            .iter()
            .any(|name| code.starts_with(name) && code[name.len()..].starts_with('('))
    {
        return true;
    }
    let binding = ["let ", "const ", "var "]
        .iter()
        .find_map(|keyword| code.strip_prefix(keyword))
        .unwrap_or(code);
    let Some((target, value)) = binding.split_once('=') else {
        return false;
    };
    let Some(target) = identifier(target.trim()).filter(|name| *name == target.trim()) else {
        return false;
    };
    let used = file.iter().any(|line| has_word(line, target))
        || functions
            .iter()
            .flat_map(|f| &shown[f.start..f.end])
            .any(|line| has_word(line, target));
    let value_calls = names.iter().any(|name| calls(value, name));
    if value.starts_with('=') || used || !value_calls {
        return false;
    }
    bound.push(target);
    true
}

/// The calls that print or log their arguments, as a demonstration line starts.
const PRINTERS: [&str; 8] = [
    "print(",
    "console.log(",
    "console.info(",
    "console.assert(",
    "println!(",
    "fmt.Println(",
    "fmt.Printf(",
    "System.out.println(",
];

/// A line of code without the `#` or `//` comment that ends it (outside a string).
fn without_comment(line: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (None, '#') => return &line[..at],
            (None, '/') if previous == '/' => return &line[..at - 1],
            (None, '"' | '\'' | '`') => quote = Some(c),
            (Some(open), _) if c == open && previous != '\\' => quote = None,
            _ => {}
        }
        previous = c;
    }
    line
}

/// Whether `code` calls the function `name`: the name, not part of a longer one nor a
/// method of something else, followed by `(`.
fn calls(code: &str, name: &str) -> bool {
    code.match_indices(name).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + name.len()..].trim_start();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '.')
            && after.starts_with('(')
    })
}

/// Whether `word` occurs in `text` as a whole identifier.
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
        !part(before) && !part(after)
    })
}

/// What the model is told of the lines of a block for `path` that were left out because
/// they only demonstrate the change, in one line; `None` when there are none.
pub(crate) fn left_out_note(path: &str, lines: &[String]) -> Option<String> {
    const QUOTED: usize = 3;
    if lines.is_empty() {
        return None;
    }
    let mut quoted: Vec<String> = lines
        .iter()
        .take(QUOTED)
        .map(|line| format!("`{line}`"))
        .collect();
    if lines.len() > QUOTED {
        quoted.push(format!("and {} more", lines.len() - QUOTED));
    }
    Some(format!(
        "Left out of the change to {path}, as they only show the code in use (a call of a \
         function the block shows, a main block) and are not part of the file: {}.",
        quoted.join(", ")
    ))
}
