//! Redaction of secrets from text a model will see.
//!
//! Output of `env`, `cat .env` or a traceback can carry a key into the
//! transcript and the model provider's logs. Redaction replaces what looks like
//! a secret with [`REDACTED`] before that happens.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use crate::env::is_secret_name;

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// The shortest secret value redacted literally: a shorter value (`1`, `true`)
/// would blank out ordinary text wherever it appears.
const MIN_LITERAL_LEN: usize = 6;

/// Words that make the name in `name=value`, `name: value` or
/// `"name": "value"` look secret, compared ignoring case. Plurals are left out
/// on purpose: `max_tokens` and `sort_keys` name counts and flags.
const SECRET_KEY_WORDS: &[&str] = &[
    "key",
    "apikey",
    "accesskey",
    "privatekey",
    "secretkey",
    "token",
    "accesstoken",
    "authtoken",
    "refreshtoken",
    "secret",
    "clientsecret",
    "password",
    "passwd",
    "passphrase",
    "credential",
    "credentials",
];

/// Redacts secret-looking text with the built-in patterns.
///
/// Equivalent to `Redactor::new().redact(text)`; see [`Redactor`] for what is
/// redacted. Returns `text` unchanged (borrowed) when nothing matched.
///
/// ```
/// use harness_exec::redact;
///
/// assert_eq!(redact("API_KEY=abc123 user=me"), "API_KEY=[REDACTED] user=me");
/// assert_eq!(redact("Authorization: Bearer abcdefgh12345678"), "Authorization: Bearer [REDACTED]");
/// assert_eq!(redact("max_tokens: 4096"), "max_tokens: 4096");
/// ```
pub fn redact(text: &str) -> Cow<'_, str> {
    Redactor::new().redact(text)
}

/// Replaces secrets in text with [`REDACTED`].
///
/// Redacted, in this order:
///
/// 1. the literal secret values the redactor knows (see [`Redactor::from_vars`]
///    and [`Redactor::with_secret`]), wherever they appear;
/// 2. PEM private-key blocks, from `-----BEGIN … PRIVATE KEY-----` to the
///    matching `END` line, or to the end of the text when the `END` line is
///    missing; and the base64 lines just above a lone `END` line (the end of
///    a block whose start was cut off);
/// 3. token shapes: AWS access key ids (`AKIA…`, `ASIA…`), GitHub tokens
///    (`ghp_…`, `gho_…`, `ghu_…`, `ghs_…`, `ghr_…`, `github_pat_…`), Slack tokens
///    (`xoxb-…` and the other `xox?-` kinds), `sk-…` API keys, and JWTs
///    (`eyJ….eyJ….…`);
/// 4. the credential after `Bearer`;
/// 5. the password of a URL with userinfo (`postgres://app:[REDACTED]@db/app`),
///    for any scheme; the user and the host stay visible. As URL parsers do,
///    the authority ends at `/`, `?`, `#`, whitespace, a quote, `<`, `>` or a
///    backslash, the userinfo at its last `@` and the user at the first `:`,
///    so a password may hold `@` and `:`; one holding a character that ends
///    the authority is not a password any parser would read, and is redacted
///    only up to it. `user@host` and `ssh://git@host`, without a password,
///    are left alone;
/// 6. the value in `name=value`, `name: value`, `"name": "value"` and
///    `'name': 'value'` when a word of the name is a secret word: `key`,
///    `token`, `secret`, `password`, `passwd`, `passphrase`, `credential(s)`,
///    or a compound such as `apikey`. Words are split at `_`, `-`, `.` and
///    camelCase humps, so `API_KEY`, `apiKey` and `X-Api-Key` match while
///    `max_tokens`, `KEYBOARD` and `monkey` do not. A quoted value keeps its
///    quotes; an unquoted one ends at whitespace, a quote, `,` or `;`. An
///    unquoted value that reads as code rather than a literal is left alone:
///    one holding a bracket (`os.environ['API_KEY']`, `get_token()`), a
///    dotted name (`settings.SECRET`), or `None`/`null`/`nil`/`true`/`false`/
///    `undefined`. Source files are read through the same redaction, and a
///    model that sees `API_KEY = [REDACTED]'X']` can no longer edit that line.
///
/// Redaction is for display only: redacted text is lossy and must never be
/// written back to a file.
///
/// ```
/// use harness_exec::Redactor;
///
/// let redactor = Redactor::from_vars([("OLLAMA_API_KEY", "s3cr3t-value"), ("HOME", "/home/me")]);
/// assert_eq!(redactor.redact("key is s3cr3t-value in /home/me"), "key is [REDACTED] in /home/me");
/// ```
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    /// Literal secret values, longest first so that a value containing
    /// another is replaced whole.
    literals: Vec<String>,
}

