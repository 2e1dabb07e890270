//! The command policy: a seatbelt against accidents, not a wall.
//!
//! With an argv (never a shell) the policy matches programs and arguments, it
//! does not parse shell grammar. It stops `rm -rf /` typed by a confused
//! model; it cannot stop a determined one, because an interpreter
//! (`sh -c`, `python -c`, `node -e`) can do anything the user can.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

use crate::resolve::{Resolved, resolve};
use crate::wrappers::{Unwrapped, unwrap};

/// What every refusal tells the model, so that it neither retries the same
/// thing nor hunts for a way around.
const SEATBELT: &str = "The command policy prevents accidents only; an interpreter such as `sh -c`, \
`python -c` or `node -e` can do anything you can, so do not work around the refusal: \
do the task another way or ask the user.";

/// Programs the blocklist refuses, with the reason given to the model.
const BLOCKED: &[(&str, &str)] = &[
    ("sudo", "privilege escalation"),
    ("su", "privilege escalation"),
    ("doas", "privilege escalation"),
    ("pkexec", "privilege escalation"),
    ("run0", "privilege escalation"),
    ("shutdown", "host control"),
    ("reboot", "host control"),
    ("halt", "host control"),
    ("poweroff", "host control"),
    ("mkfs", "formats a filesystem"),
    ("mke2fs", "formats a filesystem"),
    ("mount", "filesystem control"),
    ("umount", "filesystem control"),
    ("systemctl", "service control"),
    ("service", "service control"),
    ("killall5", "signals every process"),
];

/// The directories at the top of the filesystem that hold the system: `rm`
/// must not delete them.
const SYSTEM_DIRECTORIES: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media",
    "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/tmp", "/usr",
    "/var",
];

/// Devices `dd` may write: they hold no data.
const HARMLESS_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr"];

/// Process names a `pkill`/`killall` pattern is tried against: a pattern that
/// matches all of them would match every process on the machine.
const COMMON_PROCESSES: &[&str] = &[
    "systemd", "init", "sshd", "bash", "harness", "cargo", "python3",
];

/// Decides whether a command may run.
///
/// # Decision order
///
/// 1. An empty argv is refused.
/// 2. Launchers are looked through: every program in [`LAUNCHERS`](crate::LAUNCHERS)
///    (`env`, `nice`, `nohup`, `setsid`, `ionice`, `taskset`, `chrt`, `flock`,
///    `timeout`, `stdbuf`, `time`, `xargs`, `command`, `exec`, `busybox`,
///    `unshare`, `chroot`, `nsenter`, `setpriv`, `prlimit`, `numactl`,
///    `strace`, `ltrace`, `fakeroot`, `eatmydata`, `unbuffer`, and the
///    `sudo`-style `sudo`, `doas`, `pkexec`, `run0`), with their options
///    parsed as the launcher parses them (values attached or separate, long
///    options abbreviated, `NAME=value` before `env`'s command). `env -S`
///    strings are split as GNU `env` splits them (quotes, escapes, comments,
///    `${NAME}` with the command's `HOME` and `PATH`); `flock … -c CODE`
///    runs `sh -c CODE`. An option a launcher's table does not know, a
///    missing value, or an `env -S` string that `env` would reject or that
///    expands another variable is refused: which argument is the program
///    would be a guess. The result is a chain: each launcher, then the
///    command it runs, so `env nice sudo ls` is the chain `env`, `nice`,
///    `sudo`, `ls`.
/// 3. Each program in the chain is named by its basename as written, and by
///    the basename of the file it resolves to on `PATH` with symlinks
///    followed (so `/usr/bin/sudo`, `./sudo` and a symlink to `sudo` all
///    count as `sudo`).
/// 4. **Allowlist mode**: every program in the chain must be on the
///    allowlist, matched by its name as written: an entry without `/` matches
///    a bare program name (found on `PATH`), an entry with `/` matches that
///    exact path. Anything else is refused.
///
///    **Blocklist mode** (the default): a program in the chain is refused when
///    either of its names is blocked: `sudo`, `su`, `doas`, `pkexec`, `run0`
///    (privilege escalation); `shutdown`, `reboot`, `halt`, `poweroff` (host
///    control); `mkfs`, `mkfs.*`, `mke2fs` (formatting); `mount`, `umount`;
///    `systemctl`, `service`; `killall5`.
/// 5. In both modes the innermost command's arguments are checked, and the
///    command is refused when it is:
///    - `rm` with `--no-preserve-root` (or an abbreviation of it), or aimed
///      (with any flags, recursive or not) at the root, a top-level system
///      directory (`/usr`, `/etc`, `/bin`, `/var`, `/boot`, `/home`, `/tmp`,
///      …), the home directory or any directory containing it, or the
///      working directory or any directory containing it; paths are taken
///      from the working directory with `.`, `..` and repeated slashes
///      resolved, and again with symlinks resolved; `~`, `$HOME` and
///      `${HOME}` stand for the home directory and a trailing `/*` for the
///      directory;
///    - `chmod`, `chown` or `chgrp` with `-R`/`--recursive` on `/` or `/*`;
///    - `dd` with `of=` a path under `/dev` (normalized as for `rm`, and
///      with symlinks resolved), other than `/dev/null`, `/dev/zero`,
///      `/dev/stdout` and `/dev/stderr`;
///    - `kill` aimed at process `-1` (every process): `kill -1`, `kill -9 -1`,
///      `kill -- -1`;
///    - `pkill` or `killall` with no name or pattern (selecting processes by
///      user or group only), or whose pattern (for `killall`, with
///      `-r`/`--regexp`) would match every process.
/// 6. Anything else is allowed.
///
/// # What this does not do
///
/// It does not parse shell code: `sh -c 'sudo ls'` and `flock f -c 'sudo ls'`
/// are allowed in blocklist mode, because the program is `sh`. It does not
/// see arguments `xargs` reads from its input, nor what a launcher not in
/// [`LAUNCHERS`](crate::LAUNCHERS) runs, nor a variable `env -S` expands
/// that is not `HOME` or `PATH` (refused instead). `rm` is judged by its
/// arguments: `find / -delete` is not `rm`. Use the allowlist, which names
/// every program that may run, when the task allows it; run the whole
/// harness in a container, VM or as a separate user when the input is
/// untrusted.
///
/// ```
/// use harness_exec::Policy;
///
/// let blocklist = Policy::blocklist();
/// assert!(blocklist.check(&["cargo", "test"]).is_ok());
/// assert!(blocklist.check(&["env", "sudo", "ls"]).is_err());
/// assert!(blocklist.check(&["rm", "-rf", "/"]).is_err());
///
/// let allowlist = Policy::allowlist(["cargo", "git"]);
/// assert!(allowlist.check(&["git", "status"]).is_ok());
/// assert!(allowlist.check(&["curl", "example.com"]).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct Policy {
    /// The allowed programs, or `None` in blocklist mode.
    allowed: Option<BTreeSet<String>>,
}

