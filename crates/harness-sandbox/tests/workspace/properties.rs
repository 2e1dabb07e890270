//! Generated trees and paths: nothing resolved or opened lies outside the root, and the
//! walk agrees with cap-std's own confined `open`.
//!
//! A tiny path alphabet (`a`, `b`, `.`, `..`) builds both the tree (files, directories and
//! links to inside, outside, the root, the parent, or nowhere) and the candidates, in the
//! manner of cap-std's `fuzz/fuzz_targets/cap-primitives.rs`. The names `a` and `b` also
//! exist outside, holding the secret, so a walk that leaked out would find something.

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use camino::Utf8Path;
use harness_sandbox::Workspace;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;

use crate::support::{Fixture, SECRET};

const TOKENS: [&str; 4] = ["a", "b", ".", ".."];

#[derive(Clone, Debug)]
enum Target {
    /// A relative target made of tokens: inside, or out through `..`.
    Tokens(Vec<&'static str>),
    /// `base/outside`, absolute.
    OutsideDir,
    /// `base/outside/secret.txt`, absolute.
    OutsideSecret,
    /// `base/outside`, relative: exactly as many `..` as the link is deep.
    OutsideRelative,
    /// The root, absolute.
    Root,
    /// `..`.
    Parent,
    /// A missing name inside.
    Nowhere,
}

#[derive(Clone, Debug)]
enum Node {
    File,
    Dir,
    Link(Target),
}

#[derive(Clone, Copy, Debug)]
enum Prefix {
    None,
    Root,
    Outside,
}

fn token() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(&TOKENS[..])
}

/// Candidate tokens lean towards names, so that many candidates reach something.
fn candidate_token() -> impl Strategy<Value = &'static str> {
    prop_oneof![3 => Just("a"), 3 => Just("b"), 1 => Just("."), 1 => Just("..")]
}

fn name() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(&TOKENS[..2])
}

fn node() -> impl Strategy<Value = Node> {
    prop_oneof![
        6 => Just(Node::File),
        2 => Just(Node::Dir),
        4 => vec(token(), 1..4).prop_map(|tokens| Node::Link(Target::Tokens(tokens))),
        1 => Just(Node::Link(Target::OutsideDir)),
        1 => Just(Node::Link(Target::OutsideSecret)),
        1 => Just(Node::Link(Target::OutsideRelative)),
        1 => Just(Node::Link(Target::Root)),
        1 => Just(Node::Link(Target::Parent)),
        1 => Just(Node::Link(Target::Nowhere)),
    ]
}

fn tree() -> impl Strategy<Value = Vec<(Vec<&'static str>, Node)>> {
    vec((vec(name(), 1..4), node()), 2..12)
}

/// A candidate: where it starts, optionally the path of one of the tree's entries (so that
/// many candidates meet a file or a link), then a few more tokens.
fn candidate() -> impl Strategy<Value = (Prefix, Option<Index>, Vec<&'static str>)> {
    let prefix = prop_oneof![
        6 => Just(Prefix::None),
        2 => Just(Prefix::Root),
        1 => Just(Prefix::Outside),
    ];
    (
        prefix,
        proptest::option::weighted(0.7, any::<Index>()),
        vec(candidate_token(), 0..3),
    )
}

