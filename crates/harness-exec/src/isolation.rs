//! Kernel isolation tiers: what confines a command beyond the policy.
//!
//! A tier turns the program and its arguments into the [`Command`] the runner
//! starts. `bwrap` wraps the program in bubblewrap (new mount, PID, network,
//! IPC and UTS namespaces); `landlock` restricts the child itself before
//! `exec`; `none` runs the program as it is.

mod aside;
mod bwrap;
mod hidden;
mod landlock;
mod protected;
mod repair;
mod seccomp;

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Error;
use crate::tier::Tier;

#[cfg(test)]
pub(crate) use self::bwrap::no_bwrap;
pub(crate) use self::bwrap::trusted_bwrap;
pub use self::hidden::{Hidden, WALK_LIMIT, hidden_in_workspace};
pub(crate) use self::landlock::{kernel_abi, no_landlock};
pub use self::protected::SetAside;
pub(crate) use self::protected::set_aside;
pub(crate) use self::repair::repair;
pub use self::repair::{Change, HELD_OBJECTS, RECORD_BYTES, RECORD_ENTRIES, Repaired};
pub(crate) use self::seccomp::Program;

/// The secret locations in the home directory that a confined command can
/// neither read nor write: keys, cloud and registry credentials.
pub const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".netrc",
    ".docker/config.json",
    ".kube",
    ".git-credentials",
    ".config/gcloud",
    ".azure",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".npmrc",
    ".pypirc",
];

/// The name at the top of the workspace that commands may not write under a confining
/// tier, whatever the caller protects besides: the repository, whose history is the undo
/// path and whose configuration git reads (names of the caller's own, such as its
/// configuration file, come through [`Confinement::protect_in_workspace`]).
const GIT: &str = ".git";

/// What a confining tier lets a command reach: the workspace, extra writable
/// paths, the network or not, and the paths it hides.
///
/// ```
/// use harness_exec::Confinement;
///
/// let confinement = Confinement::new("/home/me/project")
///     .writable("/home/me/.cargo/registry")
///     .network(false)
///     .hide("/home/me/project/.env")
///     .read_only("/home/me/.local/state/harness");
/// # let _ = confinement;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confinement {
    /// Writable, except its `.git` and the names in `protected_names`.
    workspace: PathBuf,
    /// Extra writable paths (build caches).
    writable: Vec<PathBuf>,
    /// Whether the command may use the network.
    network: bool,
    /// The home directory whose [`HOME_SECRETS`] are hidden.
    home: Option<PathBuf>,
    /// Further paths hidden (the deny rules).
    hidden: Vec<PathBuf>,
    /// Paths hidden whole, but for the workspace where one holds it (a batch's
    /// output directory, with the other runs' working copies beside this one).
    hidden_around: Vec<PathBuf>,
    /// Further paths kept read-only (an undo store).
    read_only: Vec<PathBuf>,
    /// Paths relative to the workspace kept as its `.git` is (a program's own
    /// configuration file there), joined to the workspace as given.
    protected_names: Vec<PathBuf>,
    /// Further paths kept as they are (the git directories of repositories
    /// in the workspace, the user's configuration).
    protected: Vec<PathBuf>,
    /// Where commands may have written before, beyond what this confinement
    /// lets them write: no program the harness runs itself is taken from
    /// there (a probe's confinement, standing in for the real one).
    untrusted: Vec<PathBuf>,
}

impl Confinement {
    /// Confines commands to `workspace`: writable there (but not its `.git`,
    /// nor what [`protect_in_workspace`](Confinement::protect_in_workspace) names)
    /// and in a private temporary directory; no network; the secret locations of
    /// this process's `$HOME` hidden.
    pub fn new(workspace: impl Into<PathBuf>) -> Confinement {
        Confinement {
            workspace: workspace.into(),
            writable: Vec::new(),
            network: false,
            home: std::env::var_os("HOME").map(PathBuf::from),
            hidden: Vec::new(),
            hidden_around: Vec::new(),
            read_only: Vec::new(),
            protected_names: Vec::new(),
            protected: Vec::new(),
            untrusted: Vec::new(),
        }
    }

