//! Markers that stand for redacted values, and the vault that maps them back.
//!
//! A redacted value is shown as `[REDACTED:<rule>:<n>]`, `n` unique in the process, the same
//! value always shown as the same marker. The vault that maps each marker back to its value
//! lives in memory only: it is never written to a transcript or anywhere on disk (its
//! `Debug` shows counts, not values). The file tools put the values back where a model
//! sends their markers, so that text read redacted and written back keeps its secrets.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use regex::Regex;

/// The numbers of markers: one counter for the process, so that no two vaults ever give
/// one marker two meanings (a transcript redacting with a redactor of its own included).
static NEXT: AtomicU64 = AtomicU64::new(1);

/// The most values a vault keeps. Past it, values are still redacted, with markers that
/// are not put back (a write holding one is refused): a bound on memory for a run whose
/// output is full of distinct secrets.
const MAX_ENTRIES: usize = 100_000;

/// Anything that reads as a redaction marker: ours (`[REDACTED:rule:3]`), the plain
/// `[REDACTED]` of older runs, and a model's variations on them (`[redacted]`,
/// `[REDACTED: key]`, `[REDACTED-1]`).
static MARKER_LIKE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\[REDACTED(?:[:\s_-][^\]\n]{0,60})?\]")
        .expect("the marker pattern is a valid regex")
});

/// The spans of `text` that read as redaction markers, known or not.
pub(crate) fn marker_spans(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    MARKER_LIKE.find_iter(text).map(|found| found.range())
}

/// True if and only if `text` holds something that reads as a redaction marker.
pub fn has_marker(text: &str) -> bool {
    MARKER_LIKE.is_match(text)
}

/// One redacted value.
struct Entry {
    /// The value as it was in the text.
    value: String,
    /// Whether a file tool may put it back: false for the values of the harness's own
    /// secret variables, which no tool writes into the workspace.
    restorable: bool,
}

/// Marker ↔ value, shared by the clones of a redactor.
#[derive(Default)]
struct Inner {
    /// The marker of each value.
    by_value: HashMap<String, String>,
    /// The value of each marker.
    by_marker: HashMap<String, Entry>,
}

/// The markers a redactor gave out, and their values. Clones share one vault.
#[derive(Clone, Default)]
pub(crate) struct Vault {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The values are secrets: a debug print shows how many there are, never them.
        f.debug_struct("Vault")
            .field("markers", &self.lock().by_marker.len())
            .finish()
    }
}

/// What [`Redactor::restore`](super::Redactor::restore) made of a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restored {
    /// The text with every known marker replaced by its value.
    pub text: String,
    /// Where, in `text`, something that reads as a marker stands that this redactor did not
    /// give out (or did not keep): it is left as sent.
    pub unknown: Vec<Range<usize>>,
    /// The markers in the text that stand for values no tool may write: the harness's own
    /// secrets. They are left as sent, and a tool refuses the text.
    pub withheld: Vec<String>,
}

impl Vault {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere while the lock was held leaves maps that are still whole.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The marker of `value`, found by `rule`: the one it already has, or a new one.
    pub(crate) fn marker(&self, rule: &str, value: &str, restorable: bool) -> String {
        let mut inner = self.lock();
        if let Some(marker) = inner.by_value.get(value) {
            return marker.clone();
        }
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let marker = format!("[REDACTED:{rule}:{n}]");
        if inner.by_marker.len() < MAX_ENTRIES {
            inner.by_value.insert(value.to_owned(), marker.clone());
            inner.by_marker.insert(
                marker.clone(),
                Entry {
                    value: value.to_owned(),
                    restorable,
                },
            );
        }
        marker
    }

    /// The values this vault knows that are long enough to be redacted wherever they appear,
    /// with their markers.
    pub(crate) fn known(&self, min_len: usize) -> Vec<(String, String)> {
        let inner = self.lock();
        let mut known: Vec<(String, String)> = inner
            .by_value
            .iter()
            .filter(|(value, _)| value.len() >= min_len)
            .map(|(value, marker)| (value.clone(), marker.clone()))
            .collect();
        // Longest first, so that a value holding another is replaced whole.
        known.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        known
    }

    /// `text` with the markers this vault gave out replaced by their values.
    pub(crate) fn restore(&self, text: &str) -> Restored {
        let inner = self.lock();
        let mut out = String::with_capacity(text.len());
        let mut unknown = Vec::new();
        let mut withheld = Vec::new();
        let mut copied = 0;
        for span in marker_spans(text) {
            out.push_str(&text[copied..span.start]);
            let marker = &text[span.clone()];
            match inner.by_marker.get(marker) {
                Some(entry) if entry.restorable => out.push_str(&entry.value),
                Some(_) => {
                    withheld.push(marker.to_owned());
                    out.push_str(marker);
                }
                None => {
                    let start = out.len();
                    out.push_str(marker);
                    unknown.push(start..out.len());
                }
            }
            copied = span.end;
        }
        out.push_str(&text[copied..]);
        Restored {
            text: out,
            unknown,
            withheld,
        }
    }
}
