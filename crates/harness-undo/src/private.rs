//! Keeping the stores to their owner: directories 0700, files that hold data 0600.
//!
//! A store holds the user's uncommitted work, the contents of files the harness hides from
//! the model, and the agent's transcripts. The XDG base directory specification asks for
//! `$XDG_STATE_HOME` to be readable by its owner only, but `mkdir` under the usual umask
//! (022) makes 0755, and git makes its directories likewise: a repository kept in a private
//! directory then had its snapshots readable by every local user through the store. So the
//! harness sets the modes itself, after creating (the umask cannot widen what `chmod` sets),
//! and tightens a store made wider before, by an older harness or by hand.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The mode of a directory of the store: its owner only.
#[cfg(unix)]
const DIR_MODE: u32 = 0o700;

/// Creates `dir` and its missing parents, each made private (0700) whatever the umask; an
/// existing `dir` is tightened, existing parents are left as their owner made them. True
/// if and only if a directory that existed was tightened.
pub(crate) fn create_dir(dir: &Path) -> io::Result<bool> {
    // Only the parents the harness creates are its own to make private: an existing
    // `~/.local` keeps the mode its owner gave it.
    if let Some(parent) = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty() && !p.exists())
    {
        create_dir(parent)?;
    }
    match fs::create_dir(dir) {
        Ok(()) => set_private(dir).map(|()| false),
        // Made by another process meanwhile, or before: tightened all the same.
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => tighten(dir),
        Err(error) => Err(error),
    }
}

/// Makes `path` readable and writable by its owner only: 0700 for a directory, 0600 for a
/// file. No-op on platforms without Unix modes.
pub(crate) fn set_private(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let metadata = fs::symlink_metadata(path)?;
        let mode = if metadata.is_dir() { DIR_MODE } else { 0o600 };
        if !metadata.is_symlink() {
            fs::set_permissions(path, fs::Permissions::from_mode(mode))?;
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Takes away every permission of the group and of others on `path` (not through a
/// symbolic link), keeping the owner's. True if and only if there were any.
pub(crate) fn tighten(path: &Path) -> io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let metadata = fs::symlink_metadata(path)?;
        let mode = metadata.permissions().mode() & 0o7777;
        if metadata.is_symlink() || mode & 0o077 == 0 {
            return Ok(false);
        }
        fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o700))?;
        Ok(true)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(false)
    }
}

/// Tightens (see [`tighten`]) the directory of all stores, each store in it, each store's
/// `harness` and `harness/runs` directories, each run directory and the files in it:
/// the paths that were readable by others, sorted. Entries that vanish meanwhile are
/// passed over.
pub(crate) fn tighten_all(base: &Path) -> io::Result<Vec<PathBuf>> {
    let mut tightened = Vec::new();
    let note = |path: &Path, tightened: &mut Vec<PathBuf>| -> io::Result<()> {
        match tighten(path) {
            Ok(true) => tightened.push(path.to_path_buf()),
            Ok(false) => {}
            // Gone meanwhile, or not a store at all (a file where a store would be).
            Err(error)
                if matches!(
                    error.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) => {}
            Err(error) => return Err(error),
        }
        Ok(())
    };
    if !base.is_dir() {
        return Ok(tightened);
    }
    note(base, &mut tightened)?;
    for store in entries(base)? {
        note(&store, &mut tightened)?;
        let runs = store.join("harness").join("runs");
        for dir in [store.join("harness"), runs.clone()] {
            note(&dir, &mut tightened)?;
        }
        for run in entries(&runs)? {
            note(&run, &mut tightened)?;
            for file in entries(&run)? {
                note(&file, &mut tightened)?;
            }
        }
    }
    tightened.sort();
    Ok(tightened)
}

/// The entries of `dir` that are directories or files (not links), or none when it is not
/// a directory.
fn entries(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let listing = match fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(error)
            if matches!(
                error.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(Vec::new());
        }
        Err(error) => return Err(error),
    };
    let mut found = Vec::new();
    for entry in listing {
        let entry = entry?;
        if entry.file_type().is_ok_and(|t| !t.is_symlink()) {
            found.push(entry.path());
        }
    }
    Ok(found)
}

#[cfg(test)]
#[cfg(unix)] // The modes are Unix modes.
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_created_directory_is_private_and_an_existing_one_tightened() {
        let dir = tempfile::tempdir().unwrap();
        let made = dir.path().join("a/b");
        assert!(!create_dir(&made).unwrap());
        assert_eq!(mode(&made), 0o700);
        fs::set_permissions(&made, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(create_dir(&made).unwrap(), "tightened");
        assert_eq!(mode(&made), 0o700);
        assert!(!create_dir(&made).unwrap(), "said once");
    }

    /// The parents the harness creates are private; one that existed (`~/.local`, `/tmp`)
    /// keeps the mode its owner gave it.
    #[test]
    fn only_the_parents_it_creates_are_made_private() {
        let dir = tempfile::tempdir().unwrap();
        let existing = dir.path().join("local");
        fs::create_dir(&existing).unwrap();
        fs::set_permissions(&existing, fs::Permissions::from_mode(0o755)).unwrap();
        let made = existing.join("state/harness");
        assert!(!create_dir(&made).unwrap());
        assert_eq!(
            mode(&existing),
            0o755,
            "an existing parent is left as it was"
        );
        assert_eq!(mode(&existing.join("state")), 0o700);
        assert_eq!(mode(&made), 0o700);
    }

    #[test]
    fn tightening_keeps_the_owners_bits_and_passes_links_over() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, "x").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
        assert!(tighten(&file).unwrap());
        assert_eq!(mode(&file), 0o600);
        fs::set_permissions(&file, fs::Permissions::from_mode(0o500)).unwrap();
        assert!(!tighten(&file).unwrap());
        assert_eq!(mode(&file), 0o500);
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(!tighten(&link).unwrap());
        set_private(&link).unwrap();
        assert_eq!(mode(&file), 0o500, "not through the link");
    }

    #[test]
    fn every_store_run_and_file_is_tightened_and_named() {
        let base = tempfile::tempdir().unwrap();
        let run = base.path().join("ws-1.git/harness/runs/r1");
        fs::create_dir_all(&run).unwrap();
        fs::write(run.join("transcript.jsonl"), "{}").unwrap();
        for path in [
            base.path().to_path_buf(),
            base.path().join("ws-1.git"),
            base.path().join("ws-1.git/harness"),
            base.path().join("ws-1.git/harness/runs"),
            run.clone(),
        ] {
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::set_permissions(
            run.join("transcript.jsonl"),
            fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        // Not stores, and no reason to stop: a file, and a directory without runs.
        fs::write(base.path().join("stray"), "x").unwrap();
        fs::set_permissions(base.path().join("stray"), fs::Permissions::from_mode(0o644)).unwrap();
        fs::create_dir(base.path().join("empty.git")).unwrap();
        fs::set_permissions(
            base.path().join("empty.git"),
            fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        let tightened = tighten_all(base.path()).unwrap();
        assert_eq!(tightened.len(), 7, "{tightened:?}");
        assert_eq!(mode(&base.path().join("stray")), 0o600);
        assert_eq!(mode(&run.join("transcript.jsonl")), 0o600);
        assert_eq!(mode(base.path()), 0o700);
        assert!(tighten_all(base.path()).unwrap().is_empty());
        assert!(tighten_all(&base.path().join("none")).unwrap().is_empty());
    }
}
