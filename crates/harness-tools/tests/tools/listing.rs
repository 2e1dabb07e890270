//! `list_dir`: paths, depth, .gitignore, the cap and its note.

use std::os::unix::fs::symlink;

use harness_sandbox::Workspace;
use harness_tools::{Detail, Limits, Toolbox};
use serde_json::json;

use crate::support::{Fixture, assert_error, ok};

fn tree() -> Fixture {
    let fixture = Fixture::new();
    fixture
        .file("README.md", "")
        .file(".hidden", "")
        .file("src/main.rs", "")
        .file("src/parse/mod.rs", "")
        .file("src/parse/deep/x.rs", "");
    fixture
}

#[test]
fn lists_two_levels_by_default_with_directories_marked() {
    let result = tree().call("list_dir", json!({}));
    assert_eq!(
        ok(&result),
        ".hidden\nREADME.md\nsrc/\nsrc/main.rs\nsrc/parse/\n"
    );
    assert_eq!(result.summary().to_string(), "list_dir .  5 entries");
    assert!(!result.may_have_changed_workspace());
}

#[test]
fn depth_counts_from_the_listed_directory() {
    let fixture = tree();
    let one = fixture.call("list_dir", json!({"path": "src/parse", "depth": 1}));
    assert_eq!(ok(&one), "src/parse/deep/\nsrc/parse/mod.rs\n");
    let five = fixture.call("list_dir", json!({"path": "src", "depth": 5}));
    assert_eq!(
        ok(&five),
        "src/main.rs\nsrc/parse/\nsrc/parse/deep/\nsrc/parse/deep/x.rs\nsrc/parse/mod.rs\n"
    );
    assert_eq!(five.summary().target(), "src");
}

#[test]
fn a_subdirectory_is_listed_two_levels_below_itself_by_default() {
    let result = tree().call("list_dir", json!({"path": "src"}));
    assert_eq!(
        ok(&result),
        "src/main.rs\nsrc/parse/\nsrc/parse/deep/\nsrc/parse/mod.rs\n"
    );
}

#[test]
fn the_default_depth_is_configurable() {
    let mut limits = Limits::default();
    limits.list_depth = 1;
    let result = tree().toolbox_with(limits).call("list_dir", &json!({}));
    assert_eq!(ok(&result), ".hidden\nREADME.md\nsrc/\n");
}

#[test]
fn gitignore_applies_without_a_repository_and_from_above_the_listed_directory() {
    let fixture = Fixture::new();
    fixture
        .file(".gitignore", "target/\n*.log\n")
        .file("src/.gitignore", "generated.rs\n")
        .file("src/lib.rs", "")
        .file("src/generated.rs", "")
        .file("src/run.log", "")
        .file("target/debug/app", "")
        .file("notes.txt", "");
    let root = fixture.call("list_dir", json!({"depth": 3}));
    assert_eq!(
        ok(&root),
        ".gitignore\nnotes.txt\nsrc/\nsrc/.gitignore\nsrc/lib.rs\n"
    );
    let src = fixture.call("list_dir", json!({"path": "src"}));
    assert_eq!(ok(&src), "src/.gitignore\nsrc/lib.rs\n");
}

#[test]
fn git_exclude_and_dot_ignore_apply_too() {
    let fixture = Fixture::new();
    fixture
        .file(".git/info/exclude", "private.txt\n")
        .file(".ignore", "scratch/\n")
        .file("scratch/notes.txt", "")
        .file("private.txt", "")
        .file("public.txt", "");
    let result = fixture.call("list_dir", json!({}));
    assert_eq!(ok(&result), ".ignore\npublic.txt\n");
}

#[test]
fn ignore_files_above_the_workspace_do_not_count() {
    let fixture = Fixture::new();
    fixture.file(".gitignore", "*.txt\n").file("work/a.txt", "");
    let toolbox = Toolbox::new(Workspace::new(fixture.path("work")).expect("a directory"));
    let result = toolbox.call("list_dir", &json!({}));
    assert_eq!(ok(&result), "a.txt\n");
}

