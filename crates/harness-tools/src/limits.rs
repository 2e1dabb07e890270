//! [`Limits`]: how much one tool call may show or read.

/// How much one call may show or read.
///
/// Every cap ends its output with a note saying what was left out and how to see it, so the
/// model is never shown a silent cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The most entries `list_dir` shows (at least 1). Default: 200.
    pub list_entries: usize,
    /// The depth `list_dir` lists when the call gives none. Default: 2.
    pub list_depth: u32,
    /// The most matching lines `search_text` shows. Default: 100.
    pub search_matches: usize,
    /// The most characters of one matching line `search_text` shows. Default: 200.
    pub search_line_chars: usize,
    /// Files larger than this many bytes are not searched. Default: 8 MiB.
    pub search_file_len: u64,
    /// What `read_file` shows and which files the file tools read and write.
    pub edit: harness_edit::Limits,
    /// The most lines an existing file may have for `write_file` to replace it whole.
    /// Default: 200. A longer file is changed with `edit_file`: a small model rewriting
    /// it runs out of reply tokens part way, or drops lines it did not think to repeat.
    pub rewrite_lines: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            list_entries: 200,
            list_depth: 2,
            search_matches: 100,
            search_line_chars: 200,
            search_file_len: 8 * 1024 * 1024,
            edit: harness_edit::Limits::default(),
            rewrite_lines: 200,
        }
    }
}
