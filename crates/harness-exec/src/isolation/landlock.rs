//! The Landlock tier: the child restricts itself before `exec`.
//!
//! The ruleset is built here, in the parent, where allocating and opening
//! paths is safe; the child only sets `no_new_privs` and enforces it (see
//! `pre_exec`). Landlock grants access by hierarchy and cannot take a
//! subtree back, so a hidden path is cut out by granting each of its
//! ancestors' other entries one by one instead of the ancestor itself.
//!
//! # The top of the workspace
//!
//! What Landlock can express (ABI 1 to 7): rights added up over a path's
//! ancestors, never a right taken away below a grant. Making, renaming and
//! removing an entry is a right of the directory it is in; reading, writing
//! and executing a file are rights of the file, looked up through every
//! directory above it. A rename or link may not give a file rights it did not
//! have where it was (`REFER`). No ABI adds a way to deny.
//!
//! So with `.git`, `harness.toml` and a hidden `.env` at the top, there are two
//! choices: grant the top nothing (commands could not `touch new.txt`, `rm
//! old.txt`, make a first build's `target/`, nor even list the top when a path
//! there was hidden: test discovery found nothing), or grant it and accept what
//! that reaches. This tier grants the top, and each directory between it and a
//! kept or hidden path, listing and the rights of entries ([`at_the_top`]:
//! make, write, truncate, rename, remove), and keeps reading and executing
//! granted entry by entry, as before, where a hidden path is below:
//!
//! - a hidden file's content stays unreadable: no grant that reaches it has
//!   `READ_FILE` (by any name: a link to it, `/proc/self/cwd/.env`, a glob);
//! - a file a command makes at such a top is readable and executable from the
//!   next command on, not by the one that made it (its rights come from the top,
//!   which has no `READ_FILE`). Granting `READ_FILE` on the top would reach the
//!   hidden file; moving hidden files away for the command's time would need a
//!   place outside the workspace on the same file system, which no workspace is
//!   sure to have, and would leave them moved if the harness died. Where nothing
//!   in the workspace is hidden, the top is readable whole and all of it works;
//! - what the rights of entries reach below the top (`.git/hooks`, `.git/config`,
//!   `harness.toml`, `rm -rf .git`, another repository's `.git`, a hidden file
//!   linked or renamed to a readable name) is put back by the runner after the
//!   command (`repair`), and reported ([`Outcome::repaired`]).
//!
//! [`Outcome::repaired`]: crate::Outcome::repaired

#![allow(unsafe_code)]

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};

use super::Confinement;
use crate::error::{Error, Unavailable};
use crate::tier::Tier;

/// The newest ABI whose rights this tier asks for; the kernel enforces what
/// it knows of them (best effort).
const REQUESTED: ABI = ABI::V6;

/// Device files a command may read and write: the harmless ones. The rest of
/// `/dev` (disks, memory) is out of reach, even for root.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// The Landlock ABI version of the running kernel, 0 when it has none.
pub(crate) fn kernel_abi() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer and size 0 and the VERSION flag,
    // the system call reads no memory and returns the ABI version or -1.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(version).unwrap_or(0)
}

