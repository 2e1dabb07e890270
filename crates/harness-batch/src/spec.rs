//! The task file: one JSON object per line ([`TaskSpec`]), read into [`Tasks`], where each
//! line is either a task or a [`LineError`] naming the line and the field. One bad line
//! never stops the others. Its JSON Schema is `docs/batch-task.schema.json`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use harness_agent::EditFormat;
use harness_app::{Overrides, Replies};
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::error::LineError;

/// One task: what to do, in which repository, checked by which command, with which run
/// settings. Every field but `id`, `repo` and `task` may be left out: the settings then
/// come from the repository's `harness.toml` and the user's configuration, as for
/// `harness run`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// The task's name, unique in the file: its results go to `OUT/<id>/`, so it is a safe
    /// directory name ([A-Za-z0-9._-], not `.` or `..`).
    pub id: String,
    /// The git repository: a local path (relative to the task file's directory) or a git
    /// URL. It is cloned; the repository itself is never changed.
    pub repo: String,
    /// What to check out after cloning: a branch, tag or commit. [default: the clone's HEAD]
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// What to do, in words.
    pub task: String,
    /// The command that checks the task (`--verify`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<String>,
    /// The model (`--model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model server's address (`--host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The server's API: `ollama` or `openai` (`--api`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// How the model replies: `auto`, `native` or `constrained` (`--replies`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replies: Option<String>,
    /// The most model turns per attempt (`--max-steps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// The most seconds the run may take (`--timeout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// The most seconds one command may take (the configuration's `command_timeout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_timeout: Option<u64>,
    /// Tries at the task (`--attempts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// Failed checks that end an attempt (`--max-checks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_checks: Option<u32>,
    /// How the model changes files: `auto`, `tools`, `whole` or `diff` (`--edit-format`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_format: Option<String>,
    /// The isolation tier: `auto`, `bwrap`, `landlock` or `none` (`--sandbox`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// The only programs commands may run (`--allow`, repeated).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Let commands use the network (`--network`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// Let the file tools change test code (`--allow-test-edits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_test_edits: Option<bool>,
}

impl TaskSpec {
    /// Where the repository is: a URL as given, a local path from `tasks_dir`.
    pub fn source(&self, tasks_dir: &Path) -> Source {
        if is_url(&self.repo) {
            Source::Url(self.repo.clone())
        } else {
            Source::Local(tasks_dir.join(&self.repo))
        }
    }

    /// The run settings this task sets, over the configuration files, as `harness run`'s
    /// flags would. The names were checked when the line was read, so none is dropped.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            model: self.model.clone(),
            host: self.host.clone(),
            api: self.api.clone(),
            verify: self.verify.clone(),
            allow: self.allow.clone(),
            timeout: self.timeout,
            max_steps: self.max_steps,
            attempts: self.attempts,
            max_checks: self.max_checks,
            command_timeout: self.command_timeout,
            sandbox: self.sandbox.as_deref().and_then(|name| name.parse().ok()),
            network: self.network.unwrap_or(false),
            edit_format: self.edit_format.as_deref().and_then(EditFormat::parse),
            replies: self.replies.as_deref().and_then(Replies::parse),
            allow_test_edits: self.allow_test_edits.unwrap_or(false),
            ..Overrides::default()
        }
    }

    /// What JSON alone cannot say: a safe id, known names, no zero limit. The field and the
    /// message of the first problem.
    fn check(&self) -> Result<(), (&'static str, String)> {
        if !is_safe_id(&self.id) {
            return Err((
                "id",
                format!(
                    "{:?} is not a safe directory name: use letters, digits, '.', '_' and '-' \
                     (not \".\" or \"..\")",
                    self.id
                ),
            ));
        }
        for (field, value) in [("repo", &self.repo), ("task", &self.task)] {
            if value.trim().is_empty() {
                return Err((field, "must not be empty".to_owned()));
            }
        }
        if let Some(api) = &self.api
            && !matches!(api.as_str(), "ollama" | "openai")
        {
            return Err(("api", format!("{api:?}: use \"ollama\" or \"openai\"")));
        }
        let edit_formats = EditFormat::ALL.map(|(name, _)| name);
        check_name("edit_format", self.edit_format.as_deref(), &edit_formats)?;
        let replies = Replies::ALL.map(|(name, _)| name);
        check_name("replies", self.replies.as_deref(), &replies)?;
        check_name("sandbox", self.sandbox.as_deref(), &SANDBOXES)?;
        let limits = [
            ("max_steps", self.max_steps.map(u64::from)),
            ("attempts", self.attempts.map(u64::from)),
            ("max_checks", self.max_checks.map(u64::from)),
            ("timeout", self.timeout),
            ("command_timeout", self.command_timeout),
        ];
        for (field, value) in limits {
            if value == Some(0) {
                return Err((field, "must be at least 1".to_owned()));
            }
        }
        Ok(())
    }
}

