//! A task of the suite: its manifest (`task.json`) and the directories beside it.
//!
//! ```text
//! fixtures/tasks/<id>/task.json   the manifest: statement, verification, holdout, …
//! fixtures/tasks/<id>/repo/       what the agent sees, copied into a fresh git repository
//! fixtures/tasks/<id>/holdout/    files copied over a copy of the agent's result, hidden from it
//! fixtures/tasks-solutions/<id>/  the reference fix (`fix/`) and known cheats, for the tests
//! ```
//!
//! A task on a real project (`fixtures/tasks-real/`) has no `repo/`: its manifest's
//! `source` names a release in a package registry and its `bug.patch` the bug put in it
//! (see [`super::source`]).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};
use serde::{Deserialize, Serialize};

use super::source::Source;

/// What `task.json` says about a task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Manifest {
    /// The task's name, the same as its directory's.
    pub(crate) id: String,
    /// `python`, `javascript`, `rust` or `shell`.
    pub(crate) language: String,
    /// What kind of bug it is: `off-by-one`, `missing-import`, …
    pub(crate) kind: String,
    /// The one-line task, as a developer would write it.
    pub(crate) statement: String,
    /// The verification command, run in the repository; split like a shell would.
    pub(crate) verify: String,
    /// The holdout command, run in a copy of the result with `holdout/` copied over it.
    pub(crate) holdout: String,
    /// Test files the agent must leave byte for byte as they were.
    #[serde(default)]
    pub(crate) protected: Vec<String>,
    /// Files whose existence afterwards means an instruction injected into the repository
    /// was followed.
    #[serde(default)]
    pub(crate) canaries: Vec<String>,
    /// The release of a real project the task is made from, instead of a `repo/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) source: Option<Source>,
}

/// The languages a task may be in.
const LANGUAGES: &[&str] = &["python", "javascript", "rust", "shell"];

/// A task: its manifest and where its parts are.
#[derive(Clone, Debug)]
pub(crate) struct Task {
    pub(crate) manifest: Manifest,
    /// The repository the agent sees.
    pub(crate) repo: PathBuf,
    /// The holdout files.
    pub(crate) holdout: PathBuf,
    /// The bug put into a real project's release (`bug.patch`); `None` for a small task.
    pub(crate) patch: Option<PathBuf>,
}

impl Task {
    /// Reads the task in `directory`, checking that its manifest is complete and its parts
    /// are there.
    pub(crate) fn load(directory: &Path) -> Result<Task> {
        let path = directory.join("task.json");
        let text =
            fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let manifest: Manifest =
            serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
        let task = Task {
            repo: directory.join("repo"),
            holdout: directory.join("holdout"),
            patch: manifest
                .source
                .is_some()
                .then(|| directory.join("bug.patch")),
            manifest,
        };
        task.check(directory)
            .with_context(|| format!("in {}", path.display()))?;
        Ok(task)
    }

    fn check(&self, directory: &Path) -> Result<()> {
        let manifest = &self.manifest;
        let name = directory.file_name().and_then(|name| name.to_str());
        ensure!(
            name == Some(manifest.id.as_str()),
            "the id {:?} is not the directory's name {name:?}",
            manifest.id
        );
        ensure!(
            LANGUAGES.contains(&manifest.language.as_str()),
            "unknown language {:?}: use one of {LANGUAGES:?}",
            manifest.language
        );
        for (field, value) in [
            ("kind", &manifest.kind),
            ("statement", &manifest.statement),
            ("verify", &manifest.verify),
            ("holdout", &manifest.holdout),
        ] {
            ensure!(!value.trim().is_empty(), "{field} is empty");
        }
        ensure!(
            !manifest.statement.contains('\n'),
            "the statement is one line"
        );
        for command in [&manifest.verify, &manifest.holdout] {
            ensure!(
                shell_words::split(command).is_ok_and(|argv| !argv.is_empty()),
                "{command:?} is not a command line"
            );
        }
        ensure!(
            self.holdout.is_dir(),
            "{} is missing",
            self.holdout.display()
        );
        if let (Some(source), Some(patch)) = (&manifest.source, &self.patch) {
            source.check()?;
            ensure!(
                !self.repo.exists(),
                "{} is there, but the task's source stands for it",
                self.repo.display()
            );
            ensure!(patch.is_file(), "{} is missing", patch.display());
            // Whether they are files of the release is checked once it is unpacked.
            for file in &manifest.protected {
                ensure!(
                    is_relative_inside(file),
                    "protected file {file:?} is not a relative path inside the project"
                );
            }
        } else {
            ensure!(self.repo.is_dir(), "{} is missing", self.repo.display());
            for file in &manifest.protected {
                ensure!(
                    is_relative_inside(file) && self.repo.join(file).is_file(),
                    "protected file {file:?} is not a file of repo/"
                );
            }
        }
        for file in &manifest.canaries {
            ensure!(
                is_relative_inside(file) && !self.repo.join(file).exists(),
                "canary {file:?} must be a relative path that repo/ does not have"
            );
        }
        Ok(())
    }
}

/// Every task under `directory` (each subdirectory with a `task.json`), sorted by id.
pub(crate) fn load_suite(directory: &Path) -> Result<Vec<Task>> {
    let entries =
        fs::read_dir(directory).with_context(|| format!("reading {}", directory.display()))?;
    let mut tasks = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.join("task.json").is_file() {
            tasks.push(Task::load(&path)?);
        }
    }
    if tasks.is_empty() {
        bail!(
            "no task (a directory with a task.json) in {}",
            directory.display()
        );
    }
    tasks.sort_by(|a, b| a.manifest.id.cmp(&b.manifest.id));
    Ok(tasks)
}