/// Why the Landlock tier cannot run on a kernel without Landlock: not built in, or not
/// in the kernel's list of security modules.
pub(crate) fn no_landlock() -> Unavailable {
    let lsm = std::fs::read_to_string("/sys/kernel/security/lsm")
        .ok()
        .map(|text| text.trim().to_owned());
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

/// The ruleset of a command confined to `confinement`, with `private_tmp`
/// as its temporary directory.
pub(crate) fn ruleset(confinement: &Confinement, private_tmp: &Path) -> Result<OwnedFd, Error> {
    if kernel_abi() == 0 {
        return Err(Error::Isolation(no_landlock()));
    }
    let workspace = confinement.workspace()?;
    let hidden = confinement.hidden_paths();
    // A path hidden around the workspace is cut out of every grant, but where it holds the
    // workspace, the workspace is granted inside it as if it were not there: grants add up,
    // so that is all a command reaches in it, and what is made in it later is in no grant.
    let (holding, beside): (Vec<PathBuf>, Vec<PathBuf>) = confinement
        .hidden_around_paths()
        .into_iter()
        .partition(|place| workspace.starts_with(place));
    let mut read_holes = hidden.clone();
    read_holes.extend(beside.iter().cloned());
    read_holes.push(PathBuf::from("/dev"));
    let mut write_holes = hidden;
    write_holes.extend(confinement.read_only_paths());
    write_holes.extend(beside);
    let mut outside_holes = read_holes.clone();
    outside_holes.extend(holding.iter().cloned());
    let mut writable_holes = write_holes.clone();
    writable_holes.extend(holding.iter().cloned());

    let mut rules = Vec::new();
    let read = AccessFs::from_read(REQUESTED);
    let all = AccessFs::from_all(REQUESTED);
    rules.extend(
        grants(Path::new("/"), &outside_holes)
            .into_iter()
            .map(|path| (path, read)),
    );
    // What `/` no longer grants for the holding path: reading the workspace's kept paths
    // (its `.git`), which the workspace's own grant below leaves out.
    if !holding.is_empty() {
        rules.extend(
            grants(&workspace, &read_holes)
                .into_iter()
                .map(|path| (path, read)),
        );
    }
    rules.extend(DEVICES.iter().map(|device| (PathBuf::from(device), all)));
    rules.extend(
        grants(&workspace, &write_holes)
            .into_iter()
            .map(|path| (path, all)),
    );
    let top = at_the_top(REQUESTED);
    rules.extend(
        split_dirs(&workspace, &write_holes)
            .into_iter()
            .map(|dir| (dir, top)),
    );
    rules.push((private_tmp.to_owned(), all));
    for path in confinement.writable_paths() {
        rules.extend(
            grants(&path, &writable_holes)
                .into_iter()
                .map(|path| (path, all)),
        );
    }

    let failed = |error: landlock::RulesetError| {
        Error::Isolation(Unavailable::new(
            Tier::Landlock,
            format!("the kernel refused the Landlock ruleset: {error}"),
            "run `harness sandbox doctor`, or choose --sandbox bwrap or none",
        ))
    };
    let mut ruleset = Ruleset::default().handle_access(all).map_err(failed)?;
    if !confinement.allows_network() {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(REQUESTED))
            .map_err(failed)?;
    }
    let mut created = ruleset
        .scope(Scope::from_all(REQUESTED))
        .map_err(failed)?
        .create()
        .map_err(failed)?;
    for (path, access) in rules {
        // A path that vanished since it was listed is simply not granted.
        let Ok(fd) = PathFd::new(&path) else { continue };
        let access = if path.is_dir() {
            access
        } else {
            access & AccessFs::from_file(REQUESTED)
        };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(failed)?;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| Error::Isolation(no_landlock()))
}

/// What a directory of the workspace that [`grants`] splits (the top, and each directory
/// between it and a kept or hidden path) is granted itself, so that ordinary work there
/// works: listing it, and making, writing, renaming and removing entries in it. Not reading
/// or executing a file's content: that would reach the hidden paths below it. Landlock grants
/// by hierarchy, so these rights reach everything below too, `.git` and the protected
/// names among it: what a command changes there is put back after it (`repair`).
fn at_the_top(abi: ABI) -> landlock::BitFlags<AccessFs> {
    let rights: landlock::BitFlags<AccessFs> = [
        AccessFs::ReadDir,
        AccessFs::WriteFile,
        AccessFs::Truncate,
        AccessFs::RemoveDir,
        AccessFs::RemoveFile,
        AccessFs::MakeDir,
        AccessFs::MakeReg,
        AccessFs::MakeSock,
        AccessFs::MakeFifo,
        AccessFs::MakeSym,
        AccessFs::Refer,
    ]
    .into_iter()
    .collect();
    rights & AccessFs::from_all(abi)
}

