//! [`Tier`]: the kernel isolation tiers a command can run under, by name.
//!
//! What each tier does is in the modules that build it (`isolation/bwrap.rs`,
//! `isolation/landlock.rs`); which one works on a machine is for `preflight.rs`.

use std::fmt;
use std::str::FromStr;

/// A kernel isolation tier, strongest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// bubblewrap: the command runs in new mount, PID, network, IPC and UTS
    /// namespaces, with the root filesystem read-only.
    Bwrap,
    /// Landlock, applied in the child before `exec`: filesystem writes only
    /// to the workspace and a private temporary directory, no TCP, no signals
    /// to processes outside.
    Landlock,
    /// No isolation: the command runs as the user, with everything the user
    /// can reach.
    None,
}

impl Tier {
    /// Every tier, strongest first: the order in which `auto` tries them.
    pub const ALL: [Tier; 3] = [Tier::Bwrap, Tier::Landlock, Tier::None];

    /// The tier's name as the CLI and the configuration spell it.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Bwrap => "bwrap",
            Tier::Landlock => "landlock",
            Tier::None => "none",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tier name that is none of `bwrap`, `landlock`, `none` (or `auto` where
/// a choice is parsed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox {given:?}: use one of auto, bwrap, landlock, none")]
pub struct UnknownTier {
    /// The name given.
    pub given: String,
}

impl FromStr for Tier {
    type Err = UnknownTier;

    fn from_str(name: &str) -> Result<Tier, UnknownTier> {
        Tier::ALL
            .into_iter()
            .find(|tier| tier.name() == name)
            .ok_or_else(|| UnknownTier {
                given: name.to_owned(),
            })
    }
}
