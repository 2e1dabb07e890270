//! What commands leave where git does not look: ignored files, recorded at the start,
//! compared after, and put back by undo and before each verification.
//!
//! Git's snapshots leave out ignored paths, yet they hold what the user's own tools run
//! later: bytecode caches (`__pycache__/*.pyc`, which Python loads instead of the source
//! when the source's recorded size and time match), virtual environments
//! (`.venv/bin/python3`, `*.pth` files in `site-packages`, which `site` executes at every
//! start), `node_modules/.bin`, build outputs. A command can write any of them, and
//! nothing in a diff would show it. So:
//!
//! 1. At begin, every ignored file, symlink and directory is listed in a *manifest*
//!    (path, kind, size, modification and change time in nanoseconds, inode, mode), walking
//!    the whole working tree but `.git` and nested repositories, up to
//!    [`MOST_LISTED_IGNORED`] entries. The content of files within the budget (see below)
//!    goes into the harness's store, outside the workspace, as git blobs reachable from
//!    `refs/harness/<id>/ignored-start` there (never in the workspace's `.git`). Blobs
//!    are named by their content, so a second run writes none of what the first saved,
//!    and a file whose stat data is what the last run's manifest says is not even read.
//! 2. Whenever asked ([`crate::Session::ignored_changes`], undo, the reset before a
//!    verification), the ignored paths are listed again and compared with the manifest:
//!    a path whose stat data differs and whose content (or symlink target, or mode)
//!    differs too is changed; one the manifest lacks is new; one missing is deleted.
//!    Change times are set by the kernel on every write, rename, link or chmod, and no
//!    command can set them back, so a file made to look old (`touch -d`, a forged
//!    `.pyc` with an old time) is still seen.
//! 3. Undo puts every such path back as the manifest has it: new ones removed (with the
//!    directories they made), changed and deleted ones written back from the store (a
//!    symlink as a symlink, the mode and modification time as they were), each written as
//!    a new file after the old entry is unlinked, so a hard link or a symlink a command
//!    left there is never written through. What undo replaced is saved first, within the
//!    same budget, so redo brings it back. A path whose change time is past the run's
//!    end (its finish; for redo, the undo) was changed by the user since, not by the run:
//!    it is left as it is, and named when it was there before ([`split_after`]). A run
//!    that never finished has no end known, and all since its start is its own.
//! 4. Before each verification the harness runs, the same happens against the
//!    *verification baseline*: the manifest, plus what earlier verification runs wrote
//!    (their output comes from the code under test at that moment, and keeping it spares
//!    a full rebuild at every check). Commands' caches and interpreters are gone before
//!    the check starts, and whatever the check writes is its own.
//!
//! # The budget
//!
//! Saving costs reading, hashing and compressing, at every begin for what changed since
//! the last one. A file is saved when it is at most [`LARGEST_SAVED_IGNORED_FILE`]
//! (4 MiB: bytecode, `.pth` files, scripts and most JavaScript are far smaller; shared
//! libraries and binaries often larger), smallest first, until [`IGNORED_SAVE_BUDGET`]
//! (64 MiB in all, the bound a snapshot puts on one file's memory) or
//! [`MOST_SAVED_IGNORED`] files (20,000: the small files of a virtual environment with a
//! few large packages, or of a small project's `node_modules`) is reached. Measured on a
//! 54,000-file, 716 MiB virtual environment on a loaded 2-core machine: the first begin
//! took 6.5 s (reading, hashing and writing 20,000 files, 64 MiB, as loose objects), a
//! begin after it 0.8 to 0.9 s (the listing, and stat data compared with the last run's
//! manifest, which names the blobs and tree to reuse); the listing alone, as each check
//! and undo does it, 0.5 to 0.7 s. What is not saved is still listed:
//! a command that changes or deletes it is named, by undo ("not restored: too large to
//! save at the start, changed by a command") and by the reset before a verification,
//! which then cannot vouch for the check. A file that a verification wrote and a command
//! then changed is removed instead: the next check makes it again.
//!
//! # What this does not do
//!
//! It does not record ignored files beyond [`MOST_LISTED_IGNORED`] entries (the walk
//! stops and says so), sockets and FIFOs' content, the owner or extended attributes, nor
//! the contents of nested repositories. Directories are listed by kind only.
//!
//! # Where each step is
//!
//! - `manifest.rs`: what is recorded of an ignored path ([`Manifest`]), and the manifest
//!   files in the run's directory;
//! - `list.rs`: listing what git ignores now ([`list`](fn@list));
//! - `save.rs`: saving the content within the budget ([`save`](fn@save));
//! - `compare.rs`: what differs from a manifest ([`differences`]), and whose change it is
//!   by the change time ([`split_after`]);
//! - `put_back.rs`: putting the paths back as a manifest has them ([`put_back`](fn@put_back)).

mod compare;
mod list;
mod manifest;
mod put_back;
mod save;

pub use list::MOST_LISTED_IGNORED;
pub use save::{IGNORED_SAVE_BUDGET, LARGEST_SAVED_IGNORED_FILE, MOST_SAVED_IGNORED};

pub(crate) use compare::{Change, differences, split_after};
pub(crate) use list::{Listing, list};
pub(crate) use manifest::{
    Kind, Manifest, Which, key, manifest_path, path_of, read, ref_name, write,
};
pub(crate) use put_back::{PutBack, put_back};
pub(crate) use save::save;
