//! Where the user's own files are: the configuration and the trust file beside it. Both
//! are read to settle a run's settings and kept from its commands (by the confinement plan).

use std::path::{Path, PathBuf};

/// `$XDG_CONFIG_HOME/harness/config.toml`, else `~/.config/harness/config.toml`.
pub(crate) fn user_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some(base.join("harness").join("config.toml"))
}

/// The trust file: beside the user's configuration, whose directory it shares.
pub(crate) fn trust_file() -> Option<PathBuf> {
    user_file().map(|file| file.with_file_name("trusted.json"))
}
