//! `harness trust`: trust a repository's `harness.toml` by its exact content, say whether
//! it is trusted, or forget the trust (see `harness_app::trust` and `harness_app::settings`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use harness_app::{quote, settings, trust};

use crate::commands::workspace_root;
use crate::display::Out;
use crate::shown::Shown;

/// Trust the workspace's harness.toml as it is now, so that its settings that widen access
/// or send data elsewhere (host, api, model, writable, network, allow_test_edits, a weaker
/// sandbox, a wider allow) apply. Any change to the file makes it untrusted again.
#[derive(Debug, Args)]
pub(crate) struct TrustCommand {
    /// The workspace whose harness.toml to trust.
    #[arg(long, value_name = "DIR", default_value = ".")]
    workspace: PathBuf,

    /// Forget the trust recorded for this workspace.
    #[arg(long, conflicts_with = "show")]
    revoke: bool,

    /// Say whether the harness.toml is trusted and what trusting it lets it choose; change
    /// nothing.
    #[arg(long)]
    show: bool,
}

pub(crate) fn exec(command: TrustCommand) -> anyhow::Result<ExitCode> {
    let root = workspace_root(&command.workspace)?;
    let mut out = Out::stdout();
    if command.revoke {
        return revoke(&mut out, &root);
    }
    let loaded = settings::load(&root)?;
    let Some(project) = loaded.project else {
        let line = format!(
            "no {} in {}: nothing to trust",
            settings::WORKSPACE_FILE,
            root.display()
        );
        if command.show {
            out.line(&Shown::line(&line))?;
            return Ok(ExitCode::SUCCESS);
        }
        anyhow::bail!("{line}");
    };
    let widening = settings::needs_trust(&project, &loaded.user)?;
    let settings: Vec<String> = widening
        .iter()
        .map(|ignored| format!("{} = {}", ignored.key, ignored.value))
        .collect();
    let sets = if settings.is_empty() {
        "it sets nothing that needs trust".to_owned()
    } else {
        format!("what needs trust: {}", settings.join(", "))
    };
    let text = if command.show {
        format!(
            "{}: {} (content sha256 {})\n{sets}",
            project.path.display(),
            project.trust.describe(),
            project.sha256
        )
    } else {
        let file = trust::record(&root, &project.sha256)?;
        format!(
            "trusted: {} as it is now (content sha256 {}), recorded in {}\n{sets}\nAny change \
             to the file makes it untrusted again; to forget it: harness trust --revoke \
             --workspace {}",
            project.path.display(),
            project.sha256,
            file.display(),
            quote(&root.display().to_string())
        )
    };
    out.line(&Shown::text(&text))?;
    Ok(ExitCode::SUCCESS)
}

/// Forgets the trust recorded for the workspace `root`, and says whether there was one.
fn revoke(out: &mut Out, root: &Path) -> anyhow::Result<ExitCode> {
    let line = if trust::revoke(root)? {
        format!(
            "no longer trusted: the harness.toml of {}; its settings that need trust are \
             ignored again",
            root.display()
        )
    } else {
        format!("nothing was trusted in {}", root.display())
    };
    out.line(&Shown::line(&line))?;
    Ok(ExitCode::SUCCESS)
}
