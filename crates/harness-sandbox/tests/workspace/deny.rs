//! Deny rules as the operations apply them: on the resolved path and on every spelling
//! of it through a link the walk followed, named in the message.

use std::fs;

use harness_sandbox::{Access, Error, Workspace};

use crate::support::Fixture;

fn assert_denied(result: Result<(), Error>, candidate: &str, access: &str, rule: &str) {
    match result {
        Err(error @ Error::Denied { .. }) => {
            assert_eq!(
                error.to_string(),
                format!(
                    "refusing to {access} {candidate}: it matches the deny rule `{rule}` (the \
                     workspace protects secrets and git internals; leave this path alone)"
                )
            );
            let io: std::io::Error = error.into();
            assert_eq!(io.kind(), std::io::ErrorKind::PermissionDenied);
        }
        other => panic!("{access} {candidate}: expected a refusal by `{rule}`, got {other:?}"),
    }
}

#[test]
fn secrets_are_neither_read_nor_written() {
    let fixture = Fixture::new();
    for name in [
        ".env",
        "config/.env.local",
        "tls/server.pem",
        "server.key",
        "id_rsa",
        "id_ed25519.pub",
    ] {
        fixture.file(name, "secret");
    }
    let workspace = fixture.workspace();
    for (candidate, rule) in [
        (".env", ".env"),
        ("config/.env.local", ".env.*"),
        ("tls/server.pem", "*.pem"),
        ("server.key", "*.key"),
        ("id_rsa", "id_rsa*"),
        ("id_ed25519.pub", "id_ed25519*"),
    ] {
        assert_denied(workspace.read(candidate).map(drop), candidate, "read", rule);
        assert_denied(
            workspace.read_to_string(candidate).map(drop),
            candidate,
            "read",
            rule,
        );
        assert_denied(
            workspace.metadata(candidate).map(drop),
            candidate,
            "read",
            rule,
        );
        assert_denied(
            workspace.check(candidate, Access::Read).map(drop),
            candidate,
            "read",
            rule,
        );
        assert_denied(workspace.write(candidate, "x"), candidate, "write", rule);
        assert_denied(workspace.remove_file(candidate), candidate, "write", rule);
        assert_eq!(
            fs::read_to_string(fixture.inside(candidate)).expect("untouched"),
            "secret"
        );
    }
    assert_denied(
        workspace.create_new("new.pem", "x"),
        "new.pem",
        "write",
        "*.pem",
    );
    assert_denied(
        workspace.create_dir_all("keys.key"),
        "keys.key",
        "write",
        "*.key",
    );
    assert_denied(
        workspace.read_dir("tls/server.pem").map(drop),
        "tls/server.pem",
        "read",
        "*.pem",
    );
    assert!(!fixture.inside("new.pem").exists());
}

#[test]
fn git_internals_are_readable_but_not_writable() {
    let fixture = Fixture::new();
    fixture.file(".git/config", "[core]\n");
    fixture.file(".git/hooks/README", "hooks");
    let workspace = fixture.workspace();
    assert_eq!(
        workspace.read_to_string(".git/config").expect("readable"),
        "[core]\n"
    );
    assert_eq!(workspace.read_dir(".git").expect("listable").len(), 2);
    assert_denied(
        workspace.write(".git/config", "evil"),
        ".git/config",
        "write",
        ".git",
    );
    assert_denied(
        workspace.create_new(".git/hooks/pre-commit", "#!/bin/sh"),
        ".git/hooks/pre-commit",
        "write",
        ".git",
    );
    assert_denied(
        workspace.create_dir_all(".git/hooks/new"),
        ".git/hooks/new",
        "write",
        ".git",
    );
    assert_denied(
        workspace.remove_file(".git/hooks/README"),
        ".git/hooks/README",
        "write",
        ".git",
    );
    assert_denied(
        workspace.check(".git/config", Access::Write).map(drop),
        ".git/config",
        "write",
        ".git",
    );
    // A `.git` file, as in a worktree, is protected too, and so are nested repositories.
    assert_denied(
        workspace.write(".git", "gitdir: /elsewhere"),
        ".git",
        "write",
        ".git",
    );
    fixture.dir("vendor/lib");
    assert_denied(
        workspace.write("vendor/lib/.git", "x"),
        "vendor/lib/.git",
        "write",
        ".git",
    );
    assert_eq!(
        fs::read_to_string(fixture.inside(".git/config")).expect("untouched"),
        "[core]\n"
    );
    assert!(!fixture.inside(".git/hooks/pre-commit").exists());
}

