//! Finding the file a program name runs, the way `execvp` would.
//!
//! The runner resolves the program itself rather than leaving it to `exec`:
//! "not found" and "not executable" are then told apart before anything is
//! started, and the policy sees the file that will really run.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use rustix::fs::{Access, access};

/// Where a program name leads.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// An executable file.
    Executable(PathBuf),
    /// A file that exists but cannot be executed (no execute permission, or a
    /// directory).
    NotExecutable(PathBuf),
    /// Nothing by that name.
    NotFound,
}

/// Resolves `program` as `execvp` would for a process whose working
/// directory is `cwd` and whose `PATH` is `search_path`.
///
/// A name containing `/` is a path (relative to `cwd`); any other name is
/// looked up in each `PATH` directory in order, an empty entry meaning `cwd`.
/// Without a `PATH`, a bare name is not found.
pub(crate) fn resolve(program: &OsStr, search_path: Option<&OsStr>, cwd: &Path) -> Resolved {
    if program.as_encoded_bytes().contains(&b'/') {
        let path = cwd.join(program);
        return match classify(&path) {
            Some(true) => Resolved::Executable(path),
            Some(false) => Resolved::NotExecutable(path),
            None => Resolved::NotFound,
        };
    }
    let Some(search_path) = search_path.filter(|_| !program.is_empty()) else {
        return Resolved::NotFound;
    };
    let mut not_executable = None;
    for dir in std::env::split_paths(search_path) {
        let path = cwd.join(dir).join(program);
        match classify(&path) {
            Some(true) => return Resolved::Executable(path),
            Some(false) => {
                not_executable.get_or_insert(path);
            }
            None => {}
        }
    }
    not_executable.map_or(Resolved::NotFound, Resolved::NotExecutable)
}

/// `Some(true)` for an executable file, `Some(false)` for anything else that
/// exists, `None` when nothing is there.
fn classify(path: &Path) -> Option<bool> {
    let metadata = path.metadata().ok()?;
    Some(metadata.is_file() && access(path, Access::EXEC_OK).is_ok())
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn file(path: &Path, mode: u32) {
        fs::write(path, "#!/bin/sh\n").expect("write");
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
    }

    struct Dirs {
        _root: tempfile::TempDir,
        cwd: PathBuf,
        a: PathBuf,
        b: PathBuf,
    }

    fn dirs() -> Dirs {
        let root = tempfile::tempdir().expect("tempdir");
        let [cwd, a, b] = ["cwd", "a", "b"].map(|d| root.path().join(d));
        for dir in [&cwd, &a, &b] {
            fs::create_dir(dir).expect("mkdir");
        }
        Dirs {
            _root: root,
            cwd,
            a,
            b,
        }
    }

    fn path_of(dirs: &[&Path]) -> std::ffi::OsString {
        std::env::join_paths(dirs).expect("join")
    }

    #[test]
    fn the_first_executable_on_path_wins() {
        let d = dirs();
        file(&d.a.join("tool"), 0o755);
        file(&d.b.join("tool"), 0o755);
        let path = path_of(&[&d.a, &d.b]);
        assert_eq!(
            resolve("tool".as_ref(), Some(&path), &d.cwd),
            Resolved::Executable(d.a.join("tool"))
        );
    }

    #[test]
    fn a_non_executable_file_is_skipped_for_a_later_executable() {
        let d = dirs();
        file(&d.a.join("tool"), 0o644);
        file(&d.b.join("tool"), 0o755);
        let path = path_of(&[&d.a, &d.b]);
        assert_eq!(
            resolve("tool".as_ref(), Some(&path), &d.cwd),
            Resolved::Executable(d.b.join("tool"))
        );
    }

    #[test]
    fn only_non_executable_files_are_reported_as_such() {
        let d = dirs();
        file(&d.a.join("tool"), 0o644);
        file(&d.b.join("tool"), 0o644);
        let path = path_of(&[&d.a, &d.b]);
        assert_eq!(
            resolve("tool".as_ref(), Some(&path), &d.cwd),
            Resolved::NotExecutable(d.a.join("tool"))
        );
    }

    #[test]
    fn a_directory_is_not_executable() {
        let d = dirs();
        fs::create_dir(d.a.join("tool")).expect("mkdir");
        let path = path_of(&[&d.a]);
        assert_eq!(
            resolve("tool".as_ref(), Some(&path), &d.cwd),
            Resolved::NotExecutable(d.a.join("tool"))
        );
        assert_eq!(
            resolve("../a".as_ref(), None, &d.cwd),
            Resolved::NotExecutable(d.cwd.join("../a"))
        );
    }

    #[test]
    fn missing_everywhere_is_not_found() {
        let d = dirs();
        let path = path_of(&[&d.a, &d.b]);
        assert_eq!(
            resolve("tool".as_ref(), Some(&path), &d.cwd),
            Resolved::NotFound
        );
        assert_eq!(resolve("tool".as_ref(), None, &d.cwd), Resolved::NotFound);
        assert_eq!(
            resolve("".as_ref(), Some(&path), &d.cwd),
            Resolved::NotFound
        );
    }

    #[test]
    fn an_empty_path_entry_means_the_working_directory() {
        let d = dirs();
        file(&d.cwd.join("tool"), 0o755);
        let path = path_of(&[Path::new(""), &d.a]);
        assert_eq!(
            resolve("tool".as_ref(), Some(&path), &d.cwd),
            Resolved::Executable(d.cwd.join("tool"))
        );
    }

    #[test]
    fn a_name_with_a_slash_is_a_path_from_the_working_directory() {
        let d = dirs();
        file(&d.cwd.join("run.sh"), 0o755);
        file(&d.cwd.join("data.txt"), 0o644);
        file(&d.a.join("run.sh"), 0o755);
        let path = path_of(&[&d.a]);
        assert_eq!(
            resolve("./run.sh".as_ref(), Some(&path), &d.cwd),
            Resolved::Executable(d.cwd.join("./run.sh"))
        );
        assert_eq!(
            resolve("./data.txt".as_ref(), Some(&path), &d.cwd),
            Resolved::NotExecutable(d.cwd.join("./data.txt"))
        );
        assert_eq!(
            resolve("./gone".as_ref(), Some(&path), &d.cwd),
            Resolved::NotFound
        );
        let absolute = d.a.join("run.sh");
        assert_eq!(
            resolve(absolute.as_os_str(), None, &d.cwd),
            Resolved::Executable(absolute.clone())
        );
    }
}