impl Redactor {
    /// A redactor with the built-in patterns and no literal values.
    pub fn new() -> Redactor {
        Redactor::default()
    }

    /// A redactor that also knows the values of the secret-named variables in
    /// `vars` (names as [`is_secret_name`] defines them). Values shorter than
    /// 6 bytes or not valid UTF-8 are ignored.
    ///
    /// `Redactor::from_vars(std::env::vars_os())` knows this process's own
    /// secrets; [`Runner::new`](crate::Runner::new) starts with that one.
    pub fn from_vars<I, K, V>(vars: I) -> Redactor
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        vars.into_iter()
            .filter(|(name, _)| name.as_ref().to_str().is_some_and(is_secret_name))
            .filter_map(|(_, value)| value.as_ref().to_str().map(str::to_owned))
            .fold(Redactor::new(), Redactor::with_secret)
    }

    /// Also redacts `value` wherever it appears, unless it is shorter than 6
    /// bytes.
    pub fn with_secret(mut self, value: impl Into<String>) -> Redactor {
        let value = value.into();
        if value.len() >= MIN_LITERAL_LEN && !self.literals.contains(&value) {
            self.literals.push(value);
            self.literals
                .sort_by_key(|literal| std::cmp::Reverse(literal.len()));
        }
        self
    }

    /// `text` with every secret replaced by [`REDACTED`]; borrowed when
    /// nothing matched.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let patterns = &*PATTERNS;
        let bearer = format!("${{1}} {REDACTED}");
        let mut text = Cow::Borrowed(text);
        for literal in &self.literals {
            text = chain(text, |t| {
                if t.contains(literal.as_str()) {
                    Cow::Owned(t.replace(literal.as_str(), REDACTED))
                } else {
                    Cow::Borrowed(t)
                }
            });
        }
        text = chain(text, |t| patterns.pem_block.replace_all(t, REDACTED));
        text = chain(text, |t| patterns.pem_end.replace_all(t, REDACTED));
        text = chain(text, |t| patterns.token.replace_all(t, REDACTED));
        text = chain(text, |t| patterns.bearer.replace_all(t, bearer.as_str()));
        text = chain(text, |t| redact_url_passwords(&patterns.url_authority, t));
        chain(text, |t| redact_assignments(&patterns.assignment, t))
    }
}

