//! Moving a path aside: to `<path>.refused-N` beside it, where nothing reads it, never
//! replacing anything there. What a command made at a protected name is set aside so
//! (`protected.rs`), and so is what stands in the way of what the runner puts back
//! (`repair.rs`): nothing is deleted, since a command could as well have moved a file of
//! the user's to that name.

use std::io;
use std::path::{Path, PathBuf};

use rustix::fs::{CWD, RenameFlags, renameat_with};

/// How many names `<name>.refused-N` are tried before a random one: a
/// command that made them all first must not keep its file where it is.
pub(crate) const NUMBERED: u32 = 1000;

/// Renames `path` to the first free `<path>.refused-N`, or past
/// [`NUMBERED`] to `<path>.refused-<random>`, never replacing anything there.
pub(crate) fn move_aside(path: &Path) -> io::Result<PathBuf> {
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
    fn a_path_that_cannot_be_moved_says_why() {
        let dir = tempfile::tempdir().expect("tempdir");
        let error = move_aside(&dir.path().join("gone")).expect_err("nothing to move");
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
    }
}