/// Where a task's repository is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A repository on this machine.
    Local(PathBuf),
    /// A git URL (`https://`, `ssh://`, `file://`, `git@host:path`).
    Url(String),
}

/// A task file, read: each task line as a task or the error that names what is wrong.
#[derive(Clone, Debug)]
pub struct Tasks {
    path: PathBuf,
    /// The file as read: what an engine that carries the file itself is given.
    text: String,
    entries: Vec<Entry>,
}

/// One task line: its place in the file, and what it holds.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The line number in the file, from 1.
    pub line: usize,
    /// The task's index, from 0, counting task lines (blank lines are not tasks): what
    /// `--index`, `JOB_COMPLETION_INDEX` and `SLURM_ARRAY_TASK_ID` name.
    pub index: usize,
    /// The task, or what is wrong with the line.
    pub parsed: Result<TaskSpec, LineError>,
}

impl Tasks {
    /// Reads the task file at `path`.
    ///
    /// # Errors
    ///
    /// A file that cannot be read, or is not UTF-8. A bad line is not an error here: it is
    /// an [`Entry`] holding a [`LineError`].
    pub fn read(path: &Path) -> Result<Tasks, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::ReadTasks {
            path: path.to_owned(),
            source,
        })?;
        Ok(Tasks::parse(path, &text))
    }

    /// The tasks in `text`, read as the file at `path` (whose name the errors show and whose
    /// directory local repositories are relative to).
    pub fn parse(path: &Path, text: &str) -> Tasks {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |name| name.to_string_lossy().into_owned(),
        );
        let mut first_line_of: HashMap<String, usize> = HashMap::new();
        let mut entries = Vec::new();
        for (number, line) in text.lines().enumerate().map(|(i, line)| (i + 1, line)) {
            if line.trim().is_empty() {
                continue;
            }
            let parsed = parse_line(line).and_then(|spec| match first_line_of.get(&spec.id) {
                Some(first) => Err((
                    Some("id".to_owned()),
                    format!(
                        "{:?} is already the id of line {first}: ids must be unique",
                        spec.id
                    ),
                )),
                None => {
                    first_line_of.insert(spec.id.clone(), number);
                    Ok(spec)
                }
            });
            entries.push(Entry {
                line: number,
                index: entries.len(),
                parsed: parsed.map_err(|(field, message)| LineError {
                    file: name.clone(),
                    line: number,
                    field,
                    message,
                }),
            });
        }
        Tasks {
            path: path.to_owned(),
            text: text.to_owned(),
            entries,
        }
    }

    /// The task file's text, as read.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The task file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory local repositories are relative to: the task file's.
    pub fn dir(&self) -> &Path {
        match self.path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        }
    }

    /// Every task line, in order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The task line with index `index`.
    ///
    /// # Errors
    ///
    /// No such line, or a line that is not a task.
    pub fn task(&self, index: usize) -> Result<&TaskSpec, Error> {
        let entry = self.entries.get(index).ok_or(Error::NoSuchIndex {
            index,
            count: self.entries.len(),
        })?;
        entry
            .parsed
            .as_ref()
            .map_err(|error| Error::BadLine(error.clone()))
    }

    /// The lines that are not tasks.
    pub fn errors(&self) -> impl Iterator<Item = &LineError> {
        self.entries
            .iter()
            .filter_map(|entry| entry.parsed.as_ref().err())
    }
}

