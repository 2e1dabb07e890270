//! How a run looks as text, for every front end alike: each fact of a run as it happens or
//! read back from its transcript ([`Facts`], in `facts.rs`), the summary at its end
//! ([`SummaryText`], in `summary.rs`), the recorded runs and stores (`runs.rs`), a chain of
//! follow-ups' steps (`chain.rs`), and our
//! colours around text already made safe to show ([`Style`], in `style.rs`). Each returns [`Shown`](crate::shown::Shown) lines and
//! prints nothing: the front end chooses where they go.
//!
//! ```
//! use harness_app::render::{Facts, Style, View};
//!
//! let mut facts = Facts::new(Style::choose(false, None), View::Live, "harness");
//! let checkpoint = harness_agent::Record::Checkpoint {
//!     step: 2,
//!     number: 1,
//!     label: "step 2".to_owned(),
//! };
//! let lines = facts.lines(&checkpoint);
//! assert_eq!(lines[0].as_str(), "· checkpoint 1");
//! ```

mod chain;
mod facts;
mod runs;
mod style;
mod summary;

pub use chain::{chain_diff, follows_line};
pub use facts::{Facts, View, count};
pub use runs::{human_size, pruned_lines, runs_table, stores_table};
pub use style::Style;
pub use summary::SummaryText;

#[cfg(test)]
mod tests {
    /// This crate prints nothing (its front ends choose where text goes, through their own
    /// printer), and only [`Shown`](crate::shown::Shown)'s constructors and our colours
    /// make a `Shown` without sanitizing what goes in.
    #[test]
    fn nothing_here_prints_and_only_our_colours_compose_shown_text() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let files = harness_testkit::sources::rust_sources(&src);
        assert!(files.len() > 20, "found the sources: {files:?}");
        let prints = [
            "println!",
            "print!(",
            "eprintln!",
            "eprint!(",
            "dbg!(",
            "stdout()",
            "stderr()",
        ];
        for file in files {
            let name = file
                .strip_prefix(&src)
                .expect("below src")
                .display()
                .to_string();
            let text = std::fs::read_to_string(&file).expect("read a source file");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            let lines = || {
                code.lines()
                    .filter(|line| !line.trim_start().starts_with("//"))
            };
            for pattern in prints {
                let found = lines().find(|line| line.contains(pattern));
                assert_eq!(found, None, "{name} prints with {pattern}");
            }
            if !["shown.rs", "render/style.rs"].contains(&name.as_str()) {
                let found = lines().find(|line| line.contains("Shown::composed"));
                assert_eq!(found, None, "{name} makes a Shown without sanitizing");
            }
        }
    }
}
