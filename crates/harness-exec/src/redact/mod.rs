//! Redaction of secrets from text a model will see, and their return where it writes.
//!
//! Output of `env`, `cat .env` or a traceback can carry a key into the transcript and the
//! model provider's logs. Redaction replaces what looks like a secret with a marker,
//! `[REDACTED:<rule>:<n>]`, before that happens. The redactor remembers, in memory only,
//! which value each marker stands for ([`Redactor::restore`]), so that the file tools can
//! put the value back where a model writes a file it read redacted: text read redacted and
//! written back whole keeps its secrets.
//!
//! What is a secret is a table of credential shapes ([`RULES`], one row per kind, each with
//! examples it must and must not redact) and two rules that read a name and a value
//! together (`assignment`). Precision counts as much as recall: a marker put in place of
//! text that was no secret costs the model honest work, so the generic rules ask a value to
//! look like a secret, not only to follow a secret-looking name.

mod assignment;
mod markers;
mod rules;

use std::borrow::Cow;
use std::ffi::OsStr;
use std::ops::Range;

use crate::env::is_secret_name;

use assignment::Found;
pub use markers::{Restored, has_marker};
use markers::{Vault, marker_spans};
pub use rules::{RULES, Rule};

/// How redacted text was written before markers were numbered, and the prefix every marker
/// starts with: text matching it is never redacted again.
pub const REDACTED: &str = "[REDACTED]";

/// The shortest secret value redacted literally: a shorter value (`1`, `true`)
/// would blank out ordinary text wherever it appears.
const MIN_LITERAL_LEN: usize = 6;

/// The rule named in the marker of a literal secret value.
const LITERAL_RULE: &str = "secret-variable";

/// Redacts secret-looking text with the built-in patterns.
///
/// Equivalent to `Redactor::new().redact(text)`; see [`Redactor`] for what is
/// redacted. Returns `text` unchanged (borrowed) when nothing matched.
///
/// ```
/// use harness_exec::redact;
///
/// assert!(redact("API_KEY=abc123 user=me").starts_with("API_KEY=[REDACTED:generic-secret:"));
/// assert!(redact("Authorization: Bearer abcdefgh12345678").starts_with("Authorization: Bearer [REDACTED:"));
/// assert_eq!(redact("max_tokens: 4096"), "max_tokens: 4096");
/// assert_eq!(redact("a key=value pair"), "a key=value pair");
/// ```
pub fn redact(text: &str) -> Cow<'_, str> {
    Redactor::new().redact(text)
}

