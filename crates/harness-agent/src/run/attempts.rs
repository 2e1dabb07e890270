//! Attempts: after an attempt that ended unverified, whether another begins, from the files
//! as they were before the run and a fresh conversation.

use super::{Attempt, Checks, Run, Steering, Work};
use crate::event::Event;
use crate::outcome::Outcome;

impl Run<'_> {
    /// After an attempt that ended `outcome`, whether another begins: when attempts are
    /// left and another try could end otherwise (the check failed, the model got stuck or
    /// ran out of steps; not a stop, the time or tokens running out, or a run with nothing
    /// to check it), the files are brought back to the state before the run and the
    /// conversation starts afresh. If they cannot be brought back, no attempt follows: one
    /// built on the failed attempt's changes would not be a new attempt.
    pub(super) fn try_again(&mut self, outcome: Outcome, reason: &str) -> bool {
        let another_could_differ = matches!(
            outcome,
            Outcome::VerificationFailed
                | Outcome::TestsChanged
                | Outcome::Stuck
                | Outcome::StepLimit
        );
        if !another_could_differ
            || self.attempt.number >= self.setup.budgets.attempts
            || self
                .budget_exhausted()
                .is_some_and(|(end, _)| end != Outcome::StepLimit)
        {
            return false;
        }
        let reverted = match self.checkpoints.revert_to_start() {
            Ok(reverted) => reverted,
            Err(error) => {
                self.warn(format!(
                    "no other attempt was made: the files could not be brought back to the \
                     state before the run ({error})"
                ));
                return false;
            }
        };
        self.attempt = Attempt {
            number: self.attempt.number + 1,
            steps_before: self.counts.step,
            checks_before: self.counts.verifications,
            after: Some(outcome),
        };
        self.log.event(&Event::NextAttempt {
            attempt: self.attempt.number,
            of: self.setup.budgets.attempts,
            previous: outcome,
            reason,
            reverted,
        });
        self.messages.clear();
        self.steering = Steering::default();
        self.checks = Checks::default();
        self.work = Work::default();
        self.checkpoint(&format!(
            "attempt {}: the files as they were before the run",
            self.attempt.number
        ));
        true
    }

    /// Whether an attempt after this one may begin, if this one ends unverified.
    pub(super) fn another_attempt_left(&self) -> bool {
        self.attempt.number < self.setup.budgets.attempts
    }
}
