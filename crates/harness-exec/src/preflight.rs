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

pub use crate::error::Unavailable;
use crate::isolation::{Confinement, Isolation, kernel_abi, no_landlock};
use crate::runner::{RunOptions, Runner};
use crate::tier::{Tier, UnknownTier};

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
/// to the strongest tier that works ([`Tier::None`] always does). As
/// [`choose_for`] with commands confined to the current directory.
///
/// # Errors
///
/// An explicitly asked-for tier that cannot run, saying why and how to fix it.
pub fn choose(sandbox: Sandbox) -> Result<Choice, Unavailable> {
    choose_for(sandbox, &here())
}

/// Resolves `sandbox` for commands confined as `confinement`: an explicit tier if it
/// works, `auto` to the strongest tier that works ([`Tier::None`] always does). The
/// probes run in a scratch directory; no program the harness runs itself (`bwrap`) is
/// taken from where `confinement` lets commands write ([`probe_for`]).
///
/// # Errors
///
/// An explicitly asked-for tier that cannot run, saying why and how to fix it.
pub fn choose_for(sandbox: Sandbox, confinement: &Confinement) -> Result<Choice, Unavailable> {
    match sandbox {
        Sandbox::Only(tier) => probe_for(tier, confinement).map(|()| Choice {
            tier,
            skipped: Vec::new(),
        }),
        Sandbox::Auto => {
            let mut skipped = Vec::new();
            for tier in Tier::ALL {
                match probe_for(tier, confinement) {
                    Ok(()) => return Ok(Choice { tier, skipped }),
                    Err(unavailable) => skipped.push(unavailable),
                }
            }
            unreachable!("the none tier always works")
        }
    }
}

/// Starts a trivial command under `tier` and checks that it could write in
/// its workspace and could not write outside. As [`probe_for`] with commands
/// confined to the current directory.
///
/// # Errors
///
/// Why the tier cannot run here, and how to fix it.
pub fn probe(tier: Tier) -> Result<(), Unavailable> {
    probe_for(tier, &here())
}

/// Starts a trivial command under `tier`, in a scratch directory, and checks that it
/// could write in its workspace and could not write outside. The `bwrap` it runs is the
/// one commands confined as `confinement` would run under: never one from where they can
/// write (a command could have put it there, and the harness runs it unconfined).
///
/// # Errors
///
/// Why the tier cannot run here, and how to fix it.
pub fn probe_for(tier: Tier, confinement: &Confinement) -> Result<(), Unavailable> {
    if tier == Tier::None {
        return Ok(());
    }
    let untrusted = confinement.places_written();
    let bwrap = crate::isolation::trusted_bwrap(&untrusted);
    if let Some(unavailable) = missing_before_probing(tier, kernel_abi(), bwrap) {
        return Err(unavailable);
    }
    probe_in(tier, &std::env::temp_dir(), PROBE_SCRIPT, untrusted)
}

/// Commands confined to the current directory, the workspace a harness started here
/// would take; to the temporary directory where there is no such workspace: the current
/// directory cannot be found, or it is the root of the filesystem, which the command line
/// refuses as a workspace (and which holds every `bwrap`).
fn here() -> Confinement {
    match std::env::current_dir() {
        Ok(dir) if dir.parent().is_some() => Confinement::new(dir),
        _ => Confinement::new(std::env::temp_dir()),
    }
}

/// The probe's command: it writes once in its workspace and once next to it.
const PROBE_SCRIPT: &str = "echo > sub/probe; echo > ../outside; exit 0";

