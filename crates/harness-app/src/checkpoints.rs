//! The undo session as the loop's [`Checkpoints`]: every run hands the agent a
//! [`SessionCheckpoints`], so each step the model takes is a checkpoint `harness diff` and
//! `harness undo` work with.
//!
//! It lives here, where both the loop and the undo session are known, so that
//! `harness-agent` does not depend on `harness-undo` (nor on libgit2). A newtype, because
//! neither the trait nor the session is this crate's own.

use std::path::Path;

use harness_agent::{Checkpoints, PutBack};
use harness_tools::{Change, ChangeKind};
use harness_undo::{DiffTarget, FileStatus, Session};

/// The error every [`Checkpoints`] method returns: whatever the session reported.
type Failure = Box<dyn std::error::Error + Send + Sync>;

/// The agent's checkpoints, kept by an undo [`Session`] borrowed for the run.
pub(crate) struct SessionCheckpoints<'a>(pub(crate) &'a mut Session);

impl Checkpoints for SessionCheckpoints<'_> {
    fn checkpoint(&mut self, label: &str) -> Result<Option<u32>, Failure> {
        let taken = self.0.checkpoint(label)?;
        Ok(taken.map(|checkpoint| checkpoint.number))
    }

    fn protect(&mut self, path: &str) -> Result<(), Failure> {
        self.0.protect(Path::new(path))?;
        Ok(())
    }

    fn before_command(&mut self) -> Result<(), Failure> {
        self.0.wait_for_store()?;
        Ok(())
    }

    fn verify(&mut self) -> Result<Vec<String>, Failure> {
        let found = self.0.verify()?;
        Ok(found.iter().map(ToString::to_string).collect())
    }

    fn before_verification(&mut self) -> Result<PutBack, Failure> {
        let reset = self.0.reset_ignored()?;
        let shown = |paths: &[std::path::PathBuf]| -> Vec<String> {
            paths
                .iter()
                .map(|path| path.display().to_string())
                .collect()
        };
        let mut put_back = shown(&reset.removed);
        put_back.extend(shown(&reset.restored));
        put_back.sort();
        Ok(PutBack {
            put_back,
            left: shown(&reset.not_restored),
        })
    }

    fn after_verification(&mut self) -> Result<(), Failure> {
        self.0.keep_ignored_after_check()?;
        Ok(())
    }

    fn revert_to_start(&mut self) -> Result<usize, Failure> {
        Ok(self.0.revert_to_start()?.changed.len())
    }

    /// The session's diff of the working tree against the pre-run state: what `harness
    /// diff` shows, renames found as git finds them.
    fn changes(&mut self) -> Result<Option<Vec<Change>>, Failure> {
        let diff = self.0.diff(DiffTarget::WorkingTree)?;
        let changes = diff
            .files
            .into_iter()
            .map(|file| {
                let kind = match file.status {
                    FileStatus::Added => ChangeKind::Added,
                    FileStatus::Deleted => ChangeKind::Deleted,
                    FileStatus::Renamed => ChangeKind::Renamed,
                    FileStatus::TypeChanged => ChangeKind::TypeChanged,
                    // Modified, and whatever a later version adds: a change all the same.
                    _ => ChangeKind::Modified,
                };
                Change::new(
                    file.path.display().to_string(),
                    file.old_path.map(|old| old.display().to_string()),
                    kind,
                    file.patch,
                )
            })
            .collect();
        Ok(Some(changes))
    }
}

