//! The clean-tree check: which paths have staged, unstaged or untracked changes.
//!
//! git's command line is the fast way to ask: it refreshes stat data with several
//! threads and may use the untracked cache, where libgit2 walks alone (measured in
//! `benches/undo.rs`). libgit2 stays as the way to ask where git is not installed.
//!
//! Neither way takes the user's index lock or writes the user's index. git runs on a
//! private copy of it ([`private_index`]), which it may write: the stat data it
//! refreshes and the untracked cache it keeps there spare the next check in the same
//! workspace most of its work.
//!
//! Neither way runs a program that a command of a run could have configured. The
//! check runs outside any sandbox, and `git status` looking into a submodule starts
//! another git there, which reads that submodule's configuration: when its git
//! directory is `sub/.git` in the working tree, a command can write it, and its
//! `core.fsmonitor` (or a filter driver) would run as the user, unconfined. So git
//! is told to leave submodules alone, and their state is asked of libgit2, which
//! runs no configured program ([`dirty_submodules`]), by both ways alike.
//!
//! Nor does the top-level git run one: the configuration is the user's, and no command
//! can write it, but the programs it names may lie where commands write. A hooks
//! directory in the working tree (husky's `core.hooksPath = .husky/_`) would give the
//! `post-index-change` hook git runs when it writes an index; a filter driver whose
//! program is a script in the tree, or `python -m` of a module looked for in the tree,
//! runs on every file `.gitattributes` (which commands write) gives it. So every git the
//! harness runs is started by [`git_command`], which names no hooks directory and no file
//! system monitor, and the check turns each filter driver off ([`without_filters`]).

use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use git2::{Repository, Status, StatusOptions, SubmoduleIgnore, SubmoduleStatus};

use crate::error::GitContext;
use crate::{Error, paths};

/// How the check asks which paths are dirty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    /// Run this git program: `git status --porcelain=v2 -z`.
    GitCli(OsString),
    /// Ask libgit2's status.
    Libgit2,
}

impl Probe {
    /// The probe for the workspace at `root`: the `git` in one of `PATH`'s absolute
    /// directories ([`find_program`]) if it runs, else libgit2; and libgit2 when that git
    /// lies in `root`, where a command could have written it, before it is ever run (the
    /// harness runs git outside any sandbox). Found once per process.
    pub(crate) fn for_workspace(root: &Path) -> &'static Probe {
        static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
        static PROBE: OnceLock<Probe> = OnceLock::new();
        static LIBGIT2: Probe = Probe::Libgit2;
        match FOUND.get_or_init(|| find_program(OsStr::new("git"))) {
            Some(git) if lies_in(git, root) => &LIBGIT2,
            Some(git) => PROBE.get_or_init(|| Probe::detect(git.as_os_str())),
            None => &LIBGIT2,
        }
    }

    /// [`Probe::GitCli`] with the file [`find_program`] finds for `program`, if it runs
    /// `--version` and exits 0; else [`Probe::Libgit2`].
    pub(crate) fn detect(program: &OsStr) -> Probe {
        let Some(path) = find_program(program) else {
            return Probe::Libgit2;
        };
        let runs = git_command(path.as_os_str())
            .arg("--version")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if runs {
            Probe::GitCli(path.into_os_string())
        } else {
            Probe::Libgit2
        }
    }

    /// Every path that is staged, modified, deleted, unmerged, or untracked and
    /// not ignored, as git prints it (an untracked directory as `dir/`), sorted,
    /// each once.
    pub(crate) fn dirty_paths(
        &self,
        repo: &Repository,
        root: &Path,
    ) -> Result<Vec<PathBuf>, Error> {
        let mut paths = match self {
            Probe::GitCli(program) => {
                match without_filters(git_command(program), program, repo.path()) {
                    Some(command) => git_status(command, repo.path(), root)?,
                    None => libgit2_status(repo)?,
                }
            }
            Probe::Libgit2 => libgit2_status(repo)?,
        };
        paths.extend(dirty_submodules(repo)?);
        // git lists a path twice when it is both staged for deletion and untracked.
        paths.sort();
        paths.dedup();
        Ok(paths)
    }
}

/// `program` itself when it names a path (it holds a `/`); otherwise the first file of
/// that name in one of `PATH`'s absolute directories. A relative entry, and an empty one,
/// which names the current directory, is skipped (as Go's `exec.LookPath` does since
/// 1.19): the harness runs git with the workspace as its current directory, so such an
/// entry would find a `git` a command wrote there, and run it unconfined.
pub(crate) fn find_program(program: &OsStr) -> Option<PathBuf> {
    find_program_in(program, std::env::var_os("PATH").as_deref())
}

