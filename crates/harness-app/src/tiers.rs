//! Which isolation tier works on this machine: the tier a run in a workspace would have
//! (for `harness sandbox explain`), and every tier probed with the host's facts (for
//! `harness sandbox doctor`). A front end words them; this file prints nothing.

use std::path::Path;

use harness_exec::preflight::{self, HostFacts};
use harness_exec::{Confinement, Sandbox, Tier, Unavailable};

/// The tier `sandbox` means for a run in `root`, and for a tier asked for by name that
/// cannot run here, why: it is still the tier explained. `auto` picks the strongest that
/// works, and fails only when none does.
pub fn tier_here(
    sandbox: Sandbox,
    root: &Path,
) -> Result<(Tier, Option<Unavailable>), Unavailable> {
    let confinement = Confinement::new(root);
    Ok(match sandbox {
        Sandbox::Only(tier) => (tier, preflight::probe_for(tier, &confinement).err()),
        Sandbox::Auto => (
            preflight::choose_for(Sandbox::Auto, &confinement)?.tier,
            None,
        ),
    })
}

/// Every isolation tier probed on this machine, strongest first, with what the machine's
/// facts say about each.
#[derive(Debug)]
pub struct TierProbe {
    /// What the machine offers: bwrap, user namespaces, Landlock, seccomp.
    pub facts: HostFacts,
    /// Each tier, strongest first, and whether a trivial confined command started under it.
    pub tiers: Vec<(Tier, Result<(), Unavailable>)>,
}

impl TierProbe {
    /// Probes every tier by starting a trivial confined command under it.
    pub fn run() -> TierProbe {
        TierProbe {
            facts: preflight::host_facts(),
            tiers: Tier::ALL
                .into_iter()
                .map(|tier| (tier, preflight::probe(tier)))
                .collect(),
        }
    }

    /// The tier `auto` picks: the strongest that works, else none.
    pub fn picked(&self) -> Tier {
        self.tiers
            .iter()
            .find(|(_, probed)| probed.is_ok())
            .map_or(Tier::None, |(tier, _)| *tier)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tier_named_is_the_one_explained_and_none_always_runs() {
        let dir = tempfile::tempdir().unwrap();
        let (tier, unavailable) = tier_here(Sandbox::Only(Tier::None), dir.path()).unwrap();
        assert_eq!(tier, Tier::None);
        assert!(unavailable.is_none());
    }

    #[test]
    fn auto_picks_the_strongest_tier_that_works_else_none() {
        let facts = preflight::host_facts();
        let all_work = TierProbe {
            facts: facts.clone(),
            tiers: Tier::ALL.into_iter().map(|tier| (tier, Ok(()))).collect(),
        };
        assert_eq!(all_work.picked(), Tier::Bwrap);
        let none_probed = TierProbe {
            facts,
            tiers: Vec::new(),
        };
        assert_eq!(none_probed.picked(), Tier::None);
    }
}
