//! What a finished run's summary states besides [`Finished`](crate::Finished)'s facts: the
//! files it changed with their line counts, and the commands that follow it up (review,
//! undo, keep, show). A front end words and prints them; this file prints nothing.

use std::path::Path;

use harness_undo::Diff;

use crate::quote;

/// A file the run changed, with the lines it added and removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedFile {
    /// Its path, relative to the workspace.
    pub path: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

impl ChangedFile {
    /// The files `changed` lists, or why they could not be listed.
    pub fn all(changed: &Result<Diff, harness_undo::Error>) -> Result<Vec<ChangedFile>, String> {
        let diff = changed.as_ref().map_err(ToString::to_string)?;
        Ok(diff
            .files
            .iter()
            .map(|file| ChangedFile {
                path: file.path.display().to_string(),
                added: file.additions,
                removed: file.deletions,
            })
            .collect())
    }
}

/// The commands that follow up the run `run` of the workspace `root`, each with its label:
/// review its diff, undo it, keep it and show its transcript. Each is the command line
/// after the program's name, the workspace quoted for a POSIX shell.
pub fn follow_ups(run: &str, root: &Path) -> [(&'static str, String); 4] {
    let workspace = quote(&root.display().to_string());
    [
        ("review", format!("diff {run} --workspace {workspace}")),
        ("undo", format!("undo {run} --workspace {workspace}")),
        ("keep", format!("accept {run} --workspace {workspace}")),
        ("transcript", format!("show {run} --workspace {workspace}")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follow_ups_quote_the_workspace() {
        let commands = follow_ups("20250101-000000-000", Path::new("/tmp/my project"));
        assert_eq!(
            commands[0],
            (
                "review",
                "diff 20250101-000000-000 --workspace '/tmp/my project'".to_owned()
            )
        );
        assert_eq!(commands[3].0, "transcript");
    }
}
