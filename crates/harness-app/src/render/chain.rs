//! A chain of follow-ups in words: the steps of `harness diff --chain`, each under a
//! heading that says whose change it is ([`chain_diff`]), and the line that links a run to
//! the one it follows ([`follows_line`]).

use harness_undo::{RunInfo, Step, StepOf};

use crate::render::Style;
use crate::review;
use crate::shown;
use crate::shown::Shown;

/// Every step of a chain, in order, each under its heading (`run X: …`, `your own edits,
/// made before run X`), as a patch or, with `stat`, one line per file. Empty steps (a run
/// that changed nothing) say so.
pub fn chain_diff(steps: &[Step], style: Style, stat: bool) -> Shown {
    let mut parts = Vec::new();
    for step in steps {
        let heading = match &step.of {
            StepOf::Run(run) => shown!("── run {}: its own work", run),
            StepOf::UserBefore(run) => shown!("── your own edits, made before run {}", run),
            StepOf::UserAfter(run) => shown!("── your own edits, made since run {}", run),
        };
        parts.push(style.bold(&heading));
        parts.push(Shown::text("\n"));
        if step.diff.is_empty() {
            parts.push(Shown::text("(no change)\n"));
        } else if stat {
            parts.push(review::stat(&step.diff));
        } else {
            // Sanitized before it is colored: a line of the patch cannot hide another.
            parts.push(style.diff(&Shown::text(&step.diff.to_string())));
        }
    }
    Shown::join(&parts, "")
}

/// `follows run X` (`, after your own edits`) for a follow-up; `None` for a run that
/// follows none.
pub fn follows_line(info: &RunInfo) -> Option<Shown> {
    let parent = info.parent.as_ref()?;
    let edits = if info.user_edits {
        ", after your own edits"
    } else {
        ""
    };
    Some(shown!("follows run {}{}", parent, edits))
}
