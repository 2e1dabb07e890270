//! A task on a real project: a pinned release fetched from its package registry, checked
//! by its SHA-256, unpacked, committed pristine, and given its bug by the task's patch.
//!
//! ```text
//! fixtures/tasks-real/<id>/task.json   the manifest, with a `source` naming the release
//! fixtures/tasks-real/<id>/bug.patch   the bug, a unified diff against the release
//! fixtures/tasks-real/<id>/holdout/    hidden checks, as for the small tasks
//! ```
//!
//! Archives are kept under `~/.cache/harness/eval-sources/` (`$XDG_CACHE_HOME/harness/…`
//! when set), so a second run needs no network. The prepared tree is a git repository
//! whose one commit is the pristine release and whose working tree holds the bug; a job
//! copies the working tree into a fresh repository (see `job::fresh_repository`), so the
//! agent finds the bug in its `HEAD`, as a user would, with no history that shows the fix.

use std::env;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use ureq::tls::{RootCerts, TlsConfig};

use super::task::Task;

/// The registries a release may come from: those this project's machines reach.
const REGISTRIES: &[&str] = &["pypi", "crates.io", "npm"];

/// Where a task's project comes from: one release of one package, pinned by its archive's
/// digest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Source {
    /// `pypi`, `crates.io` or `npm`.
    pub(crate) registry: String,
    /// The package's name in the registry.
    pub(crate) package: String,
    /// The release.
    pub(crate) version: String,
    /// The archive's address: the registry's file (a `.tar.gz`, `.crate` or `.tgz`).
    pub(crate) url: String,
    /// The archive's SHA-256, in hex; checked before the archive is used.
    pub(crate) sha256: String,
    /// The directory inside the archive that holds the project (`idna-3.21`).
    pub(crate) root: String,
    /// A command run in the unpacked project before its first commit, to fetch what its
    /// tests need (`cargo fetch`), so the verification runs offline.
    #[serde(default)]
    pub(crate) fetch: Option<String>,
}

impl Source {
    /// Checks what can be checked without the network: a known registry, an https address
    /// whose file name names the package and version, a digest that is 64 hex digits, a
    /// plain directory name.
    pub(crate) fn check(&self) -> Result<()> {
        ensure!(
            REGISTRIES.contains(&self.registry.as_str()),
            "unknown registry {:?}: use one of {REGISTRIES:?}",
            self.registry
        );
        ensure!(
            self.url.starts_with("https://"),
            "the source's url {:?} is not https",
            self.url
        );
        let file = self.file_name();
        ensure!(
            file.contains(&self.package) && file.contains(&self.version),
            "the archive {file:?} does not name {} {}",
            self.package,
            self.version
        );
        ensure!(
            self.sha256.len() == 64 && self.sha256.bytes().all(|b| b.is_ascii_hexdigit()),
            "the source's sha256 {:?} is not 64 hex digits",
            self.sha256
        );
        ensure!(
            !self.root.is_empty() && !self.root.contains('/') && !self.root.starts_with('.'),
            "the source's root {:?} is not a directory name",
            self.root
        );
        Ok(())
    }

    /// The archive's file name: the last part of its address.
    fn file_name(&self) -> &str {
        self.url.rsplit('/').next().unwrap_or(&self.url)
    }

    /// Where the archive is kept in `cache`: by registry, so two registries' files of the
    /// same name stay apart.
    pub(crate) fn cached(&self, cache: &Path) -> PathBuf {
        cache.join(&self.registry).join(self.file_name())
    }
}

/// Why an archive could not be had.
#[derive(Debug)]
pub(crate) enum FetchError {
    /// The registry could not be reached and no copy is cached: the network is not there.
    Unreachable(String),
    /// Anything else: a digest that does not match, a file that cannot be written.
    Other(anyhow::Error),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Unreachable(why) => f.write_str(why),
            FetchError::Other(error) => write!(f, "{error:#}"),
        }
    }
}

impl std::error::Error for FetchError {}

