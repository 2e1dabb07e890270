//! `harness sandbox explain` and `harness sandbox doctor`: what the harness protects, what
//! it does not, and which isolation tier works on this machine.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use harness_app::tiers::{self, TierProbe};
use harness_exec::preflight::{self, HostFacts};
use harness_exec::{Sandbox, Tier};

use crate::boundary;
use crate::commands::workspace_root;
use crate::display::Out;
use crate::shown::Shown;

/// What the sandbox protects and what it does not.
#[derive(Debug, Args)]
pub(crate) struct SandboxCommand {
    #[command(subcommand)]
    action: SandboxAction,
}

#[derive(Debug, Subcommand)]
enum SandboxAction {
    /// Print the boundary statement, and what the configuration active in a workspace does
    /// and does not protect: for the isolation tier, a table of what commands can and cannot
    /// do, each row naming the test that asserts it.
    Explain {
        /// The workspace whose configuration (harness.toml) to read.
        #[arg(long, value_name = "DIR", default_value = ".")]
        workspace: PathBuf,

        /// As `harness run --allow`: explain the allowlist of these programs.
        #[arg(long = "allow", value_name = "PROGRAM")]
        allow: Vec<String>,

        /// The isolation tier to explain: auto (the one `harness run` would pick here),
        /// bwrap, landlock or none. Default: the configuration's `sandbox`, else auto.
        #[arg(long, value_name = "TIER")]
        sandbox: Option<Sandbox>,
    },
    /// Probe every isolation tier on this machine by starting a trivial confined command
    /// under it, and say which one `auto` picks and how to fix the missing ones. Exits 0
    /// when a real tier (bwrap or landlock) works, 1 when only none does.
    Doctor,
}

pub(crate) fn exec(command: SandboxCommand) -> anyhow::Result<ExitCode> {
    match command.action {
        SandboxAction::Explain {
            workspace,
            allow,
            sandbox,
        } => explain(&workspace, allow, sandbox),
        SandboxAction::Doctor => doctor(),
    }
}

/// `harness sandbox explain`: the boundary statement, the table of what commands can and
/// cannot do under the tier a run in `workspace` would have, and what its configuration
/// adds.
fn explain(
    workspace: &Path,
    allow: Vec<String>,
    sandbox: Option<Sandbox>,
) -> anyhow::Result<ExitCode> {
    let root = workspace_root(workspace)?;
    // The settings a run here would have: what a repository's file may not choose on its
    // own is explained as ignored, not as if it applied.
    let settings = harness_app::Settings::resolve(
        &root,
        &harness_app::Overrides {
            allow,
            sandbox,
            ..harness_app::Overrides::default()
        },
    )?;
    let (tier, unavailable) = tiers::tier_here(settings.toolbox.sandbox, &root)?;
    let note = unavailable.map(|unavailable| format!("note: {unavailable}\n\n"));
    let abi = preflight::host_facts().landlock_abi;
    let text = boundary::explain(&boundary::policy(&settings.toolbox.allow), tier, abi);
    // The boundary statement stays first; a tier that cannot run here is said right after.
    let (statement, rest) = text.split_at(boundary::STATEMENT.len());
    let mut out = Report::default();
    out.text(format!(
        "{statement}\n\n{}{}",
        note.unwrap_or_default(),
        rest.trim_start()
    ));
    denied_lines(&mut out, &settings);
    configuration_lines(&mut out, &settings);
    out.line(format!(
        "  seatbelt   the command policy sees through these launchers in front of a program\n\
         \x20            (and judges the program they start): {}\n\
         \x20            (harness-exec::every_launcher_in_the_table_is_listed_and_looked_through)",
        harness_exec::LAUNCHERS.join(", ")
    ));
    out.print()?;
    Ok(ExitCode::SUCCESS)
}

/// The `protected` lines: what the user's and the project's configuration deny besides
/// the built-in rules.
fn denied_lines(out: &mut Report, settings: &harness_app::Settings) {
    let toolbox = &settings.toolbox;
    if !toolbox.deny.is_empty() {
        out.line(format!(
            "  protected  also denied by your configuration: {}",
            toolbox.deny.join(", ")
        ));
    }
    if !toolbox.project_deny.is_empty() {
        out.line(format!(
            "  protected  also denied by the project's harness.toml (its `!` rules lift none \
             of yours nor the built-in ones): {}\n\
             \x20            (harness-sandbox::workspace::deny::a_negation_in_a_list_of_its_own_lifts_nothing_of_another)",
            toolbox.project_deny.join(", ")
        ));
    }
}

