//! The model probe, before the first step: what the server says about the model (its context
//! window, whether its chat template takes tools), and so how the model is asked to reply.
//!
//! A small model whose template takes no tools cannot make a native tool call; where the
//! server constrains decoding to a JSON schema, each reply is then made one tool call or a
//! final answer by construction ([`ReplyFormat::Constrained`]), so a malformed call cannot
//! happen. The choice and its reason are shown in the run's header.

use harness_agent::EditFormat;
use harness_ollama::{Client, ConstraintSupport, ModelInfo, ReplyFormat};

use crate::Error;
use crate::settings::{Replies, Settings};

/// What the probe found and chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelProbe {
    /// The context window, in tokens, the run works with.
    pub context_window: u32,
    /// How replies are asked for.
    pub replies: ReplyFormat,
    /// Why, in words, for the header.
    pub why: String,
    /// Which edits written into answers are applied: the configured format, except that
    /// `auto` comes to `whole` for a model that can only write its calls as JSON text.
    pub edit_format: EditFormat,
    /// True if and only if `auto` was asked for and `edit_format` is what it came to.
    pub edit_format_chosen: bool,
}

impl ModelProbe {
    /// `native` or `constrained`, for `--json`.
    pub fn replies_name(&self) -> &'static str {
        match self.replies {
            ReplyFormat::Constrained => "constrained",
            _ => "native",
        }
    }
}

/// Asks the server about the model and returns the client to run with and what was found.
///
/// # Errors
///
/// A server that cannot be reached or does not have the model, and `--replies constrained`
/// on a server that does not constrain replies.
pub fn probe(settings: &Settings) -> Result<(Client, ModelProbe), Error> {
    let client = settings.model_client()?;
    let ask = |source: harness_ollama::Error| Error::ModelServer {
        asking: "asking the model server about the model",
        source,
    };
    let info = client.model_info().map_err(ask)?;
    let context_window = client.context_length().map_err(ask)?;
    let (replies, why) = choose(settings.replies, &info, || {
        client
            .probe_constrained_replies()
            .map_err(|source| Error::ModelServer {
                asking: "asking the model server whether it constrains replies",
                source,
            })
    })?;
    let edit_format = edit_format(settings.edit_format, &info, replies);
    let probe = ModelProbe {
        context_window,
        replies,
        why,
        edit_format,
        edit_format_chosen: settings.edit_format == EditFormat::Auto,
    };
    if replies == ReplyFormat::Free {
        return Ok((client, probe));
    }
    let mut config = client.config().clone();
    config.reply_format = replies;
    // Settled once: the constrained client need not ask again.
    config.context_length = Some(context_window);
    let client = Client::new(config).map_err(|error| Error::ModelAddress {
        message: error.to_string(),
    })?;
    Ok((client, probe))
}

/// The edit format `asked` for comes to with a model described by `info` whose replies are
/// asked for as `replies`. `auto` is whole files written into answers when the model's
/// template takes no tools and its replies are not constrained: then every call is JSON it
/// writes as text, with each quote in the code escaped, which small models get wrong more
/// often than a fenced block under the file's path. Otherwise `auto` stays itself: tool
/// calls first, both kinds of blocks applied as well.
fn edit_format(asked: EditFormat, info: &ModelInfo, replies: ReplyFormat) -> EditFormat {
    let calls_only_as_text = info.supports_tools() == Some(false) && replies == ReplyFormat::Free;
    match asked {
        EditFormat::Auto if calls_only_as_text => EditFormat::Whole,
        asked => asked,
    }
}

