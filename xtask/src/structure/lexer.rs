//! The simple lexer of the task: comments and literals blanked, and functions counted from
//! their `fn` to their closing brace.

/// `text` with every comment and the contents of every string and character literal
/// replaced by spaces, line breaks kept: what is left is code, on the lines it was on.
pub(super) fn blank_comments_and_strings(text: &str) -> String {
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
pub(super) fn raw_string_start(chars: &[char], i: usize) -> Option<usize> {
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
pub(super) fn char_literal_len(chars: &[char], i: usize) -> Option<usize> {
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
pub(super) struct Function {
    /// Its name.
    pub(super) name: String,
    /// From the line of `fn` to the line of its closing brace, both counted.
    pub(super) lines: usize,
}

/// Every function with a body in `code` (comments and strings blanked), nested ones too.
pub(super) fn functions(code: &str) -> Vec<Function> {
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
pub(super) fn is_word_start(chars: &[char], i: usize) -> bool {
    let previous = i.checked_sub(1).map(|at| chars[at]);
    !previous.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// The line of the brace that closes the body of the function whose signature starts at
/// `start`, on line `line`; `None` for a declaration without a body (`fn f();`).
pub(super) fn body_end_line(chars: &[char], start: usize, line: usize) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