#[test]
fn rules_judge_the_resolved_path_and_every_spelling_through_a_link() {
    let fixture = Fixture::new();
    fixture.file(".env", "TOKEN=1");
    fixture.file(".git/config", "[core]\n");
    fixture.file("notes.txt", "notes");
    fixture.symlink(".env", "innocent.txt");
    fixture.symlink(".git", "g");
    fixture.symlink("notes.txt", "looks.key");
    let workspace = fixture.workspace();
    assert_denied(
        workspace.read("innocent.txt").map(drop),
        "innocent.txt",
        "read",
        ".env",
    );
    assert_denied(
        workspace.read("src/../.env").map(drop),
        "src/../.env",
        "read",
        ".env",
    );
    assert_denied(
        workspace.write("g/config", "evil"),
        "g/config",
        "write",
        ".git",
    );
    let absolute = format!("{}/.env", fixture.root_str());
    assert_denied(
        workspace.read(&absolute).map(drop),
        &absolute,
        "read",
        ".env",
    );
    // A link named like a secret is judged by that name too (a `.env` that links to
    // `config/settings.env` is the secret it is named for); the file it points at stays
    // readable under its own name.
    assert_denied(
        workspace.read("looks.key").map(drop),
        "looks.key",
        "read",
        "*.key",
    );
    assert_eq!(
        workspace.read_to_string("notes.txt").expect("readable"),
        "notes"
    );
    assert_eq!(
        fs::read_to_string(fixture.inside(".git/config")).expect("untouched"),
        "[core]\n"
    );
}

#[test]
fn removing_a_link_is_judged_on_the_link_itself() {
    let fixture = Fixture::new();
    fixture.file(".env", "TOKEN=1");
    fixture.symlink(".env", "shortcut");
    let workspace = fixture.workspace();
    workspace
        .remove_file("shortcut")
        .expect("the link is not a secret");
    assert!(fixture.inside(".env").exists());
}

#[test]
fn rules_are_configurable() {
    let fixture = Fixture::new();
    fixture.file(".env", "TOKEN=1");
    fixture.file("data/app.sqlite", "db");
    fixture.file("Cargo.lock", "lock");
    let workspace = Workspace::builder(&fixture.root)
        .deny("*.sqlite")
        .deny_write("Cargo.lock")
        .build()
        .expect("workspace");
    assert_denied(
        workspace.read("data/app.sqlite").map(drop),
        "data/app.sqlite",
        "read",
        "*.sqlite",
    );
    assert_eq!(
        workspace.read_to_string("Cargo.lock").expect("readable"),
        "lock"
    );
    assert_denied(
        workspace.write("Cargo.lock", "x"),
        "Cargo.lock",
        "write",
        "Cargo.lock",
    );
    assert_denied(workspace.read(".env").map(drop), ".env", "read", ".env");

    let open = Workspace::builder(&fixture.root)
        .clear_rules()
        .deny_write("data")
        .build()
        .expect("workspace");
    assert_eq!(
        open.read_to_string(".env").expect("no default rules"),
        "TOKEN=1"
    );
    open.write(".git-like", "x").expect("nothing refuses it");
    assert_denied(
        open.write("data/app.sqlite", "x"),
        "data/app.sqlite",
        "write",
        "data",
    );
}

