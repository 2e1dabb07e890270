//! Which paths the harness hides from the model and its commands, as the caller says.

use std::path::Path;
use std::sync::Arc;

/// The paths the caller hides from the model and its commands (deny rules, `.env` files,
/// keys): a session records their content in the harness's store only, never in the
/// workspace's `.git`, where a command could read it back with `git show`.
///
/// The crate hides nothing by itself: what is hidden is the caller's policy, given as a
/// predicate on paths relative to the working tree's top, with `/` between names (`.env`,
/// `config/.env.local`, `secrets` for a directory). A directory that is hidden hides
/// everything below it.
///
/// ```
/// use std::path::Path;
/// let hidden = harness_undo::Hidden::new(|path: &Path| {
///     path.file_name().is_some_and(|name| name == ".env")
/// });
/// assert!(hidden.is_hidden(Path::new("config/.env")));
/// assert!(!hidden.is_hidden(Path::new("src/lib.rs")));
/// assert!(!harness_undo::Hidden::default().is_hidden(Path::new(".env")));
/// ```
#[derive(Clone, Default)]
pub struct Hidden(Option<Arc<IsHidden>>);

/// The caller's predicate.
type IsHidden = dyn Fn(&Path) -> bool + Send + Sync;

impl Hidden {
    /// The paths for which `is_hidden` is true.
    pub fn new(is_hidden: impl Fn(&Path) -> bool + Send + Sync + 'static) -> Hidden {
        Hidden(Some(Arc::new(is_hidden)))
    }

    /// True if and only if `path` (relative to the working tree's top) is hidden.
    pub fn is_hidden(&self, path: &Path) -> bool {
        self.0.as_ref().is_some_and(|is_hidden| is_hidden(path))
    }
}

impl std::fmt::Debug for Hidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Some(_) => "Hidden(by the caller's rules)",
            None => "Hidden(nothing)",
        })
    }
}

/// Two are equal when they are the same predicate (clones of one), or both hide nothing.
impl PartialEq for Hidden {
    fn eq(&self, other: &Hidden) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

impl Eq for Hidden {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_when_the_same_predicate_or_both_nothing() {
        let hidden = Hidden::new(|_| true);
        assert_eq!(hidden, hidden.clone());
        assert_ne!(
            hidden,
            Hidden::new(|_| true),
            "another predicate, even alike"
        );
        assert_eq!(Hidden::default(), Hidden::default());
        assert_ne!(hidden, Hidden::default());
        assert_ne!(Hidden::default(), hidden);
        assert_eq!(format!("{hidden:?}"), "Hidden(by the caller's rules)");
        assert_eq!(format!("{:?}", Hidden::default()), "Hidden(nothing)");
    }
}