/// The cache of archives: `$XDG_CACHE_HOME/harness/eval-sources` or
/// `~/.cache/harness/eval-sources`.
pub(crate) fn cache_dir() -> Result<PathBuf> {
    crate::local_model::cache_dir(env::var_os("XDG_CACHE_HOME"), env::var_os("HOME"))
        .map(|cache| cache.join("eval-sources"))
}

/// The archive of `source`, from `cache` when a copy is there, else downloaded into it;
/// either way its SHA-256 is checked before it is returned.
pub(crate) fn archive(source: &Source, cache: &Path) -> Result<PathBuf, FetchError> {
    let path = source.cached(cache);
    if !path.is_file() {
        download(source, &path)?;
    }
    check_digest(&path, &source.sha256).map_err(FetchError::Other)?;
    Ok(path)
}

/// Prepares a task with a source in `into/<id>`: the release unpacked, its dependencies
/// fetched, committed pristine, and the task's patch applied to the working tree. Returns
/// the task with its `repo` there, its protected files checked. A task without a source
/// is returned as it is.
pub(crate) fn prepare(task: &Task, cache: &Path, into: &Path) -> Result<Task> {
    let (Some(source), Some(patch)) = (&task.manifest.source, &task.patch) else {
        return Ok(task.clone());
    };
    let id = &task.manifest.id;
    let archive = archive(source, cache).with_context(|| format!("the source of {id}"))?;
    let tree = into.join(id);
    pristine(source, &archive, &tree).with_context(|| format!("preparing {id}"))?;
    git(&tree, &["apply", "--whitespace=nowarn"], Some(patch))
        .with_context(|| format!("{id}: applying {}", patch.display()))?;
    let mut prepared = task.clone();
    prepared.repo = tree;
    for file in &task.manifest.protected {
        ensure!(
            prepared.repo.join(file).is_file(),
            "{id}: the protected file {file:?} is not in {} {}",
            source.package,
            source.version
        );
    }
    Ok(prepared)
}

/// Runs git with `args` in `tree`, `stdin` read from a file if given.
pub(crate) fn git(tree: &Path, args: &[&str], stdin: Option<&Path>) -> Result<()> {
    let mut command = Command::new("git");
    command.arg("-C").arg(tree).args(args);
    if let Some(path) = stdin {
        command.stdin(File::open(path).with_context(|| format!("opening {}", path.display()))?);
    }
    run(&mut command, &format!("git {}", args.join(" ")))
}

fn download(source: &Source, path: &Path) -> Result<(), FetchError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .tls_config(
            TlsConfig::builder()
                .root_certs(RootCerts::PlatformVerifier)
                .build(),
        )
        .timeout_connect(Some(Duration::from_secs(20)))
        .timeout_per_read(Some(Duration::from_secs(60)))
        .build()
        .into();
    let response = agent.get(&source.url).call().map_err(|error| match error {
        ureq::Error::StatusCode(_) => FetchError::Other(anyhow::anyhow!(
            "downloading {} {} from {}: {error}",
            source.package,
            source.version,
            source.url
        )),
        _ => FetchError::Unreachable(format!(
            "{} {} is not in the cache and {} cannot be reached: {error}",
            source.package, source.version, source.url
        )),
    })?;
    let other = |error: io::Error, what: &str| {
        FetchError::Other(anyhow::Error::new(error).context(format!("{what} {}", path.display())))
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|error| other(error, "creating the directory of"))?;
    }
    // Downloaded beside its place and renamed, so an interrupted download leaves no
    // archive behind that looks whole.
    let partial = path.with_extension("download");
    let mut file = File::create(&partial).map_err(|error| other(error, "creating"))?;
    io::copy(&mut response.into_body().into_reader(), &mut file)
        .map_err(|error| other(error, "downloading into"))?;
    check_digest(&partial, &source.sha256).map_err(|error| {
        let _ = fs::remove_file(&partial);
        FetchError::Other(error)
    })?;
    fs::rename(&partial, path).map_err(|error| other(error, "renaming the download to"))?;
    Ok(())
}

