//! The property the crate exists for: whatever the user had (committed, staged,
//! modified, deleted, untracked, executable, symlinked, nested) and whatever the
//! agent does (create, modify, delete, chmod, symlink, rename, remove
//! directories, stage), undo restores the user's files and index exactly, leaves
//! ignored files alone, and redo restores the agent's state exactly. Along the
//! way, every checkpoint (from change notes or from full scans) records the
//! tree `git add --all` would.

#![cfg(unix)]
// Fixtures use Unix permissions and symlinks.
// Test helpers outside #[test] functions unwrap too: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use common::{Entry, IndexEntry, Repo, git_snapshot, tree_of};
use harness_undo::{BeginOptions, Error, Force, Session, Tracking};
use proptest::prelude::*;

/// Paths of the first commit; they never collide (no file is another's directory).
const COMMITTED: &[&str] = &["x", "y", "a/x", "a/y", "a/b/x", "a/b/z", "c/x", "d e/f"];
/// Paths that are not in the first commit.
const UNTRACKED: &[&str] = &["u", "a/u", "n/u", "n/m/u"];
/// Paths the agent may also use, colliding with the directories above.
const COLLIDING: &[&str] = &["c", "a/b", "a/y/w"];
/// Ignored paths. Two sit below paths that are files elsewhere, so that undo
/// sometimes finds ignored files where it must put a file back.
const IGNORED: &[&str] = &["i.log", "build/o", "build/p/q", "x/q.log", "a/y/q.log"];
/// Directories the agent may remove whole.
const DIRECTORIES: &[&str] = &["a", "a/b", "c", "n", "d e"];
/// Symlink targets: files, directories, outside, nowhere.
const TARGETS: &[&str] = &["x", "a", "../outside", "nowhere", "a/b/x"];

fn is_ignored(path: &str) -> bool {
    path.ends_with(".log") || path.starts_with("build/")
}

