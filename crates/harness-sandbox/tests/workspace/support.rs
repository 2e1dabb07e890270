//! A temporary directory laid out for confinement tests, and the list of every operation.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use harness_sandbox::{Access, Error, Workspace};
use tempfile::TempDir;

/// What the outside file holds; no operation of a workspace may ever return it.
pub(crate) const SECRET: &[u8] = b"SECRET: outside the workspace";

/// `base/work` is the workspace root. Around it: `base/outside/secret.txt` and
/// `base/outside/dir/secret.txt` (the secret), and `base/work-evil/f.txt`, a sibling whose
/// name starts with the root's.
pub(crate) struct Fixture {
    _temporary: TempDir,
    /// The canonical temporary directory holding everything.
    pub(crate) base: PathBuf,
    /// The workspace root.
    pub(crate) root: PathBuf,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let temporary = tempfile::tempdir().expect("a temporary directory");
        let base = fs::canonicalize(temporary.path()).expect("canonical temporary directory");
        let fixture = Fixture {
            root: base.join("work"),
            base,
            _temporary: temporary,
        };
        fs::create_dir(&fixture.root).expect("the root");
        fixture.put(&fixture.outside("secret.txt"), SECRET);
        fixture.put(&fixture.outside("dir/secret.txt"), SECRET);
        fixture.put(&fixture.base.join("work-evil/f.txt"), SECRET);
        fixture
    }

    pub(crate) fn workspace(&self) -> Workspace {
        Workspace::new(&self.root).expect("the fixture's root is a directory")
    }

    /// A path under `base/outside`.
    pub(crate) fn outside(&self, relative: &str) -> PathBuf {
        self.base.join("outside").join(relative)
    }

    /// A path under the root.
    pub(crate) fn inside(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// `base/outside/…` as a string, for absolute candidates and link targets.
    pub(crate) fn outside_str(&self, relative: &str) -> String {
        self.outside(relative).display().to_string()
    }

    /// The root as a string.
    pub(crate) fn root_str(&self) -> String {
        self.root.display().to_string()
    }

    /// Writes a file inside the root, creating its parents.
    pub(crate) fn file(&self, relative: &str, contents: &str) {
        self.put(&self.inside(relative), contents.as_bytes());
    }

    /// Creates a directory (and its parents) inside the root.
    pub(crate) fn dir(&self, relative: &str) {
        fs::create_dir_all(self.inside(relative)).expect("create a directory");
    }

    /// Creates the symbolic link `relative` (inside the root, parents created) to `target`.
    pub(crate) fn symlink(&self, target: impl AsRef<Path>, relative: &str) {
        let link = self.inside(relative);
        if let Some(parent) = link.parent() {
            fs::create_dir_all(parent).expect("the link's directory");
        }
        std::os::unix::fs::symlink(target, link).expect("create a symbolic link");
    }

    /// Every entry under `base` except the workspace, with its contents (files) or target
    /// (links): what an escape would change.
    pub(crate) fn outside_snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut snapshot = BTreeMap::new();
        snap(&self.base, &self.root, &mut snapshot);
        snapshot
    }

    fn put(&self, path: &Path, contents: &[u8]) {
        fs::create_dir_all(path.parent().expect("a parent")).expect("the file's directory");
        fs::write(path, contents).expect("write a fixture file");
    }
}

fn snap(dir: &Path, skip: &Path, snapshot: &mut BTreeMap<PathBuf, String>) {
    for entry in fs::read_dir(dir).expect("list a fixture directory") {
        let path = entry.expect("a directory entry").path();
        if path == skip {
            continue;
        }
        let metadata = fs::symlink_metadata(&path).expect("metadata");
        let description = if metadata.is_dir() {
            snap(&path, skip, snapshot);
            "dir".to_owned()
        } else if metadata.is_symlink() {
            format!(
                "link to {}",
                fs::read_link(&path).expect("a link").display()
            )
        } else {
            String::from_utf8_lossy(&fs::read(&path).expect("a file")).into_owned()
        };
        snapshot.insert(path, description);
    }
}

/// An operation of [`Workspace`], its result reduced to success or an error.
pub(crate) type Operation = fn(&Workspace, &str) -> Result<(), Error>;

/// Every operation that takes a path, named. `remove_file` is last: the tables that run
/// them all expect the path to still be there for the others.
pub(crate) const OPERATIONS: &[(&str, Operation)] = &[
    ("resolve", |ws, c| ws.resolve(c).map(drop)),
    ("relative", |ws, c| ws.relative(c).map(drop)),
    ("check read", |ws, c| ws.check(c, Access::Read).map(drop)),
    ("check write", |ws, c| ws.check(c, Access::Write).map(drop)),
    ("read", |ws, c| ws.read(c).map(drop)),
    ("read_to_string", |ws, c| ws.read_to_string(c).map(drop)),
    ("metadata", |ws, c| ws.metadata(c).map(drop)),
    ("read_dir", |ws, c| ws.read_dir(c).map(drop)),
    ("open_dir", |ws, c| ws.open_dir(c).map(drop)),
    ("write", |ws, c| ws.write(c, "written by the test")),
    ("create_new", |ws, c| {
        ws.create_new(c, "created by the test")
    }),
    ("create_dir_all", |ws, c| ws.create_dir_all(c)),
    ("remove_file", |ws, c| ws.remove_file(c)),
];
