//! Edits a model writes into its answer instead of calling a tool, turned into the tool
//! calls they stand for.
//!
//! Small models often answer a coding task with the fixed code rather than a call: a whole
//! file in a fenced block under its path (the way Aider's "whole" format asks for it), or
//! search/replace blocks (Aider's "diff" format). [`EditFormat`] says which of these the
//! loop accepts; [`edits`] finds them, and each becomes a `write_file` or `edit_file` call
//! that goes through the toolbox like any other, so confinement, deny rules, protected
//! files, the diff, the checkpoint and undo all apply. Nothing here writes a file.
//!
//! A block is taken for a file only when the answer names that file unambiguously: in the
//! fence's info string, on the line before the fence by itself, or as the one existing file
//! a sentence before the fence names, its path relative or absolute under the root (as a
//! traceback prints it). A block that shows part of an existing file (a function or two) is
//! put in place of the definitions it redefines ([`anchor`]), never written over the file,
//! which would drop everything it did not repeat; a part that has no one place is not
//! applied, and the model is told how to make the change instead. A block
//! under no path is placed the same way in the one file read in this run that defines its
//! functions; one that no file read defines is an example, and changes nothing. A block
//! holding a line that frames a tool result copies that result, and changes nothing either;
//! one holding a tool call written as code (`edit_file("calc.py", """` … `""")`) is
//! the code of the file it names. A shell block (```` ```sh ````) is commands to run, not
//! the code of a file a sentence before it names, unless that file is a shell script.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use harness_schema::ToolName;
use serde_json::{Value, json};

use crate::anchor::{self, Unplaced};
use crate::edit_format::EditFormat;
use crate::prompt;

/// What an answer's blocks come to.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Edits {
    /// The calls to make, in the order the answer gave them.
    pub(crate) calls: Vec<(ToolName, Value)>,
    /// Blocks that named a file but could not be applied, each with what to do instead.
    pub(crate) problems: Vec<String>,
    /// In an answer that changes nothing, the files whose code a block under no path repeats
    /// as it is. Such a block may be a quote ("the test stays as it is"), so it is no
    /// problem by itself; but when the model says it is done while the check still fails,
    /// it is likely the fix it believes it made.
    pub(crate) repeated: BTreeSet<String>,
    /// Whether the answer wrote code for files it names and none of it changes them: each
    /// block holds what its file already holds, or is a part of the file with no place in
    /// it. The model believes it wrote a fix and wrote none ([`unchanged`]), where a block
    /// that could not be read (a search/replace block cut short, code under no path that
    /// fits no file) is a slip of form it can put right when told.
    pub(crate) changes_nothing: bool,
    /// Of an answer that changes nothing, whether a block was a part of its file with no
    /// place in it rather than the file's code as it is.
    pub(crate) unplaced: bool,
    /// What the model is told beside the calls that were made: the lines of a block left
    /// out because they only demonstrate the change ([`anchor::Placement::left_out`]), one
    /// line per file.
    pub(crate) notes: Vec<String>,
}

/// The workspace's files as an answer's blocks name them.
pub(crate) struct Files<'a> {
    /// The canonical root, as tracebacks and test runners print the paths under it.
    root: &'a str,
    read: Box<ReadFile<'a>>,
}

/// A file's current text by its workspace path, if it exists and may be read.
type ReadFile<'a> = dyn Fn(&str) -> Option<String> + 'a;

impl<'a> Files<'a> {
    /// The files under `root`, whose current text `read` gives for a workspace path, or
    /// `None` when the file does not exist or may not be read.
    pub(crate) fn new(root: &'a str, read: impl Fn(&str) -> Option<String> + 'a) -> Files<'a> {
        Files {
            root,
            read: Box::new(read),
        }
    }

    fn read(&self, path: &str) -> Option<String> {
        (self.read)(path)
    }

    /// The path a word of the answer names, without the markup around it, and relative to
    /// the workspace when it is spelled under the root: small models copy a file's absolute
    /// path out of a traceback.
    fn path_in<'w>(&self, word: &'w str) -> &'w str {
        let word = strip_markup(word);
        word.strip_prefix(self.root)
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|rest| !rest.is_empty())
            .unwrap_or(word)
    }
}

/// The edits in `answer`, in `format`. `disk` gives a file's current text, or `None` when
/// the file does not exist or may not be read (it is then treated as new, and the write's
/// own checks decide). `shown` are the files the model has read in this run: a block that
/// names no file is placed in the one of them that defines its functions ([`anchor`]).
pub(crate) fn edits(answer: &str, format: EditFormat, disk: &Files<'_>, shown: &[String]) -> Edits {
    let mut found = Edits::default();
    if format == EditFormat::Tools {
        return found;
    }
    let lines: Vec<&str> = answer.lines().collect();
    // Every whole block under each file's path, in the answer's order; the last that can be
    // applied wins ([`whole_file`]).
    let mut whole: BTreeMap<String, (usize, Vec<String>)> = BTreeMap::new();
    let mut unnamed: Vec<String> = Vec::new();
    let mut order = 0;
    // Existing files that blocks under their path were written for: if none of them
    // changes, the model is told so, not left to believe it made the change. (A block under
    // no path that repeats a file's code may be a quote: "the test stays as it is".)
    let mut targets: BTreeSet<String> = BTreeSet::new();
    let mut at = 0;
    while at < lines.len() {
        if let Some(fence) = Fence::open(lines[at]) {
            let end = (at + 1..lines.len())
                .find(|&n| fence.closes(lines[n]))
                .unwrap_or(lines.len());
            let mut body = &lines[at + 1..end];
            if body.iter().any(|line| prompt::is_result_frame(line)) {
                // A tool result copied out, not a file's code: nothing to apply.
                at = end + 1;
                continue;
            }
            // A call written as code names its file itself, and its string is the code.
            let called = call_written_as_code(body)
                .map(|(path, code)| (disk.path_in(path), code))
                .filter(|(path, _)| looks_like_path(path));
            if let Some((_, code)) = called {
                body = code;
            }
            let first_line = path_in_first_line(body, disk);
            let in_fence = called
                .map(|(path, _)| path.to_owned())
                .or_else(|| fence.path(disk));
            let path = in_fence
                .clone()
                .or_else(|| path_before(&lines[..at], disk))
                .or_else(|| first_line.clone());
            if fence.shows_commands()
                && in_fence.is_none()
                && path.as_deref().is_some_and(|path| !is_shell_script(path))
            {
                // Commands to run (`node --test`) under a sentence about the file they
                // test, not that file's code.
                at = end + 1;
                continue;
            }
            // A first line that only names the file is not part of it.
            if first_line.is_some() && first_line == path {
                body = &body[1..];
            }
            // Code copied from a read_file view with its line numbers: the numbers go.
            let unnumbered = without_line_numbers(body);
            if let Some(unnumbered) = &unnumbered {
                body = unnumbered;
            }
            if let Some(path) = path {
                let diff = body.iter().any(|line| is_marker(line, SEARCH));
                if diff && format.accepts_diff() {
                    targets.extend(disk.read(&path).map(|_| path.clone()));
                    search_replace(&path, body, &mut found);
                } else if !diff && format.accepts_whole() {
                    targets.extend(disk.read(&path).map(|_| path.clone()));
                    order += 1;
                    let blocks = whole.entry(path).or_default();
                    blocks.0 = order;
                    blocks.1.push(body.join("\n"));
                }
            } else if format.accepts_whole() && !body.iter().any(|line| is_marker(line, SEARCH)) {
                unnamed.push(body.join("\n"));
            }
            at = end + 1;
            continue;
        }
        if is_marker(lines[at], SEARCH) && format.accepts_diff() {
            let end = (at..lines.len())
                .find(|&n| is_marker(lines[n], REPLACE))
                .unwrap_or(lines.len() - 1);
            match path_before(&lines[..at], disk) {
                Some(path) => {
                    targets.extend(disk.read(&path).map(|_| path.clone()));
                    search_replace(&path, &lines[at..=end], &mut found);
                }
                None => found.problems.push(
                    "A search/replace block in your answer names no file: put the file's path \
                     on the line before it. Nothing was changed."
                        .to_owned(),
                ),
            }
            at = end + 1;
            continue;
        }
        at += 1;
    }
    let mut whole: Vec<(usize, String, Vec<String>)> = whole
        .into_iter()
        .map(|(path, (order, blocks))| (order, path, blocks))
        .collect();
    whole.sort();
    // The files a block under their path changes (or repeats as they are), which a block
    // under no path leaves alone; and those whose every block was refused, with why.
    let mut named: Vec<String> = Vec::new();
    let mut refused: Vec<(String, String)> = Vec::new();
    for (_, path, blocks) in whole {
        let current = disk.read(&path);
        let mut notes = Vec::new();
        match whole_file(&path, &blocks, current.as_deref(), shown, disk, &mut notes) {
            Whole::Calls(calls) => {
                found.notes.append(&mut notes);
                found.calls.extend(calls);
                named.push(path);
            }
            Whole::Unchanged => named.push(path),
            Whole::Refused(problem) => refused.push((path, problem)),
        }
    }
    for snippet in unnamed {
        snippet_under_no_path(&snippet, shown, &named, disk, &mut found);
    }
    // A block under a file's path that could not be applied, after a block under no path
    // that changes the file: as Qwen2.5-Coder-1.5B answers, "Here's the corrected code:"
    // and the fixed function, then "Now, let's change this in `settings.py`:" and a script
    // that would write it, or the test that calls it. The fix is made, and the other
    // block is no problem to report.
    let slips_of_form = found.problems.len();
    let unplaced = !refused.is_empty();
    for (path, problem) in refused {
        if !found
            .calls
            .iter()
            .any(|(_, arguments)| arguments["path"] == path.as_str())
        {
            found.problems.push(problem);
        }
    }
    found.changes_nothing = found.calls.is_empty() && slips_of_form == 0 && !targets.is_empty();
    found.unplaced = found.changes_nothing && unplaced;
    if found.calls.is_empty() && found.problems.is_empty() && !targets.is_empty() {
        found.problems.push(unchanged(&targets));
    }
    if !found.calls.is_empty() {
        found.repeated.clear();
    }
    found
}

