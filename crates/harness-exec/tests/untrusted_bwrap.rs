//! The harness runs `bwrap` itself, unconfined: never one from where commands can write.
//!
//! One test in a binary of its own: it sets this process's `PATH` and current directory,
//! which every other test of the same binary would see.

// Setting `PATH` is `unsafe` since edition 2024: no other thread may read the environment.
#![allow(unsafe_code)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use harness_exec::{Confinement, Isolation, Policy, RunOptions, Runner, Tier, preflight};

/// A `bwrap` in `dir` that leaves `marker` behind, then runs the real one.
fn impostor(dir: &Path, real: &Path, marker: &Path) {
    let bwrap = dir.join("bwrap");
    let script = format!(
        "#!/bin/sh\ntouch '{}'\nexec '{}' \"$@\"\n",
        marker.display(),
        real.display()
    );
    std::fs::write(&bwrap, script).expect("write");
    std::fs::set_permissions(&bwrap, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn no_bwrap_from_the_workspace_a_writable_path_or_the_current_directory_is_run() {
    let system = std::env::var_os("PATH").expect("PATH");
    let Some(real) = std::env::split_paths(&system)
        .map(|dir| dir.join("bwrap"))
        .find(|bwrap| bwrap.is_file())
    else {
        assert!(
            std::env::var_os("HARNESS_CI_ALL_TIERS").is_none(),
            "CI must have bwrap"
        );
        return;
    };
    // Outside /tmp, which bwrap's private /tmp would hide.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let (workspace, cache, here) = (root.join("ws"), root.join("cache"), root.join("here"));
    let marker = root.join("ran");
    for place in [&workspace, &cache, &here] {
        std::fs::create_dir_all(place).expect("mkdir");
        impostor(place, &real, &marker);
    }
    let path = |first: &[&PathBuf]| {
        std::env::join_paths(
            first
                .iter()
                .map(|dir| dir.to_path_buf())
                .chain(std::env::split_paths(&system)),
        )
        .expect("join")
    };
    let confinement = Confinement::new(&workspace)
        .home(root.join("home"))
        .writable(&cache);
    // SAFETY (of the test): the only test in this binary, so no other thread reads the
    // environment meanwhile.
    unsafe { std::env::set_var("PATH", path(&[&workspace, &cache])) };
    std::env::set_current_dir(&here).expect("cd");

    preflight::probe_for(Tier::Bwrap, &confinement).expect("the system's bwrap works");
    let choice = preflight::choose_for(preflight::Sandbox::Auto, &confinement).expect("auto");
    assert_eq!(choice.tier, Tier::Bwrap);
    let outcome = Runner::new()
        .policy(Policy::allowlist(["true"]))
        .isolation(Isolation::new(Tier::Bwrap, confinement.clone()))
        .run(&["true"], &RunOptions::new(&workspace))
        .expect("runs");
    assert!(outcome.is_success(), "{outcome:?}");
    assert!(!marker.exists(), "a bwrap from where commands write ran");

    // Without a confinement to go by, the current directory is where commands write (a
    // temporary directory of its own, so that this one does not hold `here`, as /tmp does
    // where the tree is built under it).
    let tmp = root.join("tmp");
    std::fs::create_dir(&tmp).expect("mkdir");
    unsafe { std::env::set_var("TMPDIR", &tmp) };
    unsafe { std::env::set_var("PATH", path(&[&here])) };
    preflight::probe(Tier::Bwrap).expect("the system's bwrap works");
    assert_eq!(
        preflight::host_facts().bwrap.as_deref(),
        Some(real.canonicalize().expect("canonical").as_path())
    );
    assert!(!marker.exists(), "a bwrap from the current directory ran");

    // The root directory is no workspace: started there, the system's bwrap is run.
    std::env::set_current_dir("/").expect("cd /");
    unsafe { std::env::set_var("PATH", &system) };
    preflight::probe(Tier::Bwrap).expect("the system's bwrap works from /");
    assert!(preflight::host_facts().bwrap.is_some());
    std::env::set_current_dir(&here).expect("cd");

    // With only such a one, the tier cannot run, and says why.
    let only = std::env::join_paths([&workspace]).expect("join");
    unsafe { std::env::set_var("PATH", &only) };
    let refused = preflight::probe_for(Tier::Bwrap, &confinement).expect_err("refused");
    assert!(
        refused.reason().contains("is where commands can write"),
        "{refused}"
    );
    let error = Runner::new()
        .parent_env([("PATH", "/usr/bin:/bin")])
        .policy(Policy::allowlist(["true"]))
        .isolation(Isolation::new(Tier::Bwrap, confinement))
        .run(&["true"], &RunOptions::new(&workspace))
        .expect_err("refused");
    assert!(
        error.to_string().contains("is where commands can write"),
        "{error}"
    );
    assert!(!marker.exists());
}
