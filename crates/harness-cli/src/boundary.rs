//! What the harness protects and what it does not, said the same way everywhere.

/// Printed at the start and at the end of every run.
pub(crate) const STATEMENT: &str = "Path confinement and a command policy stop accidents, not \
    an adversary: a model trying to escape, or following instructions injected through a file \
    it read, can get out through a command it is allowed to run. Use a container, VM or \
    separate user for untrusted input.";

/// What the active configuration does and does not protect, for `harness sandbox explain`.
pub(crate) fn explain(policy: &str) -> String {
    format!(
        "{STATEMENT}\n\
         \n\
         What is active (isolation tier: none):\n\
         \n\
         \x20 protected  path confinement: every path a tool takes is resolved inside the\n\
         \x20            workspace, one name at a time from an open handle, so `..`, absolute\n\
         \x20            paths, symbolic links out and sibling-prefix tricks are refused\n\
         \x20 protected  secrets and git: .env, .env.*, *.pem, *.key and SSH keys cannot be read;\n\
         \x20            .git/ and harness.toml cannot be written by the file tools\n\
         \x20 protected  commands run as an argv, never through a shell, with stdin closed, a\n\
         \x20            timeout that kills the whole process tree, and output cut to a bound\n\
         \x20 protected  your work: a dirty tree is refused (or snapshotted with --allow-dirty),\n\
         \x20            every step is a checkpoint, each also copied to a store outside the\n\
         \x20            workspace ($XDG_STATE_HOME/harness), so `harness undo` restores the\n\
         \x20            pre-run files even after a command deleted the run's refs or .git (a\n\
         \x20            deleted .git loses the index and history); refs a command removes are\n\
         \x20            put back after it; ignored files the file tools write are saved first\n\
         \x20 seatbelt   the undo store: with no kernel tier a command runs as you and can\n\
         \x20            reach the store too; ignored files commands change (build outputs) are\n\
         \x20            not undoable, and the run summary names them\n\
         \x20 seatbelt   the command policy: {policy}. It matches the\n\
         \x20            program and its arguments; an allowed interpreter (python3, sh, node)\n\
         \x20            can still do anything you can\n\
         \x20 seatbelt   secrets are redacted from what the model and the transcript see, by\n\
         \x20            name and shape; an unusual secret can get through\n\
         \x20 NOT        kernel isolation: commands run as you, with your files, network and\n\
         \x20            credentials (no Landlock, bubblewrap, container or VM tier yet)\n\
         \x20 NOT        prompt injection: the model is told that tool results are data, not\n\
         \x20            instructions, and nothing it reads changes the workspace or the policy,\n\
         \x20            but no prompt makes a model immune\n"
    )
}

/// How the command policy of a run reads in a sentence.
pub(crate) fn policy(allowlist: &[String]) -> String {
    if allowlist.is_empty() {
        "a blocklist of accidents (sudo, su, rm -rf /, mkfs, dd, shutdown, ...)".to_owned()
    } else {
        format!("an allowlist: only {} may run", allowlist.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_explanation_says_what_is_not_protected() {
        let text = explain(&policy(&[]));
        assert!(text.starts_with(STATEMENT));
        assert!(text.contains("isolation tier: none"));
        assert!(text.contains("NOT        kernel isolation"));
        assert!(text.contains("blocklist of accidents"));
        let allow = explain(&policy(&["python3".to_owned(), "git".to_owned()]));
        assert!(allow.contains("an allowlist: only python3, git may run"));
        assert!(text.contains("a store outside the\n"), "{text}");
        assert!(
            text.contains("can\n             reach the store too"),
            "{text}"
        );
    }
}
