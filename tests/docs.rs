//! The docs hold together: every relative link resolves, and the README stays a front page.
//!
//! The docs are plain markdown (README.md, CHANGELOG.md and one file per subject under
//! docs/), read on GitHub or in an editor, with no site generator whose link check could
//! run in CI. So this test is the link check: every relative link `[text](path#anchor)`
//! outside code names a file or directory that exists, and its `#anchor`, when it has one,
//! a heading of that file as GitHub spells its slug. The tables generated from
//! docs/data/ are checked by `xtask::the_generated_tables_in_docs_are_up_to_date`; the
//! claims, exit status and isolation tables by their own tests.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::support::source_root;

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = source_root();
    let mut files = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/ is readable")
        .map(|entry| entry.expect("an entry of docs/").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    assert!(
        docs.len() >= 10,
        "docs/ holds one file per subject: {docs:?}"
    );
    files.extend(docs);
    let mut broken = Vec::new();
    let mut count = 0;
    for file in &files {
        let links = relative_links(&fs::read_to_string(file).expect("readable"));
        count += links.len();
        broken.extend(
            broken_links(file, &links)
                .into_iter()
                .map(|problem| format!("{}: {problem}", file.display())),
        );
    }
    assert!(
        count >= 100,
        "only {count} relative links found: is the parser reading them?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_check_finds_a_missing_file_and_a_missing_heading() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    fs::write(
        dir.path().join("other.md"),
        "# Other\n\n## The demo, ten in a row\n\n## `harness tool`: by hand\n\n## Twice\n\n## Twice\n",
    )
    .expect("write");
    fs::create_dir(dir.path().join("data")).expect("mkdir");
    let text = "# Page\n\n## Section one\n\n\
        [ok](other.md#the-demo-ten-in-a-row) [ok](other.md#harness-tool-by-hand) \
        [ok](other.md#twice-1) [ok](#section-one) [ok](data) [ok](https://example.com/x#y)\n\
        `[not a link](missing.md)`\n\n```\n[not a link](missing.md)\n```\n\
        [gone](missing.md) [bad anchor](other.md#no-such-heading) [self](#nowhere) \
        [third](other.md#twice-2)\n";
    let page = dir.path().join("page.md");
    fs::write(&page, text).expect("write");
    let links = relative_links(text);
    assert_eq!(links.len(), 9, "{links:?}");
    let broken = broken_links(&page, &links);
    assert_eq!(broken.len(), 4, "{broken:#?}");
    assert!(broken[0].contains("missing.md"), "{broken:?}");
    assert!(broken[1].contains("#no-such-heading"), "{broken:?}");
    assert!(broken[2].contains("#nowhere"), "{broken:?}");
    assert!(broken[3].contains("#twice-2"), "{broken:?}");
}

#[test]
fn github_slugs_are_computed_as_github_does() {
    assert_eq!(
        slug("Evaluation: the task suite and `cargo xtask eval`"),
        "evaluation-the-task-suite-and-cargo-xtask-eval"
    );
    assert_eq!(
        slug("harness tool: the model's tools, by hand"),
        "harness-tool-the-models-tools-by-hand"
    );
    assert_eq!(slug("The demo, ten in a row"), "the-demo-ten-in-a-row");
    assert_eq!(slug("4th–6th attempt"), "4th6th-attempt");
    assert_eq!(slug("a_b  c"), "a_b--c");
}

/// The README is the front page a newcomer reads in five minutes: at most 300 lines, no
/// prose line over 120 characters, no commit hash and no date but the first run's timing.
/// Measurements belong in docs/data/, rationale next to the code.
#[test]
fn the_readme_stays_a_front_page() {
    let readme = fs::read_to_string(source_root().join("README.md")).expect("README.md");
    let lines: Vec<&str> = readme.lines().collect();
    assert!(lines.len() <= 300, "README.md has {} lines", lines.len());
    let mut in_code = false;
    for (number, line) in lines.iter().enumerate() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code && !line.starts_with('|') {
            assert!(
                line.chars().count() <= 120,
                "README.md:{}: a line over 120 characters",
                number + 1
            );
        }
    }
    let words: Vec<&str> = readme
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
        .collect();
    let hashes: Vec<&&str> = words.iter().filter(|word| is_commit_hash(word)).collect();
    assert!(hashes.is_empty(), "README.md cites commits: {hashes:?}");
    let dates: Vec<&&str> = words.iter().filter(|word| is_date(word)).collect();
    assert!(
        dates.len() <= 1,
        "README.md has dates besides the first run's timing: {dates:?}"
    );
}

/// 7 to 40 lowercase hex digits with at least one digit and one letter: how a commit is
/// cited (`1f7843e`), and not an English word or a number.
fn is_commit_hash(word: &str) -> bool {
    (7..=40).contains(&word.len())
        && word
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        && word.chars().any(|c| c.is_ascii_digit())
        && word.chars().any(|c| c.is_ascii_alphabetic())
}

/// `2026-12-04`.
fn is_date(word: &str) -> bool {
    let parts: Vec<&str> = word.split('-').collect();
    parts.len() == 3
        && [4, 2, 2] == [parts[0].len(), parts[1].len(), parts[2].len()]
        && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_digit()))
}

/// A link as written: the path (empty for a link within the page) and the anchor.
#[derive(Debug)]
struct Link {
    line: usize,
    path: String,
    anchor: Option<String>,
}

/// Every `[text](target)` outside fenced code and inline code whose target is not a URL.
fn relative_links(text: &str) -> Vec<Link> {
    let mut links = Vec::new();
    let mut in_code = false;
    for (number, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // Inline code spans are the odd pieces between backticks.
        let prose: String = line
            .split('`')
            .enumerate()
            .map(|(i, piece)| if i % 2 == 0 { piece } else { "" })
            .collect();
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            rest = &rest[end..];
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor.to_owned())),
                None => (target, None),
            };
            links.push(Link {
                line: number + 1,
                path: path.to_owned(),
                anchor,
            });
        }
    }
    links
}

/// What is wrong with each link of `file` that does not resolve.
fn broken_links(file: &Path, links: &[Link]) -> Vec<String> {
    let dir = file.parent().expect("a file has a directory");
    let mut slugs: HashMap<PathBuf, Vec<String>> = HashMap::new();
    let mut broken = Vec::new();
    for link in links {
        let target = if link.path.is_empty() {
            file.to_path_buf()
        } else {
            dir.join(&link.path)
        };
        if !target.exists() {
            broken.push(format!("line {}: {} does not exist", link.line, link.path));
            continue;
        }
        let Some(anchor) = &link.anchor else { continue };
        if target.extension().is_none_or(|ext| ext != "md") {
            continue;
        }
        let headings = slugs.entry(target.clone()).or_insert_with(|| {
            headings(&fs::read_to_string(&target).expect("a linked file is readable"))
        });
        if !headings.contains(anchor) {
            broken.push(format!(
                "line {}: {}#{anchor}: no such heading (headings: {})",
                link.line,
                link.path,
                headings.join(", ")
            ));
        }
    }
    broken
}

/// The anchors of a markdown file's headings, as GitHub makes them: a repeated slug gets
/// `-1`, `-2`, … in order.
fn headings(text: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let base = slug(title.trim());
        let n = seen.entry(base.clone()).or_insert(0);
        out.push(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// GitHub's heading slug: lowercase, spaces to `-`, and every character but letters,
/// digits, `-` and `_` dropped.
fn slug(title: &str) -> String {
    title
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}