/// Fails unless the file at `path` has the SHA-256 `expected` (hex, any case).
fn check_digest(path: &Path, expected: &str) -> Result<()> {
    let mut hasher = Sha256::new();
    let mut file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    io::copy(&mut file, &mut hasher).with_context(|| format!("reading {}", path.display()))?;
    let digest: String = hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    if !digest.eq_ignore_ascii_case(expected) {
        bail!(
            "{} has sha256 {digest}, but the task pins {expected}: the archive is not the \
             release the task was made from (delete it to download it again)",
            path.display()
        );
    }
    Ok(())
}

/// Unpacks `archive` into `tree` (replacing what is there), runs the source's fetch
/// command, and commits the result as a fresh git repository's first commit.
fn pristine(source: &Source, archive: &Path, tree: &Path) -> Result<()> {
    if tree.exists() {
        fs::remove_dir_all(tree).with_context(|| format!("removing {}", tree.display()))?;
    }
    let unpacked = tree.with_extension("unpacking");
    if unpacked.exists() {
        fs::remove_dir_all(&unpacked)?;
    }
    fs::create_dir_all(&unpacked)?;
    // Not the archive's owners: as root, tar would keep them, and git refuses to work in
    // a repository another user owns.
    run(
        Command::new("tar")
            .arg("--no-same-owner")
            .arg("-xzf")
            .arg(archive)
            .arg("-C")
            .arg(&unpacked),
        "tar",
    )?;
    let root = unpacked.join(&source.root);
    ensure!(
        root.is_dir(),
        "{} has no directory {:?}",
        archive.display(),
        source.root
    );
    fs::rename(&root, tree).with_context(|| format!("moving {}", root.display()))?;
    fs::remove_dir_all(&unpacked)?;
    if let Some(fetch) = &source.fetch {
        let argv = shell_words::split(fetch).with_context(|| format!("splitting {fetch:?}"))?;
        let (program, args) = argv.split_first().context("the fetch command is empty")?;
        run(
            Command::new(program).args(args).current_dir(tree),
            fetch.as_str(),
        )?;
    }
    git(tree, &["init", "--quiet"], None)?;
    git(tree, &["add", "--all"], None)?;
    git(
        tree,
        &[
            "-c",
            "user.name=harness eval",
            "-c",
            "user.email=eval@localhost",
            "commit",
            "--quiet",
            "--no-verify",
            "-m",
            "The release, as published",
        ],
        None,
    )
}