/// The loop over a real undo session in a real git repository: a command that changes
/// `.git` is caught, put right and reported, and a gitignored file a tool overwrites is
/// saved first, so undo brings it back.
#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::process::Command;
    use std::sync::Arc;

    use harness_agent::{Agent, Budgets, FakeChat, Record, Reply, RunReport, Transcript};
    use harness_sandbox::Workspace;
    use harness_tools::Toolbox;
    use harness_undo::{BeginOptions, DiffTarget, Force, Session};
    use serde_json::{Value, json};

    use super::SessionCheckpoints;

    /// Runs git in `dir` with no global or system configuration.
    fn git(dir: &Path, args: &[&str]) -> String {
        let output = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.org")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.org")
            .output()
            .expect("git runs");
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8(output.stdout).expect("utf-8")
    }

    /// A committed repository with a gitignored `local.cfg`, and the store isolated.
    fn repository() -> tempfile::TempDir {
        isolate_the_store();
        let dir = tempfile::tempdir().expect("a workspace");
        std::fs::write(dir.path().join(".gitignore"), "*.cfg\n").expect("write");
        std::fs::write(dir.path().join("main.txt"), "main\n").expect("write");
        std::fs::write(dir.path().join("local.cfg"), "the user's settings\n").expect("write");
        git(dir.path(), &["init", "-q"]);
        git(dir.path(), &["add", "."]);
        git(dir.path(), &["commit", "-qm", "initial"]);
        dir
    }

    /// Points `XDG_STATE_HOME` at one temporary directory for the whole test process, set
    /// once before any test reads it. `cargo test` runs the tests of this binary as threads
    /// of one process: a directory per test, set by each, raced (one test's store was looked
    /// for under the other's directory). Stores are per workspace, so the tests can share it.
    fn isolate_the_store() {
        harness_testkit::state::isolate_state_home();
    }

    /// Runs the loop over `session` in `dir`, the model scripted to make `call` and then say
    /// it is done, with no head start and the run's transcript written: the report, the
    /// events and the model (which keeps the requests it was sent).
    fn run_one_call(
        dir: &Path,
        session: &mut Session,
        call: Reply,
    ) -> (RunReport, Vec<Value>, Arc<FakeChat>) {
        let toolbox = Toolbox::new(Workspace::new(dir).expect("a workspace"));
        let chat = Arc::new(FakeChat::new([call, Reply::text("Done.")]));
        let transcript = Transcript::create(session.transcript_path()).expect("a transcript");
        let budgets = Budgets {
            head_start_chars: 0,
            ..Budgets::default()
        };
        let mut events: Vec<Value> = Vec::new();
        let report = Agent::new(chat.clone(), &toolbox)
            .budgets(budgets)
            .transcript(transcript)
            .run("t", &mut events, &mut SessionCheckpoints(session));
        (report, events, chat)
    }

    #[test]
    fn a_command_that_deletes_the_runs_tag_is_reported_and_undone_and_the_model_told() {
        let dir = repository();
        let mut session = Session::begin(dir.path(), BeginOptions::default()).expect("begin");
        let id = session.id().to_string();
        let call = Reply::call(
            "run_command",
            json!({"argv": ["git", "tag", "-d", format!("harness/{id}")]}),
        );
        let (report, events, chat) = run_one_call(dir.path(), &mut session, call);

        let tampered: Vec<&Value> = events.iter().filter(|e| e["event"] == "tampered").collect();
        assert_eq!(tampered.len(), 1, "{events:?}");
        let finding = tampered[0]["findings"][0].as_str().expect("a finding");
        assert!(
            finding.contains(&format!("refs/tags/harness/{id} was deleted")),
            "{finding}"
        );
        assert_eq!(
            git(dir.path(), &["rev-parse", &format!("harness/{id}")]).trim(),
            session.info().pre_run.to_string(),
            "the tag is back"
        );
        let told = chat.requests()[1]
            .messages
            .iter()
            .any(|m| m.content.contains("Changing .git") && m.content.contains("not allowed"));
        assert!(told, "the model reads that changing .git is not allowed");
        assert!(
            report
                .warnings
                .iter()
                .any(|w| w.contains("changed what undo relies on")),
            "{:?}",
            report.warnings
        );
        let records = Transcript::read(session.transcript_path()).expect("the transcript");
        assert!(
            records
                .iter()
                .any(|line| matches!(line.record, Record::Tampered { .. })),
            "{records:?}"
        );
    }

    #[test]
    fn a_gitignored_file_a_tool_overwrites_is_saved_first_and_undo_restores_it() {
        let dir = repository();
        let mut session = Session::begin(dir.path(), BeginOptions::default()).expect("begin");
        let call = Reply::call(
            "write_file",
            json!({"path": "local.cfg", "content": "the model's\n", "overwrite": true}),
        );
        let (_, events, _) = run_one_call(dir.path(), &mut session, call);
        let cfg = dir.path().join("local.cfg");
        assert_eq!(
            std::fs::read_to_string(&cfg).expect("read"),
            "the model's\n",
            "{events:?}"
        );
        let diff = session.diff(DiffTarget::WorkingTree).expect("diff");
        assert_eq!(diff.files[0].path, Path::new("local.cfg"));
        session.undo(Force::No).expect("undo");
        assert_eq!(
            std::fs::read_to_string(&cfg).expect("read"),
            "the user's settings\n"
        );
    }

    /// Issue 45: an ignored file too large to have been saved at the start, which a command
    /// changed, cannot be put back before the check: a pass is not counted as verified, and
    /// the reason names the file.
    #[test]
    fn a_check_that_may_have_run_what_could_not_be_put_back_is_not_verified() {
        let dir = repository();
        let big = vec![b'u'; 5 << 20];
        std::fs::write(dir.path().join("big.cfg"), big).expect("write");
        let mut session = Session::begin(dir.path(), BeginOptions::default()).expect("begin");
        let toolbox = Toolbox::new(Workspace::new(dir.path()).expect("a workspace"));
        let chat = Arc::new(FakeChat::new([
            Reply::call(
                "run_command",
                json!({"argv": ["sh", "-c", "echo planted > big.cfg; echo x > tiny.cfg"]}),
            ),
            Reply::text("Done."),
        ]));
        let budgets = Budgets {
            head_start_chars: 0,
            ..Budgets::default()
        };
        let mut events: Vec<Value> = Vec::new();
        let verification =
            harness_agent::Verification::parse("grep -q planted big.cfg").expect("a command");
        let report = Agent::new(chat, &toolbox)
            .budgets(budgets)
            .verification(verification)
            .run("t", &mut events, &mut SessionCheckpoints(&mut session));
        assert_eq!(
            report.outcome,
            harness_agent::Outcome::Unverified,
            "{report:?}"
        );
        assert!(report.reason.contains("big.cfg"), "{}", report.reason);
        assert!(report.reason.contains("exited 0"), "{}", report.reason);
        // What could be put back was: the small file a command made is gone.
        assert!(!dir.path().join("tiny.cfg").exists());
    }

    #[test]
    fn a_step_that_changes_a_file_is_a_checkpoint_of_the_session() {
        let dir = repository();
        let mut session = Session::begin(dir.path(), BeginOptions::default()).expect("begin");
        let call = Reply::call(
            "write_file",
            json!({"path": "main.txt", "content": "changed\n", "overwrite": true}),
        );
        let (_, events, _) = run_one_call(dir.path(), &mut session, call);
        let checkpoints: Vec<&Value> = events
            .iter()
            .filter(|e| e["event"] == "checkpoint")
            .collect();
        assert_eq!(checkpoints.len(), 1, "{events:?}");
        assert_eq!(checkpoints[0]["number"], 1, "{events:?}");
    }
}