/// The directories of `workspace` that [`grants`] splits because a hole is below them: the
/// workspace itself and each directory between it and a hole in it, none inside a hole.
fn split_dirs(workspace: &Path, holes: &[PathBuf]) -> Vec<PathBuf> {
    if holes.iter().any(|hole| workspace.starts_with(hole)) {
        return Vec::new();
    }
    let mut dirs = vec![workspace.to_owned()];
    for hole in holes.iter().filter(|hole| hole.starts_with(workspace)) {
        let between = hole.ancestors().skip(1).take_while(|dir| *dir != workspace);
        dirs.extend(between.map(Path::to_path_buf));
    }
    // A directory inside a hole (a kept path under a hidden directory) stays in it.
    dirs.retain(|dir| !holes.iter().any(|hole| dir.starts_with(hole)));
    dirs.sort();
    dirs.dedup();
    dirs
}

/// The paths to grant so that everything under `root` is covered except the
/// `holes` (resolved paths) and what is under them.
///
/// `root` itself when no hole is under it; nothing when it is a hole;
/// otherwise the grants of each of its entries. A symbolic link among them is
/// granted as its target, unless the target is, holds or is in a hole.
fn grants(root: &Path, holes: &[PathBuf]) -> Vec<PathBuf> {
    if holes.iter().any(|hole| root.starts_with(hole)) {
        return Vec::new();
    }
    if !holes.iter().any(|hole| hole.starts_with(root)) {
        return vec![root.to_owned()];
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut granted = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|kind| kind.is_symlink()) {
            let Ok(target) = path.canonicalize() else {
                continue;
            };
            let touches_a_hole = holes
                .iter()
                .any(|hole| target.starts_with(hole) || hole.starts_with(&target));
            if !touches_a_hole {
                granted.push(target);
            }
            continue;
        }
        granted.extend(grants(&path, holes));
    }
    granted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_abi_is_nonzero_exactly_when_the_kernel_creates_a_ruleset() {
        // Creating a real ruleset (one that handles `execute`) is the
        // oracle, a different call from the version query.
        let handled_access_fs: u64 = 1;
        // SAFETY: the attribute pointer points to a live u64 of the size
        // passed (the kernel's minimum attribute size); a descriptor it
        // returns is closed below.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::from_ref(&handled_access_fs),
                std::mem::size_of::<u64>(),
                0u32,
            )
        };
        let created = fd >= 0;
        if let Ok(fd) = libc::c_int::try_from(fd)
            && created
        {
            // SAFETY: `fd` is the descriptor the kernel just returned.
            unsafe { libc::close(fd) };
        }
        assert_eq!(kernel_abi() > 0, created, "ruleset call returned {fd}");
    }

    #[test]
    fn grants_cut_out_the_holes_and_keep_everything_else() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        for d in [
            "home/.ssh",
            "home/.config/gh",
            "home/.config/nvim",
            "home/src",
            "etc",
        ] {
            std::fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        std::fs::write(root.join("home/.netrc"), "").expect("netrc");
        std::os::unix::fs::symlink(root.join("home/.ssh"), root.join("home/keys")).expect("link");
        std::os::unix::fs::symlink(root.join("etc"), root.join("home/etc-link")).expect("link");
        // A link to a directory holding a hole, and one into a hole: neither is granted.
        std::os::unix::fs::symlink(root.join("home/.config"), root.join("home/cfg")).expect("link");
        std::fs::create_dir_all(root.join("home/.ssh/sub")).expect("mkdir");
        std::os::unix::fs::symlink(root.join("home/.ssh/sub"), root.join("home/sub"))
            .expect("link");
        let holes = [
            root.join("home/.ssh"),
            root.join("home/.config/gh"),
            root.join("home/.netrc"),
        ];
        let mut granted = grants(&root, &holes);
        granted.sort();
        assert_eq!(
            granted,
            [
                root.join("etc"),
                root.join("etc"),
                root.join("home/.config/nvim"),
                root.join("home/src"),
            ]
        );
        assert_eq!(grants(&root.join("etc"), &holes), [root.join("etc")]);
        assert!(grants(&root.join("home/.ssh"), &holes).is_empty());
        assert!(grants(&root.join("home/.ssh/sub"), &holes).is_empty());
    }

    #[test]
    fn this_kernel_reports_its_abi() {
        // The CI machines and this one have Landlock; a kernel without it
        // reports 0, never garbage.
        assert!(kernel_abi() <= 64);
    }
}
