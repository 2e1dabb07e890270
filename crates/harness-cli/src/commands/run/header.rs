//! What is active, shown before the first step: the run, the boundary, the workspace, the
//! policy and isolation, the model, the edits applied and the verification command.

use harness_agent::EditFormat;

use harness_app::RunHeader;
use harness_app::probe::ModelProbe;

use crate::display::{Out, Style};
use crate::shown::{Shown, shown};
use crate::{boundary, isolation, program};

/// What is active, printed before the first step: [`RunHeader`]'s facts in this binary's
/// words.
pub(super) struct Header<'a>(pub(super) RunHeader<'a>);

impl Header<'_> {
    /// Prints the header for a person.
    pub(super) fn print(&self, style: Style) {
        let header = &self.0;
        let settings = header.settings;
        let verify = match &settings.verification {
            Some(verification) => Shown::line(verification.command()),
            None => {
                shown!("none: nothing will check the model's claim that it is done (--verify CMD)")
            }
        };
        let files = Shown::line(&settings.files_line());
        // What a repository's file set that does not apply, each on its own line: quoted
        // from the file, so sanitized as one line each.
        let mut ignored = Shown::default();
        for line in settings.ignored_lines(program::command) {
            ignored.push(&shown!("\x20 ignored:    {}\n", Shown::line(&line)));
        }
        let _ = Out::stdout().line(&shown!(
            "{} {}\n{}\n\
             \x20 workspace:  {}\n\
             \x20 policy:     {}\n\
             \x20 isolation:  {}\n\
             \x20 model:      {} via {} at {} (context {} tokens)\n\
             \x20 replies:    {}\n\
             \x20 edits:      {}\n\
             \x20 verify:     {}\n\
             \x20 config:     {}\n\
             \x20 settings:   {}\n\
             {}",
            style.bold(&shown!("harness run")),
            header.run,
            style.yellow(&Shown::text(boundary::STATEMENT)),
            header.root,
            header.policy(),
            isolation::isolation_summary(header.isolation, &settings.toolbox),
            settings.model,
            settings.api,
            header.base_url,
            header.model.context_window,
            header.model.why,
            edits(header.model),
            verify,
            files,
            Shown::line(&settings.origins_line()),
            ignored,
        ));
    }

    /// The header as the first line of `--json`.
    pub(super) fn to_json(&self) -> serde_json::Value {
        self.0.to_json(program::command)
    }
}

/// How the model's changes are made, for the header.
fn edits(model: &ModelProbe) -> &'static str {
    if model.edit_format_chosen && model.edit_format == EditFormat::Whole {
        return "whole files written into answers, and no tools offered: the model's template \
                takes no tools and replies are not constrained, so its calls would be JSON \
                text (--edit-format auto)";
    }
    match model.edit_format {
        EditFormat::Tools => "tool calls only (--edit-format tools)",
        EditFormat::Whole => {
            "whole files written into answers, and no tools offered; the harness shows the \
             files and runs the check after each change (--edit-format whole)"
        }
        EditFormat::Diff => {
            "search/replace blocks written into answers, and no tools offered; the harness \
             shows the files and runs the check after each change (--edit-format diff)"
        }
        _ => {
            "tool calls, or whole files and search/replace blocks written into answers, applied \
             through the same tools (--edit-format auto)"
        }
    }
}
