//! Deny rules: `.gitignore` patterns over workspace-relative paths that refuse reading or
//! writing, matched by the `ignore` crate's gitignore matcher (ripgrep's).

use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::error::{Access, Error};

/// Rules that refuse both reading and writing by default: files that usually hold secrets.
pub(crate) const DEFAULT_DENY: &[&str] =
    &[".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*"];

/// Rules that refuse writing by default: git runs code from `.git/config` and `.git/hooks/*`
/// the next time the user runs it, and a `.git` file (in a worktree) redirects git elsewhere.
pub(crate) const DEFAULT_DENY_WRITE: &[&str] = &[".git"];

/// What the last name of a judged path is. Ancestors are directories by definition; the last
/// name matters for rules ending in `/`, which match directories only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A directory.
    Dir,
    /// Anything else that exists: a file, a link that is not followed, a FIFO.
    NotDir,
    /// Nothing exists there yet, or the caller cannot tell: judged both ways, and refused if
    /// either is.
    Unknown,
}

/// The compiled deny rules of a workspace: independent sets, each a list of rules in
/// `.gitignore` syntax.
#[derive(Debug)]
pub(crate) struct Rules {
    /// In the order given; the first set that refuses a path names its rule.
    sets: Vec<Set>,
}

/// One list of rules. A `!` rule re-includes only what an earlier rule of the same list
/// excluded: it cannot lift a refusal of another set (a built-in one, say).
#[derive(Debug)]
struct Set {
    /// [`Access::Read`]: the set refuses reading and writing; [`Access::Write`]: writing only.
    refuses: Access,
    /// The rules, compiled.
    matcher: Gitignore,
}

impl Rules {
    /// Compiles each list of rules into a set of its own; a list marked [`Access::Read`]
    /// refuses reading and writing, one marked [`Access::Write`] only writing.
    pub(crate) fn new(lists: &[(Access, &[String])]) -> Result<Rules, Error> {
        let mut sets = Vec::new();
        for (refuses, rules) in lists {
            sets.push(Set {
                refuses: *refuses,
                matcher: compile(rules)?,
            });
        }
        Ok(Rules { sets })
    }

    /// The rule refusing `access` to the path made of `names` (relative to the root), whose
    /// last name is of `kind`; `None` when the path is allowed. The root (no names) is never
    /// refused.
    ///
    /// Each set judges the path as git judges a path under an ignored directory: the
    /// ancestors from the top, then the path itself. A refused ancestor refuses everything
    /// below it, whatever a later `!` rule says about the path.
    pub(crate) fn refusing<S: AsRef<str>>(
        &self,
        access: Access,
        names: &[S],
        kind: Kind,
    ) -> Option<&str> {
        self.sets
            .iter()
            .filter(|set| access == Access::Write || set.refuses == Access::Read)
            .find_map(|set| set.refusing(names, kind))
    }
}

impl Set {
    fn refusing<S: AsRef<str>>(&self, names: &[S], kind: Kind) -> Option<&str> {
        let mut path = PathBuf::new();
        for (index, name) in names.iter().enumerate() {
            path.push(name.as_ref());
            let is_last = index + 1 == names.len();
            let judged_as: &[bool] = match kind {
                _ if !is_last => &[true],
                Kind::Dir => &[true],
                Kind::NotDir => &[false],
                Kind::Unknown => &[true, false],
            };
            for &is_dir in judged_as {
                if let Match::Ignore(glob) = self.matcher.matched(&path, is_dir) {
                    return Some(glob.original());
                }
            }
        }
        None
    }
}

/// Checks one rule the way [`Rules::new`] would, for a caller that wants to report a bad
/// rule before it builds a workspace (a configuration file being loaded, say).
pub(crate) fn check(rule: &str) -> Result<(), Error> {
    compile(&[rule.to_owned()]).map(drop)
}

/// Compiles a list of rules: `.gitignore` syntax, case-insensitive, and a rule that cannot
/// match anything is an error rather than silently nothing.
fn compile(rules: &[String]) -> Result<Gitignore, Error> {
    let mut builder = builder();
    for rule in rules {
        refuse_unmatchable(rule)?;
        builder
            .add_line(None, rule)
            .map_err(|error| invalid(rule, &error))?;
    }
    builder.build().map_err(|error| Error::InvalidRule {
        rule: rules.join(", "),
        reason: reason(&error),
    })
}

