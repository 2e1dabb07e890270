//! The secrets that a name or a place makes secret: `password = …`, `"token": "…"`,
//! `PGPASSWORD=…`, and the password in a URL's userinfo.
//!
//! A shape alone cannot tell these apart from ordinary code and prose, so the name and the
//! value are read together. The name must hold a secret word (`password`, `token`, …); the
//! value must then read as a literal that could be one, and the less the context says it is
//! a literal, the more the value must look random:
//!
//! 1. never a secret: an empty value, a marker, code (a call, an index, a dotted name, a
//!    variable such as `$TOKEN`, a keyword such as `None`), a placeholder (`value`,
//!    `changeme`, `<token>`, `***`, the name's own word as in `password=password`) or a
//!    type (`str`, `String`, `Option<…>`);
//! 2. a quoted value of a strong name (`password`, `token`, `secret`, `api_key`, …), or
//!    an unquoted one in a configuration's shape (`NAME=value` with an upper-case name, a
//!    `--flag=value`, YAML's `name: value`): a secret if at least 4 characters long;
//! 3. an unquoted value of a strong name elsewhere (after `name = `, where code names a
//!    variable): a secret if it reads as a literal, not a name: at least 6 characters,
//!    one a digit or a character no name holds, and not a snake_case name;
//! 4. anything else (a name whose only secret word is `key`): a secret only if it looks
//!    random: at least 8 characters, not only letters, and an entropy of at least 3 bits
//!    per character.
//!
//! So `key=value`, `token: str`, `password = None` and `api_key=os.environ[...]` stay,
//! while `PGPASSWORD=hunter22`, `"pwd": "s3cret!"` and `password: hunter22` go.

use std::ops::Range;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::REDACTED;
use super::rules::entropy;

/// Where a value was found, and what kind of secret it is.
pub(crate) struct Found {
    pub(crate) range: Range<usize>,
    pub(crate) rule: &'static str,
}

/// Words that make a name secret on their own, compared ignoring case. Plurals are left
/// out on purpose (`max_tokens`, `sort_keys` name counts and flags), `credentials` aside.
const STRONG_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "secretkey",
    "authtoken",
    "accesstoken",
    "refreshtoken",
    "clientsecret",
];

/// Word endings that make a run-together name secret: `PGPASSWORD`, `dbpasswd`, `ghtoken`.
const STRONG_SUFFIXES: &[&str] = &["password", "passwd", "apikey"];

/// Words that may follow the secret word at the end of a name without changing what it
/// names (`SECRET_KEY_BASE`, `password_value`); any other (`token_type`, `key_size`,
/// `PASSWORD_FILE`) names something about the secret, not the secret.
const TRAILING_WORDS: &[&str] = &[
    "value", "raw", "plain", "base", "b64", "base64", "hex", "data",
];

/// Parts of a value that say it is an example, not a secret.
const EXAMPLE_PARTS: &[&str] = &[
    "example",
    "dummy",
    "fake",
    "foobar",
    "placeholder",
    "changeme",
    "sample",
    "xxxx",
    "****",
];

/// Words before `key` that make it a credential's name (`api_key`, `private_key`), where a
/// bare `key` (`sort key`, `primary_key`, `key=value`) usually is not.
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "private",
    "secret",
    "auth",
    "client",
    "master",
    "signing",
    "encryption",
    "session",
    "account",
    "app",
    "license",
    "consumer",
    "subscription",
    "service",
    "storage",
    "shared",
    "x",
];

/// Values that stand for a secret without being one, compared ignoring case.
const PLACEHOLDERS: &[&str] = &[
    "value",
    "values",
    "secret",
    "password",
    "passwd",
    "pwd",
    "pass",
    "token",
    "key",
    "apikey",
    "changeme",
    "change_me",
    "changeit",
    "example",
    "dummy",
    "placeholder",
    "redacted",
    "hidden",
    "masked",
    "none",
    "null",
    "nil",
    "true",
    "false",
    "undefined",
    "empty",
    "default",
    "required",
    "optional",
    "str",
    "string",
    "bytes",
    "int",
    "bool",
    "any",
    "secretstr",
    "text",
    "xxx",
    "todo",
    "fixme",
    "foo",
    "bar",
    "baz",
    "test",
    "yes",
    "no",
    "self",
    "this",
    "env",
    "auto",
    "unset",
    "notset",
    "missing",
    "n/a",
];