/// True if and only if `path` is relative and has no `..`: it names a file inside the
/// repository.
fn is_relative_inside(path: &str) -> bool {
    let path = Path::new(path);
    path.is_relative()
        && path
            .components()
            .all(|part| matches!(part, std::path::Component::Normal(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A task directory `id` holding `manifest` (as JSON text), a repo/ with `test_a.py`
    /// and a holdout/.
    fn task_dir(root: &Path, id: &str, manifest: &str) -> PathBuf {
        let dir = root.join(id);
        fs::create_dir_all(dir.join("repo")).unwrap();
        fs::create_dir_all(dir.join("holdout")).unwrap();
        fs::write(dir.join("repo/test_a.py"), "").unwrap();
        fs::write(dir.join("task.json"), manifest).unwrap();
        dir
    }

    const GOOD: &str = r#"{"id": "t", "language": "python", "kind": "off-by-one",
        "statement": "fix it", "verify": "python3 -m unittest", "holdout": "python3 h.py",
        "protected": ["test_a.py"]}"#;

    #[test]
    fn a_complete_manifest_loads() {
        let root = tempfile::tempdir().unwrap();
        let task = Task::load(&task_dir(root.path(), "t", GOOD)).unwrap();
        assert_eq!(task.manifest.protected, ["test_a.py"]);
        assert!(task.manifest.canaries.is_empty());
        assert_eq!(load_suite(root.path()).unwrap().len(), 1);
    }

    #[test]
    fn a_bad_manifest_is_refused_with_what_is_wrong() {
        let cases = [
            (
                GOOD.replace(r#""id": "t""#, r#""id": "u""#),
                "is not the directory's name",
            ),
            (
                GOOD.replace("python\"", "cobol\""),
                "unknown language \"cobol\"",
            ),
            (GOOD.replace("fix it", "fix\\nit"), "one line"),
            (GOOD.replace("python3 -m unittest", " "), "verify is empty"),
            (
                GOOD.replace("python3 h.py", "python3 'h.py"),
                "is not a command line",
            ),
            (
                GOOD.replace("test_a.py", "../test_a.py"),
                "protected file \"../test_a.py\"",
            ),
            (
                GOOD.replace("test_a.py", "test_b.py"),
                "protected file \"test_b.py\"",
            ),
            (
                GOOD.replace("]}", r#"], "canaries": ["test_a.py"]}"#),
                "canary \"test_a.py\"",
            ),
            (
                GOOD.replace("]}", r#"], "hint": "x"}"#),
                "unknown field `hint`",
            ),
            (
                GOOD.replace(r#""kind": "off-by-one","#, ""),
                "missing field `kind`",
            ),
        ];
        for (manifest, says) in cases {
            let root = tempfile::tempdir().unwrap();
            let error = Task::load(&task_dir(root.path(), "t", &manifest)).unwrap_err();
            let message = format!("{error:#}");
            assert!(message.contains(says), "{manifest}\n→ {message}");
            assert!(message.contains("task.json"), "names the file: {message}");
        }
    }

    #[test]
    fn a_task_on_a_release_needs_its_patch_and_no_repo() {
        let source = r#""source": {"registry": "pypi", "package": "demo", "version": "1.0",
            "url": "https://files.example/demo-1.0.tar.gz",
            "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
            "root": "demo-1.0"}}"#;
        let manifest = GOOD.replace(
            r#""protected": ["test_a.py"]}"#,
            &format!(r#""protected": ["tests/test_a.py"], {source}"#),
        );
        let root = tempfile::tempdir().unwrap();
        let dir = task_dir(root.path(), "t", &manifest);
        let error = format!("{:#}", Task::load(&dir).unwrap_err());
        assert!(error.contains("the task's source stands for it"), "{error}");
        fs::remove_dir_all(dir.join("repo")).unwrap();
        let error = format!("{:#}", Task::load(&dir).unwrap_err());
        assert!(
            error.contains("bug.patch") && error.contains("is missing"),
            "{error}"
        );
        fs::write(dir.join("bug.patch"), "--- a/x\n+++ b/x\n").unwrap();
        let task = Task::load(&dir).unwrap();
        assert_eq!(task.patch, Some(dir.join("bug.patch")));
        assert_eq!(
            task.manifest.source.map(|s| s.package).as_deref(),
            Some("demo")
        );
        let bad = manifest.replace("pypi", "maven");
        fs::write(dir.join("task.json"), bad).unwrap();
        let error = format!("{:#}", Task::load(&dir).unwrap_err());
        assert!(error.contains("unknown registry"), "{error}");
    }

    #[test]
    fn a_task_without_its_holdout_or_a_suite_without_tasks_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dir = task_dir(root.path(), "t", GOOD);
        fs::remove_dir(dir.join("holdout")).unwrap();
        let error = format!("{:#}", Task::load(&dir).unwrap_err());
        assert!(
            error.contains("holdout") && error.contains("is missing"),
            "{error}"
        );
        let empty = tempfile::tempdir().unwrap();
        let error = format!("{:#}", load_suite(empty.path()).unwrap_err());
        assert!(error.contains("no task"), "{error}");
    }
}
