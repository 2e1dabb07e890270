//! The escape table: every route out of the root, each run against every operation.
//!
//! Each row sets up the root, names a candidate, and expects [`Error::Escape`] naming that
//! candidate from every operation, with nothing outside the root changed afterwards. For
//! rows whose last component is itself a link out, `remove_file` removes the link (it never
//! follows a final link) and must leave its target alone.

use std::fs;

use harness_sandbox::Error;

use crate::support::{Fixture, OPERATIONS, SECRET};

/// What `remove_file` does with the row's candidate.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Remove {
    /// Refuses it like every other operation.
    Escapes,
    /// Removes the link named by the candidate, inside the root.
    TheLinkItself,
}

macro_rules! escape_table {
    ($($name:ident($fx:ident) $setup:block => $candidate:expr, remove: $remove:ident;)*) => {$(
        #[test]
        fn $name() {
            let $fx = Fixture::new();
            $setup
            let candidate: String = ($candidate).into();
            assert_every_operation_escapes(&$fx, &candidate, Remove::$remove);
        }
    )*};
}

fn assert_every_operation_escapes(fixture: &Fixture, candidate: &str, remove: Remove) {
    let workspace = fixture.workspace();
    let before = fixture.outside_snapshot();
    let expected = format!("path escapes the workspace: {candidate} ");
    for (name, operation) in OPERATIONS {
        let result = operation(&workspace, candidate);
        if *name == "remove_file" && remove == Remove::TheLinkItself {
            result.unwrap_or_else(|error| panic!("remove_file({candidate:?}): {error}"));
            assert!(
                fs::symlink_metadata(fixture.inside(candidate)).is_err(),
                "remove_file({candidate:?}) left the link"
            );
            continue;
        }
        match result {
            Err(error @ Error::Escape { .. }) => {
                assert!(error.to_string().starts_with(&expected), "{name}: {error}");
                let io: std::io::Error = error.into();
                assert_eq!(io.kind(), std::io::ErrorKind::PermissionDenied, "{name}");
            }
            other => panic!("{name}({candidate:?}) should escape, got {other:?}"),
        }
    }
    assert_eq!(
        fixture.outside_snapshot(),
        before,
        "something outside the root changed"
    );
    assert_eq!(
        fs::read(fixture.outside("secret.txt")).expect("the secret"),
        SECRET
    );
}

