//! The workspace's protected names (`.git`, `harness.toml`) that did not
//! exist when a command started, and what the runner does when a command
//! created one.
//!
//! An existing protected path is bound read-only (bwrap) or left out of the
//! grants (Landlock). A missing one cannot be: bwrap can bind only over
//! something that exists, and making an empty file to bind over would leave
//! it in the user's repository. Yet a `harness.toml` a command writes where
//! there was none is read by the next run, which would then run with the
//! command's settings (its own `verify = "true"`, say). So the runner looks
//! after the command and everything it started are gone, and moves whatever
//! now stands at such a name aside, to `harness.toml.refused-N` beside it
//! (a random name when a thousand such names are taken already): nothing
//! reads it there, and nothing is deleted, since a command could as well
//! have moved a file of the user's to that name.

use std::io;
use std::path::{Path, PathBuf};

use rustix::fs::{CWD, RenameFlags, renameat_with};

/// A protected path a command created, and where the runner moved it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetAside {
    /// The protected path the command created (`<workspace>/harness.toml`).
    pub created: PathBuf,
    /// Where it is now, or why it could not be moved (it is then still at
    /// `created`).
    pub moved_to: Result<PathBuf, String>,
}

/// How many names `<name>.refused-N` are tried before a random one: a
/// command that made them all first must not keep its file where it is.
const NUMBERED: u32 = 1000;

/// The paths among `protected` that do not exist now (not even as a dangling
/// symlink).
pub(crate) fn missing(protected: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    protected
        .into_iter()
        .filter(|path| {
            path.symlink_metadata()
                .is_err_and(|error| error.kind() == io::ErrorKind::NotFound)
        })
        .collect()
}

/// Moves aside whatever now exists at each of `missing` (paths that did not
/// exist when the command started).
pub(crate) fn set_aside(missing: &[PathBuf]) -> Vec<SetAside> {
    missing
        .iter()
        .filter(|path| path.symlink_metadata().is_ok())
        .map(|created| SetAside {
            created: created.clone(),
            moved_to: move_aside(created).map_err(|error| error.to_string()),
        })
        .collect()
}

/// Renames `path` to the first free `<path>.refused-N`, or past
/// [`NUMBERED`] to `<path>.refused-<random>`, never replacing anything there.
fn move_aside(path: &Path) -> io::Result<PathBuf> {
    let numbered = (1..=NUMBERED).map(|n| n.to_string());
    // 128 random bits: no command can have made that name beforehand.
    let random = std::iter::from_fn(|| random_hex().ok()).take(3);
    for suffix in numbered.chain(random) {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".refused-{suffix}"));
        let to = PathBuf::from(name);
        match renameat_with(CWD, path, CWD, &to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(to),
            Err(rustix::io::Errno::EXIST) => continue,
            Err(errno) => return Err(errno.into()),
        }
    }
    Err(io::Error::from(io::ErrorKind::AlreadyExists))
}

/// 16 random bytes from the kernel, in hex.
fn random_hex() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    rustix::rand::getrandom(&mut bytes, rustix::rand::GetRandomFlags::empty())?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_was_missing_and_now_exists_is_moved_and_nothing_is_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let toml = dir.path().join("harness.toml");
        let git = dir.path().join(".git");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("nowhere", &link).expect("symlink");
        let missing_now = missing([toml.clone(), git.clone(), link.clone()]);
        assert_eq!(
            missing_now,
            [toml.clone(), git.clone()],
            "a dangling link exists"
        );

        assert!(set_aside(&missing_now).is_empty(), "nothing was created");
        std::fs::write(&toml, "verify = \"true\"\n").expect("write");
        std::fs::write(dir.path().join("harness.toml.refused-1"), "older\n").expect("write");
        let moved = set_aside(&missing_now);
        let expected = dir.path().join("harness.toml.refused-2");
        assert_eq!(
            moved,
            [SetAside {
                created: toml.clone(),
                moved_to: Ok(expected.clone()),
            }]
        );
        assert!(!toml.exists());
        assert_eq!(
            std::fs::read_to_string(expected).expect("kept"),
            "verify = \"true\"\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("harness.toml.refused-1")).expect("kept"),
            "older\n"
        );
    }

    #[test]
    fn every_numbered_name_taken_beforehand_still_leaves_nothing_where_it_was() {
        let dir = tempfile::tempdir().expect("tempdir");
        let toml = dir.path().join("harness.toml");
        std::fs::write(&toml, "x").expect("write");
        for n in 1..=NUMBERED {
            std::fs::write(dir.path().join(format!("harness.toml.refused-{n}")), "")
                .expect("write");
        }
        let moved = set_aside(std::slice::from_ref(&toml));
        let to = moved[0].moved_to.clone().expect("moved");
        let suffix = to
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_prefix("harness.toml.refused-"))
            .expect("a refused name");
        assert_eq!(suffix.len(), 32, "{suffix}");
        assert!(suffix.chars().all(|c| c.is_ascii_hexdigit()), "{suffix}");
        assert!(!toml.exists());
        assert_eq!(std::fs::read_to_string(to).expect("kept"), "x");
    }

    #[test]
    fn a_path_that_cannot_be_moved_says_why() {
        let dir = tempfile::tempdir().expect("tempdir");
        let error = move_aside(&dir.path().join("gone")).expect_err("nothing to move");
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
    }
}
