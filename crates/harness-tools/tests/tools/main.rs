//! The tools through the `Toolbox`, as a model calls them, on real temporary directories.

mod support;
mod test_code;

mod commands;
mod confinement;
mod deny_rules;
mod files;
mod hard_links;
mod listing;
mod races;
mod redaction;
mod schema;
mod searching;
mod toolbox;
