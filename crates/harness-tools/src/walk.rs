//! The directory walk `list_dir` and `search_text` share: gitignore-aware, confined to the
//! workspace, never following a symbolic link, blind to `.git/` and to what the deny rules
//! protect.

use std::path::Path;

use camino::Utf8Path;
use harness_sandbox::Workspace;
use ignore::WalkBuilder;

/// One entry found under the walk's target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The path relative to the workspace root, `/`-separated (lossy for a name that is not UTF-8).
    pub(crate) relative: String,
    /// Levels below the target: 0 for the target itself, 1 for its children.
    pub(crate) depth: usize,
    /// The entry's own type; a symbolic link is [`Kind::Other`], never followed.
    pub(crate) kind: Kind,
    /// The size in bytes as the walk saw it (0 when unknown).
    pub(crate) len: u64,
}

/// The type of an [`Entry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// Anything else, symbolic links included: the walk does not follow them.
    Other,
}

/// The entries at and below `target`, at most `max_depth` levels below it, in path order
/// (depth first, names sorted).
///
/// `target` is absolute, resolved and checked by the workspace ([`Workspace::check`]).
///
/// # Why the walk starts at the root
///
/// The walk always starts at the workspace root and prunes every directory that is neither an
/// ancestor of `target` nor inside it. Starting at `target` instead would lose the `.gitignore`
/// files of the directories above it, and asking the walker to read its parents' ignore files
/// would read them above the workspace root too. This way exactly the ignore files inside the
/// workspace apply, whatever is listed.
///
/// # What is left out, in this order
///
/// 1. What the `.gitignore`, `.ignore` and `.git/info/exclude` files inside the workspace
///    ignore, whether or not the workspace is a git repository. Ignore files outside it (above
///    the root, or the user's global excludes) do not count, so the same tree lists the same
///    on every machine.
/// 2. Every entry named `.git` (a repository's internals, or a worktree's link to them).
/// 3. Entries the workspace's read rules deny (`.env`, keys), and everything under them.
/// 4. Entries the walk cannot read; there is nothing to say about them.
///
/// Hidden files are listed. Symbolic links are entries of their own and never followed.
///
/// # Limits
///
/// The walker lists directories by path, not through the workspace's handles: a directory
/// replaced by a link to somewhere else while the walk runs could show that place's names.
/// Contents are never read this way: `search_text` reads every file through the workspace.
pub(crate) fn entries<'w>(
    workspace: &'w Workspace,
    target: &Utf8Path,
    max_depth: Option<usize>,
) -> impl Iterator<Item = Entry> + 'w {
    let root = workspace.root().as_std_path().to_owned();
    let target = target.as_std_path().to_owned();
    let target_depth = target
        .strip_prefix(&root)
        .map_or(0, |relative| relative.components().count());
    let in_scope = target.clone();
    let walk = WalkBuilder::new(&root)
        .hidden(false)
        .parents(false)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .max_depth(max_depth.map(|depth| depth + target_depth))
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| {
            entry.file_name() != ".git" && is_on_the_way(entry.path(), &in_scope)
        })
        .build();
    walk.filter_map(Result::ok).filter_map(move |entry| {
        let path = entry.path();
        // Pruning kept the target's ancestors so the walk could reach it; they are not results.
        let relative = path.strip_prefix(&target).ok()?;
        if workspace.is_read_denied(path) {
            return None;
        }
        // The entry's own type: a link is neither a file nor a directory here.
        let kind = match entry.file_type() {
            Some(file_type) if file_type.is_dir() => Kind::Dir,
            Some(file_type) if file_type.is_file() => Kind::File,
            _ => Kind::Other,
        };
        Some(Entry {
            relative: relative_to_root(path, &root),
            depth: relative.components().count(),
            kind,
            len: entry.metadata().map_or(0, |metadata| metadata.len()),
        })
    })
}

/// True if and only if the walk must visit `path` to reach or cover `target`: `path` is an
/// ancestor of `target`, `target` itself, or inside it. Components are compared, not strings,
/// so `src-old` is not on the way to `src`.
fn is_on_the_way(path: &Path, target: &Path) -> bool {
    path.starts_with(target) || target.starts_with(path)
}

/// `path` relative to `root`, `/`-separated.
fn relative_to_root(path: &Path, root: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let names: Vec<_> = relative
        .components()
        .map(|component| component.as_os_str().to_string_lossy())
        .collect();
    names.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_the_way_compares_components() {
        let target = Path::new("/w/src");
        assert!(is_on_the_way(Path::new("/w"), target));
        assert!(is_on_the_way(Path::new("/w/src"), target));
        assert!(is_on_the_way(Path::new("/w/src/a.rs"), target));
        assert!(!is_on_the_way(Path::new("/w/src-old"), target));
        assert!(!is_on_the_way(Path::new("/w/docs"), target));
    }

    #[test]
    fn relative_paths_use_slashes_and_lose_the_root() {
        assert_eq!(
            relative_to_root(Path::new("/w/a/b.rs"), Path::new("/w")),
            "a/b.rs"
        );
        assert_eq!(relative_to_root(Path::new("/w"), Path::new("/w")), "");
    }
}