/// A gitignore builder for deny rules.
///
/// Case-insensitive, because on a case-insensitive file system (macOS and Windows by default,
/// ext4 and others with casefolding) `SECRETS/db.txt` opens the file that `secrets/` protects.
/// An unclosed `[` is an error, not a literal as git would take it: a typo in a deny rule
/// should be heard of, not turn into a rule that matches nothing.
fn builder() -> GitignoreBuilder {
    let mut builder = GitignoreBuilder::new(".");
    builder.allow_unclosed_class(false);
    // Always Ok: the call only records the flag.
    let _ = builder.case_insensitive(true);
    builder
}

/// Refuses a rule that `.gitignore` syntax would take as no rule at all, or one that no
/// workspace path can match.
fn refuse_unmatchable(rule: &str) -> Result<(), Error> {
    let unmatchable = |reason: &str| Error::InvalidRule {
        rule: rule.to_owned(),
        reason: reason.to_owned(),
    };
    if rule.contains(['\n', '\r']) {
        return Err(unmatchable(
            "a rule is one line; give each rule as its own entry",
        ));
    }
    // The path part, as a negation would name it too.
    let path = rule.strip_prefix('!').unwrap_or(rule);
    if path.split('/').any(|name| name == "..") {
        return Err(unmatchable(
            "rules match paths inside the workspace, which never contain `..`",
        ));
    }
    if path.split('/').any(|name| name == ".") {
        return Err(unmatchable(
            "no name in a workspace path is `.`, so it matches nothing: write the path from \
             the workspace's top without `./` (a leading `/` keeps it to the top)",
        ));
    }
    // A leading `/` anchors and a trailing one means a directory; any other empty name
    // (`secrets//db.txt`) is in no path.
    let names = path.strip_prefix('/').unwrap_or(path);
    let names = names.strip_suffix('/').unwrap_or(names);
    if !names.is_empty() && names.split('/').any(str::is_empty) {
        return Err(unmatchable(
            "no name in a workspace path is empty, so `//` matches nothing: separate names \
             with one `/`",
        ));
    }
    if path == "~" || path.starts_with("~/") {
        return Err(unmatchable(
            "`~` is not your home here, so it matches nothing: rules match paths inside the \
             workspace, from its top",
        ));
    }
    if let Some(escaped) = needless_escape(path) {
        return Err(unmatchable(&format!(
            "`\\{escaped}` is `{escaped}` in .gitignore syntax, where `\\` escapes the next \
             character: separate names with `/`"
        )));
    }
    let mut alone = builder();
    alone
        .add_line(None, rule)
        .map_err(|error| invalid(rule, &error))?;
    let compiled = alone.build().map_err(|error| invalid(rule, &error))?;
    if compiled.is_empty() {
        return Err(unmatchable(
            "it matches nothing: in .gitignore syntax it is blank or a comment (write `\\#` for \
             a name that starts with `#`)",
        ));
    }
    Ok(())
}

/// Refuses a rule that is the absolute path of a place in the workspace at `root`
/// (`/home/me/project/secrets.txt`): in `.gitignore` syntax a leading `/` only anchors a
/// rule at the workspace's top, so it would look for `home/me/project/…` there and match
/// nothing.
pub(crate) fn refuse_absolute_within(rule: &str, root: &Path) -> Result<(), Error> {
    let path = rule.strip_prefix('!').unwrap_or(rule);
    let roots = [Some(root.to_path_buf()), std::fs::canonicalize(root).ok()];
    for root in roots.iter().flatten() {
        let Some(root) = root.to_str() else {
            continue;
        };
        let root = root.trim_end_matches('/');
        if let Some(inside) = path.strip_prefix(root).filter(|rest| rest.starts_with('/')) {
            let inside = inside.trim_start_matches('/');
            return Err(Error::InvalidRule {
                rule: rule.to_owned(),
                reason: format!(
                    "it is an absolute path, and rules match paths from the workspace's top \
                     (a leading `/` only keeps a rule to the top): write `/{inside}`"
                ),
            });
        }
    }
    Ok(())
}

/// The first character a backslash in `rule` escapes that needs no escaping: a backslash
/// written as a path separator (`secrets\\db.txt`), which `.gitignore` syntax reads as
/// `secretsdb.txt`.
fn needless_escape(rule: &str) -> Option<char> {
    /// What a backslash may escape: glob syntax, the characters special at a rule's start,
    /// a (trailing) space, and the backslash itself.
    const SPECIAL: &[char] = &['*', '?', '[', ']', '{', '}', ',', '\\', '!', '#', ' '];
    let mut chars = rule.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(escaped) if !SPECIAL.contains(&escaped) => return Some(escaped),
                _ => {}
            }
        }
    }
    None
}

