//! Every text that leaves the toolbox is redacted: file contents, diffs, matches, command
//! output, and the summary.

use harness_exec::Redactor;
use serde_json::json;

use crate::support::{Fixture, ok};

use harness_exec::plain_markers as plain;

/// The text of a `read_file` result without its line numbers: what a model that copies
/// the file writes back.
fn unnumbered(view: &str) -> String {
    view.lines()
        .map(|line| line.split_once('\t').map_or(line, |(_, text)| text))
        .map(|line| format!("{line}\n"))
        .collect()
}

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
        plain(ok(&result)),
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
        plain(ok(&read)),
        "     1\tAPI_KEY=[REDACTED]\n     2\tliteral [REDACTED]\n"
    );
    let found = toolbox.call("search_text", &json!({"pattern": SECRET}));
    assert_eq!(plain(ok(&found)), "config.txt:2: literal [REDACTED]\n");
    assert_eq!(plain(found.summary().target()), "[REDACTED]");
    let diff = toolbox.call("write_file", &json!({"path": "new.txt", "content": SECRET}));
    assert_eq!(
        plain(ok(&diff)),
        "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+[REDACTED]\n\\ No newline at end of file\n"
    );
    // The file itself holds what the model wrote: redaction is for what it reads.
    assert_eq!(fixture.read("new.txt"), SECRET);
}

#[test]
fn run_command_output_is_redacted() {
    let fixture = Fixture::new();
    let result = fixture.call("run_command", json!({"argv": ["echo", "API_KEY=abc123"]}));
    assert_eq!(plain(ok(&result)), "exit=0\nAPI_KEY=[REDACTED]");
    assert_eq!(
        plain(result.summary().target()),
        "echo 'API_KEY=[REDACTED]'"
    );
}

#[test]
fn run_command_output_is_redacted_with_the_toolbox_secrets() {
    let fixture = Fixture::new();
    let toolbox = fixture
        .builder()
        .redactor(Redactor::new().with_secret(SECRET))
        .build();
    let result = toolbox.call("run_command", &json!({"argv": ["echo", SECRET]}));
    assert_eq!(plain(ok(&result)), "exit=0\n[REDACTED]");
}

