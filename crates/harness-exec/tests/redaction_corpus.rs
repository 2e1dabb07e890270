//! Recall and precision of redaction, measured on corpora (issue #45, class 5).
//!
//! Recall: every rule of [`RULES`] is tried on random secrets of its shapes, and a set of
//! secret-bearing contexts (`PGPASSWORD=`, a JSON `"pwd"`, YAML, TOML, `.env`, `--password=`)
//! on random values; every secret must be hidden, and the markers must give the text back.
//! Precision: real source files with no secrets (the Rust sources under
//! `~/.cargo/registry/src` and Python's standard library, when present) are redacted, and
//! every redaction counted per rule and per megabyte, and printed to be looked at. Run with
//! `REDACTION_CORPUS_MB=36 cargo test -p harness-exec --test redaction_corpus -- --nocapture`
//! to see the report over 36 MB (6 MB by default).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use harness_exec::{RULES, Redactor};

/// A small deterministic generator (xorshift64*): the corpus is random but the same on
/// every run, so a failure can be reproduced.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn pick(&mut self, alphabet: &[u8]) -> char {
        char::from(alphabet[(self.next() % alphabet.len() as u64) as usize])
    }

    fn string(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len).map(|_| self.pick(alphabet)).collect()
    }
}

const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGIT: &[u8] = b"0123456789";
const HEX: &[u8] = b"0123456789abcdef";
const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const URL: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
const B64: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/";
const BECH: &[u8] = b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";
const PASSWORD: &[u8] = b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!#%&*+-_.~^";

/// A sample template filled at random: the text, and the secret in it.
fn fill(template: &str, rng: &mut Rng) -> (String, String) {
    let mut text = String::new();
    let mut secret = String::new();
    let mut in_secret = false;
    let mut rest = template;
    while let Some(c) = rest.chars().next() {
        if c == '{' {
            let close = rest.find('}').expect("a template field is closed");
            let (class, len) = rest[1..close].split_once(':').expect("a field is CLASS:N");
            let len: usize = len.parse().expect("a field's length is a number");
            let alphabet = match class {
                "an" => ALNUM,
                "hex" => HEX,
                "lower" => LOWER,
                "upper" => UPPER,
                "digit" => DIGIT,
                "b64" => B64,
                "url" => URL,
                "bech" => BECH,
                other => panic!("unknown class {other}"),
            };
            let value = rng.string(alphabet, len);
            text.push_str(&value);
            if in_secret {
                secret.push_str(&value);
            }
            rest = &rest[close + 1..];
            continue;
        }
        match c {
            '«' => in_secret = true,
            '»' => in_secret = false,
            _ => {
                text.push(c);
                if in_secret {
                    secret.push(c);
                }
            }
        }
        rest = &rest[c.len_utf8()..];
    }
    if !template.contains('«') {
        secret = text.clone();
    }
    (text, secret)
}

/// Contexts a secret is found in, beyond the rules' own shapes: `{}` is a random password.
const CONTEXTS: &[&str] = &[
    "PGPASSWORD={} psql -h db -U app",
    "export PGPASSWORD='{}'",
    "MYSQL_PWD={}",
    "{\"user\": \"app\", \"pwd\": \"{}\"}",
    "{\"password\":\"{}\"}",
    "db:\n  password: {}\n  user: app",
    "[database]\npassword = \"{}\"",
    "SECRET_KEY = '{}'",
    "DATABASE_PASSWORD={}",
    "mysql --password={} -u root",
    "app --api-key={} --verbose",
    "client_secret: \"{}\"",
    "aws_secret_access_key = {}",
    "postgres://app:{}@db:5432/app",
    "https://user:{}@example.com/path",
    "curl -u admin:{} https://example.com",
    "mysql -uroot -p{} app",
    "TOKEN = \"{}\"\nsame = '{}'",
    "<password>{}</password>",
];