#[test]
fn an_invalid_rule_is_refused_when_building() {
    let fixture = Fixture::new();
    let error = Workspace::builder(&fixture.root)
        .deny("src/[")
        .build()
        .expect_err("bad glob");
    assert!(
        matches!(&error, Error::InvalidRule { rule, .. } if rule == "src/["),
        "{error:?}"
    );
}

#[test]
fn deny_predicates_answer_for_relative_and_absolute_paths() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace();
    let root = fixture.root_str();
    for (path, read, write) in [
        (".env", true, true),
        ("a/b/.env", true, true),
        ("./.env", true, true),
        ("src/main.rs", false, false),
        (".git/config", false, true),
        (".git", false, true),
        (".", false, false),
        ("", false, false),
        // Paths that cannot be judged as workspace-relative are refused.
        ("../.env", true, true),
        ("src/../main.rs", true, true),
        ("/etc/hostname", true, true),
        (&format!("{root}-evil/main.rs"), true, true),
        // Absolute paths under the root are judged on their relative part.
        (&format!("{root}/src/main.rs"), false, false),
        (&format!("{root}/.env"), true, true),
        (&format!("{root}/.git/index"), false, true),
        (&root, false, false),
    ] {
        assert_eq!(workspace.is_read_denied(path), read, "read {path}");
        assert_eq!(workspace.is_write_denied(path), write, "write {path}");
    }
}

/// The user's rules of the gitignore table below, over the built-in ones.
const USER_RULES: &[&str] = &[
    "secrets/",
    "/private",
    "*.sqlite",
    "!keep.sqlite",
    "docs/**/draft.md",
    "!.env",
    "!*.pem",
];

/// The tree the gitignore table judges, every file holding `original`.
fn gitignore_fixture() -> Fixture {
    let fixture = Fixture::new();
    for name in [
        "secrets/db.txt",
        "secrets/sub/deep.txt",
        "app/secrets/x.txt",
        "secrets-old/db.txt",
        "private/p.txt",
        "src/private/ok.txt",
        "data/app.sqlite",
        "data/keep.sqlite",
        "docs/a/b/draft.md",
        "docs/final.md",
        ".env",
        "tls/server.pem",
    ] {
        fixture.file(name, "original");
    }
    fixture.symlink("secrets", "alias");
    fixture
}

fn gitignore_workspace(fixture: &Fixture) -> Workspace {
    let mut builder = Workspace::builder(&fixture.root);
    for rule in USER_RULES {
        builder.deny(*rule);
    }
    builder.build().expect("the rules are valid")
}

/// Operations that read, and those that write, by the names of [`crate::support::OPERATIONS`].
const READS: &[&str] = &[
    "check read",
    "read",
    "read_to_string",
    "metadata",
    "read_dir",
    "open_dir",
];
const WRITES: &[&str] = &[
    "check write",
    "write",
    "create_new",
    "create_dir_all",
    "remove_file",
];

/// Every operation on `candidate`: refused by `rule` when one is expected, else never refused
/// by a rule (it may still fail for another reason, as reading a directory does).
fn judge_everywhere(fixture: &Fixture, candidate: &str, rule: Option<&str>) {
    let workspace = gitignore_workspace(fixture);
    for (name, operation) in crate::support::OPERATIONS {
        let access = if READS.contains(name) {
            "read"
        } else if WRITES.contains(name) {
            "write"
        } else {
            continue;
        };
        let is_link = fs::symlink_metadata(fixture.inside(candidate))
            .is_ok_and(|metadata| metadata.is_symlink());
        if *name == "remove_file" && is_link {
            // Removing a link is judged on the link itself (tested above).
            continue;
        }
        let result = operation(&workspace, candidate);
        match rule {
            Some(rule) => assert_denied(result, candidate, access, rule),
            None => assert!(
                !matches!(result, Err(Error::Denied { .. })),
                "{name} {candidate}: refused: {result:?}"
            ),
        }
    }
    // A file read through its directory's handle, as a walker reads what it found (the
    // message names the resolved path).
    let Some((parent, name)) = candidate.rsplit_once('/') else {
        return;
    };
    if fs::metadata(fixture.inside(candidate)).is_ok_and(|metadata| metadata.is_dir()) {
        return;
    }
    let result = workspace.open_dir(parent).and_then(|dir| dir.read(name));
    match rule {
        Some(rule) => assert!(
            matches!(&result, Err(Error::Denied { rule: r, .. }) if r == rule),
            "open_dir then read {candidate}: {result:?}"
        ),
        None => assert!(
            !matches!(result, Err(Error::Denied { .. })),
            "open_dir then read {candidate}: refused: {result:?}"
        ),
    }
}

