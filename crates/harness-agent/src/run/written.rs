//! Edits an answer writes instead of calling a tool: its blocks ([`blocks`]), made as the
//! calls they stand for, and a call it spells out as JSON that the client could not read.

use super::{Blocks, Run, TurnEnd, count};
use crate::blocks;
use crate::event::CheckReason;
use crate::model::{CallOrigin, Role, ToolCall};
use crate::outcome::Outcome;
use crate::prompt;

/// Why an attempt ended whose last answer wrote the code as the files already hold it
/// ([`blocks::Edits::changes_nothing`]), when another attempt is left. Such an answer is the
/// fix the model believes it made; told it changes nothing, a small model says so again.
/// (Measured with Qwen2.5-Coder-1.5B over 56 suite runs, 2026-12-04: of the 21 attempts told
/// so, none was verified.)
pub(super) const CHANGED_NOTHING: &str =
    "the model's answer wrote the code as the files already hold it";

/// Why an attempt ended whose last answer showed a part of a file that has no one place in
/// it, and so changed nothing ([`blocks::Edits::unplaced`]), when another attempt is left.
/// (9 of the 21 attempts measured for [`CHANGED_NOTHING`] were told this.)
const UNPLACED: &str =
    "the model's answer showed part of a file with no one place in it, and changed nothing";

impl Run<'_> {
    /// The calls an answer without a tool call writes out: the edits of its blocks, or a
    /// call spelled out as JSON that did not run. Where tools are offered, a spelled-out
    /// call comes first (its JSON may hold code that would read as a block); where none
    /// are, the blocks are what the model was asked for. `None` if the answer holds neither.
    pub(super) fn written_calls(&mut self, text: &str) -> Option<TurnEnd> {
        if self.setup.edit_format.offers_tools() {
            self.unreadable_call(text)
                .or_else(|| self.edit_blocks(text, Blocks::Alone))
        } else {
            self.edit_blocks(text, Blocks::Alone)
                .or_else(|| self.unreadable_call(text))
        }
    }

    /// An answer that spells out a call the client could not read (small models write JSON
    /// with unescaped quotes) is not "done": the model is told its call did not run, and it
    /// counts as a failed call; in an edit format that offers no tools, it is told that
    /// none can be called, and how to write the change instead. `None` if the text names no
    /// call; otherwise whether the run goes on (the model was told) or ends (one failed call
    /// too many).
    fn unreadable_call(&mut self, text: &str) -> Option<TurnEnd> {
        let tool = self
            .setup
            .toolbox
            .specs()
            .iter()
            .map(|spec| spec.name())
            .find(|name| prompt::names_a_call(text, name))?
            .to_owned();
        self.steering.failed_in_row += 1;
        if self.steering.failed_in_row >= self.setup.budgets.max_failed_calls {
            return Some(TurnEnd::Ended(
                Outcome::Stuck,
                format!(
                    "{} in a row failed (the last, a call of {tool}, could not be read)",
                    count(u64::from(self.steering.failed_in_row), "tool call")
                ),
            ));
        }
        self.nudge(if self.setup.edit_format.offers_tools() {
            prompt::unreadable_call(&tool)
        } else {
            prompt::no_tools(&tool, self.setup.edit_format)
        });
        Some(TurnEnd::Continue)
    }

    /// An answer that holds edits as blocks ([`blocks`]): they are made as the calls they
    /// stand for, and when all of them worked the answer counts as the model saying it is
    /// done, so the verification runs at once, as after a call-less answer. `None` when
    /// the answer holds none, or, beside its failed calls, none that can be made: those
    /// calls' errors are what the model reads.
    pub(super) fn edit_blocks(&mut self, text: &str, blocks: Blocks) -> Option<TurnEnd> {
        let workspace = self.setup.toolbox.workspace();
        let mut found = blocks::edits(
            text,
            self.setup.edit_format,
            &blocks::Files::new(workspace.root().as_str(), |path| {
                workspace.read_to_string(path).ok()
            }),
            &self.work.read,
        );
        self.steering.repeated = std::mem::take(&mut found.repeated);
        if found.calls.is_empty() {
            return self.no_block_made(&found, blocks);
        }
        let calls: Vec<ToolCall> = found
            .calls
            .into_iter()
            .enumerate()
            .map(|(position, (tool, arguments))| ToolCall {
                id: format!("block_{}_{position}", self.counts.step),
                name: tool.as_str().to_owned(),
                arguments,
                origin: CallOrigin::EditBlock,
            })
            .collect();
        // The calls belong to the answer they were written in, so that their results
        // follow it the way every tool result follows its call.
        if let Some(answer) = self
            .messages
            .iter_mut()
            .rev()
            .find(|message| message.role == Role::Assistant)
        {
            answer.tool_calls.extend(calls.iter().cloned());
        }
        if let TurnEnd::Ended(outcome, reason) = self.run_calls(&calls) {
            return Some(TurnEnd::Ended(outcome, reason));
        }
        let applied = self.work.changed_in_turn;
        // Lines a block showed only to demonstrate the change were left out of it: the
        // model is told which, so it does not take the change for something else.
        for note in std::mem::take(&mut found.notes) {
            self.tell(note);
        }
        if !found.problems.is_empty() {
            self.nudge(found.problems.join("\n"));
        }
        // A block that could not be applied, or an edit that failed (a refused path, a
        // protected file), is read by the model first; unless another block of the answer
        // changed a file: the check then tells whether that change was the fix. (Measured
        // with Qwen2.5-Coder-1.5B: answers that fix the code and also rewrite the test,
        // which is refused, were told of the refusal and gave the same answer again, turn
        // after turn, without the fix ever being checked.)
        if !applied && (!found.problems.is_empty() || self.steering.failed_in_row > 0) {
            return Some(TurnEnd::Continue);
        }
        Some(TurnEnd::from(self.done(CheckReason::Done)))
    }

    /// An answer whose blocks (`found`) made no call. `None` when no block was a problem, or
    /// beside failed calls (their errors are what the model reads); otherwise the end of
    /// the attempt when its code is what the files already hold and another attempt is
    /// left, or one failed call, the model told what went wrong.
    fn no_block_made(&mut self, found: &blocks::Edits, blocks: Blocks) -> Option<TurnEnd> {
        if found.problems.is_empty() || blocks == Blocks::BesideFailedCalls {
            return None;
        }
        if found.changes_nothing && self.another_attempt_left() {
            let why = if found.unplaced {
                UNPLACED
            } else {
                CHANGED_NOTHING
            };
            return Some(TurnEnd::Ended(Outcome::Stuck, why.to_owned()));
        }
        self.steering.failed_in_row += 1;
        if self.steering.failed_in_row >= self.setup.budgets.max_failed_calls {
            return Some(TurnEnd::Ended(
                Outcome::Stuck,
                format!(
                    "{} in a row failed (the last, an edit written into the answer, could not be applied)",
                    count(u64::from(self.steering.failed_in_row), "tool call")
                ),
            ));
        }
        self.nudge(found.problems.join("\n"));
        Some(TurnEnd::Continue)
    }
}
