//! Which isolation tier works on this machine, found out by starting a
//! trivial confined command under each.
//!
//! A sandbox that silently does nothing, or that breaks every command, is
//! worse than none: so a tier counts as working only when a command started
//! under it could write in its workspace and could not write outside it.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::isolation::{Confinement, Isolation, Tier, UnknownTier, kernel_abi};
use crate::runner::{RunOptions, Runner};

/// The sandbox asked for: a tier, or `auto` for the strongest that works.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sandbox {
    /// The strongest tier that works here, weaker ones as fallbacks.
    #[default]
    Auto,
    /// This tier, or an error.
    Only(Tier),
}

impl FromStr for Sandbox {
    type Err = UnknownTier;

    fn from_str(name: &str) -> Result<Sandbox, UnknownTier> {
        match name {
            "auto" => Ok(Sandbox::Auto),
            name => name.parse().map(Sandbox::Only),
        }
    }
}

impl fmt::Display for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sandbox::Auto => f.write_str("auto"),
            Sandbox::Only(tier) => tier.fmt(f),
        }
    }
}

/// Why a tier cannot run on this machine, and how to make it run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the {tier} sandbox cannot run here: {reason}; to fix: {fix}")]
pub struct Unavailable {
    tier: Tier,
    reason: String,
    fix: String,
}

impl Unavailable {
    pub(crate) fn new(tier: Tier, reason: impl Into<String>, fix: impl Into<String>) -> Self {
        Unavailable {
            tier,
            reason: reason.into(),
            fix: fix.into(),
        }
    }

    pub(crate) fn no_landlock() -> Unavailable {
        let lsm = read_trimmed("/sys/kernel/security/lsm");
        let reason = match &lsm {
            Some(list) => format!("Landlock is not in the kernel's LSM list ({list})"),
            None => "the kernel has no Landlock (it needs Linux 5.13 or newer)".to_owned(),
        };
        Unavailable::new(
            Tier::Landlock,
            reason,
            "boot a kernel built with CONFIG_SECURITY_LANDLOCK=y and `landlock` in its `lsm=` \
             list, or use --sandbox bwrap",
        )
    }

    /// The tier that cannot run.
    pub fn tier(&self) -> Tier {
        self.tier
    }

    /// Why it cannot run.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// How to make it run.
    pub fn fix(&self) -> &str {
        &self.fix
    }
}

/// The tier a [`Sandbox`] choice resolved to, and the stronger tiers `auto`
/// passed over on the way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The tier commands will run under.
    pub tier: Tier,
    /// Why each stronger tier was not chosen (empty for an explicit tier).
    pub skipped: Vec<Unavailable>,
}

/// Resolves `sandbox` on this machine: an explicit tier if it works, `auto`
/// to the strongest tier that works ([`Tier::None`] always does).
///
/// # Errors
///
/// An explicitly asked-for tier that cannot run, saying why and how to fix it.
pub fn choose(sandbox: Sandbox) -> Result<Choice, Unavailable> {
    match sandbox {
        Sandbox::Only(tier) => probe(tier).map(|()| Choice {
            tier,
            skipped: Vec::new(),
        }),
        Sandbox::Auto => {
            let mut skipped = Vec::new();
            for tier in Tier::ALL {
                match probe(tier) {
                    Ok(()) => return Ok(Choice { tier, skipped }),
                    Err(unavailable) => skipped.push(unavailable),
                }
            }
            unreachable!("the none tier always works")
        }
    }
}