/// Replaces secrets in text with markers, and puts them back.
///
/// Redacted, where one secret is found by several, by the first:
///
/// 1. the literal secret values the redactor knows (see [`Redactor::from_vars`]
///    and [`Redactor::with_secret`]), wherever they appear; their markers are never put
///    back by [`Redactor::restore`] (they are the harness's own secrets, not the
///    workspace's);
/// 2. every value this redactor redacted before, wherever it appears, with the same
///    marker, when it is distinctive: 8 bytes or longer, not an identifier, and of an
///    entropy of 3 bits per character or more;
/// 3. the credential shapes of [`RULES`]: private-key blocks, provider tokens (AWS,
///    GitHub, GitLab, Stripe, Google, Hugging Face, npm, PyPI, Slack, OpenAI, Anthropic and
///    others), JWTs, HTTP Basic and Bearer credentials (a git `extraheader` included),
///    `curl -u user:password` and `mysql -pPASSWORD`;
/// 4. the password of a URL with userinfo (`postgres://app:[REDACTED:url-password:1]@db/app`),
///    for any scheme; the user and the host stay visible. As URL parsers do,
///    the authority ends at `/`, `?`, `#`, whitespace, a quote, `<`, `>` or a
///    backslash, the userinfo at its last `@` and the user at the first `:`;
///    `user@host` and `ssh://git@host`, without a password, are left alone;
/// 5. the value in `name=value`, `name: value`, `"name": "value"` when the name holds a
///    secret word and the value reads as a secret: see the `assignment` module's docs for
///    the decision order. Words are split at `_`, `-`, `.` and camelCase humps, so
///    `API_KEY`, `apiKey` and `X-Api-Key` match while `max_tokens`, `KEYBOARD` and
///    `monkey` do not; a quoted value keeps its quotes.
///
/// Text that already reads as a marker is left as it is, so redacting twice changes
/// nothing more.
///
/// ```
/// use harness_exec::Redactor;
///
/// let redactor = Redactor::from_vars([("OLLAMA_API_KEY", "s3cr3t-value"), ("HOME", "/home/me")]);
/// let shown = redactor.redact("key is s3cr3t-value in /home/me");
/// assert!(shown.starts_with("key is [REDACTED:secret-variable:"));
/// assert!(shown.ends_with("] in /home/me"));
///
/// // A value redacted from a file comes back where the model writes its marker.
/// let redactor = Redactor::new();
/// let shown = redactor.redact("SECRET_KEY = 'k8#Qz!x2Lp9w'\n").into_owned();
/// assert!(!shown.contains("k8#Qz!x2Lp9w"));
/// assert_eq!(redactor.restore(&shown).text, "SECRET_KEY = 'k8#Qz!x2Lp9w'\n");
/// ```
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    /// Literal secret values, longest first so that a value containing
    /// another is replaced whole.
    literals: Vec<String>,
    /// The markers given out and their values; shared by clones.
    vault: Vault,
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

    /// The same redactor, giving out and putting back the markers of `other`: a runner's
    /// redactor shares a toolbox's this way, so that a marker in a command's output can be
    /// written back by the file tools.
    pub fn sharing_markers_with(mut self, other: &Redactor) -> Redactor {
        self.vault = other.vault.clone();
        self
    }

    /// `text` with every secret replaced by its marker; borrowed when nothing matched.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.redact_once(text) {
            Cow::Borrowed(text) => Cow::Borrowed(text),
            // A value found once in the text is hidden wherever else it stands in it,
            // before its finding too (`auth=('me', 'pw…')` above `TOKEN = "pw…"`).
            Cow::Owned(once) => match self.redact_once(&once) {
                Cow::Borrowed(_) => Cow::Owned(once),
                Cow::Owned(twice) => Cow::Owned(twice),
            },
        }
    }

    /// One pass of [`Redactor::redact`].
    fn redact_once<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let found = self.find(text);
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for (range, rule, restorable) in found {
            out.push_str(&text[copied..range.start]);
            out.push_str(&self.vault.marker(rule, &text[range.clone()], restorable));
            copied = range.end;
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }

    /// `text` with every marker this redactor (or one sharing its markers) gave out
    /// replaced by its value, and where it holds marker-like text that it did not.
    pub fn restore(&self, text: &str) -> Restored {
        self.vault.restore(text)
    }

    /// True if and only if the marker-like text at `at` in `written` stands where
    /// `original` holds a secret: its line, up to it, ends the way the line of a secret
    /// in `original` does up to that secret (`SECRET_KEY = '` before `[REDACTED]`), or its
    /// line reads as such a line with every marker alike. Writing it would put a marker
    /// where the file held a secret.
    pub fn stands_for_secret(&self, original: &str, written: &str, at: Range<usize>) -> bool {
        let shown = self.redact(original);
        let (prefix, line) = line_around(written, at);
        let prefix = prefix.trim_start();
        let line = plain_markers(line.trim());
        marker_spans(&shown).any(|span| {
            let (before, secret_line) = line_around(&shown, span);
            let before = before.trim_start();
            let matches_prefix = if prefix.is_empty() {
                before.is_empty()
            } else {
                before.ends_with(prefix)
            };
            matches_prefix || plain_markers(secret_line.trim()) == line
        })
    }

    /// The secrets in `text`, in order and not overlapping: each one's range, rule and
    /// whether its value may be put back.
    fn find(&self, text: &str) -> Vec<(Range<usize>, &'static str, bool)> {
        let mut found: Vec<(Range<usize>, &'static str, bool, usize)> = Vec::new();
        // Existing markers first, kept as they are: nothing inside one is a secret.
        let kept: Vec<Range<usize>> = marker_spans(text).collect();
        let mut priority = 0;
        let mut push = |range: Range<usize>, rule: &'static str, restorable: bool| {
            if !range.is_empty() {
                found.push((range, rule, restorable, priority));
                priority += 1;
            }
        };
        for literal in &self.literals {
            for (start, _) in text.match_indices(literal.as_str()) {
                push(start..start + literal.len(), LITERAL_RULE, false);
            }
        }
        for (value, marker) in self.vault.known(MIN_LITERAL_LEN) {
            if !assignment::is_distinctive(&value) {
                continue;
            }
            let rule = marker_rule(&marker);
            for (start, _) in text.match_indices(value.as_str()) {
                push(start..start + value.len(), rule, true);
            }
        }
        let lower = text.to_ascii_lowercase();
        for compiled in rules::COMPILED.iter() {
            let rule = compiled.rule;
            if !rule.keywords.iter().any(|keyword| lower.contains(keyword)) {
                continue;
            }
            for caps in compiled.regex.captures_iter(text) {
                let Some(secret) = caps.iter().skip(1).flatten().next().or_else(|| caps.get(0))
                else {
                    continue;
                };
                let value = secret.as_str();
                if rules::entropy(value) < rule.min_entropy || rule.mixed && !is_mixed(value) {
                    continue;
                }
                push(secret.range(), rule.id, true);
            }
        }
        let mut generic = Vec::new();
        assignment::url_passwords(text, &mut generic);
        assignment::assignments(text, &mut generic);
        for Found { range, rule } in generic {
            push(range, rule, true);
        }
        // Earliest first; at one place the longest, then the first found.
        found.sort_by(|a, b| {
            a.0.start
                .cmp(&b.0.start)
                .then(b.0.end.cmp(&a.0.end))
                .then(a.3.cmp(&b.3))
        });
        let mut chosen: Vec<(Range<usize>, &'static str, bool)> = Vec::new();
        let mut end = 0;
        for (range, rule, restorable, _) in found {
            let overlaps_kept = kept
                .iter()
                .any(|k| k.start < range.end && range.start < k.end);
            if overlaps_kept {
                continue;
            }
            if range.start < end {
                // Overlapping secrets are hidden as one: a tail left out would show.
                if let Some(last) = chosen.last_mut().filter(|_| range.end > end) {
                    last.0.end = range.end;
                    end = range.end;
                }
                continue;
            }
            end = range.end;
            chosen.push((range, rule, restorable));
        }
        chosen
    }
}

