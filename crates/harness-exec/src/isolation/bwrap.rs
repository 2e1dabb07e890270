//! The bubblewrap tier: the command runs through `bwrap`, in new namespaces.
//!
//! Mounts are stacked in order, later ones on top: the root filesystem
//! read-only, a minimal `/dev`, a fresh `/proc` of the new PID namespace, an
//! empty private `/tmp`, the workspace writable, its `.git` and the
//! protected names read-only again on top, the extra writable paths, the
//! hidden paths, covered by an empty tmpfs (a directory) or `/dev/null` (a
//! file), and last the paths hidden around the workspace, covered alike, with
//! the workspace bound again on top when one of them holds it.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use super::Confinement;
use crate::error::{Error, Unavailable};
use crate::tier::Tier;

/// The `bwrap` command that runs a program confined to `confinement`, in
/// `cwd`; the caller appends `--`, the program and its arguments.
///
/// The environment is not passed with `--clearenv` and `--setenv`: the
/// runner already starts `bwrap` itself with the scrubbed environment only,
/// which `bwrap` hands on unchanged, and values on `bwrap`'s command line
/// would be readable by every user of the machine in `/proc/<pid>/cmdline`.
pub(crate) fn command(confinement: &Confinement, cwd: &Path) -> Result<Command, Error> {
    let bwrap = trusted_bwrap(&confinement.places_written()).map_err(Error::Isolation)?;
    let mut command = Command::new(bwrap);
    command.args(arguments(confinement, cwd)?);
    Ok(command)
}

/// GNU `env`, when it can reset `SIGINT` to its default (coreutils 8.31+): `bwrap`
/// ignores `SIGINT` so that an interrupt does not kill it, and the command
/// would inherit that. Without such an `env`, the command starts with
/// `SIGINT` ignored, and an interrupt ends it with `SIGTERM` 1 s later.
pub(crate) fn signal_resetter() -> Option<&'static Path> {
    static ENV: OnceLock<Option<PathBuf>> = OnceLock::new();
    ENV.get_or_init(|| {
        ["/usr/bin/env", "/bin/env"]
            .into_iter()
            .map(PathBuf::from)
            .find(|env| {
                Command::new(env)
                    .args(["--default-signal=INT", "true"])
                    .env_clear()
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|status| status.success())
            })
    })
    .as_deref()
}

/// Why the bwrap tier cannot run without a `bwrap` program.
pub(crate) fn no_bwrap() -> Unavailable {
    Unavailable::new(
        Tier::Bwrap,
        "no `bwrap` program on PATH",
        "install bubblewrap (`apt-get install bubblewrap`, `dnf install bubblewrap`)",
    )
}

/// The first `bwrap` in one of this process's `PATH`'s absolute directories, resolved,
/// wherever it lies.
pub(crate) fn find_bwrap() -> Option<PathBuf> {
    find_bwrap_in(std::env::var_os("PATH").as_deref(), |_| true)
}

/// The `bwrap` to run: the first in one of `PATH`'s absolute directories that does not
/// lie in one of `untrusted`, the places commands can write (resolved). The harness runs
/// it itself, unconfined, so one a command wrote there would run the next command as it
/// likes: in the workspace when `PATH` has an empty entry (the current directory) or a
/// directory of the workspace (a virtual environment's `bin`, say).
///
/// # Errors
///
/// No `bwrap` at all, or only one where commands can write, saying which.
pub(crate) fn trusted_bwrap(untrusted: &[PathBuf]) -> Result<PathBuf, Unavailable> {
    let path = std::env::var_os("PATH");
    let trusted = |bwrap: &Path| !untrusted.iter().any(|place| bwrap.starts_with(place));
    find_bwrap_in(path.as_deref(), trusted).ok_or_else(|| match find_bwrap() {
        Some(found) => Unavailable::new(
            Tier::Bwrap,
            format!(
                "the `bwrap` on PATH ({}) is where commands can write",
                found.display()
            ),
            "install bubblewrap in a system directory (`apt-get install bubblewrap`), \
             or take that directory off PATH",
        ),
        None => no_bwrap(),
    })
}

/// The first `bwrap` file in one of `search_path`'s absolute directories whose resolved
/// path (links followed) `trusted` accepts, resolved. A relative entry, and an empty one,
/// which names the current directory (often the workspace), is skipped, as Go's
/// `exec.LookPath` does since 1.19.
fn find_bwrap_in(search_path: Option<&OsStr>, trusted: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    std::env::split_paths(search_path?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("bwrap"))
        .filter(|candidate| candidate.is_file())
        .filter_map(|candidate| candidate.canonicalize().ok())
        .find(|bwrap| trusted(bwrap))
}