/// The reply format `asked` for comes to with a model described by `info`, and why;
/// `constrains` asks the server whether it constrains replies, only when that decides.
fn choose(
    asked: Replies,
    info: &ModelInfo,
    constrains: impl FnOnce() -> Result<ConstraintSupport, Error>,
) -> Result<(ReplyFormat, String), Error> {
    let native = |why: &str| Ok((ReplyFormat::Free, why.to_owned()));
    match (asked, info.supports_tools()) {
        (Replies::Native, _) => native("native tool calls, as asked (--replies native)"),
        (Replies::Auto, Some(true)) => native(
            "native tool calls: the server says the model's chat template takes tools \
             (--replies auto)",
        ),
        (Replies::Auto, None) => native(
            "native tool calls, and calls written as JSON text are read: the server does not \
             say whether the model's template takes tools (--replies auto)",
        ),
        (Replies::Auto, Some(false)) => match constrains()? {
            ConstraintSupport::Supported => Ok((
                ReplyFormat::Constrained,
                "constrained by the server to one tool call or a final answer: the model's \
                 chat template takes no tools, and the server constrains replies to a JSON \
                 schema (--replies auto)"
                    .to_owned(),
            )),
            _ => native(
                "calls written as JSON text are read: the model's chat template takes no \
                 tools, and the server does not constrain replies (--replies auto)",
            ),
        },
        (Replies::Constrained, _) => match constrains()? {
            ConstraintSupport::Supported => Ok((
                ReplyFormat::Constrained,
                "constrained by the server to one tool call or a final answer, as asked \
                 (--replies constrained)"
                    .to_owned(),
            )),
            ConstraintSupport::Refused { message } => Err(Error::ConstrainedRefused { message }),
            ConstraintSupport::Ignored { reply } => Err(Error::ConstrainedIgnored {
                reply: reply.chars().take(60).collect(),
            }),
            other => Err(Error::ConstrainedUnknown {
                answer: format!("{other:?}"),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(capabilities: &[&str]) -> ModelInfo {
        let mut info = ModelInfo::default();
        info.capabilities = capabilities.iter().map(|c| c.to_string()).collect();
        info
    }

    /// A server whose answer to the probe is `support`, counting the times it is asked.
    fn server(
        support: ConstraintSupport,
        asked: &mut u32,
    ) -> impl FnOnce() -> Result<ConstraintSupport, Error> + '_ {
        move || {
            *asked += 1;
            Ok(support)
        }
    }

    #[test]
    fn a_template_that_takes_tools_gets_native_calls_without_a_probe() {
        for capabilities in [&["completion", "tools"][..], &[]] {
            let mut asked = 0;
            let (format, why) = choose(
                Replies::Auto,
                &info(capabilities),
                server(ConstraintSupport::Supported, &mut asked),
            )
            .unwrap();
            assert_eq!(format, ReplyFormat::Free, "{capabilities:?}");
            assert!(why.starts_with("native tool calls"), "{why}");
            assert_eq!(asked, 0, "nothing decided by the probe is asked");
        }
    }

    #[test]
    fn a_template_without_tools_gets_constrained_replies_where_the_server_can() {
        let mut asked = 0;
        let (format, why) = choose(
            Replies::Auto,
            &info(&["completion"]),
            server(ConstraintSupport::Supported, &mut asked),
        )
        .unwrap();
        assert_eq!((format, asked), (ReplyFormat::Constrained, 1));
        assert!(why.contains("takes no tools"), "{why}");

        let ignored = ConstraintSupport::Ignored {
            reply: "Hello!".into(),
        };
        let (format, why) = choose(
            Replies::Auto,
            &info(&["completion"]),
            server(ignored, &mut asked),
        )
        .unwrap();
        assert_eq!(format, ReplyFormat::Free);
        assert!(why.contains("does not constrain"), "{why}");
    }

    #[test]
    fn what_the_user_asks_for_wins_and_constrained_replies_a_server_cannot_give_are_refused() {
        let mut asked = 0;
        let (format, _) = choose(
            Replies::Native,
            &info(&["completion"]),
            server(ConstraintSupport::Supported, &mut asked),
        )
        .unwrap();
        assert_eq!((format, asked), (ReplyFormat::Free, 0));

        let (format, _) = choose(
            Replies::Constrained,
            &info(&["completion", "tools"]),
            server(ConstraintSupport::Supported, &mut asked),
        )
        .unwrap();
        assert_eq!((format, asked), (ReplyFormat::Constrained, 1));

        let refused = ConstraintSupport::Refused {
            message: "grammar not supported".into(),
        };
        let error = choose(
            Replies::Constrained,
            &info(&[]),
            server(refused, &mut asked),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("refused") && error.contains("grammar not supported"),
            "{error}"
        );
        let ignored = ConstraintSupport::Ignored {
            reply: "Hello!".into(),
        };
        let error = choose(
            Replies::Constrained,
            &info(&[]),
            server(ignored, &mut asked),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("ignores") && error.contains("Hello!"),
            "{error}"
        );
    }

    #[test]
    fn auto_edits_are_whole_files_only_for_a_model_that_writes_its_calls_as_text() {
        let (tools, no_tools, unknown) = (
            info(&["completion", "tools"]),
            info(&["completion"]),
            info(&[]),
        );
        let auto = |info: &ModelInfo, replies| edit_format(EditFormat::Auto, info, replies);
        assert_eq!(auto(&no_tools, ReplyFormat::Free), EditFormat::Whole);
        assert_eq!(auto(&no_tools, ReplyFormat::Constrained), EditFormat::Auto);
        assert_eq!(auto(&tools, ReplyFormat::Free), EditFormat::Auto);
        assert_eq!(auto(&unknown, ReplyFormat::Free), EditFormat::Auto);
        for (_, asked) in EditFormat::ALL {
            if asked != EditFormat::Auto {
                let kept = edit_format(asked, &no_tools, ReplyFormat::Free);
                assert_eq!(kept, asked, "what the user asks for wins");
            }
        }
    }

    #[test]
    fn every_name_reads_back() {
        for (name, replies) in Replies::ALL {
            assert_eq!(Replies::parse(name), Some(replies));
        }
        assert_eq!(Replies::parse("json"), None);
    }
}
