//! `harness show` reads the transcripts of older versions, and says clearly what it cannot
//! read: a transcript of a newer format, or a damaged line.
//!
//! `fixtures/transcripts/format-1.jsonl` was written by the harness before transcripts
//! carried a format number (a run with a refused path, a tampering command, failed
//! verifications and nudges); `format-1.show*.txt` is what `harness show` prints for it.

use std::fs;
use std::path::PathBuf;

use crate::support::{Model, Repo, Turn, source_root};

/// A workspace with one finished run, and the path of that run's transcript.
fn one_run() -> (Repo, PathBuf) {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    model.script(vec![Turn::Text("Nothing to do.")]);
    repo.harness(&["run", "--host", &model.url(), "look around"])
        .assert_exit(1);
    let runs = repo.runs_dir();
    let run = fs::read_dir(&runs)
        .expect("the run is recorded")
        .map(|entry| entry.expect("a run directory").path())
        .next()
        .expect("one run");
    (repo, run.join("transcript.jsonl"))
}

fn fixture(name: &str) -> String {
    fs::read_to_string(source_root().join("fixtures/transcripts").join(name))
        .expect("the transcript fixtures exist")
}

#[test]
fn show_reads_a_transcript_of_format_1_as_that_version_showed_it() {
    let (repo, transcript) = one_run();
    fs::write(&transcript, fixture("format-1.jsonl")).expect("replace the transcript");
    for (args, expected) in [
        (&["show"][..], "format-1.show.txt"),
        (&["show", "--full"], "format-1.show-full.txt"),
    ] {
        let show = repo.harness(args);
        show.assert_exit(0);
        let (_run_line, rest) = show.stdout.split_once('\n').expect("a first line");
        assert_eq!(rest, fixture(expected), "harness {}", args.join(" "));
    }
}

#[test]
fn show_refuses_a_newer_format_and_a_damaged_line_by_name() {
    let (repo, transcript) = one_run();
    let today = fs::read_to_string(&transcript).expect("a transcript");
    let first = today.lines().next().expect("a first line");
    assert!(
        first.contains(r#""type":"run""#) && first.contains(r#""format":2"#),
        "{first}"
    );

    let newer = today.replacen("\"format\":2", "\"format\":3", 1);
    fs::write(&transcript, newer).expect("write");
    repo.harness(&["show"])
        .assert_exit(2)
        .assert_stderr_has(&["transcript of format 3, written by a newer harness"]);

    let mut damaged: Vec<&str> = today.lines().collect();
    damaged.insert(1, r#"{"type":"tool","t":0.1,"step":1,"tool":"read_file"}"#);
    fs::write(&transcript, damaged.join("\n")).expect("write");
    repo.harness(&["show"])
        .assert_exit(2)
        .assert_stderr_has(&["line 2: a `tool` record this harness cannot read (missing field"]);

    // --json prints the lines as they are, whatever their format.
    let show = repo.harness(&["show", "--json"]);
    show.assert_exit(0);
    assert!(show.stdout.contains(r#""tool":"read_file""#), "{show}");
}
