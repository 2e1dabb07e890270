//! `search_text`: `path:line: text` lines, filters, caps and their notes, and its errors.

use std::os::unix::fs::symlink;

use harness_tools::{Detail, Limits};
use serde_json::json;

use crate::support::{Fixture, assert_error, ok};

fn code() -> Fixture {
    let fixture = Fixture::new();
    fixture
        .file("src/main.rs", "fn main() {\n    run();\n}\n")
        .file("src/lib.rs", "pub fn run() {}\n// TODO: more\n")
        .file("tests/it.py", "def test_run():\n    run()  # TODO\n")
        .file("README.md", "Call run.\n");
    fixture
}

#[test]
fn matches_are_path_line_text_in_path_order() {
    let result = code().call("search_text", json!({"pattern": "\\brun\\(\\)"}));
    assert_eq!(
        ok(&result),
        "src/lib.rs:1: pub fn run() {}\nsrc/main.rs:2:     run();\ntests/it.py:2:     run()  # TODO\n"
    );
    assert_eq!(
        result.summary().to_string(),
        "search_text \\brun\\(\\)  3 matches"
    );
    assert_eq!(
        result.summary().detail(),
        &Detail::Found {
            shown: 3,
            matches: 3
        }
    );
    assert!(!result.may_have_changed_workspace());
}

#[test]
fn path_narrows_to_a_directory_or_a_file() {
    let fixture = code();
    let directory = fixture.call("search_text", json!({"pattern": "TODO", "path": "src"}));
    assert_eq!(ok(&directory), "src/lib.rs:2: // TODO: more\n");
    let file = fixture.call(
        "search_text",
        json!({"pattern": "TODO", "path": "tests/it.py"}),
    );
    assert_eq!(ok(&file), "tests/it.py:2:     run()  # TODO\n");
}

#[test]
fn a_glob_without_a_slash_matches_names_and_one_with_a_slash_matches_paths() {
    let fixture = code();
    let names = fixture.call("search_text", json!({"pattern": "run", "glob": "*.py"}));
    assert_eq!(
        ok(&names),
        "tests/it.py:1: def test_run():\ntests/it.py:2:     run()  # TODO\n"
    );
    let paths = fixture.call(
        "search_text",
        json!({"pattern": "TODO", "glob": "src/*.rs"}),
    );
    assert_eq!(ok(&paths), "src/lib.rs:2: // TODO: more\n");
}

#[test]
fn ignored_binary_and_linked_files_are_not_searched() {
    let fixture = Fixture::new();
    fixture
        .file(".gitignore", "build/\n")
        .file("build/out.txt", "needle\n")
        .file("blob.bin", b"needle\x00\n")
        .file("real.txt", "needle\n");
    symlink("real.txt", fixture.path("alias.txt")).expect("link");
    let result = fixture.call("search_text", json!({"pattern": "needle"}));
    assert_eq!(ok(&result), "real.txt:1: needle\n");
}

#[test]
fn a_nul_after_the_first_8_kib_does_not_make_a_file_binary() {
    let fixture = Fixture::new();
    let mut late = "needle\n".as_bytes().to_vec();
    late.resize(8 * 1024, b' ');
    late.extend_from_slice(b"\x00\n");
    let mut early = late.clone();
    early[8 * 1024 - 1] = 0;
    fixture.file("late.txt", late).file("early.txt", early);
    let result = fixture.call("search_text", json!({"pattern": "needle"}));
    assert_eq!(ok(&result), "late.txt:1: needle\n");
}

#[test]
fn text_that_is_not_utf8_is_searched_with_replacements_and_crlf_is_trimmed() {
    let fixture = Fixture::new();
    fixture.file("latin1.txt", b"caf\xe9 needle\r\nok\r\n");
    let result = fixture.call("search_text", json!({"pattern": "needle$"}));
    assert_eq!(ok(&result), "latin1.txt:1: caf\u{fffd} needle\n");
}

fn limited(configure: impl FnOnce(&mut Limits)) -> Limits {
    let mut limits = Limits::default();
    configure(&mut limits);
    limits
}

#[test]
fn matches_beyond_the_cap_are_counted_and_announced() {
    let fixture = Fixture::new();
    fixture.file("a.txt", "x\nx\nx\n").file("b.txt", "x\nx\n");
    let toolbox = fixture.toolbox_with(limited(|limits| limits.search_matches = 3));
    let result = toolbox.call("search_text", &json!({"pattern": "x"}));
    assert_eq!(
        ok(&result),
        "a.txt:1: x\na.txt:2: x\na.txt:3: x\n[3 of 5 matching lines shown: narrow the search with path or glob]\n"
    );
    assert_eq!(
        result.summary().to_string(),
        "search_text x  3 of 5 matches"
    );
    let toolbox = fixture.toolbox_with(limited(|limits| limits.search_matches = 5));
    let all = toolbox.call("search_text", &json!({"pattern": "x"}));
    assert_eq!(
        ok(&all),
        "a.txt:1: x\na.txt:2: x\na.txt:3: x\nb.txt:1: x\nb.txt:2: x\n"
    );
}

#[test]
fn long_lines_are_cut_around_the_match() {
    let fixture = Fixture::new();
    let line = format!("{}needle{}", "a".repeat(100), "b".repeat(100));
    fixture.file("min.js", format!("{line}\n"));
    let toolbox = fixture.toolbox_with(limited(|limits| limits.search_line_chars = 20));
    let result = toolbox.call("search_text", &json!({"pattern": "needle"}));
    assert_eq!(ok(&result), "min.js:1: …aaaaaneedlebbbbbbbbb…\n");
}

#[test]
fn files_over_the_size_cap_are_skipped_and_counted() {
    let fixture = Fixture::new();
    fixture
        .file("small.txt", "needle\n")
        .file("exact.txt", "needle1\n")
        .file("large.txt", "needle12\n");
    let toolbox = fixture.toolbox_with(limited(|limits| limits.search_file_len = 8));
    let result = toolbox.call("search_text", &json!({"pattern": "needle"}));
    assert_eq!(
        ok(&result),
        "exact.txt:1: needle1\nsmall.txt:1: needle\n[1 files larger than 8 bytes were not searched]\n"
    );
}

#[test]
fn no_match_says_how_many_files_were_searched() {
    let result = code().call("search_text", json!({"pattern": "absent", "glob": "*.rs"}));
    assert_eq!(
        ok(&result),
        "No matches for \"absent\" in 2 files searched under .\n"
    );
    assert_eq!(
        result.summary().to_string(),
        "search_text absent  0 matches"
    );
}

#[test]
fn an_invalid_regex_explains_the_syntax() {
    let result = code().call("search_text", json!({"pattern": "run("}));
    assert_error(
        &result,
        "Error: \"pattern\" is not a valid regular expression: ",
    );
    assert!(result.text().ends_with(
        "It uses Rust regex syntax: to match one of ( ) [ ] { } . * + ? | ^ $ \\ literally, put a \
         backslash before it"
    ));
    assert_eq!(result.summary().target(), "run(");
}

#[test]
fn an_invalid_glob_says_what_to_write() {
    let result = code().call("search_text", json!({"pattern": "run", "glob": "[a"}));
    assert_error(&result, "Error: \"glob\" is not a valid glob: ");
}

#[test]
fn a_missing_path_points_to_list_dir() {
    let result = code().call("search_text", json!({"pattern": "run", "path": "nope"}));
    assert_error(
        &result,
        "Error: no such file or directory: nope; list_dir shows",
    );
}
