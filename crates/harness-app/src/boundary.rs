//! What the harness protects and what it does not, in the one statement every front end
//! gives: `harness run` at the start and end of a run, `harness mcp` on stderr and to its
//! client.

/// Printed at the start and at the end of every run, and given to an MCP client.
pub const STATEMENT: &str = "Path confinement and a command policy stop accidents, not \
    an adversary: a model trying to escape, or following instructions injected through a file \
    it read, can get out through a command it is allowed to run. Use a container, VM or \
    separate user for untrusted input.";
