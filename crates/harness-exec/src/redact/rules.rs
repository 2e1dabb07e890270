//! The table of credential shapes: one row per kind of secret.
//!
//! The kinds follow those a secret scanner such as gitleaks knows (its rule set is the
//! common reference for which token formats exist, with their prefixes and lengths); the
//! rows are written here, shorter and with the harness's own examples. Each row is found
//! by its regex only in text holding one of its keywords, which keeps the cost per byte of
//! output low: most text holds none. The part of a match that is replaced is the regex's
//! first group that took part in the match, or the whole match when it has none, so the
//! words around a secret (`Authorization: Basic`, `curl -u user:`) stay readable.
//!
//! The assignment of a secret-named key (`password = …`) and the password of a URL are
//! not rows: whether they hold a secret depends on the name and the value together (see
//! the `assignment` module).

use std::sync::LazyLock;

use regex::Regex;

/// One kind of credential.
#[derive(Debug)]
pub struct Rule {
    /// Short and stable, shown in the marker: `[REDACTED:stripe-key:3]`.
    pub id: &'static str,
    /// What the credential is.
    pub description: &'static str,
    /// The shape. Its first group that takes part in a match is the secret; without
    /// groups, the whole match is.
    pub regex: &'static str,
    /// The rule runs only on text that holds one of these, compared in ASCII lowercase.
    pub keywords: &'static [&'static str],
    /// The Shannon entropy, in bits per character, the secret must reach; 0 for none.
    pub min_entropy: f64,
    /// True if and only if the secret must hold, past its first character, a digit, an
    /// upper-case letter or one of `+/=`: random tokens do, while the words that follow
    /// `Bearer` or `Basic` in prose and the names `sk-learn-…` do not.
    pub mixed: bool,
    /// Templates of text the rule must redact: `{an:N}` is N random letters or digits,
    /// `{hex:N}`, `{lower:N}`, `{upper:N}`, `{digit:N}`, `{b64:N}` (base64 characters) and
    /// `{url:N}` (letters, digits, `_` and `-`) and `{bech:N}` (bech32) likewise; the secret is what is between
    /// `«` and `»`, or the whole text without them. The corpus test fills them at random.
    pub samples: &'static [&'static str],
    /// Text close to the shape that the rule must leave alone.
    pub negatives: &'static [&'static str],
}

