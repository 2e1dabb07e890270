//! [`ToolName`]: the six tools' names as one type, so that code branching on a tool names it
//! by a variant and renaming a tool is a compile error rather than a branch that never runs.

use std::fmt;

/// The name of one tool of the [`catalogue`](crate::catalogue).
///
/// A model sends names as strings; [`ToolName::parse`] turns one into a variant, exactly (a
/// misspelled name is the model's to fix, not ours to guess), and [`ToolName::as_str`] gives
/// the string back.
///
/// ```
/// use harness_schema::ToolName;
///
/// assert_eq!(ToolName::parse("edit_file"), Some(ToolName::EditFile));
/// assert_eq!(ToolName::parse("Edit_File"), None);
/// assert_eq!(ToolName::RunCommand.as_str(), "run_command");
/// assert!(ToolName::WriteFile.changes_files());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolName {
    /// `read_file`.
    ReadFile,
    /// `write_file`.
    WriteFile,
    /// `edit_file`.
    EditFile,
    /// `list_dir`.
    ListDir,
    /// `search_text`.
    SearchText,
    /// `run_command`.
    RunCommand,
}

impl ToolName {
    /// Every tool, in the order the catalogue offers them.
    pub const ALL: [ToolName; 6] = [
        ToolName::ReadFile,
        ToolName::WriteFile,
        ToolName::EditFile,
        ToolName::ListDir,
        ToolName::SearchText,
        ToolName::RunCommand,
    ];

    /// The tool named exactly `name`, if there is one.
    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|tool| tool.as_str() == name)
    }

    /// The name the model calls the tool by, e.g. `read_file`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolName::ReadFile => "read_file",
            ToolName::WriteFile => "write_file",
            ToolName::EditFile => "edit_file",
            ToolName::ListDir => "list_dir",
            ToolName::SearchText => "search_text",
            ToolName::RunCommand => "run_command",
        }
    }

    /// Whether the tool's purpose is to change a file's content (`write_file`, `edit_file`).
    ///
    /// `run_command` can change files too, but it is not a file edit: its changes are found
    /// by comparing the tree, not from its result.
    pub const fn changes_files(self) -> bool {
        matches!(self, ToolName::WriteFile | ToolName::EditFile)
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_tool_and_nothing_else_parses() {
        for tool in ToolName::ALL {
            assert_eq!(ToolName::parse(tool.as_str()), Some(tool));
            assert_eq!(tool.to_string(), tool.as_str());
        }
        for other in [
            "",
            "read",
            "READ_FILE",
            "read_file ",
            "run-command",
            "shell",
        ] {
            assert_eq!(ToolName::parse(other), None, "{other:?}");
        }
    }

    #[test]
    fn the_names_are_distinct_and_in_the_catalogue_s_order() {
        let names: Vec<&str> = ToolName::ALL.iter().map(|tool| tool.as_str()).collect();
        let offered: Vec<&str> = crate::catalogue().iter().map(|spec| spec.name()).collect();
        assert_eq!(names, offered);
    }

    #[test]
    fn only_write_and_edit_change_files() {
        let changing: Vec<ToolName> = ToolName::ALL
            .into_iter()
            .filter(|tool| tool.changes_files())
            .collect();
        assert_eq!(changing, [ToolName::WriteFile, ToolName::EditFile]);
    }
}