    /// Lets commands also write under `path` (a build cache such as
    /// `~/.cargo/registry`). A path that does not exist is ignored.
    pub fn writable(mut self, path: impl Into<PathBuf>) -> Confinement {
        self.writable.push(path.into());
        self
    }

    /// Lets commands use the network (default: no network).
    pub fn network(mut self, allowed: bool) -> Confinement {
        self.network = allowed;
        self
    }

    /// Hides `path` from commands: neither readable nor writable. A path that
    /// does not exist is ignored.
    pub fn hide(mut self, path: impl Into<PathBuf>) -> Confinement {
        self.hidden.push(path.into());
        self
    }

    /// Hides `path` from commands as [`hide`](Confinement::hide) does, and
    /// everything made in it later, but for the workspace when `path` holds it:
    /// that stays as [`new`](Confinement::new) makes it. For what surrounds the
    /// workspace and is not the command's: a batch's output directory, where the
    /// other runs' working copies and results lie beside this run's workspace,
    /// or the file that names their tasks. Hiding wins over a
    /// [`writable`](Confinement::writable) path: one inside `path` (not in the
    /// workspace) is hidden, and one that holds `path` has it cut out. A path
    /// that does not exist when a command starts is ignored.
    pub fn hide_around(mut self, path: impl Into<PathBuf>) -> Confinement {
        self.hidden_around.push(path.into());
        self
    }

    /// Keeps `path` read-only to commands even where the workspace or a
    /// [`writable`](Confinement::writable) path holds it: for what must outlive
    /// any command, such as the store that undoes their work (`--writable ~`
    /// would otherwise let `rm -rf ~/.local/state` take it). A path that does
    /// not exist is ignored.
    pub fn read_only(mut self, path: impl Into<PathBuf>) -> Confinement {
        self.read_only.push(path.into());
        self
    }

    /// Protects `path` as the workspace's `.git` is: read-only to commands
    /// where something stands there when a command starts, and whatever a
    /// command makes there, or puts in place of what stood there, is moved
    /// aside once it has ended ([`Outcome::set_aside`]). For the git
    /// directory (or `.git` file) of a submodule or of another repository in
    /// the workspace, where the user's git reads a configuration that can
    /// name programs to run ([`hide_denied`](Confinement::hide_denied)
    /// protects those its walk finds), or for a configuration that decides
    /// how the next run's commands are confined.
    ///
    /// [`Outcome::set_aside`]: crate::Outcome::set_aside
    pub fn protect(mut self, path: impl Into<PathBuf>) -> Confinement {
        self.protected.push(path.into());
        self
    }

    /// Protects `name`, a path relative to the workspace, as the workspace's `.git` is
    /// (see [`protect`](Confinement::protect)): for a file of the program that runs the
    /// commands, such as the configuration that decides how its next run's commands are
    /// confined (the harness CLI protects its `harness.toml` so). The `.git` is always
    /// protected; this crate knows no other name of its own, as `harness-sandbox`'s
    /// `deny_write` rules come from its caller.
    ///
    /// ```
    /// use harness_exec::Confinement;
    ///
    /// let confinement = Confinement::new("/home/me/project").protect_in_workspace("app.toml");
    /// # let _ = confinement;
    /// ```
    pub fn protect_in_workspace(mut self, name: impl Into<PathBuf>) -> Confinement {
        self.protected_names.push(name.into());
        self
    }

    /// Hides every path in the workspace that `is_denied` refuses, as it is
    /// now, with every other name (hard link) there of a file so hidden or of
    /// a file in this confinement's home secrets: [`hidden_in_workspace`] over
    /// this workspace and home. Also returns what it found, for the file tools
    /// to refuse the same places (a link's target among them), and whether
    /// the walk stopped at [`WALK_LIMIT`] entries, so that paths past it are
    /// not hidden.
    pub fn hide_denied(mut self, is_denied: impl Fn(&Path) -> bool) -> (Confinement, Hidden) {
        let found = hidden_in_workspace(&self.workspace, self.home.as_deref(), is_denied);
        self.hidden.extend(found.paths.iter().cloned());
        self.protected.extend(found.git_dirs.iter().cloned());
        (self, found)
    }

