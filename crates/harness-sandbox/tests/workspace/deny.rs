//! Deny rules as the operations apply them: on the resolved path, named in the message.

use std::fs;

use harness_sandbox::{Access, Error, Workspace};

use crate::support::Fixture;

fn assert_denied(result: Result<(), Error>, candidate: &str, access: &str, rule: &str) {
    match result {
        Err(error @ Error::Denied { .. }) => {
            assert_eq!(
                error.to_string(),
                format!(
                    "refusing to {access} {candidate}: it matches the deny rule `{rule}` (the \
                     workspace protects secrets and git internals; leave this path alone)"
                )
            );
            let io: std::io::Error = error.into();
            assert_eq!(io.kind(), std::io::ErrorKind::PermissionDenied);
        }
        other => panic!("{access} {candidate}: expected a refusal by `{rule}`, got {other:?}"),
    }
}

#[test]
fn secrets_are_neither_read_nor_written() {
    let fixture = Fixture::new();
    for name in [
        ".env",
        "config/.env.local",
        "tls/server.pem",
        "server.key",
        "id_rsa",
        "id_ed25519.pub",
    ] {
        fixture.file(name, "secret");
    }
    let workspace = fixture.workspace();
    for (candidate, rule) in [
        (".env", ".env"),
        ("config/.env.local", ".env.*"),
        ("tls/server.pem", "*.pem"),
        ("server.key", "*.key"),
        ("id_rsa", "id_rsa*"),
        ("id_ed25519.pub", "id_ed25519*"),
    ] {
        assert_denied(workspace.read(candidate).map(drop), candidate, "read", rule);
        assert_denied(
            workspace.read_to_string(candidate).map(drop),
            candidate,
            "read",
            rule,
        );
        assert_denied(
            workspace.metadata(candidate).map(drop),
            candidate,
            "read",
            rule,
        );
        assert_denied(
            workspace.check(candidate, Access::Read).map(drop),
            candidate,
            "read",
            rule,
        );
        assert_denied(workspace.write(candidate, "x"), candidate, "write", rule);
        assert_denied(workspace.remove_file(candidate), candidate, "write", rule);
        assert_eq!(
            fs::read_to_string(fixture.inside(candidate)).expect("untouched"),
            "secret"
        );
    }
    assert_denied(
        workspace.create_new("new.pem", "x"),
        "new.pem",
        "write",
        "*.pem",
    );
    assert_denied(
        workspace.create_dir_all("keys.key"),
        "keys.key",
        "write",
        "*.key",
    );
    assert_denied(
        workspace.read_dir("tls/server.pem").map(drop),
        "tls/server.pem",
        "read",
        "*.pem",
    );
    assert!(!fixture.inside("new.pem").exists());
}

#[test]
fn git_internals_are_readable_but_not_writable() {
    let fixture = Fixture::new();
    fixture.file(".git/config", "[core]\n");
    fixture.file(".git/hooks/README", "hooks");
    let workspace = fixture.workspace();
    assert_eq!(
        workspace.read_to_string(".git/config").expect("readable"),
        "[core]\n"
    );
    assert_eq!(workspace.read_dir(".git").expect("listable").len(), 2);
    assert_denied(
        workspace.write(".git/config", "evil"),
        ".git/config",
        "write",
        ".git",
    );
    assert_denied(
        workspace.create_new(".git/hooks/pre-commit", "#!/bin/sh"),
        ".git/hooks/pre-commit",
        "write",
        ".git",
    );
    assert_denied(
        workspace.create_dir_all(".git/hooks/new"),
        ".git/hooks/new",
        "write",
        ".git",
    );
    assert_denied(
        workspace.remove_file(".git/hooks/README"),
        ".git/hooks/README",
        "write",
        ".git",
    );
    assert_denied(
        workspace.check(".git/config", Access::Write).map(drop),
        ".git/config",
        "write",
        ".git",
    );
    // A `.git` file, as in a worktree, is protected too, and so are nested repositories.
    assert_denied(
        workspace.write(".git", "gitdir: /elsewhere"),
        ".git",
        "write",
        ".git",
    );
    fixture.dir("vendor/lib");
    assert_denied(
        workspace.write("vendor/lib/.git", "x"),
        "vendor/lib/.git",
        "write",
        ".git",
    );
    assert_eq!(
        fs::read_to_string(fixture.inside(".git/config")).expect("untouched"),
        "[core]\n"
    );
    assert!(!fixture.inside(".git/hooks/pre-commit").exists());
}

