//! The record of a run: the transcript, the events, and that they agree.

use super::*;

#[test]
fn the_transcript_holds_every_step_and_no_secret() {
    let (dir, toolbox) = workspace(&[
        ("config.txt", "password = hunter2hunter2\n"),
        ("a.txt", "x\n"),
    ]);
    let path = dir.path().join("transcript.jsonl");
    let chat = Arc::new(FakeChat::new([
        Reply::call("read_file", json!({"path": "config.txt"})).with_tokens(100, 10),
        Reply::call(
            "edit_file",
            json!({"path": "a.txt", "old_text": "x", "new_text": "y"}),
        ),
        Reply::text("Found the api_key=sk-abcdefabcdefabcdef1234 and fixed a.txt."),
    ]));
    let report = Agent::new(chat, &toolbox)
        .budgets(no_head_start())
        .verification(Verification::parse("grep -q y a.txt").unwrap())
        .transcript(Transcript::create(&path).unwrap())
        .run("fix a.txt", &mut (), &mut Labels::default());
    assert_eq!(report.outcome, Outcome::Verified);
    assert_eq!(report.transcript.as_deref(), Some(path.as_path()));

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("hunter2hunter2"), "{text}");
    assert!(!text.contains("sk-abcdefabcdefabcdef1234"), "{text}");
    // The lines as JSON, to check the names a reader of the file sees; and typed, as
    // `harness show` reads them.
    let records: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let typed = Transcript::read(&path).unwrap();
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    let typed_kinds: Vec<&str> = typed.iter().map(|line| line.record.kind()).collect();
    assert_eq!(typed_kinds, kinds);
    assert_eq!(
        kinds,
        [
            "run",
            "message",
            "message",
            "reply",
            "tool",
            "reply",
            "tool",
            "checkpoint",
            "reply",
            "verification",
            "checkpoint",
            "outcome"
        ]
    );
    assert_eq!(records[1]["role"], "system");
    let task = records[2]["content"].as_str().unwrap_or_default();
    assert!(
        task.starts_with("fix a.txt\n\nThe repository is at "),
        "{task}"
    );
    assert_eq!(records[3]["prompt_tokens"], 100);
    assert_eq!(records[3]["tool_calls"][0]["name"], "read_file");
    assert!(
        records[4]["result"]
            .as_str()
            .unwrap()
            .contains("[REDACTED:")
    );
    assert!(records[4]["seconds"].as_f64().is_some());
    assert_eq!(records[9]["passed"], true);
    assert_eq!(records[11]["outcome"], "verified");
    assert_eq!(records[11]["steps"], 3);
    let times: Vec<f64> = records.iter().map(|r| r["t"].as_f64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
}

#[test]
fn events_follow_the_run_and_serialize() {
    let (_dir, toolbox) = workspace(&[("a.txt", "x\n")]);
    let ran = run(
        &toolbox,
        vec![
            Reply::call(
                "edit_file",
                json!({"path": "a.txt", "old_text": "x", "new_text": "y"}),
            ),
            Reply::text("Done."),
        ],
        Some("grep -q y a.txt"),
    );
    let names: Vec<&str> = ran
        .events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "started",
            "waiting",
            "replied",
            "tool_started",
            "tool_finished",
            "checkpoint",
            "waiting",
            "text",
            "replied",
            "verification_started",
            "verification_finished",
            "checkpoint",
            "finished"
        ]
    );
    let finished = &ran.events_named("tool_finished")[0];
    assert_eq!(finished["tool"], "edit_file");
    assert_eq!(finished["target"], "a.txt");
    assert_eq!(finished["detail"], "+1 −1");
    assert_eq!(finished["is_error"], false);
    assert_eq!(ran.events.last().unwrap()["report"]["outcome"], "verified");
}

/// Checkpoints that fail the second time, and find `.git` changed after the first command.
#[derive(Default)]
struct Troubled {
    taken: u32,
    verified: u32,
}

impl Checkpoints for Troubled {
    fn checkpoint(
        &mut self,
        _label: &str,
    ) -> Result<Option<u32>, Box<dyn std::error::Error + Send + Sync>> {
        self.taken += 1;
        if self.taken == 2 {
            return Err("the disk is full".into());
        }
        Ok(Some(self.taken))
    }

    fn verify(&mut self) -> Result<Vec<String>, Box<dyn std::error::Error + Send + Sync>> {
        self.verified += 1;
        Ok(if self.verified == 1 {
            vec!["refs/harness/x/pre was deleted; restored from the harness's store".to_owned()]
        } else {
            Vec::new()
        })
    }
}

