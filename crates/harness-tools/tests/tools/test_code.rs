//! `protect_tests`: the file tools refuse to change test code, and change everything else.

use harness_tools::TestCode;
use serde_json::json;

use crate::support::Fixture;

const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 2), 3);\n    }\n}\n";

fn protected(fixture: &Fixture) -> harness_tools::Toolbox {
    fixture
        .builder()
        .protect_tests(TestCode::new(&["checks/**"]).expect("valid globs"))
        .build()
}

#[test]
fn test_files_and_rust_test_modules_are_refused_and_left_as_they_were() {
    let fixture = Fixture::new();
    fixture
        .file("test_calc.py", "assert add(1, 2) == 3\n")
        .file("src/lib.rs", LIB)
        .file("checks/c.txt", "c\n");
    let toolbox = protected(&fixture);
    for (tool, arguments) in [
        (
            "edit_file",
            json!({"path": "test_calc.py", "old_text": "== 3", "new_text": "== -1"}),
        ),
        (
            "write_file",
            json!({"path": "test_calc.py", "content": "pass\n", "overwrite": true}),
        ),
        (
            "write_file",
            json!({"path": "tests/test_new.py", "content": "pass\n"}),
        ),
        (
            "write_file",
            json!({"path": "checks/c.txt", "content": "x\n", "overwrite": true}),
        ),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "assert_eq!(super::add(1, 2), 3);", "new_text": ""}),
        ),
        (
            "write_file",
            json!({"path": "src/lib.rs", "content": "pub fn add(a: i32, b: i32) -> i32 { a + b }\n", "overwrite": true}),
        ),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "add", "new_text": "plus", "replace_all": true}),
        ),
    ] {
        let result = toolbox.call(tool, &arguments);
        assert!(result.is_error(), "{tool} {arguments}: {}", result.text());
        assert!(
            result
                .text()
                .contains("the harness does not let the tools change test code"),
            "{}",
            result.text()
        );
        assert!(!result.may_have_changed_workspace() || result.is_error());
    }
    assert_eq!(fixture.read("test_calc.py"), "assert add(1, 2) == 3\n");
    assert_eq!(fixture.read("src/lib.rs"), LIB);
    assert_eq!(fixture.read("checks/c.txt"), "c\n");
    assert!(!fixture.path("tests").exists());

    // The code under test is the tools' to change, Rust test module and all kept.
    let fixed = toolbox.call(
        "edit_file",
        &json!({"path": "src/lib.rs", "old_text": "a - b", "new_text": "a + b"}),
    );
    assert!(!fixed.is_error(), "{}", fixed.text());
    assert_eq!(fixture.read("src/lib.rs"), LIB.replace("a - b", "a + b"));
}

#[test]
fn without_protection_the_tools_change_test_files() {
    let fixture = Fixture::new();
    fixture.file("test_calc.py", "assert add(1, 2) == 3\n");
    let result = fixture.builder().build().call(
        "edit_file",
        &json!({"path": "test_calc.py", "old_text": "== 3", "new_text": "== 4"}),
    );
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(fixture.read("test_calc.py"), "assert add(1, 2) == 4\n");
}

#[test]
fn a_check_script_is_refused_under_every_spelling_of_its_path() {
    let fixture = Fixture::new();
    fixture
        .file("test.sh", "exit 1\n")
        .file("sub/keep.txt", "k\n")
        .file("ci/verify.sh", "exit 1\n");
    let absolute = fixture.path("test.sh").display().to_string();
    // The verification spells its paths in other ways too: `./`, `..` through a directory,
    // a doubled slash, a flag's value.
    for command in [
        &["sh", "test.sh", "--config=ci/verify.sh"][..],
        &["sh", "./test.sh", "-c", "sh ./ci//verify.sh"][..],
        &["sh", "sub/../test.sh", "ci/./verify.sh"][..],
    ] {
        let toolbox = fixture
            .builder()
            .protect_tests(
                TestCode::new(&[])
                    .expect("the conventions")
                    .with_checks_run_by(command),
            )
            .build();
        for path in [
            "test.sh",
            "./test.sh",
            "sub/../test.sh",
            ".//test.sh",
            absolute.as_str(),
            "ci/verify.sh",
            "ci/../ci/verify.sh",
        ] {
            for (tool, arguments) in [
                (
                    "write_file",
                    json!({"path": path, "content": "exit 0\n", "overwrite": true}),
                ),
                (
                    "edit_file",
                    json!({"path": path, "old_text": "exit 1", "new_text": "exit 0"}),
                ),
            ] {
                let result = toolbox.call(tool, &arguments);
                assert!(
                    result.is_error(),
                    "{command:?}: {tool} {path}: {}",
                    result.text()
                );
            }
        }
    }
    assert_eq!(fixture.read("test.sh"), "exit 1\n");
    assert_eq!(fixture.read("ci/verify.sh"), "exit 1\n");
}

#[test]
fn a_protected_test_file_is_named_as_one_and_nothing_is_without_protection() {
    let fixture = Fixture::new();
    fixture
        .file("test_calc.py", "assert add(1, 2) == 3\n")
        .file("calc.py", "def add(a, b):\n    return a - b\n")
        .file("src/lib.rs", LIB);
    let toolbox = protected(&fixture);
    assert!(toolbox.is_protected_test_file("test_calc.py"));
    assert!(toolbox.is_protected_test_file("checks/c.txt"));
    assert!(toolbox.is_protected_test_file("./test_calc.py"));
    assert!(toolbox.is_protected_test_file("src/../test_calc.py"));
    let absolute = fixture.path("test_calc.py");
    assert!(toolbox.is_protected_test_file(absolute.to_str().expect("UTF-8")));
    assert!(!toolbox.is_protected_test_file("../test_calc.py"));
    // The tools change a file with a test module, outside the module.
    assert!(!toolbox.is_protected_test_file("src/lib.rs"));
    assert!(!toolbox.is_protected_test_file("calc.py"));
    let unprotected = fixture.builder().build();
    assert!(!unprotected.is_protected_test_file("test_calc.py"));
}
