//! [`Guards`]: the checks one file tool call's writes go through, in order: test code
//! first ([`TestCode`]), then the syntax ([`SyntaxCheck`]).

use std::sync::Mutex;

use camino::Utf8Path;
use harness_edit::WriteGuard;

use crate::syntax::SyntaxCheck;
use crate::test_code::TestCode;

/// The toolbox's guards for one call, and what the syntax check could not check.
#[derive(Debug)]
pub(crate) struct Guards<'t> {
    /// Test code the tools may not change; `None`: any.
    tests: Option<&'t TestCode>,
    /// The syntax check; `None`: writes are not parsed.
    syntax: Option<&'t SyntaxCheck>,
    /// Why the last write was written without a syntax check, when a parser could not say.
    unchecked: Mutex<Option<String>>,
}

impl<'t> Guards<'t> {
    pub(crate) fn new(tests: Option<&'t TestCode>, syntax: Option<&'t SyntaxCheck>) -> Guards<'t> {
        Guards {
            tests,
            syntax,
            unchecked: Mutex::new(None),
        }
    }

    /// Why the call's write went unchecked, if it did.
    pub(crate) fn unchecked(self) -> Option<String> {
        self.unchecked
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl WriteGuard for Guards<'_> {
    fn check(&self, path: &Utf8Path, before: Option<&str>, after: &str) -> Result<(), String> {
        if let Some(tests) = self.tests {
            tests.check(path, before, after)?;
        }
        if let Some(syntax) = self.syntax
            && let Some(why) = syntax.check(path, before, after)?
        {
            *self
                .unchecked
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(why);
        }
        Ok(())
    }
}
