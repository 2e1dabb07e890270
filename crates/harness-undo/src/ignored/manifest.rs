//! What is recorded of an ignored path: its stat data ([`Stat`]) and, where saved, the
//! blob of its content ([`Entry`]); the [`Manifest`] of one state, keyed by the path's
//! text ([`key`]); and the manifest files in the run's directory in the store, written
//! whole or not at all.

use std::collections::BTreeMap;
use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use git2::Oid;
use serde::{Deserialize, Serialize};

use crate::{Error, paths};

/// What an entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A symbolic link.
    Symlink,
    /// A directory.
    Dir,
    /// A FIFO, socket or device: listed, never saved.
    Special,
}

/// The stat data an entry is compared by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stat {
    /// Its kind.
    pub(crate) kind: Kind,
    /// Size in bytes (0 for a directory).
    pub(crate) size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub(crate) mtime_ns: i64,
    /// Change time (ctime), nanoseconds since the epoch: no command can set it back.
    pub(crate) ctime_ns: i64,
    /// Inode number.
    pub(crate) ino: u64,
    /// Mode bits (permissions and kind).
    pub(crate) mode: u32,
}

impl Stat {
    /// The stat data of `metadata`; a directory's times, inode and mode are left out
    /// (they change whenever an entry inside does).
    pub(super) fn of(metadata: &fs::Metadata) -> Stat {
        let file_type = metadata.file_type();
        let kind = if file_type.is_dir() {
            Kind::Dir
        } else if file_type.is_symlink() {
            Kind::Symlink
        } else if file_type.is_file() {
            Kind::File
        } else {
            Kind::Special
        };
        if kind == Kind::Dir {
            return Stat {
                kind,
                size: 0,
                mtime_ns: 0,
                ctime_ns: 0,
                ino: 0,
                mode: 0,
            };
        }
        imp::stat(kind, metadata)
    }
}

#[cfg(unix)]
mod imp {
    use std::os::unix::fs::MetadataExt;

    use super::{Kind, Stat};

    pub(super) fn stat(kind: Kind, metadata: &std::fs::Metadata) -> Stat {
        let ns = |seconds: i64, nanos: i64| seconds.saturating_mul(1_000_000_000) + nanos;
        Stat {
            kind,
            size: metadata.size(),
            mtime_ns: ns(metadata.mtime(), metadata.mtime_nsec()),
            ctime_ns: ns(metadata.ctime(), metadata.ctime_nsec()),
            ino: metadata.ino(),
            mode: metadata.mode(),
        }
    }
}

// Never compiled where mutation testing runs (Linux): its mutants could not be built.
#[cfg(not(unix))]
#[cfg_attr(test, mutants::skip)]
mod imp {
    use super::{Kind, Stat};

    pub(super) fn stat(kind: Kind, metadata: &std::fs::Metadata) -> Stat {
        let mtime_ns = metadata
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Stat {
            kind,
            size: metadata.len(),
            mtime_ns,
            ctime_ns: mtime_ns,
            ino: 0,
            mode: if metadata.permissions().readonly() {
                0o444
            } else {
                0o644
            },
        }
    }
}

/// One listed path: its stat data and, where saved, its content's blob.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// As listed.
    pub(crate) stat: Stat,
    /// The blob holding its content (a symlink's target), in the store; `None` when not
    /// saved (a directory, too large, over budget, unreadable).
    #[serde(default, with = "hex_option")]
    pub(crate) blob: Option<Oid>,
    /// True if and only if a verification run wrote it (it is in the baseline for the
    /// next check, not in the pre-run manifest).
    #[serde(default)]
    pub(crate) from_check: bool,
}

/// The ignored paths of one state, keyed by their path's bytes as text (see [`key`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    /// Every listed path.
    pub(crate) entries: BTreeMap<String, Entry>,
    /// True if and only if the walk stopped at
    /// [`MOST_LISTED_IGNORED`](crate::MOST_LISTED_IGNORED).
    #[serde(default)]
    pub(crate) truncated: bool,
    /// For the state an undo replaced: the paths the undo changed (those `entries`
    /// lacks were not there, and redo removes them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) touched: Vec<String>,
    /// The store's tree holding the saved blobs, reused by the next manifest that saves
    /// the same ones.
    #[serde(default, with = "hex_option")]
    pub(crate) tree: Option<Oid>,
    /// For the state an undo replaced: the change time (ns) a file written just after
    /// the undo got, past every one the undo wrote. A touched path changed after it is
    /// the user's, and redo leaves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) undone_ns: Option<i64>,
    /// Likewise once a redo put paths back: a later undo counts a path in
    /// [`Manifest::redone`] changed up to this time as the run's (the redo wrote it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) redone_ns: Option<i64>,
    /// The paths that redo put back (not those it left as changed after the undo).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) redone: Vec<String>,
}

