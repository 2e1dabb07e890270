//! Parsing a run id, which accepts only the exact shape with a real date and time. Apart
//! from the id itself: its error is the crate's [`Error`], which names run ids, so that
//! neither `error.rs` nor the id's file uses the other.

use std::str::FromStr;

use super::RunId;
use crate::Error;

impl FromStr for RunId {
    type Err = Error;

    fn from_str(text: &str) -> Result<RunId, Error> {
        let invalid = || Error::InvalidRunId {
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