#[test]
fn symbolic_links_are_listed_not_entered_and_can_be_listed_through() {
    let fixture = Fixture::new();
    fixture.file("real/a.txt", "");
    symlink("real", fixture.path("alias")).expect("link");
    let root = fixture.call("list_dir", json!({}));
    assert_eq!(ok(&root), "alias\nreal/\nreal/a.txt\n");
    let through = fixture.call("list_dir", json!({"path": "alias"}));
    assert_eq!(ok(&through), "real/a.txt\n");
}

#[test]
fn a_sibling_with_the_same_prefix_is_not_listed_with_the_directory() {
    let fixture = Fixture::new();
    fixture.file("src/a.rs", "").file("src-old/b.rs", "");
    let result = fixture.call("list_dir", json!({"path": "src"}));
    assert_eq!(ok(&result), "src/a.rs\n");
}

/// Seven entries, three of them at the top: `a/` (three files), `b`, `c/` (one file).
fn capped(cap: usize) -> (Fixture, Toolbox) {
    let fixture = Fixture::new();
    fixture
        .file("a/1", "")
        .file("a/2", "")
        .file("a/3", "")
        .file("b", "")
        .file("c/4", "");
    let mut limits = Limits::default();
    limits.list_entries = cap;
    let toolbox = fixture.toolbox_with(limits);
    (fixture, toolbox)
}

#[test]
fn a_capped_listing_keeps_the_shallowest_entries_and_says_how_many_are_left_out() {
    let (_fixture, toolbox) = capped(4);
    let result = toolbox.call("list_dir", &json!({}));
    assert_eq!(
        ok(&result),
        "a/\na/1\nb\nc/\n[3 more entries not shown: list a subdirectory, or a smaller depth]\n"
    );
    assert_eq!(
        result.summary().detail(),
        &Detail::Listed {
            shown: 4,
            omitted: 3
        }
    );
    assert_eq!(
        result.summary().to_string(),
        "list_dir .  4 entries, 3 more"
    );
}

#[test]
fn a_listing_at_the_cap_has_no_note_and_one_over_has() {
    let (_fixture, toolbox) = capped(7);
    let result = toolbox.call("list_dir", &json!({}));
    assert_eq!(ok(&result), "a/\na/1\na/2\na/3\nb\nc/\nc/4\n");
    assert_eq!(
        result.summary().detail(),
        &Detail::Listed {
            shown: 7,
            omitted: 0
        }
    );
    let (_fixture, toolbox) = capped(6);
    let one_more = toolbox.call("list_dir", &json!({}));
    assert_eq!(
        ok(&one_more),
        "a/\na/1\na/2\na/3\nb\nc/\n[1 more entries not shown: list a subdirectory, or a smaller depth]\n"
    );
}

#[test]
fn a_cap_of_zero_still_shows_one_entry() {
    let (_fixture, toolbox) = capped(0);
    let result = toolbox.call("list_dir", &json!({}));
    assert_eq!(
        ok(&result),
        "a/\n[6 more entries not shown: list a subdirectory, or a smaller depth]\n"
    );
}

#[test]
fn a_huge_tree_stops_the_walk_and_says_more_than() {
    let fixture = Fixture::new();
    for index in 0..201 {
        fixture.file(&format!("f{index:03}"), "");
    }
    let mut limits = Limits::default();
    limits.list_entries = 2;
    let toolbox = fixture.toolbox_with(limits);
    let result = toolbox.call("list_dir", &json!({}));
    assert_eq!(
        ok(&result),
        "f000\nf001\n[more than 198 more entries not shown: list a subdirectory, or a smaller depth]\n"
    );
    std::fs::remove_file(fixture.path("f200")).expect("remove one");
    let exactly = toolbox.call("list_dir", &json!({}));
    assert_eq!(
        ok(&exactly),
        "f000\nf001\n[198 more entries not shown: list a subdirectory, or a smaller depth]\n"
    );
}

#[test]
fn an_empty_directory_says_what_is_not_listed() {
    let fixture = Fixture::new();
    fixture
        .dir("empty")
        .file(".gitignore", "ignored/\n")
        .file("ignored/a", "");
    let result = fixture.call("list_dir", json!({"path": "empty"}));
    assert_eq!(
        ok(&result),
        "empty has no entries to show (entries ignored by .gitignore and files the workspace \
         protects are not listed)\n"
    );
    assert_eq!(result.summary().to_string(), "list_dir empty  0 entries");
}

