//! The head start: which files the harness reads for the model before its first turn.
//!
//! A person handed a failing project looks at the files the failure names and, in a small
//! project, at all of it. Small local models do not: measured on this kind of machine, a
//! bash-only agent driving Qwen2.5-Coder-1.5B never opened a source file in 8 small bug-fix
//! tasks. So the harness opens them itself, through the same `read_file` tool, within the
//! head start's budget.

use harness_sandbox::Access;
use harness_tools::Toolbox;

/// A project with at most this many files in its listing is small: all of its files are
/// candidates, not only the ones the failure names.
const SMALL_PROJECT_FILES: usize = 12;

/// Files larger than this are never read for the head start.
const MAX_FILE_BYTES: u64 = 16 * 1024;

/// The files to read for the model, in order: those the verification output names (in the
/// order it names them), then, in a small project, the other files of the listing, smallest
/// first. Only regular files of at most [`MAX_FILE_BYTES`] that the workspace lets the
/// tools read (its deny rules and hard-link refusal, judged on the resolved path, as
/// `read_file` judges it) and that `list_dir` would show ([`Toolbox::is_listed`]: nothing
/// the workspace's `.gitignore` keeps out of git, such as a local settings file, even when
/// the output names it or a listed link leads to it); hidden files only when the output
/// names them. The head start is read before the model says anything, and its files go
/// into the first request: the harness picks them, so it picks only what the user would
/// show anyone who has the repository.
///
/// The files `is_protected_test` picks (tests the tools may not change) come before all
/// the others, each group in that order, so that the file the model reads last, the one
/// its answer most likely changes, is code it may change. (Seen with Qwen2.5-Coder-1.5B on
/// the task suite: where a shell test was read last, the model set out to change the
/// test's own helper instead of the code under test. Marking each test's result as a test
/// not to change was tried with it, and dropped: the suite run had 14 refused test edits
/// against 4-8 in the four runs before, and solved no more.)
pub(crate) fn files_to_read(
    toolbox: &Toolbox,
    listing: &str,
    verification_output: &str,
    is_protected_test: impl Fn(&str) -> bool,
) -> Vec<String> {
    let workspace = toolbox.workspace();
    let readable = |path: &str| -> Option<u64> {
        workspace.check(path, Access::Read).ok()?;
        if !toolbox.is_listed(path) {
            return None;
        }
        let metadata = workspace.metadata(path).ok()?;
        (metadata.is_file() && metadata.len() <= MAX_FILE_BYTES).then(|| metadata.len())
    };
    let mut chosen: Vec<String> = Vec::new();
    for candidate in named_paths(verification_output, workspace.root().as_str()) {
        if !chosen.contains(&candidate) && readable(&candidate).is_some() {
            chosen.push(candidate);
        }
    }
    let listed: Vec<&str> = listing
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.ends_with('/') && !line.starts_with('['))
        .collect();
    if listed.len() <= SMALL_PROJECT_FILES {
        let mut rest: Vec<(u64, String)> = listed
            .into_iter()
            .filter(|path| !is_hidden(path) && !chosen.iter().any(|c| c == path))
            .filter_map(|path| readable(path).map(|size| (size, path.to_owned())))
            .collect();
        rest.sort();
        chosen.extend(rest.into_iter().map(|(_, path)| path));
    }
    let (tests, code): (Vec<String>, Vec<String>) =
        chosen.into_iter().partition(|path| is_protected_test(path));
    tests.into_iter().chain(code).collect()
}

/// Workspace-relative paths that `output` mentions: words that, with quotes, trailing
/// punctuation and a `:line:column` suffix taken off, are relative paths or absolute paths
/// under `root`. Whether they exist is for the caller to check.
fn named_paths(output: &str, root: &str) -> Vec<String> {
    let prefix = format!("{}/", root.trim_end_matches('/'));
    output
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | ','))
        .filter_map(|word| {
            let word = word.trim_end_matches(['.', ';']);
            // `src/lib.rs:12:5` and `calc.py:6:` name the file.
            let word = word.split(':').next().unwrap_or(word);
            let relative = match word.strip_prefix(&prefix) {
                Some(relative) => relative,
                None if word.starts_with('/') => return None,
                None => word.strip_prefix("./").unwrap_or(word),
            };
            // A file name has an extension, or at least a directory: this keeps words of
            // prose ("FAILED", "test") out.
            let looks_like_a_file = relative.contains('.') || relative.contains('/');
            (looks_like_a_file && !relative.is_empty() && !relative.contains(".."))
                .then(|| relative.to_owned())
        })
        .collect()
}

