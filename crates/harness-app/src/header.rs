//! What is active as a run begins: [`RunHeader`], the run, its workspace, settings (and
//! where each came from), model and isolation tier, with its JSON object. A front end words
//! and prints the text; this file prints nothing.

use harness_agent::Verification;
use harness_exec::preflight::Choice;
use serde_json::json;

use crate::boundary;
use crate::probe::ModelProbe;
use crate::settings::Settings;

/// What is active as a run begins, shown before its first step.
#[derive(Debug)]
pub struct RunHeader<'a> {
    /// The run's id.
    pub run: String,
    /// The workspace, as shown.
    pub root: String,
    /// The settings the run has.
    pub settings: &'a Settings,
    /// The model server's address.
    pub base_url: String,
    /// What the probe of the model server found, and how replies are asked for.
    pub model: &'a ModelProbe,
    /// The isolation tier the preflight chose.
    pub isolation: &'a Choice,
}

impl RunHeader<'_> {
    /// The command policy, in words ([`boundary::policy`]).
    pub fn policy(&self) -> String {
        boundary::policy(&self.settings.toolbox.allow)
    }

    /// The header as one JSON object (the first line of `harness run --json`); `command`
    /// writes a command line of the front end from what follows its program's name.
    pub fn to_json(&self, command: impl Fn(&str) -> String) -> serde_json::Value {
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
            "ignored": settings.ignored_lines(command),
        })
    }
}