    /// The home directory whose secret locations ([`HOME_SECRETS`]) are
    /// hidden, instead of this process's `$HOME`.
    pub fn home(mut self, home: impl Into<PathBuf>) -> Confinement {
        self.home = Some(home.into());
        self
    }

    /// True if and only if commands may use the network.
    pub fn allows_network(&self) -> bool {
        self.network
    }

    /// The existing paths hidden from commands, resolved: the home's secret
    /// locations and the deny rules.
    pub(crate) fn hidden_paths(&self) -> Vec<PathBuf> {
        let home_secrets = self
            .home
            .iter()
            .flat_map(|home| HOME_SECRETS.iter().map(move |secret| home.join(secret)));
        existing(home_secrets.chain(self.hidden.iter().cloned()))
    }

    /// The existing paths given to [`Confinement::hide_around`], resolved.
    pub(crate) fn hidden_around_paths(&self) -> Vec<PathBuf> {
        existing(self.hidden_around.iter().cloned())
    }

    /// The home directory, resolved, when the private `/tmp` of a tier would
    /// otherwise hide it: a home under `/tmp` (a CI job's, an evaluation's)
    /// stays readable, so toolchains found through it (`~/.cargo`,
    /// `~/.rustup`) still work. Its secret locations are hidden on top.
    pub(crate) fn home_under_tmp(&self) -> Option<PathBuf> {
        let home = existing(self.home.iter().cloned()).pop()?;
        home.starts_with("/tmp").then_some(home)
    }

    /// The existing paths that stay read-only even inside the workspace or a
    /// writable path: the protected ones ([`Confinement::protected`]) and those
    /// given to [`Confinement::read_only`].
    pub(crate) fn read_only_paths(&self) -> Vec<PathBuf> {
        existing(self.protected().chain(self.read_only.iter().cloned()))
    }

    /// The directories between each [read-only](Confinement::read_only_paths) or
    /// hidden path ([`hidden_paths`](Confinement::hidden_paths),
    /// [`hidden_around_paths`](Confinement::hidden_around_paths)) and the writable place that holds it
    /// (the workspace or a writable path), outermost first. A mount goes with the
    /// directory that holds it when that is renamed (`mv lib gone` took a read-only
    /// `lib/sub/.git` with it; `mv ~/.docker ~/d` under `--writable ~` took what hid
    /// `config.json`, and the next command, hiding the old path, read the new one), and a
    /// mount point cannot be renamed: bwrap binds each of these onto itself. (Landlock
    /// lets a command rename such a directory; the runner renames a kept path back after
    /// the command, and a hidden one, found by its identity.)
    pub(crate) fn pinned_dirs(&self) -> Vec<PathBuf> {
        let places: Vec<PathBuf> = self
            .workspace()
            .into_iter()
            .chain(self.writable_paths())
            .collect();
        let mut pinned = Vec::new();
        for path in self
            .read_only_paths()
            .into_iter()
            .chain(self.hidden_paths())
            .chain(self.hidden_around_paths())
        {
            let holder = places
                .iter()
                .filter(|place| path.starts_with(place) && path != **place)
                .max_by_key(|place| place.components().count());
            if let Some(place) = holder {
                let between = path.ancestors().skip(1).take_while(|dir| dir != place);
                pinned.extend(between.map(Path::to_path_buf));
            }
        }
        pinned.sort_by_cached_key(|dir| (dir.components().count(), dir.clone()));
        pinned.dedup();
        pinned
    }

    /// The workspace's protected paths as they are now, and the time, for the
    /// runner to set aside what a command makes or replaces there, and each
    /// `.git` it makes in the workspace ([`protected`]).
    pub(crate) fn protected_before(&self) -> protected::Kept {
        protected::kept(self.protected(), &self.workspace)
    }

