//! Opening a recorded run: by its id, or the latest of the workspace.

use std::path::Path;

use harness_undo::{RunId, Session};

use crate::Error;
use crate::toolbox;

/// The run `id` of the workspace `root` (canonical), or its latest run, with what its
/// undo and redo save of hidden files kept out of the workspace's `.git`.
///
/// # Errors
///
/// An id that is not one, [`Error::NoRun`] when none is recorded, or a store that cannot
/// be opened.
pub fn open_run(root: &Path, id: Option<&str>) -> Result<Session, Error> {
    let id = match id {
        Some(text) => text.parse::<RunId>().map_err(harness_undo::Error::from)?,
        None => {
            Session::latest(root)?
                .ok_or_else(|| Error::NoRun {
                    root: root.to_owned(),
                })?
                .id
        }
    };
    let mut session = Session::open(root, &id)?;
    // What undo and redo save of hidden files stays out of the workspace's `.git`.
    session.hide(toolbox::hidden_by_configuration(root));
    Ok(session)
}