/// The smallest secret in a configuration's shape.
const MIN_LITERAL: usize = 4;

/// The smallest literal after a strong name in code.
const MIN_LITERAL_CODE: usize = 8;

/// The smallest random-looking value, and its entropy.
const MIN_RANDOM: usize = 8;
const MIN_RANDOM_ENTROPY: f64 = 3.0;

/// The entropy of a value already found a secret for it to be hidden everywhere: lower,
/// since its finding already vouches for it.
const MIN_DISTINCTIVE_ENTROPY: f64 = 2.5;

struct Patterns {
    /// `name=value`, `name: value` and their quoted forms.
    assignment: Regex,
    /// `scheme://` and the authority after it (group `authority`).
    url_authority: Regex,
    /// A whole value that is a dotted name such as `settings.SECRET`: code, not a secret.
    dotted_name: Regex,
    /// An identifier.
    identifier: Regex,
    /// A PascalCase name: capitalised words.
    pascal_case: Regex,
    /// A field of a format string: `{}`, `{0}`, `{name}`, `%s`, `%(name)s`.
    format: Regex,
}

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    let compile =
        |pattern: &str| Regex::new(pattern).expect("the built-in patterns are valid regexes");
    Patterns {
        assignment: compile(concat!(
            r#"(?P<name>"[A-Za-z0-9_.-]+"|'[A-Za-z0-9_.-]+'|[A-Za-z_][A-Za-z0-9_.-]*)"#,
            r"(?P<sep>[ \t]*[=:][ \t]*)",
            r#"(?P<value>"[^"\n]*"|'[^'\n]*'|[^\s"'`,;:=][^\s"'`,;]*)"#,
        )),
        url_authority: compile(r#"\b[A-Za-z][A-Za-z0-9+.-]*://(?P<authority>[^\s/?"'<>`\\]*)"#),
        dotted_name: compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$"),
        identifier: compile(r"^[A-Za-z_][A-Za-z0-9_]*$"),
        pascal_case: compile(r"^(?:[A-Z][a-z][a-z0-9]*)+$"),
        format: compile(
            r"\{[A-Za-z0-9_]*\}|%\([A-Za-z0-9_]+\)[sdr]|(?:^|[^A-Za-z0-9])%[sdr](?:$|[^A-Za-z0-9])",
        ),
    }
});

/// How strongly a name says its value is secret.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Strength {
    None,
    /// Only a bare `key`: the value must look random.
    Weak,
    Strong,
}

/// The passwords in every URL's userinfo (`user:password@`).
pub(crate) fn url_passwords(text: &str, found: &mut Vec<Found>) {
    if !text.contains("://") {
        return;
    }
    for caps in PATTERNS.url_authority.captures_iter(text) {
        let Some(authority) = caps.name("authority") else {
            continue;
        };
        let Some((userinfo, _host)) = authority.as_str().rsplit_once('@') else {
            continue;
        };
        let Some((user, password)) = userinfo.split_once(':') else {
            continue;
        };
        if password.is_empty()
            || password.starts_with("[REDACTED")
            || password.starts_with('$')
            || password.contains('{')
            || password.eq_ignore_ascii_case(user)
            || PLACEHOLDERS.contains(&password.to_ascii_lowercase().as_str())
        {
            continue;
        }
        let start = authority.start() + user.len() + 1;
        found.push(Found {
            range: start..start + password.len(),
            rule: "url-password",
        });
    }
}

/// The values of secret-named assignments.
pub(crate) fn assignments(text: &str, found: &mut Vec<Found>) {
    let assignment = &PATTERNS.assignment;
    let mut at = 0;
    while let Some(caps) = assignment.captures_at(text, at) {
        let (name, sep, value) = parts(&caps);
        // `scheme://user:password@host` is a URL's userinfo, whose password the URL rule
        // finds without the host.
        let in_url = text[..name.start].ends_with("://");
        if in_url {
            at = value.start();
            continue;
        }
        if let Some(inner) = secret_value(text, name.clone(), sep, value.as_str()) {
            let start = value.start() + inner.start;
            found.push(Found {
                range: start..value.start() + inner.end,
                rule: "generic-secret",
            });
            at = value.end();
        } else {
            // Resume inside the value: `config: api_key=abc` holds a second assignment that
            // a match of the first must not hide.
            at = value.start();
        }
    }
}

