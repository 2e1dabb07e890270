//! The opening of an attempt: the system prompt, the task and the head start (the harness's
//! own first calls, so the model starts with the code and the failure in front of it), and
//! how a later attempt opens with the first one's messages word for word.

use harness_schema::ToolName;
use harness_tools::{Definition, SymbolIndex, SymbolLimits, ToolResult};
use serde_json::{Value, json};

use super::{Opening, Run};
use crate::blocks;
use crate::context;
use crate::head_start;
use crate::model::{CallOrigin, Message, ToolCall};
use crate::outcome::Outcome;
use crate::prompt;
use crate::record::Record;
use crate::verify;

/// Characters a line of a definition is reckoned at, numbered, where its file cannot be
/// read to count them: what the head start keeps for the definitions it will show.
const ESTIMATED_LINE_CHARS: usize = 64;

/// Characters kept for the note after a definition's lines.
const NOTE_CHARS: usize = 240;

/// Below this many characters left, no definition is shown: a few lines of one would
/// mislead more than they show.
const MIN_DEFINITION_CHARS: usize = 400;

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
        self.head_start(&task);
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
    /// project, every file); then, in a large project, a map of where its source files
    /// define their code, and the definitions the task and the output name, each with its
    /// line numbers ([`head_start::definitions_to_show`]). Each file and definition is
    /// presented as a turn of its own in which the assistant made the call, so the results
    /// arrive the way every tool result does (as data, in tool messages), and a small model
    /// sees, turn after turn, that working means calling tools. (Measured with
    /// Qwen2.5-Coder-1.5B: all the calls in one turn, followed by the harness's
    /// instruction, made it repeat that instruction back as its answer.)
    fn head_start(&mut self, task: &str) {
        let mut budget = self.head_start_budget();
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
        let toolbox = self.setup.toolbox;
        let is_test = |path: &str| toolbox.is_protected_test_file(path);
        let paths = head_start::files_to_read(toolbox, listing, output, is_test);
        // Built once per run: later attempts open with this attempt's head start.
        let index = toolbox.symbols(SymbolLimits::default());
        let root = toolbox.workspace().root().to_string();
        let definitions: Vec<Definition> =
            head_start::definitions_to_show(&index, (task, output, &root), &paths, is_test)
                .into_iter()
                .cloned()
                .collect();
        // The listing shows two levels: a project whose code is deeper (`src/main/java/…`)
        // lists few files and is not small for that.
        let small = head_start::is_small_project(listing)
            && index.files().len() <= head_start::SMALL_PROJECT_FILES;
        if !small {
            // A large project's head start holds a map and definitions besides the listing
            // and the failure: up to twice the configured budget, never more than
            // [`Run::head_start_room`] allows (the listing and the output keep their shares
            // of the configured one).
            let configured = self.setup.budgets.head_start_chars;
            let larger = configured.saturating_mul(2).min(self.head_start_room());
            budget += larger.saturating_sub(configured.min(self.head_start_room()));
        }
        let mut map = if small || self.setup.stop.is_requested() {
            None
        } else {
            head_start::map(&index, budget / 4)
        };
        if let Some(map) = &map {
            budget = budget.saturating_sub(map.chars().count());
            // Recorded here, between the calls it comes between, so the transcript shows
            // what the model read in the order it reads it.
            self.log.record(Record::Message(Message::user(map.clone())));
        }
        let listed = done.len();
        // The definitions are what a large project's head start is for: the files the
        // output names (its tests) leave them at least half of what is left.
        let wanted: usize = definitions.iter().map(|d| self.definition_chars(d)).sum();
        let reserve = wanted.min(budget / 2);
        let mut left = budget - reserve;
        for path in paths {
            if self.setup.stop.is_requested() || left == 0 {
                break;
            }
            let (call, result) =
                self.head_start_call(done.len(), ToolName::ReadFile, json!({"path": path}));
            let text = prompt::cut_middle(&self.as_shown(result.text()), left);
            left = left.saturating_sub(text.chars().count());
            done.push((
                call,
                prompt::tool_result(ToolName::ReadFile.as_str(), &path, &text),
            ));
        }
        left += reserve;
        // Each definition is given its room best first, so a cut falls on the least likely;
        // they are shown tests first and the best last, as files are: what the model reads
        // last is what its answer most likely changes.
        let mut unallotted = left;
        let allotted: Vec<usize> = definitions
            .iter()
            .map(|d| {
                let share = self.definition_chars(d).min(unallotted);
                unallotted -= share;
                share
            })
            .collect();
        let (tests, code): (Vec<usize>, Vec<usize>) =
            (0..definitions.len()).partition(|&at| is_test(&definitions[at].path));
        // What one definition leaves of its room goes to the next one shown, and what
        // none was given to the last, the best.
        let order: Vec<usize> = tests.into_iter().chain(code.into_iter().rev()).collect();
        let mut spare = 0;
        for (position, &at) in order.iter().enumerate() {
            let mut room = allotted[at] + spare;
            if position + 1 == order.len() {
                room += unallotted;
            }
            if self.setup.stop.is_requested() {
                break;
            }
            if room >= MIN_DEFINITION_CHARS
                && let Some(shown) =
                    self.show_definition(done.len(), &definitions[at], &index, &mut room)
            {
                done.push(shown);
            }
            spare = room;
        }
        for (position, (call, framed)) in done.into_iter().enumerate() {
            if position == listed
                && let Some(map) = map.take()
            {
                self.messages.push(Message::user(map));
            }
            self.messages
                .push(Message::assistant("", vec![call.clone()]));
            self.messages.push(Message::tool_result(&call, framed));
        }
        if let Some(map) = map {
            self.messages.push(Message::user(map));
        }
    }

    /// The characters the head start may show: [`Budgets::head_start_chars`], and at most
    /// half of what the model's context window leaves after the conversation so far (the
    /// system prompt, the task and the tools) and the room kept for an answer, so that the
    /// turns after it fit too.
    ///
    /// [`Budgets::head_start_chars`]: crate::Budgets::head_start_chars
    fn head_start_budget(&self) -> usize {
        self.setup
            .budgets
            .head_start_chars
            .min(self.head_start_room())
    }

    /// Half of what the model's context window leaves after the conversation so far and
    /// the room kept for an answer, in characters; unbounded when the window is unknown.
    fn head_start_room(&self) -> usize {
        let Ok(window) = self.setup.chat.context_window() else {
            return usize::MAX;
        };
        let limit = window.saturating_sub(self.setup.budgets.answer_reserve_tokens) as usize;
        let used = context::estimate_tokens(&self.messages, self.tools_chars);
        limit.saturating_sub(used) * context::CHARS_PER_TOKEN / 2
    }

    /// How many characters showing `definition` takes: its lines (at most
    /// [`head_start::MAX_DEFINITION_LINES`]) numbered as `read_file` numbers them, and the
    /// note after them. The file is read through the workspace, as the tool reads it; one
    /// that cannot be read is reckoned at [`ESTIMATED_LINE_CHARS`] a line.
    fn definition_chars(&self, definition: &Definition) -> usize {
        let lines =
            (definition.end_line - definition.line + 1).min(head_start::MAX_DEFINITION_LINES);
        let Ok(text) = self
            .setup
            .toolbox
            .workspace()
            .read_to_string(&definition.path)
        else {
            return lines * ESTIMATED_LINE_CHARS + NOTE_CHARS;
        };
        // `read_file` puts a six-column number and a tab before each line.
        let numbered: usize = text
            .lines()
            .skip(definition.line - 1)
            .take(lines)
            .map(|line| line.chars().count() + 8)
            .sum();
        numbered + NOTE_CHARS
    }

    /// Reads the lines of `definition` (at most [`head_start::MAX_DEFINITION_LINES`],
    /// whole lines within `left` characters, which it takes from) as call number
    /// `position`, with a note saying which lines of how many they are and, in a file too
    /// long to rewrite, how to change it. `None` when the read failed.
    fn show_definition(
        &mut self,
        position: usize,
        definition: &Definition,
        index: &SymbolIndex,
        left: &mut usize,
    ) -> Option<(ToolCall, String)> {
        let first = definition.line;
        let last = definition
            .end_line
            .min(first + head_start::MAX_DEFINITION_LINES - 1);
        let arguments = json!({"path": definition.path, "start_line": first, "end_line": last});
        let (call, result) = self.head_start_call(position, ToolName::ReadFile, arguments);
        if result.is_error() {
            return None;
        }
        // The view's own note on which lines it shows is left out: the note below says it,
        // and how to change the file.
        let view = result.text();
        let view = match view.trim_end().rsplit_once('\n') {
            Some((lines, note)) if note.starts_with("[lines ") && note.ends_with(']') => lines,
            _ => view,
        };
        let shown = self.as_shown(view);
        let mut kept = String::new();
        let mut lines = 0;
        for line in shown.lines() {
            if kept.len() + line.len() + 1 > left.saturating_sub(NOTE_CHARS) {
                break;
            }
            kept.push_str(line);
            kept.push('\n');
            lines += 1;
        }
        if lines == 0 {
            return None;
        }
        let total = index.lines_of(&definition.path).unwrap_or(last);
        let note = head_start::part_note(
            (&definition.path, first, first + lines - 1, total),
            self.setup.toolbox.limits().rewrite_lines,
            self.setup.edit_format,
        );
        kept.push_str(&note);
        *left = left.saturating_sub(kept.chars().count());
        let target = format!("{} lines {first}-{}", definition.path, first + lines - 1);
        Some((
            call,
            prompt::tool_result(ToolName::ReadFile.as_str(), &target, &kept),
        ))
    }

    /// A `read_file` result as the head start shows it: as it is to a model that calls
    /// tools; without line numbers to one that writes files back (measured with
    /// Qwen2.5-Coder-1.5B, shown numbered lines, it wrote the file back unchanged, numbers
    /// and all), which cannot read on by line anyway.
    fn as_shown(&self, text: &str) -> String {
        if self.setup.edit_format.offers_tools() {
            return text.to_owned();
        }
        let lines: Vec<&str> = text.lines().collect();
        blocks::without_line_numbers(&lines)
            .map_or_else(|| text.to_owned(), |lines| lines.join("\n") + "\n")
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