/// The rows, in priority order: where two rows match the same text at the same place, the
/// earlier one names the marker.
pub static RULES: &[Rule] = &[
    Rule {
        id: "private-key",
        description: "a PEM private-key block, to its END line or the end of the text",
        regex: r"(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)",
        keywords: &["private key"],
        min_entropy: 0.0,
        mixed: false,
        samples: &[
            "-----BEGIN RSA PRIVATE KEY-----\n{b64:64}\n{b64:40}==\n-----END RSA PRIVATE KEY-----",
            "-----BEGIN OPENSSH PRIVATE KEY-----\n{b64:70}\n-----END OPENSSH PRIVATE KEY-----",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n{b64:64}\n-----END PGP PRIVATE KEY BLOCK-----",
        ],
        negatives: &["-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----"],
    },
    Rule {
        id: "private-key",
        description: "the base64 lines above a PEM private key's END line whose start was cut off",
        regex: r"(?m)(?:^[A-Za-z0-9+/=]+\r?\n)+-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
        keywords: &["private key-----"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["{b64:64}\n{b64:20}\n-----END EC PRIVATE KEY-----"],
        negatives: &["{b64:64}\n-----END CERTIFICATE-----"],
    },
    Rule {
        id: "aws-access-key-id",
        description: "an AWS access key id",
        regex: r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b",
        keywords: &["a3t", "akia", "asia", "abia", "acca"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["AKIA{upper:16}", "aws_access_key_id = ASIA{upper:16}"],
        negatives: &["AKIA1234", "ASIATIC EMPIRE"],
    },
    Rule {
        id: "github-token",
        description: "a GitHub personal, OAuth, user-to-server, server-to-server or refresh token",
        regex: r"\b(gh[pousr]_[A-Za-z0-9]{36,255})\b",
        keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        min_entropy: 0.0,
        mixed: false,
        samples: &[
            "ghp_{an:36}",
            "git clone https://x:gho_{an:36}@github.com/o/r",
        ],
        negatives: &["ghp_abc", "ghp_placeholder"],
    },
    Rule {
        id: "github-token",
        description: "a GitHub fine-grained personal access token",
        regex: r"\b(github_pat_[A-Za-z0-9_]{22,255})",
        keywords: &["github_pat_"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["github_pat_{an:22}_{an:59}"],
        negatives: &["github_pat_short"],
    },
    Rule {
        id: "gitlab-token",
        description: "a GitLab personal, project, group, deploy, runner, trigger, OAuth, feed or agent token",
        regex: r"\b(gl(?:pat|dt|rt|soat|cbt|ffct|imt|agent|oas|ptt|ft)-[A-Za-z0-9_-]{20,})",
        keywords: &[
            "glpat-", "gldt-", "glrt-", "glsoat-", "glcbt-", "glffct-", "glimt-", "glagent-",
            "gloas-", "glptt-", "glft-",
        ],
        min_entropy: 0.0,
        mixed: false,
        samples: &[
            "glpat-{url:20}",
            "PRIVATE-TOKEN: glpat-{url:20}",
            "glrt-{url:20}",
        ],
        negatives: &["glpat-short"],
    },
    Rule {
        id: "gitlab-token",
        description: "a GitLab runner registration token",
        regex: r"\b(GR1348941[A-Za-z0-9_-]{20})",
        keywords: &["gr1348941"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["GR1348941{url:20}"],
        negatives: &["GR1348941"],
    },
    Rule {
        id: "stripe-key",
        description: "a Stripe secret or restricted key",
        regex: r"\b((?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,99})\b",
        keywords: &[
            "sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_",
        ],
        min_entropy: 0.0,
        mixed: false,
        samples: &[
            "sk_live_{an:24}",
            "rk_live_{an:99}",
            "Stripe.api_key = \"«sk_test_{an:24}»\"",
        ],
        negatives: &["pk_live_{an:24}", "sk_live_"],
    },
    Rule {
        id: "stripe-key",
        description: "a Stripe webhook signing secret",
        regex: r"\b(whsec_[A-Za-z0-9]{24,})\b",
        keywords: &["whsec_"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["whsec_{an:32}"],
        negatives: &["whsec_short"],
    },
    Rule {
        id: "google-api-key",
        description: "a Google API key",
        regex: r"\b(AIza[0-9A-Za-z_-]{35})",
        keywords: &["aiza"],
        min_entropy: 0.0,
        mixed: false,
        samples: &[
            "AIza{url:35}",
            "https://maps.googleapis.com/x?key=«AIza{url:35}»&q=1",
        ],
        negatives: &["AIzaShort"],
    },
    Rule {
        id: "google-oauth",
        description: "a Google OAuth client secret or access token",
        regex: r"\b(GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[0-9A-Za-z_-]{20,})",
        keywords: &["gocspx-", "ya29."],
        min_entropy: 0.0,
        mixed: false,
        samples: &["GOCSPX-{url:28}", "ya29.{url:60}"],
        negatives: &["ya29.short"],
    },
    Rule {
        id: "huggingface-token",
        description: "a Hugging Face user or organization token",
        regex: r"\b((?:hf_|api_org_)[A-Za-z0-9]{30,})\b",
        keywords: &["hf_", "api_org_"],
        min_entropy: 3.0,
        mixed: false,
        samples: &["hf_{an:34}", "HF_TOKEN=«hf_{an:34}»", "api_org_{an:34}"],
        negatives: &["hf_hub_download", "hf_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"],
    },
    Rule {
        id: "npm-token",
        description: "an npm access token",
        regex: r"\b(npm_[A-Za-z0-9]{36})\b",
        keywords: &["npm_"],
        min_entropy: 0.0,
        mixed: false,
        samples: &[
            "npm_{an:36}",
            "//registry.npmjs.org/:_authToken=«npm_{an:36}»",
        ],
        negatives: &["npm_config_cache", "npm_package_version"],
    },
    Rule {
        id: "pypi-token",
        description: "a PyPI upload token",
        regex: r"\b(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})",
        keywords: &["pypi-ageichlwas5vcmc"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["pypi-AgEIcHlwaS5vcmc{url:70}"],
        negatives: &["pypi-AgEIcHlwaS5vcmc"],
    },
    Rule {
        id: "slack-token",
        description: "a Slack bot, user, app or configuration token",
        regex: r"\b(xox[abeoprs]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,})",
        keywords: &[
            "xoxa-", "xoxb-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-", "xapp-",
        ],
        min_entropy: 0.0,
        mixed: false,
        samples: &[
            "xoxb-{digit:12}-{digit:12}-{an:24}",
            "xoxp-{digit:12}-{an:20}",
            "xapp-1-{upper:11}-{digit:13}-{hex:64}",
        ],
        negatives: &["xoxb-short"],
    },
    Rule {
        id: "slack-webhook",
        description: "a Slack incoming-webhook URL's secret path",
        regex: r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/]{20,})",
        keywords: &["hooks.slack.com"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["https://hooks.slack.com/services/«T{upper:8}/B{upper:8}/{an:24}»"],
        negatives: &["https://hooks.slack.com/services/"],
    },
    Rule {
        id: "anthropic-key",
        description: "an Anthropic API or admin key",
        regex: r"\b(sk-ant-[A-Za-z0-9]+-[A-Za-z0-9_-]{20,})",
        keywords: &["sk-ant-"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["sk-ant-api03-{url:93}AA", "sk-ant-admin01-{url:93}AA"],
        negatives: &["sk-ant-short"],
    },
    Rule {
        id: "openai-key",
        description: "an OpenAI (or OpenAI-style `sk-`) API key",
        regex: r"\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})",
        keywords: &["sk-"],
        min_entropy: 3.0,
        mixed: true,
        samples: &[
            "sk-{an:48}",
            "sk-proj-{url:120}",
            "OPENAI_API_KEY=«sk-svcacct-{url:40}»",
        ],
        negatives: &[
            "sk-short",
            "task-abcdefghijklmnopqrstuvwxyz",
            "sk-learn-preprocessing-module",
        ],
    },
    Rule {
        id: "sendgrid-key",
        description: "a SendGrid API key",
        regex: r"\b(SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})",
        keywords: &["sg."],
        min_entropy: 0.0,
        mixed: false,
        samples: &["SG.{url:22}.{url:43}"],
        negatives: &["SG.short.x"],
    },
    Rule {
        id: "digitalocean-token",
        description: "a DigitalOcean personal, OAuth or refresh token",
        regex: r"\b(do[opr]_v1_[a-f0-9]{64})\b",
        keywords: &["dop_v1_", "doo_v1_", "dor_v1_"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["dop_v1_{hex:64}"],
        negatives: &["dop_v1_abc"],
    },
    Rule {
        id: "shopify-token",
        description: "a Shopify access, custom-app, private-app or shared secret",
        regex: r"\b(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})\b",
        keywords: &["shpat_", "shpca_", "shppa_", "shpss_"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["shpat_{hex:32}"],
        negatives: &["shpat_abc"],
    },
    Rule {
        id: "databricks-token",
        description: "a Databricks API token",
        regex: r"\b(dapi[a-f0-9]{32}(?:-\d)?)\b",
        keywords: &["dapi"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["dapi{hex:32}"],
        negatives: &["dapi_version"],
    },
    Rule {
        id: "linear-key",
        description: "a Linear API key",
        regex: r"\b(lin_api_[A-Za-z0-9]{40})\b",
        keywords: &["lin_api_"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["lin_api_{an:40}"],
        negatives: &["lin_api_x"],
    },
    Rule {
        id: "postman-key",
        description: "a Postman API key",
        regex: r"\b(PMAK-[a-f0-9]{24}-[a-f0-9]{34})\b",
        keywords: &["pmak-"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["PMAK-{hex:24}-{hex:34}"],
        negatives: &["PMAK-123"],
    },
    Rule {
        id: "age-secret-key",
        description: "an age encryption secret key",
        regex: r"\b(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})\b",
        keywords: &["age-secret-key-1"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["AGE-SECRET-KEY-1{bech:58}"],
        negatives: &["AGE-SECRET-KEY-1"],
    },
    Rule {
        id: "telegram-bot-token",
        description: "a Telegram bot token",
        regex: r"\b([0-9]{5,16}:AA[A-Za-z0-9_-]{33})",
        keywords: &[":aa"],
        min_entropy: 0.0,
        mixed: false,
        samples: &["{digit:10}:AA{url:33}"],
        negatives: &["12:AAbc"],
    },
    Rule {
        id: "jwt",
        description: "a JSON web token (a signed or unsigned one)",
        regex: r"\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)",
        keywords: &["eyj"],
        min_entropy: 0.0,
        mixed: false,
        samples: &[
            "eyJhbGciOiJIUzI1NiJ9.eyJ{url:30}.{url:43}",
            "token=«eyJhbGciOiJub25lIn0.eyJ{url:20}.»",
        ],
        negatives: &["eyJhbGci"],
    },
    Rule {
        id: "basic-auth",
        description: "the credentials of an HTTP Basic Authorization header, wherever it is written (curl -H, a git extraheader, code)",
        regex: r#"(?i)\bauthorization["']?\s*[:=]\s*["']?basic\s+([A-Za-z0-9+/_-]{4,}={0,2})"#,
        keywords: &["basic"],
        min_entropy: 0.0,
        mixed: true,
        samples: &[
            "Authorization: Basic «{b64:28}==»",
            "curl -H 'Authorization: basic «{b64:20}»' https://h",
            "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic «{b64:60}»",
            "\"Authorization\": \"Basic «{b64:24}»\"",
        ],
        negatives: &[
            "basic arithmetic and Authorization: see below",
            "WWW-Authenticate: Basic realm=\"api\"",
        ],
    },
    Rule {
        id: "bearer-token",
        description: "the credential after Bearer or Token in an Authorization header, or Bearer anywhere",
        regex: r#"(?i)(?:\bbearer|\bauthorization["']?\s*[:=]\s*["']?(?:token|bearer))\s+([A-Za-z0-9._~+/-]{8,}=*)"#,
        keywords: &["bearer", "token"],
        min_entropy: 2.5,
        mixed: true,
        samples: &[
            "Authorization: Bearer «{url:40}»",
            "> authorization: bearer «{hex:32}»",
            "Authorization: token «{an:40}»",
        ],
        negatives: &[
            "the bearer of news",
            "Bearer authentication is described below",
            "Bearer aaaaaaaaaaaa",
        ],
    },
    Rule {
        id: "curl-user",
        description: "the password in curl's -u / --user user:password",
        regex: r#"\bcurl\b[^\n]*?\s(?:-u\s*|--user[=\s]\s*)["']?[^\s:"']*:([^\s"']+)"#,
        keywords: &["curl"],
        min_entropy: 0.0,
        mixed: false,
        samples: &[
            "curl -u admin:«{an:12}» https://h/api",
            "curl -s --user 'me:«{an:16}»' https://h",
            "curl -uapi:«{an:20}» https://h",
        ],
        negatives: &["curl -u admin https://h", "curl -u $USER: https://h"],
    },
    Rule {
        id: "mysql-password",
        description: "the password joined to the -p of a MySQL client",
        regex: r#"\bmysql(?:dump|admin|import|show|slap|check|sh)?\b[^\n]*?\s-p(?:"([^"\n]+)"|'([^'\n]+)'|([^\s"'-][^\s]*))"#,
        keywords: &["mysql"],
        min_entropy: 0.0,
        mixed: false,
        samples: &[
            "mysql -u root -p«{an:12}» app",
            "mysqldump -uroot -p'«{an:10}»' db > out.sql",
            "docker exec db mysql -h db -p«{an:14}» -e 'select 1'",
        ],
        negatives: &["mysql -u root -p app", "mysql -P 3306 -h db"],
    },
];

/// The rules, compiled, with the lowest priority number winning overlaps.
pub(crate) struct Compiled {
    pub(crate) rule: &'static Rule,
    pub(crate) regex: Regex,
}

pub(crate) static COMPILED: LazyLock<Vec<Compiled>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|rule| Compiled {
            rule,
            regex: Regex::new(rule.regex).expect("the built-in rules are valid regexes"),
        })
        .collect()
});

/// Shannon entropy of `text`, in bits per character (per byte for non-ASCII text).
pub(crate) fn entropy(text: &str) -> f64 {
    let mut counts = [0usize; 256];
    for byte in text.bytes() {
        counts[usize::from(byte)] += 1;
    }
    let len = text.len() as f64;
    counts
        .iter()
        .filter(|count| **count > 0)
        .map(|count| {
            let p = *count as f64 / len;
            -p * p.log2()
        })
        .sum()
}
