//! What a confining tier hides from commands in a workspace, found by one walk as a run
//! starts: the files and directories a deny rule refuses, and every other name those files,
//! and the home's secret files, have there.
//!
//! A hard link is the same file under a second name that no rule matches: `ln .env
//! notes.txt`, made before the run, would otherwise let `cat notes.txt` read what `.env`'s
//! rule hides. A command cannot keep such a link made during the run: under bwrap the
//! hidden name is a mount point (`ln` fails across it); under Landlock a link into a
//! directory where it could be read is refused, and one made at the top is removed once the
//! command has ended (`repair`).

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::HOME_SECRETS;

/// The most entries [`hidden_in_workspace`] looks at, the workspace's and the home
/// secrets' together: a huge tree is not walked whole at every start.
pub const WALK_LIMIT: usize = 50_000;

/// The paths a confining tier should hide from commands ([`Confinement::hide`]), from
/// [`hidden_in_workspace`].
///
/// [`Confinement::hide`]: crate::Confinement::hide
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hidden {
    /// The paths, in the order found: denied ones, then other names of secret files.
    pub paths: Vec<PathBuf>,
    /// The git directories and `.git` files below the top of the workspace (of its
    /// submodules and of other repositories in it), found on the way, not walked into:
    /// [`Confinement::hide_denied`] protects them as it does the workspace's `.git`
    /// ([`Confinement::protect`]).
    ///
    /// [`Confinement::protect`]: crate::Confinement::protect
    /// [`Confinement::hide_denied`]: crate::Confinement::hide_denied
    pub git_dirs: Vec<PathBuf>,
    /// True if the walk stopped at [`WALK_LIMIT`] entries, so paths past it are missing.
    pub truncated: bool,
}

/// The paths under `root` to hide from commands: every entry `is_denied` matches, as it is
/// now (a denied directory whole, not walked into for more rules), also under the name a
/// link to a directory in the workspace gives it (hidden at its real path), then every other name
/// under `root` (a hard link) of each file so hidden and of each file in `home`'s secret
/// locations ([`HOME_SECRETS`]). `root/.git` is not walked: it is read-only to commands,
/// not secret.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// # let directory = tempfile::tempdir()?;
/// # let root = directory.path();
/// std::fs::write(root.join(".env"), "TOKEN=1")?;
/// std::fs::hard_link(root.join(".env"), root.join("notes.txt"))?;
/// let hidden = harness_exec::hidden_in_workspace(root, None, |path| path.ends_with(".env"));
/// assert_eq!(hidden.paths, [root.join(".env"), root.join("notes.txt")]);
/// # Ok(())
/// # }
/// ```
pub fn hidden_in_workspace(
    root: &Path,
    home: Option<&Path>,
    is_denied: impl Fn(&Path) -> bool,
) -> Hidden {
    hidden_within(root, home, is_denied, WALK_LIMIT)
}

/// [`hidden_in_workspace`], looking at `limit` entries at most.
fn hidden_within(
    root: &Path,
    home: Option<&Path>,
    is_denied: impl Fn(&Path) -> bool,
    limit: usize,
) -> Hidden {
    let mut walk = Walk {
        limit,
        ..Walk::default()
    };
    walk.workspace(root, is_denied);
    let mut secret_files = Vec::new();
    for denied in walk.denied.clone() {
        walk.files_in(&denied, &mut secret_files);
    }
    for secret in home
        .iter()
        .flat_map(|home| HOME_SECRETS.iter().map(|name| home.join(name)))
    {
        walk.files_in(&secret, &mut secret_files);
    }
    let links = other_names(&secret_files, &walk.files);
    let mut paths = walk.denied;
    paths.extend(links);
    Hidden {
        paths,
        git_dirs: walk.git_dirs,
        truncated: walk.truncated,
    }
}

/// What the walk found, within [`WALK_LIMIT`] entries.
#[derive(Default)]
struct Walk {
    /// The paths the read rules refuse.
    denied: Vec<PathBuf>,
    /// Every other regular file.
    files: Vec<PathBuf>,
    /// The `.git` entries below the top.
    git_dirs: Vec<PathBuf>,
    /// Entries looked at.
    seen: usize,
    /// The most entries to look at.
    limit: usize,
    /// True once the limit stopped the walk.
    truncated: bool,
}