#[test]
fn error_messages_are_redacted() {
    let fixture = Fixture::new();
    let result = fixture.call("read_file", json!({"path": "TOKEN=abc123"}));
    assert_eq!(
        plain(result.text()),
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

const KEY: &str = "k8#Qz!x2Lp9wR4vT";

/// A settings file holding a secret, as issue #45 found it.
fn settings() -> Fixture {
    let fixture = Fixture::new();
    fixture.file(
        "settings.py",
        format!("SECRET_KEY = '{KEY}'\nDEBUG = True\n"),
    );
    fixture
}

/// Issue #45, class 5: a file read redacted and written back whole keeps its secret, and
/// the diff shows the true change without the secret.
#[test]
fn a_file_read_redacted_and_written_back_whole_keeps_its_secret() {
    let fixture = settings();
    let toolbox = fixture.builder().build();
    let read = toolbox.call("read_file", &json!({"path": "settings.py"}));
    let shown = unnumbered(ok(&read));
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.starts_with("SECRET_KEY = '[REDACTED:"), "{shown}");
    let content = shown.replace("DEBUG = True", "DEBUG = False");
    let written = toolbox.call(
        "write_file",
        &json!({"path": "settings.py", "content": content, "overwrite": true}),
    );
    let diff = ok(&written);
    assert_eq!(
        fixture.read("settings.py"),
        format!("SECRET_KEY = '{KEY}'\nDEBUG = False\n")
    );
    assert!(!diff.contains(KEY), "{diff}");
    assert!(diff.contains("-DEBUG = True\n+DEBUG = False\n"), "{diff}");
    assert!(
        !diff.contains("-SECRET_KEY"),
        "the key did not change: {diff}"
    );
}

/// An edit whose old_text holds a marker matches the file's real text, and an edit of
/// another line leaves the secret as it was.
#[test]
fn an_edit_around_a_marker_keeps_the_secret() {
    let fixture = settings();
    let toolbox = fixture.builder().build();
    let shown = unnumbered(ok(
        &toolbox.call("read_file", &json!({"path": "settings.py"}))
    ));
    let first = shown.lines().next().unwrap_or_default().to_owned();
    let edit = toolbox.call(
        "edit_file",
        &json!({
            "path": "settings.py",
            "old_text": format!("{first}\nDEBUG = True"),
            "new_text": format!("{first}\nDEBUG = False\nALLOWED_HOSTS = []"),
        }),
    );
    ok(&edit);
    assert_eq!(
        fixture.read("settings.py"),
        format!("SECRET_KEY = '{KEY}'\nDEBUG = False\nALLOWED_HOSTS = []\n")
    );
    assert!(!edit.text().contains(KEY));
}

/// A marker this run did not give out (the plain one, or a number the model made up)
/// standing where the file holds a secret is refused, and the file is left as it was.
#[test]
fn an_unknown_marker_where_a_secret_was_is_refused() {
    for marker in [
        "[REDACTED]",
        "[REDACTED:generic-secret:999999999]",
        "[redacted]",
        "[REDACTED: secret key]",
        "[REDACTED-1]",
    ] {
        let fixture = settings();
        let toolbox = fixture.builder().build();
        let written = toolbox.call(
            "write_file",
            &json!({
                "path": "settings.py",
                "content": format!("SECRET_KEY = '{marker}'\nDEBUG = False\n"),
                "overwrite": true,
            }),
        );
        assert!(written.is_error(), "{}", written.text());
        assert!(
            written
                .text()
                .contains("stands where settings.py holds a secret"),
            "{}",
            written.text()
        );
        let edit = toolbox.call(
            "edit_file",
            &json!({
                "path": "settings.py",
                "old_text": "DEBUG = True",
                "new_text": format!("DEBUG = True\nSECRET_KEY = '{marker}'"),
            }),
        );
        assert!(edit.is_error(), "{}", edit.text());
        assert_eq!(
            fixture.read("settings.py"),
            format!("SECRET_KEY = '{KEY}'\nDEBUG = True\n")
        );
    }
}

/// Marker-like text where no secret was is only text: written as the model sent it.
#[test]
fn a_marker_where_no_secret_was_is_written_as_sent() {
    let fixture = settings();
    let toolbox = fixture.builder().build();
    let content = "Logs show secrets as [REDACTED] or [REDACTED:stripe-key:7].\n";
    let written = toolbox.call(
        "write_file",
        &json!({"path": "NOTES.md", "content": content}),
    );
    ok(&written);
    assert_eq!(fixture.read("NOTES.md"), content);
}

/// Issue #45, class 5: a docstring describing a `key=value` format is shown as it is, and
/// an edit copied from it writes no marker.
#[test]
fn a_docstring_describing_key_value_is_shown_and_edited_whole() {
    let fixture = Fixture::new();
    let source = "def parse(line):\n    \"\"\"Parse one key=value pair; token: str.\"\"\"\n    return line.split('=')\n";
    fixture.file("parse.py", source);
    let toolbox = fixture.builder().build();
    let shown = unnumbered(ok(&toolbox.call("read_file", &json!({"path": "parse.py"}))));
    assert_eq!(shown, source);
    let edit = toolbox.call(
        "edit_file",
        &json!({
            "path": "parse.py",
            "old_text": "    return line.split('=')",
            "new_text": "    return line.split('=', 1)",
        }),
    );
    ok(&edit);
    assert!(!fixture.read("parse.py").contains("REDACTED"));
}

/// A value redacted from a command's output can be written back: the runner's markers are
/// the toolbox's.
#[test]
fn a_marker_from_command_output_is_written_back() {
    let fixture = Fixture::new();
    let toolbox = fixture.builder().build();
    let ran = toolbox.call(
        "run_command",
        &json!({"argv": ["echo", "STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc"]}),
    );
    let shown = ok(&ran).trim_start_matches("exit=0\n").to_owned();
    assert!(!shown.contains("sk_live_"), "{shown}");
    ok(&toolbox.call(
        "write_file",
        &json!({"path": "stripe.cfg", "content": format!("{shown}\n")}),
    ));
    assert_eq!(
        fixture.read("stripe.cfg"),
        "STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc\n"
    );
}

/// A command holding a marker is refused: commands are never given the value, and run as
/// sent the marker would be written where the value was.
#[test]
fn a_command_holding_a_marker_is_refused() {
    let fixture = settings();
    let toolbox = fixture.builder().build();
    let shown = unnumbered(ok(
        &toolbox.call("read_file", &json!({"path": "settings.py"}))
    ));
    let marker = &shown[shown.find('[').unwrap_or(0)..=shown.find(']').unwrap_or(0)];
    let ran = toolbox.call(
        "run_command",
        &json!({"argv": ["sh", "-c", format!("echo \"SECRET_KEY = '{marker}'\" > settings.py")]}),
    );
    assert!(ran.is_error(), "{}", ran.text());
    assert!(ran.text().contains("redaction marker"), "{}", ran.text());
    assert_eq!(
        fixture.read("settings.py"),
        format!("SECRET_KEY = '{KEY}'\nDEBUG = True\n")
    );
}

/// The harness's own secrets are redacted with markers that no tool writes back.
#[test]
fn a_marker_of_the_harness_own_secret_is_not_written() {
    let fixture = Fixture::new();
    let toolbox = fixture
        .builder()
        .redactor(Redactor::new().with_secret(SECRET))
        .build();
    let ran = toolbox.call("run_command", &json!({"argv": ["echo", SECRET]}));
    let shown = ok(&ran).trim_start_matches("exit=0\n").to_owned();
    let written = toolbox.call("write_file", &json!({"path": "leak.txt", "content": shown}));
    assert!(written.is_error(), "{}", written.text());
    assert!(!crate::support::exists(&fixture.path("leak.txt")));
}
