//! What a repository's `harness.toml` may choose without the user's trust of its content
//! (the decision order of the settings' documentation), and what it set that is ignored.

use harness_exec::{Policy, Sandbox};

use super::files::{FileConfig, Project};
use crate::Error;
use crate::trust::Trust;

/// A setting of an untrusted project file that was ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignored {
    /// The setting's key.
    pub key: &'static str,
    /// Its value as the file wrote it.
    pub value: String,
    /// Why a project file may not choose it on its own.
    pub why: String,
}

/// `name` as a sandbox tier, or an error saying which names there are.
pub(super) fn parse_sandbox(name: &str) -> Result<Sandbox, Error> {
    name.parse().map_err(|tier| Error::UnknownSandbox { tier })
}

/// How strict a sandbox setting is: bwrap, then auto (which picks bwrap where it works and
/// falls back), then landlock, then none.
fn strictness(sandbox: Sandbox) -> u8 {
    match sandbox {
        Sandbox::Only(harness_exec::Tier::Bwrap) => 3,
        Sandbox::Auto => 2,
        Sandbox::Only(harness_exec::Tier::Landlock) => 1,
        Sandbox::Only(harness_exec::Tier::None) => 0,
    }
}

/// The project file's settings that apply, and those ignored: everything when the user
/// trusts the file's content, else what the crate documentation's decision order allows a
/// project file on its own. `deny` is left out of the settings that apply: the project's
/// rules are a list of their own, trusted or not.
pub(super) fn admit(
    project: &Project,
    user: &FileConfig,
) -> Result<(FileConfig, Vec<Ignored>), Error> {
    let mut admitted = project.config.clone();
    admitted.deny = None;
    // A bad value is an error whether or not it would apply.
    let wanted = admitted.sandbox.as_deref().map(parse_sandbox).transpose()?;
    if project.trust.is_trusted() {
        return Ok((admitted, Vec::new()));
    }
    let mut ignored = Vec::new();
    let mut ignore = |key: &'static str, value: String, why: &str| {
        ignored.push(Ignored {
            key,
            value,
            why: why.to_owned(),
        });
    };
    const ELSEWHERE: &str = "it decides where your task, your files and every command's \
                             output are sent";
    let elsewhere = [
        ("host", admitted.host.take()),
        ("api", admitted.api.take()),
        ("model", admitted.model.take()),
    ];
    for (key, value) in elsewhere {
        if let Some(value) = value {
            ignore(key, format!("{value:?}"), ELSEWHERE);
        }
    }
    if let Some(writable) = admitted.writable.take_if(|paths| !paths.is_empty()) {
        ignore(
            "writable",
            format!("{writable:?}"),
            "it lets commands write outside the workspace",
        );
    }
    if admitted.network.take_if(|network| *network).is_some() {
        ignore(
            "network",
            "true".to_owned(),
            "it lets commands use the network",
        );
    }
    if admitted.allow_test_edits.take_if(|allow| *allow).is_some() {
        ignore(
            "allow_test_edits",
            "true".to_owned(),
            "it lets the file tools change the tests that decide whether a run is verified",
        );
    }
    if let Some(wanted) = wanted
        && let Some(why) = weaker_than_yours(wanted, user)?
    {
        admitted.sandbox = None;
        ignore("sandbox", format!("{:?}", wanted.to_string()), &why);
    }
    if let Some(allow) = admitted.allow.take() {
        match narrowed_allow(&allow, user.allow.as_deref()) {
            Ok(programs) => admitted.allow = Some(programs),
            Err(why) => ignore("allow", format!("{allow:?}"), &why),
        }
    }
    Ok((admitted, ignored))
}

/// Why the sandbox `wanted` is weaker than the user's (`auto` without one), or `None` when
/// it is at least as strict.
fn weaker_than_yours(wanted: Sandbox, user: &FileConfig) -> Result<Option<String>, Error> {
    let yours = user
        .sandbox
        .as_deref()
        .map(parse_sandbox)
        .transpose()?
        .unwrap_or_default();
    Ok((strictness(wanted) < strictness(yours))
        .then(|| format!("it is weaker than your sandbox ({yours})")))
}

/// The settings of `project` that apply only once the user trusts it, as if it were not
/// trusted: what `harness trust` shows the user before and when they trust it.
///
/// # Errors
///
/// A `sandbox` the project's or the user's file names that is no tier.
pub fn needs_trust(project: &Project, user: &FileConfig) -> Result<Vec<Ignored>, Error> {
    let untrusted = Project {
        trust: Trust::Untrusted,
        ..project.clone()
    };
    Ok(admit(&untrusted, user)?.1)
}

/// The allowlist an untrusted project's `allow` may set: the programs both it and the
/// user's allowlist name; without a user allowlist, its own if every program it names is
/// a name (not a path) that the blocklist lets run. `Err` says why it would widen.
pub(super) fn narrowed_allow(
    project: &[String],
    user: Option<&[String]>,
) -> Result<Vec<String>, String> {
    match user {
        Some(user) if !user.is_empty() => {
            let both: Vec<String> = project
                .iter()
                .filter(|program| user.contains(program))
                .cloned()
                .collect();
            if both.is_empty() {
                Err("it names none of the programs your allowlist allows".to_owned())
            } else {
                Ok(both)
            }
        }
        _ => {
            let blocklist = Policy::blocklist();
            match project.iter().find(|program| {
                program.contains('/') || blocklist.check(&[program.as_str()]).is_err()
            }) {
                Some(program) => Err(format!(
                    "it allows `{program}`, which the blocklist it replaces would not let run \
                     on its own"
                )),
                None => Ok(project.to_vec()),
            }
        }
    }
}