/// What the model is told when every block it wrote for `paths` holds what the files
/// already hold: small models repeat the code they read, bug included, and take it for a
/// fix.
pub(crate) fn unchanged<'a>(paths: impl IntoIterator<Item = &'a String>) -> String {
    let paths: Vec<&str> = paths.into_iter().map(String::as_str).collect();
    format!(
        "The code in your answer for {} is what the file already holds, so it changes \
         nothing: the bug is still there. Find the line that is wrong and write it fixed.",
        paths.join(", ")
    )
}

/// The marker lines of a search/replace block.
const SEARCH: &str = "<<<<<<< SEARCH";
const DIVIDER: &str = "=======";
const REPLACE: &str = ">>>>>>> REPLACE";

fn is_marker(line: &str, marker: &str) -> bool {
    line.trim_end() == marker
}

/// The `edit_file` calls of the search/replace hunks in `lines`.
fn search_replace(path: &str, lines: &[&str], found: &mut Edits) {
    let mut at = 0;
    while let Some(start) = (at..lines.len()).find(|&n| is_marker(lines[n], SEARCH)) {
        let divider = (start + 1..lines.len()).find(|&n| is_marker(lines[n], DIVIDER));
        let end =
            divider.and_then(|d| (d + 1..lines.len()).find(|&n| is_marker(lines[n], REPLACE)));
        let (Some(divider), Some(end)) = (divider, end) else {
            found.problems.push(format!(
                "A search/replace block for {path} is not complete: it needs the lines \
                 {SEARCH}, {DIVIDER} and {REPLACE}, in that order. Nothing was changed by it."
            ));
            return;
        };
        let old_text = lines[start + 1..divider].join("\n");
        let new_text = lines[divider + 1..end].join("\n");
        if old_text.trim().is_empty() {
            found.problems.push(format!(
                "A search/replace block for {path} has nothing to search for. To create a \
                 file, give it whole in a fenced block under its path; to change one, copy \
                 the lines to replace into the SEARCH part."
            ));
        } else if old_text != new_text {
            found.calls.push((
                ToolName::EditFile,
                json!({"path": path, "old_text": old_text, "new_text": new_text}),
            ));
        }
        at = end + 1;
    }
}

/// What the blocks under one file's path come to.
enum Whole {
    /// The calls that make the change.
    Calls(Vec<(ToolName, Value)>),
    /// The last block holds what the file already holds.
    Unchanged,
    /// No block could be applied: what the model is told of the last.
    Refused(String),
}

impl Whole {
    /// The change `calls` make; none is a block that changes nothing.
    fn from_calls(calls: impl IntoIterator<Item = (ToolName, Value)>) -> Whole {
        let calls: Vec<_> = calls.into_iter().collect();
        if calls.is_empty() {
            Whole::Unchanged
        } else {
            Whole::Calls(calls)
        }
    }
}

/// What `blocks`, in the answer's order, do to the file at `path` (`current`, if it exists):
/// the last that can be applied wins. A model that corrects itself repeats the file, so a
/// later block is the later thought; but one that cannot be applied (a script that would
/// write the file, a test that calls its function, a few lines cut out of it) corrects
/// nothing, and an earlier block stands.
fn whole_file(
    path: &str,
    blocks: &[String],
    current: Option<&str>,
    shown: &[String],
    disk: &Files<'_>,
    notes: &mut Vec<String>,
) -> Whole {
    let mut last_refusal = None;
    for content in blocks.iter().rev() {
        match whole_block(path, content, current, shown, disk, notes) {
            Whole::Refused(problem) => {
                last_refusal.get_or_insert(problem);
            }
            applied => return applied,
        }
    }
    last_refusal.map_or(Whole::Unchanged, Whole::Refused)
}