/// Starts a trivial command under `tier` and checks that it could write in
/// its workspace and could not write outside.
///
/// # Errors
///
/// Why the tier cannot run here, and how to fix it.
pub fn probe(tier: Tier) -> Result<(), Unavailable> {
    if tier == Tier::None {
        return Ok(());
    }
    let bwrap_found = crate::isolation::find_bwrap().is_some();
    if let Some(unavailable) = missing_before_probing(tier, kernel_abi(), bwrap_found) {
        return Err(unavailable);
    }
    let scratch = Scratch::create().map_err(|error| {
        Unavailable::new(
            tier,
            format!("cannot create a scratch directory for the probe: {error}"),
            "make the temporary directory ($TMPDIR or /tmp) writable",
        )
    })?;
    let workspace = scratch.path.join("workspace");
    let inside = workspace.join("sub/probe");
    let outside = scratch.path.join("outside");
    let result = fs::create_dir_all(workspace.join("sub"))
        .map_err(ProbeError::Setup)
        .and_then(|()| {
            let confinement = Confinement::new(&workspace).home(scratch.path.join("home"));
            Runner::new()
                .isolation(Isolation::new(tier, confinement))
                .run(
                    // Absolute: the probe tests the tier, not the PATH.
                    &[
                        "/bin/sh",
                        "-c",
                        "echo > sub/probe; echo > ../outside; exit 0",
                    ],
                    &RunOptions::new(&workspace).timeout(Duration::from_secs(10)),
                )
                .map_err(ProbeError::Run)
        });
    let result = match result {
        // The tier itself named why it cannot run (no bwrap, no Landlock).
        Err(ProbeError::Run(crate::Error::Isolation(unavailable))) => return Err(unavailable),
        Err(error) => Err(error.to_string()),
        Ok(outcome) => Ok(outcome),
    };
    let broken = |reason: String| Err(diagnose(tier, reason));
    match result {
        Err(error) => broken(error),
        Ok(outcome) if !outcome.is_success() => broken(format!(
            "the probe command failed: {}",
            outcome.to_model_text().replace('\n', " ")
        )),
        Ok(_) if !inside.exists() => {
            broken("a command under it could not write in its workspace".into())
        }
        Ok(_) if outside.exists() => broken(
            "a command under it could write outside its workspace: the tier does not confine"
                .into(),
        ),
        Ok(_) => Ok(()),
    }
}

/// Why `tier` cannot run before anything is started: a kernel of Landlock ABI `abi`
/// (0: none) for Landlock, whether a `bwrap` program was found for bwrap.
fn missing_before_probing(tier: Tier, abi: u32, bwrap_found: bool) -> Option<Unavailable> {
    match tier {
        Tier::Landlock if abi == 0 => Some(Unavailable::no_landlock()),
        Tier::Bwrap if !bwrap_found => Some(crate::isolation::no_bwrap()),
        _ => None,
    }
}

/// Why a probe could not even run its command.
#[derive(Debug, thiserror::Error)]
enum ProbeError {
    #[error("cannot prepare the probe's workspace: {0}")]
    Setup(std::io::Error),
    #[error("the probe command could not run: {0}")]
    Run(crate::Error),
}

/// Facts about this machine that decide which tiers can run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFacts {
    /// The `bwrap` program found on `PATH`.
    pub bwrap: Option<PathBuf>,
    /// What `bwrap --version` printed.
    pub bwrap_version: Option<String>,
    /// `kernel.unprivileged_userns_clone` (Debian kernels), when present.
    pub unprivileged_userns_clone: Option<String>,
    /// `user.max_user_namespaces`.
    pub max_user_namespaces: Option<String>,
    /// `kernel.apparmor_restrict_unprivileged_userns` (Ubuntu 23.10+), when present.
    pub apparmor_restricts_userns: Option<String>,
    /// The kernel's Landlock ABI version, 0 for none.
    pub landlock_abi: u32,
    /// The kernel's active security modules.
    pub lsm: Option<String>,
    /// The seccomp actions the kernel offers (none of the tiers needs seccomp).
    pub seccomp_actions: Option<String>,
    /// Whether this process runs as root.
    pub root: bool,
}

