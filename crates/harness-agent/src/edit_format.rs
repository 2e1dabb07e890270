//! [`EditFormat`]: how the model is asked to change files, by calling tools or by writing
//! the change into its answer, and which of the edits written into an answer (`blocks.rs`)
//! the loop applies.

/// Which edits written into an answer the loop applies when the answer calls no tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EditFormat {
    /// Whole files and search/replace blocks both, as a fallback for a model that does not
    /// call tools; the model is told it may use them.
    #[default]
    Auto,
    /// Tool calls only: an answer's code changes nothing.
    Tools,
    /// Whole files in fenced blocks under their path, and no tools offered: the model is
    /// shown the files and the test output, and the harness runs the check after each
    /// change (the way Aider's "whole" format works). A small model asked for one shape of
    /// answer, with no tool schemas to read, gives it more often.
    Whole,
    /// Search/replace blocks under a file's path, and no tools offered, as in
    /// [`EditFormat::Whole`] (Aider's "diff" format).
    Diff,
}

impl EditFormat {
    /// Every format, by the name `--edit-format` takes.
    pub const ALL: [(&'static str, EditFormat); 4] = [
        ("auto", EditFormat::Auto),
        ("tools", EditFormat::Tools),
        ("whole", EditFormat::Whole),
        ("diff", EditFormat::Diff),
    ];

    /// The format named `name`, as `--edit-format` takes it.
    pub fn parse(name: &str) -> Option<EditFormat> {
        EditFormat::ALL
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, format)| *format)
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        EditFormat::ALL
            .iter()
            .find(|(_, format)| *format == self)
            .map_or("auto", |(name, _)| name)
    }

    /// Whether the model is offered the tools: not in [`EditFormat::Whole`] and
    /// [`EditFormat::Diff`], where every change is written into an answer.
    pub fn offers_tools(self) -> bool {
        matches!(self, EditFormat::Auto | EditFormat::Tools)
    }

    /// Whether whole files under their path are applied.
    pub(crate) fn accepts_whole(self) -> bool {
        matches!(self, EditFormat::Auto | EditFormat::Whole)
    }

    /// Whether search/replace blocks are applied.
    pub(crate) fn accepts_diff(self) -> bool {
        matches!(self, EditFormat::Auto | EditFormat::Diff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_by_name() {
        for (name, format) in EditFormat::ALL {
            assert_eq!(EditFormat::parse(name), Some(format));
            assert_eq!(format.name(), name);
        }
        assert_eq!(EditFormat::parse("Whole"), None);
        assert_eq!(EditFormat::default(), EditFormat::Auto);
    }
}