/// The task on `line`, or the field (if one) and what is wrong.
fn parse_line(line: &str) -> Result<TaskSpec, (Option<String>, String)> {
    // serde would take `[...]` for a struct's fields in order: a line is an object.
    if !line.trim_start().starts_with('{') {
        return Err((
            None,
            "not a JSON object: each line is one task, {\"id\": ..., \"repo\": ..., \"task\": ...}"
                .to_owned(),
        ));
    }
    let mut reader = serde_json::Deserializer::from_str(line);
    let spec: TaskSpec = serde_path_to_error::deserialize(&mut reader).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        let mut message = without_position(&inner.to_string());
        if inner.is_syntax() || inner.is_eof() {
            message = format!("not a line of JSON: {message}");
        }
        // serde names unknown and missing fields in its message; a wrong value's field is
        // the path to it.
        match (path.as_str(), named_field(&message)) {
            (".", field) => (field, message),
            (path, _) => (
                path.split(['.', '['])
                    .next()
                    .filter(|field| !field.is_empty())
                    .map(str::to_owned),
                message,
            ),
        }
    })?;
    reader
        .end()
        .map_err(|error| (None, without_position(&error.to_string())))?;
    spec.check()
        .map_err(|(field, message)| (Some(field.to_owned()), message))?;
    Ok(spec)
}

/// The field serde's message names: "missing field `id`", "unknown field `x`, ...".
fn named_field(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("missing field `")
        .or_else(|| message.strip_prefix("unknown field `"))?;
    rest.split('`').next().map(str::to_owned)
}

/// serde_json's message without " at line 1 column 17": the line is the file's, given
/// apart.
fn without_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

