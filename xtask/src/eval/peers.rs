//! The peers, installed on demand: each into a virtual environment of its own under the
//! cache (`~/.cache/harness/peers/`), at the version the issue measured, once.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

use super::agent::AgentKind;

/// A peer's PyPI package, its pinned version and the program it installs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Peer {
    pub(crate) package: &'static str,
    pub(crate) version: &'static str,
    pub(crate) program: &'static str,
}

/// The peer behind `kind`; `None` for the harness itself.
pub(crate) fn peer(kind: AgentKind) -> Option<Peer> {
    match kind {
        AgentKind::Harness => None,
        AgentKind::Aider => Some(Peer {
            package: "aider-chat",
            version: "0.86.2",
            program: "aider",
        }),
        AgentKind::MiniSweAgent => Some(Peer {
            package: "mini-swe-agent",
            version: "2.4.6",
            program: "mini",
        }),
    }
}

impl Peer {
    /// Its virtual environment under `cache`.
    pub(crate) fn venv(&self, cache: &Path) -> PathBuf {
        cache
            .join("peers")
            .join(format!("{}-{}", self.package, self.version))
    }

    /// Its program in the virtual environment.
    pub(crate) fn executable(&self, cache: &Path) -> PathBuf {
        self.venv(cache).join("bin").join(self.program)
    }

    /// The commands that install it: make the environment, then pip-install the pinned
    /// version into it.
    pub(crate) fn install_commands(&self, cache: &Path) -> Vec<Vec<String>> {
        let venv = self.venv(cache);
        vec![
            vec![
                "python3".into(),
                "-m".into(),
                "venv".into(),
                venv.display().to_string(),
            ],
            vec![
                venv.join("bin/pip").display().to_string(),
                "install".into(),
                "--quiet".into(),
                "--disable-pip-version-check".into(),
                format!("{}=={}", self.package, self.version),
            ],
        ]
    }

    /// Its program, installed first if it is not there yet.
    pub(crate) fn ensure(&self, cache: &Path) -> Result<PathBuf> {
        self.ensure_with(cache, &mut |argv| {
            let status = Command::new(&argv[0])
                .args(&argv[1..])
                .status()
                .with_context(|| format!("running {}", argv.join(" ")))?;
            if !status.success() {
                bail!("`{}` failed: {status}", argv.join(" "));
            }
            Ok(())
        })
    }

    /// [`Peer::ensure`], running each install command with `run`.
    fn ensure_with(
        &self,
        cache: &Path,
        run: &mut dyn FnMut(&[String]) -> Result<()>,
    ) -> Result<PathBuf> {
        let executable = self.executable(cache);
        if executable.is_file() {
            return Ok(executable);
        }
        eprintln!(
            "installing {} {} into {}",
            self.package,
            self.version,
            self.venv(cache).display()
        );
        for argv in self.install_commands(cache) {
            run(&argv)?;
        }
        ensure!(
            executable.is_file(),
            "{} installed no {}",
            self.package,
            executable.display()
        );
        Ok(executable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_install_their_pinned_versions_into_their_own_environment_in_the_cache() {
        let cache = Path::new("/c/harness");
        let aider = peer(AgentKind::Aider).unwrap();
        assert_eq!(
            aider.executable(cache),
            Path::new("/c/harness/peers/aider-chat-0.86.2/bin/aider")
        );
        assert_eq!(
            aider.install_commands(cache),
            [
                vec![
                    "python3",
                    "-m",
                    "venv",
                    "/c/harness/peers/aider-chat-0.86.2"
                ],
                vec![
                    "/c/harness/peers/aider-chat-0.86.2/bin/pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "aider-chat==0.86.2",
                ],
            ]
        );
        let mini = peer(AgentKind::MiniSweAgent).unwrap();
        assert_eq!(
            mini.executable(cache),
            Path::new("/c/harness/peers/mini-swe-agent-2.4.6/bin/mini")
        );
        assert_eq!(mini.install_commands(cache)[1][4], "mini-swe-agent==2.4.6");
        assert_eq!(peer(AgentKind::Harness), None);
    }

    #[test]
    fn a_peer_is_installed_on_first_use_only() {
        let cache = tempfile::tempdir().unwrap();
        let aider = peer(AgentKind::Aider).unwrap();
        let mut ran: Vec<Vec<String>> = Vec::new();
        // An install that makes no program is an error that names the program.
        let error = aider
            .ensure_with(cache.path(), &mut |argv| {
                ran.push(argv.to_vec());
                Ok(())
            })
            .unwrap_err();
        assert!(error.to_string().contains("bin/aider"), "{error}");
        assert_eq!(ran, aider.install_commands(cache.path()));

        let executable = aider.executable(cache.path());
        std::fs::create_dir_all(executable.parent().unwrap()).unwrap();
        std::fs::write(&executable, "").unwrap();
        ran.clear();
        let found = aider
            .ensure_with(cache.path(), &mut |argv| {
                ran.push(argv.to_vec());
                Ok(())
            })
            .unwrap();
        assert_eq!(found, executable);
        assert!(ran.is_empty(), "installed again: {ran:?}");
    }
}
