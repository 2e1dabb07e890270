//! The words of a run's review the commands print themselves: what an undo or redo
//! repaired and could not restore, and the commands to paste next. The words the MCP
//! server's run tools share (a diff's stat, the paths restored or kept, what happened to
//! ignored files) are `harness_app::review`'s, named here as before.

pub(crate) use harness_app::review::{
    access_line, ignored_lines, ignored_stat, kept_line, named_paths, stat,
};
use harness_undo::Session;

use crate::display::Out;
use crate::shown::shown;

/// Says what an undo or redo found changed in `.git` and put back, and, when the repository
/// was gone, plainly what could not be restored; `since` as [`ignored_lines`] takes it.
pub(crate) fn report_limits(
    restored: &harness_undo::Restored,
    session: &Session,
    since: &str,
) -> anyhow::Result<()> {
    let mut out = Out::stdout();
    for repair in &restored.repaired {
        if *repair != harness_undo::Tampering::RepositoryGone {
            out.line(&shown!("note: {}", repair.to_string()))?;
        }
    }
    for line in ignored_lines(&restored.ignored, since) {
        out.line(&line)?;
    }
    if restored.repository_missing {
        out.line(&shown!(
            "warning: {}/.git is gone or is no git repository: only the working tree was \
             restored, from the harness's store at {}. NOT restored: the index (staged \
             changes), HEAD, branches and the repository's history, which the store does not \
             hold; restore .git from a clone or backup",
            session.root().display(),
            session.store_dir().display()
        ))?;
    }
    Ok(())
}

/// `harness <verb> <run> --workspace <root>`, ready to paste.
pub(crate) fn hint(verb: &str, session: &Session) -> String {
    crate::program::command(&format!(
        "{verb} {} --workspace {}",
        session.id(),
        harness_app::quote(&session.root().display().to_string())
    ))
}
