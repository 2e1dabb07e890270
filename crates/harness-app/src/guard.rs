//! The workspaces a run refuses: the whole machine, the user's home, and any directory that
//! holds the harness itself (a model that can edit its harness can edit its own guards).

use std::path::{Path, PathBuf};

use harness_sandbox::Workspace;

use crate::Error;

/// The workspace directory `given`, canonical, unless it is one no command may work in:
/// not an existing directory, the root of the filesystem, or the home directory.
///
/// # Errors
///
/// Each of those, naming the directory.
pub fn workspace_root(given: &Path) -> Result<PathBuf, Error> {
    let root = canonical_workspace(given)?;
    // Before the configuration is looked for in it, which would fail less clearly.
    if !root.is_dir() {
        return Err(Error::NotADirectory {
            given: given.to_owned(),
        });
    }
    refuse_broad(&root, std::env::var_os("HOME").as_deref().map(Path::new))?;
    Ok(root)
}

/// The canonical form of the workspace directory `given`.
fn canonical_workspace(given: &Path) -> Result<PathBuf, Error> {
    std::fs::canonicalize(given).map_err(|source| Error::NoWorkspace {
        given: given.to_owned(),
        source,
    })
}

/// Refuses `root` when it is `/` or the home directory.
fn refuse_broad(root: &Path, home: Option<&Path>) -> Result<(), Error> {
    if root.parent().is_none() {
        return Err(Error::FilesystemRoot {
            root: root.to_owned(),
        });
    }
    let home = home.and_then(|home| std::fs::canonicalize(home).ok());
    if home.as_deref() == Some(root) {
        return Err(Error::HomeDirectory {
            root: root.to_owned(),
        });
    }
    Ok(())
}

/// Refuses a workspace that contains the harness's source tree or its executable.
pub(crate) fn refuse_own_harness(workspace: &Workspace) -> Result<(), Error> {
    let mut own = vec![("its own source tree", source_root())];
    if let Ok(executable) = std::env::current_exe() {
        own.push(("its own executable", executable));
    }
    for (what, path) in own {
        if let Err(source) = workspace.ensure_not_within(&path) {
            return Err(Error::OwnHarness {
                root: workspace.root().to_string(),
                what,
                path,
                source,
            });
        }
    }
    Ok(())
}

/// The root of the harness's source tree: the Cargo workspace this crate was built in.
fn source_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    // crates/harness-app -> the workspace root.
    manifest.ancestors().nth(2).unwrap_or(manifest).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filesystem_root_and_home_are_refused() {
        let error = refuse_broad(Path::new("/"), None).unwrap_err();
        assert!(error.to_string().contains("root of the filesystem"));
        let home = tempfile::tempdir().unwrap();
        let canonical = std::fs::canonicalize(home.path()).unwrap();
        let error = refuse_broad(&canonical, Some(home.path())).unwrap_err();
        assert!(error.to_string().contains("your home directory"));
        let below = canonical.join("project");
        std::fs::create_dir(&below).unwrap();
        assert!(refuse_broad(&below, Some(home.path())).is_ok());
    }

    #[test]
    fn the_source_root_holds_this_crate() {
        assert!(
            source_root()
                .join("crates/harness-app/Cargo.toml")
                .is_file()
        );
    }

    #[test]
    fn a_workspace_holding_the_source_tree_is_refused_and_one_beside_it_is_not() {
        let inside = Workspace::new(source_root()).unwrap();
        let error = format!("{:#}", refuse_own_harness(&inside).unwrap_err());
        assert!(error.contains("its own source tree"), "{error}");
        let elsewhere = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(elsewhere.path()).unwrap();
        assert!(refuse_own_harness(&workspace).is_ok());
    }
}
