//! How many tokens the model's next answer may have: enough to write back the longest file
//! it may rewrite whole, within what the context leaves after the prompt.
//!
//! One limit for every answer (1,024 tokens) cut three answers in a row while they rewrote
//! a file (issue 49): a whole file in a fenced block, or in a `write_file` call, is as long
//! as the file, and then some. The limit is raised for the files the model has read, where
//! whole-file answers come from, up to those the tools still let it replace whole
//! (`harness_tools::Limits::rewrite_lines`): a longer file is changed with `edit_file`, so
//! room for it would only let a rambling answer run on.

/// Tokens an answer holding a whole file needs beyond the file: its path, the fence, a
/// sentence before it, a call's JSON around it.
pub(crate) const ROOM: u32 = 256;

/// The reply limit for the next answer: `base` (the limit of answers in general), raised
/// to the longest file the model may rewrite (`longest_file_tokens`) plus [`ROOM`], but
/// never past what `context_window` leaves after `prompt_tokens`, nor below `base`.
pub(crate) fn reply_limit(
    base: u32,
    longest_file_tokens: usize,
    context_window: u32,
    prompt_tokens: usize,
) -> u32 {
    let wanted = u32::try_from(longest_file_tokens)
        .unwrap_or(u32::MAX)
        .saturating_add(ROOM)
        .max(base);
    let left = context_window.saturating_sub(u32::try_from(prompt_tokens).unwrap_or(u32::MAX));
    wanted.min(left.max(base))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_fits_the_longest_file_within_the_context() {
        // No file read, or small ones: the general limit.
        assert_eq!(reply_limit(1_024, 0, 8_192, 3_000), 1_024);
        assert_eq!(reply_limit(1_024, 700, 8_192, 3_000), 1_024);
        // A file of 2,000 tokens: it and the room around it.
        assert_eq!(reply_limit(1_024, 2_000, 8_192, 3_000), 2_256);
        // More than the context leaves: what it leaves.
        assert_eq!(reply_limit(1_024, 6_000, 8_192, 3_000), 5_192);
        // A prompt that leaves less than the general limit keeps it (the context was fit
        // to leave that much).
        assert_eq!(reply_limit(1_024, 6_000, 8_192, 7_900), 1_024);
    }
}
