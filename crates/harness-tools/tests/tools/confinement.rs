//! Every path-taking tool refuses every escape class, and protected files stay out of sight.

use harness_sandbox::Workspace;
use harness_tools::{Detail, Toolbox};
use serde_json::json;

use crate::support::{Fixture, assert_error, ok};
use harness_testkit::escapes::{Escapes, PATH_TOOLS, call};

macro_rules! every_escape_is_refused {
    ($($name:ident: $tool:expr,)*) => {$(
        #[test]
        fn $name() {
            let escapes = Escapes::new();
            let before = escapes.outside();
            let toolbox = Toolbox::new(Workspace::new(&escapes.work).expect("the workspace"));
            for class in escapes.classes() {
                let result = toolbox.call($tool, &call($tool, &class.path));
                assert!(result.is_error(), "{}: {}: {:?}", $tool, class.name, result.text());
                assert!(
                    result.text().starts_with("Error: path escapes the workspace: "),
                    "{}: {}: {:?}",
                    $tool,
                    class.name,
                    result.text()
                );
                assert!(!result.text().contains("outside secret"), "{}", class.name);
                assert!(!result.may_have_changed_workspace());
                assert_eq!(result.summary().detail(), &Detail::Failed);
            }
            assert_eq!(escapes.outside(), before, "{} changed something outside", $tool);
        }
    )*};
}

every_escape_is_refused! {
    read_file_refuses_every_escape: "read_file",
    write_file_refuses_every_escape: "write_file",
    edit_file_refuses_every_escape: "edit_file",
    list_dir_refuses_every_escape: "list_dir",
    search_text_refuses_every_escape: "search_text",
}

#[test]
fn the_escape_table_covers_every_path_tool_and_six_classes() {
    let escapes = Escapes::new();
    assert_eq!(escapes.classes().len(), 6);
    for tool in PATH_TOOLS {
        assert!(call(tool, "x").get("path").is_some(), "{tool}");
    }
}

#[test]
fn a_whole_workspace_search_does_not_follow_links_out() {
    let escapes = Escapes::new();
    let toolbox = Toolbox::new(Workspace::new(&escapes.work).expect("the workspace"));
    let result = toolbox.call("search_text", &json!({"pattern": "secret"}));
    let text = ok(&result);
    assert!(
        text.starts_with("No matches for \"secret\" in 1 files searched under ."),
        "{text}"
    );
}

#[test]
fn a_whole_workspace_listing_shows_links_without_entering_them() {
    let escapes = Escapes::new();
    let toolbox = Toolbox::new(Workspace::new(&escapes.work).expect("the workspace"));
    let result = toolbox.call("list_dir", &json!({"depth": 5}));
    assert_eq!(ok(&result), "dangling\ninside.txt\nlink-dir\nlink-file\n");
}

#[test]
fn read_file_refuses_dot_env() {
    let fixture = Fixture::new();
    fixture
        .file(".env", "API_KEY=abc123\n")
        .file("config/.env.local", "TOKEN=x\n");
    for path in [".env", "config/.env.local", "./config/../.env"] {
        let result = fixture.call("read_file", json!({"path": path}));
        assert_error(
            &result,
            &format!("Error: refusing to read {path}: it matches the deny rule"),
        );
        assert!(!result.text().contains("abc123"));
    }
}

#[test]
fn write_and_edit_refuse_dot_env_and_git_internals() {
    let fixture = Fixture::new();
    fixture
        .file(".env", "API_KEY=abc123\n")
        .file(".git/config", "[core]\n");
    let refused = [
        (
            "write_file",
            json!({"path": ".env", "content": "x", "overwrite": true}),
        ),
        (
            "edit_file",
            json!({"path": ".env", "old_text": "abc123", "new_text": "x"}),
        ),
        (
            "write_file",
            json!({"path": ".git/hooks/pre-commit", "content": "x"}),
        ),
        (
            "edit_file",
            json!({"path": ".git/config", "old_text": "[core]", "new_text": "x"}),
        ),
    ];
    for (tool, arguments) in refused {
        let result = fixture.call(tool, arguments);
        assert_error(&result, "Error: refusing to ");
        assert!(!result.may_have_changed_workspace());
    }
    assert_eq!(fixture.read(".env"), "API_KEY=abc123\n");
    assert_eq!(fixture.read(".git/config"), "[core]\n");
    assert!(!fixture.path(".git/hooks").exists());
}

#[test]
fn dot_env_is_absent_from_listings_and_searches() {
    let fixture = Fixture::new();
    fixture
        .file(".env", "API_KEY=abc123\n")
        .file("app/.env.production", "API_KEY=abc123\n")
        .file("app/main.py", "print('hello')\n")
        .file("keys/server.pem", "abc123\n");
    let listing = fixture.call("list_dir", json!({"depth": 3}));
    assert_eq!(ok(&listing), "app/\napp/main.py\nkeys/\n");
    let found = fixture.call("search_text", json!({"pattern": "abc123|hello"}));
    assert_eq!(ok(&found), "app/main.py:1: print('hello')\n");
}

#[test]
fn listing_a_denied_directory_is_refused() {
    let fixture = Fixture::new();
    fixture.file("secrets/.env/inner.txt", "x\n");
    let result = fixture.call("list_dir", json!({"path": "secrets/.env"}));
    assert_error(
        &result,
        "Error: refusing to read secrets/.env: it matches the deny rule `.env`",
    );
}

#[test]
fn git_internals_are_neither_listed_nor_searched() {
    let fixture = Fixture::new();
    fixture
        .file(".git/config", "needle\n")
        .file("sub/.git", "gitdir: needle\n")
        .file("sub/a.txt", "needle\n")
        .file(".github/workflow.yml", "needle\n");
    let listing = fixture.call("list_dir", json!({"depth": 5}));
    assert_eq!(
        ok(&listing),
        ".github/\n.github/workflow.yml\nsub/\nsub/a.txt\n"
    );
    let found = fixture.call("search_text", json!({"pattern": "needle"}));
    assert_eq!(
        ok(&found),
        ".github/workflow.yml:1: needle\nsub/a.txt:1: needle\n"
    );
}