fn parts<'t>(caps: &Captures<'t>) -> (Range<usize>, &'t str, regex::Match<'t>) {
    let name = caps
        .name("name")
        .expect("the assignment pattern always captures a name");
    let sep = caps
        .name("sep")
        .expect("the assignment pattern always captures a separator");
    let value = caps
        .name("value")
        .expect("the assignment pattern always captures a value");
    (name.range(), sep.as_str(), value)
}

/// Where in `value` the secret is (inside its quotes), if the assignment of `value` to the
/// name at `name` in `text` holds one.
fn secret_value(text: &str, name: Range<usize>, sep: &str, value: &str) -> Option<Range<usize>> {
    let name_text = text[name.clone()].trim_matches(['"', '\'']);
    let strength = strength(name_text);
    if strength == Strength::None {
        return None;
    }
    let quoted = value.starts_with(['"', '\'']);
    let env_style = is_env_style(text, &name, sep);
    let inner = if quoted {
        1..value.len().saturating_sub(1).max(1)
    } else if sep == "=" && !env_style {
        // `?key=value&next=1`: in a query string, `&` starts the next parameter.
        0..value.find('&').unwrap_or(value.len())
    } else {
        0..value.len()
    };
    let literal = &value[inner.clone()];
    // In `NAME=value`, as a shell reads it, only `$` makes the value code.
    if is_not_a_secret(name_text, literal, quoted || env_style) {
        return None;
    }
    // YAML's `name: value` is a configuration; `"name": value` is not JSON (whose bare
    // values are numbers and keywords) but code, naming a variable.
    let name_quoted = text[name.clone()].starts_with(['"', '\'']);
    let yaml = sep.trim() == ":"
        && !sep.starts_with([' ', '\t'])
        && !name_quoted
        && starts_line(text, name.start);
    // `Token: FG_DEFAULT,` is a constant's name, in YAML as in code.
    if yaml && !quoted && is_snake_name(literal) && !literal.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let configuration = quoted || env_style || yaml;
    let secret = match strength {
        Strength::Strong if configuration => {
            literal.chars().count() >= MIN_LITERAL && !is_prose(literal)
        }
        Strength::Strong => looks_literal(literal) || looks_random(literal),
        _ => looks_random(literal),
    };
    secret.then_some(inner)
}

/// True if and only if only indentation or a YAML list's `- ` comes before `at` on its
/// line: `name: value` there is YAML, where after `pub const` or `fn f(` it is a type.
fn starts_line(text: &str, at: usize) -> bool {
    let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line..at]
        .trim_start()
        .trim_start_matches("- ")
        .trim()
        .is_empty()
}

/// True if and only if the assignment is in a configuration's shape: `NAME=value` with
/// no space around `=` and an upper-case name, or a command-line `--name=value`.
fn is_env_style(text: &str, name: &Range<usize>, sep: &str) -> bool {
    if sep != "=" {
        return false;
    }
    let name_text = &text[name.clone()];
    let flag = text[..name.start].ends_with('-');
    let upper = name_text.bytes().any(|b| b.is_ascii_uppercase())
        && !name_text.bytes().any(|b| b.is_ascii_lowercase());
    flag || upper
}

/// How strongly `name` says its value is a secret.
fn strength(name: &str) -> Strength {
    let words: Vec<String> = words(name).map(str::to_ascii_lowercase).collect();
    let strong = words.iter().enumerate().any(|(i, word)| {
        let last = words[i + 1..]
            .iter()
            .all(|after| TRAILING_WORDS.contains(&after.as_str()));
        last && (STRONG_WORDS.contains(&word.as_str())
            || STRONG_SUFFIXES
                .iter()
                .any(|suffix| word.len() > suffix.len() && word.ends_with(suffix))
            || word == "key"
                && i > 0
                && (KEY_QUALIFIERS.contains(&words[i - 1].as_str())
                    || words[i - 1].ends_with("api")))
    });
    if strong {
        Strength::Strong
    } else if words
        .iter()
        .any(|word| ["key", "credential", "credentials"].contains(&word.as_str()))
    {
        Strength::Weak
    } else {
        Strength::None
    }
}