/// Why a command was refused, phrased for the model that asked for it.
///
/// Its `Display` names the command, the rule it broke and what to do instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("command refused: {reason}. {SEATBELT}")]
pub struct Refusal {
    /// The program the refusal is about (basename), empty for an empty argv.
    program: String,
    /// The rule broken, as a sentence fragment.
    reason: String,
}

impl Refusal {
    fn new(program: &str, reason: impl Into<String>) -> Refusal {
        Refusal {
            program: program.to_owned(),
            reason: reason.into(),
        }
    }

    /// The program the refusal is about, by basename (empty for an empty argv).
    pub fn program(&self) -> &str {
        &self.program
    }
}

/// Where programs are looked up, and the home directory `rm` must not touch.
#[derive(Debug, Default)]
pub(crate) struct Lookup {
    /// `PATH` of the command.
    pub(crate) search_path: Option<OsString>,
    /// Working directory of the command.
    pub(crate) cwd: PathBuf,
    /// `HOME` of the command.
    pub(crate) home: Option<OsString>,
}

impl Lookup {
    /// The lookup this process would use: its `PATH`, `HOME` and working directory.
    fn of_this_process() -> Lookup {
        Lookup {
            search_path: std::env::var_os("PATH"),
            cwd: std::env::current_dir().unwrap_or_default(),
            home: std::env::var_os("HOME"),
        }
    }
}

/// One program in a wrapper chain.
struct Step {
    /// The program as written.
    program: String,
    /// Its basename as written.
    name: String,
    /// The basename of the file it resolves to, symlinks followed.
    target: Option<String>,
    /// Its arguments, the wrapped command's included.
    args: Vec<String>,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy::blocklist()
    }
}

impl Policy {
    /// The default mode: refuse the blocked programs and dangerous arguments
    /// listed under "Decision order".
    pub fn blocklist() -> Policy {
        Policy { allowed: None }
    }

    /// Allow only the named programs (see "Decision order" for how names
    /// match); dangerous arguments are refused as in blocklist mode.
    pub fn allowlist<I, S>(programs: I) -> Policy
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Policy {
            allowed: Some(programs.into_iter().map(Into::into).collect()),
        }
    }

    /// Checks `argv`, resolving programs on this process's `PATH` from its
    /// working directory.
    ///
    /// [`Runner::run`](crate::Runner::run) checks with the command's own
    /// `PATH`, `HOME` and working directory instead.
    pub fn check<S: AsRef<OsStr>>(&self, argv: &[S]) -> Result<(), Refusal> {
        self.check_in(argv, &Lookup::of_this_process())
    }

    /// Checks `argv` for a command that would run with `lookup`.
    pub(crate) fn check_in<S: AsRef<OsStr>>(
        &self,
        argv: &[S],
        lookup: &Lookup,
    ) -> Result<(), Refusal> {
        let argv: Vec<String> = argv
            .iter()
            .map(|arg| arg.as_ref().to_string_lossy().into_owned())
            .collect();
        if argv.is_empty() {
            return Err(Refusal::new(
                "",
                "the command is empty; give the program as the first element",
            ));
        }
        let chain = chain(argv, lookup)?;
        for step in &chain {
            self.check_program(step)?;
        }
        let innermost = chain
            .last()
            .expect("a chain has at least the program it started from");
        check_arguments(innermost, lookup)
    }

    fn check_program(&self, step: &Step) -> Result<(), Refusal> {
        match &self.allowed {
            Some(allowed) => {
                let entry = if step.program.contains('/') {
                    &step.program
                } else {
                    &step.name
                };
                if allowed.contains(entry) {
                    return Ok(());
                }
                let list: Vec<&str> = allowed.iter().map(String::as_str).collect();
                Err(Refusal::new(
                    &step.name,
                    format!(
                        "`{}` is not on the allowlist (allowed: {})",
                        step.program,
                        list.join(", ")
                    ),
                ))
            }
            None => {
                if let Some(reason) = blocked_reason(&step.name) {
                    return Err(Refusal::new(
                        &step.name,
                        format!("`{}` is not allowed ({reason})", step.name),
                    ));
                }
                match step
                    .target
                    .as_deref()
                    .and_then(|target| Some((target, blocked_reason(target)?)))
                {
                    Some((target, reason)) => Err(Refusal::new(
                        &step.name,
                        format!(
                            "`{}` runs `{target}`, which is not allowed ({reason})",
                            step.program
                        ),
                    )),
                    None => Ok(()),
                }
            }
        }
    }
}

/// The chain of programs `argv` runs: each launcher, then what it runs.
fn chain(argv: Vec<String>, lookup: &Lookup) -> Result<Vec<Step>, Refusal> {
    let vars = |name: &str| {
        let value = match name {
            "HOME" => lookup.home.as_ref(),
            "PATH" => lookup.search_path.as_ref(),
            _ => None,
        };
        value.map(|value| value.to_string_lossy().into_owned())
    };
    let mut chain = Vec::new();
    let mut argv = argv;
    loop {
        let mut args = argv;
        let program = args.remove(0);
        let step = Step {
            name: basename(&program),
            target: target_name(&program, lookup),
            program,
            args,
        };
        // A multi-call `busybox` runs the applet it is called as: only
        // `busybox` by that name takes its first argument as the applet.
        let target = step.target.as_ref().filter(|target| *target != "busybox");
        let unwrapped = [Some(&step.name), target]
            .into_iter()
            .flatten()
            .map(|name| unwrap(name, &step.args, &vars))
            .find(|unwrapped| *unwrapped != Unwrapped::Program);
        let name = step.name.clone();
        chain.push(step);
        match unwrapped {
            Some(Unwrapped::Command(inner)) => argv = inner,
            Some(Unwrapped::Opaque(reason)) => return Err(Refusal::new(&name, reason)),
            Some(Unwrapped::Program) | None => return Ok(chain),
        }
    }
}

/// The blocklist's reason for refusing the program `name`, if it does.
fn blocked_reason(name: &str) -> Option<&'static str> {
    if name.starts_with("mkfs.") {
        return Some("formats a filesystem");
    }
    BLOCKED
        .iter()
        .find(|(blocked, _)| *blocked == name)
        .map(|(_, reason)| *reason)
}

