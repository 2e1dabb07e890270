//! What the harness protects and what it does not, said the same way everywhere. The words
//! are `harness_app::boundary`'s (the MCP server gives its client the statement too); here
//! they are written for this binary: its command lines and what it shows of a reply.

pub(crate) use harness_app::boundary::{STATEMENT, policy};
use harness_exec::Tier;

/// What the active configuration does and does not protect, for `harness sandbox explain`
/// ([`harness_app::boundary::explain`]), with this binary's command lines.
pub(crate) fn explain(policy: &str, tier: Tier, abi: u32) -> String {
    harness_app::boundary::explain(
        policy,
        tier,
        abi,
        crate::display::REPLY_SHOWN_BYTES / 1024,
        crate::program::command,
    )
}
