//! How the user runs this program: what every command line the harness prints starts with.
//!
//! A printed command must work as printed. `harness` works only where the shell finds this
//! same executable under that name; after `cargo xtask demo` or `cargo build`, the binary
//! sits in `target/` and `harness` is not on `PATH` at all (or is another, older install).
//! So [`program`] is `harness` when the first `harness` on `PATH` is this executable (the
//! same file: same device and inode, whatever symlinks lead to it), and otherwise this
//! executable's absolute path, quoted for a POSIX shell when it needs it.

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The name the shell runs this program by when it is installed.
const NAME: &str = "harness";

/// What a printed command starts with: `harness`, or this executable's absolute path.
pub(crate) fn program() -> &'static str {
    static PROGRAM: OnceLock<String> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let path = std::env::var_os("PATH");
        match std::env::current_exe() {
            Ok(exe) => invocation(&exe, path),
            // Nothing better is known; the name is what the docs use.
            Err(_) => NAME.to_owned(),
        }
    })
}

/// A command line for the user: [`program`] followed by `rest` (already quoted).
pub(crate) fn command(rest: &str) -> String {
    format!("{} {rest}", program())
}

/// Rewrites the commands a message quotes (`` `harness undo` ``, as the library crates
/// write their hints) to start with [`program`].
pub(crate) fn in_message(message: &str) -> String {
    let program = program();
    if program == NAME {
        return message.to_owned();
    }
    message.replace(&format!("`{NAME} "), &format!("`{program} "))
}

/// How `exe` is run, given the search path `path`.
fn invocation(exe: &Path, path: Option<OsString>) -> String {
    if path
        .as_deref()
        .and_then(found_on_path)
        .is_some_and(|found| same_file(&found, exe))
    {
        return NAME.to_owned();
    }
    harness_app::quote(&exe.display().to_string())
}

/// The `harness` the shell would run: the first executable file of that name in an absolute
/// directory of `path`. A relative entry (`.`, or empty) is skipped: what it finds depends
/// on the directory the user is in when pasting the command.
fn found_on_path(path: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(NAME))
        .find(|candidate| {
            fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// True if and only if `a` and `b` lead to the same file (symlinks followed).
fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn executable(path: &Path) {
        fs::write(path, "#!/bin/sh\n").unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn the_name_is_used_only_when_path_finds_this_very_file() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("target dir/harness");
        fs::create_dir_all(exe.parent().unwrap()).unwrap();
        executable(&exe);
        let quoted = format!("'{}'", exe.display());

        // Not on PATH at all.
        assert_eq!(invocation(&exe, None), quoted);
        let empty = dir.path().join("empty");
        fs::create_dir(&empty).unwrap();
        assert_eq!(invocation(&exe, Some(empty.clone().into())), quoted);

        // Another `harness` first on PATH: an older install, say.
        let other = dir.path().join("other");
        fs::create_dir(&other).unwrap();
        executable(&other.join("harness"));
        let path = std::env::join_paths([&other, exe.parent().unwrap()]).unwrap();
        assert_eq!(invocation(&exe, Some(path)), quoted);

        // This very file, through a symlink, first on PATH.
        let bin = dir.path().join("bin");
        fs::create_dir(&bin).unwrap();
        std::os::unix::fs::symlink(&exe, bin.join("harness")).unwrap();
        let path = std::env::join_paths([&bin, &other]).unwrap();
        assert_eq!(invocation(&exe, Some(path)), "harness");

        // A relative entry is not trusted to find it wherever the command is pasted.
        let path = std::env::join_paths([Path::new("."), &other]).unwrap();
        assert_eq!(invocation(&exe, Some(path)), quoted);
    }

    #[test]
    fn a_file_that_is_not_executable_is_not_what_the_shell_runs() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("harness");
        fs::write(&exe, "").unwrap();
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(found_on_path(dir.path().as_os_str()), None);
    }
}
