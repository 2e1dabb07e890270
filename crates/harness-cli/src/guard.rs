//! The workspaces a run refuses: the whole machine, the user's home, and any directory that
//! holds the harness itself (a model that can edit its harness can edit its own guards).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use harness_sandbox::Workspace;

/// The canonical form of the workspace directory `given`.
pub(crate) fn canonical_workspace(given: &Path) -> anyhow::Result<PathBuf> {
    std::fs::canonicalize(given).with_context(|| {
        format!(
            "cannot use {} as the workspace: it must be an existing directory",
            given.display()
        )
    })
}

/// Refuses `root` when it is `/` or the home directory.
pub(crate) fn refuse_broad(root: &Path, home: Option<&Path>) -> anyhow::Result<()> {
    if root.parent().is_none() {
        bail!(
            "refusing {} as the workspace: it is the root of the filesystem; point --workspace \
             at the repository to work on",
            root.display()
        );
    }
    let home = home.and_then(|home| std::fs::canonicalize(home).ok());
    if home.as_deref() == Some(root) {
        bail!(
            "refusing {} as the workspace: it is your home directory, with your keys and \
             configuration; point --workspace at the repository to work on",
            root.display()
        );
    }
    Ok(())
}

/// Refuses a workspace that contains the harness's source tree or its executable.
pub(crate) fn refuse_own_harness(workspace: &Workspace) -> anyhow::Result<()> {
    let mut own = vec![("its own source tree", source_root())];
    if let Ok(executable) = std::env::current_exe() {
        own.push(("its own executable", executable));
    }
    for (what, path) in own {
        workspace.ensure_not_within(&path).with_context(|| {
            format!(
                "refusing {} as the workspace: it contains the harness ({what}, {}), which a \
                 model could then change; copy the project elsewhere, as `cargo xtask demo` \
                 does",
                workspace.root(),
                path.display()
            )
        })?;
    }
    Ok(())
}

/// The root of the harness's source tree: the Cargo workspace this crate was built in.
fn source_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    // crates/harness-cli -> the workspace root.
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
                .join("crates/harness-cli/Cargo.toml")
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
