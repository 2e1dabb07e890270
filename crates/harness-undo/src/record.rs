//! Run metadata: the `run.json` of each run directory under `harness/runs/` in
//! the workspace's store,
//! and how runs are reserved and listed.

use std::fmt;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use git2::Oid;
use serde::{Deserialize, Serialize};

use crate::{Error, RunId};

/// What is known about one run, as [`Session::runs`](crate::Session::runs) lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunInfo {
    /// The run's id.
    pub id: RunId,
    /// The task the agent was given.
    pub task: String,
    /// The model that ran it.
    pub model: String,
    /// When [`Session::begin`](crate::Session::begin) recorded the run.
    pub started_at: SystemTime,
    /// When [`Session::finish`](crate::Session::finish) was called; `None` while
    /// the run is going on, or if it was abandoned (the process died).
    pub ended_at: Option<SystemTime>,
    /// How the run ended, if it was finished.
    pub outcome: Option<Outcome>,
    /// How many steps the agent took, if the run was finished.
    pub steps: Option<u32>,
    /// HEAD when the run began.
    pub head: CommitId,
    /// The pre-run state: `head` itself when the tree was clean, or else a
    /// snapshot commit of the working tree (see [`dirty`](Self::dirty)).
    pub pre_run: CommitId,
    /// True if and only if the run began on a dirty tree (`allow_dirty`), so
    /// that the pre-run state includes uncommitted work and a recorded index.
    pub dirty: bool,
    /// True if and only if the run's last restore was an undo, so that
    /// [`Session::redo`](crate::Session::redo) can bring its work back.
    pub undone: bool,
    /// The commit [`Session::accept`](crate::Session::accept) made, if any.
    pub accepted: Option<CommitId>,
    /// The run's directory, `harness/runs/<id>/` in the store; it holds `run.json`
    /// and the agent's transcript.
    pub dir: PathBuf,
    /// The run this one follows in a chain ([`BeginOptions::follows`]), if any.
    ///
    /// [`BeginOptions::follows`]: crate::BeginOptions::follows
    pub parent: Option<RunId>,
    /// True if and only if the run follows another and the working tree it began on
    /// differed from how that run left it: the user's own edits, which the pre-run state
    /// holds and which are theirs, not this run's.
    pub user_edits: bool,
}

/// How a run ended, as the agent reports it to [`Session::finish`](crate::Session::finish).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The verification command exited 0.
    Succeeded,
    /// The agent finished, but verification failed or the agent gave up.
    Failed,
    /// A budget ran out, the user stopped the run, or an error ended it.
    Interrupted,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Failed => "failed",
            Outcome::Interrupted => "interrupted",
        })
    }
}

/// The id of a git commit (40 hexadecimal digits when displayed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CommitId(pub(crate) Oid);

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// The name of the metadata file in a run directory.
pub(crate) const METADATA_FILE: &str = "run.json";

/// The version of the `run.json` layout this crate writes and reads.
const FORMAT: u32 = 1;

/// A recorded state of the working tree and index: what undo and redo restore.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct State {
    /// The commit that keeps the state reachable (its tree is `tree`).
    #[serde(with = "hex")]
    pub(crate) commit: Oid,
    /// The working tree.
    #[serde(with = "hex")]
    pub(crate) tree: Oid,
    /// The index.
    #[serde(with = "hex")]
    pub(crate) index_tree: Oid,
    /// HEAD at the time.
    #[serde(with = "hex")]
    pub(crate) head: Oid,
}