    /// The workspace's `.git`, the names given to
    /// [`Confinement::protect_in_workspace`] in it, and the paths given to
    /// [`Confinement::protect`], in that order.
    fn protected(&self) -> impl Iterator<Item = PathBuf> + '_ {
        std::iter::once(GIT)
            .map(PathBuf::from)
            .chain(self.protected_names.iter().cloned())
            .map(|name| self.workspace.join(name))
            .chain(self.protected.iter().cloned())
    }

    /// This confinement, distrusting `places` as well ([`Confinement::places_written`]).
    pub(crate) fn distrusting(mut self, places: Vec<PathBuf>) -> Confinement {
        self.untrusted.extend(places);
        self
    }

    /// Where commands can write, resolved: the workspace, the extra writable paths, and
    /// what [`Confinement::distrusting`] added. The harness takes no program it runs
    /// itself, unconfined (`bwrap`), from there: a command could have written it.
    pub(crate) fn places_written(&self) -> Vec<PathBuf> {
        let workspace = self.workspace().unwrap_or_else(|_| self.workspace.clone());
        std::iter::once(workspace)
            .chain(self.writable_paths())
            .chain(self.untrusted.iter().cloned())
            .collect()
    }

    /// The existing extra writable paths, resolved.
    pub(crate) fn writable_paths(&self) -> Vec<PathBuf> {
        existing(self.writable.iter().cloned())
    }

    /// The workspace, resolved.
    pub(crate) fn workspace(&self) -> Result<PathBuf, Error> {
        self.workspace
            .canonicalize()
            .map_err(|source| Error::WorkingDirectory {
                path: self.workspace.clone(),
                source,
            })
    }
}

/// How a command is isolated from the rest of the machine, beyond the policy.
///
/// ```
/// use harness_exec::{Confinement, Isolation, Tier};
///
/// let isolation = Isolation::new(Tier::Landlock, Confinement::new("/home/me/project"));
/// assert_eq!(isolation.tier(), Tier::Landlock);
/// assert_eq!(Isolation::none().tier(), Tier::None);
/// ```
///
/// Which tier can run on a machine is for [`preflight`](crate::preflight) to
/// find out; a run under a tier the machine lacks fails with
/// [`Error::Isolation`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Isolation {
    /// The tier and what it confines to; `None` for no isolation.
    confined: Option<(Tier, Arc<Confinement>)>,
}

impl Isolation {
    /// No isolation: the command runs as the user. The policy, timeout,
    /// limits and output bounds still apply.
    pub fn none() -> Isolation {
        Isolation { confined: None }
    }

    /// Commands run under `tier`, confined to `confinement` (which
    /// [`Tier::None`] ignores).
    pub fn new(tier: Tier, confinement: Confinement) -> Isolation {
        match tier {
            Tier::None => Isolation::none(),
            tier => Isolation {
                confined: Some((tier, Arc::new(confinement))),
            },
        }
    }

    /// The tier commands run under.
    pub fn tier(&self) -> Tier {
        self.confined.as_ref().map_or(Tier::None, |(tier, _)| *tier)
    }

    /// The command that executes `executable` (found for `program`) with
    /// `args` under this tier, in `cwd`.
    pub(crate) fn prepare(
        &self,
        executable: &Path,
        program: &OsStr,
        args: &[impl AsRef<OsStr>],
        cwd: &Path,
    ) -> Result<Prepared, Error> {
        let Some((tier, confinement)) = &self.confined else {
            let mut command = Command::new(executable);
            command.arg0(program).args(args);
            return Ok(Prepared::plain(command));
        };
        match tier {
            Tier::Bwrap => {
                let seccomp_filter = seccomp_filter(confinement, seccomp::Network::Namespace);
                let protected = confinement.protected_before();
                let mut command = bwrap::command(confinement, cwd)?;
                command.arg("--");
                if let Some(env) = bwrap::signal_resetter() {
                    command.arg(env).arg("--default-signal=INT").arg("--");
                }
                command.arg(executable).args(args);
                Ok(Prepared {
                    command,
                    env: vec![("TMPDIR".into(), "/tmp".into())],
                    ruleset: None,
                    seccomp_filter,
                    protected,
                    ignore_interrupt: true,
                    _private_tmp: None,
                })
            }
            Tier::Landlock => {
                let mut protected = confinement.protected_before();
                let workspace = confinement.workspace()?;
                protected.record = Some(repair::record(
                    &workspace,
                    &confinement.read_only_paths(),
                    &confinement.hidden_paths(),
                ));
                let private_tmp = PrivateTmp::create()?;
                let ruleset = landlock::ruleset(confinement, private_tmp.path())?;
                let network = seccomp::Network::of(Tier::Landlock, kernel_abi());
                let seccomp_filter = seccomp_filter(confinement, network);
                let mut command = Command::new(executable);
                command.arg0(program).args(args);
                Ok(Prepared {
                    command,
                    env: vec![("TMPDIR".into(), private_tmp.path().into())],
                    ruleset: Some(ruleset),
                    seccomp_filter,
                    protected,
                    ignore_interrupt: false,
                    _private_tmp: Some(private_tmp),
                })
            }
            Tier::None => unreachable!("Isolation::new keeps no confinement for Tier::None"),
        }
    }
}

