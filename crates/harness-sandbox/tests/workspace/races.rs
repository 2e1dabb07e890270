//! Check-then-use races: one thread swaps a path between something inside and a link out
//! while another uses the path thousands of times. The outside is never reached.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use harness_sandbox::Error;

use crate::support::{Fixture, SECRET};

/// How long a race runs at most; it stops earlier once it has seen enough of both states.
const GIVE_UP: Duration = Duration::from_secs(5);
/// Operations per race before it may stop.
const ROUNDS: usize = 3000;

/// Atomically replaces `path` with a copy of `replacement` (a file or a link), via rename.
fn swap_in(replacement: &Path, path: &Path) {
    fs::rename(replacement, path).expect("rename over the raced path");
}

/// Runs `swapper` in a loop on another thread until `user` returns or panics, then joins
/// it.
fn race(swapper: impl Fn() + Send, user: impl FnOnce()) {
    let stop = &AtomicBool::new(false);
    thread::scope(|scope| {
        scope.spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                swapper();
            }
        });
        // Stops the swapper even when `user` panics; otherwise the scope would wait for it
        // forever instead of reporting the failure.
        let _stop = StopOnDrop(stop);
        user();
    });
}

struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[test]
fn a_reader_never_gets_the_secret_while_a_link_is_swapped_in() {
    let fixture = Fixture::new();
    fixture.file("raced", "inside");
    let workspace = fixture.workspace();
    let raced = fixture.inside("raced");
    let (file_spare, link_spare) = (fixture.inside("file-spare"), fixture.inside("link-spare"));
    let secret = fixture.outside("secret.txt");
    let mut inside_reads = 0;
    let mut refused = 0;
    race(
        || {
            fs::write(&file_spare, "inside").expect("spare file");
            swap_in(&file_spare, &raced);
            let _ = fs::remove_file(&link_spare);
            std::os::unix::fs::symlink(&secret, &link_spare).expect("spare link");
            swap_in(&link_spare, &raced);
        },
        || {
            let started = Instant::now();
            let mut rounds = 0;
            while (rounds < ROUNDS || inside_reads == 0 || refused == 0)
                && started.elapsed() < GIVE_UP
            {
                rounds += 1;
                match workspace.read("raced") {
                    Ok(contents) => {
                        assert_ne!(contents, SECRET, "read the secret through a swapped link");
                        assert_eq!(contents, b"inside");
                        inside_reads += 1;
                    }
                    // The link is an escape when the walk sees it, and a refused open
                    // (no link is followed) when it appears between walk and open.
                    Err(Error::Escape { .. } | Error::Io { .. } | Error::NotFound { .. }) => {
                        refused += 1;
                    }
                    Err(other) => panic!("unexpected error: {other:?}"),
                }
            }
        },
    );
    assert!(inside_reads > 0, "the race never read the file inside");
    assert!(refused > 0, "the race never met the link");
}

#[test]
fn a_writer_never_writes_outside_while_a_directory_link_is_swapped_in() {
    let fixture = Fixture::new();
    fixture.dir("dir");
    let workspace = fixture.workspace();
    let before = fixture.outside_snapshot();
    let mut written = 0;
    let mut refused = 0;
    race(swap_dir_for_link(&fixture), || {
        let started = Instant::now();
        let mut rounds = 0;
        while (rounds < ROUNDS || written == 0 || refused == 0) && started.elapsed() < GIVE_UP {
            rounds += 1;
            match workspace.write("dir/new.txt", "written") {
                Ok(()) => written += 1,
                Err(_) => refused += 1,
            }
        }
    });
    assert_eq!(
        fixture.outside_snapshot(),
        before,
        "a write reached outside"
    );
    assert!(!fixture.outside("dir/new.txt").exists());
    assert!(written > 0, "the race never wrote inside");
    assert!(refused > 0, "the race never met the link");
}

/// Swaps `dir` (a directory inside the root) for a link to `outside/dir` (holding
/// `secret.txt`) and back, one `renameat2(RENAME_EXCHANGE)` at a time: the name is never
/// missing, and an operation meets the directory or the link at every instant.
fn swap_dir_for_link(fixture: &Fixture) -> impl Fn() + Send + use<> {
    let raced = fixture.inside("dir");
    let spare = fixture.inside("dir-spare");
    std::os::unix::fs::symlink(fixture.outside("dir"), &spare).expect("a link");
    move || {
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

#[test]
fn a_listing_never_shows_names_outside_while_a_directory_is_swapped_for_a_link() {
    let fixture = Fixture::new();
    fixture.file("dir/inside.txt", "inside");
    let workspace = fixture.workspace();
    let mut listed = 0;
    let mut refused = 0;
    race(swap_dir_for_link(&fixture), || {
        let started = Instant::now();
        let mut rounds = 0;
        while (rounds < ROUNDS || listed == 0 || refused == 0) && started.elapsed() < GIVE_UP {
            rounds += 1;
            // By path, and through the root's handle as a walker does.
            let by_path = workspace.read_dir("dir");
            let by_handle = workspace
                .open_dir(".")
                .and_then(|root| root.open_dir("dir"))
                .and_then(|dir| dir.entries());
            for result in [by_path, by_handle] {
                match result {
                    Ok(entries) => {
                        assert!(
                            entries.iter().all(|entry| entry.name() != "secret.txt"),
                            "listed the outside directory: {entries:?}"
                        );
                        listed += 1;
                    }
                    Err(_) => refused += 1,
                }
            }
        }
    });
    assert!(listed > 0, "the race never listed the directory inside");
    assert!(refused > 0, "the race never met the link");
}
