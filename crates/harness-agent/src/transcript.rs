//! [`Transcript`]: every message, tool call, result, timing and token count of a run, one JSON
//! object per line, with secrets redacted.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use harness_exec::Redactor;
use serde_json::{Map, Value, json};

/// The record of one run, written as it happens so that a run killed halfway still leaves
/// everything up to its last step.
///
/// Each line is a JSON object with `"type"` (`run`, `message`, `reply`, `tool`,
/// `verification`, `checkpoint`, `nudge`, `trim`, `outcome`) and `"t"`, the seconds since the
/// transcript was created; the other fields depend on the type. Every string in it passes
/// through a [`Redactor`] first: the tool results already did, but the model's own text, the
/// task and a command's arguments may hold a secret too.
///
/// ```
/// use harness_agent::Transcript;
/// use serde_json::json;
///
/// # let directory = tempfile::tempdir()?;
/// let path = directory.path().join("transcript.jsonl");
/// let mut transcript = Transcript::create(&path)?;
/// transcript.record("message", json!({"role": "user", "content": "use API_KEY=abc123def"}));
/// drop(transcript);
///
/// let lines = Transcript::read(&path)?;
/// assert_eq!(lines[0]["type"], "message");
/// assert_eq!(lines[0]["content"], "use API_KEY=[REDACTED]");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Transcript {
    /// Where it is written.
    path: PathBuf,
    /// The open file; `None` after a write failed, so one failure is reported once.
    file: Option<File>,
    /// When it was created.
    started: Instant,
    /// Applied to every string.
    redactor: Redactor,
    /// The first write failure, for the run's warnings.
    failure: Option<String>,
}

/// Why a transcript could not be created or read back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TranscriptError {
    /// The file could not be created (its directory is missing or not writable).
    #[error(
        "cannot create the transcript {}: {source}; check that its directory exists and is writable",
        path.display()
    )]
    Create {
        /// The transcript's path.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The file could not be opened or read.
    #[error("cannot read the transcript {}: {source}", path.display())]
    Read {
        /// The transcript's path.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// A line is not a JSON object, so the file is damaged or not a transcript.
    #[error(
        "{} line {line}: not a transcript record (a JSON object); the file is damaged or is not a transcript",
        path.display()
    )]
    NotARecord {
        /// The transcript's path.
        path: PathBuf,
        /// The line, counting from 1.
        line: usize,
    },
}

impl Transcript {
    /// Creates (or truncates) the transcript at `path`, redacting with this process's
    /// secret-named variables and the built-in patterns.
    ///
    /// # Errors
    ///
    /// [`TranscriptError::Create`] when the file cannot be created.
    pub fn create(path: impl Into<PathBuf>) -> Result<Transcript, TranscriptError> {
        let path = path.into();
        let file = match OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
        {
            Ok(file) => file,
            Err(source) => return Err(TranscriptError::Create { path, source }),
        };
        Ok(Transcript {
            path,
            file: Some(file),
            started: Instant::now(),
            redactor: Redactor::from_vars(std::env::vars_os()),
            failure: None,
        })
    }

    /// The same transcript, redacting with `redactor` instead.
    pub fn with_redactor(mut self, redactor: Redactor) -> Transcript {
        self.redactor = redactor;
        self
    }

    /// Where the transcript is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record: the fields of `fields` (an object; anything else goes under
    /// `"value"`), with `type` and `t` added and every string redacted. A write failure is
    /// kept for [`Transcript::failure`] and ends the writing.
    pub fn record(&mut self, kind: &str, fields: Value) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let mut line = Map::new();
        line.insert("type".to_owned(), json!(kind));
        line.insert(
            "t".to_owned(),
            json!((self.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0),
        );
        match fields {
            Value::Object(fields) => line.extend(fields),
            other => {
                line.insert("value".to_owned(), other);
            }
        }
        let mut line = Value::Object(line);
        redact_strings(&mut line, &self.redactor);
        let mut text = line.to_string();
        text.push('\n');
        // One write per line, no buffer: a process killed between two steps loses nothing.
        if let Err(error) = file.write_all(text.as_bytes()) {
            self.failure = Some(format!(
                "the transcript {} could not be written: {error}",
                self.path.display()
            ));
            self.file = None;
        }
    }