escape_table! {
    // Relative traversal.
    dotdot(_fx) {} => "..", remove: Escapes;
    dotdot_after_dot(_fx) {} => "./..", remove: Escapes;
    traversal_to_etc(_fx) {} => "../../etc/passwd", remove: Escapes;
    traversal_to_a_file_outside(_fx) {} => "../outside/secret.txt", remove: Escapes;
    traversal_after_a_real_directory(fx) { fx.dir("src"); } => "src/../../outside/secret.txt", remove: Escapes;
    traversal_that_would_come_back(fx) { fx.file("a.txt", "inside"); } => "../work/a.txt", remove: Escapes;

    // Absolute paths outside.
    absolute_etc(_fx) {} => "/etc/passwd", remove: Escapes;
    absolute_slash(_fx) {} => "/", remove: Escapes;
    absolute_outside_file(fx) {} => fx.outside_str("secret.txt"), remove: Escapes;
    absolute_new_file_outside(fx) {} => fx.outside_str("new.txt"), remove: Escapes;
    absolute_root_then_dotdot(fx) {} => format!("{}/../outside/secret.txt", fx.root_str()), remove: Escapes;
    absolute_parent_of_the_root(fx) {} => format!("{}/..", fx.root_str()), remove: Escapes;

    // The sibling whose name starts with the root's.
    sibling_prefix_relative(_fx) {} => "../work-evil/f.txt", remove: Escapes;
    sibling_prefix_absolute(fx) {} => format!("{}-evil/f.txt", fx.root_str()), remove: Escapes;
    sibling_prefix_new_file(fx) {} => format!("{}-evil/new.txt", fx.root_str()), remove: Escapes;

    // A symbolic link to a file outside, absolute or relative.
    link_to_file_outside_absolute(fx) { fx.symlink(fx.outside("secret.txt"), "link"); }
        => "link", remove: TheLinkItself;
    link_to_file_outside_relative(fx) { fx.symlink("../outside/secret.txt", "link"); }
        => "link", remove: TheLinkItself;
    link_in_a_subdirectory_to_outside(fx) { fx.symlink("../../outside/secret.txt", "src/link"); }
        => "src/link", remove: TheLinkItself;

    // A symbolic link to a directory outside, used as a middle component.
    link_to_dir_outside_absolute(fx) { fx.symlink(fx.outside("dir"), "d"); }
        => "d/secret.txt", remove: Escapes;
    link_to_dir_outside_relative(fx) { fx.symlink("../outside/dir", "d"); }
        => "d/secret.txt", remove: Escapes;
    link_to_dir_outside_new_file(fx) { fx.symlink("../outside/dir", "d"); }
        => "d/new.txt", remove: Escapes;
    link_to_the_parent_of_the_root(fx) { fx.symlink("..", "up"); }
        => "up/outside/secret.txt", remove: Escapes;
    link_to_filesystem_root(fx) { fx.symlink("/", "slash"); }
        => "slash/etc/passwd", remove: Escapes;

    // Chains of links.
    chain_of_links_to_outside(fx) {
        fx.symlink("l2", "l1");
        fx.symlink("sub/l3", "l2");
        fx.symlink("../../outside/secret.txt", "sub/l3");
    } => "l1", remove: TheLinkItself;
    chain_through_directories(fx) {
        fx.symlink("../b/l", "a/l");
        fx.symlink("../../outside", "b/l");
    } => "a/l/secret.txt", remove: Escapes;
    chain_ending_in_an_absolute_link(fx) {
        fx.symlink("l2", "l1");
        fx.symlink(fx.outside("dir"), "l2");
    } => "l1/secret.txt", remove: Escapes;

    // `..` after a link: physically outside although textually inside.
    dotdot_after_a_link_to_the_root(fx) { fx.dir("sub"); fx.symlink("..", "sub/up"); }
        => "sub/up/../outside/secret.txt", remove: Escapes;
    dotdot_after_a_link_to_a_directory(fx) { fx.dir("a/b"); fx.symlink("a/b", "deep"); }
        => "deep/../../../outside/secret.txt", remove: Escapes;
    link_target_with_dotdot_out(fx) { fx.dir("x"); fx.symlink("../..", "x/l"); }
        => "x/l/outside/secret.txt", remove: Escapes;

    // An absolute link is refused even when it names a place inside the root, as
    // RESOLVE_BENEATH does.
    absolute_link_to_the_root_itself(fx) { fx.file("a.txt", "inside"); fx.symlink(&fx.root, "r"); }
        => "r/a.txt", remove: Escapes;

    // Missing intermediate directories with `..`.
    missing_directory_then_dotdot_out(_fx) {} => "nope/../../outside/secret.txt", remove: Escapes;
    missing_directories_then_dotdot_out(_fx) {} => "nope/deeper/../../../outside/new.txt", remove: Escapes;
    missing_directory_after_a_real_one(fx) { fx.dir("src"); }
        => "src/nope/../../../outside/new.txt", remove: Escapes;

    // Dangling links out: a write must not create the outside file.
    dangling_link_out_absolute(fx) { fx.symlink(fx.outside("new.txt"), "dl"); }
        => "dl", remove: TheLinkItself;
    dangling_link_out_relative(fx) { fx.symlink("../outside/new.txt", "dl"); }
        => "dl", remove: TheLinkItself;
    dangling_directory_link_out(fx) { fx.symlink("../outside/newdir", "dd"); }
        => "dd/new.txt", remove: Escapes;

    // /proc/self/root: another spelling of `/`, and of the root.
    proc_self_root_etc(_fx) {} => "/proc/self/root/etc/passwd", remove: Escapes;
    proc_self_root_spelling_of_the_root(fx) { fx.file("a.txt", "inside"); }
        => format!("/proc/self/root{}/a.txt", fx.root_str()), remove: Escapes;
    link_to_proc_self_root(fx) { fx.symlink("/proc/self/root", "p"); }
        => "p/etc/passwd", remove: Escapes;
    link_to_proc_self_cwd(fx) { fx.symlink("/proc/self/cwd", "cwd"); }
        => "cwd/Cargo.toml", remove: Escapes;

    // Very long paths that stay under the length limit.
    long_traversal(_fx) {} => format!("{}etc/passwd", "../".repeat(1300)), remove: Escapes;
    long_detour_then_out(fx) { fx.dir("a"); }
        => format!("{}../outside/secret.txt", "a/../".repeat(800)), remove: Escapes;
}
