//! The environment a command receives: scrubbed, so secrets stay out of it.

use std::ffi::{OsStr, OsString};

/// The variables every command receives by default. A trailing `*` matches any
/// suffix.
const BASE: &[&str] = &[
    "PATH", "HOME", "USER", "LANG", "LC_*", "TERM", "TMPDIR", "TZ",
];

/// The words that make a variable name look secret (compared ignoring case).
const SECRET_WORDS: &[&str] = &["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"];

/// Which environment variables a command receives.
///
/// A command never inherits the whole environment. A variable is passed when,
/// in this order:
///
/// 1. its name was given to [`EnvPolicy::pass`] exactly: passed, whatever the name;
/// 2. its name looks secret (see [`is_secret_name`]): **not** passed;
/// 3. its name is one of `PATH`, `HOME`, `USER`, `LANG`, `LC_*`, `TERM`,
///    `TMPDIR`, `TZ`, or matches a pattern given to [`EnvPolicy::pass`]: passed;
/// 4. otherwise: not passed.
///
/// Then the values given to [`EnvPolicy::set`] are added, replacing any
/// variable of the same name.
///
/// ```
/// use harness_exec::EnvPolicy;
///
/// // CARGO_* passes, but CARGO_REGISTRY_TOKEN only because it is named.
/// let env = EnvPolicy::scrubbed()
///     .pass("CARGO_*")
///     .pass("CARGO_REGISTRY_TOKEN")
///     .set("NO_COLOR", "1");
/// # let _ = env;
/// ```
#[derive(Clone, Debug)]
pub struct EnvPolicy {
    /// Names and `PREFIX*` patterns given to [`EnvPolicy::pass`].
    passed: Vec<String>,
    /// Variables given to [`EnvPolicy::set`], in order.
    set: Vec<(OsString, OsString)>,
}

impl Default for EnvPolicy {
    fn default() -> EnvPolicy {
        EnvPolicy::scrubbed()
    }
}

impl EnvPolicy {
    /// Only the base variables (`PATH`, `HOME`, `USER`, `LANG`, `LC_*`,
    /// `TERM`, `TMPDIR`, `TZ`) are passed.
    pub fn scrubbed() -> EnvPolicy {
        EnvPolicy {
            passed: Vec::new(),
            set: Vec::new(),
        }
    }

    /// Also passes the variable `name`, or every variable matching `name` when
    /// it ends in `*` (`CARGO_*`). A pattern never passes a secret-looking
    /// name; an exact name always passes, secret-looking or not.
    pub fn pass(mut self, name: impl Into<String>) -> EnvPolicy {
        self.passed.push(name.into());
        self
    }

    /// Sets `name` to `value` in every command's environment.
    pub fn set(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> EnvPolicy {
        self.set.push((name.into(), value.into()));
        self
    }

    /// The environment of a command, from the variables of its parent.
    pub(crate) fn child_env(&self, parent: &[(OsString, OsString)]) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = parent
            .iter()
            .filter(|(name, _)| name.to_str().is_some_and(|name| self.passes(name)))
            .cloned()
            .collect();
        for (name, value) in &self.set {
            env.retain(|(existing, _)| existing != name);
            env.push((name.clone(), value.clone()));
        }
        env
    }

    /// True if and only if a parent variable called `name` is passed.
    fn passes(&self, name: &str) -> bool {
        if self.passed.iter().any(|passed| passed == name) {
            return true;
        }
        !is_secret_name(name)
            && BASE
                .iter()
                .copied()
                .chain(self.passed.iter().map(String::as_str))
                .any(|pattern| matches_pattern(pattern, name))
    }
}

/// True if and only if `name` contains `KEY`, `TOKEN`, `SECRET`, `PASSWORD`
/// or `CREDENTIAL`, ignoring case.
///
/// This is the rule for environment variable names: such a variable reaches a
/// command only when named explicitly, and its value is redacted wherever it
/// appears (see [`Redactor::from_vars`](crate::Redactor::from_vars)).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|word| upper.contains(word))
}