/// Refuses the dangerous argument patterns of decision step 5.
fn check_arguments(step: &Step, lookup: &Lookup) -> Result<(), Refusal> {
    let names = std::iter::once(step.name.as_str()).chain(step.target.as_deref());
    for name in names {
        let refusal = |reason: String| Err(Refusal::new(name, reason));
        match name {
            "rm" => {
                // Long options may be abbreviated: `--no-p` is `--no-preserve-root`.
                if step.args.iter().any(|arg| {
                    arg.strip_prefix("--").is_some_and(|long| {
                        long.starts_with('n') && "no-preserve-root".starts_with(long)
                    })
                }) {
                    return refusal("`rm --no-preserve-root` is refused".into());
                }
                if let Some((target, what)) = operands(&step.args)
                    .find_map(|arg| Some((arg, protected_directory(arg, lookup)?)))
                {
                    return refusal(format!("`rm` aimed at `{target}` would delete {what}"));
                }
            }
            "chmod" | "chown" | "chgrp" => {
                let recursive = step.args.iter().any(|arg| {
                    arg == "--recursive"
                        || (arg.starts_with('-') && !arg.starts_with("--") && arg.contains('R'))
                });
                if recursive && let Some(target) = operands(&step.args).find(|arg| is_root(arg)) {
                    return refusal(format!(
                        "`{name} -R` on `{target}` would change the whole filesystem"
                    ));
                }
            }
            "dd" => {
                let device = step
                    .args
                    .iter()
                    .filter_map(|arg| arg.strip_prefix("of="))
                    .find(|of| writes_a_device(of, lookup));
                if let Some(device) = device {
                    return refusal(format!("`dd of={device}` writes a raw device"));
                }
            }
            "kill" => {
                let every_process = match step.args.as_slice() {
                    [only] => only == "-1",
                    args => args.iter().skip(1).any(|arg| arg == "-1"),
                };
                if every_process {
                    return refusal("`kill -1` would signal every process".into());
                }
            }
            "pkill" | "killall" => {
                let values: &[&str] = if name == "pkill" {
                    &[
                        "-d",
                        "-g",
                        "-G",
                        "-P",
                        "-s",
                        "-t",
                        "-u",
                        "-U",
                        "-F",
                        "--signal",
                        "--pidfile",
                    ]
                } else {
                    &[
                        "-u",
                        "-s",
                        "-o",
                        "-y",
                        "-Z",
                        "--user",
                        "--signal",
                        "--older-than",
                        "--younger-than",
                    ]
                };
                let patterns: Vec<&String> = operands_with_values(&step.args, values).collect();
                let regex =
                    name == "pkill" || step.args.iter().any(|arg| arg == "-r" || arg == "--regexp");
                let everything = patterns.is_empty()
                    || (regex && patterns.iter().any(|p| matches_everything(p)));
                if everything {
                    return refusal(format!(
                        "`{name}` without a specific name would signal every process"
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The operands of a command: arguments that are not options, and every
/// argument after `--`.
fn operands(args: &[String]) -> impl Iterator<Item = &String> {
    operands_with_values(args, &[])
}

/// The operands of a command whose options in `values` take the next argument
/// as their value.
fn operands_with_values<'a>(
    args: &'a [String],
    values: &'a [&str],
) -> impl Iterator<Item = &'a String> {
    let mut options_ended = false;
    let mut skip_next = false;
    args.iter().filter(move |arg| {
        if skip_next {
            skip_next = false;
            return false;
        }
        if options_ended {
            return true;
        }
        if *arg == "--" {
            options_ended = true;
            return false;
        }
        if arg.starts_with('-') && arg.len() > 1 {
            skip_next = values.contains(&arg.as_str());
            return false;
        }
        true
    })
}

/// True if and only if `arg` names the root directory or everything in it:
/// `/`, `//`, `/..`, `/tmp/..`, `/*`.
fn is_root(arg: &str) -> bool {
    let dir = match arg.strip_suffix("/*") {
        Some("") => "/",
        Some(dir) => dir,
        None => arg,
    };
    dir.starts_with('/') && normalize(Path::new(dir)) == Path::new("/")
}

/// What deleting `arg` recursively would delete, when it is a directory
/// `rm` must not touch: the root, a top-level system directory, the home
/// directory or one that contains it, the working directory or one that
/// contains it (`~`, `$HOME` and `${HOME}` name the home directory; a
/// trailing `/*` means everything in the directory).
fn protected_directory(arg: &str, lookup: &Lookup) -> Option<&'static str> {
    // Without a known home, `~` stands for it: the literal forms still match.
    let home = lookup
        .home
        .as_deref()
        .filter(|home| !home.is_empty())
        .map_or(Path::new("~"), Path::new);
    let home = normalize(&lookup.cwd.join(home));
    let cwd = normalize(&lookup.cwd);
    let dir = arg.strip_suffix("/*").unwrap_or(arg);
    let dir = if dir.is_empty() { "/" } else { dir };
    let written = lookup.cwd.join(expand_home(dir, &home));
    // As written, and with symlinks resolved when it exists.
    let resolved = std::fs::canonicalize(&written).ok();
    [Some(normalize(&written)), resolved]
        .into_iter()
        .flatten()
        .find_map(|target| {
            if target == Path::new("/") {
                Some("the root directory")
            } else if SYSTEM_DIRECTORIES
                .iter()
                .any(|system| target == Path::new(system))
            {
                Some("a top-level system directory")
            } else if cwd.starts_with(&target) {
                Some("the working directory or a directory that contains it")
            } else if home.starts_with(&target) {
                Some("the home directory or a directory that contains it")
            } else {
                None
            }
        })
}

/// True if and only if `dd of=OF` writes a device: a path under `/dev`, as
/// written from the working directory or with symlinks resolved, other than
/// the harmless ones.
fn writes_a_device(of: &str, lookup: &Lookup) -> bool {
    let written = lookup.cwd.join(of);
    is_a_device(&normalize(&written), std::fs::canonicalize(&written).ok())
}

/// True if and only if a path, `normal` as written and `resolved` with its
/// symlinks followed, is a device other than a harmless one.
fn is_a_device(normal: &Path, resolved: Option<PathBuf>) -> bool {
    // `/dev/stdout` resolves to wherever this process's output goes, a
    // terminal's `/dev/pts/0` for one: the name as written is what counts.
    if is_harmless_device(normal) {
        return false;
    }
    [Some(normal.to_owned()), resolved]
        .into_iter()
        .flatten()
        .any(|path| path.starts_with("/dev") && !is_harmless_device(&path))
}

fn is_harmless_device(path: &Path) -> bool {
    HARMLESS_DEVICES
        .iter()
        .any(|device| path == Path::new(device))
}

/// `dir` with a leading `~`, `$HOME` or `${HOME}` replaced by `home`.
fn expand_home(dir: &str, home: &Path) -> PathBuf {
    for form in ["~", "$HOME", "${HOME}"] {
        if let Some(rest) = dir.strip_prefix(form)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return home.join(rest.trim_start_matches('/'));
        }
    }
    PathBuf::from(dir)
}

/// `path` with `.` and `..` resolved lexically (`..` of the root is the root).
fn normalize(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}

/// True if and only if the regex `pattern` matches every common process name.
fn matches_everything(pattern: &str) -> bool {
    match regex::Regex::new(pattern) {
        Ok(regex) => COMMON_PROCESSES.iter().all(|name| regex.is_match(name)),
        Err(_) => false,
    }
}

/// The last component of `program`, or `program` itself.
fn basename(program: &str) -> String {
    Path::new(program).file_name().map_or_else(
        || program.to_owned(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// The basename of the file `program` runs, following symlinks.
fn target_name(program: &str, lookup: &Lookup) -> Option<String> {
    let Resolved::Executable(path) =
        resolve(program.as_ref(), lookup.search_path.as_deref(), &lookup.cwd)
    else {
        return None;
    };
    let real = std::fs::canonicalize(path).ok()?;
    Some(real.file_name()?.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    /// A lookup with an empty `PATH` directory, so tests do not depend on the machine.
    fn lookup() -> (tempfile::TempDir, Lookup) {
        let dir = tempfile::tempdir().expect("tempdir");
        let lookup = Lookup {
            search_path: Some(dir.path().as_os_str().to_owned()),
            cwd: PathBuf::from("/work/project"),
            home: Some(OsString::from("/home/me")),
        };
        (dir, lookup)
    }

    fn check(policy: &Policy, argv: &[&str]) -> Result<(), Refusal> {
        let (_dir, lookup) = lookup();
        policy.check_in(argv, &lookup)
    }

    macro_rules! blocklist {
        ($($name:ident: [$($arg:literal),*] => $refused:expr;)*) => {$(
            #[test]
            fn $name() {
                let result = check(&Policy::blocklist(), &[$($arg),*]);
                assert_eq!(result.is_err(), $refused, "{result:?}");
                if let Err(refusal) = result {
                    let text = refusal.to_string();
                    assert!(text.starts_with("command refused: "), "{text}");
                    assert!(text.contains("`sh -c`"), "{text}");
                }
            }
        )*};
    }

    blocklist! {
        empty: [] => true;
        // The spec's list and its neighbours.
        sudo: ["sudo", "ls"] => true;
        su: ["su", "-"] => true;
        doas: ["doas", "ls"] => true;
        pkexec: ["pkexec", "ls"] => true;
        run0: ["run0", "ls"] => true;
        shutdown: ["shutdown", "now"] => true;
        reboot: ["reboot"] => true;
        halt: ["halt"] => true;
        poweroff: ["poweroff"] => true;
        mkfs: ["mkfs", "/dev/sda1"] => true;
        mkfs_ext4: ["mkfs.ext4", "/dev/sda1"] => true;
        mke2fs: ["mke2fs", "/dev/sda1"] => true;
        mount: ["mount", "/dev/sda1", "/mnt"] => true;
        umount: ["umount", "/mnt"] => true;
        systemctl: ["systemctl", "stop", "sshd"] => true;
        service: ["service", "sshd", "stop"] => true;
        killall5: ["killall5", "-9"] => true;
        by_absolute_path: ["/usr/bin/sudo", "ls"] => true;
        by_relative_path: ["./sudo", "ls"] => true;
        // Wrappers are looked through.
        env_sudo: ["env", "sudo", "ls"] => true;
        env_options_sudo: ["env", "-i", "-u", "HOME", "A=1", "sudo", "ls"] => true;
        env_split_sudo: ["env", "-S", "sudo ls"] => true;
        nice_sudo: ["nice", "-n", "5", "sudo", "ls"] => true;
        nohup_reboot: ["nohup", "reboot"] => true;
        timeout_mkfs: ["timeout", "-s", "KILL", "5", "mkfs.ext4", "/dev/sda"] => true;
        time_mount: ["time", "-p", "mount", "/mnt"] => true;
        stdbuf_systemctl: ["stdbuf", "-oL", "systemctl", "stop", "x"] => true;
        xargs_rm_root: ["xargs", "-0", "rm", "-rf", "/"] => true;
        nested_wrappers: ["env", "nice", "timeout", "5", "nohup", "sudo", "ls"] => true;
        wrapper_path: ["/usr/bin/env", "/usr/bin/sudo", "ls"] => true;
        wrapped_rm_root: ["nice", "rm", "-rf", "/"] => true;
        // rm
        rm_root: ["rm", "-rf", "/"] => true;
        rm_root_star: ["rm", "-rf", "/*"] => true;
        rm_root_dotdot: ["rm", "-rf", "/.."] => true;
        rm_root_double_slash: ["rm", "-rf", "//"] => true;
        rm_tilde: ["rm", "-rf", "~"] => true;
        rm_tilde_slash: ["rm", "-r", "~/"] => true;
        rm_tilde_star: ["rm", "-r", "~/*"] => true;
        rm_dollar_home: ["rm", "-rf", "$HOME"] => true;
        rm_braced_home: ["rm", "-rf", "${HOME}/"] => true;
        rm_home_path: ["rm", "-rf", "/home/me"] => true;
        rm_home_path_slash: ["rm", "-rf", "/home/me/"] => true;
        rm_home_path_star: ["rm", "-rf", "/home/me/*"] => true;
        rm_home_relative: ["rm", "-rf", "../../home/me"] => true;
        rm_tilde_dot: ["rm", "-rf", "~/."] => true;
        rm_home_parent_of_subdir: ["rm", "-rf", "$HOME/x/.."] => true;
        rm_tilde_subdir: ["rm", "-rf", "~/project"] => false;
        rm_tilde_user: ["rm", "-rf", "~user"] => false;
        rm_cwd_relative_dir: ["rm", "-rf", "me"] => false;
        rm_no_preserve_root: ["rm", "-rf", "--no-preserve-root", "x"] => true;
        rm_after_double_dash: ["rm", "-rf", "--", "/"] => true;
        rm_among_others: ["rm", "-rf", "build", "/"] => true;
        rm_build_dir: ["rm", "-rf", "build"] => false;
        rm_home_subdir: ["rm", "-rf", "/home/me/project/target"] => false;
        rm_tmp: ["rm", "-rf", "/tmp/x"] => false;
        rm_dash_named_file: ["rm", "--", "-/"] => false;
        // chmod, chown, chgrp
        chmod_recursive_root: ["chmod", "-R", "777", "/"] => true;
        chmod_recursive_cluster: ["chmod", "-fR", "777", "/*"] => true;
        chmod_recursive_long: ["chmod", "--recursive", "777", "/"] => true;
        chown_recursive_root: ["chown", "-R", "me", "/"] => true;
        chgrp_recursive_root: ["chgrp", "-R", "me", "/"] => true;
        chmod_root_not_recursive: ["chmod", "755", "/"] => false;
        chmod_recursive_project: ["chmod", "-R", "u+w", "src"] => false;
        chmod_long_option_with_r: ["chmod", "--reference=/", "x"] => false;
        chown_long_option_with_capital_r_on_root: ["chown", "--from=ROOT", "me", "/"] => false;
        chown_owner_with_capital_r_on_root: ["chown", "ROOT", "/"] => false;
        // dd
        dd_to_disk: ["dd", "if=/dev/zero", "of=/dev/sda", "bs=1M"] => true;
        dd_to_null: ["dd", "if=/dev/zero", "of=/dev/null", "count=1"] => false;
        dd_to_file: ["dd", "if=/dev/zero", "of=disk.img", "count=1"] => false;
        // kill
        kill_minus_one_alone: ["kill", "-1"] => true;
        kill_nine_everything: ["kill", "-9", "-1"] => true;
        kill_double_dash_everything: ["kill", "--", "-1"] => true;
        kill_signal_name_everything: ["kill", "-s", "KILL", "-1"] => true;
        kill_hup_one_process: ["kill", "-1", "1234"] => false;
        kill_one_process: ["kill", "1234"] => false;
        kill_nothing: ["kill"] => false;
        // pkill, killall
        pkill_by_user_only: ["pkill", "-u", "me"] => true;
        pkill_by_parent_only: ["pkill", "-P", "1234"] => true;
        pkill_dot: ["pkill", "."] => true;
        pkill_dot_star: ["pkill", "-9", ".*"] => true;
        pkill_word: ["pkill", "-f", "\\w"] => true;
        pkill_empty: ["pkill", ""] => true;
        pkill_named: ["pkill", "-u", "me", "node"] => false;
        pkill_invalid_regex: ["pkill", "("] => false;
        killall_by_user_only: ["killall", "-u", "me"] => true;
        killall_by_age_only: ["killall", "-o", "5m"] => true;
        killall_regex_everything: ["killall", "-r", ".*"] => true;
        killall_long_regex_everything: ["killall", "--regexp", "."] => true;
        killall_named: ["killall", "node"] => false;
        killall_literal_dot: ["killall", "."] => false;
        // Ordinary commands.
        cargo_test: ["cargo", "test"] => false;
        ls: ["ls", "-la", "/"] => false;
        env_alone: ["env"] => false;
        env_ls: ["env", "A=1", "ls"] => false;
        sh_c_is_not_parsed: ["sh", "-c", "sudo ls"] => false;
        sudoku_is_not_sudo: ["sudoku"] => false;
    }

    // Hostile forms of issue 11: each must be refused.
    blocklist! {
        // `env -S` parsed as GNU env parses it.
        env_split_double_quoted: ["env", "-S", "\"mount\" --version"] => true;
        env_split_single_quoted: ["env", "-S", "'mount' --version"] => true;
        env_split_quotes_inside_word: ["env", "-S", "mo''unt /mnt"] => true;
        env_split_double_quotes_inside_word: ["env", "-S", "\"mo\"unt"] => true;
        env_split_escaped_separator: ["env", "-S", "\\_mount"] => true;
        env_split_escaped_quote: ["env", "-S", "\\'mount\\'"] => false;
        env_split_escaped_backslash: ["env", "-S", "'su\\\\do' ls"] => false;
        env_split_home_variable: ["env", "-S", "${HOME}/../../usr/bin/mount"] => true;
        env_split_home_variable_legit: ["env", "-S", "${HOME}/bin/tool"] => false;
        env_split_path_variable_legit: ["env", "-S", "ls ${PATH}"] => false;
        env_split_unknown_variable: ["env", "-S", "${PROGRAM} /mnt"] => true;
        env_split_dollar_without_braces: ["env", "-S", "$PROGRAM"] => true;
        env_split_unterminated_quote: ["env", "-S", "'mount"] => true;
        env_split_trailing_backslash: ["env", "-S", "ls \\"] => true;
        env_split_invalid_escape: ["env", "-S", "\\q"] => true;
        env_split_options_inside: ["env", "-S", "-i A=1 mount"] => true;
        env_split_attached_quoted: ["env", "-S'mount'"] => true;
        env_split_in_cluster: ["env", "-vS", "mount"] => true;
        env_split_long_abbreviated: ["env", "--split", "\"sudo\" ls"] => true;
        env_split_long_abbreviated_equals: ["env", "--sp=sudo ls"] => true;
        env_split_nested_launcher: ["env", "-S", "setsid -f \"mount\""] => true;
        env_split_tab_separated: ["env", "-S", "nice\tmount"] => true;
        env_split_comment_hides_nothing: ["env", "-S", "mount #comment"] => true;
        env_split_comment_only: ["env", "-S", "#mount"] => false;
        env_split_stop: ["env", "-S", "mount\\c ignored"] => true;
        env_split_legit: ["env", "-S", "cargo test --all"] => false;
        env_split_legit_quoted: ["env", "-S", "A='x y' cargo \"test\""] => false;
        // Launchers in front of a blocked program, with their options.
        setsid_mount: ["setsid", "mount", "/mnt"] => true;
        setsid_fork_wait: ["setsid", "-f", "--wait", "mount"] => true;
        setsid_cluster: ["setsid", "-cfw", "mount"] => true;
        ionice_class: ["ionice", "-c", "3", "mount"] => true;
        ionice_attached: ["ionice", "-c3", "-n7", "mount"] => true;
        ionice_long: ["ionice", "--class", "idle", "mount"] => true;
        taskset_mask: ["taskset", "0x1", "mount"] => true;
        taskset_list: ["taskset", "-c", "0-3", "mount"] => true;
        taskset_long: ["taskset", "--cpu-list", "0", "mount"] => true;
        chrt_fifo: ["chrt", "-f", "10", "mount"] => true;
        chrt_long: ["chrt", "--rr", "5", "mount"] => true;
        chrt_deadline: ["chrt", "-d", "-T", "1000", "-P", "2000", "0", "mount"] => true;
        flock_file: ["flock", "/tmp/lock", "mount"] => true;
        flock_wait: ["flock", "-w", "5", "/tmp/lock", "mount"] => true;
        flock_long: ["flock", "--timeout=5", "-x", "/tmp/lock", "mount"] => true;
        flock_shell_is_a_shell: ["flock", "/tmp/lock", "-c", "mount /mnt"] => false;
        nice_old_style_mount: ["nice", "-5", "mount"] => true;
        nice_long_abbreviated: ["nice", "--adj=5", "mount"] => true;
        timeout_kill_mount: ["timeout", "-k", "1", "-s", "KILL", "5", "mount"] => true;
        timeout_abbreviated: ["timeout", "--sig=KILL", "--pres", "5", "mount"] => true;
        stdbuf_mount: ["stdbuf", "-oL", "-e", "0", "mount"] => true;
        time_mount_with_output: ["time", "-f", "%e", "-o", "t", "mount"] => true;
        xargs_mount: ["xargs", "-0", "-n1", "mount"] => true;
        xargs_replace: ["xargs", "-I{}", "mount", "{}"] => true;
        xargs_optional_replace: ["xargs", "-i", "mount", "{}"] => true;
        command_mount: ["command", "-p", "mount"] => true;
        exec_mount: ["exec", "-a", "x", "mount"] => true;
        busybox_mount: ["busybox", "mount", "/dev/sda", "/mnt"] => true;
        busybox_sudo: ["busybox", "su"] => true;
        unshare_mount: ["unshare", "-m", "mount"] => true;
        unshare_options: ["unshare", "-r", "--mount", "--propagation", "private", "--wd", "/tmp", "mount"] => true;
        unshare_optional_attached: ["unshare", "--mount=/tmp/ns", "mount"] => true;
        chroot_mount: ["chroot", "/", "mount"] => true;
        chroot_userspec: ["chroot", "--userspec=0:0", "/", "mount"] => true;
        nsenter_mount: ["nsenter", "-t", "1", "-m", "mount"] => true;
        nsenter_optional_attached: ["nsenter", "-m/proc/1/ns/mnt", "--target", "1", "mount"] => true;
        setpriv_mount: ["setpriv", "--reuid", "0", "--nnp", "mount"] => true;
        prlimit_mount: ["prlimit", "--nofile=1024", "-n1024", "mount"] => true;
        numactl_mount: ["numactl", "-N", "0", "--membind=0", "mount"] => true;
        strace_mount: ["strace", "-f", "-e", "trace=all", "-o", "x", "mount"] => true;
        ltrace_mount: ["ltrace", "-o", "x", "mount"] => true;
        fakeroot_mount: ["fakeroot", "-s", "state", "mount"] => true;
        eatmydata_mount: ["eatmydata", "mount"] => true;
        unbuffer_mount: ["unbuffer", "-p", "mount"] => true;
        run0_ls: ["run0", "ls"] => true;
        every_launcher_nested: ["setsid", "nice", "ionice", "-c3", "taskset", "1", "chrt", "0", "flock", "/l", "timeout", "5", "nohup", "stdbuf", "-oL", "mount"] => true;
        launcher_by_path: ["/usr/bin/setsid", "/usr/bin/../bin/mount"] => true;
        // An option the policy does not know hides which argument is the program.
        unknown_short_option: ["setsid", "-z", "mount"] => true;
        unknown_long_option: ["nice", "--frobnicate", "ls"] => true;
        unique_long_prefix: ["timeout", "--k", "5", "1", "mount"] => true;
        ambiguous_prefix: ["env", "--i", "ls"] => true;
        missing_value: ["timeout", "-s"] => true;
        // The program's path normalized.
        mount_dotdot_path: ["/bin/../usr/bin/mount", "/mnt"] => true;
        mount_doubled_slashes: ["//usr//bin//mount"] => true;
        // `dd of=` normalized.
        dd_double_slash_device: ["dd", "if=/dev/zero", "of=//dev/full"] => true;
        dd_dot_in_device: ["dd", "of=/dev/./sda"] => true;
        dd_dotdot_to_device: ["dd", "of=/tmp/../dev/sda"] => true;
        dd_relative_to_device: ["dd", "of=../../../../dev/sda"] => true;
        dd_doubled_inside: ["dd", "of=/dev//sda1"] => true;
        dd_full: ["dd", "of=/dev/full"] => true;
        dd_dev_itself: ["dd", "of=/dev"] => true;
        dd_null_doubled: ["dd", "of=//dev/null"] => false;
        dd_zero: ["dd", "of=/dev/zero"] => false;
        dd_stdout: ["dd", "if=x", "of=/dev/stdout"] => false;
        dd_stderr: ["dd", "if=x", "of=/dev/stderr"] => false;
        dd_relative_dev_in_project: ["dd", "of=./dev/sda"] => false;
        dd_devices_named_file: ["dd", "of=/devices.img"] => false;
        // `rm` of the root, of a system directory, of a directory holding
        // the home or the working directory, in any flag spelling.
        rm_home_parent: ["rm", "-rf", "/home"] => true;
        rm_home_parent_slash: ["rm", "-r", "/home/"] => true;
        rm_capital_r: ["rm", "-R", "/home"] => true;
        rm_long_recursive: ["rm", "--recursive", "/home"] => true;
        rm_long_abbreviated: ["rm", "--rec", "--force", "/home"] => true;
        rm_fr: ["rm", "-fr", "/root/.."] => true;
        rm_combined_verbose: ["rm", "-vfR", "/usr"] => true;
        rm_etc: ["rm", "-rf", "/etc"] => true;
        rm_bin: ["rm", "-rf", "/bin"] => true;
        rm_var: ["rm", "-rf", "/var/"] => true;
        rm_boot: ["rm", "-rf", "/boot"] => true;
        rm_tmp_itself: ["rm", "-rf", "/tmp"] => true;
        rm_usr_doubled: ["rm", "-rf", "//usr//"] => true;
        rm_usr_dot: ["rm", "-rf", "/usr/./"] => true;
        rm_usr_star: ["rm", "-rf", "/usr/*"] => true;
        rm_usr_via_dotdot: ["rm", "-rf", "/usr/lib/.."] => true;
        rm_home_dotdot: ["rm", "-rf", "/home/me/.."] => true;
        rm_dollar_home_parent: ["rm", "-rf", "$HOME/.."] => true;
        rm_tilde_parent: ["rm", "-rf", "~/.."] => true;
        rm_cwd: ["rm", "-rf", "."] => true;
        rm_cwd_parent: ["rm", "-rf", ".."] => true;
        rm_cwd_grandparent: ["rm", "-rf", "../.."] => true;
        rm_cwd_absolute: ["rm", "-rf", "/work/project"] => true;
        rm_cwd_ancestor: ["rm", "-rf", "/work"] => true;
        rm_cwd_star: ["rm", "-rf", "./*"] => true;
        rm_after_options_end: ["rm", "-r", "--", "/var"] => true;
        rm_no_preserve_abbreviated: ["rm", "-rf", "--no-p", "x"] => true;
        rm_no_preserve_shortest: ["rm", "-rf", "--n", "x"] => true;
        rm_usr_local_subdir: ["rm", "-rf", "/usr/local/lib/x"] => false;
        rm_var_tmp_subdir: ["rm", "-rf", "/var/tmp/x"] => false;
        rm_relative_target: ["rm", "-rf", "./target"] => false;
        rm_sibling_of_home: ["rm", "-rf", "/home/other"] => false;
        rm_sibling_of_cwd: ["rm", "-rf", "/work/other"] => false;
        rm_one_file: ["rm", "notes.txt"] => false;
        rm_dir_named_like_a_system_dir: ["rm", "-rf", "usr"] => false;
        rm_preserve_root_option: ["rm", "-rf", "--preserve-root", "build"] => false;
        rm_double_dash_is_not_an_option: ["rm", "-r", "--", "build"] => false;
        // Legitimate commands through launchers still run.
        setsid_ls: ["setsid", "ls"] => false;
        nice_cargo: ["nice", "-n", "10", "cargo", "test"] => false;
        timeout_cargo: ["timeout", "60", "cargo", "test"] => false;
        flock_cargo: ["flock", "/tmp/lock", "cargo", "build"] => false;
        ionice_make: ["ionice", "-c3", "make"] => false;
        taskset_bench: ["taskset", "-c", "0", "./bench"] => false;
        xargs_grep: ["xargs", "-0", "grep", "-l", "x"] => false;
        busybox_ls: ["busybox", "ls", "-l"] => false;
        busybox_list: ["busybox", "--list"] => false;
        nohup_server: ["nohup", "./server"] => false;
        chrt_idle_make: ["chrt", "-i", "0", "make"] => false;
        strace_ls: ["strace", "-f", "ls"] => false;
        prlimit_cargo: ["prlimit", "--nofile=1024", "cargo", "test"] => false;
        unshare_ls: ["unshare", "-r", "ls"] => false;
        command_ls: ["command", "ls"] => false;
        time_cargo: ["time", "cargo", "build"] => false;
        launcher_help: ["timeout", "--help"] => false;
    }

    #[test]
    fn a_refusal_for_an_unknown_option_names_it() {
        let refusal =
            check(&Policy::blocklist(), &["nice", "--frobnicate", "ls"]).expect_err("refused");
        assert_eq!(refusal.program(), "nice");
        let text = refusal.to_string();
        assert!(
            text.contains("`nice` option `--frobnicate` is not one the policy knows"),
            "{text}"
        );
        let refusal = check(&Policy::blocklist(), &["env", "-S", "${X}"]).expect_err("refused");
        assert!(
            refusal
                .to_string()
                .contains("`env -S` string expands `${X}`, which the policy cannot see"),
            "{refusal}"
        );
        let refusal = check(&Policy::blocklist(), &["timeout", "-s"]).expect_err("refused");
        assert!(
            refusal.to_string().contains("`timeout -s` lacks its value"),
            "{refusal}"
        );
        let refusal = check(&Policy::blocklist(), &["timeout", "--signal"]).expect_err("refused");
        assert!(
            refusal
                .to_string()
                .contains("`timeout --signal` lacks its value"),
            "{refusal}"
        );
    }

    #[test]
    fn refusals_of_rm_and_dd_say_what_they_protect() {
        let expect = |argv: &[&str], message: &str| {
            let refusal = check(&Policy::blocklist(), argv).expect_err("refused");
            assert!(refusal.to_string().contains(message), "{refusal}");
        };
        expect(
            &["rm", "-rf", "//"],
            "`rm` aimed at `//` would delete the root directory",
        );
        expect(
            &["rm", "-rf", "/usr/"],
            "would delete a top-level system directory",
        );
        expect(
            &["rm", "-rf", "/home/me/"],
            "would delete the home directory or a directory that contains it",
        );
        expect(
            &["rm", "-rf", ".."],
            "would delete the working directory or a directory that contains it",
        );
        expect(
            &["rm", "--no-pres", "x"],
            "`rm --no-preserve-root` is refused",
        );
        expect(
            &["dd", "of=//dev/full"],
            "`dd of=//dev/full` writes a raw device",
        );
    }

    #[test]
    fn symlinks_are_resolved_before_rm_and_dd_are_judged() {
        let (dir, mut lookup) = lookup();
        lookup.cwd = dir.path().to_owned();
        symlink("/", dir.path().join("top")).expect("symlink");
        symlink("/dev/full", dir.path().join("full")).expect("symlink");
        symlink("/dev/null", dir.path().join("nothing")).expect("symlink");
        std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
        let policy = Policy::blocklist();
        assert!(policy.check_in(&["rm", "-rf", "top/"], &lookup).is_err());
        assert!(
            policy
                .check_in(&["rm", "-rf", "sub/../.."], &lookup)
                .is_err()
        );
        assert!(policy.check_in(&["rm", "-rf", "sub"], &lookup).is_ok());
        assert!(policy.check_in(&["dd", "of=full"], &lookup).is_err());
        assert!(policy.check_in(&["dd", "of=nothing"], &lookup).is_ok());
        assert!(policy.check_in(&["dd", "of=sub/x.img"], &lookup).is_ok());
    }

    #[test]
    fn a_device_is_judged_by_its_name_and_by_where_it_leads() {
        let resolved = |path: &str| Some(PathBuf::from(path));
        // A terminal's output is harmless by its name.
        assert!(!is_a_device(
            Path::new("/dev/stdout"),
            resolved("/dev/pts/0")
        ));
        assert!(!is_a_device(Path::new("/dev/null"), None));
        assert!(is_a_device(Path::new("/work/disk"), resolved("/dev/sda")));
        assert!(!is_a_device(Path::new("/work/null"), resolved("/dev/null")));
        assert!(is_a_device(Path::new("/dev/sda"), None));
        assert!(!is_a_device(
            Path::new("/work/disk.img"),
            resolved("/work/disk.img")
        ));
    }

    #[test]
    fn a_symlink_to_busybox_is_its_applet_not_busybox() {
        let (dir, lookup) = lookup();
        let real = dir.path().join("busybox");
        std::fs::write(&real, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&real, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        symlink(&real, dir.path().join("ls")).expect("symlink");
        symlink(&real, dir.path().join("mount")).expect("symlink");
        let policy = Policy::blocklist();
        // `ls -l` is the `ls` applet with its own options, not `busybox -l`.
        assert!(
            policy
                .check_in(&["ls", "-l", "--color=never"], &lookup)
                .is_ok()
        );
        assert!(policy.check_in(&["mount", "/mnt"], &lookup).is_err());
        assert!(policy.check_in(&["busybox", "mount"], &lookup).is_err());
    }

    #[test]
    fn the_allowlist_needs_every_launcher_and_the_program() {
        let policy = Policy::allowlist(["env", "setsid", "cargo"]);
        assert!(check(&policy, &["setsid", "cargo", "test"]).is_ok());
        assert!(check(&policy, &["env", "-S", "\"cargo\" test"]).is_ok());
        assert!(check(&policy, &["env", "-S", "\"curl\" x"]).is_err());
        assert!(check(&policy, &["nice", "cargo"]).is_err());
        assert!(check(&policy, &["setsid", "flock", "/l", "cargo"]).is_err());
        let shell = check(
            &Policy::allowlist(["flock", "cargo"]),
            &["flock", "/l", "-c", "cargo"],
        );
        assert!(
            shell
                .expect_err("runs sh")
                .to_string()
                .contains("`sh` is not on the allowlist")
        );
    }

    #[test]
    fn a_symlink_to_a_blocked_program_is_refused() {
        let (dir, lookup) = lookup();
        let real = dir.path().join("sudo");
        std::fs::write(&real, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&real, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        symlink(&real, dir.path().join("innocent")).expect("symlink");
        let refusal = Policy::blocklist()
            .check_in(&["innocent", "ls"], &lookup)
            .expect_err("refused");
        assert_eq!(refusal.program(), "innocent");
        assert!(
            refusal
                .to_string()
                .contains("`innocent` runs `sudo`, which is not allowed (privilege escalation)"),
            "{refusal}"
        );
    }

    #[test]
    fn a_symlink_to_a_wrapper_is_looked_through() {
        let (dir, lookup) = lookup();
        let real = dir.path().join("env");
        std::fs::write(&real, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&real, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        symlink(&real, dir.path().join("e")).expect("symlink");
        assert!(
            Policy::blocklist()
                .check_in(&["e", "sudo", "ls"], &lookup)
                .is_err()
        );
    }

    #[test]
    fn a_symlink_to_rm_gets_the_rm_rules() {
        let (dir, lookup) = lookup();
        let real = dir.path().join("rm");
        std::fs::write(&real, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&real, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        symlink(&real, dir.path().join("del")).expect("symlink");
        assert!(
            Policy::blocklist()
                .check_in(&["del", "-rf", "/"], &lookup)
                .is_err()
        );
        assert!(
            Policy::blocklist()
                .check_in(&["del", "-rf", "x"], &lookup)
                .is_ok()
        );
    }

    macro_rules! allowlist {
        ($($name:ident: [$($arg:literal),*] => $refused:expr;)*) => {$(
            #[test]
            fn $name() {
                let policy = Policy::allowlist(["cargo", "git", "ls", "rm", "env", "./gradlew"]);
                let result = check(&policy, &[$($arg),*]);
                assert_eq!(result.is_err(), $refused, "{result:?}");
            }
        )*};
    }

    allowlist! {
        allow_listed: ["cargo", "test"] => false;
        allow_listed_path_entry: ["./gradlew", "build"] => false;
        allow_wrapper_and_program_listed: ["env", "A=1", "git", "status"] => false;
        allow_empty: [] => true;
        allow_unlisted: ["curl", "example.com"] => true;
        allow_unlisted_interpreter: ["python3", "-c", "print(1)"] => true;
        allow_unlisted_shell: ["sh", "-c", "ls"] => true;
        allow_listed_name_by_path: ["/usr/bin/ls"] => true;
        allow_listed_name_by_relative_path: ["./ls"] => true;
        allow_path_entry_by_other_path: ["gradlew"] => true;
        allow_unlisted_wrapper: ["nice", "cargo", "test"] => true;
        allow_unlisted_wrapped: ["env", "curl", "x"] => true;
        allow_blocked_when_listed_still_needs_listing: ["sudo", "ls"] => true;
        allow_dangerous_arguments: ["rm", "-rf", "/"] => true;
    }

    #[test]
    fn allowlist_refusal_names_the_allowed_programs() {
        let refusal =
            check(&Policy::allowlist(["git", "cargo"]), &["curl", "x"]).expect_err("refused");
        assert_eq!(refusal.program(), "curl");
        let text = refusal.to_string();
        assert!(
            text.contains("`curl` is not on the allowlist (allowed: cargo, git)"),
            "{text}"
        );
        assert!(text.contains("prevents accidents only"), "{text}");
    }

    #[test]
    fn the_default_is_the_blocklist() {
        assert!(check(&Policy::default(), &["sudo", "ls"]).is_err());
        assert!(check(&Policy::default(), &["curl", "example.com"]).is_ok());
    }

    #[test]
    fn a_listed_blocked_program_is_allowed_in_allowlist_mode() {
        assert!(check(&Policy::allowlist(["sudo", "ls"]), &["sudo", "ls"]).is_ok());
    }

    #[test]
    fn refusal_messages_name_the_rule() {
        let blocked = check(&Policy::blocklist(), &["env", "sudo", "ls"]).expect_err("refused");
        assert_eq!(blocked.program(), "sudo");
        assert!(
            blocked
                .to_string()
                .starts_with("command refused: `sudo` is not allowed (privilege escalation). ")
        );
        let rm = check(&Policy::blocklist(), &["rm", "-rf", "~"]).expect_err("refused");
        assert!(
            rm.to_string().contains(
                "`rm` aimed at `~` would delete the home directory or a directory that contains it"
            ),
            "{rm}"
        );
        let empty = check(&Policy::blocklist(), &[]).expect_err("refused");
        assert_eq!(empty.program(), "");
    }

    #[test]
    fn without_home_only_the_literal_forms_are_home() {
        let lookup = Lookup {
            home: None,
            ..Lookup::default()
        };
        assert!(protected_directory("~", &lookup).is_some());
        assert_eq!(protected_directory("/home/me", &lookup), None);
        let lookup = Lookup {
            home: Some(OsString::new()),
            cwd: PathBuf::from("/w"),
            ..Lookup::default()
        };
        assert_eq!(
            protected_directory(".", &lookup),
            Some("the working directory or a directory that contains it")
        );
        assert_eq!(
            protected_directory("~", &lookup),
            Some("the home directory or a directory that contains it")
        );
    }

    #[test]
    fn root_forms() {
        for arg in [
            "/",
            "//",
            "/.",
            "/..",
            "/./..",
            "/*",
            "//*",
            "/tmp/..",
            "/tmp/../*",
        ] {
            assert!(is_root(arg), "{arg}");
        }
        for arg in ["", ".", "/tmp", "/..tmp", "*", "/tmp/*", "tmp/..", "x/*"] {
            assert!(!is_root(arg), "{arg}");
        }
    }

    #[test]
    fn operand_extraction() {
        let args: Vec<String> = ["-u", "me", "-f", "x", "--", "-y"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            operands_with_values(&args, &["-u"]).collect::<Vec<_>>(),
            ["x", "-y"]
        );
        assert_eq!(operands(&args).collect::<Vec<_>>(), ["me", "x", "-y"]);
        let dash: Vec<String> = vec!["-".into()];
        assert_eq!(operands(&dash).collect::<Vec<_>>(), ["-"]);
    }

    #[test]
    fn everything_patterns() {
        for pattern in [".", ".*", "", "^", "\\w", "[a-z]"] {
            assert!(matches_everything(pattern), "{pattern}");
        }
        for pattern in ["node", "s", "(", "^init$"] {
            assert!(!matches_everything(pattern), "{pattern}");
        }
    }

    #[test]
    fn home_expansion() {
        let home = Path::new("/home/me");
        assert_eq!(expand_home("~", home), Path::new("/home/me/"));
        assert_eq!(expand_home("$HOME/a", home), Path::new("/home/me/a"));
        assert_eq!(expand_home("${HOME}//a", home), Path::new("/home/me/a"));
        assert_eq!(expand_home("~a", home), Path::new("~a"));
        assert_eq!(expand_home("a/~", home), Path::new("a/~"));
    }

    #[test]
    fn normalization() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), Path::new("/a/c"));
        assert_eq!(normalize(Path::new("/../..")), Path::new("/"));
        assert_eq!(normalize(Path::new("a/..")), Path::new(""));
    }

    #[test]
    fn basenames() {
        assert_eq!(basename("/usr/bin/env"), "env");
        assert_eq!(basename("./x"), "x");
        assert_eq!(basename("x"), "x");
        assert_eq!(basename("/"), "/");
        assert_eq!(basename(".."), "..");
    }

    #[test]
    fn this_process_lookup() {
        let lookup = Lookup::of_this_process();
        assert_eq!(lookup.search_path, std::env::var_os("PATH"));
        assert_eq!(lookup.home, std::env::var_os("HOME"));
        assert_eq!(lookup.cwd, std::env::current_dir().expect("cwd"));
    }

    #[test]
    fn check_uses_this_process_path() {
        // `sh` is on every PATH this crate runs on.
        assert!(
            Policy::allowlist(["sh"])
                .check(&["sh", "-c", "true"])
                .is_ok()
        );
        assert!(Policy::blocklist().check(&["sudo"]).is_err());
    }
}