/// Runs `command`, its output shown only when it fails.
fn run(command: &mut Command, what: &str) -> Result<()> {
    let output = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("running {what}"))?;
    ensure!(
        output.status.success(),
        "{what} failed ({}): {}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(url: &str, sha256: &str) -> Source {
        Source {
            registry: "pypi".into(),
            package: "demo".into(),
            version: "1.0".into(),
            url: url.into(),
            sha256: sha256.into(),
            root: "demo-1.0".into(),
            fetch: None,
        }
    }

    const DIGEST: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

    #[test]
    fn a_source_is_checked_before_any_download() {
        let good = source("https://files.example/demo-1.0.tar.gz", DIGEST);
        good.check().unwrap();
        let cases = [
            (
                Source {
                    registry: "maven".into(),
                    ..good.clone()
                },
                "unknown registry",
            ),
            (
                source("http://files.example/demo-1.0.tar.gz", DIGEST),
                "not https",
            ),
            (
                source("https://files.example/other-2.0.tar.gz", DIGEST),
                "does not name demo 1.0",
            ),
            (
                source("https://files.example/demo-1.0.tar.gz", "abc"),
                "not 64 hex digits",
            ),
            (
                Source {
                    root: "../up".into(),
                    ..good.clone()
                },
                "not a directory name",
            ),
        ];
        for (source, says) in cases {
            let error = source.check().unwrap_err().to_string();
            assert!(error.contains(says), "{source:?}: {error}");
        }
    }

    #[test]
    fn a_cached_archive_is_used_without_the_network_and_a_wrong_digest_is_a_clear_error() {
        let cache = tempfile::tempdir().unwrap();
        // An address nothing answers: the cached copy must be enough.
        let pinned = source("https://127.0.0.1:9/demo-1.0.tar.gz", DIGEST);
        let path = pinned.cached(cache.path());
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "hello").unwrap();
        assert_eq!(archive(&pinned, cache.path()).unwrap(), path);

        fs::write(&path, "hello, tampered").unwrap();
        let error = archive(&pinned, cache.path()).unwrap_err();
        assert!(matches!(error, FetchError::Other(_)), "{error:?}");
        let message = error.to_string();
        assert!(
            message.contains("but the task pins") && message.contains(DIGEST),
            "{message}"
        );
    }

    #[test]
    fn an_unreachable_registry_without_a_cached_copy_is_told_apart() {
        let cache = tempfile::tempdir().unwrap();
        let pinned = source("https://127.0.0.1:9/demo-1.0.tar.gz", DIGEST);
        let error = archive(&pinned, cache.path()).unwrap_err();
        assert!(matches!(error, FetchError::Unreachable(_)), "{error:?}");
        assert!(
            !pinned.cached(cache.path()).exists(),
            "nothing is left that looks whole"
        );
    }

    #[test]
    fn a_prepared_task_has_its_release_committed_and_its_bug_in_the_working_tree() {
        let dir = tempfile::tempdir().unwrap();
        // A release made here: an archive with a root directory, as a registry's is.
        let release = dir.path().join("release/demo-1.0");
        fs::create_dir_all(&release).unwrap();
        fs::write(release.join("demo.py"), "def one():\n    return 1\n").unwrap();
        fs::write(release.join("test_demo.py"), "import demo\n").unwrap();
        let cache = dir.path().join("cache");
        let mut pinned = source("https://127.0.0.1:9/demo-1.0.tar.gz", DIGEST);
        let path = pinned.cached(&cache);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let status = Command::new("tar")
            .arg("-czf")
            .arg(&path)
            .arg("-C")
            .arg(dir.path().join("release"))
            .arg("demo-1.0")
            .status()
            .unwrap();
        assert!(status.success());
        let mut hasher = Sha256::new();
        hasher.update(fs::read(&path).unwrap());
        pinned.sha256 = hasher
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();

        let task_dir = dir.path().join("tasks/demo");
        fs::create_dir_all(task_dir.join("holdout")).unwrap();
        fs::write(
            task_dir.join("bug.patch"),
            "--- a/demo.py\n+++ b/demo.py\n@@ -1,2 +1,2 @@\n def one():\n-    return 1\n+    return 2\n",
        )
        .unwrap();
        let manifest = serde_json::json!({
            "id": "demo", "language": "python", "kind": "off-by-one",
            "statement": "one() is not 1", "verify": "python3 -m unittest",
            "holdout": "python3 -m unittest", "protected": ["test_demo.py"],
            "source": pinned,
        });
        fs::write(task_dir.join("task.json"), manifest.to_string()).unwrap();
        let task = Task::load(&task_dir).unwrap();
        let prepared = prepare(&task, &cache, &dir.path().join("sources")).unwrap();

        let tree = dir.path().join("sources/demo");
        assert_eq!(prepared.repo, tree);
        assert_eq!(
            fs::read_to_string(tree.join("demo.py")).unwrap(),
            "def one():\n    return 2\n"
        );
        let committed = Command::new("git")
            .arg("-C")
            .arg(&tree)
            .args(["show", "HEAD:demo.py"])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&committed.stdout),
            "def one():\n    return 1\n"
        );
        // Prepared again, over the first: the same tree, not a patch applied twice.
        prepare(&task, &cache, &dir.path().join("sources")).unwrap();
        assert_eq!(
            fs::read_to_string(tree.join("demo.py")).unwrap(),
            "def one():\n    return 2\n"
        );
    }
}
