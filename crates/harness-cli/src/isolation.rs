//! How the run's commands are isolated, in words: `harness_app::isolation`'s, with this
//! binary's command lines.

pub(crate) use harness_app::isolation::fallback_warnings;
use harness_app::settings::ToolboxSettings;
use harness_exec::preflight::Choice;

/// The lines that say how commands are isolated ([`harness_app::isolation::isolation_summary`]).
pub(crate) fn isolation_summary(choice: &Choice, settings: &ToolboxSettings) -> String {
    harness_app::isolation::isolation_summary(choice, settings, crate::program::command)
}