/// The content of `run.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunRecord {
    /// Layout version, [`FORMAT`].
    pub(crate) format: u32,
    /// The run's id.
    pub(crate) id: RunId,
    /// The task.
    pub(crate) task: String,
    /// The model.
    pub(crate) model: String,
    /// Start, in milliseconds since the Unix epoch.
    pub(crate) started_ms: u64,
    /// End, in milliseconds since the Unix epoch.
    pub(crate) ended_ms: Option<u64>,
    /// How the run ended.
    pub(crate) outcome: Option<Outcome>,
    /// Steps taken.
    pub(crate) steps: Option<u32>,
    /// The pre-run state; its `commit` is HEAD itself when the tree was clean.
    pub(crate) pre: State,
    /// Whether the pre-run state includes uncommitted work.
    pub(crate) dirty: bool,
    /// The state the last undo replaced, which redo brings back.
    pub(crate) redo: Option<State>,
    /// Whether the last restore was an undo.
    pub(crate) undone: bool,
    /// The commit made by accept.
    #[serde(with = "hex_option")]
    pub(crate) accepted: Option<Oid>,
    /// Ignored paths the file tools wrote, whose prior content (or absence)
    /// the pre-run state holds; every snapshot records them.
    #[serde(default)]
    pub(crate) ignored: Vec<String>,
    /// The end as the workspace's file system stamps a file (ctime, ns since the epoch),
    /// read from one written in `.git` at finish: a file system whose clock leads this
    /// machine's (a network one) stamps the run's files past `ended_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ended_stamp_ns: Option<i64>,
    /// The run this one follows in a chain, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) parent: Option<RunId>,
    /// The working tree the parent left (its end, as recorded when this run began): where
    /// the pre-run state differs from it, the difference is the user's own edits.
    #[serde(default, with = "hex_option", skip_serializing_if = "Option::is_none")]
    pub(crate) parent_end: Option<Oid>,
}

impl RunRecord {
    /// The public view of the record of the run stored in `dir`.
    pub(crate) fn info(&self, dir: &Path) -> RunInfo {
        RunInfo {
            id: self.id.clone(),
            task: self.task.clone(),
            model: self.model.clone(),
            started_at: time(self.started_ms),
            ended_at: self.ended_ms.map(time),
            outcome: self.outcome,
            steps: self.steps,
            head: CommitId(self.pre.head),
            pre_run: CommitId(self.pre.commit),
            dirty: self.dirty,
            undone: self.undone,
            accepted: self.accepted.map(CommitId),
            dir: dir.to_path_buf(),
            parent: self.parent.clone(),
            user_edits: self.parent_end.is_some_and(|end| end != self.pre.tree),
        }
    }
}

/// The run directories of one workspace: `harness/runs/` in its store (see
/// [`crate::store`]).
#[derive(Clone, Debug)]
pub(crate) struct Runs {
    /// `<store>/harness/runs`.
    runs: PathBuf,
}

impl Runs {
    /// The run directories kept in the directory `base`.
    pub(crate) fn new(base: &Path) -> Runs {
        Runs {
            runs: base.join("harness").join("runs"),
        }
    }

    /// The directory of run `id`.
    pub(crate) fn run_dir(&self, id: &RunId) -> PathBuf {
        self.runs.join(id.as_str())
    }

    /// Creates the directory of a new run and returns its id: the id for `now`,
    /// or the first free one after every existing run.
    ///
    /// Creating the directory is the reservation: two processes that pick the
    /// same millisecond cannot both create it, and the loser moves on.
    pub(crate) fn reserve(&self, now: SystemTime) -> Result<RunId, Error> {
        crate::private::create_dir(&self.runs).map_err(|e| Error::io(&self.runs, e))?;
        let mut newest = self.ids()?.pop();
        // Each try moves one millisecond on; a thousand taken in a row means
        // something other than runs is filling the directory.
        for _ in 0..1000 {
            let id = RunId::next(now, newest.as_ref());
            let dir = self.run_dir(&id);
            match fs::create_dir(&dir) {
                Ok(()) => {
                    crate::private::set_private(&dir).map_err(|e| Error::io(&dir, e))?;
                    return Ok(id);
                }
                Err(e) => {
                    if e.kind() != ErrorKind::AlreadyExists {
                        return Err(Error::io(&dir, e));
                    }
                    newest = Some(id);
                }
            }
        }
        Err(Error::io(&self.runs, ErrorKind::AlreadyExists.into()))
    }

