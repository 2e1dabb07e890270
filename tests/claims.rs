//! Every claim names the tests that back it, and those tests exist.
//!
//! docs/claims.md ("Every claim, and the tests that back it") holds the claims, one table
//! of `| claim | tests |` per guard, each naming its tests as `` `crate::test_name` ``;
//! `harness sandbox explain` names them the same way on its "protected" lines. A test renamed or deleted without updating the claim
//! breaks this test, so no claim outlives the test that made it true.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{Repo, source_root};

/// The file of the claims tables, from the workspace's root.
const CLAIMS: &str = "docs/claims.md";

#[test]
fn every_claim_in_the_readme_names_tests_that_exist() {
    let root = source_root();
    let claims = fs::read_to_string(root.join(CLAIMS)).expect("docs/claims.md is readable");
    let rows = claim_rows(&claims);
    assert!(
        rows.len() >= 80,
        "docs/claims.md's tables have {} rows; every guard needs one, and none is dropped",
        rows.len()
    );
    let mut missing = Vec::new();
    for row in &rows {
        let names = test_names(row);
        assert!(!names.is_empty(), "a claim names no test: {row}");
        for name in names {
            if !test_exists(&root, &name) {
                missing.push(format!(
                    "{}::{} (claimed in: {row})",
                    name.krate, name.function
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "claims name tests that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_protected_line_of_sandbox_explain_names_tests_that_exist() {
    let root = source_root();
    let repo = Repo::from_fixture("calc");
    for tier in ["none", "landlock", "bwrap"] {
        let run = repo.harness(&["sandbox", "explain", "--sandbox", tier]);
        run.assert_exit(0);
        let entries = explain_entries(&run.stdout);
        let protected: Vec<&String> = entries
            .iter()
            .filter(|entry| entry.trim_start().starts_with("protected"))
            .collect();
        assert!(protected.len() >= 4, "{tier}: {}", run.stdout);
        for entry in protected {
            assert!(
                !bare_test_names(entry).is_empty(),
                "{tier}: names no test: {entry}"
            );
        }
        let names = bare_test_names(&run.stdout);
        assert!(names.len() >= 20, "{tier}: {}", run.stdout);
        for name in names {
            assert!(
                test_exists(&root, &name),
                "sandbox explain --sandbox {tier} names {}::{}, which is no test",
                name.krate,
                name.function
            );
        }
    }
}

/// The entries of the "what the harness itself guards" list: a line with a kind (`protected`,
/// `seatbelt`, `NOT`) and the indented lines that continue it.
fn explain_entries(text: &str) -> Vec<String> {
    let mut entries: Vec<String> = Vec::new();
    for line in text.lines() {
        let continues = line.starts_with("             ") && !line.trim().is_empty();
        match entries.last_mut() {
            Some(entry) if continues => {
                entry.push('\n');
                entry.push_str(line);
            }
            _ => entries.push(line.to_owned()),
        }
    }
    entries
}

/// Every `crate::function` in `text`, written without backticks.
fn bare_test_names(text: &str) -> Vec<TestName> {
    let quoted: String = text
        .split(|c: char| c.is_whitespace() || "(),;".contains(c))
        .filter(|word| word.contains("::"))
        .map(|word| format!("`{word}` "))
        .collect();
    test_names(&quoted)
}

#[test]
fn the_checker_tells_a_real_test_from_a_missing_or_ignored_one() {
    let root = source_root();
    let real = TestName {
        krate: "harness-cli".into(),
        function: "the_checker_tells_a_real_test_from_a_missing_or_ignored_one".into(),
    };
    assert!(test_exists(&root, &real));
    let missing = TestName {
        krate: "harness-sandbox".into(),
        function: "no_such_test_anywhere".into(),
    };
    assert!(!test_exists(&root, &missing));
    // A helper that is not a test does not back a claim.
    let helper = TestName {
        krate: "harness-cli".into(),
        function: "claim_rows".into(),
    };
    assert!(!test_exists(&root, &helper));

    let dir = tempfile::tempdir().expect("a temporary directory");
    let krate = dir.path().join("crates/harness-fake/tests");
    fs::create_dir_all(&krate).expect("create");
    fs::write(
        krate.join("t.rs"),
        "#[test]\n#[ignore]\nfn skipped() {}\n\n#[test]\nfn ran() {}\n",
    )
    .expect("write");
    let named = |function: &str| TestName {
        krate: "harness-fake".into(),
        function: function.into(),
    };
    assert!(test_exists(dir.path(), &named("ran")));
    assert!(
        !test_exists(dir.path(), &named("skipped")),
        "an ignored test backs nothing"
    );

    let row = "| a claim | `harness-sandbox::one_test`, `xtask::other` and `not a name` |";
    let names: Vec<String> = test_names(row)
        .into_iter()
        .map(|n| format!("{}::{}", n.krate, n.function))
        .collect();
    assert_eq!(names, ["harness-sandbox::one_test", "xtask::other"]);
}

/// A test, as a claim names it: the package and the test function's name.
#[derive(Debug)]
struct TestName {
    krate: String,
    function: String,
}

/// The body rows of every claims table: each table line after a `| claim | tests |` header
/// and its separator, in every section of the file.
fn claim_rows(claims: &str) -> Vec<String> {
    let mut rows = Vec::new();
    let mut lines = claims.lines().peekable();
    while let Some(line) = lines.next() {
        if !line.starts_with("| claim | tests |") {
            continue;
        }
        if lines.next_if(|next| next.starts_with("|---")).is_none() {
            continue;
        }
        while let Some(row) = lines.next_if(|next| next.starts_with('|')) {
            rows.push(row.to_owned());
        }
    }
    rows
}

#[test]
fn the_claims_tables_are_read_in_every_section() {
    let text = "# Claims\n\n## One\n\n| claim | tests |\n|---|---|\n| a | `harness-cli::x` |\n\n\
                prose | not a row\n\n## Two\n\n| claim | tests |\n|---|---|\n| b | `xtask::y` |\n\
                | c | `harness-exec::z` |\n";
    let rows = claim_rows(text);
    assert_eq!(
        rows,
        [
            "| a | `harness-cli::x` |",
            "| b | `xtask::y` |",
            "| c | `harness-exec::z` |"
        ]
    );
}

/// Every `` `crate::function` `` in `text` whose crate is one of ours.
fn test_names(text: &str) -> Vec<TestName> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|quoted| {
            let (krate, function) = quoted.split_once("::")?;
            let ours = krate.starts_with("harness-") || krate == "xtask";
            let plain = |s: &str| {
                !s.is_empty()
                    && s.chars().all(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-'
                    })
            };
            (ours && plain(krate) && plain(function) && !function.contains('-')).then(|| TestName {
                krate: krate.to_owned(),
                function: function.to_owned(),
            })
        })
        .collect()
}

/// Whether `name` is a test that runs: a `fn` of that name in the package's sources, with
/// `#[test]` among the attributes just above it and no `#[ignore]`.
fn test_exists(root: &Path, name: &TestName) -> bool {
    let mut dirs = vec![if name.krate == "xtask" {
        root.join("xtask")
    } else {
        root.join("crates").join(&name.krate)
    }];
    if name.krate == "harness-cli" {
        // The binary's end-to-end tests live in the workspace's tests/ directory.
        dirs.push(root.join("tests"));
    }
    let mut files = Vec::new();
    for dir in dirs {
        rust_files(&dir, &mut files);
    }
    let signature = format!("fn {}(", name.function);
    files.iter().any(|file| {
        let Ok(text) = fs::read_to_string(file) else {
            return false;
        };
        let lines: Vec<&str> = text.lines().collect();
        lines.iter().enumerate().any(|(at, line)| {
            if !line.trim_start().starts_with(&signature) {
                return false;
            }
            let attributes: Vec<&str> = lines[..at]
                .iter()
                .rev()
                .map(|l| l.trim())
                .take_while(|l| l.starts_with("#[") || l.starts_with("//"))
                .collect();
            attributes.iter().any(|a| a.starts_with("#[test]"))
                && !attributes.iter().any(|a| a.starts_with("#[ignore"))
        })
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
