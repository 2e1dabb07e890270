//! Keeping the conversation inside the model's context window.
//!
//! A server that is sent more than its window either refuses or, like Ollama, silently drops
//! the start of the prompt: the system prompt and the task go first. So before each request
//! the loop estimates the conversation's size and, when it does not fit, replaces the oldest
//! tool results, and then older answers, by a short note that keeps their first and last
//! lines.

use crate::model::{Message, Role};

/// Characters per token assumed when estimating. Code and JSON run at 3 to 4 characters per
/// token in the tokenizers of current coding models; the low end keeps the estimate on the
/// safe side.
pub(crate) const CHARS_PER_TOKEN: usize = 3;

/// Tokens a chat template adds around each message (role markers, separators).
const TOKENS_PER_MESSAGE: usize = 8;

/// How many of the newest turns (an assistant message and what follows it) are never elided.
const KEPT_TURNS: usize = 2;

/// Lines kept from the start and from the end of an elided result.
const KEPT_LINES: usize = 4;

/// Characters kept of each kept line.
const KEPT_LINE_CHARS: usize = 160;

/// How an elided result begins, so that it is never elided twice.
const ELIDED_MARK: &str = "[elided to fit the context window:";

/// The estimated size of a request, in tokens.
pub(crate) fn estimate_tokens(messages: &[Message], tools_chars: usize) -> usize {
    let chars: usize = messages
        .iter()
        .map(|message| {
            let calls: usize = message
                .tool_calls
                .iter()
                .map(|call| call.name.len() + call.arguments.to_string().len())
                .sum();
            message.content.len() + calls
        })
        .sum();
    (chars + tools_chars).div_ceil(CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * messages.len()
}

/// Elides the oldest messages of `messages` until the request fits in `limit` tokens, and
/// returns how many it elided: tool results first, oldest first, then, if that is not
/// enough, the text of older answers and of the harness's own messages (the tool calls of an
/// answer stay, since their results refer to them).
///
/// Never touched: the first `kept_head` messages (the system prompt and the task) and the last
/// [`KEPT_TURNS`] turns. If the conversation still does not fit, it is left as small as these
/// rules allow.
pub(crate) fn fit(
    messages: &mut [Message],
    kept_head: usize,
    tools_chars: usize,
    limit: usize,
) -> usize {
    let kept_tail = start_of_kept_turns(messages).max(kept_head);
    let mut elided = 0;
    // Tool results carry the bulk and are the easiest to fetch again: they go first.
    for results_only in [true, false] {
        for index in kept_head..kept_tail {
            if estimate_tokens(messages, tools_chars) <= limit {
                return elided;
            }
            let message = &mut messages[index];
            let is_result = message.role == Role::Tool;
            if results_only != is_result || message.content.starts_with(ELIDED_MARK) {
                continue;
            }
            let note = elided_note(&message.content);
            if note.len() < message.content.len() {
                message.content = note;
                elided += 1;
            }
        }
    }
    elided
}

/// The index of the first message of the last [`KEPT_TURNS`] turns (the length of
/// `messages` when there is no turn yet).
fn start_of_kept_turns(messages: &[Message]) -> usize {
    messages
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, message)| message.role == Role::Assistant)
        .nth(KEPT_TURNS - 1)
        .map_or_else(
            || {
                // Fewer turns than kept: keep every turn there is.
                messages
                    .iter()
                    .position(|message| message.role == Role::Assistant)
                    .unwrap_or(messages.len())
            },
            |(index, _)| index,
        )
}