/// The compiled built-in patterns.
struct Patterns {
    /// A PEM private-key block, or its start up to the end of the text.
    pem_block: Regex,
    /// The base64 lines above a lone PEM `END` line.
    pem_end: Regex,
    /// Well-known token shapes.
    token: Regex,
    /// `Bearer` and the credential after it (group 1 keeps the word).
    bearer: Regex,
    /// `scheme://` and the authority after it (group `authority`).
    url_authority: Regex,
    /// `name=value`, `name: value` and their quoted forms.
    assignment: Regex,
    /// A whole value that is a dotted name such as `settings.SECRET`: code, not a secret.
    dotted_name: Regex,
}

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    let compile =
        |pattern: &str| Regex::new(pattern).expect("the built-in patterns are valid regexes");
    Patterns {
        pem_block: compile(
            r"(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)",
        ),
        pem_end: compile(
            r"(?m)(?:^[A-Za-z0-9+/=]+\r?\n)+-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
        ),
        token: compile(concat!(
            r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
            r"|\bgh[pousr]_[A-Za-z0-9]{30,}\b",
            r"|\bgithub_pat_[A-Za-z0-9_]{22,}",
            r"|\bxox[a-z0-9]-[A-Za-z0-9-]{10,}",
            r"|\bsk-[A-Za-z0-9_-]{20,}",
            r"|\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*",
        )),
        bearer: compile(r"\b([Bb]earer|BEARER)\s+[A-Za-z0-9._~+/-]{8,}=*"),
        url_authority: compile(r#"\b[A-Za-z][A-Za-z0-9+.-]*://(?P<authority>[^\s/?#"'<>`\\]*)"#),
        dotted_name: compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$"),
        assignment: compile(concat!(
            r#"(?P<name>"[A-Za-z0-9_.-]+"|'[A-Za-z0-9_.-]+'|[A-Za-z_][A-Za-z0-9_.-]*)"#,
            r"[ \t]*[=:][ \t]*",
            r#"(?P<value>"[^"\n]*"|'[^'\n]*'|[^\s"'`,;:=][^\s"'`,;]*)"#,
        )),
    }
});

/// Replaces the password in every URL's userinfo (`user:password@`).
fn redact_url_passwords<'a>(url_authority: &Regex, text: &'a str) -> Cow<'a, str> {
    let mut out = String::new();
    let mut copied = 0;
    for caps in url_authority.captures_iter(text) {
        let Some(authority) = caps.name("authority") else {
            continue;
        };
        let Some((userinfo, _host)) = authority.as_str().rsplit_once('@') else {
            continue;
        };
        let Some((user, password)) = userinfo.split_once(':') else {
            continue;
        };
        if password.is_empty() || password == REDACTED {
            continue;
        }
        let start = authority.start() + user.len() + 1;
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        copied = start + password.len();
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Replaces the values of secret-named assignments.
fn redact_assignments<'a>(assignment: &Regex, text: &'a str) -> Cow<'a, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some(caps) = assignment.captures_at(text, at) {
        let (name, value) = name_and_value(&caps);
        if looks_secret_key(name.as_str())
            && !is_redacted(value.as_str())
            && !is_code(value.as_str())
        {
            let quote = &value.as_str()[..usize::from(value.as_str().starts_with(['"', '\'']))];
            out.push_str(&text[copied..value.start()]);
            out.push_str(quote);
            out.push_str(REDACTED);
            out.push_str(quote);
            copied = value.end();
            at = value.end();
        } else {
            // Resume inside the value: `config: api_key=abc` holds a second
            // assignment that a match of the first must not hide.
            at = value.start();
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

fn name_and_value<'t>(caps: &Captures<'t>) -> (regex::Match<'t>, regex::Match<'t>) {
    let name = caps
        .name("name")
        .expect("the assignment pattern always captures a name");
    let value = caps
        .name("value")
        .expect("the assignment pattern always captures a value");
    (name, value)
}

/// True if and only if `value` (quoted or not) is empty or already redacted.
fn is_redacted(value: &str) -> bool {
    let inner = value.trim_matches(['"', '\'']);
    inner.is_empty() || inner == REDACTED
}

/// True if and only if an unquoted `value` reads as code rather than a
/// literal: it holds a bracket, is a dotted name, or is a keyword literal.
fn is_code(value: &str) -> bool {
    if value.starts_with(['"', '\'']) {
        return false;
    }
    const KEYWORDS: &[&str] = &["None", "null", "nil", "true", "false", "undefined"];
    value.contains(['(', ')', '[', ']', '{', '}', '<', '>'])
        || KEYWORDS.contains(&value)
        || PATTERNS.dotted_name.is_match(value)
}

/// True if and only if a word of `name` is a secret word.
fn looks_secret_key(name: &str) -> bool {
    words(name).any(|word| {
        SECRET_KEY_WORDS
            .iter()
            .any(|secret| word.eq_ignore_ascii_case(secret))
    })
}

