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
//! Rules in `.gitignore` syntax, one rule per line of a `.gitignore` file, that refuse
//! reading or writing paths inside the workspace ([`Error::Denied`], naming the rule). They
//! are matched by the `ignore` crate's gitignore matcher (ripgrep's), against the resolved
//! workspace-relative path: `./a`, `a/../secrets/x`, an absolute spelling under the root and
//! a symbolic link inside the workspace all count as the path they lead to. In this order:
//!
//! 1. A rule is one line of `.gitignore` syntax: `secrets/` (a trailing `/`) matches only
//!    directories; `/private` (a leading `/`) only at the root; a rule without a `/` (or
//!    with only a trailing one) matches a name at any depth, one with a `/` elsewhere the
//!    whole path from the root; `*` and `?` stay within a name and `**` crosses any number
//!    of them; `\#` and `\!` start a rule with those characters; `{a,b}` is either (the
//!    matcher's extension). Matching ignores case, because on a case-insensitive file
//!    system `SECRETS/db.txt` opens the file `secrets/` protects.
//! 2. A path is judged as git judges one under an ignored directory: its ancestors from
//!    the top, then the path itself. A refused directory refuses everything below it:
//!    reading, listing, searching, creating and writing inside it.
//! 3. Within one list of rules the last rule matching a path decides, so `!keep.txt` after
//!    `*.txt` re-includes `keep.txt`; but a `!` cannot re-include a path under a refused
//!    directory, nor lift a rule of another list.
//! 4. The lists are: the built-in read rules, the built-in write rules, the rules given to
//!    [`WorkspaceBuilder::deny`], those given to [`WorkspaceBuilder::deny_write`], then each
//!    list given to [`WorkspaceBuilder::deny_list`] (a repository's rules beside the user's,
//!    whose `!` must not lift the user's). A path is
//!    refused if any list refuses it, and the first list that does names its rule. Every
//!    read list refuses writing too.
//! 5. A rule that cannot be compiled (an unclosed `[` or `{`) or that matches nothing
//!    (blank, a comment, a `..` component, more than one line) is [`Error::InvalidRule`]
//!    when the workspace is built; [`WorkspaceBuilder::check_rule`] checks one alone.
//!
//! By default, reading and writing are refused for `.env`, `.env.*`, `*.pem`, `*.key`,
//! `id_rsa*` and `id_ed25519*`, and writing for `.git` (a written `.git/config` or
//! `.git/hooks/*` runs code the next time the user runs git). Change them with
//! [`WorkspaceBuilder`]; ask about a path with [`Workspace::is_read_denied`] and
//! [`Workspace::is_write_denied`], or resolve and check it at once with
//! [`Workspace::check`]. Listings ([`Workspace::read_dir`], [`WorkspaceDir::entries`])
//! leave out the entries a read rule refuses.
//!
//! # Hard links
//!
//! A file with more than one hard link is neither read nor written ([`Error::HardLink`]):
//! another of its names may be outside the workspace, or a file a rule protects (a link to
//! `.env` named `notes.txt`), and nothing in the file says which. A read counts the links of
//! the file it opened, so a hard link swapped in after the walk is refused too; only a
//! process that swaps the name again between the open and the count (two system calls
//! apart) can get past it, since no call opens a file and counts its links at once.
//! [`WorkspaceBuilder::allow_hard_link_reads`] and
//! [`WorkspaceBuilder::allow_hard_link_writes`] lift this.
//!
//! # Walking a tree
//!
//! [`Workspace::open_dir`] returns a [`WorkspaceDir`]: the open directory, whose entries are
//! listed, opened and read through its handle, one name at a time and never through a link.
//! A walker built on it cannot be redirected by a directory swapped for a link while it
//! runs, as one that lists directories by path can.
//!
//! # Writing
//!
//! [`Workspace::write`] and [`Workspace::create_new`] write to a temporary file in the
//! target's directory and publish it in one step (rename, or hard link for a new file), so
//! readers never see half a file; an existing file keeps its permissions. By default a
//! write is also refused when the file has other hard links ([`Error::HardLink`]: the write
//! would silently separate them) and when it would create the missing target of a dangling
//! symbolic link ([`Error::DanglingSymlink`]).
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
//! # Where each guarantee is
//!
//! | guarantee | file |
//! |---|---|
//! | a path is confined: resolved one component at a time through directory handles, never leaving the root | `walk.rs` (every operation starts there), with the root and the checks the operations share in `workspace.rs` |
//! | a deny rule refuses a path, whatever its spelling | `rules.rs`, given by the caller through `builder.rs` |
//! | reading, writing (atomic), creating, removing | `read.rs`, `write.rs`, `create.rs`, `remove.rs`: one file per operation |
//! | walking a tree through handles | `dir.rs`, `entry.rs` |
//! | what a refusal says | `error.rs` |
//!
//! # What this crate does not do
//!
//! It confines the paths that go through a [`Workspace`]; it does not sandbox a process. A
//! command the agent runs can read and write whatever the user can, so path confinement
//! stops accidents, not an adversary: for untrusted input, run the whole harness in a
//! container, a VM or as a separate user. Within its scope, one limit remains: a handle
//! follows its directory wherever it is moved, so a directory that another process moves
//! (out of the root too) while an operation holds it takes the operation with it. Swapping
//! a name for a link, the race a walker by path loses, redirects nothing.

mod builder;
mod create;
mod dir;
mod entry;
mod error;
mod read;
mod remove;
mod rules;
mod walk;
mod workspace;
mod write;

pub use builder::WorkspaceBuilder;
pub use dir::WorkspaceDir;
pub use entry::{DirEntry, FileType, Metadata};
pub use error::{Access, Error};
pub use workspace::Workspace;
