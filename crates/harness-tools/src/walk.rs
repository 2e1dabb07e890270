//! The directory walk `list_dir` and `search_text` share: gitignore-aware, through the
//! workspace's open directory handles, never following a symbolic link, blind to `.git/`
//! and to what the deny rules protect.

use std::ops::ControlFlow;
use std::path::PathBuf;

use harness_sandbox::{Error as SandboxError, FileType, Workspace, WorkspaceDir};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// One entry found at or under the walk's target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The path relative to the workspace root, `/`-separated.
    pub(crate) relative: String,
    /// The entry's name in its directory.
    pub(crate) name: String,
    /// Levels below the target: 0 for the target itself, 1 for its children.
    pub(crate) depth: usize,
    /// The entry's own type; a symbolic link is [`Kind::Other`], never followed.
    pub(crate) kind: Kind,
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

/// Visits the entries at and below `candidate`, at most `max_depth` levels below it, in path
/// order (depth first, names sorted), handing each to `visit` with the open directory that
/// holds it, until `visit` breaks. A directory target is not visited itself, its entries
/// are; a file target is visited alone, at depth 0.
///
/// `candidate` has been checked by the caller ([`Workspace::check`]); a walk that finds it
/// changed meanwhile (a directory on its way replaced by a link) fails.
///
/// # Through handles, from the root
///
/// Every directory is opened from its parent's handle by name, without following links
/// ([`WorkspaceDir::open_dir`]), and files are read the same way, so a directory swapped for
/// a link while the walk runs cannot redirect it: the swapped name fails to open. The walk
/// starts at the root and goes down to the target that way, reading the ignore files of
/// every directory on the way, so exactly the ignore files inside the workspace apply,
/// whatever is listed.
///
/// # What is left out, in this order
///
/// 1. Entries a read rule of the workspace refuses, and everything under them (the
///    workspace's handles leave them out).
/// 2. Every entry named `.git` (a repository's internals, or a worktree's link to them).
/// 3. What the `.ignore`, `.gitignore` and `.git/info/exclude` files inside the workspace
///    ignore, with ripgrep's precedence: `.ignore` over `.gitignore` over the exclude file,
///    a deeper file over a shallower one, a `!` line re-including, and nothing below an
///    ignored directory. This holds whether or not the workspace is a git repository; the
///    `.gitignore` and exclude files above a nested repository do not apply inside it.
///    Ignore files outside the workspace (above the root, the user's global excludes) do
///    not count, so the same tree lists the same on every machine.
/// 4. Directories the walk cannot open or list (a name that is not UTF-8 in them, a
///    permission); there is nothing to say about them.
///
/// Hidden files are listed. Symbolic links are entries of their own and never followed.
pub(crate) fn visit(
    workspace: &Workspace,
    candidate: &str,
    max_depth: Option<usize>,
    mut visit: impl FnMut(&Entry, &WorkspaceDir<'_>) -> ControlFlow<()>,
) -> Result<(), SandboxError> {
    let target = workspace.relative(candidate)?;
    // `.` (the root) has no names.
    let names: Vec<String> = target
        .components()
        .map(|component| component.as_str().to_owned())
        .filter(|name| name != ".")
        .collect();
    let mut dir = workspace.open_dir(".")?;
    let mut ignore_budget = MAX_IGNORE_BYTES_PER_WALK;
    let mut levels = vec![Level::of(&dir, &mut ignore_budget)];
    for (index, name) in names.iter().enumerate() {
        let is_last = index + 1 == names.len();
        let kind = kind_of(&dir, name);
        if name == ".git" || is_ignored(&levels, &names[..=index], kind == Kind::Dir) {
            return Ok(());
        }
        if is_last && kind != Kind::Dir {
            let entry = Entry {
                relative: names.join("/"),
                name: name.clone(),
                depth: 0,
                kind,
            };
            let _ = visit(&entry, &dir);
            return Ok(());
        }
        dir = dir.open_dir(name)?;
        levels.push(Level::of(&dir, &mut ignore_budget));
    }
    let mut walk = Walk {
        levels,
        ignore_budget,
        target_depth: names.len(),
        names,
        max_depth,
        visit: &mut visit,
    };
    let _ = walk.directory(&dir);
    Ok(())
}

/// The state of one walk below its target.
struct Walk<'v, V> {
    /// The ignore files of every directory from the root to the current one.
    levels: Vec<Level>,
    /// Bytes of ignore files the walk may still read ([`MAX_IGNORE_BYTES_PER_WALK`]).
    ignore_budget: u64,
    /// The current directory's path from the root.
    names: Vec<String>,
    /// How many levels below the target to go.
    max_depth: Option<usize>,
    /// How many names the target's path has.
    target_depth: usize,
    /// What to do with each entry.
    visit: &'v mut V,
}