/// Every `bwrap` option, in the order the mounts stack.
fn arguments(confinement: &Confinement, cwd: &Path) -> Result<Vec<OsString>, Error> {
    let workspace = confinement.workspace()?;
    let mut args = Args::default();
    args.flags(&[
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        // Run as root, bwrap keeps root's capabilities for the command, with
        // which it could unmount what hides `~/.ssh` or remount `/` writable
        // in its own mount namespace, onto the host's files.
        "--cap-drop",
        "ALL",
    ]);
    if !confinement.allows_network() {
        args.flags(&["--unshare-net"]);
    }
    args.mount("--ro-bind", Path::new("/"), Path::new("/"));
    args.one("--dev", Path::new("/dev"));
    args.one("--proc", Path::new("/proc"));
    // Read-only: the command's own processes are the only ones in this /proc,
    // but /proc/sys is the host kernel's settings, which bwrap leaves writable
    // to a command running as root (`kernel/core_pattern` names a program the
    // host's kernel runs as root on any crash).
    args.one("--remount-ro", Path::new("/proc"));
    args.one("--tmpfs", Path::new("/tmp"));
    if let Some(home) = confinement.home_under_tmp() {
        args.mount("--ro-bind", &home, &home);
    }
    args.mount("--bind", &workspace, &workspace);
    for path in confinement.writable_paths() {
        args.mount("--bind", &path, &path);
    }
    // A read-only mount goes with the directory that holds it when that is renamed, and a
    // mount point cannot be renamed: each directory between one and the writable place
    // that holds it is bound onto itself, before the read-only binds it holds.
    let pinned = confinement.pinned_dirs();
    let read_only = confinement.read_only_paths();
    let hidden = confinement.hidden_paths();
    let kept = |args: &mut Args, inside: &dyn Fn(&Path) -> bool| {
        for dir in pinned.iter().filter(|dir| inside(dir)) {
            args.mount("--bind", dir, dir);
        }
        // After every writable bind, so that none can make them writable again.
        for path in read_only.iter().filter(|path| inside(path)) {
            args.mount("--ro-bind", path, path);
        }
        for path in hidden.iter().filter(|path| inside(path)) {
            args.cover(path);
        }
    };
    kept(&mut args, &|_| true);
    // Last, so that no writable bind shows them again; and a workspace inside one is bound
    // again on top, with what is kept and hidden in it, as the only way through.
    let around = confinement.hidden_around_paths();
    for path in &around {
        args.cover(path);
    }
    if around.iter().any(|place| workspace.starts_with(place)) {
        args.mount("--bind", &workspace, &workspace);
        kept(&mut args, &|path| path.starts_with(&workspace));
    }
    args.one("--chdir", cwd);
    Ok(args.0)
}

