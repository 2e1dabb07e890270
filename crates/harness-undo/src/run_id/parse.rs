//! Parsing a run id, which accepts only the exact shape with a real date and time. Its error
//! is its own, [`ParseRunIdError`], which the crate's `Error` wraps: the id depends on
//! nothing else in the crate, and the crate's error depends on the id.

use std::str::FromStr;

use super::RunId;

/// A string that is not a run id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a run id; a run id looks like 20250131-235959-042")]
pub struct ParseRunIdError {
    /// The string that was given.
    pub text: String,
}

impl FromStr for RunId {
    type Err = ParseRunIdError;

    fn from_str(text: &str) -> Result<RunId, ParseRunIdError> {
        let invalid = || ParseRunIdError {
            text: text.to_string(),
        };
        let shape_ok = text.len() == 19
            && text.bytes().enumerate().all(|(i, b)| match i {
                8 | 15 => b == b'-',
                _ => b.is_ascii_digit(),
            });
        if !shape_ok {
            return Err(invalid());
        }
        let candidate = RunId(text.to_string());
        // A real date and time formats back to the same text; 20251301 or
        // 25:00 do not.
        if RunId::from_unix_millis(candidate.unix_millis()) == candidate {
            Ok(candidate)
        } else {
            Err(invalid())
        }
    }
}
