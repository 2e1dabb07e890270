//! What the run did, shown at the end: [`RunSummary`]'s facts in the words of
//! `harness_app::render::SummaryText`, printed for a person or as the last line of `--json`,
//! and the exit status they make.

use std::path::Path;

use harness_agent::RunReport;
use harness_app::render::{Style, SummaryText};
use harness_app::{Finished, RunSummary};

use crate::display::Out;
use crate::exit;

/// What the run did, printed at the end.
pub(super) struct Summary<'a> {
    facts: RunSummary<'a>,
    root: &'a Path,
}

impl<'a> Summary<'a> {
    /// The summary of the run that ended as `report` said (`recorded` says how recording
    /// its end went), from what it left behind.
    pub(super) fn new(
        report: &'a RunReport,
        recorded: Result<(), harness_undo::Error>,
        finished: Finished,
        root: &'a Path,
    ) -> Summary<'a> {
        Summary {
            facts: RunSummary::new(report, recorded, finished),
            root,
        }
    }

    /// The run's exit status: a verified run whose commands changed test code is not
    /// counted as done, since the tests it passed may not be the ones the user wrote.
    pub(super) fn exit_code(&self) -> u8 {
        if self.facts.tests_changed.is_empty() {
            exit::code_for_outcome(self.facts.report.outcome)
        } else {
            exit::NOT_VERIFIED
        }
    }

    /// Prints the summary for a person.
    pub(super) fn print(&self, style: Style) {
        let mut out = Out::stdout();
        for line in self.text().lines(style) {
            let _ = out.line(&line);
        }
    }

    /// The summary as the last line of `--json`.
    pub(super) fn to_json(&self) -> serde_json::Value {
        self.facts
            .to_json(self.exit_code(), &self.text().commands())
    }

    fn text(&self) -> SummaryText<'_> {
        SummaryText::new(&self.facts, self.root, crate::program::program())
    }
}
