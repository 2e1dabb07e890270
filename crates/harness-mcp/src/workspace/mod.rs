//! The harness's own backend: the model's tools over one workspace, and the run tools, as
//! `harness mcp` serves them. Opened in [`Workspace::open`] (the checks `harness run`
//! makes, then the session's run begun), served in [`Workspace::serve_stdio`].
//!
//! Every call goes through exactly what a model's call in `harness run` goes through: the
//! settings, the toolbox and the confinement plan are `harness-app`'s, built the same way.
//! The tools and the recording of each call are in `tools.rs`, the run tools (`run_task`,
//! `diff_run`, `undo_run`, `redo_run`, `list_runs`) in `runs.rs`, and what a cancellation
//! may stop, and only while its call lasts, in `scope.rs`.

use std::path::{Path, PathBuf};
use std::sync::PoisonError;

use harness_app::{Overrides, Recorder, Settings, toolbox};
use harness_exec::Interrupter;
use harness_exec::preflight::Choice;

mod error;
mod runs;
mod scope;
mod tools;

pub use self::error::Error;
use self::runs::Runs;
use self::tools::Served;
use crate::Server;

/// What a workspace is served with: the front end's flags.
#[derive(Clone, Debug)]
pub struct Options {
    /// The workspace, as given; fixed for the whole session.
    pub workspace: PathBuf,
    /// What the flags set, over the configuration files; each `run_task` resolves its
    /// settings with them too, plus what the call sets.
    pub overrides: Overrides,
    /// Whether the session, and each run it makes, may start on uncommitted changes.
    pub allow_dirty: bool,
}

/// One workspace, checked, with its toolbox built and its session's run begun, ready to
/// serve an MCP client.
pub struct Workspace {
    /// The workspace, canonical.
    root: PathBuf,
    /// The id of the run the session's own calls are recorded as.
    run: String,
    /// The settings the tools were built with.
    settings: Settings,
    /// The isolation tier commands run under, and what `auto` passed over.
    choice: Choice,
    /// Reaches every command the toolbox runs.
    interrupter: Interrupter,
    /// The tools and the run tools.
    served: Served,
}

impl Workspace {
    /// Checks the workspace as `harness run` does (not `/`, not home, not the harness's
    /// source; clean unless `allow_dirty`), resolves the settings, builds the toolbox, and
    /// begins the run the session's calls are recorded as.
    pub fn open(options: Options) -> Result<Workspace, Error> {
        let root = harness_app::workspace_root(&options.workspace)?;
        let settings = Settings::resolve(&root, &options.overrides)?;
        let (toolbox, choice) = toolbox::build(&root, &settings.toolbox)?;
        if !options.allow_dirty {
            harness_undo::check_clean(&root)?;
        }
        let recorder = Recorder::begin(&root, options.allow_dirty)?;
        let run = recorder.id();
        let interrupter = toolbox.interrupter();
        let runs = Runs {
            root: root.clone(),
            overrides: options.overrides,
            allow_dirty: options.allow_dirty,
        };
        let served = Served::new(toolbox, recorder, runs)?;
        Ok(Workspace {
            root,
            run,
            settings,
            choice,
            interrupter,
            served,
        })
    }

    /// The workspace, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The id of the run the session's own calls are recorded as (`harness show RUN`
    /// replays them, `harness undo RUN` takes them back).
    pub fn run(&self) -> &str {
        &self.run
    }

    /// The settings the tools are built with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// How commands are isolated: the tier, and the stronger tiers `auto` passed over.
    pub fn isolation(&self) -> &Choice {
        &self.choice
    }

    /// Reaches every command the tools run: a front end stopped from outside kills them
    /// with it.
    pub fn interrupter(&self) -> Interrupter {
        self.interrupter.clone()
    }

    /// Serves the workspace on stdin and stdout until the client closes the session; then
    /// the session's run is ended, after a call still running (the client went away
    /// without cancelling it) is done.
    pub fn serve_stdio(self) -> Result<(), Error> {
        toolbox::adopt_escaping_commands();
        let state = self.served.state();
        let served = Server::new(self.served, "harness", env!("CARGO_PKG_VERSION"))
            .instructions(format!(
                "The tools of the harness, confined to the workspace {}. {}",
                self.root.display(),
                harness_app::boundary::STATEMENT
            ))
            .serve_stdio()
            .map_err(Error::Serve);
        // Whatever ended the session, its run is ended.
        state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .finish();
        served
    }
}