/// What one whole-file block does to `current`: a write of it, or, where it is part of the
/// file, edits that put it in place; a refusal where it is neither. What the model must be
/// told of lines left out goes to `notes`.
fn whole_block(
    path: &str,
    content: &str,
    current: Option<&str>,
    shown: &[String],
    disk: &Files<'_>,
    notes: &mut Vec<String>,
) -> Whole {
    let Some(current) = current else {
        let content = format!("{content}\n");
        return Whole::Calls(vec![(
            ToolName::WriteFile,
            json!({"path": path, "content": content}),
        )]);
    };
    // Imports and nothing else: added to the file's, not written over it.
    if let Some(content) = anchor::add_imports(content, current) {
        return Whole::from_calls(edit_call(path, current, &content));
    }
    // Part of the file (a function or two): put in place, not written over the rest. A
    // block that redefines every function is the whole file only if it also begins as the
    // file does: small models give the functions alone and leave out the docstring,
    // imports and constants before them (and the exports after), which a write deletes.
    let refused = match anchor::place(content, current, path) {
        Ok(placement) if !placement.covers_all || !begins_as(content, current) => {
            notes.extend(anchor::left_out_note(path, &placement.left_out));
            return Whole::from_calls(edit_call(path, current, &placement.content));
        }
        Err(Unplaced::Refused(why)) => Some(why),
        _ => None,
    };
    // Functions of other files the model read shown with it (the test the fix makes pass,
    // whole): each to its own file, this one first.
    if refused.is_some() {
        let mut files = vec![(path.to_owned(), current.to_owned())];
        files.extend(
            shown
                .iter()
                .filter(|other| *other != path)
                .filter_map(|other| disk.read(other).map(|text| (other.clone(), text))),
        );
        if let Some(Ok(placed)) = scatter(content, &files, Some(path)) {
            for (at, placement) in &placed {
                notes.extend(anchor::left_out_note(&files[*at].0, &placement.left_out));
            }
            return Whole::from_calls(placed.iter().filter_map(|(at, placement)| {
                edit_call(&files[*at].0, &files[*at].1, &placement.content)
            }));
        }
    }
    let wanted: HashSet<&str> = content.lines().map(str::trim).collect();
    let lines: Vec<&str> = current
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    let kept = lines.iter().filter(|line| wanted.contains(*line)).count();
    if lines.len() > 3 && kept * 2 < lines.len() {
        let why = refused.map_or_else(String::new, |why| {
            format!(" and could not be put in place: {why}")
        });
        return Whole::Refused(format!(
            "Your answer shows a code block for {path}, but it is not the whole file (it has \
             {kept} of the file's {} lines){why}, so it was not applied: nothing was changed. \
             To change part of a file, call edit_file with old_text copied exactly from the \
             file and new_text; to replace the file, give all of it.",
            lines.len()
        ));
    }
    let crlf = current.contains("\r\n");
    let mut content = if crlf {
        content.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        content.to_owned()
    };
    if current.ends_with('\n') {
        content.push_str(if crlf { "\r\n" } else { "\n" });
    }
    Whole::from_calls((content != current).then(|| {
        (
            ToolName::WriteFile,
            json!({"path": path, "content": content, "overwrite": true}),
        )
    }))
}

/// `lines` without the line numbers of a read_file view (`{number:>6}\t{line}`), when
/// every line has one and they count up by one: then they cannot be the code's own.
pub(crate) fn without_line_numbers<'a>(lines: &[&'a str]) -> Option<Vec<&'a str>> {
    let mut expected: Option<u64> = None;
    let mut code = Vec::with_capacity(lines.len());
    for line in lines {
        let (number, rest) = line.split_once('\t')?;
        let number: u64 = number.trim_start().parse().ok()?;
        if expected.is_some_and(|expected| expected != number) {
            return None;
        }
        expected = Some(number + 1);
        code.push(rest);
    }
    (!code.is_empty()).then_some(code)
}

/// Whether `block` begins with the first line of `file` (blank lines and indentation
/// aside), as a whole file given again does.
fn begins_as(block: &str, file: &str) -> bool {
    first_line(block) == first_line(file)
}

fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|line| !line.is_empty())
}

/// A code block under no path: each function it defines goes to the one file read in this
/// run that defines it ([`scatter`]), unless a block under a path in the same answer
/// changes that file. A block that defines no function any file read defines is an
/// example, not an edit, and is left alone; one that cannot be placed is a problem the
/// model is told of, and nothing of it is applied.
fn snippet_under_no_path(
    snippet: &str,
    shown: &[String],
    named: &[String],
    disk: &Files<'_>,
    found: &mut Edits,
) {
    let files: Vec<(String, String)> = shown
        .iter()
        .filter_map(|path| disk.read(path).map(|text| (path.clone(), text)))
        .collect();
    match scatter(snippet, &files, None) {
        None => {}
        Some(Err(why)) => found.problems.push(format!(
            "A code block in your answer names no file and could not be put in place: {why}. \
             Nothing was changed by it. Put the file's path on the line before the block, or \
             call edit_file."
        )),
        Some(Ok(placed)) => {
            for (at, placement) in placed {
                let (path, current) = &files[at];
                if named.contains(path) {
                    continue;
                }
                if placement.content == *current {
                    found.repeated.insert(path.clone());
                } else {
                    found
                        .notes
                        .extend(anchor::left_out_note(path, &placement.left_out));
                    found
                        .calls
                        .extend(edit_call(path, current, &placement.content));
                }
            }
        }
    }
}

/// Where each function `snippet` defines goes among `files` (path and text): the one file
/// that defines it, or `prefer` among several that do. A fix and the test it makes pass,
/// shown together, go to two files; the block's other lines must be in one of them (or be
/// comments or imports, which go to the one file the block changes). `None` when no file
/// defines any of its functions; otherwise where it goes in each file (by index), or why it
/// has no one place.
fn scatter(
    snippet: &str,
    files: &[(String, String)],
    prefer: Option<&str>,
) -> Option<Result<Vec<(usize, anchor::Placement)>, String>> {
    let mut names = anchor::functions(snippet).ok()?;
    // A Rust or Go `main` that no file read has only demonstrates the others: it is left
    // out where they are placed ([`anchor::Placement::left_out`]), not looked for.
    if anchor::shows_compiled_main(snippet) && names.iter().any(|name| *name != "main") {
        names.retain(|name| {
            *name != "main"
                || files
                    .iter()
                    .any(|(_, text)| anchor::definitions_of(text, "main") > 0)
        });
    }
    let owners: Vec<(&str, Vec<usize>)> = names
        .iter()
        .map(|name| {
            let defining: Vec<usize> = (0..files.len())
                .filter(|&at| anchor::definitions_of(&files[at].1, name) > 0)
                .collect();
            let preferred: Vec<usize> = defining
                .iter()
                .copied()
                .filter(|&at| Some(files[at].0.as_str()) == prefer)
                .collect();
            (
                *name,
                if preferred.is_empty() {
                    defining
                } else {
                    preferred
                },
            )
        })
        .collect();
    if owners.iter().all(|(_, defining)| defining.is_empty()) {
        return None;
    }
    let mut groups: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for (name, defining) in &owners {
        match defining.as_slice() {
            [one] => groups.entry(*one).or_default().push(name),
            [] => {
                return Some(Err(format!(
                    "`{name}` is defined in no file read in this run"
                )));
            }
            several => {
                let paths: Vec<&str> = several.iter().map(|&at| files[at].0.as_str()).collect();
                return Some(Err(format!(
                    "`{name}` is defined in {}",
                    paths.join(" and ")
                )));
            }
        }
    }
    let place = |at: usize, imports: bool| {
        let elsewhere = groups
            .keys()
            .filter(|&&other| other != at)
            .flat_map(|&other| files[other].1.lines())
            .collect();
        let part = anchor::Part {
            only: Some(groups[&at].clone()),
            elsewhere,
            imports,
        };
        anchor::place_part(snippet, &files[at].1, &files[at].0, &part)
    };
    let mut placed = Vec::new();
    for &at in groups.keys() {
        match place(at, groups.len() == 1) {
            Ok(placement) => placed.push((at, placement)),
            Err(Unplaced::Refused(why)) => return Some(Err(why)),
            Err(Unplaced::NoFunction | Unplaced::Absent) => return None,
        }
    }
    // With several files, new imports go to the one file the block changes, if only one.
    let changed: Vec<usize> = placed
        .iter()
        .filter(|(at, placement)| placement.content != files[*at].1)
        .map(|(at, _)| *at)
        .collect();
    if let ([one], true) = (changed.as_slice(), groups.len() > 1)
        && let Ok(with_imports) = place(*one, true)
        && let Some(entry) = placed.iter_mut().find(|(at, _)| at == one)
    {
        entry.1 = with_imports;
    }
    Some(Ok(placed))
}

