//! Resource limits applied to a command before it starts.

use rustix::process::geteuid;

/// Resource limits for every command a [`Runner`](crate::Runner) starts.
///
/// They are set in the child between `fork` and `exec`, so they bind the
/// command and everything it starts. Core dumps are always off: a crashing
/// test must not leave a memory image (which may hold secrets) in the
/// workspace.
///
/// ```
/// use harness_exec::Limits;
///
/// let limits = Limits::new().max_file_size(1 << 30).max_processes(512);
/// # let _ = limits;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// `RLIMIT_FSIZE`, in bytes.
    max_file_size: Option<u64>,
    /// `RLIMIT_NPROC`.
    max_processes: Option<u64>,
}

impl Limits {
    /// Core dumps off, nothing else limited.
    pub fn new() -> Limits {
        Limits::default()
    }

    /// The largest file a command may write, in bytes (`RLIMIT_FSIZE`). A
    /// write past it fails, and the writer gets `SIGXFSZ`.
    pub fn max_file_size(mut self, bytes: u64) -> Limits {
        self.max_file_size = Some(bytes);
        self
    }

    /// The most processes the command's user may have (`RLIMIT_NPROC`), a
    /// brake on fork bombs.
    ///
    /// Only applied when the runner is not root: the kernel counts every
    /// process of the user, and for root (which it exempts outside user
    /// namespaces) a limit would either do nothing or, in a container, stop the
    /// command from starting anything at all.
    pub fn max_processes(mut self, count: u64) -> Limits {
        self.max_processes = Some(count);
        self
    }

    /// The limits to set in a child of a process whose effective user is
    /// root or not.
    pub(crate) fn for_child(self, root: bool) -> ChildLimits {
        ChildLimits {
            max_file_size: self.max_file_size,
            max_processes: self.max_processes.filter(|_| !root),
        }
    }

    /// The limits to set in a child of this process.
    pub(crate) fn for_child_of_this_process(self) -> ChildLimits {
        self.for_child(geteuid().is_root())
    }
}

/// The limits a child sets on itself: plain data, so that setting them
/// between `fork` and `exec` needs no allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChildLimits {
    /// `RLIMIT_FSIZE`, in bytes.
    pub(crate) max_file_size: Option<u64>,
    /// `RLIMIT_NPROC`, already dropped for root.
    pub(crate) max_processes: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_limit_is_dropped_for_root_only() {
        let limits = Limits::new().max_file_size(10).max_processes(20);
        assert_eq!(
            limits.for_child(false),
            ChildLimits {
                max_file_size: Some(10),
                max_processes: Some(20)
            }
        );
        assert_eq!(
            limits.for_child(true),
            ChildLimits {
                max_file_size: Some(10),
                max_processes: None
            }
        );
        assert_eq!(
            Limits::new().for_child(false),
            ChildLimits {
                max_file_size: None,
                max_processes: None
            }
        );
    }

    #[test]
    fn this_process_is_checked_for_root() {
        let limits = Limits::new().max_processes(20);
        let expected = if geteuid().is_root() { None } else { Some(20) };
        assert_eq!(limits.for_child_of_this_process().max_processes, expected);
    }
}
