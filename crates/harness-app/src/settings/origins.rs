//! Where each setting that matters for safety or for where data goes came from, for the
//! run's header: a flag, the project's file, the user's, or the default.

use super::files::FileConfig;
use super::overrides::Overrides;

/// Where one setting came from, for the header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The setting's key.
    pub key: &'static str,
    /// `flag`, `user`, `project`, `default`, or a combination (`user + project` for deny).
    pub from: String,
}

/// Where each setting that matters for safety or for where data goes comes from: a flag,
/// the project's file (its settings that apply), the user's file, or the default.
pub(super) fn origins(
    flags: &Overrides,
    user: &FileConfig,
    project: &FileConfig,
    project_deny: &[String],
) -> Vec<Origin> {
    let from = |flag: bool, project: bool, user: bool| {
        match (flag, project, user) {
            (true, _, _) => "flag",
            (_, true, _) => "project",
            (_, _, true) => "user",
            _ => "default",
        }
        .to_owned()
    };
    let writable = match (
        !flags.writable.is_empty(),
        project.writable.is_some() || user.writable.is_some(),
    ) {
        (true, true) => "flag + config".to_owned(),
        (flag, _) => from(flag, project.writable.is_some(), user.writable.is_some()),
    };
    let deny = match (user.deny.is_some(), !project_deny.is_empty()) {
        (true, true) => "user + project",
        (true, false) => "user",
        (false, true) => "project",
        (false, false) => "default",
    }
    .to_owned();
    vec![
        Origin {
            key: "host",
            from: from(
                flags.host.is_some(),
                project.host.is_some(),
                user.host.is_some(),
            ),
        },
        Origin {
            key: "api",
            from: from(
                flags.api.is_some(),
                project.api.is_some(),
                user.api.is_some(),
            ),
        },
        Origin {
            key: "model",
            from: from(
                flags.model.is_some(),
                project.model.is_some(),
                user.model.is_some(),
            ),
        },
        Origin {
            key: "verify",
            from: from(
                flags.verify.is_some(),
                project.verify.is_some(),
                user.verify.is_some(),
            ),
        },
        Origin {
            key: "sandbox",
            from: from(
                flags.sandbox.is_some(),
                project.sandbox.is_some(),
                user.sandbox.is_some(),
            ),
        },
        Origin {
            key: "allow",
            from: from(
                !flags.allow.is_empty(),
                project.allow.is_some(),
                user.allow.is_some(),
            ),
        },
        Origin {
            key: "writable",
            from: writable,
        },
        Origin {
            key: "network",
            from: from(
                flags.network,
                project.network.is_some(),
                user.network.is_some(),
            ),
        },
        Origin {
            key: "deny",
            from: deny,
        },
        Origin {
            key: "allow_test_edits",
            from: from(
                flags.allow_test_edits,
                project.allow_test_edits.is_some(),
                user.allow_test_edits.is_some(),
            ),
        },
    ]
}