fn is_hidden(path: &str) -> bool {
    path.split('/').any(|name| name.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_found_in_python_rust_and_plain_output() {
        let output = "Traceback (most recent call last):\n  File \"/w/test_calc.py\", line 8, in \
                      test_add\nerror: src/lib.rs:12:5: oops\nsee ./docs/notes.md.\nFAILED (x=1)\n\
                      /etc/passwd and /w/../x and ../y.py";
        assert_eq!(
            named_paths(output, "/w"),
            ["test_calc.py", "src/lib.rs", "docs/notes.md"]
        );
    }

    fn workspace(files: &[(&str, usize)]) -> (tempfile::TempDir, Toolbox) {
        let directory = tempfile::tempdir().unwrap();
        for (path, size) in files {
            let path = directory.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x".repeat(*size)).unwrap();
        }
        let workspace = harness_sandbox::Workspace::new(directory.path()).unwrap();
        (directory, Toolbox::new(workspace))
    }

    #[test]
    fn named_files_come_first_then_a_small_projects_files_smallest_first() {
        let (_dir, workspace) = workspace(&[
            ("test_calc.py", 300),
            ("calc.py", 200),
            ("README.md", 70),
            (".gitignore", 10),
            (".env", 10),
            ("big.bin", 20_000),
        ]);
        let listing = ".env\n.gitignore\nREADME.md\nbig.bin\ncalc.py\nsrc/\ntest_calc.py\n";
        let root = workspace.workspace().root().to_string();
        let output = format!("File \"{root}/test_calc.py\", line 8\nmissing.py: nope\n.env");
        assert_eq!(
            files_to_read(&workspace, listing, &output, |_| false),
            ["test_calc.py", "README.md", "calc.py"],
            "named first; then by size; never hidden, denied, missing or big files"
        );
    }

    /// Issue #45: the head start went into the first request before the model said
    /// anything, and read a git-ignored local file the verification output named.
    #[test]
    fn files_git_ignores_are_never_read_named_listed_or_through_a_link() {
        let (dir, toolbox) = workspace(&[
            ("calc.py", 100),
            ("local_settings.py", 50),
            ("cache/state.txt", 50),
        ]);
        std::fs::write(dir.path().join(".gitignore"), "local_settings.py\ncache/\n").unwrap();
        std::os::unix::fs::symlink("local_settings.py", dir.path().join("settings.py")).unwrap();
        let listing = ".gitignore\ncalc.py\nsettings.py\n";
        let output = "File \"local_settings.py\", line 1\ncache/state.txt: read\ncalc.py:3";
        assert_eq!(
            files_to_read(&toolbox, listing, output, |_| false),
            ["calc.py"],
            "neither the ignored files the output names nor the link to one"
        );
        assert!(toolbox.is_listed("calc.py"));
        assert!(!toolbox.is_listed("local_settings.py"));
        assert!(!toolbox.is_listed("settings.py"));
        assert!(!toolbox.is_listed("cache/state.txt"));
    }

    #[test]
    fn protected_tests_are_read_before_everything_else_each_group_in_its_order() {
        let (_dir, workspace) = workspace(&[
            ("lib.sh", 100),
            ("test.sh", 200),
            ("calc.py", 300),
            ("test_calc.py", 400),
            ("notes.md", 500),
        ]);
        let listing = "calc.py\nlib.sh\nnotes.md\ntest.sh\ntest_calc.py\n";
        let is_test = |path: &str| path.starts_with("test");
        assert_eq!(
            files_to_read(&workspace, listing, "notes.md: see", is_test),
            ["test.sh", "test_calc.py", "notes.md", "lib.sh", "calc.py"]
        );
    }

    #[test]
    fn in_a_larger_project_only_named_files_are_read() {
        let files: Vec<(String, usize)> = (0..=SMALL_PROJECT_FILES)
            .map(|n| (format!("f{n}.py"), 10))
            .collect();
        let borrowed: Vec<(&str, usize)> = files.iter().map(|(p, s)| (p.as_str(), *s)).collect();
        let (_dir, workspace) = workspace(&borrowed);
        let listing: String = files.iter().map(|(p, _)| format!("{p}\n")).collect();
        assert_eq!(
            files_to_read(&workspace, &listing, "f3.py:1: error", |_| false),
            ["f3.py"]
        );
        let small: String = files
            .iter()
            .skip(1)
            .map(|(p, _)| format!("{p}\n"))
            .collect();
        assert_eq!(
            files_to_read(&workspace, &small, "", |_| false).len(),
            SMALL_PROJECT_FILES
        );
    }
}
