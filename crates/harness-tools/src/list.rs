//! `list_dir`: the files and directories under a directory, as workspace-relative paths.

use std::ops::ControlFlow;

use harness_sandbox::{Access, Workspace};
use harness_schema::{ListDir, ToolName};

use crate::failure::{Failure, sandbox};
use crate::limits::Limits;
use crate::result::{Detail, Summary, ToolResult};
use crate::walk::{self, Kind};

/// A listing, ready for the model.
struct Listing {
    /// One path per line, directories ending in `/`, then a note on what was left out.
    pub(crate) text: String,
    /// Entries shown.
    pub(crate) shown: usize,
    /// Entries left out by the cap (at least this many when the walk stopped early).
    pub(crate) omitted: usize,
}

/// How many entries the walk may visit per entry of the cap before it stops: enough to choose
/// the shallowest entries of any ordinary tree, bounded for a huge one.
const VISITS_PER_ENTRY: usize = 100;

/// Lists `args.path` (the workspace root when absent), `args.depth` levels deep
/// ([`Limits::list_depth`] when absent), showing at most [`Limits::list_entries`] entries (at
/// least one).
///
/// When there are more, the shallowest are kept: every entry of a level before any of the
/// next, so one large subdirectory cannot hide its siblings. The kept entries are shown in path
/// order, directories before their contents.
pub(crate) fn list_dir(workspace: &Workspace, args: &ListDir, limits: &Limits) -> ToolResult {
    let candidate = args.path.as_deref().unwrap_or(".");
    let depth = args.depth.unwrap_or(limits.list_depth) as usize;
    match listing(workspace, candidate, depth, limits.list_entries) {
        Ok(Listing {
            text,
            shown,
            omitted,
        }) => {
            let detail = Detail::Listed { shown, omitted };
            ToolResult::success(
                Summary::new(ToolName::ListDir.as_str(), candidate, detail),
                text,
            )
        }
        Err(failure) => {
            ToolResult::failure(ToolName::ListDir.as_str(), candidate, failure.message())
        }
    }
}

/// The listing of `candidate`, `depth` levels deep, at most `cap` entries.
fn listing(
    workspace: &Workspace,
    candidate: &str,
    depth: usize,
    cap: usize,
) -> Result<Listing, Failure> {
    workspace
        .check(candidate, Access::Read)
        .map_err(|error| sandbox(&error))?;
    let metadata = workspace
        .metadata(candidate)
        .map_err(|error| sandbox(&error))?;
    if !metadata.is_dir() {
        return Err(Failure::new(format!(
            "{candidate} is a file, not a directory; read it with read_file, or list the \
             directory that contains it"
        )));
    }
    let cap = cap.max(1);
    let visits = cap.saturating_mul(VISITS_PER_ENTRY);
    let mut found: Vec<(usize, usize, String)> = Vec::new();
    let mut stopped_early = false;
    walk::visit(workspace, candidate, Some(depth), |entry, _| {
        if found.len() == visits {
            stopped_early = true;
            return ControlFlow::Break(());
        }
        let mut line = entry.relative.clone();
        if entry.kind == Kind::Dir {
            line.push('/');
        }
        found.push((entry.depth, found.len(), line));
        ControlFlow::Continue(())
    })
    .map_err(|error| sandbox(&error))?;
    let omitted = found.len().saturating_sub(cap);
    // Shallowest first (the sort is stable, so path order within a level), then back to
    // path order, which is the walk's order.
    found.sort_by_key(|(depth, _, _)| *depth);
    found.truncate(cap);
    found.sort_by_key(|(_, order, _)| *order);

    let mut text = String::new();
    for (_, _, line) in &found {
        text.push_str(line);
        text.push('\n');
    }
    if found.is_empty() && omitted == 0 {
        text = format!(
            "{candidate} has no entries to show (entries ignored by .gitignore and files the \
             workspace protects are not listed)\n"
        );
    }
    if omitted > 0 {
        let more = if stopped_early { "more than " } else { "" };
        text.push_str(&format!(
            "[{more}{omitted} more entries not shown: list a subdirectory, or a smaller depth]\n"
        ));
    }
    Ok(Listing {
        text,
        shown: found.len(),
        omitted,
    })
}