macro_rules! gitignore_table {
    ($($name:ident: $candidate:expr => $rule:expr;)*) => {$(
        #[test]
        fn $name() {
            let fixture = gitignore_fixture();
            let candidate: String = $candidate(&fixture);
            let rule: Option<&str> = $rule;
            judge_everywhere(&fixture, &candidate, rule);
            if rule.is_some() {
                for file in ["secrets/db.txt", "private/p.txt", "data/app.sqlite", ".env"] {
                    assert_eq!(
                        fs::read_to_string(fixture.inside(file)).expect("still there"),
                        "original",
                        "{file}"
                    );
                }
                assert!(!fixture.inside("secrets/new.txt").exists());
            }
        }
    )*};
}

fn plain(path: &'static str) -> impl Fn(&Fixture) -> String {
    move |_| path.to_owned()
}

gitignore_table! {
    a_directory_rule_refuses_a_file_inside: plain("secrets/db.txt") => Some("secrets/");
    a_directory_rule_refuses_the_directory: plain("secrets") => Some("secrets/");
    a_directory_rule_refuses_deep_inside: plain("secrets/sub/deep.txt") => Some("secrets/");
    a_directory_rule_refuses_creating_inside: plain("secrets/new.txt") => Some("secrets/");
    a_directory_rule_refuses_creating_deeper: plain("secrets/made/new.txt") => Some("secrets/");
    a_directory_rule_matches_at_any_depth: plain("app/secrets/x.txt") => Some("secrets/");
    a_directory_rule_spares_a_lookalike: plain("secrets-old/db.txt") => None;
    dot_slash_is_the_same_path: plain("./secrets/db.txt") => Some("secrets/");
    dot_dot_is_the_same_path: plain("src/../secrets/db.txt") => Some("secrets/");
    a_missing_dot_dot_is_the_same_path: plain("nowhere/../secrets/db.txt") => Some("secrets/");
    another_case_is_the_same_rule: plain("SECRETS/db.txt") => Some("secrets/");
    an_absolute_spelling_is_the_same_path:
        |fixture: &Fixture| format!("{}/secrets/db.txt", fixture.root_str()) => Some("secrets/");
    a_link_into_a_denied_directory_is_refused: plain("alias/db.txt") => Some("secrets/");
    a_link_to_a_denied_directory_is_refused: plain("alias") => Some("secrets/");
    an_anchored_rule_refuses_at_the_root: plain("private/p.txt") => Some("/private");
    an_anchored_rule_spares_deeper: plain("src/private/ok.txt") => None;
    a_name_rule_refuses_at_depth: plain("data/app.sqlite") => Some("*.sqlite");
    a_negation_re_includes: plain("data/keep.sqlite") => None;
    a_double_star_rule_crosses_directories: plain("docs/a/b/draft.md") => Some("docs/**/draft.md");
    a_double_star_rule_spares_the_rest: plain("docs/final.md") => None;
    a_negation_does_not_lift_a_builtin_rule: plain(".env") => Some(".env");
    a_negated_glob_does_not_lift_a_builtin_rule: plain("tls/server.pem") => Some("*.pem");
}

