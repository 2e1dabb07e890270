//! The place where kernel isolation tiers will wrap a command.

use std::path::Path;
use std::process::Command;

/// How a command is isolated from the rest of the machine, beyond the policy.
///
/// Only [`Isolation::None`] exists today. The runner asks the tier for the
/// [`Command`] that will execute the program, so a tier can wrap the program
/// or restrict the child before it starts. Planned, each stating exactly what
/// it covers:
///
/// - **Landlock + seccomp**: set in the child before `exec`, limiting
///   filesystem access to the workspace and refusing some system calls;
/// - **bubblewrap**: the program run through `bwrap`, with the workspace
///   mounted read-write and the rest of the filesystem read-only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Isolation {
    /// No isolation: the command runs as the user, with everything the user
    /// can reach. The policy, timeout, limits and output bounds still apply.
    #[default]
    None,
}

impl Isolation {
    /// The command that executes `program` under this tier.
    pub(crate) fn command(self, program: &Path) -> Command {
        match self {
            Isolation::None => Command::new(program),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_runs_the_program_itself() {
        let command = Isolation::None.command(Path::new("/bin/true"));
        assert_eq!(command.get_program(), "/bin/true");
        assert_eq!(command.get_args().count(), 0);
    }
}
