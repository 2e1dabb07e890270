//! Attempts: after an attempt that ended unverified, whether another begins, from the files
//! as they were before the run and a fresh conversation, while the run's time and tokens
//! last; and what the new attempt is told of the ones before it.

use super::{Attempt, Checks, Run, Steering, Work, count};
use crate::event::Event;
use crate::outcome::Outcome;

impl Run<'_> {
    /// After an attempt that ended `outcome`, whether another begins: when attempts are
    /// left and another try could end otherwise (the check failed, the model got stuck or
    /// ran out of steps; not a stop, the time or tokens running out, or a run with nothing
    /// to check it), the files are brought back to the state before the run and the
    /// conversation starts afresh. If they cannot be brought back, no attempt follows: one
    /// built on the failed attempt's changes would not be a new attempt.
    pub(super) fn try_again(&mut self, outcome: Outcome, reason: &mut String) -> bool {
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
        if let Some(short) = self.budget_short_of_an_attempt() {
            reason.push_str(&format!("; no other attempt was made: {short}"));
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

    /// Whether an attempt after this one may begin, if this one ends unverified: the cap
    /// ([`Budgets::attempts`](crate::Budgets::attempts)) is not reached, and the time and
    /// tokens left would last through one. Steering ends an attempt early only then: on
    /// what is in effect the last attempt, it asks again instead.
    pub(super) fn another_attempt_left(&self) -> bool {
        self.attempt.number < self.setup.budgets.attempts
            && self.budget_short_of_an_attempt().is_none()
    }

    /// Why the run's budgets would not last through another attempt, if they would not:
    /// the time left, or the tokens, are less than the attempts so far took on average. An
    /// attempt cut off by the time limit ends unchecked with its changes half made, which
    /// is worse than the failure before it.
    fn budget_short_of_an_attempt(&self) -> Option<String> {
        let made = self.attempt.number.max(1);
        let per_attempt = self.started.elapsed() / made;
        let left = self.time_left();
        if left < per_attempt {
            return Some(format!(
                "the {:.1} s left are less than an attempt took on average ({:.1} s)",
                left.as_secs_f64(),
                per_attempt.as_secs_f64()
            ));
        }
        let used = self.counts.prompt_tokens + self.counts.completion_tokens;
        let per_attempt = used / u64::from(made);
        match self.setup.budgets.max_tokens {
            Some(max) if max.saturating_sub(used) < per_attempt => Some(format!(
                "the {} left are less than an attempt used on average ({per_attempt})",
                count(max.saturating_sub(used), "token")
            )),
            _ => None,
        }
    }

    /// How attempt `n` is introduced, after one that ended `previous`; "of" the cap when
    /// there is one. Only the harness's own words: the files are as they were at the start,
    /// so what the model was shown of them holds. (Measured with Qwen2.5-Coder-1.5B on the
    /// task suite: a note that also named the files the attempt changed and showed the
    /// output of its failed check, or said it changed no file, was followed by a second
    /// attempt that changed nothing in 11 of 13 tasks, against 18 of 37 in three runs with
    /// this note; `5be1069`, reverted.)
    pub(super) fn next_attempt_note(&self, previous: Outcome) -> String {
        let how = match previous {
            Outcome::VerificationFailed => {
                "the verification command still failed at its last check"
            }
            Outcome::StepLimit => "it ran out of steps",
            _ => "it got stuck, repeating a call or making calls that failed",
        };
        let of = match self.setup.budgets.attempts {
            u32::MAX => String::new(),
            cap => format!(" of {cap}"),
        };
        format!(
            "This is attempt {}{of}. The previous attempt did not succeed ({how}); its \
             changes were undone, so every file is as it was at the start. Take a different \
             approach this time.",
            self.attempt.number
        )
    }
}