impl Default for Isolation {
    /// No isolation, as [`Isolation::none`].
    fn default() -> Isolation {
        Isolation::none()
    }
}

/// A command ready for the runner, with what must live as long as the run.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The program (or its wrapper) and the arguments.
    pub(crate) command: Command,
    /// Variables the tier sets on top of the scrubbed environment.
    pub(crate) env: Vec<(OsString, OsString)>,
    /// A Landlock ruleset the child enforces on itself before `exec`.
    pub(crate) ruleset: Option<OwnedFd>,
    /// The seccomp filter of the sockets and keyrings the command may not
    /// reach, which the child installs on itself before `exec` ([`seccomp`]).
    pub(crate) seccomp_filter: Option<seccomp::Program>,
    /// The workspace's protected paths as they were when the command
    /// started, where the runner moves aside what the command made or
    /// replaced ([`protected`]).
    pub(crate) protected: protected::Kept,
    /// Whether the started program (`bwrap`) must survive the `SIGINT` that
    /// interrupts a command: it is the process group's leader, and its death
    /// would kill the command at once instead of letting it stop.
    pub(crate) ignore_interrupt: bool,
    /// Removed when the run is over.
    _private_tmp: Option<PrivateTmp>,
}

impl Prepared {
    fn plain(command: Command) -> Prepared {
        Prepared {
            command,
            env: Vec::new(),
            ruleset: None,
            seccomp_filter: None,
            protected: protected::Kept::default(),
            ignore_interrupt: false,
            _private_tmp: None,
        }
    }
}

/// The seccomp filter of a command confined to `confinement`, whose network
/// sockets the tier confines as `network`: with the network allowed, it
/// leaves every socket alone.
fn seccomp_filter(
    confinement: &Confinement,
    network: seccomp::Network,
) -> Option<seccomp::Program> {
    seccomp::program((!confinement.network).then_some(network))
}

/// A temporary directory for one run, removed with everything in it when
/// the run is over.
#[derive(Debug)]
struct PrivateTmp {
    path: PathBuf,
}

