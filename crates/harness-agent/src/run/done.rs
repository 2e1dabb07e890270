//! The model says it is done: the verification command runs, and decides. A pass counts only
//! when what the check loads besides the code under test is unchanged and nothing it may
//! have run was left unsaved; a failure goes back to the model as a tool result, until the
//! attempt's checks are used up.

use std::time::{Duration, Instant};

use harness_schema::ToolName;
use harness_tools::ToolResult;

use super::written::CHANGED_NOTHING;
use super::{Run, count};
use crate::blocks;
use crate::checkpoint::PutBack;
use crate::event::{CheckReason, Event};
use crate::model::{CallOrigin, Message, Role, ToolCall};
use crate::outcome::Outcome;
use crate::prompt;
use crate::verify::{self, Verification};

/// How many times [`Budgets::quick_check`](crate::Budgets::quick_check) a check after an
/// edit may run before it is stopped: 30 s for the default 3 s.
const QUICK_CHECK_TIMES: u32 = 10;

/// The most characters of a check's output put on a step's result after an editing step
/// ([`Run::check_after_edit`]): about 500 tokens, the head and the tail of the output, where
/// test runners print what failed and their summary.
const AFTER_EDIT_OUTPUT: usize = 1_500;

impl Run<'_> {
    /// The model says it is done (or its own run of the check passed: `reason`): verify,
    /// and either end or send it back to work.
    pub(super) fn done(&mut self, reason: CheckReason) -> Option<(Outcome, String)> {
        let Some(verification) = self.setup.verification.clone() else {
            return Some((
                Outcome::Unverified,
                "the model said it was done; no verification command checked it".to_owned(),
            ));
        };
        let (number, result) = self.check(&verification, reason);
        // Each attempt has the budget of checks; a done on a standing failure is one.
        let attempt = self.dones_of_attempt();
        let passed = self.checks.verification_passed;
        let detail = result.summary().detail().to_string();
        if passed {
            return Some(self.vouched(format!(
                "`{}` exited 0 ({})",
                verification.command(),
                decided_by(reason, self.counts.step)
            )));
        }
        if attempt >= self.setup.budgets.max_verifications {
            return Some(self.out_of_checks(&verification, Some(&detail)));
        }
        // The check is shown as a call on the model's "done" message, so that its output
        // reaches the model as a tool result, data like every other.
        let call = ToolCall {
            id: format!("verification_{number}"),
            name: ToolName::RunCommand.as_str().to_owned(),
            arguments: verification.call_arguments(),
            origin: CallOrigin::Structured,
        };
        // After an answer's edit blocks or the model's own run of the check, the last message
        // is a tool result: the call then goes on an assistant message of its own.
        match self.messages.last_mut() {
            Some(done) if done.role == Role::Assistant => done.tool_calls.push(call.clone()),
            _ => self
                .messages
                .push(Message::assistant("", vec![call.clone()])),
        }
        let framed = prompt::tool_result(
            ToolName::RunCommand.as_str(),
            verification.command(),
            result.text(),
        );
        self.messages.push(Message::tool_result(&call, framed));
        // The check's output is news for the model, not a correction of its answer.
        let news = if self.checks.inputs_changed.is_empty() {
            let failed = prompt::verification_failed(
                verification.command(),
                attempt,
                self.setup.budgets.max_verifications,
                self.work.edited,
                self.setup.edit_format,
            );
            if self.checks.put_back.is_empty() {
                failed
            } else {
                let put_back = prompt::put_back_before_check(number, &self.checks.put_back);
                format!(
                    "{failed} {}{}",
                    put_back[..1].to_uppercase(),
                    &put_back[1..]
                )
            }
        } else {
            prompt::inputs_changed(
                verification.command(),
                &self.checks.inputs_changed,
                attempt,
                self.setup.budgets.max_verifications,
            )
        };
        self.tell(news);
        None
    }

    /// Whether the verification command is quick enough to run after every editing step:
    /// its first run took at most [`Budgets::quick_check`](crate::Budgets::quick_check).
    /// Before it has run at all, it is not known to be.
    /// A check after an edit that took longer turns them off for the rest of the run.
    pub(super) fn is_check_quick(&self) -> bool {
        !self.counts.check_slowed
            && self
                .counts
                .first_check
                .is_some_and(|took| self.is_within_quick_limit(took))
    }

    /// Whether a run of the check that took `took` was quick
    /// ([`Budgets::quick_check`](crate::Budgets::quick_check)).
    fn is_within_quick_limit(&self, took: Duration) -> bool {
        self.setup
            .budgets
            .quick_check
            .is_some_and(|limit| took <= limit)
    }

    /// A step edited files and the check is quick ([`Run::is_check_quick`]): it runs now,
    /// before the model is asked again. A pass ends the attempt as a pass on "done" does;
    /// a failure is not one of the attempt's checks (the model did not say it was done),
    /// and its output goes, cut short, on the step's last tool result, so that the model
    /// reads it with its edit, in the same turn.
    pub(super) fn check_after_edit(&mut self) -> Option<(Outcome, String)> {
        let verification = self.setup.verification.clone()?;
        self.checks.after_edits += 1;
        let (_, result) = self.check(&verification, CheckReason::AfterEdit);
        if self.checks.verification_passed {
            return Some(self.vouched(format!(
                "`{}` exited 0 ({})",
                verification.command(),
                decided_by(CheckReason::AfterEdit, self.counts.step)
            )));
        }
        let mut note = format!(
            "\n\nThe harness ran `{}` after this step ({}), and the task is not done yet:\n",
            verification.command(),
            result.summary().detail()
        );
        if self.checks.inputs_changed.is_empty() {
            note.push_str(&prompt::tool_result(
                ToolName::RunCommand.as_str(),
                verification.command(),
                &prompt::cut_middle(result.text(), AFTER_EDIT_OUTPUT),
            ));
        } else {
            note.push_str(&format!(
                "it exited 0, but what it loads besides the code under test changed since the \
                 run began: {}. Put those files back as they were before the run, and fix the \
                 code under test so that the tests pass as they are.",
                self.checks.inputs_changed.join("; ")
            ));
        }
        if let Some(last) = self
            .messages
            .iter_mut()
            .rev()
            .find(|message| message.role == Role::Tool)
        {
            last.content.push_str(&note);
        }
        None
    }

    /// The model says it is done while the check's last failure stands: nothing has changed
    /// since it failed, so it is not run again, and the model is told so. The answer still
    /// counts as one of the attempt's checks, so a run ends where it ended when every done
    /// ran the check. (Measured with Qwen2.5-Coder-1.5B: letting five such answers in a row
    /// go on instead of three gave the model no fix in 8 runs and cost time.)
    pub(super) fn done_while_failure_stands(&mut self) -> Option<(Outcome, String)> {
        let verification = self.setup.verification.clone()?;
        self.checks.unchecked_dones += 1;
        let dones = self.dones_of_attempt();
        if dones >= self.setup.budgets.max_verifications {
            return Some(self.out_of_checks(&verification, None));
        }
        let mut told = String::new();
        let repeated = std::mem::take(&mut self.steering.repeated);
        if !repeated.is_empty() && self.another_attempt_left() {
            return Some((Outcome::Stuck, CHANGED_NOTHING.to_owned()));
        }
        if !repeated.is_empty() {
            told = format!("{} ", blocks::unchanged(&repeated));
        }
        told.push_str(&prompt::failure_stands(
            verification.command(),
            dones,
            self.setup.budgets.max_verifications,
            self.work.edited,
            self.setup.edit_format,
        ));
        self.nudge(told);
        None
    }

    /// The checks of this attempt: the verification's runs after a done, and the dones
    /// answered on a standing failure without a run.
    fn dones_of_attempt(&self) -> u32 {
        self.counts.verifications - self.attempt.checks_before - self.checks.after_edits
            + self.checks.unchecked_dones
    }

    /// The end of an attempt whose checks are used up; `detail` is how the last run went,
    /// when the last check ran.
    fn out_of_checks(
        &self,
        verification: &Verification,
        detail: Option<&str>,
    ) -> (Outcome, String) {
        if let Some(end) = self.tests_changed_end(verification) {
            return end;
        }
        let dones = self.dones_of_attempt();
        let unchecked = self.checks.unchecked_dones;
        let last = detail.map_or(String::new(), |detail| format!(" ({detail} the last time)"));
        let reason = if unchecked == 0 {
            format!(
                "`{}` failed {}{last}",
                verification.command(),
                count(u64::from(dones), "time")
            )
        } else {
            format!(
                "`{}` failed{last}, and the model said it was done {}, {unchecked} \
                 of them with nothing changed since it failed",
                verification.command(),
                count(u64::from(dones), "time")
            )
        };
        (Outcome::VerificationFailed, reason)
    }

    /// The end of a run whose last check exited 0 but found what the verification loads
    /// besides the code under test changed: [`Outcome::TestsChanged`], naming what.
    fn tests_changed_end(&self, verification: &Verification) -> Option<(Outcome, String)> {
        (!self.checks.inputs_changed.is_empty()).then(|| {
            (
                Outcome::TestsChanged,
                format!(
                    "`{}` exited 0, but what it loads besides the code under test changed \
                     since the run began, so the pass does not show the code was fixed: {}",
                    verification.command(),
                    self.checks.inputs_changed.join("; ")
                ),
            )
        })
    }

    /// What the verification loads besides the code under test that changed since the run
    /// began, one line each; empty when nothing did, or no inputs were given, or the run
    /// keeps no record to compare with. A list that cannot be made is a finding: the pass
    /// cannot be shown to be worth anything.
    fn inputs_changed(&mut self) -> Vec<String> {
        let Some((inputs, tests_may_change)) = &self.setup.inputs else {
            return Vec::new();
        };
        let root = self
            .setup
            .toolbox
            .workspace()
            .root()
            .as_std_path()
            .to_owned();
        match self.checkpoints.changes() {
            Ok(Some(changes)) => inputs
                .judge(&root, &changes, *tests_may_change)
                .iter()
                .map(ToString::to_string)
                .collect(),
            Ok(None) => Vec::new(),
            Err(error) => vec![format!(
                "the run's changes could not be listed to see whether the tests changed \
                 ({error})"
            )],
        }
    }

    /// Runs the verification command as check number `attempt`, reporting and recording
    /// it, and takes a checkpoint. Returns the attempt and the command's result; whether it
    /// passed is in `verification_passed`.
    fn check(&mut self, verification: &Verification, reason: CheckReason) -> (u32, ToolResult) {
        self.counts.verifications += 1;
        let attempt = self.counts.verifications;
        self.log.event(&Event::VerificationStarted {
            attempt,
            command: verification.command(),
            reason,
        });
        self.checks.unvouched = self.reset_before_check(attempt);
        let began = Instant::now();
        let limit = match (reason, self.setup.budgets.quick_check) {
            // A check after an edit that outlasts ten times the quick limit is not quick any
            // more: the edit made the tests hang, or their run slow. It is stopped there, and
            // the check waits for "done" from then on, with the run's whole time.
            (CheckReason::AfterEdit, Some(quick)) => self
                .time_left()
                .min(quick.saturating_mul(QUICK_CHECK_TIMES)),
            _ => self.time_left(),
        };
        let result = verification.run(self.setup.toolbox, limit);
        let took = began.elapsed();
        self.counts.first_check.get_or_insert(took);
        if reason == CheckReason::AfterEdit && !self.is_within_quick_limit(took) {
            self.counts.check_slowed = true;
        }
        self.keep_after_check(attempt);
        let exited_0 = verify::passed(&result);
        // Only a pass is judged: a failure is a failure whatever changed.
        let changed = if exited_0 {
            self.inputs_changed()
        } else {
            Vec::new()
        };
        let passed = exited_0 && changed.is_empty();
        self.checks.verification_passed = passed;
        self.checks.failure_stands = !passed;
        let detail = result.summary().detail().to_string();
        self.log.event(&Event::VerificationFinished {
            attempt,
            passed,
            detail: detail.clone(),
            output: result.text(),
            changed: &changed,
            verification,
            reason,
        });
        self.checks.inputs_changed = changed;
        self.checkpoint(&format!("step {}: verification", self.counts.step));
        (attempt, result)
    }

    /// A run that ended without the model saying it was done (stuck in a loop, out of steps
    /// or tokens) may still have left the task done: small models fix the code and then
    /// repeat themselves. The verification decides, once, on the files as they were left;
    /// a run stopped on request or out of time is not checked.
    pub(super) fn check_what_was_left(
        &mut self,
        outcome: Outcome,
        reason: String,
    ) -> (Outcome, String) {
        let ended_on_its_own = matches!(
            outcome,
            Outcome::Stuck | Outcome::StepLimit | Outcome::TokenLimit
        );
        let Some(verification) = self.setup.verification.clone() else {
            return (outcome, reason);
        };
        if !ended_on_its_own || !self.work.edited || self.checks.verification_passed {
            return (outcome, reason);
        }
        self.check(&verification, CheckReason::RunEnded);
        if let Some(end) = self.tests_changed_end(&verification) {
            return end;
        }
        if self.checks.verification_passed {
            self.vouched(format!(
                "`{}` exited 0 on the files as the model left them, after the run ended: \
                 {reason}",
                verification.command()
            ))
        } else {
            (outcome, reason)
        }
    }

    /// The outcome of a check that passed (`reason` says how): verified, unless commands
    /// left files where git does not look that could not be put back before it ran. Then
    /// the pass does not show the code in the diff passes, and the run is unverified, with
    /// those files named.
    fn vouched(&self, reason: String) -> (Outcome, String) {
        if self.checks.unvouched.is_empty() {
            return (Outcome::Verified, reason);
        }
        const NAMED: usize = 5;
        let count = self.checks.unvouched.len();
        let mut named = self.checks.unvouched[..count.min(NAMED)].join(", ");
        if count > NAMED {
            named.push_str(&format!(" and {} more", count - NAMED));
        }
        (
            Outcome::Unverified,
            format!(
                "{reason}, but not on the code in the diff alone: commands changed files git \
                 ignores that could not be put back before the check ran (too large to save \
                 at the start), and the check may have run them: {named}"
            ),
        )
    }

    /// Puts back what commands wrote where git does not look before check `attempt` (or
    /// the head start's run, 0), returning what could not be; a failure is warned of and
    /// stands for itself in the list.
    pub(super) fn reset_before_check(&mut self, attempt: u32) -> Vec<String> {
        match self.checkpoints.before_verification() {
            Ok(PutBack { put_back, left }) => {
                if attempt > 0 && !put_back.is_empty() {
                    self.log
                        .warnings
                        .push(prompt::put_back_before_check(attempt, &put_back));
                }
                self.checks.put_back = put_back;
                left
            }
            Err(error) => {
                self.warn(format!(
                    "putting back the ignored files commands wrote before check {attempt} \
                     failed: {error}"
                ));
                vec![format!(
                    "(the ignored files could not be put back: {error})"
                )]
            }
        }
    }

    /// Keeps what check `attempt` wrote where git does not look for the next check.
    pub(super) fn keep_after_check(&mut self, attempt: u32) {
        if let Err(error) = self.checkpoints.after_verification() {
            self.warn(format!(
                "keeping the ignored files check {attempt} wrote failed: {error}"
            ));
        }
    }
}

/// Which check decided a run that passed, in words for its reason: "the check on done",
/// "the check after step 3".
fn decided_by(reason: CheckReason, step: u32) -> String {
    match reason {
        CheckReason::AfterEdit => format!("the check after step {step}"),
        CheckReason::ModelRanIt => "the check after the model's own run of it passed".to_owned(),
        _ => "the check on done".to_owned(),
    }
}
