//! What a verification is worth: a command the policy would refuse is refused before the
//! run starts (the run could never be verified), and a pass is not counted when a command
//! changed the test code the file tools were kept from changing.

use anyhow::anyhow;
use harness_undo::Diff;

use crate::config::Settings;

/// Refuses a verification command the command policy would refuse: the run could never be
/// verified.
pub(crate) fn refuse_unrunnable_verification(settings: &Settings) -> anyhow::Result<()> {
    if let Some(verification) = &settings.verification {
        settings
            .toolbox
            .policy()
            .check(verification.argv())
            .map_err(|refusal| {
                anyhow!(
                    "the verification command `{}` would be refused ({refusal}); allow its \
                     program with --allow",
                    verification.command()
                )
            })?;
    }
    Ok(())
}

/// The test files the run changed, when the tools were kept from changing test code: a
/// command changed them, so a passing verification may not mean the code was fixed.
pub(super) fn tests_changed(settings: &Settings, diff: Option<&Diff>) -> Vec<String> {
    let (Ok(Some(tests)), Some(diff)) = (settings.toolbox.test_code(), diff) else {
        return Vec::new();
    };
    diff.files
        .iter()
        .map(|file| file.path.display().to_string())
        .filter(|path| tests.is_test_file(path))
        .collect()
}