    /// The first write failure, if there was one.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Reads the records of the transcript at `path`, in order.
    ///
    /// # Errors
    ///
    /// [`TranscriptError::Read`] when the file cannot be read, and
    /// [`TranscriptError::NotARecord`] naming the first line that is not a JSON object.
    pub fn read(path: impl AsRef<Path>) -> Result<Vec<Value>, TranscriptError> {
        let path = path.as_ref();
        let unreadable = |source| TranscriptError::Read {
            path: path.to_owned(),
            source,
        };
        let reader = BufReader::new(File::open(path).map_err(unreadable)?);
        let mut records = Vec::new();
        for (number, line) in reader.lines().enumerate() {
            let line = line.map_err(unreadable)?;
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(&line) {
                Ok(record @ Value::Object(_)) => records.push(record),
                _ => {
                    return Err(TranscriptError::NotARecord {
                        path: path.to_owned(),
                        line: number + 1,
                    });
                }
            }
        }
        Ok(records)
    }
}

/// Redacts every string in `value`, keys excepted (they are ours).
fn redact_strings(value: &mut Value, redactor: &Redactor) {
    match value {
        Value::String(text) => {
            if let std::borrow::Cow::Owned(redacted) = redactor.redact(text) {
                *text = redacted;
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| redact_strings(item, redactor)),
        Value::Object(fields) => fields
            .values_mut()
            .for_each(|field| redact_strings(field, redactor)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_nested_string_is_redacted_and_other_values_kept() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("t.jsonl");
        let mut transcript = Transcript::create(&path)
            .unwrap()
            .with_redactor(Redactor::new().with_secret("hunter2-secret"));
        transcript.record(
            "tool",
            json!({
                "arguments": {"argv": ["echo", "hunter2-secret"]},
                "result": "TOKEN=abcdef123456",
                "steps": 3,
                "ok": true,
            }),
        );
        transcript.record("note", json!("plain hunter2-secret"));
        assert_eq!(transcript.path(), path);
        assert_eq!(transcript.failure(), None);
        drop(transcript);

        let records = Transcript::read(&path).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0]["type"], "tool");
        assert!(records[0]["t"].as_f64().unwrap() >= 0.0);
        assert_eq!(records[0]["arguments"]["argv"][1], "[REDACTED]");
        assert_eq!(records[0]["result"], "TOKEN=[REDACTED]");
        assert_eq!(records[0]["steps"], 3);
        assert_eq!(records[0]["ok"], true);
        assert_eq!(records[1]["value"], "plain [REDACTED]");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("hunter2-secret"));
        assert!(!text.contains("abcdef123456"));
    }

    #[test]
    fn a_line_that_is_not_a_record_is_named() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("t.jsonl");
        std::fs::write(&path, "{\"type\":\"run\"}\n\n[1]\n").unwrap();
        let error = Transcript::read(&path).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("t.jsonl line 3: not a transcript record (a JSON object)"),
            "{error}"
        );
        assert!(matches!(error, TranscriptError::NotARecord { line: 3, .. }));
    }

    #[test]
    fn a_missing_or_uncreatable_file_is_named() {
        let directory = tempfile::tempdir().unwrap();
        let missing = directory.path().join("none/t.jsonl");
        let error = Transcript::read(&missing).unwrap_err();
        assert!(matches!(error, TranscriptError::Read { .. }), "{error}");
        assert!(error.to_string().contains("none/t.jsonl"), "{error}");
        let error = Transcript::create(&missing).unwrap_err();
        assert!(matches!(error, TranscriptError::Create { .. }), "{error}");
        assert!(
            error
                .to_string()
                .contains("check that its directory exists"),
            "{error}"
        );
    }

    #[test]
    fn a_failed_write_is_kept_and_ends_the_writing() {
        // /dev/full accepts the open and fails every write with ENOSPC.
        let mut transcript = Transcript::create("/dev/full").unwrap();
        transcript.record("run", json!({}));
        let failure = transcript.failure().unwrap().to_owned();
        assert!(
            failure.starts_with("the transcript /dev/full could not be written"),
            "{failure}"
        );
        transcript.record("run", json!({}));
        assert_eq!(transcript.failure(), Some(failure.as_str()));
    }
}
