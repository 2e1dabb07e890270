//! Deny rules: globs over workspace-relative paths that refuse reading or writing.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Access, Error};

/// Rules that refuse both reading and writing by default: files that usually hold secrets.
pub(crate) const DEFAULT_DENY: &[&str] =
    &[".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*"];

/// Rules that refuse writing by default: git runs code from `.git/config` and `.git/hooks/*`
/// the next time the user runs it, and a `.git` file (in a worktree) redirects git elsewhere.
pub(crate) const DEFAULT_DENY_WRITE: &[&str] = &[".git"];

/// The compiled deny rules of a workspace.
#[derive(Debug)]
pub(crate) struct Rules {
    /// Refuses reading: the rules given to `deny`.
    read: Matcher,
    /// Refuses writing: the rules given to `deny` and to `deny_write`.
    write: Matcher,
}

impl Rules {
    /// Compiles the rules; `deny` refuse both kinds of access, `deny_write` only writing.
    pub(crate) fn new(deny: &[String], deny_write: &[String]) -> Result<Rules, Error> {
        let both: Vec<String> = deny.iter().chain(deny_write).cloned().collect();
        Ok(Rules {
            read: Matcher::new(deny.to_vec())?,
            write: Matcher::new(both)?,
        })
    }

    /// The first rule (as configured) refusing `access` to the path made of `components`,
    /// checking the path's ancestors first: a rule that covers a directory covers everything
    /// in it.
    pub(crate) fn refusing<'c>(
        &self,
        access: Access,
        components: impl IntoIterator<Item = &'c str>,
    ) -> Option<&str> {
        let matcher = match access {
            Access::Read => &self.read,
            Access::Write => &self.write,
        };
        let mut path = String::new();
        for component in components {
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(component);
            if let Some(rule) = matcher.first_match(&path) {
                return Some(rule);
            }
        }
        None
    }
}

/// A glob set that remembers the pattern behind each glob, so a refusal can name its rule.
#[derive(Debug)]
struct Matcher {
    set: GlobSet,
    patterns: Vec<String>,
}

impl Matcher {
    fn new(patterns: Vec<String>) -> Result<Matcher, Error> {
        let mut builder = GlobSetBuilder::new();
        for pattern in &patterns {
            builder.add(compile(pattern)?);
        }
        let set = builder.build().map_err(|error| Error::InvalidRule {
            rule: patterns.join(", "),
            reason: error.kind().to_string(),
        })?;
        Ok(Matcher { set, patterns })
    }

    fn first_match(&self, path: &str) -> Option<&str> {
        let index = *self.set.matches(path).first()?;
        Some(&self.patterns[index])
    }
}

