//! Preparing a run: the toolbox built from the confinement plan, the state before the run
//! recorded, and the model server asked, side by side; a run begun beside a toolbox or a
//! server that failed is discarded, so it leaves nothing to list or undo.

use std::path::{Path, PathBuf};
use std::thread;

use harness_exec::preflight::Choice;
use harness_ollama::Client;
use harness_tools::Toolbox;
use harness_undo::{BeginOptions, RunId, Session};

use crate::Error;
use crate::probe::{self, ModelProbe};
use crate::settings::Settings;
use crate::toolbox::{self, Plan};

/// What a run is asked to do, and on what tree it may start.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// What to do, in words.
    pub task: String,
    /// Start even with uncommitted changes (they are snapshotted).
    pub allow_dirty: bool,
    /// Make the workspace a git repository (or give it a first commit) if it is not one.
    pub init: bool,
    /// Places outside the workspace, or holding it, that its commands may neither read nor
    /// write, beyond what the settings keep from them ([`Plan::hide_around`]): what a
    /// front end knows is not the run's, such as the other tasks of a batch.
    pub hidden_around: Vec<PathBuf>,
    /// The run this one follows up (`--continue`, `--resume RUN`): it starts from the state
    /// that run left and continues its conversation, as the next run of its chain.
    pub follows: Option<Follow>,
}

/// Which run a follow-up follows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Follow {
    /// The workspace's latest run (`--continue`).
    Latest,
    /// The run with this id (`--resume RUN`).
    Run(String),
}

impl Follow {
    /// What a front end's flags ask: `--resume RUN`, else `--continue`, else no follow-up.
    pub fn of(latest: bool, run: Option<String>) -> Option<Follow> {
        match (run, latest) {
            (Some(run), _) => Some(Follow::Run(run)),
            (None, true) => Some(Follow::Latest),
            (None, false) => None,
        }
    }
}

/// What a run needs before its first step.
pub struct Prepared {
    /// The model's tools, confined by the settings.
    pub toolbox: Toolbox,
    /// The isolation tier the run's commands run under, and what `auto` passed over.
    pub isolation: Choice,
    /// The undo session: the state before the run, recorded.
    pub session: Session,
    /// The client of the model, as the probe found it should be asked.
    pub client: Client,
    /// What the probe found.
    pub model: ModelProbe,
}

/// Checks the toolbox's refusals, then records the state before the run while the toolbox
/// is built and the model server asked, side by side: on a large repository each takes a
/// noticeable part of the time to the first model request (the clean check, as long as a
/// `git status`; the probe of bwrap and the walk for the paths the deny rules hide from
/// commands; the server's answer), and none needs another.
///
/// # Errors
///
/// In the order of the steps run one after another: the toolbox's (a workspace that holds
/// the harness, found before anything is recorded; an isolation tier that cannot run
/// here); then the tree's (dirty, or no repository), whatever the state of the server and
/// without waiting for it; then the server's. With `init` the server is asked before the
/// begin, which changes the directory.
pub fn prepare(root: &Path, settings: &Settings, request: &Request) -> Result<Prepared, Error> {
    let plan = Plan::check(root, &settings.toolbox)?.hide_around(&request.hidden_around);
    if request.init {
        let (toolbox, isolation) = plan.build()?;
        let (client, model) = ask_the_model_server(settings)?;
        let session = begin(root, settings, request)?;
        return Ok(Prepared {
            toolbox,
            isolation,
            session,
            client,
            model,
        });
    }
    // Not scoped: a tree that cannot be begun is reported at once, without waiting for a
    // server that takes its time to answer (or never does).
    let asking = {
        let settings = settings.clone();
        thread::spawn(move || ask_the_model_server(&settings))
    };
    let (built, begun) = thread::scope(|scope| {
        let building = scope.spawn(|| plan.build());
        let begun = begin(root, settings, request);
        (joined(building.join()), begun)
    });
    let (toolbox, isolation) = match built {
        Ok(built) => built,
        Err(error) => {
            if let Ok(session) = begun {
                discard(session);
            }
            return Err(error);
        }
    };
    let session = begun?;
    match joined(asking.join()) {
        Ok((client, model)) => Ok(Prepared {
            toolbox,
            isolation,
            session,
            client,
            model,
        }),
        Err(error) => {
            discard(session);
            Err(error)
        }
    }
}

/// Records the state of the repository before the run, so it can be undone.
///
/// # Errors
///
/// A tree that cannot be begun: dirty without `allow_dirty`, no repository, no store; a
/// follow-up of no run ([`Error::NothingToContinue`]), or of one that cannot be followed
/// up (accepted, undone, followed already, on another HEAD).
pub fn begin(root: &Path, settings: &Settings, request: &Request) -> Result<Session, Error> {
    let follows = match &request.follows {
        None => None,
        Some(Follow::Latest) => Some(
            Session::latest(root)?
                .ok_or_else(|| Error::NothingToContinue {
                    root: root.to_owned(),
                })?
                .id,
        ),
        Some(Follow::Run(text)) => Some(text.parse::<RunId>().map_err(harness_undo::Error::from)?),
    };
    let session = Session::begin(
        root,
        BeginOptions {
            allow_dirty: request.allow_dirty,
            init: request.init,
            task: request.task.clone(),
            model: settings.model.clone(),
            hidden: toolbox::hidden(root, &settings.toolbox.deny),
            follows,
            ..BeginOptions::default()
        },
    )?;
    tracing::info!(run = %session.id(), "recorded the state before the run");
    Ok(session)
}

/// Removes the run `session` began, which will not take place, so that nothing of it is
/// left to list or undo.
fn discard(session: Session) {
    let run = session.id().clone();
    if let Err(discarding) = session.discard() {
        tracing::warn!(%run, "the run could not be discarded: {discarding}");
    }
}

/// What a joined thread returned; its panic goes on in this thread.
fn joined<T>(joined: thread::Result<T>) -> T {
    joined.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The client of the configured model, and what the probe of its server found.
fn ask_the_model_server(settings: &Settings) -> Result<(Client, ModelProbe), Error> {
    tracing::info!(model = %settings.model, api = %settings.api, "asking the model server");
    let (client, model) = probe::probe(settings)?;
    tracing::info!(
        context_window = model.context_window,
        replies = model.replies_name(),
        "the model server answered"
    );
    Ok((client, model))
}
