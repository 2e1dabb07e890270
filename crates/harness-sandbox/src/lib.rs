//! Path confinement for a model-driven agent: every path a model sends resolves inside one
//! workspace directory, or is refused with a message that says why.
//!
//! A [`Workspace`] holds an open handle of its root directory. Its methods take paths as a
//! model writes them (`src/main.rs`, `../../etc/passwd`, `/home/me/project/notes.md`) and
//! either act inside the root or return an [`Error`] naming the path and the reason.
//!
//! ```
//! use harness_sandbox::{Error, Workspace};
//!
//! # fn main() -> Result<(), Error> {
//! # let temporary = tempfile::tempdir().expect("a temporary directory");
//! # let root = temporary.path();
//! let workspace = Workspace::new(root)?;
//! workspace.create_dir_all("src")?;
//! workspace.write("src/main.rs", "fn main() {}\n")?;
//! assert_eq!(workspace.read_to_string("src/../src/main.rs")?, "fn main() {}\n");
//! assert_eq!(workspace.relative("./src//main.rs")?, "src/main.rs");
//!
//! let escape = workspace.read("../../etc/passwd").expect_err("outside the root");
//! assert!(matches!(escape, Error::Escape { .. }));
//! assert!(escape.to_string().starts_with("path escapes the workspace: ../../etc/passwd"));
//!
//! let secret = workspace.write(".env", "TOKEN=1").expect_err("a default deny rule");
//! assert!(matches!(secret, Error::Denied { .. }));
//! # Ok(())
//! # }
//! ```
//!
//! # Why not `canonicalize` and `starts_with`
//!
//! The obvious check resolves the path, compares it with the root, then opens it. Compared
//! as strings, `/tmp/work-evil` starts with `/tmp/work`; and between the check and the open,
//! a symbolic link can be swapped in that the open follows outside. This crate never hands
//! the kernel more than one path component at a time, never lets it follow a link, and acts
//! through the directory handles it checked, so there is no window between check and use.
//!
//! # How a path is resolved
//!
//! In this order:
//!
//! 1. A path longer than 4096 bytes ([`Error::TooLong`]) or containing a NUL byte
//!    ([`Error::Nul`]) is refused.
//! 2. An absolute path must start with [`Workspace::root`], compared component by
//!    component; what follows the root is resolved as a relative path. Any other absolute
//!    path is an escape, including another spelling of the root (through a link, a bind
//!    mount or `/proc/self/root`).
//! 3. Components are visited from the root, left to right. `.` is skipped. A name is looked
//!    up in the current directory without following links; a directory is entered by
//!    opening it with `O_NOFOLLOW`; a symbolic link is read and replaced by its target's
//!    components (at most 40 links per path, [`Error::SymlinkLoop`]). `..` returns to the
//!    parent's handle, kept open since it was entered.
//! 4. Leaving the root at any point is an [escape](Error::Escape), even if the path would
//!    come back (`../work/file`): `..` at the root, or a link with an absolute target, even
//!    one that names a place inside the root. Use relative links inside a workspace.
//! 5. Once a name does not exist, the rest of the path is taken as written (there is
//!    nothing to resolve): a later `..` cancels the last missing name, and once none are
//!    left it pops handles as in step 3, so it cannot climb out either. A name after a
//!    file is [`Error::NotADirectory`].
//! 6. The operations match the deny rules against the resolved path, then act on the
//!    handles of step 3.
//!
//! [`Workspace::resolve`] returns the absolute result and [`Workspace::relative`] the
//! workspace-relative one (what a diff header shows).
//!
//! # Deny rules
//!
//! Globs over the resolved workspace-relative path (with `/` separators) that refuse
//! reading or writing inside the workspace ([`Error::Denied`], naming the rule). A path is
//! refused for an access when:
//!
//! 1. a rule for that access matches the path itself or any of its ancestors (a rule that
//!    matches a directory covers everything in it), where
//! 2. a glob without `/` matches a name at any depth and a glob with `/` matches the whole
//!    path, `*` never crossing a `/`, and
//! 3. every read rule is also a write rule.
//!
//! By default, reading and writing are refused for `.env`, `.env.*`, `*.pem`, `*.key`,
//! `id_rsa*` and `id_ed25519*`, and writing for `.git` (a written `.git/config` or
//! `.git/hooks/*` runs code the next time the user runs git). Change them with
//! [`WorkspaceBuilder`]; ask about a path with [`Workspace::is_read_denied`] and
//! [`Workspace::is_write_denied`], or resolve and check it at once with
//! [`Workspace::check`].
//!
//! # Writing
//!
//! [`Workspace::write`] and [`Workspace::create_new`] write to a temporary file in the
//! target's directory and publish it in one step (rename, or hard link for a new file), so
//! readers never see half a file; an existing file keeps its permissions. By default a
//! write is also refused when the file has other hard links ([`Error::HardLink`]: another
//! name may be outside, and the write would silently separate them) and when it would
//! create the missing target of a dangling symbolic link ([`Error::DanglingSymlink`]).
//!
//! # Platform behavior
//!
//! The walk is the same everywhere; each of its steps (one name, no link followed) is a
//! call into a [`cap_std`] directory handle. On Linux 5.6 and later cap-std makes these
//! opens with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`, so the kernel would also
//! refuse a step that left the handle's directory; on other systems, and where `openat2` is
//! missing or filtered, cap-std checks each step in user space with `O_NOFOLLOW`. Because
//! no step ever has more than one name to resolve, both give the same answers; the kernel
//! check is a second fence, not the first. The crate is tested on Linux.
//!
//! # What this crate does not do
//!
//! It confines the paths that go through a [`Workspace`]; it does not sandbox a process. A
//! command the agent runs can read and write whatever the user can, so path confinement
//! stops accidents, not an adversary: for untrusted input, run the whole harness in a
//! container, a VM or as a separate user. Within its scope, two limits remain: a hard link
//! in the workspace to a file outside is read like any file (only writing checks the link
//! count), and a directory renamed by another process while an operation runs can move
//! that operation's target, though never outside the root.

mod builder;
mod create;
mod entry;
mod error;
mod read;
mod remove;
mod rules;
mod walk;
mod workspace;
mod write;

pub use builder::WorkspaceBuilder;
pub use entry::{DirEntry, FileType, Metadata};
pub use error::{Access, Error};
pub use workspace::Workspace;