/// Which manifest of a run: the files in its directory in the store, and the refs that
/// keep their blobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    /// The ignored files at the start.
    Start,
    /// The baseline of the next verification.
    Check,
    /// What the last undo replaced, for redo.
    Redo,
}

impl Which {
    fn leaf(self) -> &'static str {
        match self {
            Which::Start => "ignored-start",
            Which::Check => "ignored-check",
            Which::Redo => "ignored-redo",
        }
    }
}

/// The text key of `path`: itself when it is UTF-8 and does not start with the escape
/// character U+0001, else that character followed by its bytes in hex.
pub(crate) fn key(path: &Path) -> String {
    match path.to_str() {
        Some(text) if !text.starts_with('\u{1}') => text.to_owned(),
        _ => {
            let bytes = paths::to_bytes(path);
            let mut text = String::from('\u{1}');
            for byte in bytes {
                text.push_str(&format!("{byte:02x}"));
            }
            text
        }
    }
}

/// The path of key `key` (see [`key`]).
pub(crate) fn path_of(key: &str) -> PathBuf {
    match key.strip_prefix('\u{1}') {
        Some(hex) => {
            let bytes: Vec<u8> = hex
                .as_bytes()
                .chunks_exact(2)
                .filter_map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
                .collect();
            paths::from_bytes(&bytes)
        }
        None => PathBuf::from(key),
    }
}

/// The manifest file `which` in run directory `run_dir`.
pub(crate) fn manifest_path(run_dir: &Path, which: Which) -> PathBuf {
    run_dir.join(format!("{}.json", which.leaf()))
}

/// The store's ref that keeps the blobs of manifest `which` of the run whose refs start
/// with `prefix` (`refs/harness/<id>/`).
pub(crate) fn ref_name(prefix: &str, which: Which) -> String {
    format!("{prefix}{}", which.leaf())
}

/// Reads manifest `which` of the run in `run_dir`; `None` when there is none (a run from
/// before manifests, or no verification yet).
pub(crate) fn read(run_dir: &Path, which: Which) -> Result<Option<Manifest>, Error> {
    let path = manifest_path(run_dir, which);
    match fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| Error::io(&path, std::io::Error::new(ErrorKind::InvalidData, e))),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&path, e)),
    }
}

/// Writes manifest `which` of the run in `run_dir`, whole or not at all.
pub(crate) fn write(run_dir: &Path, which: Which, manifest: &Manifest) -> Result<(), Error> {
    let path = manifest_path(run_dir, which);
    let bytes =
        serde_json::to_vec(manifest).map_err(|e| Error::io(&path, std::io::Error::other(e)))?;
    let mut file = tempfile::NamedTempFile::new_in(run_dir).map_err(|e| Error::io(run_dir, e))?;
    file.write_all(&bytes).map_err(|e| Error::io(&path, e))?;
    file.persist(&path).map_err(|e| Error::io(&path, e.error))?;
    Ok(())
}

/// Serializes an optional object id as hex text.
mod hex_option {
    use git2::Oid;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(oid: &Option<Oid>, s: S) -> Result<S::Ok, S::Error> {
        match oid {
            Some(oid) => s.serialize_some(&oid.to_string()),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Oid>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| Oid::from_str(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys are stored in manifests: a UTF-8 path is its own key (so the manifests of stores
    /// written before stay readable), and every path comes back from its key, one that
    /// starts with the escape character or is not UTF-8 included.
    #[test]
    fn a_key_is_the_path_as_text_and_every_path_comes_back_from_its_key() {
        assert_eq!(key(Path::new(".venv/bin/python3")), ".venv/bin/python3");
        let escaped = Path::new("\u{1}41");
        assert_ne!(key(escaped), "\u{1}41", "else it would read back as `A`");
        assert_eq!(path_of(&key(escaped)), escaped);
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let raw = Path::new(std::ffi::OsStr::from_bytes(b"caf\xe9.pyc"));
            assert_eq!(key(raw), "\u{1}636166e92e707963");
            assert_eq!(path_of(&key(raw)), raw);
        }
    }

    #[test]
    fn a_missing_manifest_is_none_and_one_that_cannot_be_read_is_an_error() {
        let run = tempfile::tempdir().unwrap();
        assert_eq!(read(run.path(), Which::Start).unwrap(), None);
        // A directory where the file should be: reading fails, and says so.
        fs::create_dir(manifest_path(run.path(), Which::Start)).unwrap();
        assert!(read(run.path(), Which::Start).is_err());
    }
}
