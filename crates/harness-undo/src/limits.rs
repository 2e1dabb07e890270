//! The size beyond which a file a run wrote is not recorded: the snapshot leaves it out
//! (`scan.rs`), a save before overwriting refuses it (`state.rs`), and the errors name it
//! (`error.rs`). Apart from all three, so that the error type and the scan, which fails
//! with it, do not use each other.

/// The largest file, in bytes, that a snapshot taken during a run records (64 MiB).
///
/// Recording a file costs memory in proportion to its size (libgit2 holds it whole to
/// store it, and again to count its changed lines), and a command writes a file of any
/// size in a moment: `truncate -s 100G` takes no disk at all. Without a bound, one command
/// would have the harness take the machine's memory and stall for an hour. A larger file
/// is left out of the snapshot as if it were not there: undo puts back what the user had
/// at its path (its content was recorded before the run) and leaves a new one alone, and
/// [`Session::too_large`](crate::Session::too_large) names it.
pub const LARGEST_RECORDED_FILE: u64 = 64 * 1024 * 1024;
