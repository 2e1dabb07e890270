//! Check-then-use races against the tools that walk a directory (issue 11, class 5): one
//! thread swaps a directory of the workspace for a link to a directory outside and back,
//! while `list_dir` and `search_text` walk it again and again. Nothing outside is shown.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use harness_testkit::escapes::Escapes;

/// The longest a race runs; it stops earlier once it has seen both states often enough.
const GIVE_UP: Duration = Duration::from_secs(20);
/// Calls per race before it may stop: on a walker that lists by path this many calls show
/// the outside every time we tried (it did in 2 of 60 calls in issue 11).
const ROUNDS: usize = 1500;

/// What only the outside holds: a file name and a content.
const OUTSIDE_NAME: &str = "only-outside.txt";
const OUTSIDE_CONTENT: &str = "outside token";

/// Swaps `work/raced` between a directory (holding `inside.txt`) and a link to
/// `outside/raced` (holding [`OUTSIDE_NAME`]) until `stop`: each swap is one
/// `renameat2(RENAME_EXCHANGE)`, so the name is never missing and the walker meets one or the
/// other at every instant.
fn swapper(escapes: &Escapes, stop: &AtomicBool) {
    let raced = escapes.work.join("raced");
    let spare = escapes.work.join("raced-spare");
    std::os::unix::fs::symlink(escapes.top.join("outside/raced"), &spare).expect("a link");
    while !stop.load(Ordering::Relaxed) {
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            &raced,
            rustix::fs::CWD,
            &spare,
            rustix::fs::RenameFlags::EXCHANGE,
        )
        .expect("exchange the directory and the link");
    }
}

/// Calls `tool` with each of `calls` while the swapper runs, and asserts that no result
/// shows the outside; returns how many results showed the directory inside.
fn race(tool: &str, calls: &[Value]) -> usize {
    let escapes = Escapes::new();
    let outside = escapes.top.join("outside/raced");
    fs::create_dir_all(&outside).expect("outside/raced");
    fs::write(outside.join(OUTSIDE_NAME), format!("{OUTSIDE_CONTENT}\n")).expect("write");
    fs::create_dir(escapes.work.join("raced")).expect("raced");
    fs::write(escapes.work.join("raced/inside.txt"), "inside token\n").expect("write");
    let toolbox = harness_tools::Toolbox::new(
        harness_sandbox::Workspace::new(&escapes.work).expect("the workspace"),
    );
    let stop = AtomicBool::new(false);
    let mut inside = 0;
    thread::scope(|scope| {
        scope.spawn(|| swapper(&escapes, &stop));
        let _stop = StopOnDrop(&stop);
        let started = Instant::now();
        let mut rounds = 0;
        while (rounds < ROUNDS || inside == 0) && started.elapsed() < GIVE_UP {
            for arguments in calls {
                rounds += 1;
                let result = toolbox.call(tool, arguments);
                let text = result.text();
                assert!(
                    !text.contains(OUTSIDE_NAME) && !text.contains(OUTSIDE_CONTENT),
                    "{tool} {arguments} showed the outside after {rounds} calls:\n{text}"
                );
                if text.contains("inside") {
                    inside += 1;
                }
            }
        }
    });
    assert!(!Path::new(&escapes.work.join(OUTSIDE_NAME)).exists());
    inside
}

struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[test]
fn list_dir_never_lists_outside_while_a_directory_is_swapped_for_a_link() {
    let inside = race(
        "list_dir",
        &[json!({}), json!({"path": "raced"}), json!({"depth": 5})],
    );
    assert!(inside > 0, "the race never listed the directory inside");
}

#[test]
fn search_text_never_searches_outside_while_a_directory_is_swapped_for_a_link() {
    let inside = race(
        "search_text",
        &[
            json!({"pattern": "token|only"}),
            json!({"pattern": "token|only", "path": "raced"}),
            json!({"pattern": "token", "glob": "*.txt"}),
        ],
    );
    assert!(inside > 0, "the race never searched the directory inside");
}