/// Runs `script` under `tier` in a scratch directory made under `base` (and
/// removed afterwards), and judges what it did with [`verdict`].
fn probe_in(
    tier: Tier,
    base: &Path,
    script: &str,
    untrusted: Vec<PathBuf>,
) -> Result<(), Unavailable> {
    let scratch = Scratch::create(base).map_err(|error| {
        Unavailable::new(
            tier,
            format!("cannot create a scratch directory for the probe: {error}"),
            "make the temporary directory ($TMPDIR or /tmp) writable",
        )
    })?;
    let workspace = scratch.path.join("workspace");
    let result = fs::create_dir_all(workspace.join("sub"))
        .map_err(ProbeError::Setup)
        .and_then(|()| {
            let confinement = Confinement::new(&workspace)
                .home(scratch.path.join("home"))
                .distrusting(untrusted);
            Runner::new()
                .isolation(Isolation::new(tier, confinement))
                .run(
                    // Absolute: the probe tests the tier, not the PATH.
                    &["/bin/sh", "-c", script],
                    &RunOptions::new(&workspace).timeout(Duration::from_secs(10)),
                )
                .map_err(ProbeError::Run)
        });
    let ran = match result {
        // The tier itself named why it cannot run (no bwrap, no Landlock).
        Err(ProbeError::Run(crate::Error::Isolation(unavailable))) => return Err(unavailable),
        Err(error) => Ran::NotRun(error.to_string()),
        Ok(outcome) if outcome.is_success() => Ran::Succeeded,
        Ok(outcome) => Ran::Failed(outcome.to_model_text().replace('\n', " ")),
    };
    let seen = Sighting {
        ran,
        wrote_inside: workspace.join("sub/probe").exists(),
        wrote_outside: scratch.path.join("outside").exists(),
    };
    verdict(seen).map_err(|reason| Unavailable::new(tier, reason, fix(tier, &host_facts())))
}

/// What became of the probe's command.
#[derive(Debug)]
enum Ran {
    /// It could not be started, or not waited for: why.
    NotRun(String),
    /// It ran and failed: what it reported.
    Failed(String),
    /// It ran and exited 0.
    Succeeded,
}

/// What the probe saw its command do.
#[derive(Debug)]
struct Sighting {
    ran: Ran,
    /// The file it was to write in its workspace exists.
    wrote_inside: bool,
    /// The file it was to write outside its workspace exists.
    wrote_outside: bool,
}

/// Whether a tier works, from what its probe saw: the command ran, exited
/// 0, wrote in its workspace and not outside. `Err` says why not.
fn verdict(seen: Sighting) -> Result<(), String> {
    match seen {
        Sighting {
            ran: Ran::NotRun(error),
            ..
        } => Err(error),
        Sighting {
            ran: Ran::Failed(report),
            ..
        } => Err(format!("the probe command failed: {report}")),
        Sighting {
            wrote_inside: false,
            ..
        } => Err("a command under it could not write in its workspace".into()),
        Sighting {
            wrote_outside: true,
            ..
        } => Err(
            "a command under it could write outside its workspace: the tier does not confine"
                .into(),
        ),
        Sighting { .. } => Ok(()),
    }
}