#[test]
fn recall_is_complete_on_generated_secrets() {
    let mut rng = Rng(0x5EC2_E75E_C2E7_5EC2);
    let mut missed = Vec::new();
    let mut tried = 0;
    for rule in RULES {
        for template in rule.samples {
            for _ in 0..25 {
                let (text, secret) = fill(template, &mut rng);
                for wrapped in [
                    text.clone(),
                    format!("log: {text} (end)"),
                    format!("x = \"{text}\"\n"),
                ] {
                    tried += 1;
                    let redactor = Redactor::new();
                    let shown = redactor.redact(&wrapped).into_owned();
                    if shown.contains(&secret) || !shown.contains("[REDACTED:") {
                        missed.push(format!("{}: {wrapped:?} -> {shown:?}", rule.id));
                    }
                    assert_eq!(redactor.restore(&shown).text, wrapped, "{}", rule.id);
                }
            }
        }
    }
    for context in CONTEXTS {
        if context.contains('<') {
            // Not a context the rules cover: XML elements are named, not assigned.
            continue;
        }
        for _ in 0..25 {
            let len = 8 + (rng.next() % 16) as usize;
            let password = rng.string(PASSWORD, len);
            let text = context.replace("{}", &password);
            tried += 1;
            let redactor = Redactor::new();
            let shown = redactor.redact(&text).into_owned();
            if shown.contains(&password) {
                missed.push(format!("context: {text:?} -> {shown:?}"));
            }
            assert_eq!(redactor.restore(&shown).text, text);
        }
    }
    println!(
        "recall: {} of {tried} generated secrets hidden",
        tried - missed.len()
    );
    for miss in missed.iter().take(40) {
        println!("  missed {miss}");
    }
    assert!(missed.is_empty(), "{} secrets were shown", missed.len());
}

#[test]
fn every_rule_leaves_its_negatives_alone() {
    let mut rng = Rng(7);
    for rule in RULES {
        for negative in rule.negatives {
            let (text, _) = fill(negative, &mut rng);
            assert_eq!(
                Redactor::new().redact(&text),
                text,
                "{} redacted its negative",
                rule.id
            );
        }
    }
}

/// The credentials issue #45 found passing through, each in the place it was found: the
/// secret (the second element) must not be shown.
const ISSUE_45: &[(&str, &str)] = &[
    ("Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"),
    (
        "curl -H 'Authorization: Basic YWRtaW46czNjcjN0' https://api",
        "YWRtaW46czNjcjN0",
    ),
    (
        "stripe.api_key = sk_live_51H8xYzABCdef0123456789",
        "sk_live_51H8xYzABCdef0123456789",
    ),
    (
        "rk_live_51H8xYzABCdef0123456789ab",
        "rk_live_51H8xYzABCdef0123456789ab",
    ),
    (
        "GITLAB_TOKEN: glpat-xYz12AbCdEf34GhIjK56",
        "glpat-xYz12AbCdEf34GhIjK56",
    ),
    (
        "key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    ),
    (
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    ),
    (
        "//registry.npmjs.org/:_authToken=npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    ),
    (
        "curl -u deploy:Tr0ub4dor3 https://example.com/upload",
        "Tr0ub4dor3",
    ),
    ("mysql -h db -u root -pHunter2Secret app", "Hunter2Secret"),
    ("PGPASSWORD=Sup3rS3cret psql -h db -U app", "Sup3rS3cret"),
    (
        "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzXzEyMzQ1Njc4OTA=",
        "eC1hY2Nlc3MtdG9rZW46Z2hzXzEyMzQ1Njc4OTA=",
    ),
    ("{\"user\": \"app\", \"pwd\": \"s3cr3t!pw\"}", "s3cr3t!pw"),
    (
        "SECRET_KEY = 'django-insecure-8f#k2$x9!qz'",
        "django-insecure-8f#k2$x9!qz",
    ),
];

#[test]
fn the_credentials_issue_45_found_are_redacted() {
    for (text, secret) in ISSUE_45 {
        let redactor = Redactor::new();
        let shown = redactor.redact(text);
        assert!(!shown.contains(secret), "{text:?} -> {shown:?}");
        assert_eq!(redactor.restore(&shown).text, *text);
    }
}

/// Text that reads a little like a secret and is none: each line must come through whole.
/// The first lines are the cases issue #45 reported.
const NOT_SECRETS: &[&str] = &[
    "    Each line is a key=value pair, separated by commas.",
    "    \"\"\"Parse `key=value` options; the token: str argument names the file.\"\"\"",
    "password = None",
    "token: str",
    "api_key=os.environ['API_KEY']",
    "password=password",
    "def login(user, password=password, token=None):",
    "    token = self._next_token()",
    "KEY=VALUE",
    "key = cache_key",
    "password: String,",
    "    key: Utf8SuffixKey,",
    "pub fn token(&self) -> &str {",
    "let key = format!(\"{}-{}\", a, b);",
    "primary_key=True",
    "json.dumps(x, sort_keys=True)",
    "secret = secrets.token_hex(16)",
    "API_KEY = os.getenv(\"API_KEY\")",
    "--password=<password>",
    "PASSWORD=${DB_PASSWORD}",
    "password: ${{ secrets.DB_PASSWORD }}",
    "token = \"{}\"",
    "\"password\": \"********\"",
    "api_key = \"your-api-key-here\"",
    "key: the name of the field",
    "Authorization: Basic realm is described in RFC 7617",
    "Bearer tokens are described in RFC 6750",
    "curl -u admin https://example.com",
    "mysql -u root -p app",
    "the bearer of news",
    "sk-learn is not an API key",
];

#[test]
fn what_is_no_secret_is_left_alone() {
    let redactor = Redactor::new();
    let changed: Vec<String> = NOT_SECRETS
        .iter()
        .filter_map(|line| {
            let shown = redactor.redact(line);
            (shown != *line).then(|| format!("{line:?} -> {shown:?}"))
        })
        .collect();
    assert!(changed.is_empty(), "redacted: {changed:#?}");
}

/// Files under `root` with extension `ext`, sorted, at most `budget` bytes in all, taken
/// evenly across the tree.
fn sample_files(root: &Path, ext: &str, budget: u64) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                // Test data of secret scanners and crypto crates holds real-looking keys on
                // purpose; they are not what this measures.
                let name = entry.file_name();
                if !matches!(name.to_str(), Some("test" | "tests" | "testdata")) {
                    stack.push(path);
                }
            } else if kind.is_file() && path.extension().is_some_and(|e| e == ext) {
                let len = entry.metadata().map_or(0, |m| m.len());
                files.push((path, len));
            }
        }
    }
    files.sort();
    let total: u64 = files.iter().map(|(_, len)| len).sum();
    let step = (total / budget.max(1)).max(1) as usize;
    files
        .into_iter()
        .step_by(step)
        .map(|(path, _)| path)
        .collect()
}

