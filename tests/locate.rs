//! Finding the code in a large repository (issue 49): the head start looks up the
//! definitions the task and the failure name in the workspace's symbol index and shows
//! them with their line numbers, not the whole module, with a map of the rest; what the
//! workspace keeps from the tools is never looked at.

use std::fs;

use serde_json::Value;

use crate::support::{Model, Repo, Turn};

/// The line of `pkg/core.py` where `parse_line` is defined.
const PARSE_LINE_AT: usize = 1_201;

/// Lines of `pkg/core.py`.
const CORE_LINES: usize = 2_500;

/// A repository of 36 files whose `pkg/core.py` has 2,500 lines and a bug in `parse_line`
/// (it drops the value's first character), its test in `tests/test_core.py`; a file
/// `.gitignore` keeps out, one the project's rules deny and a hidden one each define a
/// `parse_line` of their own.
fn large_repository() -> Repo {
    let repo = Repo::from_fixture("calc");
    for fixture in ["calc.py", "test_calc.py", "README.md"] {
        fs::remove_file(repo.root.join(fixture)).expect("a fixture file");
    }
    let write = |path: &str, text: &str| {
        let path = repo.root.join(path);
        fs::create_dir_all(path.parent().expect("a parent")).expect("directories");
        fs::write(path, text).expect("a file");
    };
    let mut core = String::new();
    let mut n = 0;
    while core.lines().count() < CORE_LINES - 5 {
        if core.lines().count() == PARSE_LINE_AT - 1 {
            core.push_str(
                "def parse_line(line):\n    key, _, value = line.partition(\"=\")\n    \
                 return key.strip(), value.strip()[1:]\n\n\n",
            );
        } else {
            core.push_str(&format!("def helper_{n:04}(x):\n    return x + {n}\n\n\n"));
            n += 1;
        }
    }
    while core.lines().count() < CORE_LINES {
        core.push_str("# end\n");
    }
    write("pkg/core.py", &core);
    write("pkg/__init__.py", "");
    for module in 0..28 {
        write(
            &format!("pkg/part_{module:02}.py"),
            &format!("def part_{module:02}_value():\n    return {module}\n"),
        );
    }
    write("tests/__init__.py", "");
    write(
        "tests/test_core.py",
        "import unittest\n\nfrom pkg.core import parse_line\n\n\nclass TestParseLine(unittest.TestCase):\n    \
         def test_parse_line(self):\n        self.assertEqual(parse_line(\"a = 1\"), (\"a\", \"1\"))\n",
    );
    write(
        "check.sh",
        "python3 -m unittest -q >/dev/null 2>&1 || { echo \"FAILED: tests/test_core.py\"; exit 1; }\n",
    );
    write("README.md", "# pkg\n\nRun `sh check.sh`.\n");
    write(".gitignore", "local_settings.py\n");
    let hidden_body = |marker: &str| format!("def parse_line(line):\n    return \"{marker}\"\n");
    write("local_settings.py", &hidden_body("IGNORED_MARKER"));
    write("secret_impl.py", &hidden_body("DENIED_MARKER"));
    write(".tools/parse.py", &hidden_body("HIDDEN_MARKER"));
    write("harness.toml", "deny = [\"secret_impl.py\"]\n");
    repo.commit_all("a large repository");
    assert_eq!(repo.read("pkg/core.py").lines().count(), CORE_LINES);
    assert_eq!(
        repo.read("pkg/core.py").lines().nth(PARSE_LINE_AT - 1),
        Some("def parse_line(line):")
    );
    repo
}