#[derive(Clone, Debug)]
enum Node {
    File { bytes: Vec<u8>, executable: bool },
    Symlink(&'static str),
}

#[derive(Clone, Debug)]
enum UserOp {
    Modify(&'static str, Vec<u8>),
    Delete(&'static str),
    Untracked(&'static str, Vec<u8>),
    Stage(&'static str),
    Chmod(&'static str),
    Ignored(&'static str, Vec<u8>),
}

#[derive(Clone, Debug)]
enum AgentOp {
    Write(&'static str, Vec<u8>),
    Delete(&'static str),
    Chmod(&'static str),
    Symlink(&'static str, &'static str),
    Rename(&'static str, &'static str),
    RemoveDir(&'static str),
    WriteIgnored(&'static str, Vec<u8>),
    Stage(&'static str),
    Checkpoint,
}

fn pick(paths: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    prop::sample::select(paths)
}

fn any_path() -> impl Strategy<Value = &'static str> {
    prop_oneof![pick(COMMITTED), pick(UNTRACKED), pick(COLLIDING)]
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(prop::sample::select(b"ab\n ".to_vec()), 0..24),
        // Binary, with NUL bytes.
        prop::collection::vec(any::<u8>(), 0..24),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    prop_oneof![
        4 => (bytes(), any::<bool>()).prop_map(|(bytes, executable)| Node::File { bytes, executable }),
        1 => pick(TARGETS).prop_map(Node::Symlink),
    ]
}

fn user_op() -> impl Strategy<Value = UserOp> {
    prop_oneof![
        (pick(COMMITTED), bytes()).prop_map(|(p, b)| UserOp::Modify(p, b)),
        pick(COMMITTED).prop_map(UserOp::Delete),
        (pick(UNTRACKED), bytes()).prop_map(|(p, b)| UserOp::Untracked(p, b)),
        prop_oneof![pick(COMMITTED), pick(UNTRACKED)].prop_map(UserOp::Stage),
        pick(COMMITTED).prop_map(UserOp::Chmod),
        (pick(IGNORED), bytes()).prop_map(|(p, b)| UserOp::Ignored(p, b)),
    ]
}

fn agent_op() -> impl Strategy<Value = AgentOp> {
    prop_oneof![
        4 => (any_path(), bytes()).prop_map(|(p, b)| AgentOp::Write(p, b)),
        2 => any_path().prop_map(AgentOp::Delete),
        1 => any_path().prop_map(AgentOp::Chmod),
        1 => (any_path(), pick(TARGETS)).prop_map(|(p, t)| AgentOp::Symlink(p, t)),
        1 => (any_path(), any_path()).prop_map(|(from, to)| AgentOp::Rename(from, to)),
        1 => pick(DIRECTORIES).prop_map(AgentOp::RemoveDir),
        1 => (pick(IGNORED), bytes()).prop_map(|(p, b)| AgentOp::WriteIgnored(p, b)),
        1 => any_path().prop_map(AgentOp::Stage),
        2 => Just(AgentOp::Checkpoint),
    ]
}

#[derive(Clone, Debug)]
struct Case {
    committed: BTreeMap<&'static str, Node>,
    user: Vec<UserOp>,
    agent: Vec<AgentOp>,
    tracking: Tracking,
    undo_from_new_session: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::btree_map(pick(COMMITTED), node(), 1..6),
        prop::collection::vec(user_op(), 0..6),
        prop::collection::vec(agent_op(), 0..10),
        prop_oneof![Just(Tracking::Watch), Just(Tracking::FullScan)],
        any::<bool>(),
    )
        .prop_map(
            |(committed, user, agent, tracking, undo_from_new_session)| Case {
                committed,
                user,
                agent,
                tracking,
                undo_from_new_session,
            },
        )
}

/// Makes every ancestor of `path` a real directory and `path` itself not a
/// directory, as an agent that writes `path` would have to.
fn make_room(root: &Path, path: &str) {
    let path = Path::new(path);
    let mut ancestors: Vec<&Path> = path
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .collect();
    ancestors.reverse();
    for ancestor in ancestors {
        let full = root.join(ancestor);
        match fs::symlink_metadata(&full) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                fs::remove_file(&full).unwrap();
                fs::create_dir(&full).unwrap();
            }
            Err(_) => fs::create_dir(&full).unwrap(),
        }
    }
    let full = root.join(path);
    match fs::symlink_metadata(&full) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(&full).unwrap(),
        Ok(_) => fs::remove_file(&full).unwrap(),
        Err(_) => {}
    }
}

fn write(repo: &Repo, path: &str, bytes: &[u8]) {
    make_room(&repo.root, path);
    fs::write(repo.path(path), bytes).unwrap();
}

fn is_file(repo: &Repo, path: &str) -> bool {
    fs::symlink_metadata(repo.path(path)).is_ok_and(|m| m.is_file())
}

fn toggle_executable(repo: &Repo, path: &str) {
    if is_file(repo, path) {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(repo.path(path)).unwrap().permissions().mode();
        repo.chmod(path, if mode & 0o100 == 0 { 0o755 } else { 0o644 });
    }
}

fn delete(repo: &Repo, path: &str) {
    if fs::symlink_metadata(repo.path(path)).is_ok_and(|m| !m.is_dir()) {
        repo.remove(path);
    }
}

fn stage(repo: &Repo, path: &str) {
    // git add of a path inside a symlinked or file "directory" is an error in git too.
    let reachable = Path::new(path)
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .all(|a| fs::symlink_metadata(repo.root.join(a)).is_ok_and(|m| m.is_dir()));
    let kind = fs::symlink_metadata(repo.path(path));
    if reachable && kind.as_ref().is_ok_and(|m| !m.is_dir()) || kind.is_err() {
        repo.stage(path);
    }
}

fn apply_user(repo: &Repo, op: &UserOp) {
    match op {
        UserOp::Modify(path, bytes) => {
            if is_file(repo, path) {
                fs::write(repo.path(path), bytes).unwrap();
            }
        }
        UserOp::Delete(path) => delete(repo, path),
        UserOp::Untracked(path, bytes) | UserOp::Ignored(path, bytes) => write(repo, path, bytes),
        UserOp::Stage(path) => stage(repo, path),
        UserOp::Chmod(path) => toggle_executable(repo, path),
    }
}

fn apply_agent(repo: &Repo, op: &AgentOp) {
    match op {
        AgentOp::Write(path, bytes) | AgentOp::WriteIgnored(path, bytes) => {
            write(repo, path, bytes)
        }
        AgentOp::Delete(path) => delete(repo, path),
        AgentOp::Chmod(path) => toggle_executable(repo, path),
        AgentOp::Symlink(path, target) => {
            make_room(&repo.root, path);
            repo.symlink(path, target);
        }
        AgentOp::Rename(from, to) => {
            let related = from == to
                || to.starts_with(&format!("{from}/"))
                || from.starts_with(&format!("{to}/"));
            if !related && fs::symlink_metadata(repo.path(from)).is_ok() {
                make_room(&repo.root, to);
                // Making room may have removed `from` (a file standing where a
                // directory of `to` had to be).
                if fs::symlink_metadata(repo.path(from)).is_ok() {
                    fs::rename(repo.path(from), repo.path(to)).unwrap();
                }
            }
        }
        AgentOp::RemoveDir(dir) => {
            if fs::symlink_metadata(repo.path(dir)).is_ok_and(|m| m.is_dir()) {
                fs::remove_dir_all(repo.path(dir)).unwrap();
            }
        }
        AgentOp::Stage(path) => stage(repo, path),
        AgentOp::Checkpoint => unreachable!("handled by the caller"),
    }
}

fn split_ignored(
    tree: BTreeMap<String, Entry>,
) -> (BTreeMap<String, Entry>, BTreeMap<String, Entry>) {
    tree.into_iter().partition(|(path, _)| !is_ignored(path))
}

fn setup(case: &Case) -> Repo {
    let repo = Repo::with_files(&[(".gitignore", "*.log\nbuild/\n")]);
    for (path, node) in &case.committed {
        match node {
            Node::File { bytes, executable } => {
                write(&repo, path, bytes);
                if *executable {
                    repo.chmod(path, 0o755);
                }
            }
            Node::Symlink(target) => {
                make_room(&repo.root, path);
                repo.symlink(path, target);
            }
        }
    }
    repo.commit_all("committed");
    for op in &case.user {
        apply_user(&repo, op);
    }
    repo
}

fn check(case: Case) -> Result<(), TestCaseError> {
    let repo = setup(&case);
    let (before, before_ignored) = split_ignored(repo.tree());
    let before_index: Vec<IndexEntry> = repo.index();

    let options = BeginOptions {
        allow_dirty: true,
        tracking: case.tracking,
        ..BeginOptions::default()
    };
    let mut session = Session::begin(&repo.root, options).unwrap();
    let id = session.id().clone();
    let mut last = session.info().pre_run.to_string();
    for op in &case.agent {
        if let AgentOp::Checkpoint = op {
            let expected = git_snapshot(&repo, &last);
            if let Some(checkpoint) = session.checkpoint("step").unwrap() {
                last = checkpoint.commit.to_string();
            }
            prop_assert_eq!(
                tree_of(&repo, &last),
                expected,
                "the checkpoint is not what git records"
            );
        } else {
            apply_agent(&repo, op);
        }
    }
    let agent_tree = repo.tree();
    let agent_index = repo.index();
    let (agent_files, agent_ignored) = split_ignored(agent_tree.clone());
    // Issue 45: ignored files a command changed are the run's changes too.
    let changed =
        agent_files != before || agent_index != before_index || agent_ignored != before_ignored;

    if case.undo_from_new_session {
        drop(session);
        session = Session::open(&repo.root, &id).unwrap();
    }
    let undone = session.undo(Force::No).unwrap();
    prop_assert_eq!(undone.saved.is_some(), changed);
    let (files, ignored) = split_ignored(repo.tree());
    prop_assert_eq!(files, before, "undo did not restore the user's files");
    // Displaced files are ignored ones that stood where a file had to come back.
    for path in &undone.displaced {
        let path = path.to_str().unwrap();
        prop_assert!(
            agent_ignored.contains_key(path),
            "displaced {path}, not an ignored file"
        );
    }
    // Issue 45: the ignored files come back as they were before the run too.
    prop_assert_eq!(
        ignored,
        before_ignored,
        "undo did not restore the ignored files"
    );
    prop_assert_eq!(repo.index(), before_index, "undo did not restore the index");

    if case.undo_from_new_session {
        drop(session);
        session = Session::open(&repo.root, &id).unwrap();
    }
    match session.redo(Force::No) {
        Ok(_) => {
            prop_assert!(changed);
            prop_assert_eq!(
                repo.tree(),
                agent_tree,
                "redo did not restore the agent's files"
            );
            prop_assert_eq!(
                repo.index(),
                agent_index,
                "redo did not restore the agent's index"
            );
        }
        Err(Error::NothingToRedo { .. }) => prop_assert!(!changed),
        Err(e) => return Err(TestCaseError::fail(e.to_string())),
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn undo_restores_the_user_and_redo_the_agent_exactly(case in case()) {
        check(case)?;
    }
}

/// A command a model might run that changes `.git` or files behind the
/// harness's back.
#[derive(Clone, Copy, Debug)]
enum Hostile {
    RemoveGit,
    DeleteRefsThenGc,
    DeletePreRef,
    DeleteTag,
    ExpireReflog,
    ResetHard,
    CheckoutAll,
    CleanAll,
    ClearStash,
    CommitAll,
}

impl Hostile {
    /// The shell script that does it in the run `id`.
    fn script(self, id: &str) -> String {
        match self {
            Hostile::RemoveGit => "rm -rf .git".into(),
            Hostile::DeleteRefsThenGc => "git for-each-ref --format='%(refname)' refs/harness \
                refs/tags/harness | xargs -n1 git update-ref -d; \
                git reflog expire --expire=now --all; git gc -q --prune=now"
                .into(),
            Hostile::DeletePreRef => format!("git update-ref -d refs/harness/{id}/pre"),
            Hostile::DeleteTag => format!("git tag -d harness/{id}"),
            Hostile::ExpireReflog => "git reflog expire --expire=now --all".into(),
            Hostile::ResetHard => "git reset -q --hard".into(),
            Hostile::CheckoutAll => "git checkout -q -- .".into(),
            Hostile::CleanAll => "git clean -q -fdx".into(),
            Hostile::ClearStash => "git stash clear".into(),
            Hostile::CommitAll => "git commit -q -am x".into(),
        }
    }
}

fn hostile() -> impl Strategy<Value = Hostile> {
    prop::sample::select(vec![
        Hostile::RemoveGit,
        Hostile::DeleteRefsThenGc,
        Hostile::DeletePreRef,
        Hostile::DeleteTag,
        Hostile::ExpireReflog,
        Hostile::ResetHard,
        Hostile::CheckoutAll,
        Hostile::CleanAll,
        Hostile::ClearStash,
        Hostile::CommitAll,
    ])
}

/// Runs `script` in the workspace as the model's command would (its failure,
/// say nothing to commit, is the model's problem, not the test's).
fn run_hostile(repo: &Repo, script: &str) {
    common::shell_command(&repo.root, script).output().unwrap();
}

/// An ignored path the file tools write (saved first), then maybe changed
/// by commands: written, edited, created new, deleted.
#[derive(Clone, Debug)]
enum ToolOp {
    Write(&'static str, Vec<u8>),
    DeleteByCommand(&'static str),
}

fn tool_op() -> impl Strategy<Value = ToolOp> {
    prop_oneof![
        3 => (pick(IGNORED), bytes()).prop_map(|(p, b)| ToolOp::Write(p, b)),
        1 => pick(IGNORED).prop_map(ToolOp::DeleteByCommand),
    ]
}

#[derive(Clone, Debug)]
struct HostileCase {
    case: Case,
    tools: Vec<ToolOp>,
    hostile: Hostile,
}

fn hostile_case() -> impl Strategy<Value = HostileCase> {
    (case(), prop::collection::vec(tool_op(), 0..4), hostile()).prop_map(
        |(case, tools, hostile)| HostileCase {
            case,
            tools,
            hostile,
        },
    )
}

/// The files undo answers for: every file, ignored or not (issue 45; before it, only the
/// ignored ones the file tools wrote).
fn answered_for(tree: &BTreeMap<String, Entry>, _protected: &[&str]) -> BTreeMap<String, Entry> {
    tree.clone()
}

fn check_hostile(hostile_case: HostileCase) -> Result<(), TestCaseError> {
    let HostileCase {
        case,
        tools,
        hostile,
    } = hostile_case;
    let repo = setup(&case);
    let protected: Vec<&str> = tools
        .iter()
        .filter_map(|op| match op {
            ToolOp::Write(path, _) => Some(*path),
            ToolOp::DeleteByCommand(_) => None,
        })
        .collect();
    let before_tree = repo.tree();
    let before_index = repo.index();
    let options = BeginOptions {
        allow_dirty: true,
        tracking: case.tracking,
        ..BeginOptions::default()
    };
    let mut session = Session::begin(&repo.root, options).unwrap();
    let id = session.id().clone();
    for op in &case.agent {
        if let AgentOp::Checkpoint = op {
            session.checkpoint("step").unwrap();
        } else {
            apply_agent(&repo, op);
        }
    }
    // What each ignored path was when a file tool first wrote it: that is
    // what undo owes (a command may have changed it earlier, unrecorded).
    let mut first_written: BTreeMap<String, Option<Entry>> = BTreeMap::new();
    for op in &tools {
        match op {
            ToolOp::Write(path, bytes) => {
                // write_file refuses a path below a file or symlink, or onto a directory.
                let blocked = Path::new(path)
                    .ancestors()
                    .skip(1)
                    .filter(|a| !a.as_os_str().is_empty())
                    .any(|a| fs::symlink_metadata(repo.root.join(a)).is_ok_and(|m| !m.is_dir()))
                    || fs::symlink_metadata(repo.path(path)).is_ok_and(|m| m.is_dir());
                if blocked {
                    continue;
                }
                let now = repo.tree().get(*path).cloned();
                first_written.entry((*path).to_owned()).or_insert(now);
                session.protect(Path::new(path)).unwrap();
                write(&repo, path, bytes);
            }
            ToolOp::DeleteByCommand(path) => delete(&repo, path),
        }
    }
    session.checkpoint("tools").unwrap();
    run_hostile(&repo, &hostile.script(id.as_str()));
    let repository_survived = repo.path(".git").exists();
    let mut before = answered_for(&before_tree, &[]);
    // An ignored path a file tool wrote is owed as it was at the tool's first write.
    for path in first_written.keys().filter(|path| is_ignored(path)) {
        before.remove(path);
    }
    for (path, entry) in first_written {
        // Below a file of the pre-run state, it cannot have been there before.
        let below_a_file = Path::new(&path)
            .ancestors()
            .skip(1)
            .any(|a| a.to_str().is_some_and(|a| before_tree.contains_key(a)));
        if let (Some(entry), false) = (entry, below_a_file) {
            before.insert(path, entry);
        }
    }

    if case.undo_from_new_session {
        drop(session);
        session = Session::open(&repo.root, &id).unwrap();
    }
    let at_undo = answered_for(&repo.tree(), &protected);
    let index_at_undo = repository_survived.then(|| repo.index());
    // A commit moved HEAD: undo is told to restore the files anyway.
    let undone = session.undo(Force::Yes).unwrap();
    prop_assert_eq!(
        answered_for(&repo.tree(), &protected),
        before.clone(),
        "undo did not restore the pre-run working tree after {:?}",
        hostile
    );
    prop_assert_eq!(undone.repository_missing, !repository_survived);
    if repository_survived {
        prop_assert_eq!(repo.index(), before_index, "undo did not restore the index");
    } else {
        prop_assert!(!repo.exists(".git"), "undo claimed a repository back");
        prop_assert!(
            undone
                .repaired
                .contains(&harness_undo::Tampering::RepositoryGone)
        );
    }

    if undone.saved.is_some() {
        if case.undo_from_new_session {
            drop(session);
            session = Session::open(&repo.root, &id).unwrap();
        }
        session.redo(Force::Yes).unwrap();
        prop_assert_eq!(
            answered_for(&repo.tree(), &protected),
            at_undo,
            "redo did not bring back what undo replaced after {:?}",
            hostile
        );
        if let Some(index) = index_at_undo {
            prop_assert_eq!(repo.index(), index, "redo did not restore the index");
        }
    } else {
        prop_assert_eq!(at_undo, before);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases() / 3,
        ..ProptestConfig::default()
    })]

    #[test]
    fn undo_restores_the_pre_run_tree_after_any_hostile_command(case in hostile_case()) {
        check_hostile(case)?;
    }
}
