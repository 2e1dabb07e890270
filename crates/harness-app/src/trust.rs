//! The user's trust of a repository's `harness.toml`, recorded by its exact content.
//!
//! A repository is someone else's code, and so is its `harness.toml`. What a project file
//! may choose on its own is limited (the settings say which keys and why); the rest applies
//! only once the user has run `harness trust` in that workspace, which records the sha256
//! of the file's bytes under the workspace's canonical path in the user's trust file,
//! `$XDG_CONFIG_HOME/harness/trusted.json` (else `~/.config/harness/trusted.json`), mode
//! 0600 in a directory made 0700. Any change to the bytes makes the file untrusted again,
//! as direnv's and mise's `allow` do: the user trusted that content, not whatever the
//! repository (or a command of a run) writes there next.
//!
//! The bytes hashed are the bytes parsed: `settings::load` reads the file once and hands the
//! same buffer to [`digest`] and to the parser, so no file swapped in between is taken for
//! the trusted one. The trust file itself is kept from commands as the user's configuration
//! is (the confinement plan protects both), so a command cannot trust a file for the
//! next run. This module does not decide what trust allows; it only records and answers.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::Error;
use crate::paths;

/// Whether the user trusts a project file's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// `harness trust` recorded exactly this content for this workspace.
    Trusted,
    /// Nothing was recorded for this workspace.
    Untrusted,
    /// Other content was trusted here; this content was not.
    Changed,
}

impl Trust {
    /// True if and only if the content was trusted as it is.
    pub fn is_trusted(self) -> bool {
        self == Trust::Trusted
    }

    /// How the header and `harness trust --show` name the state.
    pub fn describe(self) -> &'static str {
        match self {
            Trust::Trusted => "trusted",
            Trust::Untrusted => "untrusted",
            Trust::Changed => "untrusted: changed since you trusted it",
        }
    }
}

/// What the trust file holds: a workspace's canonical path to the sha256 (hex) of the
/// `harness.toml` content trusted there.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Store {
    trusted: BTreeMap<String, String>,
}

/// The sha256 of `bytes`, in lowercase hex.
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Whether the content whose [`digest`] is `sha256` is trusted in the workspace `root`
/// (canonical).
///
/// # Errors
///
/// A trust file that cannot be read or is not one, named with how to fix it.
pub fn state(root: &Path, sha256: &str) -> Result<Trust, Error> {
    let Some(file) = paths::trust_file() else {
        return Ok(Trust::Untrusted);
    };
    let store = read(&file)?;
    // A root that is not UTF-8 cannot have been recorded (`record` refuses it).
    let Some(key) = root.to_str() else {
        return Ok(Trust::Untrusted);
    };
    Ok(match store.trusted.get(key) {
        Some(recorded) if recorded == sha256 => Trust::Trusted,
        Some(_) => Trust::Changed,
        None => Trust::Untrusted,
    })
}

/// Records that the content whose [`digest`] is `sha256` is trusted in `root` (canonical),
/// in place of whatever was trusted there before. Returns the trust file.
///
/// # Errors
///
/// No home directory, a root that is not UTF-8, or a trust file that cannot be read or
/// written.
pub fn record(root: &Path, sha256: &str) -> Result<PathBuf, Error> {
    let file = paths::trust_file().ok_or(Error::NoConfigDirectory)?;
    let key = root.to_str().ok_or_else(|| Error::RootNotUtf8 {
        root: root.to_owned(),
    })?;
    let mut store = read(&file)?;
    store.trusted.insert(key.to_owned(), sha256.to_owned());
    write(&file, &store)?;
    Ok(file)
}

/// Forgets the trust recorded for `root`; true if and only if there was one.
///
/// # Errors
///
/// A trust file that cannot be read or written.
pub fn revoke(root: &Path) -> Result<bool, Error> {
    let Some(file) = paths::trust_file() else {
        return Ok(false);
    };
    let mut store = read(&file)?;
    let removed = root
        .to_str()
        .is_some_and(|key| store.trusted.remove(key).is_some());
    if removed {
        write(&file, &store)?;
    }
    Ok(removed)
}

/// The trust file's records; none when there is no file.
fn read(file: &Path) -> Result<Store, Error> {
    let text = match fs::read_to_string(file) {
        Ok(text) => text,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Store::default()),
        Err(source) => {
            return Err(Error::Read {
                path: file.to_owned(),
                source,
            });
        }
    };
    serde_json::from_str(&text).map_err(|error| Error::NotATrustFile {
        file: file.to_owned(),
        message: error.to_string(),
    })
}

/// Writes `store` to `file`, mode 0600, by renaming a new file over it, in a directory made
/// 0700 if it is made here: no reader sees half a file, and no other user reads it.
fn write(file: &Path, store: &Store) -> Result<(), Error> {
    // A file of [`paths::trust_file`] is always in a directory; `.` stands for none.
    let directory = file.parent().unwrap_or(Path::new("."));
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(directory)
        .map_err(|source| Error::Create {
            path: directory.to_owned(),
            source,
        })?;
    let text = serde_json::to_string_pretty(store).map_err(|source| Error::Json {
        what: "the trust file is JSON",
        source,
    })?;
    let temporary = directory.join(format!(".trusted.json.{}", std::process::id()));
    let result = (|| -> io::Result<()> {
        let mut out = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary)?;
        out.write_all(text.as_bytes())?;
        out.write_all(b"\n")?;
        out.sync_all()?;
        fs::rename(&temporary, file)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result.map_err(|source| Error::Write {
        path: file.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_sha256_in_hex() {
        assert_eq!(
            digest(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_trust_file_round_trips_private_and_a_bad_one_is_named() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("conf/harness/trusted.json");
        let mut store = Store::default();
        store.trusted.insert("/w".into(), "ab".into());
        write(&file, &store).unwrap();
        let mode = |path: &Path| {
            use std::os::unix::fs::PermissionsExt;
            fs::metadata(path).unwrap().permissions().mode() & 0o777
        };
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(file.parent().unwrap()), 0o700);
        assert_eq!(read(&file).unwrap().trusted["/w"], "ab");
        fs::write(&file, "not json").unwrap();
        let error = read(&file).unwrap_err().to_string();
        assert!(error.contains("is not a trust file"), "{error}");
        assert!(error.contains(&file.display().to_string()), "{error}");
    }
}