/// Reads the facts of this machine.
pub fn host_facts() -> HostFacts {
    let bwrap = crate::isolation::find_bwrap();
    let bwrap_version = bwrap.as_ref().and_then(|bwrap| {
        let output = std::process::Command::new(bwrap)
            .arg("--version")
            .output()
            .ok()?;
        Some(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    });
    HostFacts {
        bwrap,
        bwrap_version,
        unprivileged_userns_clone: read_trimmed("/proc/sys/kernel/unprivileged_userns_clone"),
        max_user_namespaces: read_trimmed("/proc/sys/user/max_user_namespaces"),
        apparmor_restricts_userns: read_trimmed(
            "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
        ),
        landlock_abi: kernel_abi(),
        lsm: read_trimmed("/sys/kernel/security/lsm"),
        seccomp_actions: read_trimmed("/proc/sys/kernel/seccomp/actions_avail"),
        root: rustix::process::geteuid().is_root(),
    }
}

/// The reason a tier's probe failed, with the fix the machine's facts point
/// to.
fn diagnose(tier: Tier, reason: String) -> Unavailable {
    if tier == Tier::Landlock {
        return Unavailable::new(
            tier,
            reason,
            "run `harness sandbox doctor` for the kernel's Landlock ABI, or use --sandbox bwrap",
        );
    }
    let facts = host_facts();
    let fix = if facts.bwrap.is_none() {
        "install bubblewrap (`apt-get install bubblewrap`, `dnf install bubblewrap`)"
    } else if facts.apparmor_restricts_userns.as_deref() == Some("1") {
        "AppArmor restricts unprivileged user namespaces: allow them for bwrap with an AppArmor \
         profile, or `sysctl kernel.apparmor_restrict_unprivileged_userns=0`"
    } else if facts.unprivileged_userns_clone.as_deref() == Some("0") {
        "user namespaces are disabled: `sysctl kernel.unprivileged_userns_clone=1`"
    } else if facts.max_user_namespaces.as_deref() == Some("0") {
        "user namespaces are disabled: `sysctl user.max_user_namespaces=15000`"
    } else {
        "check that bwrap can create namespaces here (inside a container, allow them, e.g. \
         docker --security-opt seccomp=unconfined), or use --sandbox landlock"
    };
    Unavailable::new(tier, reason, fix)
}

fn read_trimmed(path: &str) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|text| text.trim().to_owned())
}

/// A directory for one probe, removed afterwards.
struct Scratch {
    path: PathBuf,
}

impl Scratch {
    fn create() -> std::io::Result<Scratch> {
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "harness-preflight-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path)?;
        Ok(Scratch { path })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(Path::new(&self.path));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_names_parse() {
        assert_eq!("auto".parse(), Ok(Sandbox::Auto));
        assert_eq!("bwrap".parse(), Ok(Sandbox::Only(Tier::Bwrap)));
        assert_eq!("none".parse(), Ok(Sandbox::Only(Tier::None)));
        assert!("chroot".parse::<Sandbox>().is_err());
        assert_eq!(Sandbox::Auto.to_string(), "auto");
        assert_eq!(Sandbox::Only(Tier::Landlock).to_string(), "landlock");
    }

    #[test]
    fn the_none_tier_always_works() {
        assert_eq!(probe(Tier::None), Ok(()));
        assert_eq!(
            choose(Sandbox::Only(Tier::None)),
            Ok(Choice {
                tier: Tier::None,
                skipped: Vec::new()
            })
        );
    }

    #[test]
    fn a_missing_bwrap_or_landlock_is_known_before_probing() {
        let tiers = |abi, bwrap| {
            Tier::ALL
                .into_iter()
                .filter(|&tier| missing_before_probing(tier, abi, bwrap).is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(tiers(0, false), [Tier::Bwrap, Tier::Landlock]);
        assert_eq!(tiers(1, false), [Tier::Bwrap]);
        assert_eq!(tiers(0, true), [Tier::Landlock]);
        assert!(tiers(7, true).is_empty());
        let bwrap = missing_before_probing(Tier::Bwrap, 7, false).expect("missing");
        assert_eq!(bwrap.reason(), "no `bwrap` program on PATH");
        let landlock = missing_before_probing(Tier::Landlock, 0, true).expect("missing");
        assert!(
            landlock.fix().contains("CONFIG_SECURITY_LANDLOCK"),
            "{landlock}"
        );
    }

    #[test]
    fn an_unavailable_tier_says_why_and_how_to_fix_it() {
        let error = Unavailable::new(Tier::Bwrap, "no `bwrap` program on PATH", "install it");
        assert_eq!(
            error.to_string(),
            "the bwrap sandbox cannot run here: no `bwrap` program on PATH; to fix: install it"
        );
        assert_eq!(
            (error.tier(), error.reason(), error.fix()),
            (Tier::Bwrap, "no `bwrap` program on PATH", "install it")
        );
    }
}