/// True if and only if `value`, assigned to `name`, is code, a placeholder, a type or
/// already redacted: nothing to hide.
fn is_not_a_secret(name: &str, value: &str, quoted: bool) -> bool {
    let lower = value.to_ascii_lowercase();
    if value.is_empty()
        || value.starts_with(REDACTED.trim_end_matches(']'))
        || PLACEHOLDERS.contains(&lower.as_str())
        || words(value).all(|part| words(name).any(|word| word.eq_ignore_ascii_case(part)))
        || EXAMPLE_PARTS.iter().any(|part| lower.contains(part))
        || lower.starts_with("your")
        || lower.starts_with("<") && lower.ends_with(">")
        || value.starts_with('$')
        || value.starts_with("%(")
        || value.contains("{{")
        || value.contains("...")
        || value
            .chars()
            .all(|c| c == value.chars().next().unwrap_or(c))
        || value.chars().all(|c| !c.is_alphanumeric())
        || is_words(value)
    {
        return true;
    }
    if quoted {
        // `"{}"`, `"%s"`: a format, filled in by code.
        // `"{}"`, `"latest/{0}"`, `"%s"`: a format, filled in by code; `"next_token"`: a
        // name of something.
        let format = PATTERNS.format.is_match(value);
        let snake_name = PATTERNS.identifier.is_match(value)
            && value.contains('_')
            && !value
                .bytes()
                .any(|b| b.is_ascii_digit() || b.is_ascii_uppercase());
        return format || snake_name;
    }
    // `true\r\nHost`: text of an escaped string in code, not a value of its own.
    is_code(value) || is_type(value) || value.contains('\\')
}

/// True if and only if `value` is lower-case words joined by `-`, `_` or a space
/// (`refresh-token`, `pydantic-mypy`, `development key`): a name or a description.
/// A passphrase of plain words is missed by this; random secrets are not.
fn is_words(value: &str) -> bool {
    let parts: Vec<&str> = value.split(['-', '_', ' ']).collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase()))
}

/// True if and only if `value` is one that, once found, is hidden wherever it appears
/// (see [`Redactor`](super::Redactor)): long and random enough that it is no word or name
/// of the code around it. A value found only by its name (`password = hunter22`) is
/// hidden there and not everywhere.
pub(crate) fn is_distinctive(value: &str) -> bool {
    let mixed_case = value.bytes().any(|b| b.is_ascii_lowercase())
        && value.bytes().any(|b| b.is_ascii_uppercase());
    let digit = value.bytes().any(|b| b.is_ascii_digit());
    let identifier = PATTERNS.identifier.is_match(value);
    value.len() >= MIN_RANDOM
        && entropy(value) >= MIN_DISTINCTIVE_ENTROPY
        && !is_snake_name(value)
        && !is_type(value)
        && (!identifier || mixed_case && digit)
}

/// True if and only if an unquoted `value` reads as code rather than a literal: it holds a
/// bracket, is a dotted name, or starts as a reference or a pointer does.
fn is_code(value: &str) -> bool {
    value.contains(['(', ')', '[', ']', '{', '}', '<', '>'])
        || value.starts_with(['&', '*', '@', '!'])
        || value.contains("::")
        || PATTERNS.dotted_name.is_match(value)
}

/// True if and only if `value` reads as a type's name: `String`, `SecretStr`, `Token`,
/// `Utf8SuffixKey`: capitalised words, each a capital and then lower-case letters or digits.
fn is_type(value: &str) -> bool {
    PATTERNS.pascal_case.is_match(value)
}

/// True if and only if `value` reads as a sentence: a description of a secret, not one.
fn is_prose(value: &str) -> bool {
    value.split_whitespace().count() >= 3
}

/// True if and only if an unquoted `value` after a strong name in code reads as a literal
/// rather than a variable's name: it holds a digit or a character no name holds
/// (`hunter22`, `pw-1234`), and is not a snake_case name (`secret_v2`).
fn looks_literal(value: &str) -> bool {
    let unusual = value
        .bytes()
        .any(|b| b.is_ascii_digit() || !(b.is_ascii_alphanumeric() || b == b'_'));
    value.len() >= MIN_LITERAL_CODE && unusual && !is_snake_name(value)
}

