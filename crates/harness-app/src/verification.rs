//! What a verification is worth: a command the policy would refuse is refused before the
//! run starts (the run could never be verified), and a pass is not counted when a command
//! changed the test code the file tools were kept from changing.

use harness_undo::Diff;

use crate::Error;
use crate::settings::Settings;

/// Refuses a verification command the command policy would refuse: the run could never be
/// verified.
///
/// # Errors
///
/// [`Error::UnrunnableVerification`], naming the command and the refusal.
pub fn refuse_unrunnable_verification(settings: &Settings) -> Result<(), Error> {
    if let Some(verification) = &settings.verification {
        settings
            .toolbox
            .policy()
            .check(verification.argv())
            .map_err(|refusal| Error::UnrunnableVerification {
                command: verification.command().to_owned(),
                refusal,
            })?;
    }
    Ok(())
}

/// The test files the run changed, when the tools were kept from changing test code: a
/// command changed them, so a passing verification may not mean the code was fixed.
pub(crate) fn tests_changed(settings: &Settings, diff: Option<&Diff>) -> Vec<String> {
    let (Ok(Some(tests)), Some(diff)) = (settings.toolbox.test_code(), diff) else {
        return Vec::new();
    };
    diff.files
        .iter()
        .map(|file| file.path.display().to_string())
        .filter(|path| tests.is_test_file(path))
        .collect()
}