impl PrivateTmp {
    fn create() -> Result<PrivateTmp, Error> {
        use std::os::unix::fs::DirBuilderExt;
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "harness-tmp-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        // A leftover of a crashed run of an earlier process with the same pid.
        let _ = std::fs::remove_dir_all(&path);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(Error::io("creating the run's private temporary directory"))?;
        Ok(PrivateTmp { path })
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The paths of `paths` that exist, resolved (symlinks followed).
fn existing(paths: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut resolved: Vec<PathBuf> = paths
        .into_iter()
        .filter_map(|path| path.canonicalize().ok())
        .collect();
    resolved.sort();
    resolved.dedup();
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_runs_the_program_itself() {
        let prepared = Isolation::none()
            .prepare(
                Path::new("/bin/true"),
                OsStr::new("true"),
                &["x"],
                Path::new("/"),
            )
            .expect("prepared");
        assert_eq!(prepared.command.get_program(), "/bin/true");
        assert_eq!(prepared.command.get_args().collect::<Vec<_>>(), ["x"]);
        assert!(prepared.env.is_empty() && prepared.ruleset.is_none());
    }

    #[test]
    fn tier_names_round_trip_and_unknown_names_are_refused() {
        for tier in Tier::ALL {
            assert_eq!(tier.name().parse::<Tier>(), Ok(tier));
            assert_eq!(tier.to_string(), tier.name());
        }
        let error = "docker".parse::<Tier>().expect_err("unknown");
        assert_eq!(
            error.to_string(),
            "unknown sandbox \"docker\": use one of auto, bwrap, landlock, none"
        );
        assert_eq!(
            Isolation::new(Tier::None, Confinement::new("/")),
            Isolation::none()
        );
    }

    #[test]
    fn the_directories_between_a_kept_path_and_its_writable_place_are_pinned() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        for made in [
            "work/lib/sub/.git",
            "work/config/.env",
            "home/.local/state/harness",
            "outside/kept",
        ] {
            std::fs::create_dir_all(root.join(made)).expect("mkdir");
        }
        let confinement = Confinement::new(root.join("work"))
            .writable(root.join("home"))
            .writable(root.join("home/.local"))
            .protect(root.join("work/lib/sub/.git"))
            .hide(root.join("work/config/.env"))
            .read_only(root.join("home/.local/state/harness"))
            // Neither a writable place itself nor a path in none has a directory between.
            .read_only(root.join("home"))
            .read_only(root.join("outside/kept"));
        assert_eq!(
            confinement.pinned_dirs(),
            [
                root.join("work/config"),
                root.join("work/lib"),
                root.join("home/.local/state"),
                root.join("work/lib/sub"),
            ],
            "outermost first, up to the nearest writable place"
        );
        assert_eq!(
            Confinement::new(root.join("work")).pinned_dirs(),
            Vec::<PathBuf>::new()
        );
    }

    #[test]
    fn only_git_is_protected_unless_the_caller_names_more() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir(root.join(".git")).expect("mkdir");
        std::fs::write(root.join("harness.toml"), "").expect("write");
        assert_eq!(
            Confinement::new(&root).read_only_paths(),
            [root.join(".git")]
        );
        assert_eq!(
            Confinement::new(&root)
                .protect_in_workspace("harness.toml")
                .read_only_paths(),
            [root.join(".git"), root.join("harness.toml")]
        );
    }

    #[test]
    fn hidden_paths_are_the_existing_home_secrets_and_deny_rules() {
        let home = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(home.path().join(".config/gh")).expect("gh");
        std::fs::write(home.path().join(".netrc"), "x").expect("netrc");
        std::fs::write(home.path().join("notes"), "x").expect("notes");
        let confinement = Confinement::new("/")
            .home(home.path())
            .hide(home.path().join("notes"))
            .hide("/no/such/path");
        let root = home.path().canonicalize().expect("canonical");
        assert_eq!(
            confinement.hidden_paths(),
            [
                root.join(".config/gh"),
                root.join(".netrc"),
                root.join("notes")
            ]
        );
    }

    #[test]
    fn hide_denied_hides_what_the_rule_refuses_and_its_other_names_in_this_home() {
        let directory = tempfile::tempdir().expect("tempdir");
        let root = directory.path().canonicalize().expect("canonical");
        let (workspace, home) = (root.join("ws"), root.join("home"));
        std::fs::create_dir_all(&workspace).expect("ws");
        std::fs::create_dir_all(home.join(".ssh")).expect("ssh");
        std::fs::write(workspace.join(".env"), "A=1").expect("env");
        std::fs::write(home.join(".ssh/key"), "k").expect("key");
        std::fs::hard_link(home.join(".ssh/key"), workspace.join("key.txt")).expect("ln");
        let (confinement, found) = Confinement::new(&workspace)
            .home(&home)
            .hide_denied(|path| path.ends_with(".env"));
        assert!(!found.truncated);
        assert_eq!(
            found.paths,
            [workspace.join(".env"), workspace.join("key.txt")]
        );
        let hidden = confinement.hidden_paths();
        for path in [workspace.join(".env"), workspace.join("key.txt")] {
            assert!(hidden.contains(&path), "{path:?} in {hidden:?}");
        }
    }

    #[test]
    fn a_private_tmp_is_removed_with_its_contents() {
        let tmp = PrivateTmp::create().expect("created");
        let path = tmp.path().to_owned();
        std::fs::write(path.join("f"), "x").expect("write");
        drop(tmp);
        assert!(!path.exists());
    }
}
