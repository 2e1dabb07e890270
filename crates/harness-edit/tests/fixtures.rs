//! Before/after pairs: each directory under `tests/fixtures/` is one edit.
//!
//! A case holds:
//!
//! - `before.<ext>`: the file, copied into a fresh workspace as `file.<ext>`;
//! - `edit`: the operation, one line: `replace`, `insert <after_line>`,
//!   `write` (with overwrite) or `view [<start_line> <end_line>]`;
//! - its arguments: `old` and `new` for `replace`, `text` for `insert` and `write`;
//! - the expectations: `out`, what the operation returned (the diff, the view,
//!   or `Error: ` and the message), and `after.<ext>`, the file afterwards
//!   (absent when the file must not change).
//!
//! Every file is compared byte for byte (`.gitattributes` keeps git from
//! converting line endings). To write the expectations of a new or changed
//! case from what the editor does now, run
//!
//! ```sh
//! HARNESS_EDIT_BLESS=1 cargo test -p harness-edit --test fixtures
//! ```
//!
//! and review the result with `git diff` before committing it.

use std::fs;
use std::path::{Path, PathBuf};

use harness_edit::{Editor, Error, Overwrite};
use harness_sandbox::Workspace;

/// The environment variable that overwrites the expectations.
const BLESS: &str = "HARNESS_EDIT_BLESS";

#[test]
fn fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut cases: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("the fixtures directory")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 10, "fixtures missing from {}", dir.display());
    let bless = std::env::var_os(BLESS).is_some();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| check(case, bless).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed (set {BLESS}=1 to accept the new output):\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// Runs one case; `Err` describes how it failed.
fn check(case: &Path, bless: bool) -> Result<(), String> {
    let name = case
        .file_name()
        .expect("a name")
        .to_string_lossy()
        .into_owned();
    let before = find(case, "before.").ok_or(format!("{name}: no before.* file"))?;
    let extension = before
        .extension()
        .map_or(String::new(), |ext| format!(".{}", ext.to_string_lossy()));
    let file = format!("file{extension}");

    let root = tempfile::tempdir().expect("a temporary directory");
    fs::copy(&before, root.path().join(&file)).expect("the before file copied");
    let workspace = Workspace::new(root.path()).expect("a workspace");
    let editor = Editor::new(&workspace);

    let spec = read_text(&case.join("edit"));
    let words: Vec<&str> = spec.split_whitespace().collect();
    let arg = |file: &str| read_text(&case.join(file));
    let line = |index: usize| -> Option<usize> {
        words
            .get(index)
            .map(|word| word.parse().expect("a line number"))
    };
    let out = match words.first().copied() {
        Some("replace") => render(editor.replace(&file, &arg("old"), &arg("new"))),
        Some("insert") => render(editor.insert(&file, line(1).expect("after_line"), &arg("text"))),
        Some("write") => render(editor.write(&file, &arg("text"), Overwrite::Yes)),
        Some("view") => match editor.view(&file, line(1), line(2)) {
            Ok(view) => view.text().to_owned(),
            Err(err) => format!("Error: {err}\n"),
        },
        other => panic!("{name}: unknown operation {other:?}"),
    };
    let after = fs::read(root.path().join(&file)).expect("the file afterwards");
    let before_bytes = fs::read(&before).expect("the before file");
    let after_path = case.join(format!("after{extension}"));

    if bless {
        fs::write(case.join("out"), &out).expect("out written");
        if after == before_bytes {
            let _ = fs::remove_file(&after_path);
        } else {
            fs::write(&after_path, &after).expect("after written");
        }
        return Ok(());
    }

    let expected_out = read_text(&case.join("out"));
    if out != expected_out {
        return Err(format!(
            "{name}: output differs\n--- expected\n{expected_out}\n--- actual\n{out}"
        ));
    }
    let expected_after = fs::read(&after_path).unwrap_or(before_bytes);
    if after != expected_after {
        return Err(format!(
            "{name}: file differs\n--- expected\n{:?}\n--- actual\n{:?}",
            String::from_utf8_lossy(&expected_after),
            String::from_utf8_lossy(&after)
        ));
    }
    Ok(())
}

fn render(result: Result<harness_edit::Change, Error>) -> String {
    match result {
        Ok(change) => format!(
            "+{} -{}\n{}",
            change.added(),
            change.removed(),
            change.diff()
        ),
        Err(err) => format!("Error: {err}\n"),
    }
}

fn find(dir: &Path, prefix: &str) -> Option<PathBuf> {
    fs::read_dir(dir)
        .expect("a case directory")
        .map(|entry| entry.expect("an entry").path())
        .find(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with(prefix))
        })
}

fn read_text(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}
