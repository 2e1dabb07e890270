//! Deny rules in `.gitignore` syntax (issue 11, class 3): a table of rule × path → refused or
//! allowed, through every tool that takes a path, as a model calls them.

use harness_exec::Redactor;
use harness_sandbox::Workspace;
use harness_tools::Toolbox;
use serde_json::json;

use crate::support::{Fixture, ok};

/// The user's rules, as `deny = [...]` in harness.toml would give them.
const RULES: &[&str] = &[
    "secrets/",
    "/private",
    "*.sqlite",
    "!keep.sqlite",
    "docs/**/draft.md",
    "!.env",
    "!*.pem",
];

/// Every file of the tree: its content names it, so a listing or a search shows whether it
/// was reached.
const FILES: &[&str] = &[
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
];

fn content(path: &str) -> String {
    format!("token of {path}\n")
}

fn fixture() -> Fixture {
    let fixture = Fixture::new();
    for path in FILES {
        fixture.file(path, content(path));
    }
    std::os::unix::fs::symlink("secrets", fixture.path("alias")).expect("a link");
    fixture
}

fn toolbox(fixture: &Fixture) -> Toolbox {
    let mut builder = Workspace::builder(&fixture.root);
    for rule in RULES {
        builder.deny(*rule);
    }
    let workspace = builder.build().expect("valid rules");
    Toolbox::builder(workspace)
        .redactor(Redactor::new())
        .build()
}

/// Asserts that `tool` refused `path` by `rule`, for `access`.
#[track_caller]
fn assert_refused(
    result: &harness_tools::ToolResult,
    tool: &str,
    access: &str,
    path: &str,
    rule: &str,
) {
    let expected = format!("Error: refusing to {access} {path}: it matches the deny rule `{rule}`");
    assert!(
        result.is_error() && result.text().starts_with(&expected),
        "{tool} {path}: expected {expected:?}, got {:?}",
        result.text()
    );
    assert!(!result.may_have_changed_workspace(), "{tool} {path}");
}

/// Every path tool on `path` (spelled `spelled`), which `rule` refuses or nothing does.
fn judge(path: &str, spelled: &str, rule: Option<&str>) {
    let fixture = fixture();
    let toolbox = toolbox(&fixture);
    let token = content(path);
    let token = token.trim_end();

    // Reading.
    let read = toolbox.call("read_file", &json!({"path": spelled}));
    let search_at = toolbox.call("search_text", &json!({"pattern": "token", "path": spelled}));
    match rule {
        Some(rule) => {
            assert_refused(&read, "read_file", "read", spelled, rule);
            assert_refused(&search_at, "search_text", "read", spelled, rule);
        }
        None => {
            assert!(
                ok(&read).contains(token),
                "read_file {spelled}: {}",
                read.text()
            );
            assert!(ok(&search_at).contains(token), "search_text {spelled}");
        }
    }
    // Listing and searching around it never reveal a refused file, nor miss an allowed one.
    let listing = toolbox.call("list_dir", &json!({"depth": 5}));
    let found = toolbox.call("search_text", &json!({"pattern": "token"}));
    let (listing, found) = (ok(&listing), ok(&found));
    let listed = listing.lines().any(|line| line == path);
    let searched = found.contains(token);
    assert_eq!(listed, rule.is_none(), "list_dir shows {path}?\n{listing}");
    assert_eq!(
        searched,
        rule.is_none(),
        "search_text finds {path}?\n{found}"
    );
    if let Some((parent, _)) = path.rsplit_once('/') {
        let parent_listing = toolbox.call("list_dir", &json!({"path": parent}));
        let parent_search =
            toolbox.call("search_text", &json!({"pattern": "token", "path": parent}));
        if rule.is_none() {
            assert!(
                ok(&parent_listing).lines().any(|line| line == path),
                "{parent}"
            );
            assert!(ok(&parent_search).contains(token), "{parent}");
        } else {
            for result in [&parent_listing, &parent_search] {
                assert!(
                    result.is_error() || !result.text().contains(path),
                    "{parent}: {}",
                    result.text()
                );
                assert!(
                    !result.text().contains(token),
                    "{parent}: {}",
                    result.text()
                );
            }
        }
    }

    // Writing.
    let edit = toolbox.call(
        "edit_file",
        &json!({"path": spelled, "old_text": "token", "new_text": "edited"}),
    );
    let write = toolbox.call(
        "write_file",
        &json!({"path": spelled, "content": "written\n", "overwrite": true}),
    );
    match rule {
        Some(rule) => {
            assert_refused(&edit, "edit_file", "read", spelled, rule);
            assert_refused(&write, "write_file", "read", spelled, rule);
            assert_eq!(fixture.read(path), content(path), "{path} was changed");
        }
        None => {
            ok(&edit);
            ok(&write);
            assert_eq!(fixture.read(path), "written\n");
        }
    }
}