/// `bwrap`'s command line, built up.
#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn flags(&mut self, flags: &[&str]) {
        self.0.extend(flags.iter().map(OsString::from));
    }

    fn one(&mut self, option: &str, path: &Path) {
        self.0.push(option.into());
        self.0.push(path.into());
    }

    fn mount(&mut self, option: &str, source: &Path, destination: &Path) {
        self.0.push(option.into());
        self.0.push(source.into());
        self.0.push(destination.into());
    }

    /// Covers `path`: an empty tmpfs over a directory, `/dev/null` over anything else.
    fn cover(&mut self, path: &Path) {
        if path.is_dir() {
            self.one("--tmpfs", path);
        } else {
            self.mount("--ro-bind", Path::new("/dev/null"), path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bwrap_is_found_where_the_shell_finds_it() {
        // The shell's own PATH search is the oracle, so this holds on a
        // machine with bwrap and on one without.
        let shell = std::process::Command::new("sh")
            .args(["-c", "command -v bwrap || true"])
            .output()
            .expect("sh runs");
        let found = String::from_utf8_lossy(&shell.stdout).trim().to_owned();
        let expected = (!found.is_empty()).then(|| PathBuf::from(found));
        assert_eq!(find_bwrap(), expected);
    }

    #[test]
    fn only_a_bwrap_in_an_absolute_directory_that_commands_cannot_write_is_run() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let (workspace, system) = (root.join("workspace"), root.join("system"));
        for place in [&root, &workspace, &system] {
            std::fs::create_dir_all(place).expect("mkdir");
            let bwrap = place.join("bwrap");
            std::fs::write(&bwrap, "#!/bin/sh\n").expect("write");
            std::fs::set_permissions(&bwrap, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
        }
        // The empty entry and `.` name the current directory, `..`-style paths one
        // relative to it: none is looked in, wherever the harness was started.
        let cwd = std::env::current_dir().expect("cwd");
        let up: PathBuf = std::iter::repeat_n("..", cwd.components().count() - 1).collect();
        let relative = up.join(root.strip_prefix("/").expect("absolute"));
        let search_path = std::env::join_paths([
            PathBuf::new(),
            PathBuf::from("."),
            relative,
            workspace.clone(),
            system.clone(),
        ])
        .expect("join");
        let outside = |bwrap: &Path| !bwrap.starts_with(&workspace);
        assert_eq!(
            find_bwrap_in(Some(&search_path), outside),
            Some(system.join("bwrap"))
        );
        assert_eq!(
            find_bwrap_in(Some(&search_path), |_| true),
            Some(workspace.join("bwrap")),
            "the first absolute one"
        );
        // Reached through a link, it is judged where it really is.
        let linked = root.join("linked");
        std::fs::create_dir(&linked).expect("mkdir");
        std::os::unix::fs::symlink(workspace.join("bwrap"), linked.join("bwrap")).expect("link");
        let through_link = std::env::join_paths([&linked]).expect("join");
        assert_eq!(find_bwrap_in(Some(&through_link), outside), None);
        assert_eq!(find_bwrap_in(None, |_| true), None);
    }

    fn text(args: &[OsString]) -> String {
        args.iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn mounts_stack_with_the_protected_and_hidden_paths_on_top() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let ws = root.join("ws");
        let home = root.join("home");
        let cache = root.join("cache");
        let store = cache.join("store");
        for d in [ws.join(".git"), home.join(".ssh"), store.clone()] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(ws.join("harness.toml"), "").expect("toml");
        std::fs::write(home.join(".netrc"), "").expect("netrc");
        let confinement = Confinement::new(&ws)
            .protect_in_workspace("harness.toml")
            .home(&home)
            .writable(&cache)
            .read_only(&store);
        let args = text(&arguments(&confinement, &ws).expect("arguments"));
        // A temporary home sits under /tmp, which the private /tmp would hide.
        let home_view = if home.starts_with("/tmp") {
            format!("--ro-bind {h} {h} ", h = home.display())
        } else {
            String::new()
        };
        let (ws, home, cache, store) = (
            ws.display(),
            home.display(),
            cache.display(),
            store.display(),
        );
        // The read-only paths come after every writable one, so none is writable again.
        assert_eq!(
            args,
            format!(
                "--die-with-parent --new-session --unshare-pid --unshare-ipc --unshare-uts \
                 --cap-drop ALL \
                 --unshare-net --ro-bind / / --dev /dev --proc /proc --remount-ro /proc --tmpfs /tmp \
                 {home_view}--bind {ws} {ws} --bind {cache} {cache} --ro-bind {store} {store} \
                 --ro-bind {ws}/.git {ws}/.git --ro-bind {ws}/harness.toml {ws}/harness.toml \
                 --ro-bind /dev/null {home}/.netrc --tmpfs {home}/.ssh --chdir {ws}"
            )
        );
        let networked = text(&arguments(&confinement.network(true), dir.path()).expect("args"));
        assert!(!networked.contains("--unshare-net"));
    }

    #[test]
    fn what_is_hidden_around_the_workspace_is_covered_last_and_the_workspace_bound_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let out = root.join("out");
        let ws = out.join("a/work");
        let tasks = root.join("tasks.jsonl");
        std::fs::create_dir_all(ws.join(".git")).expect("mkdir");
        std::fs::create_dir_all(root.join("home")).expect("home");
        std::fs::write(ws.join(".env"), "").expect("env");
        std::fs::write(&tasks, "").expect("tasks");
        let confinement = Confinement::new(&ws)
            .home(root.join("home"))
            .hide(ws.join(".env"))
            .hide_around(&out)
            .hide_around(&tasks)
            .hide_around(root.join("gone"));
        let args = text(&arguments(&confinement, &ws).expect("arguments"));
        let (ws, out, tasks) = (ws.display(), out.display(), tasks.display());
        // Covered after every bind, so that none shows them again; the workspace inside one
        // bound on top, with its `.git` and hidden file again, its only way through. A path
        // that does not exist is left out.
        let kept = format!("--ro-bind {ws}/.git {ws}/.git --ro-bind /dev/null {ws}/.env");
        assert!(
            args.ends_with(&format!(
                "--bind {ws} {ws} {kept} --tmpfs {out} --ro-bind /dev/null {tasks} \
                 --bind {ws} {ws} {kept} --chdir {ws}"
            )),
            "{args}"
        );
    }
}
