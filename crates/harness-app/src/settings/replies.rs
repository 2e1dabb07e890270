//! How the model is asked to reply: native tool calls, or replies the server constrains to
//! a JSON schema ([`crate::probe`] decides what `auto` comes to).

/// How replies are asked for: `--replies` and `replies` in the configuration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Replies {
    /// Native tool calls where the model's template takes tools (or the server does not
    /// say); constrained replies where it takes none and the server can constrain them.
    #[default]
    Auto,
    /// Native tool calls (and calls written as JSON text, read when they can be).
    Native,
    /// Replies constrained to a JSON schema; refused if the server cannot.
    Constrained,
}

impl Replies {
    /// Every value, by the name the flag and the configuration take.
    pub const ALL: [(&'static str, Replies); 3] = [
        ("auto", Replies::Auto),
        ("native", Replies::Native),
        ("constrained", Replies::Constrained),
    ];

    /// The value called `name`.
    pub fn parse(name: &str) -> Option<Replies> {
        Replies::ALL
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, replies)| *replies)
    }
}