/// A safe directory name: letters, digits, `.`, `_`, `-`; not `.` or `..`.
fn is_safe_id(id: &str) -> bool {
    !id.is_empty()
        && id != "."
        && id != ".."
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// True if and only if `repo` is a git URL rather than a path: a scheme (`https://`,
/// `file://`, ...) or git's scp-like `user@host:path`.
fn is_url(repo: &str) -> bool {
    if repo.contains("://") {
        return true;
    }
    match (repo.find('@'), repo.find(':'), repo.find('/')) {
        (Some(at), Some(colon), slash) => at < colon && slash.is_none_or(|slash| colon < slash),
        _ => false,
    }
}

/// The names `sandbox` takes, as `--sandbox` does.
const SANDBOXES: [&str; 4] = ["auto", "bwrap", "landlock", "none"];

/// `Err` naming `field` when `value` is given and is not one of `known`.
fn check_name(
    field: &'static str,
    value: Option<&str>,
    known: &[&str],
) -> Result<(), (&'static str, String)> {
    match value {
        Some(name) if !known.contains(&name) => {
            Err((field, format!("{name:?}: use one of {}", known.join(", "))))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::{Value, json};

    use super::*;

    const SCHEMA: &str = include_str!("../../../docs/batch-task.schema.json");

    /// A task that sets every field: the struct literal has no `..`, so a field added to
    /// [`TaskSpec`] fails to compile here until it is named, and so reaches the schema test.
    fn every_field() -> TaskSpec {
        TaskSpec {
            id: "t-1".to_owned(),
            repo: "repo".to_owned(),
            reference: Some("main".to_owned()),
            task: "fix it".to_owned(),
            verify: Some("cargo test".to_owned()),
            model: Some("m".to_owned()),
            host: Some("http://127.0.0.1:8080".to_owned()),
            api: Some("openai".to_owned()),
            replies: Some("native".to_owned()),
            max_steps: Some(5),
            timeout: Some(60),
            command_timeout: Some(30),
            attempts: Some(2),
            max_checks: Some(1),
            edit_format: Some("whole".to_owned()),
            sandbox: Some("landlock".to_owned()),
            allow: vec!["cargo".to_owned()],
            network: Some(true),
            allow_test_edits: Some(false),
        }
    }

    fn schema() -> Value {
        serde_json::from_str(SCHEMA).expect("the schema is JSON")
    }

    fn parse(text: &str) -> Tasks {
        Tasks::parse(Path::new("dir/tasks.jsonl"), text)
    }

    fn error_of(line: &str) -> String {
        let tasks = parse(line);
        let errors: Vec<String> = tasks.errors().map(ToString::to_string).collect();
        assert_eq!(errors.len(), 1, "{line}: {errors:?}");
        errors[0].clone()
    }

    #[test]
    fn every_field_of_the_type_is_in_the_schema_and_no_other() {
        let serialized = serde_json::to_value(every_field()).unwrap();
        let fields: BTreeSet<String> = serialized.as_object().unwrap().keys().cloned().collect();
        let schema = schema();
        let in_schema: BTreeSet<String> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(fields, in_schema);
        assert_eq!(schema["required"], json!(["id", "repo", "task"]));
        assert_eq!(schema["additionalProperties"], false);
    }

    #[test]
    fn the_schema_s_names_are_the_ones_the_harness_takes() {
        let schema = schema();
        let names = |field: &str| -> Vec<String> {
            serde_json::from_value(schema["properties"][field]["enum"].clone()).unwrap()
        };
        assert_eq!(names("edit_format"), EditFormat::ALL.map(|(name, _)| name));
        assert_eq!(names("replies"), Replies::ALL.map(|(name, _)| name));
        assert_eq!(names("sandbox"), SANDBOXES);
        for name in SANDBOXES {
            assert!(name.parse::<harness_exec::Sandbox>().is_ok(), "{name}");
        }
        assert_eq!(names("api"), ["ollama", "openai"]);
    }

    #[test]
    fn the_schema_and_the_parser_agree_on_each_line() {
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema())
            .unwrap();
        let full = serde_json::to_value(every_field()).unwrap();
        let lines = [
            full.clone(),
            json!({"id": "a", "repo": "r", "task": "t"}),
            json!({"id": "a", "repo": "r"}),
            json!({"id": "a/b", "repo": "r", "task": "t"}),
            json!({"id": "..", "repo": "r", "task": "t"}),
            json!({"id": "a", "repo": "r", "task": "t", "colour": "red"}),
            json!({"id": "a", "repo": "r", "task": "t", "max_steps": 0}),
            json!({"id": "a", "repo": "r", "task": "t", "max_steps": "5"}),
            json!({"id": "a", "repo": "r", "task": "t", "sandbox": "docker"}),
            json!({"id": "a", "repo": "r", "task": "t", "api": "grpc"}),
            json!({"id": "a", "repo": "r", "task": "t", "allow": "cargo"}),
            json!({"id": "a", "repo": "", "task": "t"}),
        ];
        for line in lines {
            let parsed = parse(&line.to_string());
            assert_eq!(
                validator.is_valid(&line),
                parsed.errors().next().is_none(),
                "{line}"
            );
        }
    }

    #[test]
    fn a_bad_line_names_its_line_and_field() {
        let cases = [
            (
                r#"{"id": "a", "repo": "r", "task": "t", "verify": 3}"#,
                r#""verify": invalid type: integer `3`, expected a string"#,
            ),
            (
                r#"{"id": "a", "repo": "r"}"#,
                r#""task": missing field `task`"#,
            ),
            (
                r#"{"id": "a", "repo": "r", "task": "t", "colour": 1}"#,
                r#""colour": unknown field `colour`, expected one of"#,
            ),
            (
                r#"{"id": "a b", "repo": "r", "task": "t"}"#,
                r#""id": "a b" is not a safe directory name"#,
            ),
            (
                r#"{"id": "a", "repo": "r", "task": "t", "timeout": 0}"#,
                r#""timeout": must be at least 1"#,
            ),
            (
                r#"{"id": "a", "repo": "r", "task": "t", "edit_format": "xml"}"#,
                r#""edit_format": "xml": use one of auto, tools, whole, diff"#,
            ),
            (
                r#"{"id": "a", "repo": "r", "task": "t", "allow": ["x", 2]}"#,
                r#""allow": invalid type: integer `2`"#,
            ),
            (
                r#"{"id": "a", "repo": "r", "task": "t"} x"#,
                "trailing characters",
            ),
            (
                r#"{"id": "a", "repo": "r", "task": "t""#,
                "not a line of JSON: EOF while parsing",
            ),
            ("not json", "not a JSON object"),
            ("[1]", "not a JSON object"),
        ];
        for (line, expected) in cases {
            let error = error_of(line);
            assert!(error.starts_with("tasks.jsonl:1: "), "{error}");
            assert!(error.contains(expected), "{line}: {error}");
            assert!(!error.contains(" at line "), "{error}");
        }
    }

    #[test]
    fn one_bad_line_does_not_stop_the_others_and_blank_lines_are_not_tasks() {
        let tasks = parse(concat!(
            "{\"id\": \"a\", \"repo\": \"r\", \"task\": \"t\"}\n",
            "\n",
            "{\"id\": \"b\", \"repo\": \"r\", \"task\": 5}\n",
            "{\"id\": \"a\", \"repo\": \"r\", \"task\": \"t\"}\n",
            "{\"id\": \"c\", \"repo\": \"r\", \"task\": \"t\"}\n",
        ));
        let lines: Vec<(usize, usize, bool)> = tasks
            .entries()
            .iter()
            .map(|entry| (entry.line, entry.index, entry.parsed.is_ok()))
            .collect();
        assert_eq!(
            lines,
            [(1, 0, true), (3, 1, false), (4, 2, false), (5, 3, true)]
        );
        let errors: Vec<String> = tasks.errors().map(ToString::to_string).collect();
        assert_eq!(
            errors[1],
            "tasks.jsonl:4: \"id\": \"a\" is already the id of line 1: ids must be unique"
        );
        assert_eq!(tasks.task(3).unwrap().id, "c");
        assert!(matches!(tasks.task(1), Err(Error::BadLine(_))));
        assert!(matches!(
            tasks.task(4),
            Err(Error::NoSuchIndex { index: 4, count: 4 })
        ));
    }

    #[test]
    fn a_local_repository_is_relative_to_the_task_file_and_a_url_is_left_as_it_is() {
        let tasks = parse(r#"{"id": "a", "repo": "../calc", "task": "t"}"#);
        let spec = tasks.task(0).unwrap();
        assert_eq!(
            spec.source(tasks.dir()),
            Source::Local(PathBuf::from("dir/../calc"))
        );
        let with = |repo: &str| TaskSpec {
            repo: repo.to_owned(),
            ..spec.clone()
        };
        for url in [
            "https://example.invalid/r.git",
            "file:///srv/r",
            "git@example.invalid:team/r.git",
        ] {
            assert_eq!(
                with(url).source(tasks.dir()),
                Source::Url(url.to_owned()),
                "{url}"
            );
        }
        for path in ["/srv/r", "r", "some/dir@2:x"] {
            assert!(
                matches!(with(path).source(tasks.dir()), Source::Local(_)),
                "{path}"
            );
        }
    }

    #[test]
    fn the_settings_reach_the_run_as_harness_run_s_flags_would() {
        let overrides = every_field().overrides();
        assert_eq!(overrides.verify.as_deref(), Some("cargo test"));
        assert_eq!(overrides.max_steps, Some(5));
        assert_eq!(overrides.timeout, Some(60));
        assert_eq!(overrides.command_timeout, Some(30));
        assert_eq!(overrides.attempts, Some(2));
        assert_eq!(overrides.max_checks, Some(1));
        assert_eq!(overrides.api.as_deref(), Some("openai"));
        assert_eq!(overrides.edit_format, Some(EditFormat::Whole));
        assert_eq!(overrides.replies, Replies::parse("native"));
        assert_eq!(overrides.sandbox, "landlock".parse().ok());
        assert_eq!(overrides.allow, ["cargo"]);
        assert!(overrides.network);
        assert!(!overrides.allow_test_edits);
    }
}
