//! What is active, shown before the first step: the run, the boundary, the workspace, the
//! policy and isolation, the model, the edits applied and the verification command.

use harness_agent::{EditFormat, Verification};
use harness_exec::preflight::Choice;
use serde_json::json;

use harness_app::Settings;
use harness_app::probe::ModelProbe;

use crate::display::{Out, Style};
use crate::shown::{Shown, shown};
use crate::{boundary, isolation, program};

/// What is active, printed before the first step.
pub(super) struct Header<'a> {
    pub(super) run: String,
    pub(super) root: String,
    pub(super) settings: &'a Settings,
    pub(super) base_url: String,
    /// What the probe of the model server found, and how replies are asked for.
    pub(super) model: &'a ModelProbe,
    /// The isolation tier the preflight chose.
    pub(super) isolation: &'a Choice,
}

impl Header<'_> {
    fn policy(&self) -> String {
        boundary::policy(&self.settings.toolbox.allow)
    }

    /// Prints the header for a person.
    pub(super) fn print(&self, style: Style) {
        let settings = self.settings;
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
            self.run,
            style.yellow(&Shown::text(boundary::STATEMENT)),
            self.root,
            self.policy(),
            isolation::isolation_summary(self.isolation, &settings.toolbox),
            settings.model,
            settings.api,
            self.base_url,
            self.model.context_window,
            self.model.why,
            edits(self.model),
            verify,
            files,
            Shown::line(&settings.origins_line()),
            ignored,
        ));
    }

    /// The header as the first line of `--json`.
    pub(super) fn to_json(&self) -> serde_json::Value {
        let settings = self.settings;
        json!({
            "event": "run",
            "run": self.run,
            "boundary": boundary::STATEMENT,
            "workspace": self.root,
            "policy": self.policy(),
            "isolation": self.isolation.tier.name(),
            "model": settings.model,
            "api": settings.api.to_string(),
            "host": self.base_url,
            "context_window": self.model.context_window,
            "replies": self.model.replies_name(),
            "replies_why": self.model.why,
            "edit_format": self.model.edit_format.name(),
            "verification": settings.verification.as_ref().map(Verification::command),
            "config_files": settings.files,
            "project_trust": settings.project.as_ref().map(|(_, trust)| trust.describe()),
            "settings_from": settings
                .origins
                .iter()
                .map(|origin| (origin.key.to_owned(), json!(origin.from)))
                .collect::<serde_json::Map<_, _>>(),
            "ignored": settings.ignored_lines(program::command),
        })
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