/// Compiles one rule. A pattern without `/` matches a name at any depth (`.env` matches
/// `a/b/.env`); a pattern with `/` matches the whole workspace-relative path. `*` never
/// crosses a `/`; `**` does.
fn compile(pattern: &str) -> Result<globset::Glob, Error> {
    let anchored = if pattern.contains('/') {
        pattern.to_owned()
    } else {
        format!("**/{pattern}")
    };
    GlobBuilder::new(&anchored)
        .literal_separator(true)
        .build()
        .map_err(|error| Error::InvalidRule {
            rule: pattern.to_owned(),
            reason: error.kind().to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> Rules {
        let own = |rules: &[&str]| {
            rules
                .iter()
                .map(|rule| rule.to_string())
                .collect::<Vec<_>>()
        };
        Rules::new(&own(DEFAULT_DENY), &own(DEFAULT_DENY_WRITE)).expect("the defaults compile")
    }

    fn refusing(rules: &Rules, access: Access, path: &str) -> Option<String> {
        rules.refusing(access, path.split('/')).map(str::to_owned)
    }

    macro_rules! rule_table {
        ($($name:ident: $path:expr => read $read:expr, write $write:expr;)*) => {$(
            #[test]
            fn $name() {
                let rules = defaults();
                assert_eq!(refusing(&rules, Access::Read, $path).as_deref(), $read, "read {}", $path);
                assert_eq!(refusing(&rules, Access::Write, $path).as_deref(), $write, "write {}", $path);
            }
        )*};
    }

    rule_table! {
        dotenv_at_the_root: ".env" => read Some(".env"), write Some(".env");
        dotenv_at_depth: "a/b/.env" => read Some(".env"), write Some(".env");
        dotenv_variant: "config/.env.local" => read Some(".env.*"), write Some(".env.*");
        dotenv_lookalike_is_allowed: "env.example" => read None, write None;
        dotenv_suffix_is_allowed: "x.env" => read None, write None;
        pem: "certs/server.pem" => read Some("*.pem"), write Some("*.pem");
        key: "server.key" => read Some("*.key"), write Some("*.key");
        key_lookalike: "keys.txt" => read None, write None;
        rsa_private: "home/.ssh/id_rsa" => read Some("id_rsa*"), write Some("id_rsa*");
        rsa_public: "id_rsa.pub" => read Some("id_rsa*"), write Some("id_rsa*");
        ed25519: "id_ed25519" => read Some("id_ed25519*"), write Some("id_ed25519*");
        git_dir_is_readable_not_writable: ".git" => read None, write Some(".git");
        git_config: ".git/config" => read None, write Some(".git");
        git_hook: ".git/hooks/pre-commit" => read None, write Some(".git");
        nested_git: "vendor/lib/.git/config" => read None, write Some(".git");
        gitignore_is_writable: ".gitignore" => read None, write None;
        github_dir_is_writable: ".github/workflows/ci.yml" => read None, write None;
        ordinary_source: "src/main.rs" => read None, write None;
        inside_a_denied_directory: "secrets.key/notes.txt" => read Some("*.key"), write Some("*.key");
    }

    #[test]
    fn a_pattern_with_a_slash_is_anchored_at_the_root() {
        let rules = Rules::new(&["private/*.txt".to_owned()], &[]).expect("compiles");
        assert_eq!(
            refusing(&rules, Access::Read, "private/a.txt").as_deref(),
            Some("private/*.txt")
        );
        assert_eq!(refusing(&rules, Access::Read, "x/private/a.txt"), None);
        // `*` does not cross `/`.
        assert_eq!(refusing(&rules, Access::Read, "private/a/b.txt"), None);
    }

    #[test]
    fn write_only_rules_do_not_refuse_reading() {
        let rules = Rules::new(&[], &["build".to_owned()]).expect("compiles");
        assert_eq!(refusing(&rules, Access::Read, "build/out"), None);
        assert_eq!(
            refusing(&rules, Access::Write, "build/out").as_deref(),
            Some("build")
        );
    }

    #[test]
    fn the_first_configured_rule_is_named() {
        let rules = Rules::new(&["*.txt".to_owned(), "a.*".to_owned()], &[]).expect("compiles");
        assert_eq!(
            refusing(&rules, Access::Read, "a.txt").as_deref(),
            Some("*.txt")
        );
    }

    #[test]
    fn the_root_itself_is_never_refused() {
        let rules = Rules::new(&["**".to_owned()], &[]).expect("compiles");
        assert_eq!(rules.refusing(Access::Read, []), None);
        assert_eq!(refusing(&rules, Access::Read, "a").as_deref(), Some("**"));
    }

    #[test]
    fn an_invalid_glob_is_named_in_the_error() {
        let error = Rules::new(&["a[".to_owned()], &[]).expect_err("unclosed class");
        let message = error.to_string();
        assert!(message.starts_with("invalid deny rule `a[`: "), "{message}");
        let error = Rules::new(&[], &["{b".to_owned()]).expect_err("unclosed alternates");
        assert!(
            error.to_string().starts_with("invalid deny rule `{b`: "),
            "{error}"
        );
    }
}