/// True if and only if `name` is `pattern`, or starts with `pattern` without
/// its trailing `*`.
fn matches_pattern(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

/// The value of `name` in `env`, if it is there.
pub(crate) fn lookup<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsStr> {
    env.iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_os_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<&str> {
        env.iter()
            .map(|(name, _)| name.to_str().expect("utf-8"))
            .collect()
    }

    const PARENT: &[(&str, &str)] = &[
        ("PATH", "/usr/bin"),
        ("HOME", "/home/u"),
        ("USER", "u"),
        ("LANG", "C.UTF-8"),
        ("LC_ALL", "C"),
        ("TERM", "dumb"),
        ("TMPDIR", "/tmp"),
        ("TZ", "UTC"),
        ("EDITOR", "vi"),
        ("PATHOLOGY", "x"),
        ("CARGO_HOME", "/c"),
        ("CARGO_REGISTRY_TOKEN", "t"),
        ("GITHUB_TOKEN", "ghp"),
        ("AWS_SECRET_ACCESS_KEY", "k"),
        ("DB_PASSWORD", "p"),
        ("GOOGLE_APPLICATION_CREDENTIALS", "/c.json"),
        ("LC_API_KEY", "k"),
    ];

    #[test]
    fn scrubbed_passes_only_the_base_variables() {
        let env = EnvPolicy::scrubbed().child_env(&vars(PARENT));
        assert_eq!(
            names(&env),
            [
                "PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ"
            ]
        );
    }

    #[test]
    fn a_pattern_passes_matching_names_but_not_secret_ones() {
        let env = EnvPolicy::scrubbed()
            .pass("CARGO_*")
            .child_env(&vars(PARENT));
        assert!(names(&env).contains(&"CARGO_HOME"));
        assert!(!names(&env).contains(&"CARGO_REGISTRY_TOKEN"));
    }

    #[test]
    fn an_exact_name_passes_even_a_secret() {
        let env = EnvPolicy::scrubbed()
            .pass("GITHUB_TOKEN")
            .pass("EDITOR")
            .child_env(&vars(PARENT));
        assert!(names(&env).contains(&"GITHUB_TOKEN"));
        assert!(names(&env).contains(&"EDITOR"));
        assert!(!names(&env).contains(&"DB_PASSWORD"));
    }

    #[test]
    fn set_adds_and_replaces() {
        let env = EnvPolicy::scrubbed()
            .set("NO_COLOR", "1")
            .set("TERM", "xterm")
            .child_env(&vars(PARENT));
        assert_eq!(lookup(&env, "NO_COLOR"), Some(OsStr::new("1")));
        assert_eq!(lookup(&env, "TERM"), Some(OsStr::new("xterm")));
        assert_eq!(names(&env).iter().filter(|n| **n == "TERM").count(), 1);
        assert_eq!(lookup(&env, "MISSING"), None);
    }

    #[test]
    fn non_utf8_names_are_never_passed() {
        use std::os::unix::ffi::OsStringExt;
        let parent = vec![(
            OsString::from_vec(b"PATH\xff".to_vec()),
            OsString::from("x"),
        )];
        assert!(
            EnvPolicy::scrubbed()
                .pass("PATH*")
                .child_env(&parent)
                .is_empty()
        );
    }

    macro_rules! secret_names {
        ($($name:literal => $secret:expr,)*) => {
            #[test]
            fn secret_name_rule() {
                $(assert_eq!(is_secret_name($name), $secret, "{}", $name);)*
            }
        };
    }

    secret_names! {
        "API_KEY" => true,
        "api_key" => true,
        "GITHUB_TOKEN" => true,
        "CLIENT_SECRET" => true,
        "DB_PASSWORD" => true,
        "GOOGLE_APPLICATION_CREDENTIALS" => true,
        "OpenAiApiKey" => true,
        "PATH" => false,
        "HOME" => false,
        "PASSWD_FILE" => false,
        "" => false,
    }

    #[test]
    fn patterns() {
        assert!(matches_pattern("LC_*", "LC_ALL"));
        assert!(matches_pattern("LC_*", "LC_"));
        assert!(!matches_pattern("LC_*", "LANG"));
        assert!(matches_pattern("PATH", "PATH"));
        assert!(!matches_pattern("PATH", "PATHX"));
        assert!(matches_pattern("*", "anything"));
    }
}