/// True if and only if `value` looks like a random token: long, not only letters, and of
/// high entropy. Identifiers in code (`key = cache_key`) are not.
fn looks_random(value: &str) -> bool {
    let mixed = value.bytes().any(|b| !b.is_ascii_alphabetic());
    value.len() >= MIN_RANDOM
        && mixed
        && !value.contains(char::is_whitespace)
        && entropy(value) >= MIN_RANDOM_ENTROPY
        && !is_snake_name(value)
}

/// True if and only if `value` is an identifier with a `_` in it whose parts are each of
/// one case (`user_id_2`, `_bindgen_ty_29`, `FG_DEFAULT`): in code, a name. Random
/// tokens mix cases within a part (`Sx_DcaawkJqz54im`).
fn is_snake_name(value: &str) -> bool {
    PATTERNS.identifier.is_match(value)
        && value.contains('_')
        && value.split('_').all(|part| {
            !(part.bytes().any(|b| b.is_ascii_lowercase())
                && part.bytes().any(|b| b.is_ascii_uppercase()))
        })
}

/// The words of an identifier: split at non-alphanumerics and camelCase humps
/// (`XApiKey` → `X`, `Api`, `Key`; `APIKey` → `API`, `Key`; `oauth2Token` →
/// `oauth2`, `Token`).
pub(crate) fn words(name: &str) -> impl Iterator<Item = &str> {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .flat_map(|part| {
            let bytes = part.as_bytes();
            let mut starts = vec![0];
            for i in 1..bytes.len() {
                // A capital starts a word after a lowercase letter or a digit
                // (`apiKey`, `oauth2Token`), or before a lowercase letter
                // (the `K` of `APIKey`).
                let after_lower =
                    bytes[i - 1].is_ascii_lowercase() || bytes[i - 1].is_ascii_digit();
                let before_lower = bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase);
                if bytes[i].is_ascii_uppercase() && (after_lower || before_lower) {
                    starts.push(i);
                }
            }
            starts.push(bytes.len());
            starts
                .windows(2)
                .map(|w| &part[w[0]..w[1]])
                .collect::<Vec<_>>()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! word_splits {
        ($($name:literal => [$($word:literal),*],)*) => {
            #[test]
            fn word_splitting() {
                $(assert_eq!(words($name).collect::<Vec<&str>>(), vec![$($word),*] as Vec<&str>, "{}", $name);)*
            }
        };
    }

    word_splits! {
        "API_KEY" => ["API", "KEY"],
        "apiKey" => ["api", "Key"],
        "APIKey" => ["API", "Key"],
        "X-Api-Key" => ["X", "Api", "Key"],
        "a.b" => ["a", "b"],
        "abc" => ["abc"],
        "ABC" => ["ABC"],
        "aB" => ["a", "B"],
        "ABc" => ["A", "Bc"],
        "AB" => ["AB"],
        "oauth2Token" => ["oauth2", "Token"],
        "v2" => ["v2"],
        "v2K" => ["v2", "K"],
        "A1b" => ["A1b"],
        "" => [""],
    }

    #[test]
    fn name_strength() {
        assert_eq!(strength("PGPASSWORD"), Strength::Strong);
        assert_eq!(strength("api_key"), Strength::Strong);
        assert_eq!(strength("X-Api-Key"), Strength::Strong);
        assert_eq!(strength("primary_key"), Strength::Weak);
        assert_eq!(strength("key"), Strength::Weak);
        assert_eq!(strength("max_tokens"), Strength::None);
        assert_eq!(strength("keyboard"), Strength::None);
        assert_eq!(strength("password"), Strength::Strong);
        assert_eq!(strength("pwd"), Strength::Strong);
    }

    #[test]
    fn randomness() {
        assert!(looks_random("a8Fk29xQ-Lm3"));
        assert!(!looks_random("cache_key"));
        assert!(!looks_random("short1"));
        assert!(!looks_random("abcdefghij"));
        assert!(!looks_random("11111111"));
        assert!(!looks_random("user_id_2x"));
        assert!(!looks_random("_bindgen_ty_29"));
        assert!(is_distinctive("oBfddQ9QQb"));
        assert!(is_distinctive("k8#Qz!x2Lp9w"));
        assert!(!is_distinctive("_bindgen_ty_29"));
        assert!(!is_distinctive("getValue"));
        assert!(!is_distinctive("Utf8SuffixKey"));
        assert!(is_type("Utf8SuffixKey"));
        assert!(!is_type("AKIAIOSFODNN7"));
    }
}