/// Why `tier` cannot run before anything is started: a kernel of Landlock ABI `abi`
/// (0: none) for Landlock, why no `bwrap` can be run for bwrap.
fn missing_before_probing(
    tier: Tier,
    abi: u32,
    bwrap: Result<PathBuf, Unavailable>,
) -> Option<Unavailable> {
    match tier {
        Tier::Landlock if abi == 0 => Some(no_landlock()),
        Tier::Bwrap => bwrap.err(),
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
    /// The seccomp actions the kernel offers (both real tiers install a socket
    /// filter, see `harness sandbox explain`).
    pub seccomp_actions: Option<String>,
    /// Whether this process runs as root.
    pub root: bool,
}

/// Reads the facts of this machine.
pub fn host_facts() -> HostFacts {
    // Run for its version: so not one from where commands confined to the current
    // directory could have written it.
    let bwrap = crate::isolation::trusted_bwrap(&here().places_written()).ok();
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

/// How to fix a tier whose probe failed, from the machine's facts.
fn fix(tier: Tier, facts: &HostFacts) -> &'static str {
    if tier == Tier::Landlock {
        "run `harness sandbox doctor` for the kernel's Landlock ABI, or use --sandbox bwrap"
    } else if facts.bwrap.is_none() {
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
    }
}

/// The content of the file at `path`, trimmed; `None` when it cannot be read.
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
    /// A new, empty directory under `base`.
    fn create(base: &Path) -> std::io::Result<Scratch> {
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let path = base.join(format!(
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
        let _ = fs::remove_dir_all(&self.path);
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
        let found = |found: bool| {
            found
                .then(|| PathBuf::from("/usr/bin/bwrap"))
                .ok_or_else(crate::isolation::no_bwrap)
        };
        let tiers = |abi, bwrap| {
            Tier::ALL
                .into_iter()
                .filter(|&tier| missing_before_probing(tier, abi, found(bwrap)).is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(tiers(0, false), [Tier::Bwrap, Tier::Landlock]);
        assert_eq!(tiers(1, false), [Tier::Bwrap]);
        assert_eq!(tiers(0, true), [Tier::Landlock]);
        assert!(tiers(7, true).is_empty());
        let bwrap = missing_before_probing(Tier::Bwrap, 7, found(false)).expect("missing");
        assert_eq!(bwrap.reason(), "no `bwrap` program on PATH");
        let landlock = missing_before_probing(Tier::Landlock, 0, found(true)).expect("missing");
        assert!(
            landlock.fix().contains("CONFIG_SECURITY_LANDLOCK"),
            "{landlock}"
        );
    }

    /// What a probe saw: `ran`, with the inside and outside writes.
    fn seen(ran: Ran, wrote_inside: bool, wrote_outside: bool) -> Sighting {
        Sighting {
            ran,
            wrote_inside,
            wrote_outside,
        }
    }

    #[test]
    fn a_tier_works_only_when_its_command_ran_wrote_inside_and_not_outside() {
        let failed = || Ran::Failed("exit status 3".into());
        let not_run = || Ran::NotRun("the probe command could not run: boom".into());
        let cases: [(Sighting, Result<(), &str>); 9] = [
            (seen(Ran::Succeeded, true, false), Ok(())),
            (
                seen(Ran::Succeeded, false, false),
                Err("a command under it could not write in its workspace"),
            ),
            (
                seen(Ran::Succeeded, true, true),
                Err(
                    "a command under it could write outside its workspace: the tier does not \
                     confine",
                ),
            ),
            (
                seen(Ran::Succeeded, false, true),
                Err("a command under it could not write in its workspace"),
            ),
            (
                seen(failed(), true, false),
                Err("the probe command failed: exit status 3"),
            ),
            (
                seen(failed(), false, true),
                Err("the probe command failed: exit status 3"),
            ),
            (
                seen(not_run(), true, false),
                Err("the probe command could not run: boom"),
            ),
            (
                seen(not_run(), false, false),
                Err("the probe command could not run: boom"),
            ),
            (
                seen(not_run(), true, true),
                Err("the probe command could not run: boom"),
            ),
        ];
        for (sighting, expected) in cases {
            let shown = format!("{sighting:?}");
            assert_eq!(
                verdict(sighting),
                expected.map_err(str::to_owned),
                "{shown}"
            );
        }
    }

    /// Facts of a machine where nothing stands in bwrap's way.
    fn fine() -> HostFacts {
        HostFacts {
            bwrap: Some(PathBuf::from("/usr/bin/bwrap")),
            bwrap_version: Some("bubblewrap 0.11.0".into()),
            unprivileged_userns_clone: Some("1".into()),
            max_user_namespaces: Some("15000".into()),
            apparmor_restricts_userns: Some("0".into()),
            landlock_abi: 7,
            lsm: Some("lockdown,capability,landlock".into()),
            seccomp_actions: Some("kill_process kill_thread trap errno".into()),
            root: false,
        }
    }

    #[test]
    fn a_failed_probe_is_fixed_as_the_machine_facts_point_to() {
        let without_bwrap = HostFacts {
            bwrap: None,
            apparmor_restricts_userns: Some("1".into()),
            ..fine()
        };
        let apparmor = HostFacts {
            apparmor_restricts_userns: Some("1".into()),
            unprivileged_userns_clone: Some("0".into()),
            ..fine()
        };
        let no_clone = HostFacts {
            unprivileged_userns_clone: Some("0".into()),
            max_user_namespaces: Some("0".into()),
            ..fine()
        };
        let no_namespaces = HostFacts {
            max_user_namespaces: Some("0".into()),
            ..fine()
        };
        let unknown = HostFacts {
            unprivileged_userns_clone: None,
            max_user_namespaces: None,
            apparmor_restricts_userns: None,
            ..fine()
        };
        let cases = [
            (Tier::Landlock, without_bwrap.clone(), "sandbox doctor"),
            (Tier::Bwrap, without_bwrap, "install bubblewrap"),
            (Tier::Bwrap, apparmor, "AppArmor restricts"),
            (Tier::Bwrap, no_clone, "unprivileged_userns_clone=1"),
            (Tier::Bwrap, no_namespaces, "max_user_namespaces=15000"),
            (Tier::Bwrap, fine(), "docker --security-opt"),
            (Tier::Bwrap, unknown, "docker --security-opt"),
        ];
        for (tier, facts, expected) in cases {
            let fix = fix(tier, &facts);
            assert!(fix.contains(expected), "{tier} {facts:?}: {fix}");
        }
    }

    #[test]
    fn files_are_read_trimmed_and_a_missing_one_is_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("lsm");
        fs::write(&path, "  lockdown,landlock \n").expect("write");
        let path = path.to_str().expect("utf-8");
        assert_eq!(read_trimmed(path), Some("lockdown,landlock".to_owned()));
        let missing = dir.path().join("missing");
        assert_eq!(read_trimmed(missing.to_str().expect("utf-8")), None);
    }

    #[test]
    fn a_scratch_directory_is_removed_when_dropped() {
        let base = tempfile::tempdir().expect("tempdir");
        let scratch = Scratch::create(base.path()).expect("scratch");
        let path = scratch.path.clone();
        fs::write(path.join("file"), "x").expect("write");
        assert!(path.starts_with(base.path()) && path.is_dir());
        drop(scratch);
        assert!(!path.exists());
    }

    /// The probe's machinery with real processes and files, through the
    /// none tier: it confines nothing, so each script decides what happens.
    #[test]
    fn a_probe_judges_what_its_command_really_did_and_leaves_nothing_behind() {
        let cases = [
            ("echo > sub/probe; exit 0", Ok(())),
            (
                PROBE_SCRIPT,
                Err(
                    "a command under it could write outside its workspace: the tier does not \
                     confine",
                ),
            ),
            (
                "exit 0",
                Err("a command under it could not write in its workspace"),
            ),
            (
                "echo > sub/probe; exit 3",
                Err("the probe command failed: exit=3"),
            ),
        ];
        for (script, expected) in cases {
            let base = tempfile::tempdir().expect("tempdir");
            let result = probe_in(Tier::None, base.path(), script, Vec::new());
            match (result, expected) {
                (Ok(()), Ok(())) => {}
                (Err(unavailable), Err(reason)) => {
                    assert!(
                        unavailable.reason().starts_with(reason),
                        "{script}: {unavailable}"
                    );
                    assert_eq!(unavailable.tier(), Tier::None);
                }
                (result, expected) => panic!("{script}: {result:?}, expected {expected:?}"),
            }
            let left: Vec<_> = fs::read_dir(base.path()).expect("base").collect();
            assert!(left.is_empty(), "{script}: left behind {left:?}");
        }
    }

    #[test]
    fn the_probe_passes_under_each_real_tier_that_can_start_here() {
        // Whether a tier can start is decided without the probe, so a broken
        // probe cannot skip this test.
        let abi = kernel_abi();
        for tier in [Tier::Bwrap, Tier::Landlock] {
            let bwrap = crate::isolation::trusted_bwrap(&[]);
            if let Some(missing) = missing_before_probing(tier, abi, bwrap) {
                eprintln!("skipped: {missing}");
                continue;
            }
            let base = tempfile::tempdir().expect("tempdir");
            assert_eq!(
                probe_in(tier, base.path(), PROBE_SCRIPT, Vec::new()),
                Ok(()),
                "{tier}"
            );
            let left: Vec<_> = fs::read_dir(base.path()).expect("base").collect();
            assert!(left.is_empty(), "{tier}: left behind {left:?}");
        }
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