#[test]
fn listings_leave_out_what_the_rules_refuse() {
    let fixture = gitignore_fixture();
    let workspace = gitignore_workspace(&fixture);
    let names = |candidate: &str| -> Vec<String> {
        let entries = workspace.read_dir(candidate).expect("listable");
        let opened = workspace.open_dir(candidate).expect("openable");
        assert_eq!(opened.entries().expect("listable"), entries);
        entries
            .iter()
            .map(|entry| entry.name().to_owned())
            .collect()
    };
    assert_eq!(
        names("."),
        ["alias", "app", "data", "docs", "secrets-old", "src", "tls"]
    );
    assert_eq!(names("data"), ["keep.sqlite"]);
    assert!(names("app").is_empty());
    assert!(names("tls").is_empty());
    assert_eq!(names("docs/a"), ["b"]);
    assert!(names("docs/a/b").is_empty());
}

/// Only the build knows the root, so only it can tell the absolute path of a place in the
/// workspace from a rule anchored at the top.
#[test]
fn the_absolute_path_of_a_place_in_the_workspace_is_refused_when_building() {
    let fixture = Fixture::new();
    let rule = format!("{}/src/main.rs", fixture.root_str());
    for error in [
        Workspace::builder(&fixture.root).deny(rule.clone()).build(),
        Workspace::builder(&fixture.root)
            .deny_write(rule.clone())
            .build(),
    ]
    .map(|built| built.expect_err("absolute"))
    {
        assert!(
            matches!(&error, Error::InvalidRule { rule: named, .. } if *named == rule),
            "{error:?}"
        );
        assert!(
            error.to_string().ends_with("write `/src/main.rs`"),
            "{error}"
        );
    }
    Workspace::builder(&fixture.root)
        .deny("/src/main.rs")
        .build()
        .expect("anchored at the top");
}

#[test]
fn a_rule_that_is_not_valid_is_refused_when_building_and_named() {
    let fixture = Fixture::new();
    // Rules that would match nothing, written as a path is elsewhere: from `.`, from the
    // home, with Windows separators.
    for (rule, reason) in [
        ("src/[", "unclosed character class"),
        ("", "it matches nothing"),
        ("# secrets", "it matches nothing"),
        ("../x", "never contain `..`"),
        ("./src/main.rs", "no name in a workspace path is `.`"),
        ("~/.netrc", "`~` is not your home here"),
        ("src\\main.rs", "separate names with `/`"),
    ] {
        let error = Workspace::builder(&fixture.root)
            .deny(rule)
            .build()
            .expect_err(rule);
        assert!(
            matches!(&error, Error::InvalidRule { rule: named, .. } if named == rule),
            "{error:?}"
        );
        assert!(error.to_string().contains(reason), "{error}");
        let error = Workspace::builder(&fixture.root)
            .deny_write(rule)
            .build()
            .expect_err(rule);
        assert!(error.to_string().contains(reason), "{error}");
        assert!(harness_sandbox::WorkspaceBuilder::check_rule(rule).is_err());
    }
    harness_sandbox::WorkspaceBuilder::check_rule("secrets/").expect("valid");
}

#[test]
fn clear_rules_drops_the_builtin_sets_too() {
    let fixture = Fixture::new();
    fixture.file(".env", "TOKEN=1");
    fixture.file(".git/config", "[core]");
    let open = Workspace::builder(&fixture.root)
        .clear_rules()
        .build()
        .expect("workspace");
    assert_eq!(open.read_to_string(".env").expect("readable"), "TOKEN=1");
    open.write(".git/config", "x").expect("writable");
}

#[test]
fn a_write_only_negation_does_not_lift_a_read_rule() {
    let fixture = Fixture::new();
    fixture.file("app.log", "log");
    let workspace = Workspace::builder(&fixture.root)
        .deny("*.log")
        .deny_write("!app.log")
        .build()
        .expect("workspace");
    assert_denied(workspace.write("app.log", "x"), "app.log", "write", "*.log");
    let workspace = Workspace::builder(&fixture.root)
        .deny_write("*.log")
        .deny_write("!app.log")
        .build()
        .expect("workspace");
    workspace.write("app.log", "x").expect("re-included");
}

