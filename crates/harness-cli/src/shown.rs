//! [`Shown`]: text that is safe to put in front of a person. The type, its constructors and
//! what they make visible are `harness_app::shown`'s, as the MCP server's run tools answer
//! with the same text; named here so the printer and every command name them as before.

pub(crate) use harness_app::shown::{Shown, Visible, json, json_text};

/// `harness_app::shown!`: a [`Shown`] line from our own format string and visible parts.
macro_rules! shown {
    ($($input:tt)*) => {
        harness_app::shown!($($input)*)
    };
}
pub(crate) use shown;