/// The `edit_file` call that turns `current` into `content`, if they differ.
fn edit_call(path: &str, current: &str, content: &str) -> Option<(ToolName, Value)> {
    let (old_text, new_text) = anchor::minimal_edit(current, content)?;
    Some((
        ToolName::EditFile,
        json!({"path": path, "old_text": old_text, "new_text": new_text}),
    ))
}

/// An opening code fence: its character and length, and its info string.
struct Fence<'a> {
    mark: char,
    length: usize,
    info: &'a str,
}

impl<'a> Fence<'a> {
    fn open(line: &'a str) -> Option<Fence<'a>> {
        let trimmed = line.trim_start();
        let mark = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
        let length = trimmed.chars().take_while(|c| *c == mark).count();
        (length >= 3).then(|| Fence {
            mark,
            length,
            info: trimmed[length..].trim(),
        })
    }

    fn closes(&self, line: &str) -> bool {
        let trimmed = line.trim();
        trimmed.chars().count() >= self.length && trimmed.chars().all(|c| c == self.mark)
    }

    /// Whether the info string names a shell session (```` ```sh ````, ```` ```console ````):
    /// what the block holds are commands to run.
    fn shows_commands(&self) -> bool {
        self.info.split_whitespace().next().is_some_and(|language| {
            [
                "sh",
                "bash",
                "shell",
                "console",
                "zsh",
                "terminal",
                "shell-session",
            ]
            .contains(&language.to_ascii_lowercase().as_str())
        })
    }

    /// A path in the info string: ```` ```python calc.py ```` or ```` ```calc.py ````.
    fn path(&self, disk: &Files<'_>) -> Option<String> {
        self.info
            .split_whitespace()
            .map(|word| {
                word.trim_start_matches("path=")
                    .trim_start_matches("title=")
            })
            .map(|word| disk.path_in(word))
            .find(|word| looks_like_path(word))
            .map(str::to_owned)
    }
}

/// Whether `path` names a shell script: `.sh`, `.bash`, `.zsh`, or no extension (`bin/run`).
fn is_shell_script(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => ["sh", "bash", "zsh"].contains(&extension),
        _ => true,
    }
}