/// Issue #45: a repository's `!*.sqlite` must not lift the user's `*.sqlite`. Each list
/// given to `deny_list` judges apart: its `!` re-includes only its own rules' paths, every
/// spelling (`**`, a directory glob, a case change) alike, and its plain rules still add.
#[test]
fn a_negation_in_a_list_of_its_own_lifts_nothing_of_another() {
    let fixture = Fixture::new();
    fixture.file("data/app.sqlite", "db");
    fixture.file("logs/run.log", "log");
    fixture.file("build/out.o", "o");
    for lifting in [
        "!*.sqlite",
        "!data/app.sqlite",
        "!**",
        "!/data/",
        "!*.SQLITE",
        "!*",
    ] {
        let workspace = Workspace::builder(&fixture.root)
            .deny("*.sqlite")
            .deny_list(["build/", lifting])
            .build()
            .expect("workspace");
        assert_denied(
            workspace.read("data/app.sqlite").map(drop),
            "data/app.sqlite",
            "read",
            "*.sqlite",
        );
        assert!(workspace.is_read_denied("data/app.sqlite"), "{lifting}");
    }
    let workspace = Workspace::builder(&fixture.root)
        .deny("*.sqlite")
        .deny_list(["*.log", "!keep.log", "build/"])
        .build()
        .expect("workspace");
    assert_denied(
        workspace.read("logs/run.log").map(drop),
        "logs/run.log",
        "read",
        "*.log",
    );
    assert_denied(
        workspace.read("build/out.o").map(drop),
        "build/out.o",
        "read",
        "build/",
    );
    assert!(
        !workspace.is_read_denied("keep.log"),
        "its own `!` re-includes its own rule"
    );
    // The same rules in one list: the `!` lifts, which is what the lists keep apart.
    let workspace = Workspace::builder(&fixture.root)
        .deny("*.sqlite")
        .deny("!*.sqlite")
        .build()
        .expect("workspace");
    assert!(!workspace.is_read_denied("data/app.sqlite"));
}

/// A rule names a place as the user spells it, and a symbolic link makes it one spelling
/// among several: `.env` may be a link to `config/settings.env`, `config/` a link to
/// `shared/config/`. Reached through the link the rule names, the place is refused,
/// however many links lie between.
#[test]
fn a_rule_refuses_a_place_reached_through_the_link_it_names() {
    let fixture = Fixture::new();
    fixture.file("config/settings.env", "DB_PASS=1");
    fixture.symlink("config/settings.env", ".env");
    fixture.file("shared/config/secrets.yml", "token: 1");
    fixture.symlink("shared/config", "config-link");
    fixture.symlink("config-link", "settings");
    fixture.file("shared/config/public.yml", "name: 1");
    let workspace = Workspace::builder(&fixture.root)
        .deny("/settings/secrets.yml")
        .deny("config-link/private/")
        .build()
        .expect("workspace");
    // The built-in `.env` rule, through a link to a file under another name.
    for access in ["read", "write"] {
        let result = match access {
            "read" => workspace.read(".env").map(drop),
            _ => workspace.write(".env", b"x").map(drop),
        };
        assert_denied(result, ".env", access, ".env");
    }
    // Through a chain of two directory links, also with a `..` after the link.
    for candidate in ["settings/secrets.yml", "settings/public.yml/../secrets.yml"] {
        let result = workspace.read(candidate).map(drop);
        if candidate.contains("..") {
            // `public.yml` is a file: the walk refuses to go through it.
            assert!(
                matches!(result, Err(Error::NotADirectory { .. })),
                "{result:?}"
            );
        } else {
            assert_denied(result, candidate, "read", "/settings/secrets.yml");
        }
    }
    fixture.dir("shared/config/sub");
    assert_denied(
        workspace.read("settings/sub/../secrets.yml").map(drop),
        "settings/sub/../secrets.yml",
        "read",
        "/settings/secrets.yml",
    );
    // A directory rule, through the link it names, for a path not there yet.
    assert_denied(
        workspace
            .write("config-link/private/new.txt", b"x")
            .map(drop),
        "config-link/private/new.txt",
        "write",
        "config-link/private/",
    );
    // What no rule names stays readable through the same links.
    assert_eq!(
        workspace
            .read_to_string("settings/public.yml")
            .expect("readable"),
        "name: 1"
    );
    assert_eq!(
        fs::read_to_string(fixture.inside("config/settings.env")).expect("untouched"),
        "DB_PASS=1"
    );
}