#[test]
fn listing_a_file_points_to_read_file() {
    let fixture = Fixture::new();
    fixture.file("a.txt", "");
    let result = fixture.call("list_dir", json!({"path": "a.txt"}));
    assert_eq!(
        result.text(),
        "Error: a.txt is a file, not a directory; read it with read_file, or list the directory \
         that contains it"
    );
    assert!(result.is_error());
}

#[test]
fn listing_a_missing_directory_points_to_list_dir() {
    let fixture = Fixture::new();
    let result = fixture.call("list_dir", json!({"path": "nope"}));
    assert_error(
        &result,
        "Error: no such file or directory: nope; list_dir shows",
    );
}

#[test]
fn an_ignored_directory_or_git_itself_shows_nothing_when_named() {
    let fixture = Fixture::new();
    fixture
        .file(".gitignore", "build/\nout.log\n")
        .file("build/app.txt", "needle\n")
        .file("out.log", "needle\n")
        .file(".git/config", "needle\n")
        .file("src/a.txt", "needle\n");
    for path in ["build", ".git"] {
        let listing = fixture.call("list_dir", json!({"path": path}));
        assert_eq!(
            ok(&listing),
            format!(
                "{path} has no entries to show (entries ignored by .gitignore and files the \
                 workspace protects are not listed)\n"
            )
        );
        let found = fixture.call("search_text", json!({"pattern": "needle", "path": path}));
        assert!(
            ok(&found).starts_with("No matches"),
            "{path}: {}",
            found.text()
        );
    }
    let found = fixture.call(
        "search_text",
        json!({"pattern": "needle", "path": "out.log"}),
    );
    assert!(ok(&found).starts_with("No matches"), "{}", found.text());
    let found = fixture.call("search_text", json!({"pattern": "needle", "path": "src"}));
    assert_eq!(ok(&found), "src/a.txt:1: needle\n");
}

#[test]
fn a_directory_only_ignore_rule_spares_a_file_of_that_name() {
    let fixture = Fixture::new();
    fixture
        .file(".gitignore", "cache/\n")
        .file("cache", "needle\n")
        .file("sub/cache/x", "needle\n");
    let listing = fixture.call("list_dir", json!({"depth": 3}));
    assert_eq!(ok(&listing), ".gitignore\ncache\nsub/\n");
    let found = fixture.call("search_text", json!({"pattern": "needle", "path": "cache"}));
    assert_eq!(ok(&found), "cache:1: needle\n");
}

#[test]
fn a_deeper_ignore_file_wins_and_dot_ignore_wins_over_gitignore() {
    let fixture = Fixture::new();
    fixture
        .file(".gitignore", "*.txt\n")
        .file("sub/.gitignore", "!keep.txt\n")
        .file("sub/keep.txt", "")
        .file("sub/drop.txt", "")
        .file("other/.ignore", "!keep.txt\n")
        .file("other/.gitignore", "keep.txt\n")
        .file("other/keep.txt", "");
    let listing = fixture.call("list_dir", json!({"depth": 3}));
    assert_eq!(
        ok(&listing),
        ".gitignore\nother/\nother/.gitignore\nother/.ignore\nother/keep.txt\nsub/\n\
         sub/.gitignore\nsub/keep.txt\n"
    );
}

#[test]
fn the_ignore_files_of_an_outer_repository_stop_at_a_nested_one() {
    let fixture = Fixture::new();
    fixture
        .file(".gitignore", "*.log\n")
        .file(".git/info/exclude", "*.tmp\n")
        .file("a.log", "")
        .file("a.tmp", "")
        .file("nested/.git/HEAD", "ref: refs/heads/main\n")
        .file("nested/b.log", "")
        .file("nested/b.tmp", "")
        .file("plain/c.log", "")
        .file("plain/c.tmp", "");
    let listing = fixture.call("list_dir", json!({"depth": 3}));
    assert_eq!(
        ok(&listing),
        ".gitignore\nnested/\nnested/b.log\nnested/b.tmp\nplain/\n"
    );
}

/// An ignore file padded to `len` bytes with comment lines after `rules`.
fn padded(rules: &str, len: usize) -> Vec<u8> {
    let mut contents = rules.as_bytes().to_vec();
    while contents.len() < len {
        let line = "# padding\n".as_bytes();
        let take = line.len().min(len - contents.len());
        if take < line.len() {
            contents.resize(len, b'#');
        } else {
            contents.extend_from_slice(line);
        }
    }
    contents
}

