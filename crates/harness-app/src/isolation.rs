//! How the run's commands are isolated, in words: the `isolation:` line of `harness run`'s
//! header and of `harness mcp`'s banner, and the warnings when `auto` fell back from a
//! stronger tier.

use crate::settings::ToolboxSettings;
use harness_exec::preflight::Choice;

/// The lines that say how commands are isolated: the tier, what it allows beyond the
/// workspace, and why `auto` passed over a stronger tier. `command` writes a `harness`
/// command line the way the user runs the harness (`command("sandbox doctor")`).
pub fn isolation_summary(
    choice: &Choice,
    settings: &ToolboxSettings,
    command: impl Fn(&str) -> String,
) -> String {
    let mut text = match choice.tier {
        harness_exec::Tier::None if choice.skipped.is_empty() => {
            format!("none: commands run as you ({})", command("sandbox explain"))
        }
        harness_exec::Tier::None => {
            format!(
                "none: NO working sandbox here, commands run as you ({})",
                command("sandbox doctor")
            )
        }
        tier => format!(
            "{tier} ({})",
            command(&format!("sandbox explain --sandbox {tier}"))
        ),
    };
    if choice.tier != harness_exec::Tier::None {
        if settings.network {
            text.push_str("; network: allowed");
        } else {
            text.push_str("; network: none");
        }
        for path in &settings.writable {
            text.push_str(&format!("; writable: {}", path.display()));
        }
    }
    text
}

/// One warning line per stronger tier `auto` fell back from.
pub fn fallback_warnings(choice: &Choice) -> Vec<String> {
    choice
        .skipped
        .iter()
        .map(|unavailable| {
            format!(
                "warning: sandbox {} unavailable ({}); using {}. Fix: {}",
                unavailable.tier(),
                unavailable.reason(),
                choice.tier,
                unavailable.fix()
            )
        })
        .collect()
}