/// What replaces an elided result: its size, first and last lines, and how to see it again.
fn elided_note(content: &str) -> String {
    let lines: Vec<&str> = content.lines().collect();
    let cut = |line: &&str| -> String {
        match line.char_indices().nth(KEPT_LINE_CHARS) {
            Some((end, _)) => format!("{}…", &line[..end]),
            None => (*line).to_owned(),
        }
    };
    let head: Vec<String> = lines.iter().take(KEPT_LINES).map(cut).collect();
    let tail_start = lines.len().saturating_sub(KEPT_LINES).max(KEPT_LINES);
    let tail: Vec<String> = lines.iter().skip(tail_start).map(cut).collect();
    let mut note = format!(
        "{ELIDED_MARK} {} lines, {} characters; first and last lines below. Call the tool again \
         to see it whole.]\n{}",
        lines.len(),
        content.chars().count(),
        head.join("\n"),
    );
    if !tail.is_empty() {
        note.push_str("\n[…]\n");
        note.push_str(&tail.join("\n"));
    }
    note
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CallOrigin, ToolCall};
    use serde_json::json;

    fn call() -> ToolCall {
        ToolCall {
            id: "call_0".to_owned(),
            name: "read_file".to_owned(),
            arguments: json!({"path": "a"}),
            origin: CallOrigin::Structured,
        }
    }

    fn big(tag: &str) -> String {
        (1..=100)
            .map(|n| format!("{tag} line {n} {}", "x".repeat(40)))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// system, task, then `turns` turns of one call and a big result each.
    fn conversation(turns: usize) -> Vec<Message> {
        let mut messages = vec![Message::system(big("system")), Message::user(big("task"))];
        for turn in 0..turns {
            messages.push(Message::assistant("", vec![call()]));
            messages.push(Message::tool_result(&call(), big(&format!("result{turn}"))));
        }
        messages
    }

    #[test]
    fn the_estimate_counts_text_calls_tools_and_messages() {
        let messages = vec![Message::user("x".repeat(30))];
        assert_eq!(estimate_tokens(&messages, 0), 10 + TOKENS_PER_MESSAGE);
        assert_eq!(estimate_tokens(&messages, 3), 11 + TOKENS_PER_MESSAGE);
        let with_call = vec![Message::assistant("", vec![call()])];
        let call_chars = "read_file".len() + r#"{"path":"a"}"#.len();
        assert_eq!(
            estimate_tokens(&with_call, 0),
            call_chars.div_ceil(3) + TOKENS_PER_MESSAGE
        );
    }

    #[test]
    fn a_conversation_that_fits_is_left_alone() {
        let mut messages = conversation(4);
        let before = messages.clone();
        let size = estimate_tokens(&messages, 0);
        assert_eq!(fit(&mut messages, 2, 0, size), 0);
        assert_eq!(messages, before);
    }

    #[test]
    fn the_oldest_results_go_first_and_the_head_and_last_turns_stay() {
        let mut messages = conversation(5);
        let before = messages.clone();
        let size = estimate_tokens(&messages, 0);
        // Room for all but about one and a half results: two must go.
        let one_result = before[3].content.len() / CHARS_PER_TOKEN;
        let elided = fit(&mut messages, 2, 0, size - one_result - one_result / 2);
        assert_eq!(elided, 2);
        assert!(
            messages[3].content.starts_with(ELIDED_MARK),
            "oldest result"
        );
        assert!(messages[5].content.starts_with(ELIDED_MARK), "next oldest");
        assert_eq!(messages[7], before[7], "elided no more than needed");
        assert_eq!(messages[..3], before[..3], "system, task and calls kept");
    }

    #[test]
    fn nothing_protected_is_elided_however_small_the_limit() {
        let mut messages = conversation(4);
        let before = messages.clone();
        let elided = fit(&mut messages, 2, 0, 1);
        assert_eq!(elided, 2, "only the results before the last two turns");
        assert_eq!(messages[..2], before[..2], "system prompt and task");
        assert_eq!(messages[6..], before[6..], "the last two turns");
        assert!(messages[3].content.starts_with(ELIDED_MARK));
        assert!(messages[5].content.starts_with(ELIDED_MARK));
        // Elided once only, however often asked.
        let again = messages.clone();
        assert_eq!(fit(&mut messages, 2, 0, 1), 0);
        assert_eq!(messages, again);
    }

    #[test]
    fn older_answers_are_elided_once_the_results_are_not_enough() {
        let mut messages = conversation(4);
        // Long answers with their calls, as a rambling model writes them.
        for index in [2, 4] {
            messages[index].content = big("answer");
        }
        let before = messages.clone();
        let size = estimate_tokens(&messages, 0);
        let one = before[3].content.len() / CHARS_PER_TOKEN;
        // Two results' worth must go: both older results, and no answer.
        assert_eq!(fit(&mut messages, 2, 0, size - 2 * one + one / 2), 2);
        assert_eq!(
            messages[2], before[2],
            "answers wait until the results are elided"
        );
        // Much less room: the older answers' text goes too, their calls stay.
        assert_eq!(fit(&mut messages, 2, 0, 1), 2);
        for index in [2, 4] {
            assert!(messages[index].content.starts_with(ELIDED_MARK));
            assert_eq!(messages[index].tool_calls, before[index].tool_calls);
        }
        assert_eq!(messages[6..], before[6..], "the last two turns");
    }

    #[test]
    fn with_a_single_turn_everything_after_the_head_is_kept() {
        let mut messages = conversation(1);
        let before = messages.clone();
        assert_eq!(fit(&mut messages, 2, 0, 1), 0);
        assert_eq!(messages, before);
    }

    #[test]
    fn the_note_keeps_the_first_and_last_lines_and_the_size() {
        let content = big("r");
        let note = elided_note(&content);
        assert!(note.starts_with(&format!(
            "{ELIDED_MARK} 100 lines, {} characters;",
            content.len()
        )));
        for kept in ["r line 1 ", "r line 4 ", "r line 97 ", "r line 100 "] {
            assert!(note.contains(kept), "{kept} kept in {note}");
        }
        for dropped in ["r line 5 ", "r line 96 "] {
            assert!(!note.contains(dropped), "{dropped} elided");
        }
    }

    #[test]
    fn the_note_of_a_short_result_has_no_tail_and_long_lines_are_cut() {
        let note = elided_note(&format!("{}\nsecond", "y".repeat(500)));
        assert!(note.contains(&format!("{}…\nsecond", "y".repeat(KEPT_LINE_CHARS))));
        assert!(!note.contains("[…]"));
    }
}