/// The `config` line (which files the settings come from, and what a repository's file
/// may choose on its own) and an `ignored` line per setting that did not apply.
fn configuration_lines(out: &mut Report, settings: &harness_app::Settings) {
    out.line(format!(
        "  config     {}\n\
         \x20            settings from: {}\n\
         \x20            a repository's harness.toml chooses on its own only what narrows (more \
         deny rules and tests, budgets, a\n\
         \x20            stricter sandbox or allowlist) and the verification command; its \
         host, api, model, writable,\n\
         \x20            network, allow_test_edits, weaker sandbox or wider allow apply only \
         once you trust its exact\n\
         \x20            content (`harness trust`); any change to it makes it untrusted again",
        settings.files_line(),
        settings.origins_line()
    ));
    for line in settings.ignored_lines(crate::program::command) {
        out.line(format!("  ignored    {line}"));
    }
}

/// `harness sandbox doctor`: probes every tier, says which works and how to fix the others,
/// and which one `auto` picks. Exits 1 when only `none` works.
fn doctor() -> anyhow::Result<ExitCode> {
    let mut out = Report::default();
    let probe = TierProbe::run();
    out.line(
        "Isolation tiers on this machine, strongest first (each probed by running a command \
         under it):\n"
            .to_owned(),
    );
    tier_lines(&mut out, &probe);
    out.line(seccomp_line(&probe.facts));
    out.line(String::new());
    let code = match probe.picked() {
        Tier::None => {
            out.line(
                "auto picks: none — commands run as you, unconfined. Fix one of the tiers above."
                    .to_owned(),
            );
            ExitCode::from(1)
        }
        tier => {
            out.line(format!(
                "auto picks: {tier} (the strongest tier that works here); \
                 `{}` shows what it blocks",
                crate::program::command(&format!("sandbox explain --sandbox {tier}"))
            ));
            ExitCode::SUCCESS
        }
    };
    out.print()?;
    Ok(code)
}

/// A line per tier, strongest first: works, or cannot run with why and the fix.
fn tier_lines(out: &mut Report, probe: &TierProbe) {
    for (tier, probed) in &probe.tiers {
        let detail = detail(*tier, &probe.facts);
        match probed {
            Ok(()) => out.line(format!("  {:<9} works        {detail}", tier.name())),
            Err(unavailable) => out.line(format!(
                "  {:<9} cannot run   {detail}\n  {:<9}   why: {}\n  {:<9}   fix: {}",
                tier.name(),
                "",
                unavailable.reason(),
                "",
                unavailable.fix()
            )),
        }
    }
}

/// Whether the kernel offers seccomp, which bwrap and Landlock need for their filter.
fn seccomp_line(facts: &HostFacts) -> String {
    match &facts.seccomp_actions {
        Some(actions) => format!(
            "  {:<9} used         available ({actions}); under bwrap and Landlock a filter \
             refuses the kernel keyrings and, without --network, Unix sockets, sockets other \
             than IP and netlink (under Landlock, IP other than TCP) and io_uring",
            "seccomp"
        ),
        None => format!(
            "  {:<9} missing      not offered by this kernel: bwrap and Landlock need it for \
             their socket filter, and cannot run",
            "seccomp"
        ),
    }
}

/// What a sandbox command prints, gathered, then printed at once through [`Out`]: it
/// quotes the configuration (deny rules), so it is sanitized like everything else.
#[derive(Default)]
struct Report(String);

impl Report {
    fn text(&mut self, text: String) {
        self.0.push_str(&text);
    }

    fn line(&mut self, text: String) {
        self.0.push_str(&text);
        self.0.push('\n');
    }

    fn print(&self) -> std::io::Result<()> {
        Out::stdout().print(&Shown::text(&self.0))
    }
}

/// What the machine's facts say about `tier`.
fn detail(tier: Tier, facts: &HostFacts) -> String {
    match tier {
        Tier::Bwrap => {
            let program = match (&facts.bwrap, &facts.bwrap_version) {
                (Some(path), Some(version)) => format!("{} ({version})", path.display()),
                (Some(path), None) => path.display().to_string(),
                (None, _) => "no bwrap on PATH".to_owned(),
            };
            let userns = match (
                facts.unprivileged_userns_clone.as_deref(),
                facts.max_user_namespaces.as_deref(),
            ) {
                (Some("0"), _) | (_, Some("0")) => "user namespaces: disabled",
                _ => "user namespaces: enabled",
            };
            let apparmor = match facts.apparmor_restricts_userns.as_deref() {
                Some("1") => "AppArmor: restricts unprivileged user namespaces",
                _ => "AppArmor: no user-namespace restriction",
            };
            let root = if facts.root { "; running as root" } else { "" };
            format!("{program}; {userns}; {apparmor}{root}")
        }
        Tier::Landlock => match facts.landlock_abi {
            0 => format!(
                "no Landlock in this kernel (LSMs: {})",
                facts.lsm.as_deref().unwrap_or("unknown")
            ),
            abi => format!(
                "Landlock ABI {abi}: files; TCP {}; signal and abstract-socket scoping {}",
                if abi >= 4 { "yes" } else { "no (needs 4)" },
                if abi >= 6 { "yes" } else { "no (needs 6)" },
            ),
        },
        Tier::None => "always (no isolation)".to_owned(),
    }
}