#[test]
fn precision_on_real_source_files() {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let registry = home.map(|home| home.join(".cargo/registry/src"));
    let stdlib = std::process::Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|path| PathBuf::from(path.trim()));
    // A few megabytes by default, so the suite stays quick; REDACTION_CORPUS_MB=36 measures
    // as the numbers in the docs were measured.
    let budget: u64 = std::env::var("REDACTION_CORPUS_MB")
        .ok()
        .and_then(|mb| mb.parse().ok())
        .unwrap_or(6)
        << 20;
    let mut corpora = Vec::new();
    if let Some(registry) = registry.filter(|path| path.is_dir()) {
        corpora.push((
            "rust (cargo registry)",
            sample_files(&registry, "rs", budget * 2 / 3),
        ));
    }
    if let Some(stdlib) = stdlib.filter(|path| path.is_dir()) {
        corpora.push(("python (stdlib)", sample_files(&stdlib, "py", budget / 3)));
    }
    if corpora.is_empty() {
        println!("precision: no corpus of real source files on this machine; not measured");
        return;
    }
    let mut total_bytes = 0usize;
    let mut total_found = 0usize;
    for (name, files) in corpora {
        let mut bytes = 0usize;
        let mut per_rule: BTreeMap<String, usize> = BTreeMap::new();
        let mut examples: Vec<String> = Vec::new();
        for file in &files {
            let Ok(text) = std::fs::read_to_string(file) else {
                continue;
            };
            bytes += text.len();
            let redactor = Redactor::new();
            let shown = redactor.redact(&text);
            if shown == text {
                continue;
            }
            for (old, new) in text.lines().zip(shown.lines()) {
                if old == new {
                    continue;
                }
                let mut rest = new;
                while let Some(at) = rest.find("[REDACTED:") {
                    let marker = &rest[at..];
                    let rule = marker[10..].split(':').next().unwrap_or("?").to_owned();
                    *per_rule.entry(rule).or_default() += 1;
                    rest = &marker[10..];
                }
                if examples.len() < 150 {
                    examples.push(format!("{}: {}", file.display(), old.trim()));
                }
            }
        }
        let found: usize = per_rule.values().sum();
        let mb = bytes as f64 / f64::from(1 << 20);
        println!(
            "precision, {name}: {} files, {mb:.1} MB, {found} redactions ({:.2} per MB)",
            files.len(),
            found as f64 / mb.max(0.001)
        );
        for (rule, count) in &per_rule {
            println!("  {rule}: {count}");
        }
        for example in &examples {
            println!("  | {example}");
        }
        total_bytes += bytes;
        total_found += found;
    }
    let mb = total_bytes as f64 / f64::from(1 << 20);
    // The floor: these files hold no secrets, so every redaction in them is one a model
    // would trip over. Each was looked at (see the report): what is left are example
    // credentials in docs and tests (`http://user:p@ssw0rd@host`, a Basic header of
    // `martin:secret`), a few to a file that has any, hence the fixed allowance. Before the
    // generic rules asked a value to look secret, the Rust sample gave 52 per MB.
    let allowed = 2.0 * mb + 20.0;
    assert!(
        total_found as f64 <= allowed,
        "{total_found} redactions in {mb:.1} MB of source files (at most {allowed:.0} allowed)"
    );
    assert!(total_bytes > 0, "the corpus was read");
}
