//! The allowed table: paths that stay inside, each checked against the operations.
//!
//! Each row names a candidate and the workspace-relative path it must resolve to. The
//! operations must agree with that answer: reading returns that file, writing replaces that
//! file, listing lists that directory.

use std::fs;

use harness_sandbox::{Access, FileType};

use crate::support::Fixture;

macro_rules! allowed_table {
    ($($name:ident($fx:ident) $setup:block => $candidate:expr, resolves to $relative:expr;)*) => {$(
        #[test]
        fn $name() {
            let $fx = Fixture::new();
            $setup
            let candidate: String = ($candidate).into();
            assert_resolves_inside(&$fx, &candidate, $relative);
        }
    )*};
}

fn assert_resolves_inside(fixture: &Fixture, candidate: &str, relative: &str) {
    let workspace = fixture.workspace();
    let absolute = fixture.inside(relative);
    let absolute = if relative == "." {
        fixture.root.clone()
    } else {
        absolute
    };
    assert_eq!(
        workspace.relative(candidate).expect("relative"),
        relative,
        "{candidate}"
    );
    assert_eq!(
        workspace.resolve(candidate).expect("resolve"),
        absolute,
        "{candidate}"
    );
    for access in [Access::Read, Access::Write] {
        assert_eq!(workspace.check(candidate, access).expect("check"), absolute);
    }
    let metadata = workspace.metadata(candidate).expect("metadata");
    let expected = fs::metadata(&absolute).expect("the expected target exists");
    assert_eq!(metadata.is_dir(), expected.is_dir(), "{candidate}");
    if expected.is_dir() {
        let names: Vec<String> = workspace
            .read_dir(candidate)
            .expect("read_dir")
            .iter()
            .map(|entry| entry.name().to_owned())
            .collect();
        let mut expected_names: Vec<String> = fs::read_dir(&absolute)
            .expect("list the expected directory")
            .map(|entry| {
                entry
                    .expect("an entry")
                    .file_name()
                    .into_string()
                    .expect("UTF-8")
            })
            .collect();
        expected_names.sort();
        assert_eq!(names, expected_names, "{candidate}");
        workspace
            .create_dir_all(candidate)
            .expect("create_dir_all of an existing directory");
    } else {
        assert_eq!(metadata.file_type(), FileType::File);
        assert_eq!(metadata.len(), expected.len());
        let contents = fs::read(&absolute).expect("the expected file");
        assert_eq!(
            workspace.read(candidate).expect("read"),
            contents,
            "{candidate}"
        );
        workspace.write(candidate, "rewritten").expect("write");
        assert_eq!(
            fs::read_to_string(&absolute).expect("read back"),
            "rewritten"
        );
    }
}

allowed_table! {
    // Nested and redundant spellings.
    nested_file(fx) { fx.file("src/main.py", "print()"); } => "src/main.py", resolves to "src/main.py";
    nested_directory(fx) { fx.file("src/main.py", "print()"); } => "src", resolves to "src";
    trailing_slash(fx) { fx.file("src/main.py", "print()"); } => "src/", resolves to "src";
    dot_and_double_slash(fx) { fx.file("src/a.txt", "a"); } => "./src//./a.txt", resolves to "src/a.txt";
    dotdot_that_stays_inside(fx) { fx.file("src/a.txt", "a"); } => "src/../src/a.txt", resolves to "src/a.txt";
    the_root_as_dot(fx) { fx.file("a.txt", "a"); } => ".", resolves to ".";
    the_root_as_empty(fx) { fx.file("a.txt", "a"); } => "", resolves to ".";
    dot_names_that_are_not_dotdot(fx) { fx.file("...", "three"); fx.file("..a/b", "b"); }
        => "..a/../...", resolves to "...";
    unusual_but_valid_names(fx) { fx.file("données/-rf été.txt", "x"); }
        => "données/-rf été.txt", resolves to "données/-rf été.txt";
    deeply_nested(fx) { fx.file(&format!("{}f.txt", "d/".repeat(60)), "deep"); }
        => format!("{}f.txt", "d/".repeat(60)), resolves to &format!("{}f.txt", "d/".repeat(60));

    // Absolute paths inside.
    absolute_file_inside(fx) { fx.file("src/a.txt", "a"); }
        => format!("{}/src/a.txt", fx.root_str()), resolves to "src/a.txt";
    absolute_root(fx) { fx.file("a.txt", "a"); } => fx.root_str(), resolves to ".";
    absolute_with_dotdot_inside(fx) { fx.file("src/a.txt", "a"); }
        => format!("{}/src/../src/a.txt", fx.root_str()), resolves to "src/a.txt";

    // Links that stay inside.
    link_to_a_file_inside(fx) { fx.file("src/a.txt", "a"); fx.symlink("src/a.txt", "link"); }
        => "link", resolves to "src/a.txt";
    link_to_a_directory_inside_as_middle_component(fx) {
        fx.file("src/a.txt", "a");
        fx.symlink("src", "d");
    } => "d/a.txt", resolves to "src/a.txt";
    dotdot_after_a_link_is_physical(fx) {
        fx.file("a/x.txt", "x");
        fx.dir("a/b/c");
        fx.symlink("a/b/c", "deep");
    } => "deep/../../x.txt", resolves to "a/x.txt";
    chain_of_links_inside(fx) {
        fx.file("src/a.txt", "a");
        fx.symlink("l2", "l1");
        fx.symlink("src/a.txt", "l2");
    } => "l1", resolves to "src/a.txt";
    relative_link_going_up_inside(fx) { fx.file("top.txt", "t"); fx.symlink("../top.txt", "src/up"); }
        => "src/up", resolves to "top.txt";
    link_target_with_dot_components(fx) {
        fx.file("src/a.txt", "a");
        fx.symlink("./src/../src/./a.txt", "l");
    } => "l", resolves to "src/a.txt";
    link_to_dot(fx) { fx.file("a.txt", "a"); fx.symlink(".", "self"); }
        => "self/self/a.txt", resolves to "a.txt";
}
