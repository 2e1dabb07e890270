//! The ignored files around a verification: [`Session::reset_ignored`] puts them back
//! as they were before the run's commands touched them (plus what earlier
//! verifications wrote), so that a check runs the code in the diff, and
//! [`Session::keep_ignored_after_check`] keeps what the check wrote for the next one.

use std::path::PathBuf;

use super::Session;
use super::replace::IgnoredRestore;
use crate::Error;
use crate::ignored::{self, Which};

impl Session {
    /// Puts ignored files back as they were before the run's commands touched them,
    /// for a verification about to run: what the commands made is removed, what they
    /// changed or deleted is written back from the store. The state put back is the
    /// one at the start plus what earlier verifications wrote (recorded by
    /// [`Session::keep_ignored_after_check`]), so a check does not rebuild everything;
    /// a file a verification wrote that a command then changed is removed when its
    /// content was not saved. What could not be put back is in
    /// [`IgnoredRestore::not_restored`]: the verification may run it.
    pub fn reset_ignored(&mut self) -> Result<IgnoredRestore, Error> {
        self.wait_for_store()?;
        let base = match self.ignored_manifest(Which::Check)? {
            Some(base) => base,
            None => match self.ignored_manifest(Which::Start)? {
                Some(base) => base,
                None => return Ok(IgnoredRestore::default()),
            },
        };
        let listing = self.ignored_listing()?;
        let changes = ignored::differences(&self.root, &base, &listing);
        let done = ignored::put_back(&self.root, self.store.repo(), &base, &changes, true);
        self.ignored_unrestored = done.not_restored.iter().map(|p| ignored::key(p)).collect();
        let mut reset = IgnoredRestore::from(done);
        if listing.truncated {
            // What lies past the limit was not compared: the check cannot be vouched for.
            reset.not_restored.push(PathBuf::from(format!(
                "(ignored entries past the first {}, not compared)",
                crate::MOST_LISTED_IGNORED
            )));
        }
        Ok(reset)
    }

    /// Records the ignored files a verification just wrote as the baseline of the next
    /// [`Session::reset_ignored`], saving their content within the budget. Call it right
    /// after the verification ran (after [`Session::reset_ignored`] and the check only).
    pub fn keep_ignored_after_check(&mut self) -> Result<(), Error> {
        let base = match self.ignored_manifest(Which::Check)? {
            Some(base) => base,
            None => match self.ignored_manifest(Which::Start)? {
                Some(base) => base,
                None => return Ok(()),
            },
        };
        let listing = self.ignored_listing()?;
        let (mut manifest, commit) =
            ignored::save(self.store.dir(), &self.root, listing, Some(&base), true)?;
        // What a command left that could not be put back is not the check's: kept as the
        // baseline had it, it is a change again at the next check.
        for key in std::mem::take(&mut self.ignored_unrestored) {
            match base.entries.get(&key) {
                Some(entry) => manifest.entries.insert(key, entry.clone()),
                None => manifest.entries.remove(&key),
            };
        }
        if let Some(commit) = commit {
            self.store.set_ref(
                &ignored::ref_name(&self.run_ref(""), Which::Check),
                commit,
                "harness: ignored files a verification wrote",
            )?;
        }
        ignored::write(&self.run_dir(), Which::Check, &manifest)
    }
}