/// The words of an identifier: split at non-alphanumerics and camelCase humps
/// (`XApiKey` → `X`, `Api`, `Key`; `APIKey` → `API`, `Key`; `oauth2Token` →
/// `oauth2`, `Token`).
fn words(name: &str) -> impl Iterator<Item = &str> {
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

/// Applies `step` to `text`, keeping it borrowed while nothing changes.
fn chain<'a>(text: Cow<'a, str>, step: impl for<'b> Fn(&'b str) -> Cow<'b, str>) -> Cow<'a, str> {
    match text {
        Cow::Borrowed(text) => step(text),
        Cow::Owned(text) => {
            let changed = match step(&text) {
                Cow::Borrowed(_) => None,
                Cow::Owned(changed) => Some(changed),
            };
            Cow::Owned(changed.unwrap_or(text))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! redacts {
        ($($name:ident: $input:expr => $expected:expr;)*) => {$(
            #[test]
            fn $name() {
                let input: &str = $input;
                let expected: &str = $expected;
                assert_eq!(redact(input), expected);
                // Redacting twice changes nothing more.
                assert_eq!(redact(expected), expected);
            }
        )*};
    }

    redacts! {
        // NAME=value, NAME: value, "name": "value"
        env_assignment: "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG" => "AWS_SECRET_ACCESS_KEY=[REDACTED]";
        export_assignment: "export GITHUB_TOKEN=abc123def" => "export GITHUB_TOKEN=[REDACTED]";
        assignment_with_spaces: "password = hunter22" => "password = [REDACTED]";
        yaml_colon: "db:\n  password: hunter22\n  user: me" => "db:\n  password: [REDACTED]\n  user: me";
        header_colon: "X-Api-Key: 0123456789" => "X-Api-Key: [REDACTED]";
        json_pair: r#"{"api_key": "abc123", "user": "me"}"# => r#"{"api_key": "[REDACTED]", "user": "me"}"#;
        json_pair_without_spaces: r#"{"clientSecret":"xyz"}"# => r#"{"clientSecret":"[REDACTED]"}"#;
        python_dict: "{'refresh_token': 'r-123'}" => "{'refresh_token': '[REDACTED]'}";
        double_quoted_env_value: r#"DB_PASSWORD="two words""# => r#"DB_PASSWORD="[REDACTED]""#;
        camel_case_name: "apiKey=abcdef" => "apiKey=[REDACTED]";
        digit_before_hump: "oauth2Token: t-123456" => "oauth2Token: [REDACTED]";
        acronym_name: "OpenAIAPIKey: abcdef" => "OpenAIAPIKey: [REDACTED]";
        dotted_name: "spring.datasource.password=pw1234" => "spring.datasource.password=[REDACTED]";
        cli_flag: "--api-key=abcdef --verbose" => "--api-key=[REDACTED] --verbose";
        value_ends_at_comma: "token=abc,next=1" => "token=[REDACTED],next=1";
        value_keeps_colons_and_padding: "SECRET=ab:cd==" => "SECRET=[REDACTED]";
        nested_assignment_is_found: "config: api_key=abc123" => "config: api_key=[REDACTED]";
        several_on_one_line: "key=a1 token=b2 secret=c3" => "key=[REDACTED] token=[REDACTED] secret=[REDACTED]";
        credentials_plural: "credentials: c-1234" => "credentials: [REDACTED]";
        passphrase: "PASSPHRASE=correct" => "PASSPHRASE=[REDACTED]";
        // Token shapes
        aws_access_key_id: "id AKIAIOSFODNN7EXAMPLE end" => "id [REDACTED] end";
        aws_session_key_id: "ASIAY34FZKBOKMUTVV7A" => "[REDACTED]";
        github_classic: "ghp_16C7e42F292c6912E7710c838347Ae178B4a here" => "[REDACTED] here";
        github_oauth: "gho_16C7e42F292c6912E7710c838347Ae178B4a" => "[REDACTED]";
        github_fine_grained: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz" => "[REDACTED]";
        slack_bot: "xoxb-1234567890-abcdefghij" => "[REDACTED]";
        slack_user: "url?t=xoxp-1234567890-0987654321" => "url?t=[REDACTED]";
        openai_key: "using sk-proj-abcdefghijklmnopqrstuvwx now" => "using [REDACTED] now";
        anthropic_key: "sk-ant-api03-abcdefghijklmnopqrstu" => "[REDACTED]";
        jwt: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk" => "[REDACTED]";
        unsigned_jwt: "t eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. x" => "t [REDACTED] x";
        bearer: "Authorization: Bearer abc.def-ghi_123" => "Authorization: Bearer [REDACTED]";
        bearer_upper: "BEARER abcdefgh1234==" => "BEARER [REDACTED]";
        bearer_in_curl_output: "> authorization: bearer 0123456789abcdef\n" => "> authorization: bearer [REDACTED]\n";
        // PEM
        pem_block: "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc==\n-----END RSA PRIVATE KEY-----\nafter"
            => "before\n[REDACTED]\nafter";
        pem_openssh: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----" => "[REDACTED]";
        pem_pkcs8: "-----BEGIN PRIVATE KEY-----\nMC4C\n-----END PRIVATE KEY-----\n" => "[REDACTED]\n";
        pem_pgp: "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOY\n-----END PGP PRIVATE KEY BLOCK-----" => "[REDACTED]";
        pem_without_end_runs_to_the_end: "x\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\nmore" => "x\n[REDACTED]";
        pem_end_without_begin: "[… 10 bytes …]\nAAAAB3NzaC1yc2E\nAQAB\n-----END RSA PRIVATE KEY-----\nok"
            => "[… 10 bytes …]\n[REDACTED]\nok";
        two_pem_blocks: "-----BEGIN PRIVATE KEY-----\na\n-----END PRIVATE KEY-----\nmid\n-----BEGIN PRIVATE KEY-----\nb\n-----END PRIVATE KEY-----"
            => "[REDACTED]\nmid\n[REDACTED]";
        // Must NOT be redacted
        public_key_block: "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----" => "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----";
        certificate: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----" => "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
        max_tokens: "max_tokens: 4096" => "max_tokens: 4096";
        sort_keys: "json.dumps(x, sort_keys=True)" => "json.dumps(x, sort_keys=True)";
        keyboard: "KEYBOARD=us monkey=banana" => "KEYBOARD=us monkey=banana";
        path: "PATH=/usr/bin:/bin HOME=/root" => "PATH=/usr/bin:/bin HOME=/root";
        comparison: "if key == \"x\": pass" => "if key == \"x\": pass";
        rust_path: "use crate::key::Key;" => "use crate::key::Key;";
        empty_value: r#"{"token": ""}"# => r#"{"token": ""}"#;
        prose: "the key is to bear in mind the bearer of news" => "the key is to bear in mind the bearer of news";
        git_sha: "commit 9fceb02d0ae598e95dc970b74767f19372d61af8" => "commit 9fceb02d0ae598e95dc970b74767f19372d61af8";
        uuid: "id=123e4567-e89b-12d3-a456-426614174000" => "id=123e4567-e89b-12d3-a456-426614174000";
        task_name_with_sk: "task-abcdefghijklmnopqrstuvwxyz" => "task-abcdefghijklmnopqrstuvwxyz";
        short_sk: "sk-short" => "sk-short";
        short_akia: "AKIA1234" => "AKIA1234";
        short_github: "ghp_abc" => "ghp_abc";
        url_with_port: "http://localhost:8080/key" => "http://localhost:8080/key";
        // The password of a URL's userinfo; the user and host stay.
        database_url: "DATABASE_URL=postgres://app:pw@host/db" => "DATABASE_URL=postgres://app:[REDACTED]@host/db";
        url_in_prose: "connecting to mysql://root:hunter2@10.0.0.5:3306 ..." => "connecting to mysql://root:[REDACTED]@10.0.0.5:3306 ...";
        url_https_token: "remote: https://x-access-token:abc123@github.com/o/r.git" => "remote: https://x-access-token:[REDACTED]@github.com/o/r.git";
        url_password_with_at_and_colon: "redis://u:p@ss:w0rd@cache:6379/0" => "redis://u:[REDACTED]@cache:6379/0";
        url_password_with_specials: "amqp://guest:!$&()*+,;=%40~@mq/vhost" => "amqp://guest:[REDACTED]@mq/vhost";
        url_password_percent_encoded: "postgresql://app:p%40ss%2Fw@db" => "postgresql://app:[REDACTED]@db";
        url_without_path: "ftp://anon:pw@ftp.example.org" => "ftp://anon:[REDACTED]@ftp.example.org";
        url_ipv6_host: "postgres://a:b@[::1]:5432/x" => "postgres://a:[REDACTED]@[::1]:5432/x";
        url_scheme_with_plus: "git+ssh://me:pw@host/repo" => "git+ssh://me:[REDACTED]@host/repo";
        url_jdbc: "jdbc:postgresql://app:pw@db:5432/app" => "jdbc:postgresql://app:[REDACTED]@db:5432/app";
        url_empty_user: "redis://:s3cret@cache" => "redis://:[REDACTED]@cache";
        url_quoted: r#"{"url":"postgres://app:pw@h/db","email":"a@b.c"}"# => r#"{"url":"postgres://app:[REDACTED]@h/db","email":"a@b.c"}"#;
        url_single_quoted: "url='mongodb://u:p@h' x" => "url='mongodb://u:[REDACTED]@h' x";
        url_two_on_a_line: "a://u:p@h b://v:q@i" => "a://u:[REDACTED]@h b://v:[REDACTED]@i";
        url_password_in_path_is_not_userinfo: "http://host/a:b@c" => "http://host/a:b@c";
        url_user_only: "ssh://git@github.com/o/r" => "ssh://git@github.com/o/r";
        url_empty_password: "http://user:@host/" => "http://user:@host/";
        url_port_without_userinfo: "http://host:8080/x?u=a:b@c" => "http://host:8080/x?u=a:b@c";
        user_at_host: "git@github.com:o/r.git" => "git@github.com:o/r.git";
        email: "mail me@example.com or a.b+c@d.org" => "mail me@example.com or a.b+c@d.org";
        scp_like_with_colon: "user:pass@host" => "user:pass@host";
        already_redacted: "API_KEY=[REDACTED]" => "API_KEY=[REDACTED]";
        // Code that names a secret without holding one: a model must be able to edit it.
        python_environ: "API_KEY = os.environ['API_KEY']" => "API_KEY = os.environ['API_KEY']";
        python_getenv: r#"token = os.getenv("GITHUB_TOKEN")"# => r#"token = os.getenv("GITHUB_TOKEN")"#;
        call_result: "secret = load_secret()" => "secret = load_secret()";
        index_expression: "key = keys[0]" => "key = keys[0]";
        closing_bracket: "password=x)" => "password=x)";
        generic_type: "token: Option<String>," => "token: Option<String>,";
        braces: "key={k}" => "key={k}";
        brace_close: "key=}" => "key=}";
        dotted_attribute: "token = self.token" => "token = self.token";
        dotted_settings: "SECRET_KEY = settings.SECRET_KEY" => "SECRET_KEY = settings.SECRET_KEY";
        python_none: "password = None" => "password = None";
        json_null: "token: null" => "token: null";
        js_undefined: "apiKey = undefined" => "apiKey = undefined";
        ruby_nil: "secret = nil" => "secret = nil";
        bool_true: "api_key=true" => "api_key=true";
        bool_false: "api_key=false" => "api_key=false";
        // ...but a literal is still a secret, even when it looks a little like code.
        quoted_literal_in_code: r#"API_KEY = "abc123def""# => r#"API_KEY = "[REDACTED]""#;
        quoted_dotted_literal: r#"token = "a.b""# => r#"token = "[REDACTED]""#;
        quoted_bracket_literal: r#"password = "p(a)ss""# => r#"password = "[REDACTED]""#;
        dotted_but_starting_with_a_digit: "secret=1abc.def" => "secret=[REDACTED]";
        trailing_dot_is_not_a_name: "token=abc." => "token=[REDACTED]";
        single_name_is_a_literal: "token=abcdef" => "token=[REDACTED]";
        keyword_prefix_is_a_literal: "password=nonexistent" => "password=[REDACTED]";
        lowercase_none_is_a_literal: "password=none" => "password=[REDACTED]";
    }

    #[test]
    fn unchanged_text_stays_borrowed() {
        assert!(matches!(redact("nothing to see"), Cow::Borrowed(_)));
        assert!(matches!(
            Redactor::new().with_secret("abcdefgh").redact("clean"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(redact("key=value"), Cow::Owned(_)));
    }

    #[test]
    fn literal_values_are_redacted_everywhere() {
        let redactor = Redactor::from_vars([
            ("OLLAMA_API_KEY", "plain-looking-value"),
            ("MY_PASSWORD", "hunter22"),
            ("HOME", "/home/someone"),
            ("SHORT_TOKEN", "12345"),
        ]);
        assert_eq!(
            redactor.redact("a plain-looking-value, hunter22 at /home/someone 12345"),
            "a [REDACTED], [REDACTED] at /home/someone 12345"
        );
    }

    #[test]
    fn the_longest_literal_wins() {
        let redactor = Redactor::new()
            .with_secret("abcdef")
            .with_secret("abcdefghij");
        assert_eq!(redactor.redact("xabcdefghijx"), "x[REDACTED]x");
        let redactor = Redactor::new()
            .with_secret("abcdefghij")
            .with_secret("abcdef");
        assert_eq!(redactor.redact("xabcdefghijx"), "x[REDACTED]x");
    }

    #[test]
    fn literal_length_threshold() {
        assert_eq!(
            Redactor::new().with_secret("abcdef").redact("abcdef"),
            REDACTED
        );
        assert_eq!(
            Redactor::new().with_secret("abcde").redact("abcde"),
            "abcde"
        );
    }

    #[test]
    fn a_literal_is_kept_once() {
        let redactor = Redactor::new().with_secret("abcdef").with_secret("abcdef");
        assert_eq!(redactor.literals.len(), 1);
    }

    #[test]
    fn non_utf8_variables_are_ignored() {
        use std::ffi::OsString;
        use std::os::unix::ffi::OsStringExt;
        let redactor = Redactor::from_vars([
            (
                OsString::from("A_TOKEN"),
                OsString::from_vec(b"abc\xffdef".to_vec()),
            ),
            (
                OsString::from_vec(b"B_TOKEN\xff".to_vec()),
                OsString::from("value-of-b"),
            ),
        ]);
        assert!(redactor.literals.is_empty());
    }

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
    fn redacted_value_detection() {
        assert!(is_redacted("\"\""));
        assert!(is_redacted("''"));
        assert!(is_redacted("[REDACTED]"));
        assert!(is_redacted("\"[REDACTED]\""));
        assert!(!is_redacted("x"));
    }

    proptest::proptest! {
        #[test]
        fn redaction_never_panics_and_is_idempotent(text in "[ -~\n]{0,120}") {
            let once = redact(&text).into_owned();
            proptest::prop_assert_eq!(redact(&once), once.as_str());
        }

        #[test]
        fn secret_assignments_never_survive(
            name in "(API_KEY|token|db_password|clientSecret)",
            value in "[A-Za-z0-9]{1,30}",
            sep in "(=|: | = )",
        ) {
            let line = format!("{name}{sep}{value}");
            proptest::prop_assert_eq!(redact(&line), format!("{name}{sep}{REDACTED}"));
        }
    }
}