impl<V: FnMut(&Entry, &WorkspaceDir<'_>) -> ControlFlow<()>> Walk<'_, V> {
    /// Visits the entries of `dir` (the current directory), depth first.
    fn directory(&mut self, dir: &WorkspaceDir<'_>) -> ControlFlow<()> {
        let Ok(entries) = dir.entries() else {
            return ControlFlow::Continue(());
        };
        for entry in entries {
            let kind = match entry.file_type() {
                FileType::Dir => Kind::Dir,
                FileType::File => Kind::File,
                _ => Kind::Other,
            };
            let name = entry.name();
            self.names.push(name.to_owned());
            if name != ".git" && !is_ignored(&self.levels, &self.names, kind == Kind::Dir) {
                let depth = self.names.len() - self.target_depth;
                let found = Entry {
                    relative: self.names.join("/"),
                    name: name.to_owned(),
                    depth,
                    kind,
                };
                (self.visit)(&found, dir)?;
                let descend = kind == Kind::Dir && self.max_depth.is_none_or(|max| depth < max);
                // A directory that cannot be opened (swapped for a link since it was listed,
                // say) is left out.
                if let Some(child) = descend.then(|| dir.open_dir(name).ok()).flatten() {
                    self.levels.push(Level::of(&child, &mut self.ignore_budget));
                    let flow = self.directory(&child);
                    self.levels.pop();
                    flow?;
                }
            }
            self.names.pop();
        }
        ControlFlow::Continue(())
    }
}

/// The ignore files of one directory.
struct Level {
    /// `.ignore`.
    ignore: Gitignore,
    /// `.gitignore`.
    gitignore: Gitignore,
    /// `.git/info/exclude`, when the directory holds a `.git` directory.
    exclude: Gitignore,
    /// Whether the directory holds `.git` (a repository's root): the `.gitignore` and
    /// exclude files above it do not apply below it.
    has_git: bool,
}

impl Level {
    /// Reads the ignore files of `dir` through its handle, taking their size from
    /// `budget` (a missing or unreadable one, or one too large for the file limit or the
    /// budget left, ignores nothing).
    fn of(dir: &WorkspaceDir<'_>, budget: &mut u64) -> Level {
        let has_git = dir.metadata(".git").is_ok();
        let exclude = has_git
            .then(|| {
                let info = dir.open_dir(".git").and_then(|git| git.open_dir("info"));
                info.ok()
                    .and_then(|info| read_ignore_file(&info, "exclude", budget))
            })
            .flatten();
        Level {
            ignore: compile(read_ignore_file(dir, ".ignore", budget)),
            gitignore: compile(read_ignore_file(dir, ".gitignore", budget)),
            exclude: compile(exclude),
            has_git,
        }
    }
}

/// The largest ignore file the walk reads (256 KiB); a larger one ignores nothing.
///
/// A command can write an ignore file of any size (`truncate -s 2G .gitignore` takes no
/// disk), and compiling its lines as globs costs memory many times their length: a 200 MB
/// `.gitignore` of zero bytes had one `list_dir` take 15 GB and 55 s, a 2 GB one the whole
/// machine, and 256 KiB of the costliest globs (`*a*a*a…`) take some 180 MB and a second
/// in a debug build. Real ones are kilobytes. Leaving one out shows more entries, never
/// fewer: what keeps a file from the model is the deny rules, not the ignore files.
const MAX_IGNORE_FILE_BYTES: u64 = 256 * 1024;

/// The ignore files one walk reads in all (4 MiB): a command can put the largest one in
/// every directory, and then each directory would cost as much again.
const MAX_IGNORE_BYTES_PER_WALK: u64 = 4 * 1024 * 1024;

/// The longest line of an ignore file the walk compiles: no pattern of a path is longer
/// than a path (4096 bytes on Linux), and a longer line would only cost memory.
const MAX_IGNORE_LINE_BYTES: usize = 4096;

/// The ignore file `name` in `dir`, if it is there, readable, no larger than
/// [`MAX_IGNORE_FILE_BYTES`] and than the `budget` left, which it then takes from.
fn read_ignore_file(dir: &WorkspaceDir<'_>, name: &str, budget: &mut u64) -> Option<Vec<u8>> {
    let metadata = dir.metadata(name).ok()?;
    if !metadata.is_file() || metadata.len() > MAX_IGNORE_FILE_BYTES.min(*budget) {
        return None;
    }
    let contents = dir.read(name).ok()?;
    *budget = budget.saturating_sub(contents.len() as u64);
    Some(contents)
}

/// A matcher of the lines of an ignore file; a line that is not a valid glob, or longer
/// than [`MAX_IGNORE_LINE_BYTES`], is skipped, as git and ripgrep skip an invalid one.
fn compile(contents: Option<Vec<u8>>) -> Gitignore {
    let mut builder = GitignoreBuilder::new(".");
    if let Some(contents) = contents {
        for line in String::from_utf8_lossy(&contents).lines() {
            if line.len() <= MAX_IGNORE_LINE_BYTES {
                let _ = builder.add_line(None, line);
            }
        }
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// True if and only if the ignore files of `levels` (one per directory from the root to the
/// entry's parent) ignore the entry at `names` (its path from the root).
///
/// For each kind of file, the deepest one with a matching line decides; then `.ignore`
/// wins over `.gitignore`, which wins over the exclude file.
fn is_ignored(levels: &[Level], names: &[String], is_dir: bool) -> bool {
    let mut by_ignore = Match::None;
    let mut by_gitignore = Match::None;
    let mut by_exclude = Match::None;
    let mut saw_git = false;
    for (depth, level) in levels.iter().enumerate().rev() {
        let path: PathBuf = names[depth..].iter().collect();
        if by_ignore.is_none() {
            by_ignore = level.ignore.matched(&path, is_dir).map(drop);
        }
        if !saw_git && by_gitignore.is_none() {
            by_gitignore = level.gitignore.matched(&path, is_dir).map(drop);
        }
        if !saw_git && by_exclude.is_none() {
            by_exclude = level.exclude.matched(&path, is_dir).map(drop);
        }
        saw_git |= level.has_git;
    }
    [by_ignore, by_gitignore, by_exclude]
        .into_iter()
        .find(|verdict| !verdict.is_none())
        .is_some_and(|verdict| verdict.is_ignore())
}

/// The type of the entry `name` of `dir`, not following a link.
fn kind_of(dir: &WorkspaceDir<'_>, name: &str) -> Kind {
    match dir.metadata(name).map(|metadata| metadata.file_type()) {
        Ok(FileType::Dir) => Kind::Dir,
        Ok(FileType::File) => Kind::File,
        _ => Kind::Other,
    }
}
