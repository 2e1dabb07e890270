//! What can go wrong in preparing, running or reviewing a run, each with the message the
//! `harness` command prints (its front ends print these words unchanged).
//!
//! A message that wraps another error (`cannot read X` over the I/O error) keeps it as its
//! source, so a front end that prints the chain (`anyhow`'s `{:#}`) prints what it always
//! did: `cannot read X: Permission denied`.

use std::path::PathBuf;

use thiserror::Error;

/// An error of this crate.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The workspace given is no existing directory.
    #[error("cannot use {} as the workspace: it must be an existing directory", given.display())]
    NoWorkspace {
        /// The directory as given.
        given: PathBuf,
        /// Why it could not be made canonical.
        #[source]
        source: std::io::Error,
    },
    /// The workspace given is a file, not a directory.
    #[error("cannot use {} as the workspace: it is not a directory", given.display())]
    NotADirectory {
        /// The path as given.
        given: PathBuf,
    },
    /// The workspace is `/`.
    #[error(
        "refusing {} as the workspace: it is the root of the filesystem; point --workspace \
         at the repository to work on",
        root.display()
    )]
    FilesystemRoot {
        /// The workspace.
        root: PathBuf,
    },
    /// The workspace is the home directory.
    #[error(
        "refusing {} as the workspace: it is your home directory, with your keys and \
         configuration; point --workspace at the repository to work on",
        root.display()
    )]
    HomeDirectory {
        /// The workspace.
        root: PathBuf,
    },
    /// The workspace holds the harness's source tree or its executable.
    #[error(
        "refusing {root} as the workspace: it contains the harness ({what}, {}), which a \
         model could then change; copy the project elsewhere, as `cargo xtask demo` does",
        path.display()
    )]
    OwnHarness {
        /// The workspace.
        root: String,
        /// `its own source tree` or `its own executable`.
        what: &'static str,
        /// Where that is.
        path: PathBuf,
        /// What the workspace said.
        #[source]
        source: harness_sandbox::Error,
    },
    /// The workspace's root cannot be opened, or a deny rule is not valid.
    #[error("cannot use {} as the workspace", root.display())]
    Workspace {
        /// The workspace.
        root: PathBuf,
        /// Why.
        #[source]
        source: harness_sandbox::Error,
    },
    /// A file that could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A directory that could not be made.
    #[error("cannot create {}", path.display())]
    Create {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file that could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A configuration file that is not UTF-8.
    #[error("invalid configuration file {}: not UTF-8", path.display())]
    ConfigNotUtf8 {
        /// The file.
        path: PathBuf,
        /// Where the bytes stopped being UTF-8.
        #[source]
        source: std::string::FromUtf8Error,
    },
    /// A configuration file that does not parse, or names a deny rule that is not valid.
    #[error("invalid configuration file {}", path.display())]
    ConfigFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A key of a configuration file set to 0.
    #[error(
        "`{key} = 0` in the configuration would stop every run at once: use at least 1, or \
         leave the key out for the default"
    )]
    ZeroLimit {
        /// The key.
        key: &'static str,
    },
    /// An `api` that is none of the known ones.
    #[error("unknown api {name:?} in the configuration: use \"ollama\" or \"openai\"")]
    UnknownApi {
        /// What the configuration said.
        name: String,
    },
    /// An `edit_format` that is none of the known ones.
    #[error(
        "unknown edit_format {name:?} in the configuration: use \"auto\", \"tools\", \
         \"whole\" or \"diff\""
    )]
    UnknownEditFormat {
        /// What the configuration said.
        name: String,
    },
    /// A `replies` that is none of the known ones.
    #[error(
        "unknown replies {name:?} in the configuration: use \"auto\", \"native\" or \
         \"constrained\""
    )]
    UnknownReplies {
        /// What the configuration said.
        name: String,
    },
    /// A `sandbox` that is no tier.
    #[error("in the configuration: {tier}")]
    UnknownSandbox {
        /// Which names there are.
        tier: harness_exec::UnknownTier,
    },
    /// A `tests` glob that is not valid.
    #[error("in the configuration's `tests`")]
    Tests {
        /// The glob and why.
        #[source]
        source: harness_tools::TestCodeError,
    },
    /// A verification command that cannot be split into words.
    #[error(transparent)]
    Verification(#[from] harness_agent::VerificationError),
    /// A verification command the command policy would refuse: the run could never be
    /// verified.
    #[error(
        "the verification command `{command}` would be refused ({refusal}); allow its program \
         with --allow"
    )]
    UnrunnableVerification {
        /// The command.
        command: String,
        /// Why the policy refuses it.
        refusal: harness_exec::Refusal,
    },
    /// A model server address that cannot be understood: a configuration error, not the
    /// server's, so the model server's error is not kept as the source.
    #[error("{message}")]
    ModelAddress {
        /// The client's words.
        message: String,
    },
    /// The model server could not be asked, or answered what cannot be read.
    #[error("{asking}")]
    ModelServer {
        /// What it was asked.
        asking: &'static str,
        /// Its error.
        #[source]
        source: harness_ollama::Error,
    },
    /// `--replies constrained` on a server that refused a constrained reply.
    #[error(
        "--replies constrained: the model server refused a reply constrained to a JSON schema \
         ({message}); use --replies auto or native"
    )]
    ConstrainedRefused {
        /// The server's words.
        message: String,
    },
    /// `--replies constrained` on a server that ignores the schema.
    #[error(
        "--replies constrained: the model server ignores a JSON schema for replies (it \
         answered {reply:?}); use --replies auto or native"
    )]
    ConstrainedIgnored {
        /// The start of its reply.
        reply: String,
    },
    /// `--replies constrained` on a server whose answer to the probe says neither.
    #[error("--replies constrained: the model server answered {answer}")]
    ConstrainedUnknown {
        /// The answer, as debug output.
        answer: String,
    },
    /// No home directory to keep the trust file in.
    #[error("cannot find your configuration directory: set HOME")]
    NoConfigDirectory,
    /// A workspace whose path cannot be a key of the trust file.
    #[error("cannot trust {}: its path is not UTF-8", root.display())]
    RootNotUtf8 {
        /// The workspace.
        root: PathBuf,
    },
    /// A trust file that is not one.
    #[error(
        "{} is not a trust file ({message}): remove it, and run `harness trust` again in each \
         workspace whose harness.toml you trust",
        file.display()
    )]
    NotATrustFile {
        /// The file.
        file: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// Writing JSON failed (it cannot, for the types written).
    #[error("{what}")]
    Json {
        /// What was written.
        what: &'static str,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// No run is recorded in the workspace.
    #[error("no harness run is recorded in {}", root.display())]
    NoRun {
        /// The workspace.
        root: PathBuf,
    },
    /// A follow-up (`--continue`) in a workspace with no run to follow.
    #[error(
        "there is no earlier run in {} to continue; start one without --continue",
        root.display()
    )]
    NothingToContinue {
        /// The workspace.
        root: PathBuf,
    },
    /// `--prune` without what to prune.
    #[error("--prune needs --keep N or --older-than DAYS")]
    PruneWhich,
    /// The thread that records a client's session ended before it began the run.
    #[error("the recorder of the MCP session stopped at its start")]
    RecorderStopped,
    /// The run's transcript could not be made.
    #[error(transparent)]
    Transcript(#[from] harness_agent::TranscriptError),
    /// The isolation tier asked for cannot run here.
    #[error(transparent)]
    Isolation(#[from] harness_exec::Unavailable),
    /// The undo store: recording, opening, restoring or accepting a run.
    #[error(transparent)]
    Undo(#[from] harness_undo::Error),
}

impl Error {
    /// True if and only if the error was caused by a full disk, whichever part it came from:
    /// a front end that tells the user to free space asks this (a wrapped error of another
    /// crate is not in the source chain, which this error forwards).
    pub fn is_disk_full(&self) -> bool {
        match self {
            Error::Undo(error) => error.is_disk_full(),
            Error::Read { source, .. }
            | Error::Create { source, .. }
            | Error::Write { source, .. } => source.kind() == std::io::ErrorKind::StorageFull,
            _ => false,
        }
    }
}