/// An event's field names and the record's names for them: `a.len` (an array of that
/// length), `a.contains` (a string containing the value), `*` (each field of the value).
type Renames = &'static [(&'static str, &'static str)];

/// For each kind of event the transcript also records: the record's kind, and the event's
/// fields under their names in the record where those differ. Events missing here are the
/// live view's alone (waiting, streamed text, a tool or a verification starting): their
/// record is written when the call or the check ends.
const EVENT_RECORDS: &[(&str, &str, Renames)] = &[
    ("started", "run", &[]),
    ("replied", "reply", &[("tool_calls", "tool_calls.len")]),
    (
        "tool_finished",
        "tool",
        &[
            ("output", "result"),
            ("target", "summary.contains"),
            ("detail", "summary.contains"),
        ],
    ),
    ("nudged", "nudge", &[("message", "content")]),
    ("context_trimmed", "trim", &[]),
    ("checkpoint", "checkpoint", &[]),
    ("checkpoint_failed", "checkpoint_failed", &[]),
    ("tampered", "tampered", &[]),
    ("verification_finished", "verification", &[]),
    ("finished", "outcome", &[("report", "*")]),
];

/// True if `record` holds every field of `event`, as `renames` maps them.
fn holds(record: &Value, event: &Value, renames: &[(&str, &str)]) -> bool {
    let fields = event.as_object().expect("an event is an object");
    fields.iter().all(|(name, value)| {
        if name == "event" {
            return true;
        }
        match renames
            .iter()
            .find(|(from, _)| from == name)
            .map(|(_, to)| *to)
        {
            None => record[name] == *value,
            Some("*") => value
                .as_object()
                .expect("a nested report is an object")
                .iter()
                .all(|(field, inner)| record[field] == *inner),
            Some(to) => match to.split_once('.') {
                Some((field, "len")) => {
                    record[field].as_array().map(Vec::len) == value.as_u64().map(|n| n as usize)
                }
                Some((field, "contains")) => record[field]
                    .as_str()
                    .zip(value.as_str())
                    .is_some_and(|(text, part)| text.contains(part)),
                _ => record[to] == *value,
            },
        }
    })
}

#[test]
fn every_event_the_transcript_also_records_is_there_with_the_same_fields() {
    let files: Vec<(String, String)> = (0..4)
        .map(|n| {
            (
                format!("f{n}.txt"),
                format!("file{n} {}\n", "=".repeat(60)).repeat(60),
            )
        })
        .chain([("a.txt".to_owned(), "x\n".to_owned())])
        .collect();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let (dir, toolbox) = workspace(&borrowed);
    let path = dir.path().join("transcript.jsonl");
    let mut replies: Vec<Reply> = (0..4)
        .map(|n| Reply::call("read_file", json!({"path": format!("f{n}.txt")})).with_tokens(900, 9))
        .collect();
    let same = || Reply::call("list_dir", json!({}));
    replies.extend([same(), same(), same()]);
    replies.push(Reply::call(
        "edit_file",
        json!({"path": "a.txt", "old_text": "x", "new_text": "y"}),
    ));
    replies.push(Reply::call("run_command", json!({"argv": ["true"]})));
    replies.push(Reply::call(
        "write_file",
        json!({"path": "b.txt", "content": "b"}),
    ));
    replies.push(Reply::text("Done."));
    let chat = Arc::new(FakeChat::new(replies).with_context_window(6_000));
    let mut events: Vec<Value> = Vec::new();
    let report = Agent::new(chat, &toolbox)
        .budgets(no_head_start())
        .verification(Verification::parse("grep -q y a.txt").unwrap())
        .transcript(Transcript::create(&path).unwrap())
        .run("fix a.txt", &mut events, &mut Troubled::default());
    assert_eq!(report.outcome, Outcome::Verified, "{report:?}");

    let records: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(Transcript::read(&path).unwrap().len(), records.len());
    let mut seen = Vec::new();
    for event in &events {
        let name = event["event"].as_str().unwrap();
        let Some((_, kind, renames)) = EVENT_RECORDS.iter().find(|(e, _, _)| *e == name) else {
            continue;
        };
        assert!(
            records
                .iter()
                .any(|record| record["type"] == *kind && holds(record, event, renames)),
            "no `{kind}` record holds the event {event}"
        );
        seen.push(name);
    }
    for (name, _, _) in EVENT_RECORDS {
        assert!(
            seen.contains(name),
            "the run reported no `{name}` event: {events:?}"
        );
    }
}