#[test]
fn rules_judge_the_resolved_path_not_the_spelling() {
    let fixture = Fixture::new();
    fixture.file(".env", "TOKEN=1");
    fixture.file(".git/config", "[core]\n");
    fixture.file("notes.txt", "notes");
    fixture.symlink(".env", "innocent.txt");
    fixture.symlink(".git", "g");
    fixture.symlink("notes.txt", "looks.key");
    let workspace = fixture.workspace();
    assert_denied(
        workspace.read("innocent.txt").map(drop),
        "innocent.txt",
        "read",
        ".env",
    );
    assert_denied(
        workspace.read("src/../.env").map(drop),
        "src/../.env",
        "read",
        ".env",
    );
    assert_denied(
        workspace.write("g/config", "evil"),
        "g/config",
        "write",
        ".git",
    );
    let absolute = format!("{}/.env", fixture.root_str());
    assert_denied(
        workspace.read(&absolute).map(drop),
        &absolute,
        "read",
        ".env",
    );
    // A link named like a secret that points at an ordinary file is an ordinary file.
    assert_eq!(
        workspace.read_to_string("looks.key").expect("readable"),
        "notes"
    );
    assert_eq!(
        fs::read_to_string(fixture.inside(".git/config")).expect("untouched"),
        "[core]\n"
    );
}

#[test]
fn removing_a_link_is_judged_on_the_link_itself() {
    let fixture = Fixture::new();
    fixture.file(".env", "TOKEN=1");
    fixture.symlink(".env", "shortcut");
    let workspace = fixture.workspace();
    workspace
        .remove_file("shortcut")
        .expect("the link is not a secret");
    assert!(fixture.inside(".env").exists());
}

#[test]
fn rules_are_configurable() {
    let fixture = Fixture::new();
    fixture.file(".env", "TOKEN=1");
    fixture.file("data/app.sqlite", "db");
    fixture.file("Cargo.lock", "lock");
    let workspace = Workspace::builder(&fixture.root)
        .deny("*.sqlite")
        .deny_write("Cargo.lock")
        .build()
        .expect("workspace");
    assert_denied(
        workspace.read("data/app.sqlite").map(drop),
        "data/app.sqlite",
        "read",
        "*.sqlite",
    );
    assert_eq!(
        workspace.read_to_string("Cargo.lock").expect("readable"),
        "lock"
    );
    assert_denied(
        workspace.write("Cargo.lock", "x"),
        "Cargo.lock",
        "write",
        "Cargo.lock",
    );
    assert_denied(workspace.read(".env").map(drop), ".env", "read", ".env");

    let open = Workspace::builder(&fixture.root)
        .clear_rules()
        .deny_write("data")
        .build()
        .expect("workspace");
    assert_eq!(
        open.read_to_string(".env").expect("no default rules"),
        "TOKEN=1"
    );
    open.write(".git-like", "x").expect("nothing refuses it");
    assert_denied(
        open.write("data/app.sqlite", "x"),
        "data/app.sqlite",
        "write",
        "data",
    );
}

#[test]
fn an_invalid_rule_is_refused_when_building() {
    let fixture = Fixture::new();
    let error = Workspace::builder(&fixture.root)
        .deny("src/[")
        .build()
        .expect_err("bad glob");
    assert!(
        matches!(&error, Error::InvalidRule { rule, .. } if rule == "src/["),
        "{error:?}"
    );
}

#[test]
fn deny_predicates_answer_for_relative_and_absolute_paths() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace();
    let root = fixture.root_str();
    for (path, read, write) in [
        (".env", true, true),
        ("a/b/.env", true, true),
        ("./.env", true, true),
        ("src/main.rs", false, false),
        (".git/config", false, true),
        (".git", false, true),
        (".", false, false),
        ("", false, false),
        // Paths that cannot be judged as workspace-relative are refused.
        ("../.env", true, true),
        ("src/../main.rs", true, true),
        ("/etc/hostname", true, true),
        (&format!("{root}-evil/main.rs"), true, true),
        // Absolute paths under the root are judged on their relative part.
        (&format!("{root}/src/main.rs"), false, false),
        (&format!("{root}/.env"), true, true),
        (&format!("{root}/.git/index"), false, true),
        (&root, false, false),
    ] {
        assert_eq!(workspace.is_read_denied(path), read, "read {path}");
        assert_eq!(workspace.is_write_denied(path), write, "write {path}");
    }
}