impl Walk {
    /// Walks the workspace at `root`, sorting what it finds into denied paths and files.
    ///
    /// A rule names a place as the user spells it, and a link to a directory in the
    /// workspace (`config -> shared/config`) gives everything below it a second spelling
    /// (`config/secrets.yml`): the directory is walked again under the link's name, and
    /// what a rule refuses under that name is hidden at its real path. Links met in that
    /// second walk are not followed again; their own directory's walk follows them.
    fn workspace(&mut self, root: &Path, is_denied: impl Fn(&Path) -> bool) {
        let git = root.join(".git");
        let real_root = root.canonicalize().unwrap_or_else(|_| root.to_owned());
        // Each directory to list, with the spelling its entries are judged under.
        let mut pending = vec![(root.to_owned(), root.to_owned(), false)];
        while let Some((directory, spelled, through_link)) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&directory) else {
                continue;
            };
            for entry in entries.flatten() {
                if !self.count() {
                    return;
                }
                let path = entry.path();
                if path == git {
                    continue;
                }
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let spelling = spelled.join(entry.file_name());
                if is_denied(&spelling) {
                    self.denied.push(path);
                } else if entry.file_name() == ".git" {
                    if !through_link {
                        self.git_dirs.push(path);
                    }
                } else if kind.is_dir() {
                    pending.push((path, spelling, through_link));
                } else if kind.is_file() {
                    if !through_link {
                        self.files.push(path);
                    }
                } else if kind.is_symlink() && !through_link {
                    let target = std::fs::canonicalize(&path)
                        .ok()
                        .filter(|target| target.is_dir() && target.starts_with(&real_root));
                    if let Some(target) =
                        target.filter(|target| !target.starts_with(real_root.join(".git")))
                    {
                        pending.push((target, spelling, true));
                    }
                }
            }
        }
    }

    /// Adds to `files` the regular files at or under `path`, without following links.
    fn files_in(&mut self, path: &Path, files: &mut Vec<PathBuf>) {
        let mut pending = vec![path.to_owned()];
        while let Some(path) = pending.pop() {
            let Ok(metadata) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if metadata.is_file() {
                files.push(path);
            } else if metadata.is_dir() {
                let Ok(entries) = std::fs::read_dir(&path) else {
                    continue;
                };
                for entry in entries.flatten() {
                    if !self.count() {
                        return;
                    }
                    pending.push(entry.path());
                }
            }
        }
    }

    /// Counts one more entry; false once past the limit.
    fn count(&mut self) -> bool {
        self.seen += 1;
        if self.seen > self.limit {
            self.truncated = true;
        }
        !self.truncated
    }
}

/// The paths among `candidates` that are the same file as one of `secrets`: another hard
/// link of it. Only a secret with more than one link has another name, so in the usual
/// case, none, no candidate is looked at.
fn other_names(secrets: &[PathBuf], candidates: &[PathBuf]) -> Vec<PathBuf> {
    let linked: HashSet<(u64, u64)> = secrets
        .iter()
        .filter_map(|secret| std::fs::symlink_metadata(secret).ok())
        .filter(has_other_names)
        .map(|metadata| (metadata.dev(), metadata.ino()))
        .collect();
    if linked.is_empty() {
        return Vec::new();
    }
    candidates
        .iter()
        .filter(|candidate| {
            std::fs::symlink_metadata(candidate)
                .is_ok_and(|metadata| linked.contains(&(metadata.dev(), metadata.ino())))
        })
        .cloned()
        .collect()
}