/// A command can write an ignore file of any size (`truncate -s 2G .gitignore`), and its
/// lines compiled as globs cost memory many times their size: one over 256 KiB ignores
/// nothing, rather than take the machine's memory.
#[test]
fn an_ignore_file_over_256_kib_is_not_read_and_ignores_nothing() {
    const LIMIT: usize = 256 * 1024;
    let fixture = Fixture::new();
    fixture
        .file("at/.gitignore", padded("built.o\n", LIMIT))
        .file("at/built.o", "")
        .file("over/.gitignore", padded("built.o\n", LIMIT + 1))
        .file("over/built.o", "");
    let result = fixture.call("list_dir", json!({"depth": 2}));
    assert_eq!(
        ok(&result),
        "at/\nat/.gitignore\nover/\nover/.gitignore\nover/built.o\n"
    );
    // Sparse, of any size: never read at all.
    let huge = std::fs::OpenOptions::new()
        .write(true)
        .open(fixture.path("over/.gitignore"))
        .expect("the file");
    huge.set_len(1 << 40).expect("a sparse terabyte");
    let result = fixture.call("list_dir", json!({"depth": 2}));
    assert!(ok(&result).contains("over/built.o"), "{}", ok(&result));
}

/// No pattern of a path is longer than a path: a longer line is skipped, its neighbours kept.
#[test]
fn an_ignore_line_longer_than_a_path_is_skipped() {
    let fixture = Fixture::new();
    let star = |n: usize| "*".repeat(n);
    fixture
        .file("long/.gitignore", format!("{}\nbuilt.o\n", star(4097)))
        .file("long/built.o", "")
        .file("long/kept.txt", "")
        .file("path/.gitignore", format!("{}\n", star(4096)))
        .file("path/hidden.txt", "");
    let result = fixture.call("list_dir", json!({"depth": 2}));
    assert_eq!(
        ok(&result),
        "long/\nlong/.gitignore\nlong/kept.txt\npath/\n"
    );
}

/// A command can put the largest ignore file in every directory: one walk reads 4 MiB of
/// them in all, then no more.
#[test]
fn one_walk_reads_at_most_4_mib_of_ignore_files() {
    let fixture = Fixture::new();
    for n in 0..17 {
        fixture
            .file(
                &format!("d{n:02}/.gitignore"),
                padded("built.o\n", 256 * 1024),
            )
            .file(&format!("d{n:02}/built.o"), "");
    }
    let listed = fixture.call("list_dir", json!({"depth": 2}));
    let shown: Vec<&str> = ok(&listed)
        .lines()
        .filter(|line| line.ends_with("built.o"))
        .collect();
    assert_eq!(
        shown,
        ["d16/built.o"],
        "the 17th directory's file is past the budget"
    );
}

/// `Toolbox::is_listed` answers as `list_dir` lists, for the one file a caller would read:
/// the head start (issue #45) must not pick a file git ignores, by its name or a link's.
#[test]
fn is_listed_is_true_only_for_a_file_list_dir_would_show() {
    let fixture = Fixture::new();
    fixture
        .file(".gitignore", "local.py\ncache/\n")
        .file("calc.py", "")
        .file("local.py", "")
        .file("cache/state.txt", "")
        .file("src/lib.py", "")
        .file(".env", "");
    symlink("local.py", fixture.path("settings.py")).expect("a link to an ignored file");
    symlink("calc.py", fixture.path("alias.py")).expect("a link to a listed file");
    let fifo = std::process::Command::new("mkfifo")
        .arg(fixture.path("pipe"))
        .status()
        .expect("mkfifo runs");
    assert!(fifo.success());
    let toolbox = Toolbox::new(fixture.workspace());
    for (path, listed) in [
        ("calc.py", true),
        ("./calc.py", true),
        ("src/lib.py", true),
        ("alias.py", true),
        ("local.py", false),
        ("settings.py", false),
        ("cache/state.txt", false),
        (".env", false),
        ("src", false),
        ("pipe", false),
        ("missing.py", false),
        ("../outside.py", false),
        (".git/config", false),
    ] {
        assert_eq!(toolbox.is_listed(path), listed, "{path}");
    }
}
