//! The opening of an attempt: the system prompt, the task and the head start (the harness's
//! own first calls, so the model starts with the code and the failure in front of it), and
//! how a later attempt opens with the first one's messages word for word.

use harness_schema::ToolName;
use harness_tools::ToolResult;
use serde_json::{Value, json};

use super::{Opening, Run};
use crate::blocks;
use crate::head_start;
use crate::model::{CallOrigin, Message, ToolCall};
use crate::outcome::Outcome;
use crate::prompt;
use crate::verify;

impl Run<'_> {
    /// Opens an attempt from nothing: the system prompt, the task and, unless it is turned
    /// off, the head start, which is kept as the [`Opening`] of later attempts. `previous`
    /// is how the attempt before ended, when one did and there is no opening to reuse: the
    /// task then says so.
    pub(super) fn open(&mut self, task: &str, previous: Option<Outcome>) {
        let workspace = self.setup.toolbox.workspace().root().to_string();
        let tool_names: Vec<&str> = self
            .setup
            .toolbox
            .specs()
            .iter()
            .map(|s| s.name())
            .collect();
        let head_start = self.setup.budgets.head_start_chars > 0;
        self.push(Message::system(prompt::system_prompt(
            &tool_names,
            self.setup.verification.is_some(),
            self.setup.edit_format,
        )));
        // A follow-up's earlier conversation, unrecorded: it is the earlier runs' record.
        self.messages.extend(self.setup.earlier.iter().cloned());
        let task = match previous {
            None => task.to_owned(),
            Some(previous) => format!("{task}\n\n{}", self.next_attempt_note(previous)),
        };
        self.push(Message::user(prompt::task_message(
            &task,
            &workspace,
            self.setup.verification.as_ref(),
            head_start,
            self.setup.edit_format,
        )));
        if !head_start {
            return;
        }
        // The head start is step 0: its calls are the harness's own.
        let steps = std::mem::replace(&mut self.counts.step, 0);
        self.head_start();
        self.counts.step = steps;
        self.opening = Some(Opening {
            messages: self.messages.clone(),
            read: self.work.read.clone(),
            failure_stands: self.checks.failure_stands,
        });
        self.push(Message::user(
            prompt::after_head_start(self.setup.edit_format).to_owned(),
        ));
    }

    /// Opens a later attempt the way the first one opened ([`Opening`]), followed by how
    /// the attempt before it ended and what to do now.
    pub(super) fn reopen(&mut self, opening: Opening, previous: Outcome) {
        self.messages = opening.messages;
        self.work.read = opening.read;
        self.checks.failure_stands = opening.failure_stands;
        let note = self.next_attempt_note(previous);
        self.push(Message::user(format!(
            "{note}\n\n{}",
            prompt::after_head_start(self.setup.edit_format)
        )));
    }

    /// Gives the model what a person looks at first: the listing of the workspace, with a
    /// verification command its output now, and the files that output names (in a small
    /// project, every file). Each is presented as a turn of its own in which the assistant
    /// made the call, so the results arrive the way every tool result does (as data, in tool
    /// messages), and a small model sees, turn after turn, that working means calling tools.
    /// (Measured with Qwen2.5-Coder-1.5B: all the calls in one turn, followed by the
    /// harness's instruction, made it repeat that instruction back as its answer.)
    fn head_start(&mut self) {
        let mut budget = self.setup.budgets.head_start_chars;
        let mut done: Vec<(ToolCall, String)> = Vec::new();
        let mut first = vec![(ToolName::ListDir, json!({}))];
        if let Some(verification) = &self.setup.verification {
            first.push((ToolName::RunCommand, verification.call_arguments()));
        }
        // The listing and the verification output share the budget at most half each.
        let share = budget / (2 * first.len());
        let mut texts = Vec::new();
        for (name, arguments) in first {
            if self.setup.stop.is_requested() {
                break;
            }
            if name == ToolName::RunCommand {
                // Nothing ran yet to put back; what it writes is kept for the first check.
                self.reset_before_check(0);
            }
            let (call, result) = self.head_start_call(done.len(), name, arguments);
            if name == ToolName::RunCommand {
                self.keep_after_check(0);
                self.checks.failure_stands = !verify::passed(&result);
            }
            let text = prompt::cut_middle(result.text(), share);
            budget = budget.saturating_sub(text.chars().count());
            texts.push(result.text().to_owned());
            done.push((
                call,
                prompt::tool_result(name.as_str(), result.summary().target(), &text),
            ));
        }
        let listing = texts.first().map_or("", String::as_str);
        let output = texts.get(1).map_or("", String::as_str);
        let paths = head_start::files_to_read(self.setup.toolbox, listing, output, |path| {
            self.setup.toolbox.is_protected_test_file(path)
        });
        for path in paths {
            if self.setup.stop.is_requested() || budget == 0 {
                break;
            }
            let (call, result) =
                self.head_start_call(done.len(), ToolName::ReadFile, json!({"path": path}));
            // A model that writes whole files back is shown them as they are: measured with
            // Qwen2.5-Coder-1.5B, shown numbered lines, it wrote the file back unchanged,
            // numbers and all.
            let shown = if self.setup.edit_format.offers_tools() {
                None
            } else {
                let lines: Vec<&str> = result.text().lines().collect();
                blocks::without_line_numbers(&lines).map(|lines| lines.join("\n") + "\n")
            };
            let text = prompt::cut_middle(shown.as_deref().unwrap_or(result.text()), budget);
            budget = budget.saturating_sub(text.chars().count());
            done.push((
                call,
                prompt::tool_result(ToolName::ReadFile.as_str(), &path, &text),
            ));
        }
        for (call, framed) in done {
            self.messages
                .push(Message::assistant("", vec![call.clone()]));
            self.messages.push(Message::tool_result(&call, framed));
        }
    }

    /// Runs one call of the head start, as call number `position`.
    fn head_start_call(
        &mut self,
        position: usize,
        tool: ToolName,
        arguments: Value,
    ) -> (ToolCall, ToolResult) {
        let call = ToolCall {
            id: format!("head_start_{position}"),
            name: tool.as_str().to_owned(),
            arguments,
            origin: CallOrigin::Structured,
        };
        let result = self.call_tool(&call);
        (call, result)
    }
}