/// A place refused under every name (the target of a link a rule refuses by the link's own
/// name) is refused by each operation, under its own name, through another link, and below
/// it for a directory; nothing beside or above it is.
#[test]
fn a_place_denied_under_every_name_is_refused_by_each_operation() {
    let fixture = Fixture::new();
    fixture.file("config/settings.env", "TOKEN=1");
    fixture.file("config/settings.env.example", "TOKEN=");
    fixture.file("shared/keys/a.txt", "key");
    fixture.file("notes.txt", "notes");
    fixture.symlink("config/settings.env", "alias.txt");
    let mut workspace = fixture.workspace();
    // As a walk over the workspace finds them: the link (whose target is the place) and a
    // directory by its absolute path.
    workspace.deny_place("alias.txt");
    workspace.deny_place(fixture.inside("shared/keys"));
    let refused = |result: Result<(), Error>, candidate: &str, access: &str| match result {
        Err(error @ Error::DeniedUnderOtherName { .. }) => assert_eq!(
            error.to_string(),
            format!(
                "refusing to {access} {candidate}: a deny rule refuses it under another of its \
                 names (a link to it), so it is refused under every name; leave this path alone"
            )
        ),
        other => panic!("{access} {candidate}: {other:?}"),
    };
    for candidate in [
        "config/settings.env",
        "alias.txt",
        "shared/keys/a.txt",
        "shared/keys",
    ] {
        refused(workspace.read(candidate).map(drop), candidate, "read");
        refused(workspace.metadata(candidate).map(drop), candidate, "read");
    }
    refused(
        workspace.write("config/settings.env", "TOKEN=2"),
        "config/settings.env",
        "write",
    );
    refused(
        workspace.write("shared/keys/new.txt", "k"),
        "shared/keys/new.txt",
        "write",
    );
    refused(
        workspace.remove_file("shared/keys/a.txt"),
        "shared/keys/a.txt",
        "write",
    );
    let config = workspace
        .open_dir("config")
        .expect("the directory above is not refused");
    refused(
        config.read("settings.env").map(drop),
        "config/settings.env",
        "read",
    );
    assert!(workspace.is_read_denied("config/settings.env"));
    assert!(workspace.is_write_denied("shared/keys/b.txt"));
    assert!(!workspace.is_read_denied("config"));
    assert!(!workspace.is_read_denied("shared"));
    assert_eq!(
        workspace
            .read_to_string("config/settings.env.example")
            .expect("a name that only starts like the place"),
        "TOKEN="
    );
    assert_eq!(
        fs::read_to_string(fixture.inside("config/settings.env")).expect("untouched"),
        "TOKEN=1"
    );
}

/// The root, a path outside it and a path that climbs out name no place in the workspace:
/// they refuse nothing.
#[test]
fn a_place_outside_the_workspace_or_the_root_itself_refuses_nothing() {
    let fixture = Fixture::new();
    fixture.file("notes.txt", "notes");
    let mut workspace = fixture.workspace();
    workspace.deny_place(&fixture.root);
    workspace.deny_place("");
    workspace.deny_place(".");
    workspace.deny_place("../work/notes.txt");
    workspace.deny_place(fixture.outside("secret.txt"));
    assert_eq!(
        workspace.read_to_string("notes.txt").expect("readable"),
        "notes"
    );
    assert!(!workspace.is_read_denied("notes.txt"));
}