/// [`find_program`] with `search_path` for `PATH`.
fn find_program_in(program: &OsStr, search_path: Option<&OsStr>) -> Option<PathBuf> {
    if program.as_encoded_bytes().contains(&b'/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(search_path?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// A command that runs the git `program` with no program its configuration names,
/// beyond the filter drivers (see [`without_filters`]): hooks are looked for in a
/// directory that cannot exist, and no file system monitor is asked. Values given on
/// git's command line override every configuration file.
pub(crate) fn git_command(program: &OsStr) -> Command {
    let mut command = Command::new(program);
    command
        .args(["-c", "core.hooksPath=/dev/null"])
        .args(["-c", "core.fsmonitor=false"]);
    command
}

/// `command`, a [`git_command`] for the repository at `git_dir`, with every filter
/// driver that git's configuration there defines turned off: git then compares a file's
/// bytes as they are, as libgit2 does, and a driver marked `required` is not an error.
///
/// `None` if the drivers cannot all be named, or one cannot be turned off on git's
/// command line (a name holding `=`): the caller asks libgit2 instead, which runs no
/// filter program.
fn without_filters(mut command: Command, program: &OsStr, git_dir: &Path) -> Option<Command> {
    let listed = git_command(program)
        .arg("--git-dir")
        .arg(git_dir)
        .args(["config", "-z", "--get-regexp", r"^filter\."])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    // `git config --get-regexp` exits 1 when nothing matches (and for a key that is not
    // valid, which this pattern is not).
    match listed.status.code() {
        Some(0) => {}
        Some(1) => return Some(command),
        _ => return None,
    }
    for driver in filter_drivers(&listed.stdout)? {
        for (key, value) in [
            ("clean", ""),
            ("smudge", ""),
            ("process", ""),
            ("required", "false"),
        ] {
            let mut setting = OsString::from("filter.");
            setting.push(&driver);
            setting.push(format!(".{key}={value}"));
            command.arg("-c").arg(setting);
        }
    }
    Some(command)
}

/// The names of the filter drivers in `git config -z --get-regexp '^filter\.'`'s
/// output (records of `filter.<name>.<key>`, a newline, the value, a NUL), each once;
/// `None` if a record is not of that form or a name holds `=`, which would end the key
/// of a `-c name=value`.
fn filter_drivers(listed: &[u8]) -> Option<Vec<OsString>> {
    let mut drivers: Vec<OsString> = Vec::new();
    for record in listed
        .split(|&b| b == 0)
        .filter(|record| !record.is_empty())
    {
        let key = record.split(|&b| b == b'\n').next()?;
        let name = key.strip_prefix(b"filter.")?;
        let dot = name.iter().rposition(|&b| b == b'.')?;
        let name = &name[..dot];
        if name.is_empty() || name.contains(&b'=') {
            return None;
        }
        let name = paths::from_bytes(name).into_os_string();
        if !drivers.contains(&name) {
            drivers.push(name);
        }
    }
    Some(drivers)
}

/// True if `path`, its links followed, lies in the directory `root`.
fn lies_in(path: &Path, root: &Path) -> bool {
    match (fs::canonicalize(path), fs::canonicalize(root)) {
        (Ok(path), Ok(root)) => path.starts_with(root),
        _ => false,
    }
}

/// The check through git's command line.
///
/// One `git status`: splitting the work (`git status -uno` beside `git
/// ls-files --others`) was measured slower on a busy two-core machine, where
/// there is no idle core for the second command and both read the index.
/// `command` is the git to run, with its settings (see [`Probe::dirty_paths`]).
fn git_status(mut command: Command, git_dir: &Path, root: &Path) -> Result<Vec<PathBuf>, Error> {
    let program = command.get_program().to_os_string();
    match private_index(git_dir) {
        Some(index) => {
            command
                // The untracked cache: git keeps each directory's listing with its
                // stat data, and lists again only the directories that changed.
                .args(["-c", "core.untrackedCache=true"])
                // A split index would write its shared part beside the user's.
                .args(["-c", "core.splitIndex=false"])
                // The cache trusts a directory whose stat data is unchanged. Its
                // change time is the part no command can set back (`touch -r`
                // sets back the modification time of a directory a new file went
                // into): compared whatever the user's configuration says.
                .args(["-c", "core.trustctime=true", "-c", "core.checkStat=default"])
                .env("GIT_INDEX_FILE", index);
        }
        None => {
            // Plain `git status` may rewrite the index to refresh its stat
            // data; the user's index is not ours to touch. (A GIT_INDEX_FILE
            // set by a git hook would point status at another index.)
            command
                .arg("--no-optional-locks")
                .env_remove("GIT_INDEX_FILE");
        }
    }
    command
        .arg("--git-dir")
        .arg(git_dir)
        .arg("--work-tree")
        .arg(root)
        .args([
            "status",
            "--porcelain=v2",
            "-z",
            // Explicit, because status.showUntrackedFiles=no in a user's config
            // would hide exactly the files an undo must not lose.
            "--untracked-files=normal",
            // No git started in a submodule, where a command may have written
            // the configuration (see the module's documentation).
            "--ignore-submodules=all",
            "--no-renames",
        ])
        .current_dir(root)
        .stdin(Stdio::null());
    let output = command
        .output()
        .map_err(|e| Error::io(Path::new(&program), e))?;
    if !output.status.success() {
        return Err(Error::GitCommand {
            command: format!("{command:?}"),
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    parse_porcelain_v2(&output.stdout)
}

/// The copy of the user's index at `git_dir` that `git status` may write, made for
/// this version of it if there is none yet: `.git/harness/status-index-<identity>`,
/// named by the user's index's device, inode, size, change times and checksum, so
/// that any change to it (git replaces it whole, under a new inode) makes a new
/// copy, and an old copy (staging since undone, say) is never taken for it. Copies
/// of other versions are removed.
///
/// `None`, and the check reads the user's index without writing it, when there is
/// no index, when it changed while it was copied, and where the copy cannot be made.
fn private_index(git_dir: &Path) -> Option<PathBuf> {
    let mut user = File::open(git_dir.join("index")).ok()?;
    let identity = identity(&user)?;
    let dir = git_dir.join("harness");
    let name = format!("{PRIVATE_INDEX}{identity}");
    let path = dir.join(&name);
    if path.is_file() {
        return Some(path);
    }
    fs::create_dir_all(&dir).ok()?;
    let mut copy = tempfile::Builder::new()
        .prefix(PRIVATE_INDEX_NEW)
        .tempfile_in(&dir)
        .ok()?;
    io::copy(&mut user, copy.as_file_mut()).ok()?;
    // git takes an entry changed in the same tick as the index was written for one
    // that may have changed since, and compares its content: the copy must keep the
    // time of the index it copies for git to tell the same entries.
    let written = user
        .metadata()
        .and_then(|metadata| metadata.modified())
        .ok()?;
    copy.as_file().set_modified(written).ok()?;
    // Written in place meanwhile (git never does): the copy may be of neither version.
    if self::identity(&user)? != identity {
        return None;
    }
    copy.persist(&path).ok()?;
    for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
        let other = entry.file_name();
        if other != *name && other.to_string_lossy().starts_with(PRIVATE_INDEX) {
            // Another harness may be using it: git then writes it anew, and the
            // next check removes it again.
            let _ = fs::remove_file(entry.path());
        }
    }
    Some(path)
}

/// The start of the names of the private indexes ([`private_index`]).
const PRIVATE_INDEX: &str = "status-index-";

/// The start of the name of a private index being copied: also [`PRIVATE_INDEX`]'s,
/// so that one left behind by a harness that died is removed with the old copies.
const PRIVATE_INDEX_NEW: &str = "status-index-new-";

/// What tells one version of the index open as `file` from every other: device,
/// inode, size, modification and change times, and its last 32 bytes (git's
/// checksum of the rest); `None` where that cannot be read.
#[cfg(unix)]
fn identity(file: &File) -> Option<String> {
    use std::fmt::Write as _;
    use std::os::unix::fs::{FileExt, MetadataExt};
    let metadata = file.metadata().ok()?;
    let mut tail = [0u8; 32];
    let start = metadata.size().checked_sub(tail.len() as u64)?;
    file.read_exact_at(&mut tail, start).ok()?;
    let mut identity = format!(
        "{:x}-{:x}-{:x}-{}.{}-{}.{}-",
        metadata.dev(),
        metadata.ino(),
        metadata.size(),
        metadata.mtime(),
        metadata.mtime_nsec(),
        metadata.ctime(),
        metadata.ctime_nsec(),
    );
    for byte in tail {
        let _ = write!(identity, "{byte:02x}");
    }
    Some(identity)
}

/// Elsewhere there is no identity to trust, so no private index.
#[cfg(not(unix))]
// Not compiled where mutation testing runs (Linux), so its mutants could not
// fail a test; `mutants::skip` (a no-op attribute) tells cargo-mutants.
#[cfg_attr(test, mutants::skip)]
fn identity(_: &File) -> Option<String> {
    None
}

/// The paths of `git status --porcelain=v2 -z --no-renames` output.
fn parse_porcelain_v2(output: &[u8]) -> Result<Vec<PathBuf>, Error> {
    let mut paths = Vec::new();
    for record in output.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        // The path is the last field; it may itself contain spaces.
        let fields_before_path = match record[0] {
            b'1' => 8,
            b'u' => 10,
            b'?' => 1,
            _ => {
                return Err(Error::GitCommand {
                    command: "git status --porcelain=v2".into(),
                    status: "unexpected output".into(),
                    stderr: String::from_utf8_lossy(record).into_owned(),
                });
            }
        };
        match record
            .splitn(fields_before_path + 1, |&b| b == b' ')
            .nth(fields_before_path)
        {
            Some(path) => paths.push(paths::from_bytes(path)),
            None => {
                return Err(Error::GitCommand {
                    command: "git status --porcelain=v2".into(),
                    status: "truncated output".into(),
                    stderr: String::from_utf8_lossy(record).into_owned(),
                });
            }
        }
    }
    Ok(paths)
}

/// The submodules of `repo`'s index that are not as recorded: a new commit checked out,
/// a staged change of the recorded commit, or changed, staged or untracked files in
/// them, whatever `.gitmodules` says to ignore (what `git status
/// --ignore-submodules=none` reports). An uninitialized submodule is clean.
///
/// A submodule whose state libgit2 cannot read (no name in `.gitmodules`, a damaged
/// git directory) counts as dirty: the check then refuses where it cannot tell.
fn dirty_submodules(repo: &Repository) -> Result<Vec<PathBuf>, Error> {
    // Every flag but where the submodule is found, and "not checked out".
    let not_as_recorded = !SubmoduleStatus::from_iter([
        SubmoduleStatus::IN_HEAD,
        SubmoduleStatus::IN_INDEX,
        SubmoduleStatus::IN_CONFIG,
        SubmoduleStatus::IN_WD,
        SubmoduleStatus::WD_UNINITIALIZED,
    ]);
    Ok(submodules(repo)?
        .into_iter()
        .filter(|path| {
            path.to_str()
                .and_then(|name| repo.submodule_status(name, SubmoduleIgnore::None).ok())
                .is_none_or(|status| status.intersects(not_as_recorded))
        })
        .collect())
}

/// The paths of the submodules `repo`'s index records (its gitlinks), relative to
/// the top of the working tree.
pub(crate) fn submodules(repo: &Repository) -> Result<Vec<PathBuf>, Error> {
    const GITLINK: u32 = 0o160_000;
    let index = repo.index().context("read the index")?;
    Ok(index
        .iter()
        .filter(|entry| entry.mode & 0o170_000 == GITLINK)
        .map(|entry| paths::from_bytes(&entry.path))
        .collect())
}

/// The check through libgit2.
fn libgit2_status(repo: &Repository) -> Result<Vec<PathBuf>, Error> {
    let mut options = StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(false)
        .include_ignored(false)
        // Asked apart, whatever `.gitmodules` says to ignore ([`dirty_submodules`]).
        .exclude_submodules(true)
        .renames_head_to_index(false)
        .renames_index_to_workdir(false);
    let statuses = repo
        .statuses(Some(&mut options))
        .context("read the status of the working tree")?;
    Ok(statuses
        .iter()
        .filter(|entry| !entry.status().intersects(Status::IGNORED))
        .map(|entry| paths::from_bytes(entry.path_bytes()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Packer;
    use std::fs;

    macro_rules! parses {
        ($($name:ident: $output:expr => $paths:expr;)*) => {$(
            #[test]
            fn $name() {
                let got = parse_porcelain_v2($output).unwrap();
                let want: Vec<PathBuf> = $paths.iter().map(PathBuf::from).collect();
                assert_eq!(got, want);
            }
        )*};
    }

    const HASH: &str = "1234567890123456789012345678901234567890";

    parses! {
        nothing: b"" => Vec::<&str>::new();
        untracked_line: b"? new file.txt\0" => ["new file.txt"];
        untracked_directory_line: b"? dir/\0" => ["dir/"];
        ordinary: format!("1 .M N... 100644 100644 100644 {HASH} {HASH} a b/c d\0").as_bytes()
            => ["a b/c d"];
        unmerged: format!("u UU N... 100644 100644 100644 100644 {HASH} {HASH} {HASH} both.txt\0").as_bytes()
            => ["both.txt"];
        several: format!("1 D. N... 100644 000000 000000 {HASH} {HASH} gone\0? x\0? y\0").as_bytes()
            => ["gone", "x", "y"];
    }

    #[test]
    fn unknown_and_truncated_records_are_errors() {
        for bad in [
            &b"# branch.oid abc\0"[..],
            b"1 .M N... 100644\0",
            b"u UU\0",
            b"?\0",
        ] {
            let err = parse_porcelain_v2(bad).unwrap_err();
            assert!(matches!(err, Error::GitCommand { .. }), "{bad:?}: {err}");
        }
    }

    #[test]
    fn detect_finds_git_and_falls_back_without_it() {
        let missing = OsStr::new("/nonexistent/harness-undo-test/git");
        assert_eq!(Probe::detect(missing), Probe::Libgit2);
        // `false` runs but fails, which is not a working git either.
        assert_eq!(Probe::detect(OsStr::new("false")), Probe::Libgit2);
        let shell = Command::new("sh")
            .args(["-c", "command -v git || true"])
            .output()
            .unwrap();
        let found = String::from_utf8_lossy(&shell.stdout).trim().to_owned();
        if !found.is_empty() {
            assert_eq!(
                Probe::detect(OsStr::new("git")),
                Probe::GitCli(found.clone().into())
            );
            let dir = tempfile::tempdir().unwrap();
            assert_eq!(
                Probe::for_workspace(dir.path()),
                &Probe::GitCli(found.into())
            );
        }
    }

    #[test]
    fn a_program_is_found_only_in_absolute_directories_of_path() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let system = dir.path().join("system");
        fs::create_dir(&system).unwrap();
        for place in [dir.path(), &system] {
            let program = place.join("tool");
            fs::write(&program, "#!/bin/sh\n").unwrap();
            fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
        }
        // Relative entries, the empty one among them, would be looked up from the
        // current directory: the workspace, where git runs.
        let cwd = std::env::current_dir().unwrap();
        let relative = pathdiff(dir.path(), &cwd);
        let search_path =
            std::env::join_paths([PathBuf::new(), PathBuf::from("."), relative, system.clone()])
                .unwrap();
        assert_eq!(
            find_program_in(OsStr::new("tool"), Some(&search_path)),
            Some(system.join("tool"))
        );
        let only_relative = std::env::join_paths([PathBuf::new(), PathBuf::from(".")]).unwrap();
        assert_eq!(
            find_program_in(OsStr::new("tool"), Some(&only_relative)),
            None
        );
        assert_eq!(find_program_in(OsStr::new("tool"), None), None);
        assert_eq!(
            find_program_in(OsStr::new("./tool"), None),
            Some(PathBuf::from("./tool")),
            "a path is taken as it is"
        );
    }

    /// `path` relative to `base`, both absolute: `../..` up to `/`, then down.
    fn pathdiff(path: &Path, base: &Path) -> PathBuf {
        let ups = base.components().count() - 1;
        let mut relative: PathBuf = std::iter::repeat_n("..", ups).collect();
        relative.push(path.strip_prefix("/").unwrap());
        relative
    }

    #[test]
    fn a_git_inside_the_workspace_is_never_run() {
        let Some(Probe::GitCli(git)) = git() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Probe::for_workspace(dir.path()),
            &Probe::GitCli(git.clone())
        );
        // Every file lies in `/`: as if the workspace held this machine's git.
        assert_eq!(Probe::for_workspace(Path::new("/")), &Probe::Libgit2);
        assert_eq!(
            Packer::for_workspace(Path::new("/")),
            Packer::Libgit2,
            "nor does the copy to the store run it"
        );
        assert!(lies_in(Path::new(&git), Path::new("/")));
        assert!(!lies_in(Path::new(&git), dir.path()));
        assert!(!lies_in(&dir.path().join("missing"), dir.path()));
    }

    #[test]
    fn a_failing_git_is_reported_with_its_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        // `--git-dir` of a directory that is not a repository makes git fail.
        let err = git_status(
            git_command(OsStr::new("git")),
            &dir.path().join("nope"),
            dir.path(),
        );
        if let Err(Error::GitCommand { stderr, .. }) = &err {
            assert!(!stderr.is_empty());
        } else if Command::new("git").arg("--version").output().is_ok() {
            panic!("expected a git failure, got {err:?}");
        }
        drop(repo);
        let err = git_status(
            git_command(OsStr::new("/nonexistent/git")),
            dir.path(),
            dir.path(),
        )
        .unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
    }

    /// A repository with one commit and a `.gitignore`.
    fn fixture() -> (tempfile::TempDir, Repository) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        fs::write(dir.path().join(".gitignore"), "*.log\nbuild/\n").unwrap();
        fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(dir.path().join("sub/b.txt"), "b\n").unwrap();
        fs::write(dir.path().join("sub/c.txt"), "c\n").unwrap();
        let mut index = repo.index().unwrap();
        for path in [".gitignore", "a.txt", "sub/b.txt", "sub/c.txt"] {
            index.add_path(Path::new(path)).unwrap();
        }
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@t").unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "init", &tree, &[])
            .unwrap();
        drop(tree);
        (dir, repo)
    }

    fn sorted(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
        paths.sort();
        paths
    }

    #[test]
    fn a_path_listed_twice_counts_once() {
        for probe in probes() {
            let (dir, repo) = fixture();
            // git prints tracked changes before untracked files, so the two
            // lines of a.txt are apart until sorted.
            fs::write(dir.path().join("z.txt"), "z").unwrap();
            fs::write(dir.path().join("sub/c.txt"), "changed").unwrap();
            let mut index = repo.index().unwrap();
            index.remove_path(Path::new("a.txt")).unwrap();
            index.write().unwrap();
            let got = probe.dirty_paths(&repo, dir.path()).unwrap();
            let want = ["a.txt", "sub/c.txt", "z.txt"].map(PathBuf::from);
            assert_eq!(got, want, "{probe:?}");
        }
    }

    /// git's probe, where git is installed.
    fn git() -> Option<Probe> {
        Some(Probe::detect(OsStr::new("git"))).filter(|probe| *probe != Probe::Libgit2)
    }

    /// The private indexes in the harness's directory of `repo`'s git directory.
    fn private_indexes(repo: &Repository) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = fs::read_dir(repo.path().join("harness"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.to_string_lossy().contains(PRIVATE_INDEX))
            .collect();
        found.sort();
        found
    }

    #[test]
    fn git_runs_on_a_private_copy_of_the_index_with_its_time_and_an_untracked_cache() {
        let Some(git) = git() else { return };
        let (dir, repo) = fixture();
        let user_index = repo.path().join("index");
        let before = fs::read(&user_index).unwrap();
        let written = fs::metadata(&user_index).unwrap().modified().unwrap();
        fs::write(dir.path().join("new.txt"), "n").unwrap();
        for _ in 0..2 {
            assert_eq!(
                git.dirty_paths(&repo, dir.path()).unwrap(),
                [PathBuf::from("new.txt")]
            );
        }
        // The user's index is neither written nor touched.
        assert_eq!(fs::read(&user_index).unwrap(), before);
        assert_eq!(
            fs::metadata(&user_index).unwrap().modified().unwrap(),
            written
        );
        let copies = private_indexes(&repo);
        assert_eq!(copies.len(), 1, "{copies:?}");
        let copy = fs::read(&copies[0]).unwrap();
        assert!(
            copy.windows(4).any(|window| window == b"UNTR"),
            "the copy holds no untracked cache"
        );
    }

    #[test]
    fn a_copy_keeps_the_time_of_the_index_it_copies() {
        let (dir, repo) = fixture();
        let user_index = repo.path().join("index");
        let copy = private_index(repo.path()).unwrap();
        assert_eq!(
            fs::metadata(&copy).unwrap().modified().unwrap(),
            fs::metadata(&user_index).unwrap().modified().unwrap()
        );
        assert_eq!(fs::read(&copy).unwrap(), fs::read(&user_index).unwrap());
        // The same version of the index, the same copy.
        assert_eq!(private_index(repo.path()), Some(copy.clone()));
        drop(dir);
    }

    #[test]
    fn a_new_version_of_the_index_gets_a_new_copy_and_the_old_one_goes() {
        let (_dir, repo) = fixture();
        let first = private_index(repo.path()).unwrap();
        let mut index = repo.index().unwrap();
        index.remove_path(Path::new("a.txt")).unwrap();
        index.write().unwrap();
        let second = private_index(repo.path()).unwrap();
        assert_ne!(first, second);
        assert_eq!(private_indexes(&repo), [second]);
    }

    #[test]
    fn without_an_index_there_is_no_copy() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        assert_eq!(private_index(repo.path()), None);
    }

    type Change = fn(&Path, &Repository);

    /// What the second check finds after each change, made after a first check built
    /// the private copy and its untracked cache on a clean tree (with `before` made
    /// first).
    const SECOND_CHECKS: &[(&str, Change, Change, &[&str])] = &[
        (
            "a file changed to the same size",
            |_, _| {},
            |root, _| fs::write(root.join("a.txt"), "z\n").unwrap(),
            &["a.txt"],
        ),
        (
            "a staged deletion",
            |_, _| {},
            |_, repo| {
                let mut index = repo.index().unwrap();
                index.remove_path(Path::new("a.txt")).unwrap();
                index.write().unwrap();
            },
            &["a.txt"],
        ),
        (
            "a new file in a listed directory",
            |_, _| {},
            |root, _| fs::write(root.join("sub/new.txt"), "n").unwrap(),
            &["sub/new.txt"],
        ),
        (
            "a new directory of files",
            |_, _| {},
            |root, _| {
                fs::create_dir_all(root.join("sub/deeper")).unwrap();
                fs::write(root.join("sub/deeper/new.txt"), "n").unwrap();
            },
            &["sub/deeper/"],
        ),
        (
            "new ignored files",
            |_, _| {},
            |root, _| {
                fs::create_dir_all(root.join("build")).unwrap();
                fs::write(root.join("build/out"), "o").unwrap();
                fs::write(root.join("x.log"), "l").unwrap();
            },
            &[],
        ),
        (
            "a file a rule outside the tree no longer ignores",
            |root, repo| {
                let exclude = repo.path().join("info/exclude");
                fs::create_dir_all(exclude.parent().unwrap()).unwrap();
                fs::write(&exclude, "*.tmp\n").unwrap();
                fs::write(root.join("notes.tmp"), "n").unwrap();
            },
            |_, repo| fs::write(repo.path().join("info/exclude"), "").unwrap(),
            &["notes.tmp"],
        ),
    ];

    #[test]
    fn a_second_check_sees_every_change_made_since_the_first_built_its_cache() {
        let Some(git) = git() else { return };
        for (what, before, change, want) in SECOND_CHECKS {
            let (dir, repo) = fixture();
            before(dir.path(), &repo);
            let first = git.dirty_paths(&repo, dir.path()).unwrap();
            assert_eq!(first, Vec::<PathBuf>::new(), "{what}: before");
            change(dir.path(), &repo);
            let want: Vec<PathBuf> = want.iter().map(PathBuf::from).collect();
            assert_eq!(git.dirty_paths(&repo, dir.path()).unwrap(), want, "{what}");
        }
    }

    /// A command can make a file and set its directory's modification time back
    /// (`touch -r`); the cache must still see the file, even for a user whose
    /// configuration tells git not to trust change times.
    #[test]
    fn a_new_file_is_seen_in_a_directory_whose_time_was_set_back() {
        let Some(git) = git() else { return };
        for config in ["", "[core]\n\ttrustctime = false\n\tcheckStat = minimal\n"] {
            let (dir, repo) = fixture();
            let mut file = fs::OpenOptions::new()
                .append(true)
                .open(repo.path().join("config"))
                .unwrap();
            std::io::Write::write_all(&mut file, config.as_bytes()).unwrap();
            let sub = dir.path().join("sub");
            // Well before the cache is made, so that git does not take it for racy.
            let before = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
            File::open(&sub).unwrap().set_modified(before).unwrap();
            for _ in 0..2 {
                assert_eq!(
                    git.dirty_paths(&repo, dir.path()).unwrap(),
                    Vec::<PathBuf>::new()
                );
            }
            // git compares whole seconds: a change time in the second the cache was
            // made looks unchanged (a window docs/usage.md states).
            std::thread::sleep(std::time::Duration::from_millis(1100));
            fs::write(sub.join("planted.txt"), "p").unwrap();
            File::open(&sub).unwrap().set_modified(before).unwrap();
            assert_eq!(
                git.dirty_paths(&repo, dir.path()).unwrap(),
                [PathBuf::from("sub/planted.txt")],
                "{config:?}"
            );
        }
    }

    /// Both probes, or only libgit2 where git is not installed.
    fn probes() -> Vec<Probe> {
        let mut probes = vec![Probe::Libgit2];
        if let Probe::GitCli(git) = Probe::detect(OsStr::new("git")) {
            probes.push(Probe::GitCli(git));
        }
        probes
    }

    type Setup = fn(&Path, &Repository);

    macro_rules! both_probes_agree {
        ($($name:ident: $setup:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let setup: Setup = $setup;
                let want: Vec<PathBuf> = sorted($want.iter().map(PathBuf::from).collect());
                for probe in probes() {
                    let (dir, repo) = fixture();
                    setup(dir.path(), &repo);
                    let got = probe.dirty_paths(&repo, dir.path()).unwrap();
                    assert_eq!(got, want, "{probe:?}");
                }
            }
        )*};
    }

    both_probes_agree! {
        clean_tree: |_, _| {} => Vec::<&str>::new();
        ignored_files_are_clean: |root, _| {
            fs::write(root.join("x.log"), "log").unwrap();
            fs::create_dir(root.join("build")).unwrap();
            fs::write(root.join("build/out"), "o").unwrap();
        } => Vec::<&str>::new();
        empty_directory_is_clean: |root, _| fs::create_dir(root.join("empty")).unwrap()
            => Vec::<&str>::new();
        directory_of_ignored_files_is_clean: |root, _| {
            fs::create_dir_all(root.join("traces/deep")).unwrap();
            fs::write(root.join("traces/one.log"), "l").unwrap();
            fs::write(root.join("traces/deep/two.log"), "l").unwrap();
        } => Vec::<&str>::new();
        untracked_file_beside_ignored_ones: |root, _| {
            fs::create_dir_all(root.join("traces")).unwrap();
            fs::write(root.join("traces/one.log"), "l").unwrap();
            fs::write(root.join("traces/notes.txt"), "n").unwrap();
        } => ["traces/"];
        untracked_file_in_a_tracked_directory: |root, _| {
            fs::write(root.join("sub/new.txt"), "n").unwrap();
        } => ["sub/new.txt"];
        modified: |root, _| fs::write(root.join("a.txt"), "changed\n").unwrap() => ["a.txt"];
        deleted: |root, _| fs::remove_file(root.join("sub/b.txt")).unwrap() => ["sub/b.txt"];
        untracked_file: |root, _| fs::write(root.join("new.txt"), "n").unwrap() => ["new.txt"];
        untracked_files_in_a_directory: |root, _| {
            fs::create_dir(root.join("newdir")).unwrap();
            fs::write(root.join("newdir/one"), "1").unwrap();
            fs::write(root.join("newdir/two"), "2").unwrap();
        } => ["newdir/"];
        staged: |root, repo| {
            fs::write(root.join("sub/c.txt"), "staged\n").unwrap();
            let mut index = repo.index().unwrap();
            index.add_path(Path::new("sub/c.txt")).unwrap();
            index.write().unwrap();
        } => ["sub/c.txt"];
        staged_deletion: |_, repo| {
            let mut index = repo.index().unwrap();
            index.remove_path(Path::new("a.txt")).unwrap();
            index.write().unwrap();
        } => ["a.txt"];
        mode_change: |root, _| {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(root.join("a.txt"), fs::Permissions::from_mode(0o755)).unwrap();
        } => ["a.txt"];
        clean_submodule: |root, repo| {
            submodule(root, repo);
        } => Vec::<&str>::new();
        file_changed_in_a_submodule: |root, repo| {
            submodule(root, repo);
            fs::write(root.join("mod/lib.txt"), "changed\n").unwrap();
        } => ["mod"];
        untracked_file_in_a_submodule: |root, repo| {
            submodule(root, repo);
            fs::write(root.join("mod/new.txt"), "n").unwrap();
        } => ["mod"];
        new_commit_in_a_submodule: |root, repo| {
            let inner = submodule(root, repo);
            fs::write(root.join("mod/lib.txt"), "two\n").unwrap();
            commit(&inner, &["lib.txt"], "two");
        } => ["mod"];
        uninitialized_submodule: |root, repo| {
            submodule(root, repo);
            fs::remove_dir_all(root.join("mod")).unwrap();
            fs::create_dir(root.join("mod")).unwrap();
        } => Vec::<&str>::new();
        changes_that_gitmodules_says_to_ignore_are_seen: |root, repo| {
            submodule(root, repo);
            let gitmodules = fs::read_to_string(root.join(".gitmodules")).unwrap();
            fs::write(root.join(".gitmodules"), gitmodules + "\tignore = all\n").unwrap();
            commit(repo, &[".gitmodules"], "ignore the submodule");
            fs::write(root.join("mod/lib.txt"), "changed\n").unwrap();
        } => ["mod"];
    }

    /// Adds a submodule at `mod` whose git directory is `mod/.git` in the working
    /// tree (as a clone made before git 1.7.8 has it, and as a command can make it),
    /// committed; returns its repository.
    fn submodule(root: &Path, repo: &Repository) -> Repository {
        let inner = Repository::init(root.join("mod")).unwrap();
        fs::write(root.join("mod/lib.txt"), "lib\n").unwrap();
        commit(&inner, &["lib.txt"], "one");
        fs::write(
            root.join(".gitmodules"),
            "[submodule \"mod\"]\n\tpath = mod\n\turl = ./mod\n",
        )
        .unwrap();
        let head = inner.head().unwrap().target().unwrap();
        let mut index = repo.index().unwrap();
        index
            .add(&git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: 0o160_000,
                uid: 0,
                gid: 0,
                file_size: 0,
                id: head,
                flags: 0,
                flags_extended: 0,
                path: b"mod".to_vec(),
            })
            .unwrap();
        index.write().unwrap();
        commit(repo, &[".gitmodules"], "add the submodule");
        inner
    }

    /// Commits `paths` of `repo`'s working tree with the rest of its index.
    fn commit(repo: &Repository, paths: &[&str], message: &str) {
        let mut index = repo.index().unwrap();
        for path in paths {
            index.add_path(Path::new(path)).unwrap();
        }
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@t").unwrap();
        let parent = repo.head().ok().and_then(|head| head.peel_to_commit().ok());
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
            .unwrap();
    }

    #[test]
    fn each_submodule_s_git_path_is_named_checked_out_or_not() {
        let (dir, repo) = fixture();
        submodule(dir.path(), &repo);
        let root = dir.path().canonicalize().unwrap();
        assert_eq!(
            crate::submodule_git_paths(dir.path()).unwrap(),
            [root.join("mod/.git")]
        );
        fs::remove_dir_all(root.join("mod")).unwrap();
        fs::create_dir(root.join("mod")).unwrap();
        assert_eq!(
            crate::submodule_git_paths(dir.path()).unwrap(),
            [root.join("mod/.git")],
            "not checked out"
        );
        assert!(matches!(
            crate::submodule_git_paths(&root.join("mod")),
            Err(Error::NotARepository { .. } | Error::NotRepositoryRoot { .. })
        ));
    }

    #[test]
    fn the_places_the_configuration_takes_programs_from_are_named() {
        let (dir, repo) = fixture();
        let root = dir.path().canonicalize().unwrap();
        let named = || crate::configured_program_paths(dir.path()).unwrap();
        assert_eq!(named(), Vec::<PathBuf>::new());
        let mut config = repo.config().unwrap();
        config.set_str("core.hooksPath", ".husky/_").unwrap();
        config.set_str("core.fsmonitor", "tools/monitor").unwrap();
        assert_eq!(named(), [root.join(".husky/_"), root.join("tools/monitor")]);
        config
            .set_str("core.hooksPath", "/elsewhere/hooks")
            .unwrap();
        for switch in ["true", "false", "yes", "0"] {
            config.set_str("core.fsmonitor", switch).unwrap();
            assert_eq!(named(), [PathBuf::from("/elsewhere/hooks")], "{switch}");
        }
        // The top itself, or a directory holding it, is not named.
        for whole in ["", ".", "..", "sub/..", root.to_str().unwrap()] {
            config.set_str("core.hooksPath", whole).unwrap();
            assert_eq!(named(), Vec::<PathBuf>::new(), "{whole:?}");
        }
        config.set_str("core.hooksPath", "sub").unwrap();
        assert_eq!(named(), [root.join("sub")]);
    }

    #[test]
    fn no_program_a_submodule_s_configuration_names_is_run() {
        let Some(git) = git() else { return };
        let (dir, repo) = fixture();
        let inner = submodule(dir.path(), &repo);
        // What a command can write in `mod/.git`: a file system monitor and a clean
        // filter applied to every file, each of which git would run as the user.
        let ran = dir.path().join("ran");
        let mark = format!("touch '{}'; echo", ran.display());
        let mut config = inner.config().unwrap();
        config.set_str("core.fsmonitor", &mark).unwrap();
        config.set_str("filter.mark.clean", &mark).unwrap();
        fs::write(dir.path().join("mod/.gitattributes"), "* filter=mark\n").unwrap();
        fs::write(dir.path().join("mod/lib.txt"), "changed\n").unwrap();
        let got = git.dirty_paths(&repo, dir.path()).unwrap();
        assert_eq!(got, [PathBuf::from("mod")]);
        assert!(!ran.exists(), "git ran the submodule's configured program");
        // The same repository asked the way git asks by default runs it: the check
        // above is not passing because nothing would have run.
        let status = Command::new("git")
            .args(["status", "--porcelain", "--ignore-submodules=none"])
            .current_dir(dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
        assert!(
            ran.exists(),
            "plain git status runs the submodule's program"
        );
    }

    /// Writes an executable shell script at `path` that creates `mark`.
    fn marking_script(path: &Path, mark: &Path) {
        fs::write(path, format!("#!/bin/sh\ntouch '{}'\n", mark.display())).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
        }
    }

    /// The repository's configuration names programs that lie in its working tree,
    /// where commands write: a hooks directory with a `post-index-change` hook, a file
    /// system monitor, and two filter drivers (one run per file, one long-running) that
    /// `.gitattributes` gives every file. Returns the file each program creates.
    fn programs_in_the_tree(dir: &Path, repo: &Repository) -> [PathBuf; 4] {
        let marks = ["hook", "fsmonitor", "clean", "process"].map(|name| dir.join(name));
        fs::create_dir(dir.join("hooks")).unwrap();
        marking_script(&dir.join("hooks/post-index-change"), &marks[0]);
        marking_script(&dir.join("monitor.sh"), &marks[1]);
        marking_script(&dir.join("clean.sh"), &marks[2]);
        marking_script(&dir.join("process.sh"), &marks[3]);
        let mut config = repo.config().unwrap();
        config.set_str("core.hooksPath", "hooks").unwrap();
        config.set_str("core.fsmonitor", "./monitor.sh").unwrap();
        config
            .set_str("filter.mark.clean", "./clean.sh; cat")
            .unwrap();
        config.set_bool("filter.mark.required", true).unwrap();
        config
            .set_str("filter.in.a.dot.process", "./process.sh")
            .unwrap();
        fs::write(
            dir.join(".gitattributes"),
            "*.txt filter=mark\nsub/* filter=in.a.dot\n",
        )
        .unwrap();
        // The same bytes under new stat data: git reads each file through its filter,
        // and refreshes the entry, which writes an index, which runs the hook.
        for file in ["a.txt", "sub/c.txt"] {
            let path = dir.join(file);
            let bytes = fs::read(&path).unwrap();
            fs::remove_file(&path).unwrap();
            fs::write(&path, bytes).unwrap();
        }
        marks
    }

    #[test]
    fn no_program_the_repository_s_configuration_names_is_run() {
        let Some(git) = git() else { return };
        let (dir, repo) = fixture();
        let marks = programs_in_the_tree(dir.path(), &repo);
        let got = git.dirty_paths(&repo, dir.path()).unwrap();
        let untracked = [
            ".gitattributes",
            "clean.sh",
            "hooks/",
            "monitor.sh",
            "process.sh",
        ];
        assert_eq!(got, untracked.map(PathBuf::from));
        let ran: Vec<_> = marks.iter().filter(|mark| mark.exists()).collect();
        assert!(ran.is_empty(), "the check ran {ran:?}");
        assert_eq!(private_indexes(&repo).len(), 1, "the check was not git's");
        // Plain `git status` on the same repository runs every one of them: the check
        // above passes because it ran none, not because none would run. (The process
        // filter, which does not speak git's protocol, ends the first before it writes
        // the index; the second, without it, runs the hook.)
        for settings in [&[][..], &["-c", "filter.in.a.dot.process="]] {
            Command::new("git")
                .args(settings)
                .args(["status", "--porcelain"])
                .current_dir(dir.path())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .unwrap();
        }
        let missed: Vec<_> = marks.iter().filter(|mark| !mark.exists()).collect();
        assert!(missed.is_empty(), "git status did not run {missed:?}");
    }

    #[test]
    fn a_filter_driver_git_cannot_be_told_to_skip_leaves_the_check_to_libgit2() {
        let Some(git) = git() else { return };
        let (dir, repo) = fixture();
        let mark = dir.path().join("ran");
        marking_script(&dir.path().join("clean.sh"), &mark);
        // `-c filter.a=b.clean=` would set `filter.a` to `b.clean=`.
        let mut config = repo.config().unwrap();
        config
            .set_str("filter.a=b.clean", "./clean.sh; cat")
            .unwrap();
        fs::write(dir.path().join(".gitattributes"), "* filter=a=b\n").unwrap();
        fs::write(dir.path().join("a.txt"), "changed\n").unwrap();
        let got = git.dirty_paths(&repo, dir.path()).unwrap();
        assert_eq!(
            got,
            [".gitattributes", "a.txt", "clean.sh"].map(PathBuf::from)
        );
        assert!(!mark.exists(), "the check ran the filter");
        assert!(private_indexes(&repo).is_empty(), "git was run");
    }

    #[test]
    fn filter_drivers_are_named_from_git_s_listing() {
        let listed = b"filter.lfs.clean\ngit-lfs clean -- %f\0filter.lfs.required\ntrue\0\
                       filter.in.a.dot.process\n./p\0filter.lfs.smudge\nx\ny\0";
        assert_eq!(
            filter_drivers(listed).unwrap(),
            [OsString::from("lfs"), OsString::from("in.a.dot")]
        );
        assert_eq!(filter_drivers(b"").unwrap(), Vec::<OsString>::new());
        for unusable in [
            &b"filter.a=b.clean\nx\0"[..],
            b"filter..clean\nx\0",
            b"filter.clean\nx\0",
            b"core.fsmonitor\nx\0",
        ] {
            assert_eq!(
                filter_drivers(unusable),
                None,
                "{}",
                String::from_utf8_lossy(unusable)
            );
        }
    }

    #[test]
    fn every_git_the_harness_runs_names_no_hooks_and_no_monitor() {
        let command = git_command(OsStr::new("git"));
        let args: Vec<_> = command.get_args().collect();
        assert_eq!(
            args,
            [
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "core.fsmonitor=false"
            ]
        );
    }
}
