//! Every text that leaves the toolbox is redacted: file contents, diffs, matches, command
//! output, and the summary.

use harness_exec::Redactor;
use serde_json::json;

use crate::support::{Fixture, ok};

const SECRET: &str = "hunter2-correct-horse";

fn fixture() -> Fixture {
    let fixture = Fixture::new();
    fixture.file("config.txt", format!("API_KEY=abc123\nliteral {SECRET}\n"));
    fixture
}

#[test]
fn read_file_output_is_redacted() {
    let result = fixture().call("read_file", json!({"path": "config.txt"}));
    assert_eq!(
        ok(&result),
        "     1\tAPI_KEY=[REDACTED]\n     2\tliteral hunter2-correct-horse\n"
    );
}

#[test]
fn the_toolbox_redactor_knows_configured_secrets() {
    let fixture = fixture();
    let toolbox = fixture
        .builder()
        .redactor(Redactor::new().with_secret(SECRET))
        .build();
    let read = toolbox.call("read_file", &json!({"path": "config.txt"}));
    assert_eq!(
        ok(&read),
        "     1\tAPI_KEY=[REDACTED]\n     2\tliteral [REDACTED]\n"
    );
    let found = toolbox.call("search_text", &json!({"pattern": SECRET}));
    assert_eq!(ok(&found), "config.txt:2: literal [REDACTED]\n");
    assert_eq!(found.summary().target(), "[REDACTED]");
    let diff = toolbox.call("write_file", &json!({"path": "new.txt", "content": SECRET}));
    assert_eq!(
        ok(&diff),
        "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+[REDACTED]\n\\ No newline at end of file\n"
    );
    // The file itself holds what the model wrote: redaction is for what it reads.
    assert_eq!(fixture.read("new.txt"), SECRET);
}

#[test]
fn run_command_output_is_redacted() {
    let fixture = Fixture::new();
    let result = fixture.call("run_command", json!({"argv": ["echo", "API_KEY=abc123"]}));
    assert_eq!(ok(&result), "exit=0\nAPI_KEY=[REDACTED]");
    assert_eq!(result.summary().target(), "echo 'API_KEY=[REDACTED]'");
}

#[test]
fn run_command_output_is_redacted_with_the_toolbox_secrets() {
    let fixture = Fixture::new();
    let toolbox = fixture
        .builder()
        .redactor(Redactor::new().with_secret(SECRET))
        .build();
    let result = toolbox.call("run_command", &json!({"argv": ["echo", SECRET]}));
    assert_eq!(ok(&result), "exit=0\n[REDACTED]");
}

#[test]
fn error_messages_are_redacted() {
    let fixture = Fixture::new();
    let result = fixture.call("read_file", json!({"path": "TOKEN=abc123"}));
    assert_eq!(
        result.text(),
        "Error: no such file or directory: TOKEN=[REDACTED]; list_dir shows which files and \
         directories exist"
    );
}

/// Code that reads a secret from the environment holds none: the model must see it as it is,
/// or an `old_text` copied from `read_file` could never match for `edit_file`.
#[test]
fn code_that_names_a_secret_reads_and_edits_as_written() {
    let fixture = Fixture::new();
    fixture.file(
        "settings.py",
        "API_KEY = os.environ['API_KEY']\nTIMEOUT = 5\n",
    );
    let read = fixture.call("read_file", json!({"path": "settings.py"}));
    assert_eq!(
        ok(&read),
        "     1\tAPI_KEY = os.environ['API_KEY']\n     2\tTIMEOUT = 5\n"
    );
    let edit = fixture.call(
        "edit_file",
        json!({
            "path": "settings.py",
            "old_text": "API_KEY = os.environ['API_KEY']",
            "new_text": "API_KEY = os.environ.get('API_KEY', '')",
        }),
    );
    ok(&edit);
    assert_eq!(
        fixture.read("settings.py"),
        "API_KEY = os.environ.get('API_KEY', '')\nTIMEOUT = 5\n"
    );
}