/// True if the file may have another name: more than one link. Only spares looking at
/// every candidate when no secret has one, so a mutant that answers true more often (`>=`)
/// changes no result a test could see; `mutants::skip` (a no-op attribute) tells
/// cargo-mutants.
#[cfg_attr(test, mutants::skip)]
fn has_other_names(metadata: &std::fs::Metadata) -> bool {
    metadata.nlink() > 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `.env` anywhere, and `private` at the top.
    fn denied(root: &Path) -> impl Fn(&Path) -> bool {
        let private = root.join("private");
        move |path: &Path| path.ends_with(".env") || path == private
    }

    #[test]
    fn what_a_rule_names_through_a_link_to_a_directory_is_hidden_at_its_real_path() {
        let directory = tempfile::tempdir().expect("tempdir");
        let base = directory.path().canonicalize().expect("canonical");
        let (root, outside) = (base.join("repo"), base.join("outside"));
        std::fs::create_dir_all(root.join(".git/objects")).expect("git");
        std::fs::create_dir_all(root.join("shared/config/deep")).expect("shared");
        std::fs::create_dir_all(&outside).expect("outside");
        std::fs::write(root.join("shared/config/secrets.yml"), "s").expect("secret");
        std::fs::write(root.join("shared/config/deep/plan.txt"), "p").expect("plan");
        std::fs::write(root.join("shared/config/public.yml"), "p").expect("public");
        std::fs::write(outside.join("secrets.yml"), "o").expect("outside");
        std::os::unix::fs::symlink("shared/config", root.join("config")).expect("link");
        std::os::unix::fs::symlink(&outside, root.join("elsewhere")).expect("link out");
        // A loop, met again in the walk through `config`, is not followed twice.
        std::os::unix::fs::symlink("..", root.join("shared/config/up")).expect("loop");
        let rules = [
            root.join("config/secrets.yml"),
            root.join("config/deep"),
            root.join("elsewhere/secrets.yml"),
        ];
        let found = hidden_within(
            &root,
            None,
            |path| rules.iter().any(|rule| rule == path),
            40,
        );
        assert!(!found.truncated, "{found:?}");
        let mut hidden = found.paths;
        hidden.sort();
        // Outside the workspace nothing is walked: the file tools refuse such a path.
        assert_eq!(
            hidden,
            [
                root.join("shared/config/deep"),
                root.join("shared/config/secrets.yml")
            ]
        );
    }

    #[test]
    fn a_link_to_git_is_not_walked_again() {
        let directory = tempfile::tempdir().expect("tempdir");
        let root = directory.path().canonicalize().expect("canonical");
        for n in 0..20 {
            std::fs::create_dir_all(root.join(format!(".git/objects/{n:02}"))).expect("git");
        }
        std::os::unix::fs::symlink(".git", root.join("g")).expect("link");
        let found = hidden_within(&root, None, |_| false, 10);
        assert!(!found.truncated, "{found:?}");
    }

    #[test]
    fn denied_paths_and_every_other_name_of_a_denied_or_home_secret_file_are_hidden() {
        let directory = tempfile::tempdir().expect("tempdir");
        let base = directory.path().canonicalize().expect("canonical");
        let (root, home) = (base.join("repo"), base.join("home"));
        std::fs::create_dir_all(root.join(".git")).expect("git");
        std::fs::create_dir_all(root.join("src/deep")).expect("src");
        std::fs::create_dir_all(root.join("private")).expect("private");
        std::fs::create_dir_all(home.join(".ssh")).expect("ssh");
        std::fs::write(root.join(".env"), "A=1").expect("env");
        std::fs::write(root.join("private/plan.txt"), "plan").expect("plan");
        std::fs::write(home.join(".ssh/id_ed25519"), "key").expect("key");
        std::fs::write(root.join("src/main.rs"), "fn main() {}").expect("main");
        std::fs::write(root.join("src/once.txt"), "one link").expect("once");
        std::fs::hard_link(root.join("src/once.txt"), root.join("src/twice.txt")).expect("ln");
        std::fs::hard_link(root.join(".env"), root.join("notes.txt")).expect("ln env");
        std::fs::hard_link(root.join("private/plan.txt"), root.join("src/deep/plan"))
            .expect("ln plan");
        std::fs::hard_link(home.join(".ssh/id_ed25519"), root.join("src/key")).expect("ln key");
        std::fs::hard_link(root.join(".env"), root.join(".git/env")).expect("ln in git");

        let found = hidden_in_workspace(&root, Some(home.as_path()), denied(&root));
        assert!(!found.truncated);
        let mut hidden = found.paths;
        hidden.sort();
        assert_eq!(
            hidden,
            [
                root.join(".env"),
                root.join("notes.txt"),
                root.join("private"),
                root.join("src/deep/plan"),
                root.join("src/key"),
            ]
        );
        // Without the home, its key's other name is an ordinary file.
        let without_home = hidden_in_workspace(&root, None, denied(&root)).paths;
        assert!(
            !without_home.contains(&root.join("src/key")),
            "{without_home:?}"
        );
    }

    #[test]
    fn without_a_linked_secret_no_file_is_hidden_for_its_links() {
        let directory = tempfile::tempdir().expect("tempdir");
        let root = directory.path().canonicalize().expect("canonical");
        std::fs::write(root.join(".env"), "A=1").expect("env");
        std::fs::write(root.join("a"), "a").expect("a");
        std::fs::hard_link(root.join("a"), root.join("b")).expect("ln");
        assert_eq!(
            hidden_in_workspace(&root, None, denied(&root)),
            Hidden {
                paths: vec![root.join(".env")],
                git_dirs: Vec::new(),
                truncated: false
            }
        );
    }

    #[test]
    fn the_walk_stops_at_its_limit_and_says_so() {
        let directory = tempfile::tempdir().expect("tempdir");
        let root = directory.path().canonicalize().expect("canonical");
        std::fs::create_dir(root.join("sub")).expect("sub");
        std::fs::write(root.join("sub/.env"), "A=1").expect("env");
        // Two entries: `sub`, then `sub/.env`.
        let whole = hidden_within(&root, None, denied(&root), 2);
        assert_eq!(whole.paths, [root.join("sub/.env")]);
        assert!(!whole.truncated);
        let cut = hidden_within(&root, None, denied(&root), 1);
        assert_eq!(
            cut,
            Hidden {
                paths: Vec::new(),
                git_dirs: Vec::new(),
                truncated: true
            }
        );
    }

    #[test]
    fn the_git_directories_below_the_top_are_found_and_not_walked_into() {
        let directory = tempfile::tempdir().expect("tempdir");
        let root = directory.path().canonicalize().expect("canonical");
        for dir in [".git/objects", "vendor/lib/.git/objects", "sub"] {
            std::fs::create_dir_all(root.join(dir)).expect("mkdir");
        }
        for n in 0..10 {
            std::fs::write(root.join(format!("vendor/lib/.git/objects/{n}")), "").expect("object");
        }
        std::fs::write(root.join("sub/.git"), "gitdir: ../.git/modules/sub\n").expect("gitfile");
        std::os::unix::fs::symlink(root.join("vendor"), root.join("third_party")).expect("link");
        // `.git`, `sub`, `sub/.git`, `vendor`, `vendor/lib`, `vendor/lib/.git`, `third_party`
        // and the same three below it: the objects are not walked.
        let found = hidden_within(&root, None, |_| false, 10);
        assert!(!found.truncated);
        let mut git_dirs = found.git_dirs;
        git_dirs.sort();
        assert_eq!(
            git_dirs,
            [root.join("sub/.git"), root.join("vendor/lib/.git")],
            "found once each, not at the top"
        );
    }

    #[test]
    fn the_files_inside_a_denied_directory_count_toward_the_limit() {
        let directory = tempfile::tempdir().expect("tempdir");
        let root = directory.path().canonicalize().expect("canonical");
        std::fs::create_dir(root.join("private")).expect("private");
        std::fs::write(root.join("private/plan"), "plan").expect("plan");
        std::fs::hard_link(root.join("private/plan"), root.join("copy")).expect("ln");
        // `private` and `copy` at the top, `plan` inside: three entries.
        let whole = hidden_within(&root, None, denied(&root), 3);
        assert_eq!(whole.paths, [root.join("private"), root.join("copy")]);
        let cut = hidden_within(&root, None, denied(&root), 2);
        assert_eq!(
            cut,
            Hidden {
                paths: vec![root.join("private")],
                git_dirs: Vec::new(),
                truncated: true
            }
        );
    }
}
