//! Hard links (issue 11, class 5): no tool reads a file through a second name, which may be
//! a file outside the workspace or one the workspace protects.

use serde_json::json;

use crate::support::{Fixture, assert_error, ok};
use harness_testkit::escapes::Escapes;

const PASSWORD: &str = "hunter2";

/// A workspace with `notes.txt` hard-linked to `.env`, and `outside.txt` to a file outside.
fn linked() -> (Escapes, harness_tools::Toolbox) {
    let escapes = Escapes::new();
    std::fs::write(
        escapes.work.join(".env"),
        format!("DATABASE_URL=postgres://app:{PASSWORD}@db/app\n"),
    )
    .expect("a .env");
    std::fs::hard_link(escapes.work.join(".env"), escapes.work.join("notes.txt")).expect("link");
    std::fs::create_dir(escapes.work.join("sub")).expect("sub");
    std::fs::hard_link(
        escapes.top.join("outside/secret.txt"),
        escapes.work.join("sub/outside.txt"),
    )
    .expect("link");
    let workspace = harness_sandbox::Workspace::new(&escapes.work).expect("the workspace");
    let toolbox = harness_tools::Toolbox::builder(workspace)
        .redactor(harness_exec::Redactor::new())
        .build();
    (escapes, toolbox)
}

#[test]
fn read_file_refuses_a_hard_link_and_says_why() {
    let (_escapes, toolbox) = linked();
    for path in ["notes.txt", "sub/outside.txt", "./sub/../notes.txt"] {
        let result = toolbox.call("read_file", &json!({"path": path}));
        assert_error(
            &result,
            &format!(
                "Error: refusing to read {path}: the file has 2 hard links, and another of its \
                 names may be outside the workspace or a file the workspace protects"
            ),
        );
        assert!(!result.text().contains(PASSWORD) && !result.text().contains("outside secret"));
    }
}

#[test]
fn edit_and_overwrite_refuse_a_hard_link_and_change_nothing() {
    let (escapes, toolbox) = linked();
    for (tool, arguments) in [
        (
            "edit_file",
            json!({"path": "notes.txt", "old_text": "app", "new_text": "x"}),
        ),
        (
            "write_file",
            json!({"path": "sub/outside.txt", "content": "x", "overwrite": true}),
        ),
    ] {
        let result = toolbox.call(tool, &arguments);
        assert_error(&result, "Error: refusing to read ");
        assert!(result.text().contains("hard links"), "{}", result.text());
        assert!(!result.text().contains(PASSWORD), "{tool}");
    }
    assert_eq!(
        std::fs::read_to_string(escapes.top.join("outside/secret.txt")).expect("read"),
        "outside secret\n"
    );
}

#[test]
fn search_text_skips_hard_links_and_says_how_many() {
    let (_escapes, toolbox) = linked();
    for arguments in [
        json!({"pattern": "DATABASE|outside"}),
        json!({"pattern": "DATABASE|outside", "path": "sub"}),
    ] {
        let result = toolbox.call("search_text", &arguments);
        let text = ok(&result);
        assert!(
            !text.contains(PASSWORD) && !text.contains("outside secret"),
            "{text}"
        );
        assert!(text.starts_with("No matches for "), "{text}");
        assert!(
            text.contains(
                "files with more than one hard link were not searched: another of their names \
                 may be outside the workspace or a file the workspace protects]"
            ),
            "{text}"
        );
    }
    let result = toolbox.call("search_text", &json!({"pattern": "secret"}));
    assert!(ok(&result).contains("[2 files with more than one hard link"));
    let one = toolbox.call(
        "search_text",
        &json!({"pattern": "x", "path": "sub/outside.txt"}),
    );
    assert_error(
        &one,
        "Error: refusing to read sub/outside.txt: the file has 2 hard links",
    );
    assert!(
        one.text().ends_with("; leave this file as it is"),
        "{}",
        one.text()
    );
}

#[test]
fn a_search_without_hard_links_has_no_note_about_them() {
    let fixture = Fixture::new();
    fixture.file("a.txt", "secret\n");
    let result = fixture.call("search_text", json!({"pattern": "secret"}));
    assert_eq!(ok(&result), "a.txt:1: secret\n");
}
