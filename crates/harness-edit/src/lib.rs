//! Exact-match edits of text files, each returned as a unified diff.

mod diff;
mod edit;
mod error;
mod matching;
mod text;
mod view;

pub use error::{Closest, Error};
pub use view::View;