fn invalid(rule: &str, error: &ignore::Error) -> Error {
    Error::InvalidRule {
        rule: rule.to_owned(),
        reason: reason(error),
    }
}

/// The glob parser's own words, without the wrapping that repeats the rule.
fn reason(error: &ignore::Error) -> String {
    match error {
        ignore::Error::Glob { err, .. } => err.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own(rules: &[&str]) -> Vec<String> {
        rules.iter().map(|rule| rule.to_string()).collect()
    }

    fn defaults() -> Rules {
        let (deny, write) = (own(DEFAULT_DENY), own(DEFAULT_DENY_WRITE));
        Rules::new(&[(Access::Read, &deny), (Access::Write, &write)]).expect("the defaults")
    }

    /// The built-in rules, then `deny` as the user's read rules.
    fn with_user(deny: &[&str]) -> Rules {
        let (builtin, write, user) = (own(DEFAULT_DENY), own(DEFAULT_DENY_WRITE), own(deny));
        Rules::new(&[
            (Access::Read, &builtin),
            (Access::Write, &write),
            (Access::Read, &user),
        ])
        .expect("the rules compile")
    }

    fn refusing(rules: &Rules, access: Access, path: &str, kind: Kind) -> Option<String> {
        let names: Vec<&str> = path.split('/').collect();
        rules.refusing(access, &names, kind).map(str::to_owned)
    }

    macro_rules! rule_table {
        ($($name:ident: $path:expr => read $read:expr, write $write:expr;)*) => {$(
            #[test]
            fn $name() {
                let rules = defaults();
                assert_eq!(
                    refusing(&rules, Access::Read, $path, Kind::NotDir).as_deref(),
                    $read,
                    "read {}",
                    $path
                );
                assert_eq!(
                    refusing(&rules, Access::Write, $path, Kind::NotDir).as_deref(),
                    $write,
                    "write {}",
                    $path
                );
            }
        )*};
    }

    rule_table! {
        dotenv_at_the_root: ".env" => read Some(".env"), write Some(".env");
        dotenv_at_depth: "a/b/.env" => read Some(".env"), write Some(".env");
        dotenv_in_another_case: "A/.ENV" => read Some(".env"), write Some(".env");
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
        git_in_another_case: ".GIT/hooks/pre-commit" => read None, write Some(".git");
        git_hook: ".git/hooks/pre-commit" => read None, write Some(".git");
        nested_git: "vendor/lib/.git/config" => read None, write Some(".git");
        gitignore_is_writable: ".gitignore" => read None, write None;
        github_dir_is_writable: ".github/workflows/ci.yml" => read None, write None;
        ordinary_source: "src/main.rs" => read None, write None;
        inside_a_denied_directory: "secrets.key/notes.txt" => read Some("*.key"), write Some("*.key");
    }

    /// `rules` (the user's, over the defaults) × path and kind → the refusing rule.
    macro_rules! user_table {
        ($($name:ident: $rules:expr, $path:expr, $kind:ident => $expected:expr;)*) => {$(
            #[test]
            fn $name() {
                let rules = with_user(&$rules);
                assert_eq!(
                    refusing(&rules, Access::Read, $path, Kind::$kind).as_deref(),
                    $expected,
                    "{:?} reading {} ({:?})",
                    $rules,
                    $path,
                    Kind::$kind
                );
            }
        )*};
    }

    user_table! {
        trailing_slash_matches_the_directory: ["secrets/"], "secrets", Dir => Some("secrets/");
        trailing_slash_covers_what_is_inside: ["secrets/"], "secrets/db.txt", NotDir => Some("secrets/");
        trailing_slash_at_any_depth: ["secrets/"], "app/secrets/deep/db.txt", NotDir => Some("secrets/");
        trailing_slash_spares_a_file_of_that_name: ["secrets/"], "secrets", NotDir => None;
        trailing_slash_refuses_a_missing_name: ["secrets/"], "secrets", Unknown => Some("secrets/");
        trailing_slash_spares_a_lookalike: ["secrets/"], "secrets-old/db.txt", NotDir => None;
        leading_slash_anchors_at_the_root: ["/private"], "private/a.txt", NotDir => Some("/private");
        leading_slash_only_at_the_root: ["/private"], "src/private/a.txt", NotDir => None;
        slash_inside_anchors_too: ["config/prod.toml"], "config/prod.toml", NotDir => Some("config/prod.toml");
        slash_inside_not_at_depth: ["config/prod.toml"], "app/config/prod.toml", NotDir => None;
        star_stays_in_one_name: ["private/*.txt"], "private/a/b.txt", NotDir => None;
        star_in_one_name: ["private/*.txt"], "private/a.txt", NotDir => Some("private/*.txt");
        double_star_crosses_names: ["private/**/*.txt"], "private/a/b/c.txt", NotDir => Some("private/**/*.txt");
        leading_double_star: ["**/cache"], "a/b/cache/x", NotDir => Some("**/cache");
        trailing_double_star_spares_the_directory: ["secrets/**"], "secrets", Dir => None;
        trailing_double_star_covers_its_contents: ["secrets/**"], "secrets/a/b", NotDir => Some("secrets/**");
        no_slash_at_any_depth: ["*.sqlite"], "data/deep/app.sqlite", NotDir => Some("*.sqlite");
        case_does_not_matter: ["secrets/"], "Secrets/DB.txt", NotDir => Some("secrets/");
        negation_re_includes: ["*.txt", "!keep.txt"], "keep.txt", NotDir => None;
        negation_leaves_the_rest: ["*.txt", "!keep.txt"], "other.txt", NotDir => Some("*.txt");
        the_last_matching_rule_decides: ["!keep.txt", "*.txt"], "keep.txt", NotDir => Some("*.txt");
        negation_cannot_reach_under_a_denied_directory:
            ["secrets/", "!secrets/public.txt"], "secrets/public.txt", NotDir => Some("secrets/");
        negation_cannot_lift_a_builtin_rule: ["!.env"], ".env", NotDir => Some(".env");
        negation_cannot_lift_a_builtin_rule_with_a_glob: ["!*"], "tls/server.pem", NotDir => Some("*.pem");
        escaped_hash_is_a_name: ["\\#notes"], "#notes", NotDir => Some("\\#notes");
        escaped_bang_is_a_name: ["\\!important"], "!important", NotDir => Some("\\!important");
    }

    #[test]
    fn a_missing_name_is_refused_if_either_kind_is() {
        let rules = with_user(&["data/", "!data"]);
        // As a directory `data/` refuses it and `!data` re-includes it (the last one wins);
        // as a file only `!data` matches.
        assert_eq!(refusing(&rules, Access::Read, "data", Kind::Unknown), None);
        let rules = with_user(&["data", "!data/"]);
        assert_eq!(
            refusing(&rules, Access::Read, "data", Kind::Unknown).as_deref(),
            Some("data")
        );
        assert_eq!(refusing(&rules, Access::Read, "data", Kind::Dir), None);
    }

    #[test]
    fn write_only_rules_do_not_refuse_reading() {
        let build = own(&["build"]);
        let rules = Rules::new(&[(Access::Write, &build)]).expect("compiles");
        assert_eq!(
            refusing(&rules, Access::Read, "build/out", Kind::NotDir),
            None
        );
        assert_eq!(
            refusing(&rules, Access::Write, "build/out", Kind::NotDir).as_deref(),
            Some("build")
        );
    }

    #[test]
    fn a_negation_in_one_set_does_not_lift_another() {
        let (read, write) = (own(&["*.log"]), own(&["!*.log"]));
        let rules = Rules::new(&[(Access::Read, &read), (Access::Write, &write)]).expect("ok");
        assert_eq!(
            refusing(&rules, Access::Write, "a.log", Kind::NotDir).as_deref(),
            Some("*.log")
        );
    }

    #[test]
    fn the_first_refusing_set_is_named() {
        let rules = with_user(&["*.env.*"]);
        assert_eq!(
            refusing(&rules, Access::Read, "a.env.x", Kind::NotDir).as_deref(),
            Some("*.env.*")
        );
        assert_eq!(
            refusing(&rules, Access::Read, ".env.x", Kind::NotDir).as_deref(),
            Some(".env.*"),
            "the built-in set comes first"
        );
    }

    #[test]
    fn the_root_itself_is_never_refused() {
        let everything = own(&["**", "*"]);
        let rules = Rules::new(&[(Access::Read, &everything)]).expect("compiles");
        let root: [&str; 0] = [];
        assert_eq!(rules.refusing(Access::Read, &root, Kind::Dir), None);
        assert_eq!(
            refusing(&rules, Access::Read, "a", Kind::NotDir).as_deref(),
            Some("*")
        );
    }

    macro_rules! invalid_rules {
        ($($name:ident: $rule:expr => $reason:expr;)*) => {$(
            #[test]
            fn $name() {
                let list = own(&["ok.txt", $rule]);
                let error = Rules::new(&[(Access::Read, &list)]).expect_err($rule);
                let message = error.to_string();
                let prefix = format!("invalid deny rule `{}`: ", $rule);
                assert!(message.starts_with(&prefix), "{message}");
                assert!(message.contains($reason), "{message}");
                assert!(
                    matches!(&error, Error::InvalidRule { rule, .. } if rule == $rule),
                    "{error:?}"
                );
                assert_eq!(check($rule).expect_err($rule).to_string(), message);
            }
        )*};
    }

    invalid_rules! {
        an_unclosed_class_is_invalid: "a[" => "unclosed character class";
        unclosed_alternates_are_invalid: "{b" => "unclosed alternate group";
        a_blank_rule_is_invalid: "  " => "it matches nothing";
        an_empty_rule_is_invalid: "" => "it matches nothing";
        a_comment_is_invalid: "# secrets" => "it matches nothing";
        a_bare_negation_is_invalid: "!" => "it matches nothing";
        a_bare_slash_is_invalid: "/" => "it matches nothing";
        a_parent_component_is_invalid: "../secrets" => "never contain `..`";
        a_nested_parent_component_is_invalid: "a/../b" => "never contain `..`";
        two_lines_are_invalid: "a\nb" => "a rule is one line";
        a_leading_dot_component_is_invalid: "./secrets/db.txt" => "no name in a workspace path is `.`";
        an_inner_dot_component_is_invalid: "secrets/./db.txt" => "no name in a workspace path is `.`";
        a_negated_dot_component_is_invalid: "!./keep" => "no name in a workspace path is `.`";
        a_negated_parent_component_is_invalid: "!../keep" => "never contain `..`";
        a_double_slash_is_invalid: "secrets//db.txt" => "no name in a workspace path is empty";
        a_double_slash_at_the_end_is_invalid: "/secrets//" => "no name in a workspace path is empty";
        a_home_path_is_invalid: "~/secrets" => "`~` is not your home here";
        a_bare_tilde_is_invalid: "~" => "`~` is not your home here";
        a_backslash_separator_is_invalid: "secrets\\db.txt" => "`\\d` is `d`";
        an_escaped_dot_is_invalid: "a\\.env" => "`\\.` is `.`";
        a_carriage_return_is_invalid: "a\r" => "a rule is one line";
    }

    #[test]
    fn an_absolute_path_inside_the_workspace_is_refused_with_the_rule_to_write() {
        let directory = tempfile::tempdir().expect("tempdir");
        let root = directory.path();
        let canonical = root.canonicalize().expect("canonical");
        for given in [root, canonical.as_path()] {
            let rule = format!("{}/secrets/db.txt", given.display());
            let error = refuse_absolute_within(&rule, root).expect_err("absolute");
            assert_eq!(
                error.to_string(),
                format!(
                    "invalid deny rule `{rule}`: it is an absolute path, and rules match paths \
                     from the workspace's top (a leading `/` only keeps a rule to the top): \
                     write `/secrets/db.txt`"
                )
            );
            let negated = format!("!{}/keep", given.display());
            assert!(refuse_absolute_within(&negated, root).is_err());
        }
        // An anchored rule, and a path beside the root that only shares its prefix.
        for rule in [
            "/secrets",
            "secrets/",
            &format!("{}-other/x", root.display()),
        ] {
            refuse_absolute_within(rule, root).unwrap_or_else(|error| panic!("{rule}: {error}"));
        }
    }

    #[test]
    fn valid_rules_pass_the_check() {
        for rule in [
            "secrets/", "/private", "**/x", "!keep", "a..b", "\\#x", "..x/y", ".env", "a/.b",
            "~backup", "a~/b", "\\!x", "a\\*", "x\\ ", "\\[a]", "a\\\\b", "a.",
        ] {
            check(rule).unwrap_or_else(|error| panic!("{rule}: {error}"));
        }
    }
}
