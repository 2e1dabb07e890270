//! The conversation as a model that was offered no tools reads it ([`EditFormat::Whole`] and
//! [`EditFormat::Diff`]): the same turns, with every call and its result in words.
//!
//! Inside the loop a run is one conversation whatever its edit format: the head start's
//! reads, the edits an answer's blocks stand for and the checks are calls with results, so
//! the transcript, the context trimming and the checkpoints work the same way. A model that
//! was offered no tools is not shown calls, though: its chat template would render calls it
//! was never told it could make, and a small model copies the shape of what it sees. So the
//! request carries the results as user messages and leaves the calls out.
//!
//! [`EditFormat::Whole`]: crate::EditFormat::Whole
//! [`EditFormat::Diff`]: crate::EditFormat::Diff

use crate::model::{Message, Role};

/// `messages` without calls: a tool result becomes a user message with the same (framed)
/// text, an assistant message keeps its text and loses its calls (and goes if that leaves
/// it empty), and messages of the same role in a row are joined, as chat templates expect
/// the roles to alternate.
pub(crate) fn conversation(messages: &[Message]) -> Vec<Message> {
    let mut plain: Vec<Message> = Vec::with_capacity(messages.len());
    for message in messages {
        let (role, content) = match message.role {
            Role::Tool => (Role::User, message.content.as_str()),
            Role::Assistant if message.content.trim().is_empty() => continue,
            role => (role, message.content.as_str()),
        };
        match plain.last_mut() {
            Some(last) if last.role == role && role != Role::System => {
                last.content.push_str("\n\n");
                last.content.push_str(content);
            }
            _ => plain.push(match role {
                Role::System => Message::system(content),
                Role::Assistant => Message::assistant(content, Vec::new()),
                _ => Message::user(content),
            }),
        }
    }
    plain
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CallOrigin, ToolCall};
    use serde_json::json;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.to_owned(),
            name: "read_file".to_owned(),
            arguments: json!({"path": "calc.py"}),
            origin: CallOrigin::Structured,
        }
    }

    #[test]
    fn calls_go_and_their_results_reach_the_model_as_user_text_between_its_answers() {
        let read = call("head_start_0");
        let write = call("block_1_0");
        let messages = vec![
            Message::system("rules"),
            Message::user("the task"),
            Message::assistant("", vec![read.clone()]),
            Message::tool_result(&read, "[result of read_file calc.py]"),
            Message::user("now do it"),
            Message::assistant("calc.py\n```\nfixed\n```", vec![write.clone()]),
            Message::tool_result(&write, "[result of write_file calc.py]"),
            Message::user("the check failed"),
        ];
        let plain = conversation(&messages);
        let shape: Vec<(Role, &str)> = plain
            .iter()
            .map(|message| (message.role, message.content.as_str()))
            .collect();
        assert_eq!(
            shape,
            [
                (Role::System, "rules"),
                (
                    Role::User,
                    "the task\n\n[result of read_file calc.py]\n\nnow do it"
                ),
                (Role::Assistant, "calc.py\n```\nfixed\n```"),
                (
                    Role::User,
                    "[result of write_file calc.py]\n\nthe check failed"
                ),
            ]
        );
        assert!(plain.iter().all(|message| message.tool_calls.is_empty()
            && message.tool_call_id.is_none()
            && message.tool_name.is_none()));
    }

    #[test]
    fn system_messages_are_never_joined() {
        let plain = conversation(&[Message::system("a"), Message::system("b")]);
        assert_eq!(plain.len(), 2);
    }
}