/// Builds the generated tree; entries that cannot be made (a name already taken, a parent
/// that is a file) are skipped, as a real tree would have them.
fn build(fixture: &Fixture, tree: &[(Vec<&'static str>, Node)]) {
    for name in ["a", "b"] {
        fs::write(fixture.outside(name), SECRET).expect("outside file");
    }
    for (names, node) in tree {
        let relative = names.join("/");
        let path = fixture.inside(&relative);
        if let Some(parent) = path.parent() {
            let _ = fs::create_dir_all(parent);
        }
        let target = |target: &Target| match target {
            Target::Tokens(tokens) => tokens.join("/"),
            Target::OutsideDir => fixture.outside_str(""),
            Target::OutsideSecret => fixture.outside_str("secret.txt"),
            Target::OutsideRelative => format!("{}outside", "../".repeat(names.len())),
            Target::Root => fixture.root_str(),
            Target::Parent => "..".to_owned(),
            Target::Nowhere => "nowhere".to_owned(),
        };
        let _ = match node {
            Node::File => fs::write(&path, format!("inside: {relative}")),
            Node::Dir => fs::create_dir(&path),
            Node::Link(link) => std::os::unix::fs::symlink(target(link), &path),
        };
    }
}

/// Where `path` really is: itself canonicalized if it exists, else its deepest existing
/// ancestor canonicalized.
fn real_location(path: &Utf8Path) -> std::path::PathBuf {
    let mut existing: &Path = path.as_std_path();
    loop {
        match fs::canonicalize(existing) {
            Ok(real) => return real,
            Err(_) => existing = existing.parent().expect("the root exists"),
        }
    }
}

fn check(fixture: &Fixture, workspace: &Workspace, candidate: &str, prefix: Prefix) {
    let root = &fixture.root;
    let before = fixture.outside_snapshot();
    let resolved = workspace.resolve(candidate);
    if let Prefix::Outside = prefix {
        assert!(
            resolved.is_err(),
            "an absolute path outside resolved: {resolved:?}"
        );
    }
    if let Ok(resolved) = &resolved {
        assert!(resolved.starts_with(root), "resolved outside: {resolved}");
        assert!(
            real_location(resolved).starts_with(root),
            "really outside: {resolved}"
        );
        if fs::symlink_metadata(resolved).is_ok() {
            // Resolved means resolved: no link or `..` left to follow.
            assert_eq!(
                fs::canonicalize(resolved).expect("exists"),
                resolved.as_std_path()
            );
        }
    }

    // Differential: cap-std's confined open of the same relative path. When it opens
    // something, the walk must have resolved the path to that very file.
    if let Prefix::None = prefix {
        let cap = cap_std::fs::Dir::open_ambient_dir(root, cap_std::ambient_authority())
            .expect("open the root");
        match cap
            .open(candidate)
            .and_then(|file| file.into_std().metadata())
        {
            Ok(opened) => {
                let resolved = resolved
                    .as_ref()
                    .expect("cap-std opened what the walk refused");
                let walked = fs::metadata(resolved).expect("the resolved path exists");
                assert_eq!((walked.dev(), walked.ino()), (opened.dev(), opened.ino()));
            }
            Err(error) if error.kind() == io::ErrorKind::PermissionDenied => {
                assert!(resolved.is_err(), "cap-std saw an escape the walk accepted");
            }
            Err(_) => {}
        }
    }

    if let Ok(contents) = workspace.read(candidate) {
        assert_ne!(contents, SECRET, "read returned the secret");
        let resolved = resolved.as_ref().expect("read what resolve refused");
        assert_eq!(contents, fs::read(resolved).expect("the resolved file"));
    }
    if let Ok(metadata) = workspace.metadata(candidate) {
        let resolved = resolved.as_ref().expect("metadata of what resolve refused");
        assert_eq!(
            metadata.is_dir(),
            fs::metadata(resolved).expect("exists").is_dir()
        );
    }
    let _ = workspace.read_dir(candidate);

    if workspace.write(candidate, "written").is_ok() {
        let resolved = resolved.as_ref().expect("wrote what resolve refused");
        assert_eq!(
            fs::read_to_string(resolved).expect("written file"),
            "written"
        );
    }
    let _ = workspace.create_new(candidate, "created");
    let _ = workspace.create_dir_all(candidate);
    let _ = workspace.remove_file(candidate);
    assert_eq!(
        fixture.outside_snapshot(),
        before,
        "{candidate}: changed something outside"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn nothing_resolved_or_opened_lies_outside_the_root(
        tree in tree(),
        (prefix, entry, tokens) in candidate(),
    ) {
        let fixture = Fixture::new();
        build(&fixture, &tree);
        let workspace = fixture.workspace();
        let entry = entry.filter(|_| !tree.is_empty()).map(|index| index.get(&tree).0.clone());
        let relative = entry.into_iter().flatten().chain(tokens).collect::<Vec<_>>().join("/");
        let candidate = match prefix {
            Prefix::None => relative,
            Prefix::Root => format!("{}/{relative}", fixture.root_str()),
            Prefix::Outside => format!("{}/{relative}", fixture.outside_str("")),
        };
        check(&fixture, &workspace, &candidate, prefix);
    }
}
