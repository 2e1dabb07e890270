//! [`Transcript`]: every message, tool call, result, timing and token count of a run, one JSON
//! object per line, with secrets redacted.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use harness_exec::Redactor;
use serde_json::Value;

use crate::record::{self, FORMAT, Line, Record};

/// The record of one run, written as it happens so that a run killed halfway still leaves
/// everything up to its last step.
///
/// Each line is one [`Line`]: a [`Record`] tagged by `"type"`, and `"t"`, the seconds since
/// the transcript was created. The first line is a [`Record::Run`] that carries the
/// format's number. Every string in a line passes through a [`Redactor`] first: the tool
/// results already did, but the model's own text, the task and a command's arguments may
/// hold a secret too.
///
/// ```
/// use harness_agent::{Record, Transcript};
/// use harness_agent::Message;
///
/// # let directory = tempfile::tempdir()?;
/// let path = directory.path().join("transcript.jsonl");
/// let mut transcript = Transcript::create(&path)?;
/// transcript.record(Record::Message(Message::user("use API_KEY=abc123def")));
/// drop(transcript);
///
/// let lines = Transcript::read(&path)?;
/// let Record::Message(message) = &lines[0].record else { unreachable!() };
/// assert_eq!(harness_exec::plain_markers(&message.content), "use API_KEY=[REDACTED]");
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
    /// The transcript was written in a format newer than this harness reads.
    #[error(
        "{} is a transcript of format {format}, written by a newer harness; this one reads formats 1 to {FORMAT}: use a newer harness to show it",
        path.display()
    )]
    NewerFormat {
        /// The transcript's path.
        path: PathBuf,
        /// The format its first line names.
        format: u64,
    },
    /// A line is a JSON object but not a record this format has.
    #[error(
        "{} line {line}: {kind} record this harness cannot read ({reason}); the file is damaged or was written by another version",
        path.display()
    )]
    BadRecord {
        /// The transcript's path.
        path: PathBuf,
        /// The line, counting from 1.
        line: usize,
        /// Its `"type"`, quoted, or "an untyped" when it has none.
        kind: String,
        /// What serde found wrong.
        reason: String,
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
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        // What the model read and ran is the user's alone: other local users may not read
        // it, whatever the umask.
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = match options.open(&path) {
            Ok(file) => file,
            Err(source) => return Err(TranscriptError::Create { path, source }),
        };
        // A file that was there before keeps its mode through `open`.
        #[cfg(unix)]
        if let Err(source) =
            file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        {
            return Err(TranscriptError::Create { path, source });
        }
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

    /// Appends one record, with `t` added and every string redacted. A write failure is
    /// kept for [`Transcript::failure`] and ends the writing.
    pub fn record(&mut self, record: Record) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let line = Line {
            t: (self.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            record,
        };
        // A record holds strings, numbers and JSON values only: it always converts.
        let Ok(mut line) = serde_json::to_value(line) else {
            return;
        };
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

    /// Reads the lines of the transcript at `path`, in order: of this version's format, or
    /// of an older one, which is upgraded as it is read.
    ///
    /// # Errors
    ///
    /// [`TranscriptError::Read`] when the file cannot be read,
    /// [`TranscriptError::NotARecord`] naming the first line that is not a JSON object,
    /// [`TranscriptError::NewerFormat`] for a transcript this version cannot know, and
    /// [`TranscriptError::BadRecord`] naming the first line that is no record of its format.
    pub fn read(path: impl AsRef<Path>) -> Result<Vec<Line>, TranscriptError> {
        let path = path.as_ref();
        let unreadable = |source| TranscriptError::Read {
            path: path.to_owned(),
            source,
        };
        let reader = BufReader::new(File::open(path).map_err(unreadable)?);
        let mut lines = Vec::new();
        let mut format = None;
        for (index, text) in reader.lines().enumerate() {
            let text = text.map_err(unreadable)?;
            if text.trim().is_empty() {
                continue;
            }
            let number = index + 1;
            let mut value = match serde_json::from_str::<Value>(&text) {
                Ok(value @ Value::Object(_)) => value,
                _ => {
                    return Err(TranscriptError::NotARecord {
                        path: path.to_owned(),
                        line: number,
                    });
                }
            };
            let format = *format.get_or_insert_with(|| format_of(&value));
            if format > u64::from(FORMAT) {
                return Err(TranscriptError::NewerFormat {
                    path: path.to_owned(),
                    format,
                });
            }
            if format == 1 {
                record::upgrade_from_1(&mut value);
            }
            let kind = match value.get("type").and_then(Value::as_str) {
                Some(kind) => format!("a `{kind}`"),
                None => "an untyped".to_owned(),
            };
            match serde_json::from_value::<Line>(value) {
                Ok(line) => lines.push(line),
                Err(error) => {
                    return Err(TranscriptError::BadRecord {
                        path: path.to_owned(),
                        line: number,
                        kind,
                        reason: error.to_string(),
                    });
                }
            }
        }
        Ok(lines)
    }
}

/// The format a transcript is in, from its first line: the `format` of its `run` record, or
/// 1 for a transcript written before formats were numbered (its `run` record has none).
fn format_of(first: &Value) -> u64 {
    first.get("format").and_then(Value::as_u64).unwrap_or(1)
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
    use crate::model::Message;
    use serde_json::json;

    use super::*;
    use crate::record::RecordedBudgets;

    /// A transcript of today's format at `path` holding `records` after its run record.
    fn written(path: &Path, records: Vec<Record>) {
        let mut transcript = Transcript::create(path).unwrap();
        transcript.record(run_record());
        for record in records {
            transcript.record(record);
        }
        assert_eq!(transcript.failure(), None);
    }

    fn run_record() -> Record {
        Record::Run {
            format: FORMAT,
            task: "t".to_owned(),
            workspace: "/w".to_owned(),
            context_window: Some(8192),
            verification: None,
            budgets: Some(RecordedBudgets {
                max_steps: 3,
                max_seconds: 60.0,
                max_failed_calls: 5,
                max_tokens: None,
                attempts: 1,
            }),
        }
    }

    #[test]
    fn every_nested_string_is_redacted_and_other_values_kept() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("t.jsonl");
        let mut transcript = Transcript::create(&path)
            .unwrap()
            .with_redactor(Redactor::new().with_secret("hunter2-secret"));
        transcript.record(Record::Tool {
            step: 3,
            id: "call_0".to_owned(),
            tool: "run_command".to_owned(),
            arguments: json!({"argv": ["echo", "hunter2-secret"]}),
            origin: crate::model::CallOrigin::Structured,
            summary: "run_command echo".to_owned(),
            is_error: false,
            may_have_changed_workspace: true,
            result: "TOKEN=abcdef123456".to_owned(),
            seconds: 0.5,
        });
        transcript.record(Record::Nudge {
            step: 3,
            content: "plain hunter2-secret".to_owned(),
        });
        assert_eq!(transcript.path(), path);
        assert_eq!(transcript.failure(), None);
        drop(transcript);

        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("hunter2-secret"), "{text}");
        assert!(!text.contains("abcdef123456"), "{text}");
        let lines = Transcript::read(&path).unwrap();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].t >= 0.0);
        let Record::Tool {
            arguments,
            result,
            step,
            may_have_changed_workspace,
            ..
        } = &lines[0].record
        else {
            panic!("a tool record: {:?}", lines[0]);
        };
        assert_eq!(
            harness_exec::plain_markers(arguments["argv"][1].as_str().unwrap()),
            "[REDACTED]"
        );
        assert_eq!(harness_exec::plain_markers(result), "TOKEN=[REDACTED]");
        assert_eq!((*step, *may_have_changed_workspace), (3, true));
        let Record::Nudge { content, .. } = &lines[1].record else {
            panic!("a nudge: {:?}", lines[1]);
        };
        assert_eq!(harness_exec::plain_markers(content), "plain [REDACTED]");
    }

    #[test]
    fn a_transcript_starts_with_its_format_and_reads_back_as_written() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("t.jsonl");
        let records = vec![
            Record::Message(Message::user("hello")),
            Record::Checkpoint {
                step: 1,
                number: 1,
                label: "step 1".to_owned(),
            },
            Record::CheckpointFailed {
                step: 2,
                error: "disk full".to_owned(),
            },
            Record::Trim { step: 2, elided: 4 },
        ];
        written(&path, records.clone());
        let first: Value = serde_json::from_str(
            std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(first["type"], "run");
        assert_eq!(first["format"], FORMAT);
        let read: Vec<Record> = Transcript::read(&path)
            .unwrap()
            .into_iter()
            .map(|line| line.record)
            .collect();
        assert_eq!(read[0], run_record());
        assert_eq!(read[1..], records[..]);
    }

    #[test]
    fn a_transcript_of_format_1_is_read_with_every_record() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("t.jsonl");
        let fixture = include_str!("../../../fixtures/transcripts/format-1.jsonl");
        std::fs::write(&path, fixture).unwrap();
        let lines = Transcript::read(&path).unwrap();
        let kinds: Vec<&str> = lines.iter().map(|line| line.record.kind()).collect();
        let tags: Vec<String> = fixture
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap()["type"].to_string())
            .map(|tag| tag.trim_matches('"').to_owned())
            .collect();
        assert_eq!(kinds, tags);
        assert!(matches!(lines[0].record, Record::Run { format: 1, .. }));
        assert!(kinds.contains(&"tampered") && kinds.contains(&"verification"));
        let Record::Outcome(report) = &lines.last().unwrap().record else {
            panic!("the last line is the outcome");
        };
        assert_eq!(report.outcome, crate::Outcome::VerificationFailed);
    }

    #[test]
    fn a_failed_checkpoint_of_format_1_reads_as_one() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("t.jsonl");
        let fixture = include_str!("../../../fixtures/transcripts/format-1.jsonl");
        let first = fixture.lines().next().unwrap();
        let failed = r#"{"type":"checkpoint","t":1.0,"step":2,"error":"disk full"}"#;
        std::fs::write(&path, format!("{first}\n{failed}\n")).unwrap();
        let lines = Transcript::read(&path).unwrap();
        assert_eq!(
            lines[1].record,
            Record::CheckpointFailed {
                step: 2,
                error: "disk full".to_owned()
            }
        );
    }

    #[test]
    fn a_newer_format_is_refused_by_name() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("t.jsonl");
        written(&path, Vec::new());
        let text = std::fs::read_to_string(&path).unwrap();
        let newer = text.replacen(
            &format!("\"format\":{FORMAT}"),
            &format!("\"format\":{}", FORMAT + 1),
            1,
        );
        assert_ne!(newer, text);
        std::fs::write(&path, newer).unwrap();
        let error = Transcript::read(&path).unwrap_err();
        assert!(
            matches!(error, TranscriptError::NewerFormat { format, .. } if format == u64::from(FORMAT) + 1),
            "{error}"
        );
        assert!(
            error.to_string().contains("written by a newer harness"),
            "{error}"
        );
    }

    #[test]
    fn a_record_that_does_not_fit_its_type_is_named_with_its_line() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("t.jsonl");
        written(&path, Vec::new());
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"type\":\"checkpoint\",\"t\":1.0,\"step\":1,\"numero\":1}\n");
        text.push_str("{\"t\":1.0}\n");
        std::fs::write(&path, &text).unwrap();
        let error = Transcript::read(&path).unwrap_err();
        assert!(
            matches!(error, TranscriptError::BadRecord { line: 2, ref kind, .. } if kind == "a `checkpoint`"),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .contains("t.jsonl line 2: a `checkpoint` record"),
            "{error}"
        );
        let untyped = text.replace("\"type\":\"checkpoint\",", "");
        std::fs::write(&path, untyped).unwrap();
        let error = Transcript::read(&path).unwrap_err();
        assert!(
            matches!(error, TranscriptError::BadRecord { line: 2, ref kind, .. } if kind == "an untyped"),
            "{error}"
        );
    }

    #[test]
    fn a_line_that_is_not_a_record_is_named() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("t.jsonl");
        written(&path, Vec::new());
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("\n[1]\n");
        std::fs::write(&path, text).unwrap();
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
        transcript.record(run_record());
        let failure = transcript.failure().unwrap().to_owned();
        assert!(
            failure.starts_with("the transcript /dev/full could not be written"),
            "{failure}"
        );
        transcript.record(run_record());
        assert_eq!(transcript.failure(), Some(failure.as_str()));
    }
}