/// Creating a file at `path` (which does not exist): refused by `rule`, or created.
fn judge_create(path: &str, rule: Option<&str>) {
    let fixture = fixture();
    let toolbox = toolbox(&fixture);
    let result = toolbox.call("write_file", &json!({"path": path, "content": "new\n"}));
    match rule {
        Some(rule) => {
            // The editor asks whether something is there before it creates the file.
            assert_refused(&result, "write_file", "read", path, rule);
            assert!(!fixture.path(path).exists(), "{path} was created");
        }
        None => {
            ok(&result);
            assert_eq!(fixture.read(path), "new\n");
        }
    }
}

macro_rules! deny_table {
    ($($name:ident: $path:expr, $spelled:expr => $rule:expr;)*) => {$(
        #[test]
        fn $name() {
            judge($path, $spelled, $rule);
        }
    )*};
}

deny_table! {
    a_directory_rule_refuses_a_file_in_it: "secrets/db.txt", "secrets/db.txt" => Some("secrets/");
    a_directory_rule_refuses_deeper: "secrets/sub/deep.txt", "secrets/sub/deep.txt" => Some("secrets/");
    a_directory_rule_matches_at_any_depth: "app/secrets/x.txt", "app/secrets/x.txt" => Some("secrets/");
    a_directory_rule_spares_a_lookalike: "secrets-old/db.txt", "secrets-old/db.txt" => None;
    dot_slash_is_the_same_file: "secrets/db.txt", "./secrets/db.txt" => Some("secrets/");
    dot_dot_is_the_same_file: "secrets/db.txt", "src/../secrets/db.txt" => Some("secrets/");
    another_case_is_the_same_rule: "secrets/db.txt", "SECRETS/db.txt" => Some("secrets/");
    a_link_to_a_denied_directory_is_refused: "secrets/db.txt", "alias/db.txt" => Some("secrets/");
    an_anchored_rule_refuses_at_the_root: "private/p.txt", "private/p.txt" => Some("/private");
    an_anchored_rule_spares_deeper: "src/private/ok.txt", "src/private/ok.txt" => None;
    a_name_rule_refuses_at_depth: "data/app.sqlite", "data/app.sqlite" => Some("*.sqlite");
    a_negation_re_includes: "data/keep.sqlite", "data/keep.sqlite" => None;
    a_double_star_rule_crosses_directories: "docs/a/b/draft.md", "docs/a/b/draft.md" => Some("docs/**/draft.md");
    a_double_star_rule_spares_the_rest: "docs/final.md", "docs/final.md" => None;
    a_negation_does_not_lift_a_builtin_rule: ".env", ".env" => Some(".env");
    a_negated_glob_does_not_lift_a_builtin_rule: "tls/server.pem", "tls/server.pem" => Some("*.pem");
}

#[test]
fn creating_inside_a_denied_directory_is_refused() {
    judge_create("secrets/new.txt", Some("secrets/"));
    judge_create("secrets/made/new.txt", Some("secrets/"));
    judge_create("SECRETS/new.txt", Some("secrets/"));
    judge_create("private/new.txt", Some("/private"));
    judge_create("app/new.sqlite", Some("*.sqlite"));
    judge_create("secrets-old/new.txt", None);
    judge_create("src/private/new.txt", None);
}

#[test]
fn listing_or_searching_a_denied_directory_is_refused_and_names_the_rule() {
    let fixture = fixture();
    let toolbox = toolbox(&fixture);
    for (path, rule) in [
        ("secrets", "secrets/"),
        ("secrets/sub", "secrets/"),
        ("alias", "secrets/"),
        ("private", "/private"),
    ] {
        let listing = toolbox.call("list_dir", &json!({"path": path}));
        assert_refused(&listing, "list_dir", "read", path, rule);
        let search = toolbox.call("search_text", &json!({"pattern": "token", "path": path}));
        assert_refused(&search, "search_text", "read", path, rule);
    }
}