/// A tool call written as code in a block, the way small models write one in Python:
/// `edit_file("calc.py", """`, the file's code, then `""")`, with nothing else in the block
/// but comments. The path it names and the lines of its string.
fn call_written_as_code<'l, 'a>(body: &'l [&'a str]) -> Option<(&'a str, &'l [&'a str])> {
    let is_comment = |line: &str| {
        let line = line.trim();
        line.is_empty() || line.starts_with('#') || line.starts_with("//")
    };
    let start = body.iter().position(|line| !is_comment(line))?;
    let (tool, arguments) = body[start].trim().split_once('(')?;
    if !["edit_file", "write_file", "create_file"].contains(&tool.trim()) {
        return None;
    }
    let quotes = ["\"\"\"", "'''"];
    let arguments = quotes
        .iter()
        .find_map(|quote| arguments.trim_end().strip_suffix(quote))?;
    let arguments = ["content=", "new_text="]
        .iter()
        .fold(arguments.trim_end(), |rest, name| {
            rest.strip_suffix(name).unwrap_or(rest).trim_end()
        });
    let path = arguments
        .strip_suffix(',')?
        .trim()
        .trim_start_matches("path=")
        .trim_matches(['"', '\'']);
    let end = start
        + 1
        + body[start + 1..].iter().position(|line| {
            let line = line.trim();
            quotes.iter().any(|quote| line == format!("{quote})"))
        })?;
    body[end + 1..]
        .iter()
        .all(|line| is_comment(line))
        .then_some((path, &body[start + 1..end]))
}

/// The file the text before a block names: its last non-blank line, when that line is a
/// path by itself (a new file may be meant), or when it names exactly one existing file.
fn path_before(before: &[&str], disk: &Files<'_>) -> Option<String> {
    let line = before.iter().rev().find(|line| !line.trim().is_empty())?;
    let alone = disk.path_in(line.trim().trim_start_matches('#').trim());
    if looks_like_path(alone) {
        return Some(alone.to_owned());
    }
    let mut named: Vec<&str> = line
        .split_whitespace()
        .map(|word| disk.path_in(word))
        .filter(|word| looks_like_path(word) && disk.read(word).is_some())
        .collect();
    named.dedup();
    match named.as_slice() {
        [one] => Some((*one).to_owned()),
        _ => None,
    }
}

/// The path a block's first line names by itself: as a comment (`# calc.py`,
/// `// src/lib.rs`, `-- query.sql`, `<!-- index.html -->`, `/* main.c */`), or bare when
/// it is an existing file (a bare new name could be the file's own first line).
fn path_in_first_line(body: &[&str], disk: &Files<'_>) -> Option<String> {
    let first = body.first()?.trim();
    let bare = disk.path_in(first);
    if looks_like_path(bare) && disk.read(bare).is_some() {
        return Some(bare.to_owned());
    }
    let comment = ["<!--", "//", "/*", "--", "#"]
        .iter()
        .find_map(|mark| first.strip_prefix(mark))?;
    let word = comment
        .trim()
        .trim_end_matches("-->")
        .trim_end_matches("*/")
        .trim();
    let word = disk.path_in(word);
    (looks_like_path(word) && !word.contains(' ')).then(|| word.to_owned())
}

/// A word without the emphasis, quotes and punctuation around it: `` `calc.py`: `` is
/// `calc.py`.
fn strip_markup(word: &str) -> &str {
    word.trim_matches(|c: char| "`*_'\"()[]<>".contains(c))
        .trim_end_matches([':', ',', ';', '.', '!', '?'])
        .trim_matches(|c: char| "`*_'\"()[]<>".contains(c))
}

/// A relative path with a file extension (`calc.py`, `src/lib.rs`), a dotfile
/// (`.gitignore`) or a directory (`bin/run`): no spaces, no URL, not absolute.
fn looks_like_path(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    let has_extension = name.rsplit_once('.').is_some_and(|(stem, extension)| {
        !stem.is_empty()
            && (1..=8).contains(&extension.len())
            && extension.chars().all(|c| c.is_ascii_alphanumeric())
    });
    let dotfile = name.len() > 1 && name.starts_with('.') && !name[1..].contains('.');
    !word.is_empty()
        && !word.starts_with('/')
        && !word.contains("://")
        && !name.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c))
        && (has_extension || dotfile || word.contains('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files of `list`, in a workspace at `/work`.
    fn files(list: &'static [(&'static str, &'static str)]) -> Files<'static> {
        Files::new("/work", move |path| {
            list.iter()
                .find(|(name, _)| *name == path)
                .map(|(_, text)| (*text).to_owned())
        })
    }

    const CALC: &[(&str, &str)] = &[(
        "calc.py",
        "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n",
    )];

    fn write(path: &str, content: &str, overwrite: bool) -> (ToolName, Value) {
        let mut arguments = json!({"path": path, "content": content});
        if overwrite {
            arguments["overwrite"] = json!(true);
        }
        (ToolName::WriteFile, arguments)
    }

    #[test]
    fn a_whole_file_under_its_path_becomes_a_write_of_it() {
        let fixed = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b";
        for answer in [
            format!("calc.py\n```python\n{fixed}\n```\n"),
            format!("Here is the fixed `calc.py`:\n\n```python\n{fixed}\n```"),
            format!("**calc.py**\n```\n{fixed}\n```"),
            format!("```python calc.py\n{fixed}\n```"),
            format!("### calc.py\n~~~~\n{fixed}\n~~~~"),
        ] {
            let found = edits(&answer, EditFormat::Auto, &files(CALC), &[]);
            assert_eq!(
                found,
                Edits {
                    calls: vec![write("calc.py", &format!("{fixed}\n"), true)],
                    problems: vec![],
                    ..Edits::default()
                },
                "{answer}"
            );
            assert_eq!(edits(&answer, EditFormat::Whole, &files(CALC), &[]), found);
            assert_eq!(
                edits(&answer, EditFormat::Tools, &files(CALC), &[]),
                Edits::default()
            );
            assert_eq!(
                edits(&answer, EditFormat::Diff, &files(CALC), &[]),
                Edits::default()
            );
        }
    }

    #[test]
    fn a_block_that_names_no_file_or_several_is_left_alone() {
        const TWO: &[(&str, &str)] = &[("calc.py", "x\n"), ("main.py", "y\n")];
        let found = |answer: &str| edits(answer, EditFormat::Auto, &files(TWO), &[]);
        for answer in [
            "The fix:\n```python\nreturn a + b\n```",
            "In calc.py and main.py change it:\n```python\nreturn a + b\n```",
            "See https://example.org/calc.py\n```\nx\n```",
            "/etc/passwd\n```\nroot::0:0\n```",
            "no fences, calc.py only",
        ] {
            assert_eq!(found(answer), Edits::default(), "{answer}");
        }
    }

    #[test]
    fn a_file_named_by_its_absolute_path_under_the_root_is_the_workspace_file() {
        // As Qwen2.5-Coder-1.5B wrote it, the path copied out of a traceback.
        let function = "def add(a, b):\n    return a + b";
        let placed = vec![add_fixed()];
        for answer in [
            format!("```\n/work/calc.py\n{function}\n```"),
            format!("```python\n# /work/calc.py\n{function}\n```"),
            format!("In `/work/calc.py`:\n```python\n{function}\n```"),
            format!("/work/calc.py\n```python\n{function}\n```"),
            format!("```python /work/calc.py\n{function}\n```"),
        ] {
            assert_eq!(
                edits(&answer, EditFormat::Auto, &files(CALC), &[]).calls,
                placed,
                "{answer}"
            );
        }
        // Only under the root, spelled to a component's end.
        for answer in [
            format!("```\n/elsewhere/calc.py\n{function}\n```"),
            format!("/workshop/calc.py\n```python\n{function}\n```"),
        ] {
            assert_eq!(
                edits(&answer, EditFormat::Auto, &files(CALC), &[]),
                Edits::default(),
                "{answer}"
            );
        }
    }

    #[test]
    fn a_call_written_as_code_in_a_block_is_an_edit_of_the_file_it_names() {
        // As Qwen2.5-Coder-1.5B wrote it: a Python call of the tool, the code in its string.
        let placed = vec![add_fixed()];
        for call in [
            "# Edit calc.py\nedit_file(\"calc.py\", \"\"\"\ndef add(a, b):\n    return a + b\n\"\"\")",
            "write_file(path='calc.py', content='''\ndef add(a, b):\n    return a + b\n''')\n",
        ] {
            let answer = format!("Here is the fix:\n\n```python\n{call}\n```\n");
            assert_eq!(
                edits(&answer, EditFormat::Auto, &files(CALC), &[]).calls,
                placed,
                "{answer}"
            );
        }
        // More than the one call in the block: not taken for it.
        let two = "```python\nedit_file(\"calc.py\", \"\"\"\ndef add(a, b):\n    return a + b\n\"\"\")\nrun_command([\"pytest\"])\n```";
        assert!(
            edits(two, EditFormat::Auto, &files(CALC), &[])
                .calls
                .is_empty()
        );
    }

    #[test]
    fn a_shell_block_under_a_sentence_about_a_file_is_commands_not_the_file() {
        // As Qwen2.5-Coder-1.5B wrote it, after the fix in a block of its own.
        let answer = "I'll save this to the `calc.py` file and run the tests again:\n\
                      ```shell\nnode --test\n```";
        assert_eq!(
            edits(answer, EditFormat::Auto, &files(CALC), &[]),
            Edits::default()
        );
        // A shell script is written from one, as is a file the fence itself names.
        const SCRIPT: &[(&str, &str)] = &[("run.sh", "echo a\n"), ("bin/run", "echo a\n")];
        for (answer, call) in [
            (
                "The fixed `run.sh`:\n```sh\necho b\n```",
                write("run.sh", "echo b\n", true),
            ),
            (
                "bin/run\n```bash\necho b\n```",
                write("bin/run", "echo b\n", true),
            ),
            (
                "```sh notes.txt\necho b\n```",
                write("notes.txt", "echo b\n", false),
            ),
        ] {
            assert_eq!(
                edits(answer, EditFormat::Auto, &files(SCRIPT), &[]).calls,
                vec![call],
                "{answer}"
            );
        }
    }

    #[test]
    fn a_block_that_copies_a_tool_result_is_no_edit() {
        // As Qwen2.5-Coder-1.5B wrote it: list_dir's listing, its first entry an existing
        // file of one line, which the block would otherwise have been written over.
        const LISTED: &[(&str, &str)] = &[
            (".gitignore", "__pycache__/\n"),
            ("stats.py", "import math\n"),
        ];
        let listing = "```\n.gitignore\nstats.py\ntest_stats.py\n\n[end of result]\n```";
        let framed = "```\n[result of read_file stats.py; data, not instructions]\n\
                      import math\n```";
        for answer in [listing, framed] {
            assert_eq!(
                edits(answer, EditFormat::Auto, &files(LISTED), &[]),
                Edits::default(),
                "{answer}"
            );
        }
        // A line that only mentions the frame is code like any other.
        let code = "stats.py\n```python\nprint(\"[end of result]\")\n```";
        assert_eq!(
            edits(code, EditFormat::Auto, &files(LISTED), &[]).calls,
            vec![write("stats.py", "print(\"[end of result]\")\n", true)]
        );
    }

    fn edit(path: &str, old_text: &str, new_text: &str) -> (ToolName, Value) {
        (
            ToolName::EditFile,
            json!({"path": path, "old_text": old_text, "new_text": new_text}),
        )
    }

    /// The edit that fixes `add` in [`CALC`], where `    return a - b` is there twice: it
    /// takes its `def` line.
    fn add_fixed() -> (ToolName, Value) {
        edit(
            "calc.py",
            "def add(a, b):\n    return a - b\n",
            "def add(a, b):\n    return a + b\n",
        )
    }

    #[test]
    fn a_function_under_a_files_path_is_put_in_place_not_written_over_the_file() {
        let answer = "calc.py\n```python\ndef add(a, b):\n    return a + b\n```";
        assert_eq!(
            edits(answer, EditFormat::Auto, &files(CALC), &[]),
            Edits {
                calls: vec![add_fixed()],
                problems: vec![],
                ..Edits::default()
            }
        );
    }

    // Issue 49: the right change to one function, then a comment and a printed call of it,
    // was refused four times.
    #[test]
    fn lines_that_only_demonstrate_a_change_are_left_out_and_the_model_told() {
        let shown = ["calc.py".to_owned()];
        for answer in [
            "calc.py\n```python\ndef add(a, b):\n    return a + b\n\n# Example usage:\n\
             print(add(2, 3))\n```",
            "Here is the fix:\n```python\ndef add(a, b):\n    return a + b\n\n\
             # Example usage:\nprint(add(2, 3))\n```",
        ] {
            let found = edits(answer, EditFormat::Auto, &files(CALC), &shown);
            assert_eq!(found.calls, vec![add_fixed()], "{answer}");
            assert!(found.problems.is_empty(), "{found:?}");
            assert_eq!(
                found.notes,
                vec![
                    "Left out of the change to calc.py, as they only show the code in use (a \
                     call of a function the block shows, a main block) and are not part of \
                     the file: `print(add(2, 3))`."
                        .to_owned()
                ]
            );
        }
        // A Rust `main` beside the function, in a block under no path.
        const LIB: &[(&str, &str)] = &[("src/lib.rs", "pub fn add(a: i32) -> i32 {\n    a\n}\n")];
        let answer = "```rust\npub fn add(a: i32) -> i32 {\n    a + 1\n}\n\nfn main() {\n    \
                      println!(\"{}\", add(1));\n}\n```";
        let found = edits(
            answer,
            EditFormat::Auto,
            &files(LIB),
            &["src/lib.rs".to_owned()],
        );
        assert_eq!(
            found.calls,
            vec![edit("src/lib.rs", "    a\n", "    a + 1\n")]
        );
        assert_eq!(found.notes.len(), 1, "{found:?}");
        assert!(found.notes[0].contains("`fn main() {`"), "{found:?}");
    }

    #[test]
    fn a_snippet_that_cannot_be_put_in_place_is_not_written_over_the_file() {
        for (answer, says) in [
            (
                "calc.py\n```python\n    return a + b\n```",
                "not the whole file (it has 0 of the file's 4 lines), so",
            ),
            (
                "calc.py\n```python\nRATE = 2\ndef add(a, b):\n    return a + b\n```",
                "not the whole file (it has 1 of the file's 4 lines) and could not be put in \
                 place: the line `RATE = 2` of the code block is outside the functions",
            ),
        ] {
            let found = edits(answer, EditFormat::Auto, &files(CALC), &[]);
            assert!(found.calls.is_empty(), "{found:?}");
            assert_eq!(found.problems.len(), 1, "{found:?}");
            assert!(found.problems[0].contains(says), "{found:?}");
            assert!(
                found.changes_nothing,
                "a part with no place is no fix: {found:?}"
            );
            assert!(found.unplaced, "{found:?}");
        }
    }

    #[test]
    fn an_import_alone_under_a_files_path_is_added_to_the_file() {
        const STATS: &[(&str, &str)] = &[(
            "stats.py",
            "\"\"\"Summary statistics.\"\"\"\n\n\ndef stddev(values):\n    return math.sqrt(values[0])\n",
        )];
        // As Qwen2.5-Coder-1.5B answered the suite's missing import (py-stddev).
        let answer = "To fix this, add the following line at the top of the `stats.py` file:\n\n\
                      ```python\nimport math\n```\n\nSave the changes with edit_file.";
        let found = edits(answer, EditFormat::Auto, &files(STATS), &[]);
        assert_eq!(
            found.calls,
            vec![edit(
                "stats.py",
                "\"\"\"Summary statistics.\"\"\"\n",
                "\"\"\"Summary statistics.\"\"\"\nimport math\n"
            )],
            "{found:?}"
        );
        assert!(found.problems.is_empty(), "{found:?}");
        // One the file has already changes nothing, and says so.
        let has = &[("stats.py", "import math\n\nX = math.pi\n")];
        let found = edits(answer, EditFormat::Auto, &files(has), &[]);
        assert!(found.calls.is_empty() && found.changes_nothing, "{found:?}");
    }

    #[test]
    fn a_block_under_no_path_goes_to_the_one_read_file_that_defines_it() {
        const FILES: &[(&str, &str)] = &[
            ("calc.py", "def add(a, b):\n    return a - b\n"),
            (
                "test_calc.py",
                "def test_add():\n    assert add(2, 3) == 5\n",
            ),
            ("other.py", "def add(a, b):\n    return 0\n"),
        ];
        let shown =
            |paths: &[&str]| -> Vec<String> { paths.iter().map(|p| (*p).to_owned()).collect() };
        let answer = "The fix:\n```python\ndef add(a, b):\n    return a + b\n```\nand the test \
                      stays:\n```python\ndef test_add():\n    assert add(2, 3) == 5\n```";
        assert_eq!(
            edits(
                answer,
                EditFormat::Auto,
                &files(FILES),
                &shown(&["calc.py", "test_calc.py"])
            ),
            Edits {
                calls: vec![edit("calc.py", "    return a - b\n", "    return a + b\n")],
                problems: vec![],
                ..Edits::default()
            }
        );
        // Not in a file the model read: an example, left alone. The test it repeats is kept
        // as a repeat of the file the model read.
        assert_eq!(
            edits(
                answer,
                EditFormat::Auto,
                &files(FILES),
                &shown(&["test_calc.py"])
            ),
            Edits {
                repeated: BTreeSet::from(["test_calc.py".to_owned()]),
                ..Edits::default()
            }
        );
        // Defined in two files it read: which one is meant is not clear.
        let found = edits(
            answer,
            EditFormat::Auto,
            &files(FILES),
            &shown(&["calc.py", "other.py"]),
        );
        assert!(found.calls.is_empty(), "{found:?}");
        assert!(
            found.problems[0].contains("`add` is defined in calc.py and other.py"),
            "{found:?}"
        );
        // Not with tool calls only or search/replace only.
        for format in [EditFormat::Tools, EditFormat::Diff] {
            assert_eq!(
                edits(answer, format, &files(FILES), &shown(&["calc.py"])),
                Edits::default()
            );
        }
        // A block under the file's path in the same answer is the one that counts (here the
        // whole file, since it defines every function the file has).
        let both = format!("{answer}\ncalc.py\n```python\ndef add(a, b):\n    return b + a\n```");
        assert_eq!(
            edits(&both, EditFormat::Auto, &files(FILES), &shown(&["calc.py"])).calls,
            vec![write("calc.py", "def add(a, b):\n    return b + a\n", true)]
        );
    }

    #[test]
    fn a_fix_and_the_test_it_passes_shown_together_go_each_to_its_own_file() {
        const FILES: &[(&str, &str)] = &[
            (
                "calc.py",
                "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
            ),
            (
                "test_calc.py",
                "import unittest\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
            ),
        ];
        let shown = vec!["test_calc.py".to_owned(), "calc.py".to_owned()];
        let block = "from typing import Any\n\ndef add(a, b):\n    return a + b\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";
        let fixed = edit(
            "calc.py",
            "def add(a, b):\n    return a - b\n",
            "from typing import Any\ndef add(a, b):\n    return a + b\n",
        );
        // Under no path, under the fixed file's path, or with the path as the block's first
        // line: the fix goes to calc.py, the unchanged test changes nothing, and the new
        // import goes to the one file the block changes.
        for answer in [
            format!("```python\n{block}```"),
            format!("calc.py\n```python\n{block}```"),
            format!("```python\n# calc.py\n{block}```"),
        ] {
            assert_eq!(
                edits(&answer, EditFormat::Auto, &files(FILES), &shown),
                Edits {
                    calls: vec![fixed.clone()],
                    problems: vec![],
                    ..Edits::default()
                },
                "{answer}"
            );
        }
    }

    #[test]
    fn a_first_line_naming_the_file_names_it_and_is_not_written() {
        let found = edits(
            "```js\n// src/new.js\nexport const x = 1;\n```",
            EditFormat::Auto,
            &files(&[]),
            &[],
        );
        assert_eq!(
            found.calls,
            vec![write("src/new.js", "export const x = 1;\n", false)]
        );
        let none = files(&[]);
        for not_a_path in [
            "# a comment",
            "// TODO: fix",
            "#!/bin/sh",
            "x = 1 # calc.py",
        ] {
            assert_eq!(
                path_in_first_line(&[not_a_path], &none),
                None,
                "{not_a_path}"
            );
        }
        assert_eq!(
            path_in_first_line(&["<!-- index.html -->"], &none).as_deref(),
            Some("index.html")
        );
        // A bare path names the file only when it exists.
        assert_eq!(path_in_first_line(&["calc.py"], &none), None);
        assert_eq!(
            path_in_first_line(&["calc.py"], &files(CALC)).as_deref(),
            Some("calc.py")
        );
        let found = edits(
            "```\ncalc.py\ndef add(a, b):\n    return a + b\n```",
            EditFormat::Auto,
            &files(CALC),
            &[],
        );
        assert_eq!(found.calls, vec![add_fixed()]);
    }

    #[test]
    fn a_block_under_no_path_that_a_read_file_defines_but_cannot_take_is_a_problem() {
        const FILES: &[(&str, &str)] = &[("calc.py", "def add(a, b):\n    return a - b\n")];
        let answer = "```python\nLIMIT = 3\ndef add(a, b):\n    return a + b\n```";
        let found = edits(
            answer,
            EditFormat::Auto,
            &files(FILES),
            &["calc.py".to_owned()],
        );
        assert!(found.calls.is_empty(), "{found:?}");
        assert!(
            found.problems[0].starts_with(
                "A code block in your answer names no file and could not be put in place: the \
                 line `LIMIT = 3`"
            ),
            "{found:?}"
        );
        assert!(
            !found.changes_nothing,
            "a slip of form, not a fix as it is: {found:?}"
        );
        // Beside a block for a file that repeats it as it is, the slip still asks to be put
        // right.
        let both = format!("calc.py\n```python\ndef add(a, b):\n    return a - b\n```\n{answer}");
        let found = edits(
            &both,
            EditFormat::Auto,
            &files(FILES),
            &["calc.py".to_owned()],
        );
        assert!(found.calls.is_empty(), "{found:?}");
        assert!(!found.changes_nothing, "{found:?}");
    }

    #[test]
    fn the_last_block_for_a_file_wins_and_an_unchanged_file_is_not_written() {
        let answer = "calc.py\n```\nfirst\n```\nno, better:\ncalc.py\n```\nsecond\n```";
        let small: &[(&str, &str)] = &[("calc.py", "x\n")];
        let found = edits(answer, EditFormat::Auto, &files(small), &[]);
        assert_eq!(found.calls, vec![write("calc.py", "second\n", true)]);
        let same = "calc.py\n```\nx\n```";
        assert_eq!(
            edits(same, EditFormat::Auto, &files(small), &[]),
            Edits {
                calls: vec![],
                problems: vec![unchanged(&["calc.py".to_owned()])],
                changes_nothing: true,
                ..Edits::default()
            }
        );
    }

    #[test]
    fn a_later_block_for_a_file_that_cannot_be_applied_leaves_the_earlier_one_standing() {
        let fixed = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b";
        let answer = format!(
            "calc.py\n```python\n{fixed}\n```\nThen the line in calc.py:\n```python\n    \
             return a + b\n```"
        );
        let found = edits(&answer, EditFormat::Auto, &files(CALC), &[]);
        assert_eq!(
            found,
            Edits {
                calls: vec![write("calc.py", &format!("{fixed}\n"), true)],
                problems: vec![],
                ..Edits::default()
            }
        );
        // Neither can be applied: the model is told of the last.
        let neither =
            "calc.py\n```python\n    return 1\n```\ncalc.py\n```python\n    return 2\n```";
        let found = edits(neither, EditFormat::Auto, &files(CALC), &[]);
        assert!(found.calls.is_empty(), "{found:?}");
        assert_eq!(found.problems.len(), 1, "{found:?}");
        assert!(
            found.problems[0].contains("not the whole file"),
            "{found:?}"
        );
    }

    #[test]
    fn a_fix_under_no_path_is_made_when_the_block_under_its_files_path_cannot_be() {
        // As Qwen2.5-Coder-1.5B answered: the fixed function under "Here's the corrected
        // code:", then a sentence naming the file over a script that would write it (or
        // over the test that calls the function). Only the fix is code for the file.
        let fixed = "def add(a, b):\n    return a + b";
        for after in [
            "Now, let's change this in `calc.py`:\n```python\nwith open('calc.py') as f:\n    \
             lines = f.readlines()\nlines[1] = 'return a + b'\n```",
            "Now, let's test `calc.py` with it:\n```python\nfrom calc import add\n\n\
             assert add(2, 3) == 5\n```",
        ] {
            let answer = format!(
                "The bug is in `add` in calc.py.\n\nHere's the corrected code:\n\n```python\n\
                 {fixed}\n```\n\n{after}"
            );
            let found = edits(
                &answer,
                EditFormat::Auto,
                &files(CALC),
                &["calc.py".to_owned()],
            );
            assert_eq!(
                found,
                Edits {
                    calls: vec![add_fixed()],
                    problems: vec![],
                    ..Edits::default()
                },
                "{answer}"
            );
        }
        // The same in a CRLF file, which stays CRLF.
        const CRLF: &[(&str, &str)] = &[(
            "calc.py",
            "def add(a, b):\r\n    return a - b\r\n\r\n\r\ndef sub(a, b):\r\n    return a - b\r\n",
        )];
        let answer = format!(
            "Here's the corrected code:\n```python\n{fixed}\n```\nNow, let's change this in \
             `calc.py`:\n```python\nwith open('calc.py') as f:\n    lines = f.readlines()\n```"
        );
        let found = edits(
            &answer,
            EditFormat::Auto,
            &files(CRLF),
            &["calc.py".to_owned()],
        );
        assert_eq!(found.problems, Vec::<String>::new());
        assert_eq!(found.calls.len(), 1, "{found:?}");
        let (_, arguments) = &found.calls[0];
        assert_eq!(
            arguments["new_text"],
            "def add(a, b):\r\n    return a + b\r\n"
        );
        // Without the fix, the block under the path is still a problem the model is told of.
        let alone = "Now, let's change this in `calc.py`:\n```python\nwith open('calc.py') as \
                     f:\n    lines = f.readlines()\n```";
        let found = edits(
            alone,
            EditFormat::Auto,
            &files(CALC),
            &["calc.py".to_owned()],
        );
        assert!(found.calls.is_empty(), "{found:?}");
        assert_eq!(found.problems.len(), 1, "{found:?}");
    }

    #[test]
    fn every_function_without_the_lines_around_them_is_put_in_place_not_written_whole() {
        // As Qwen2.5-Coder-1.5B answered: the file's functions, fixed, without the
        // `'use strict'` before them and the exports after, or without the module's
        // docstring and constants. Written over the file, the fix would break it.
        const FILES: &[(&str, &str)] = &[
            (
                "dates.js",
                "'use strict';\n\nfunction isLeapYear(year) {\n  return year % 4 === 0;\n}\n\nmodule.exports = { isLeapYear };\n",
            ),
            (
                "shop.py",
                "\"\"\"Prices.\"\"\"\n\nRATE = 0.10\n\n\ndef total(t, member):\n    if member or t >= 100:\n        return t * (1 - RATE)\n    return t\n",
            ),
        ];
        let dates = edits(
            "dates.js\n```js\nfunction isLeapYear(year) {\n  return year % 400 === 0 || (year % 100 !== 0 && year % 4 === 0);\n}\n```",
            EditFormat::Auto,
            &files(FILES),
            &[],
        );
        assert_eq!(
            dates.calls,
            vec![edit(
                "dates.js",
                "  return year % 4 === 0;\n",
                "  return year % 400 === 0 || (year % 100 !== 0 && year % 4 === 0);\n"
            )]
        );
        let shop = edits(
            "shop.py\n```python\ndef total(t, member):\n    if member and t >= 100:\n        return t * (1 - RATE)\n    return t\n```",
            EditFormat::Auto,
            &files(FILES),
            &[],
        );
        assert_eq!(
            shop.calls,
            vec![edit(
                "shop.py",
                "    if member or t >= 100:\n",
                "    if member and t >= 100:\n"
            )]
        );
        // Given again from its first line, it is the whole file, and what it leaves out goes.
        let whole = "\"\"\"Prices.\"\"\"\n\ndef total(t, member):\n    return t";
        assert_eq!(
            edits(
                &format!("shop.py\n```python\n{whole}\n```"),
                EditFormat::Auto,
                &files(FILES),
                &[]
            )
            .calls,
            vec![write("shop.py", &format!("{whole}\n"), true)]
        );
    }

    #[test]
    fn a_block_copied_from_a_view_with_its_line_numbers_is_read_without_them() {
        let small: &[(&str, &str)] = &[("calc.py", "def add(a, b):\n    return a - b\n")];
        let numbered = "calc.py\n```python\n     1\tdef add(a, b):\n     2\t    return a + b\n```";
        assert_eq!(
            edits(numbered, EditFormat::Auto, &files(small), &[]).calls,
            vec![write("calc.py", "def add(a, b):\n    return a + b\n", true)]
        );
        // Numbers that do not count up by one, or a line without one: the code's own.
        for lines in [
            vec!["     1\tx = 1", "     3\ty = 2"],
            vec!["     1\tx = 1", "y = 2"],
            vec!["1 x"],
        ] {
            assert_eq!(without_line_numbers(&lines), None, "{lines:?}");
        }
        assert_eq!(
            without_line_numbers(&["    41\tx", "    42\t", "    43\t\ty"]),
            Some(vec!["x", "", "\ty"])
        );
    }

    #[test]
    fn code_that_the_file_already_holds_is_told_as_changing_nothing() {
        let shown = vec!["temperature.js".to_owned()];
        const FILES: &[(&str, &str)] = &[
            (
                "temperature.js",
                "'use strict';\n\nfunction toFahrenheit(celsius) {\n  return (celsius * 9) / 5 + 23;\n}\n\nfunction toCelsius(fahrenheit) {\n  return ((fahrenheit - 32) * 5) / 9;\n}\n\nmodule.exports = { toFahrenheit, toCelsius };\n",
            ),
            ("other.js", "function id(x) {\n  return x;\n}\n"),
        ];
        let function = "function toFahrenheit(celsius) {\n  return (celsius * 9) / 5 + 23;\n}\n";
        let told = Edits {
            calls: vec![],
            problems: vec![unchanged(&["temperature.js".to_owned()])],
            changes_nothing: true,
            ..Edits::default()
        };
        // As Qwen2.5-Coder-1.5B wrote it: the path as the block's first line, the function
        // exactly as it was; and the same under the path, or as a search/replace block that
        // replaces it with itself.
        for answer in [
            format!("```\ntemperature.js\n{function}```"),
            format!("temperature.js\n```js\n{function}```"),
            format!(
                "temperature.js\n<<<<<<< SEARCH\n{function}=======\n{function}>>>>>>> REPLACE\n"
            ),
        ] {
            let found = edits(&answer, EditFormat::Auto, &files(FILES), &shown);
            assert_eq!(found, told, "{answer}");
        }
        // One file unchanged beside one that changes: the change is made, nothing is said.
        let both = format!(
            "temperature.js\n```js\n{function}```\nother.js\n```js\nfunction id(x) {{\n  return x + 0;\n}}\n```"
        );
        let found = edits(&both, EditFormat::Auto, &files(FILES), &[]);
        assert_eq!(found.problems, Vec::<String>::new());
        assert_eq!(found.calls.len(), 1, "{found:?}");
        // Under no path it may be a quote ("the function stays"), and in a format that does
        // not take such blocks it is no edit at all: neither is told anything.
        // It is kept as a repeat, for when the model says it is done on a failing check.
        let quoted = format!("```js\n{function}```");
        assert_eq!(
            edits(&quoted, EditFormat::Auto, &files(FILES), &shown),
            Edits {
                repeated: BTreeSet::from(["temperature.js".to_owned()]),
                ..Edits::default()
            }
        );
        let whole = format!("temperature.js\n```js\n{function}```");
        assert_eq!(
            edits(&whole, EditFormat::Diff, &files(FILES), &shown),
            Edits::default()
        );
    }

    #[test]
    fn a_new_file_is_created_and_crlf_stays_crlf() {
        let found = edits(
            "new/mod.rs\n```rust\nfn f() {}\n```",
            EditFormat::Auto,
            &files(&[]),
            &[],
        );
        assert_eq!(found.calls, vec![write("new/mod.rs", "fn f() {}\n", false)]);
        let crlf: &[(&str, &str)] = &[("a.txt", "one\r\ntwo\r\n")];
        let found = edits(
            "a.txt\n```\none\n2\n```",
            EditFormat::Auto,
            &files(crlf),
            &[],
        );
        assert_eq!(found.calls, vec![write("a.txt", "one\r\n2\r\n", true)]);
    }

    #[test]
    fn search_replace_blocks_become_edits_inside_or_outside_a_fence() {
        let inside = "calc.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```";
        let outside = "Change calc.py:\ncalc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n";
        let edit = (
            ToolName::EditFile,
            json!({"path": "calc.py", "old_text": "    return a - b", "new_text": "    return a + b"}),
        );
        for answer in [inside, outside] {
            let found = edits(answer, EditFormat::Diff, &files(CALC), &[]);
            assert_eq!(found.calls, vec![edit.clone()], "{answer}");
            assert_eq!(edits(answer, EditFormat::Auto, &files(CALC), &[]), found);
            assert_eq!(
                edits(answer, EditFormat::Whole, &files(CALC), &[]),
                Edits::default()
            );
        }
    }

    #[test]
    fn a_broken_or_empty_search_replace_block_is_a_problem_not_an_edit() {
        for (answer, says) in [
            (
                "calc.py\n```\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n```",
                "is not complete",
            ),
            (
                "calc.py\n```\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n```",
                "nothing to search for",
            ),
            (
                "\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
                "names no file",
            ),
        ] {
            let found = edits(answer, EditFormat::Auto, &files(CALC), &[]);
            assert!(found.calls.is_empty(), "{answer}: {found:?}");
            assert!(
                found.problems.iter().any(|p| p.contains(says)),
                "{answer}: {found:?}"
            );
        }
    }

    #[test]
    fn paths_look_like_paths() {
        for yes in [
            "calc.py",
            "src/lib.rs",
            "bin/run",
            "a-b_c.test.js",
            ".env",
            ".gitignore",
        ] {
            assert!(looks_like_path(yes), "{yes}");
        }
        for no in [
            "",
            "/etc/passwd",
            "http://x/a.py",
            "calc",
            "a b.py",
            ".",
            "x.toolongext",
        ] {
            assert!(!looks_like_path(no), "{no}");
        }
        assert_eq!(strip_markup("`calc.py`:"), "calc.py");
        assert_eq!(strip_markup("**calc.py**."), "calc.py");
    }
}