/// The line of `text` that holds `at`: what stands before `at` on it, and the whole line.
fn line_around(text: &str, at: Range<usize>) -> (&str, &str) {
    let before = text[..at.start].rsplit('\n').next().unwrap_or_default();
    let after = text[at.end..].split('\n').next().unwrap_or_default();
    (before, &text[at.start - before.len()..at.end + after.len()])
}

/// True if and only if `value` holds, past its first character, a digit, an upper-case
/// letter or one of `+/=`, as random tokens do and words do not.
fn is_mixed(value: &str) -> bool {
    value
        .bytes()
        .skip(1)
        .any(|b| b.is_ascii_digit() || b.is_ascii_uppercase() || b"+/=".contains(&b))
}

/// The rule a marker names: `generic-secret` in `[REDACTED:generic-secret:4]`.
fn marker_rule(marker: &str) -> &'static str {
    let name = marker
        .trim_start_matches("[REDACTED:")
        .rsplit_once(':')
        .map_or("", |(rule, _)| rule);
    std::iter::once(LITERAL_RULE)
        .chain(["url-password", "generic-secret"])
        .chain(RULES.iter().map(|rule| rule.id))
        .find(|id| *id == name)
        .unwrap_or("secret")
}

/// `line` with every marker-like text written [`REDACTED`]: redacted text compared without
/// the numbers of its markers, which depend on what else the process redacted.
///
/// ```
/// assert_eq!(harness_exec::plain_markers("a=[REDACTED:jwt:12] b"), "a=[REDACTED] b");
/// ```
pub fn plain_markers(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut copied = 0;
    for span in marker_spans(line) {
        out.push_str(&line[copied..span.start]);
        out.push_str(REDACTED);
        copied = span.end;
    }
    out.push_str(&line[copied..]);
    out
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
                let redactor = Redactor::new();
                let once = redactor.redact(input).into_owned();
                assert_eq!(plain_markers(&once), expected, "{input:?}");
                // Redacting twice changes nothing more, and the markers give the input back.
                assert_eq!(redactor.redact(&once), once);
                assert_eq!(redactor.restore(&once).text, input);
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
        json_pair_without_spaces: r#"{"clientSecret":"xyz-987"}"# => r#"{"clientSecret":"[REDACTED]"}"#;
        python_dict: "{'refresh_token': 'r-123'}" => "{'refresh_token': '[REDACTED]'}";
        double_quoted_env_value: r#"DB_PASSWORD="two W0rds""# => r#"DB_PASSWORD="[REDACTED]""#;
        camel_case_name: "apiKey=abc12345" => "apiKey=[REDACTED]";
        digit_before_hump: "oauth2Token: t-123456" => "oauth2Token: [REDACTED]";
        acronym_name: "OpenAIAPIKey: abcdef" => "OpenAIAPIKey: [REDACTED]";
        dotted_name: "spring.datasource.password=pw123456" => "spring.datasource.password=[REDACTED]";
        cli_flag: "--api-key=abcdef --verbose" => "--api-key=[REDACTED] --verbose";
        value_ends_at_comma: "TOKEN=abc123,next=1" => "TOKEN=[REDACTED],next=1";
        value_keeps_colons_and_padding: "SECRET=ab:cd==" => "SECRET=[REDACTED]";
        nested_assignment_is_found: "config: api_key=abc12345" => "config: api_key=[REDACTED]";
        several_on_one_line: "KEY=a1b2c3d4e5f6 TOKEN=b2-xyz SECRET=c3-xyz" => "KEY=[REDACTED] TOKEN=[REDACTED] SECRET=[REDACTED]";
        credentials_plural: "credentials: c8Fk29xQ-Lm3" => "credentials: [REDACTED]";
        passphrase: "PASSPHRASE=correct" => "PASSPHRASE=[REDACTED]";
        // Token shapes
        aws_access_key_id: "id AKIAIOSFODNN7EXAMPLE end" => "id [REDACTED] end";
        aws_session_key_id: "ASIAY34FZKBOKMUTVV7A" => "[REDACTED]";
        github_classic: "ghp_16C7e42F292c6912E7710c838347Ae178B4a here" => "[REDACTED] here";
        github_oauth: "gho_16C7e42F292c6912E7710c838347Ae178B4a" => "[REDACTED]";
        github_fine_grained: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz" => "[REDACTED]";
        slack_bot: "xoxb-1234567890-abcdefghij" => "[REDACTED]";
        slack_user: "url?t=xoxp-1234567890-0987654321" => "url?t=[REDACTED]";
        openai_key: "using sk-proj-abcDEF123ghiJKL456mnoPQR now" => "using [REDACTED] now";
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
        example_value: "API_KEY=abc-example-12345" => "API_KEY=abc-example-12345";
        placeholder_value: "DB_PASSWORD=secret" => "DB_PASSWORD=secret";
        your_value: "TOKEN=your-token-123" => "TOKEN=your-token-123";
        json_null: "token: null" => "token: null";
        js_undefined: "apiKey = undefined" => "apiKey = undefined";
        ruby_nil: "secret = nil" => "secret = nil";
        bool_true: "api_key=true" => "api_key=true";
        bool_false: "api_key=false" => "api_key=false";
        // ...but a literal is still a secret, even when it looks a little like code.
        quoted_literal_in_code: r#"API_KEY = "abc123def""# => r#"API_KEY = "[REDACTED]""#;
        quoted_dotted_literal: r#"token = "a.b.c.d""# => r#"token = "[REDACTED]""#;
        quoted_bracket_literal: r#"password = "p(a)ss""# => r#"password = "[REDACTED]""#;
        dotted_but_starting_with_a_digit: "secret=1abc.def" => "secret=[REDACTED]";
        trailing_dot_is_not_a_name: "TOKEN=abc." => "TOKEN=[REDACTED]";
        single_name_is_a_literal: "TOKEN=abcdef" => "TOKEN=[REDACTED]";
        keyword_prefix_is_a_literal: "PASSWORD=nonexistent" => "PASSWORD=[REDACTED]";
        lowercase_none_is_a_literal: "PASSWORD=None1" => "PASSWORD=[REDACTED]";
    }

    #[test]
    fn unchanged_text_stays_borrowed() {
        assert!(matches!(redact("nothing to see"), Cow::Borrowed(_)));
        assert!(matches!(
            Redactor::new().with_secret("abcdefgh").redact("clean"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(redact("key=value"), Cow::Borrowed(_)));
        assert!(matches!(redact("API_KEY=abc123"), Cow::Owned(_)));
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
            plain_markers(
                &redactor.redact("a plain-looking-value, hunter22 at /home/someone 12345")
            ),
            "a [REDACTED], [REDACTED] at /home/someone 12345"
        );
    }

    #[test]
    fn the_longest_literal_wins() {
        let redactor = Redactor::new()
            .with_secret("abcdef")
            .with_secret("abcdefghij");
        assert_eq!(
            plain_markers(&redactor.redact("xabcdefghijx")),
            "x[REDACTED]x"
        );
        let redactor = Redactor::new()
            .with_secret("abcdefghij")
            .with_secret("abcdef");
        assert_eq!(
            plain_markers(&redactor.redact("xabcdefghijx")),
            "x[REDACTED]x"
        );
    }

    #[test]
    fn literal_length_threshold() {
        assert_eq!(
            plain_markers(&Redactor::new().with_secret("abcdef").redact("abcdef")),
            REDACTED
        );
        assert_eq!(
            plain_markers(&Redactor::new().with_secret("abcde").redact("abcde")),
            "abcde"
        );
    }

    #[test]
    fn a_literal_is_kept_once() {
        let redactor = Redactor::new().with_secret("abcdef").with_secret("abcdef");
        assert_eq!(redactor.literals.len(), 1);
    }

    #[test]
    fn a_redactor_sharing_markers_puts_back_what_the_other_gave_out() {
        let toolbox = Redactor::new();
        let shown = toolbox
            .redact("token = \"k8Jd9s7Fq2LmZx4Vb1Nc\"\n")
            .into_owned();
        assert!(!shown.contains("k8Jd9s7Fq2LmZx4Vb1Nc"), "{shown}");
        let runner = Redactor::new().sharing_markers_with(&toolbox);
        assert_eq!(
            runner.restore(&shown).text,
            "token = \"k8Jd9s7Fq2LmZx4Vb1Nc\"\n"
        );
        // Without sharing, the marker is another redactor's: left as sent, and said so.
        let alone = Redactor::new().restore(&shown);
        assert_eq!(alone.text, shown);
        assert_eq!(alone.unknown.len(), 1);
    }

    /// The range of the `n`th marker-like text in `text`.
    fn nth_marker(text: &str, n: usize) -> Range<usize> {
        marker_spans(text).nth(n).expect("a marker")
    }

    #[test]
    fn a_marker_stands_for_a_secret_where_its_line_ends_as_the_secret_s_line_does() {
        let redactor = Redactor::new().with_secret("hunter2hunter2");
        let original = "x = 1\nhunter2hunter2\nSECRET_KEY = 'k8Jd9s7Fq2LmZx4Vb1Nc'\nDEBUG = 1\n";
        let shown = redactor.redact(original).into_owned();
        assert_eq!(marker_spans(&shown).count(), 2, "{shown}");
        // Written back as shown: each marker stands where a secret was, the one at the
        // start of its line (nothing before it) as the one after `SECRET_KEY = '`.
        assert!(redactor.stands_for_secret(original, &shown, nth_marker(&shown, 0)));
        assert!(redactor.stands_for_secret(original, &shown, nth_marker(&shown, 1)));
        // A marker on a line of its own, or after other text, where no secret stood: no.
        let marker = &shown[nth_marker(&shown, 1)];
        for written in [
            format!("x = 1\ny = 2\nprint('{marker}')\n"),
            format!("x = 1\nname = '{marker}'\n"),
            format!("x = {marker}\n"),
        ] {
            let at = nth_marker(&written, 0);
            assert!(
                !redactor.stands_for_secret(original, &written, at),
                "{written}"
            );
        }
    }

    #[test]
    fn a_marker_stands_for_a_secret_where_its_line_reads_as_the_secret_s_line() {
        // The model wrote the markers of a line with other numbers: no prefix matches, but
        // the line, its markers alike, is the secret's line.
        let redactor = Redactor::new()
            .with_secret("alphaalpha1")
            .with_secret("betabeta22");
        let original = "top\npair = alphaalpha1:betabeta22;\nend\n";
        let shown = redactor.redact(original).into_owned();
        assert_eq!(
            plain_markers(&shown),
            "top\npair = [REDACTED]:[REDACTED];\nend\n"
        );
        let written =
            "top\npair = [REDACTED:secret-variable:7]:[REDACTED:secret-variable:9];\nend\n";
        assert!(redactor.stands_for_secret(original, written, nth_marker(written, 1)));
        // The same markers in a line that reads otherwise do not.
        let other =
            "top\npair = [REDACTED:secret-variable:7]:[REDACTED:secret-variable:9];;\nend\n";
        assert!(!redactor.stands_for_secret(original, other, nth_marker(other, 1)));
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

    proptest::proptest! {
        #[test]
        fn redaction_never_panics_and_is_idempotent(text in "[ -~\n]{0,120}") {
            let once = redact(&text).into_owned();
            proptest::prop_assert_eq!(redact(&once), once.as_str());
        }

        #[test]
        fn secret_assignments_never_survive(
            name in "(API_KEY|token|db_password|clientSecret)",
            value in "[a-z]{6,10}[0-9]{2}[A-Za-z0-9]{0,10}",
            sep in "(=|: | = )",
        ) {
            let line = format!("{name}{sep}{value}");
            proptest::prop_assert_eq!(plain_markers(&redact(&line)), format!("{name}{sep}{REDACTED}"));
        }
    }
}