/// Runs `task` against the repository with `verify`, the model saying it cannot help
/// each time, and returns the text of the first request to the model, message by message.
fn first_request(repo: &Repo, verify: &str, task: &str) -> Vec<String> {
    let model = Model::start();
    model.script((0..8).map(|_| Turn::Text("I am not sure.")).collect());
    let _ = repo.harness(&["run", "--host", &model.url(), "--verify", verify, task]);
    let chats = model.chats();
    let messages = chats.first().expect("a request")["messages"]
        .as_array()
        .expect("messages")
        .clone();
    messages
        .iter()
        .map(|message| message["content"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// The definition of `parse_line` is there with its own line numbers, as `read_file`
/// shows them, and the module around it is not; the note says to change it with
/// `edit_file`; the map names the module and its length.
fn assert_shows_parse_line_only(messages: &[String]) {
    let all = messages.join("\n");
    let shown = messages
        .iter()
        .find(|m| m.contains("[result of read_file pkg/core.py lines "))
        .unwrap_or_else(|| panic!("no definition of core.py shown:\n{all}"));
    for (offset, line) in [
        "def parse_line(line):",
        "    key, _, value = line.partition(\"=\")",
    ]
    .iter()
    .enumerate()
    {
        let numbered = format!("{:>6}\t{line}\n", PARSE_LINE_AT + offset);
        assert!(shown.contains(&numbered), "{numbered:?} in\n{shown}");
    }
    assert!(
        shown.contains(&format!("of the {CORE_LINES} of pkg/core.py"))
            && shown.contains("change it with edit_file"),
        "{shown}"
    );
    assert!(
        !all.contains("return x + "),
        "no other function's body of the module is shown"
    );
    assert!(
        all.contains(&format!("pkg/core.py ({CORE_LINES} lines): helper_0000:1")),
        "the map:\n{all}"
    );
}

#[test]
fn the_function_the_task_names_is_shown_from_a_large_module_when_the_check_names_only_its_test() {
    let repo = large_repository();
    let messages = first_request(
        &repo,
        "sh check.sh",
        "parse_line drops the first character of every value; fix it.",
    );
    assert_shows_parse_line_only(&messages);
    // The check's output named only the test file: that much is read whole.
    assert!(
        messages
            .iter()
            .any(|m| m.contains("[result of read_file tests/test_core.py;")),
        "{messages:#?}"
    );
}

#[test]
fn the_function_only_the_failure_names_is_shown_from_a_large_module() {
    let repo = large_repository();
    let messages = first_request(
        &repo,
        "python3 -m unittest -q",
        "The tests fail. Make them pass.",
    );
    assert_shows_parse_line_only(&messages);
}

#[test]
fn definitions_in_files_the_workspace_keeps_from_the_tools_are_never_shown() {
    let repo = large_repository();
    let messages = first_request(
        &repo,
        "sh check.sh",
        "parse_line drops the first character of every value; fix it.",
    );
    let all = messages.join("\n");
    assert!(all.contains("def parse_line(line):"), "{all}");
    for kept_out in [
        "IGNORED_MARKER",
        "DENIED_MARKER",
        "HIDDEN_MARKER",
        "local_settings.py",
        "secret_impl.py",
    ] {
        assert!(!all.contains(kept_out), "{kept_out} shown:\n{all}");
    }
    // The listing shows hidden files, as `list_dir` does; the map does not.
    let map = messages
        .iter()
        .find(|m| m.starts_with("Where the repository's source files define their code"))
        .expect("a map");
    assert!(!map.contains(".tools/"), "{map}");
    // What the model was shown is in the record, in the order it was shown: the map as a
    // message of the harness's, between the check it follows and the reads after it.
    let transcript = repo.transcript();
    let at = |found: &dyn Fn(&Value) -> bool| {
        transcript
            .iter()
            .position(found)
            .unwrap_or_else(|| panic!("{transcript:#?}"))
    };
    let map_at = at(&|record| {
        record["type"] == "message" && record.to_string().contains("pkg/core.py (2500 lines)")
    });
    let summary_starts = |record: &Value, start: &str| {
        record["type"] == "tool"
            && record["summary"]
                .as_str()
                .is_some_and(|s| s.starts_with(start))
    };
    let check_at = at(&|record| summary_starts(record, "run_command sh check.sh"));
    let read_at = at(&|record| summary_starts(record, "read_file tests/test_core.py"));
    assert!(check_at < map_at && map_at < read_at, "{transcript:#?}");
    // The definitions are shown through the same tool the model calls, in its results.
    let transcript: Vec<Value> = repo.records("tool");
    assert!(
        transcript.iter().any(|record| record["step"] == 0
            && record["summary"]
                .as_str()
                .is_some_and(|s| s.starts_with("read_file pkg/core.py"))),
        "{transcript:#?}"
    );
}
