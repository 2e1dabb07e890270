//! Test support shared by the harness's crates, so that every front end of the tools is
//! tried against the same cases. Not part of any crate's API: only dev-dependencies use it.
//!
//! ```
//! use harness_testkit::escapes::{Escapes, PATH_TOOLS, call};
//!
//! let escapes = Escapes::new();
//! for class in escapes.classes() {
//!     for tool in PATH_TOOLS {
//!         let arguments = call(tool, &class.path);
//!         assert!(arguments.is_object(), "{}: {arguments}", class.name);
//!     }
//! }
//! ```

pub mod escapes;
pub mod sources;
pub mod state;