    /// Removes the directory of a run whose begin failed.
    pub(crate) fn release(&self, id: &RunId) {
        // Best effort: the run has no metadata, so it is not listed either way.
        let _ = fs::remove_dir_all(self.run_dir(id));
    }

    /// The ids of every run directory, oldest first. Other entries, files
    /// included, are not runs.
    fn ids(&self) -> Result<Vec<RunId>, Error> {
        if !self.runs.exists() {
            return Ok(Vec::new());
        }
        let entries = fs::read_dir(&self.runs).map_err(|e| Error::io(&self.runs, e))?;
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&self.runs, e))?;
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if let Some(id) = entry.file_name().to_str().and_then(|n| n.parse().ok())
                && is_dir
            {
                ids.push(id);
            }
        }
        ids.sort();
        Ok(ids)
    }

    /// Every run with metadata, oldest first. A directory without `run.json` is a
    /// begin that failed or was killed before it recorded anything; it is skipped.
    pub(crate) fn list(&self) -> Result<Vec<RunInfo>, Error> {
        let mut runs = Vec::new();
        for id in self.ids()? {
            if let Some(record) = self.find(&id)? {
                runs.push(record.info(&self.run_dir(&id)));
            }
        }
        Ok(runs)
    }

    /// The record of every run that has one, oldest first.
    pub(crate) fn records(&self) -> Result<Vec<RunRecord>, Error> {
        let mut records = Vec::new();
        for id in self.ids()? {
            records.extend(self.find(&id)?);
        }
        Ok(records)
    }

    /// Reads the record of run `id`; `None` if it has none.
    pub(crate) fn find(&self, id: &RunId) -> Result<Option<RunRecord>, Error> {
        if self.run_dir(id).join(METADATA_FILE).exists() {
            self.read(id).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Reads the record of run `id`.
    fn read(&self, id: &RunId) -> Result<RunRecord, Error> {
        let path = self.run_dir(id).join(METADATA_FILE);
        let bytes = fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let record: RunRecord = serde_json::from_slice(&bytes).map_err(|e| Error::Metadata {
            path: path.clone(),
            detail: e.to_string(),
        })?;
        if record.format != FORMAT {
            return Err(Error::Metadata {
                path,
                detail: format!(
                    "format {} is not the {FORMAT} this version reads; a newer harness wrote it",
                    record.format
                ),
            });
        }
        if record.id != *id {
            return Err(Error::Metadata {
                path,
                detail: format!("it describes run {}", record.id),
            });
        }
        Ok(record)
    }

    /// Writes the record of its run, replacing the old one atomically.
    pub(crate) fn write(&self, record: &RunRecord) -> Result<(), Error> {
        let dir = self.run_dir(&record.id);
        let path = dir.join(METADATA_FILE);
        let partial = dir.join("run.json.partial");
        let mut json = serde_json::to_vec_pretty(record).map_err(|e| Error::Metadata {
            path: path.clone(),
            detail: e.to_string(),
        })?;
        json.push(b'\n');
        fs::write(&partial, json).map_err(|e| Error::io(&partial, e))?;
        crate::private::set_private(&partial).map_err(|e| Error::io(&partial, e))?;
        // The rename replaces the file whole, so a reader (or a crash) never
        // sees half a record.
        fs::rename(&partial, &path).map_err(|e| Error::io(&path, e))
    }
}

/// A new record in the current [`FORMAT`].
pub(crate) fn new_record(
    id: RunId,
    task: String,
    model: String,
    started: SystemTime,
    pre: State,
    dirty: bool,
) -> RunRecord {
    RunRecord {
        format: FORMAT,
        id,
        task,
        model,
        started_ms: crate::run_id::unix_millis(started),
        ended_ms: None,
        outcome: None,
        steps: None,
        pre,
        dirty,
        redo: None,
        undone: false,
        accepted: None,
        ignored: Vec::new(),
        ended_stamp_ns: None,
        parent: None,
        parent_end: None,
    }
}

/// The instant `ms` milliseconds after the Unix epoch.
pub(crate) fn time_of(ms: u64) -> SystemTime {
    time(ms)
}

fn time(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

/// Serde for an [`Oid`] as hexadecimal text.
mod hex {
    use git2::Oid;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(oid: &Oid, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&oid.to_string())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Oid, D::Error> {
        let text = String::deserialize(deserializer)?;
        Oid::from_str(&text).map_err(|e| serde::de::Error::custom(e.message()))
    }
}

/// Serde for an optional [`Oid`] as hexadecimal text or null.
mod hex_option {
    use git2::Oid;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        oid: &Option<Oid>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match oid {
            Some(oid) => super::hex::serialize(oid, serializer),
            None => serializer.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Oid>, D::Error> {
        Option::<String>::deserialize(deserializer)?
            .map(|text| Oid::from_str(&text).map_err(|e| serde::de::Error::custom(e.message())))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(byte: u8) -> Oid {
        Oid::from_bytes(&[byte; 20]).unwrap()
    }

    fn state(byte: u8) -> State {
        State {
            commit: oid(byte),
            tree: oid(byte + 1),
            index_tree: oid(byte + 2),
            head: oid(byte + 3),
        }
    }

    fn record(id: &RunId) -> RunRecord {
        new_record(
            id.clone(),
            "fix the test".into(),
            "qwen".into(),
            UNIX_EPOCH + Duration::from_millis(1_234),
            state(1),
            true,
        )
    }

    #[test]
    fn records_round_trip_through_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = Runs::new(dir.path());
        let id = store.reserve(SystemTime::now()).unwrap();
        let mut rec = record(&id);
        rec.redo = Some(state(9));
        rec.accepted = Some(oid(7));
        rec.outcome = Some(Outcome::Failed);
        store.write(&rec).unwrap();
        assert_eq!(store.find(&id).unwrap(), Some(rec.clone()));
        let listed = store.list().unwrap();
        assert_eq!(listed, vec![rec.info(&store.run_dir(&id))]);
        let info = &listed[0];
        assert_eq!(info.started_at, UNIX_EPOCH + Duration::from_millis(1_234));
        assert_eq!(info.pre_run, CommitId(oid(1)));
        assert_eq!(info.head, CommitId(oid(4)));
        assert_eq!(info.accepted, Some(CommitId(oid(7))));
        assert!(info.dirty);
        assert!(
            !dir.path()
                .join("harness/runs")
                .join(id.as_str())
                .join("run.json.partial")
                .exists()
        );
    }

    #[test]
    fn reserve_hands_out_unique_ids_in_order_even_for_one_instant() {
        let dir = tempfile::tempdir().unwrap();
        let store = Runs::new(dir.path());
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let ids: Vec<RunId> = (0..5).map(|_| store.reserve(now).unwrap()).collect();
        let expected: Vec<RunId> = (0..5)
            .map(|i| RunId::from_unix_millis(1_700_000_000_000 + i))
            .collect();
        assert_eq!(ids, expected);
        // A clock that went backwards still gets an id after the newest.
        let earlier = store.reserve(UNIX_EPOCH).unwrap();
        assert_eq!(earlier, RunId::from_unix_millis(1_700_000_000_005));
    }

    #[test]
    fn reserve_steps_over_a_name_that_is_taken_without_being_a_run() {
        let dir = tempfile::tempdir().unwrap();
        let store = Runs::new(dir.path());
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let taken = RunId::from_unix_millis(1_700_000_000_000);
        fs::create_dir_all(dir.path().join("harness/runs")).unwrap();
        fs::write(
            store.run_dir(&taken),
            "a file, as another process might leave",
        )
        .unwrap();
        assert!(store.list().unwrap().is_empty());
        assert_eq!(
            store.reserve(now).unwrap(),
            RunId::from_unix_millis(1_700_000_000_001)
        );
    }

    #[test]
    fn reserve_gives_up_after_a_thousand_taken_names() {
        let dir = tempfile::tempdir().unwrap();
        let store = Runs::new(dir.path());
        fs::create_dir_all(dir.path().join("harness/runs")).unwrap();
        for ms in 0..1000 {
            fs::write(store.run_dir(&RunId::from_unix_millis(ms)), "").unwrap();
        }
        let err = store.reserve(UNIX_EPOCH).unwrap_err();
        assert!(
            matches!(&err, Error::Io { source, .. } if source.kind() == ErrorKind::AlreadyExists),
            "{err}"
        );
    }

    #[test]
    fn reserve_reports_an_unwritable_store() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("harness"), "a file, not a directory").unwrap();
        let err = Runs::new(dir.path())
            .reserve(SystemTime::now())
            .unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
    }

    #[test]
    fn listing_skips_runs_without_metadata_and_foreign_names() {
        let dir = tempfile::tempdir().unwrap();
        let store = Runs::new(dir.path());
        let kept = store.reserve(SystemTime::now()).unwrap();
        store.write(&record(&kept)).unwrap();
        let _unrecorded = store.reserve(SystemTime::now()).unwrap();
        fs::create_dir(dir.path().join("harness/runs/not-a-run")).unwrap();
        let ids: Vec<RunId> = store.list().unwrap().into_iter().map(|r| r.id).collect();
        assert_eq!(ids, vec![kept]);
    }

    #[test]
    fn a_store_that_is_not_a_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("harness")).unwrap();
        fs::write(dir.path().join("harness/runs"), "a file").unwrap();
        let err = Runs::new(dir.path()).list().unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
    }

    #[test]
    fn unreadable_metadata_is_an_error_not_an_unknown_run() {
        let dir = tempfile::tempdir().unwrap();
        let store = Runs::new(dir.path());
        let id = store.reserve(SystemTime::now()).unwrap();
        fs::create_dir(store.run_dir(&id).join(METADATA_FILE)).unwrap();
        let err = store.find(&id).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
    }

    #[test]
    fn listing_an_absent_store_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Runs::new(dir.path()).list().unwrap().is_empty());
    }

    #[test]
    fn release_removes_the_reservation() {
        let dir = tempfile::tempdir().unwrap();
        let store = Runs::new(dir.path());
        let id = store.reserve(SystemTime::now()).unwrap();
        store.release(&id);
        assert!(!store.run_dir(&id).exists());
    }

    #[test]
    fn find_of_an_unknown_run_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let id = RunId::from_unix_millis(0);
        assert_eq!(Runs::new(dir.path()).find(&id).unwrap(), None);
    }

    #[test]
    fn bad_metadata_is_named_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let store = Runs::new(dir.path());
        let id = store.reserve(SystemTime::now()).unwrap();
        let path = store.run_dir(&id).join(METADATA_FILE);
        let cases = [
            ("{ not json".to_string(), "key must be a string"),
            (
                serde_json::to_string(&RunRecord {
                    format: 2,
                    ..record(&id)
                })
                .unwrap(),
                "format 2 is not the 1",
            ),
            (
                serde_json::to_string(&record(&RunId::from_unix_millis(0))).unwrap(),
                "describes run 19700101-000000-000",
            ),
        ];
        for (content, detail) in cases {
            fs::write(&path, content).unwrap();
            let err = store.find(&id).unwrap_err();
            assert!(
                matches!(&err, Error::Metadata { path: p, detail: d } if *p == path && d.contains(detail)),
                "{err}"
            );
            assert!(store.list().is_err());
        }
    }

    #[test]
    fn outcomes_display_as_their_serialized_names() {
        for outcome in [Outcome::Succeeded, Outcome::Failed, Outcome::Interrupted] {
            let json = serde_json::to_string(&outcome).unwrap();
            assert_eq!(json, format!("\"{outcome}\""));
        }
    }

    #[test]
    fn commit_ids_display_in_full() {
        assert_eq!(CommitId(oid(0xab)).to_string(), "ab".repeat(20));
    }
}
