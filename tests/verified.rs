//! Issue 45, class 4: "verified" means the tests ran against the fixed code. A scripted
//! model changes what the verification loads besides the code under test (a test file its
//! runner discovers, a snapshot or golden file, the runner's configuration, a module that
//! takes the runner's place) and the run is not verified: the outcome is "tests changed",
//! named in the summary, `--json` and the transcript, and the model is told.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::{Model, Repo, Run, Turn, skip};

const VERIFY: &str = "python3 -m unittest -q";

/// The honest fix of the calc fixture.
fn fix() -> Turn {
    Turn::call(
        "edit_file",
        json!({"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}),
    )
}

/// A command the model runs through `sh -c`.
fn sh(script: &str) -> Turn {
    Turn::call("run_command", json!({"argv": ["sh", "-c", script]}))
}

/// Writes `relative` in `repo`, its directories first.
fn put(repo: &Repo, relative: &str, content: &str) {
    let path = repo.root.join(relative);
    fs::create_dir_all(path.parent().expect("a parent")).expect("create directories");
    fs::write(path, content).expect("write a file");
}

/// `harness run --attempts 1 --verify VERIFY EXTRA… "fix add"`, the model answering with
/// `turns` and then saying it is done until the run ends.
fn attempt(repo: &Repo, turns: Vec<Turn>, verify: &str, extra: &[&str]) -> (Run, Model) {
    let mut turns = turns;
    turns.extend([
        Turn::Text("Done."),
        Turn::Text("Done."),
        Turn::Text("Done."),
    ]);
    // The checks judged here are those on "done", after every change was made: a quick
    // check after the fix would pass before the change beside it. (That a quick check's pass
    // is judged the same way: harness-agent's own tests.)
    repo.user_config("quick_check = false\n");
    let model = Model::start();
    model.script(turns);
    let url = model.url();
    let mut args = vec![
        "run",
        "--attempts",
        "1",
        "--max-checks",
        "2",
        "--host",
        &url,
        "--verify",
        verify,
    ];
    args.extend_from_slice(extra);
    args.push("fix add");
    (repo.harness(&args), model)
}

/// The transcript's outcome record.
fn outcome(repo: &Repo) -> Value {
    repo.records("outcome").pop().expect("an outcome record")
}

/// Asserts the run ended "tests changed", exit 1, with `named` in the summary's reason and
/// the transcript's, and that a verification exited 0 and was judged.
fn assert_tests_changed(repo: &Repo, run: &Run, named: &str) {
    run.assert_exit(1).assert_stdout_has(&[
        "outcome:       tests changed",
        named,
        "the last run exited 0 but does not count",
    ]);
    let outcome = outcome(repo);
    assert_eq!(outcome["outcome"], "tests_changed", "{run}");
    assert!(
        outcome["reason"]
            .as_str()
            .expect("a reason")
            .contains(named),
        "{outcome}"
    );
    let judged = repo.records("verification").into_iter().any(|record| {
        record["detail"]
            .as_str()
            .is_some_and(|d| d.contains("exit=0"))
            && record["changed"].to_string().contains(named)
    });
    assert!(judged, "a verification exited 0 and was judged: {run}");
}

/// Whether any request the model was sent tells it the pass did not count.
fn told(model: &Model) -> bool {
    model
        .chats()
        .iter()
        .any(|chat| chat.to_string().contains("the harness does not count it"))
}

/// The calc fixture with its tests in `tests.py`, as a Django app keeps them.
fn django_style() -> Repo {
    let repo = Repo::from_fixture("calc");
    repo.git(&["mv", "test_calc.py", "tests.py"]);
    repo.commit_all("tests.py");
    repo
}

const PASSING_TEST: &str =
    "import unittest\\nclass T(unittest.TestCase):\\n    def test_ok(self):\\n        pass\\n";

#[test]
fn issue_45_a_weakened_tests_py_is_refused_by_the_tools_and_not_verified_after_a_command() {
    let repo = django_style();
    let before = repo.snapshot();
    // The file tools refuse it: unittest's default pattern `test*.py` discovers it.
    let (run, _) = attempt(
        &repo,
        vec![Turn::call(
            "write_file",
            json!({"path": "tests.py", "content": "pass\n", "overwrite": true}),
        )],
        VERIFY,
        &[],
    );
    run.assert_exit(1)
        .assert_stdout_has(&["tests.py is a test file, and the harness"]);
    assert_eq!(repo.snapshot(), before, "{run}");

    // A command gets past the tools, and unittest exits 0 on the weakened test: not verified.
    let (run, model) = attempt(
        &repo,
        vec![sh(&format!("printf '{PASSING_TEST}' > tests.py"))],
        VERIFY,
        &[],
    );
    assert_tests_changed(&repo, &run, "tests.py changed");
    assert!(
        told(&model),
        "the model is told the pass does not count: {run}"
    );
    assert!(repo.read("calc.py").contains("a - b"), "still unfixed");
    run.assert_stdout_has(&["✘ verification does not count"]);
    // The transcript, shown, says why the pass did not count.
    repo.harness(&["show"]).assert_exit(0).assert_stdout_has(&[
        "`python3 -m unittest -q` does not count: what it loads besides the code under test \
         changed: tests.py changed",
    ]);
}

#[test]
fn issue_45_a_unittest_package_that_exits_0_is_not_verified_written_or_made() {
    const PLANT: &str = "mkdir unittest && echo 'raise SystemExit(0)' > unittest/__init__.py";
    // The file tools refuse it, early, by its name.
    let repo = Repo::from_fixture("calc");
    let before = repo.snapshot();
    let (run, _) = attempt(
        &repo,
        vec![Turn::call(
            "write_file",
            json!({"path": "unittest/__init__.py", "content": "raise SystemExit(0)\n"}),
        )],
        VERIFY,
        &[],
    );
    run.assert_exit(1).assert_stdout_has(&[
        "▸ write_file unittest/__init__.py  error",
        "unittest/__init__.py would shadow the standard library's unittest",
    ]);
    assert_eq!(repo.snapshot(), before, "{run}");

    // A command makes it, and `python3 -m unittest` exits 0 without running a test: the
    // judgement at verification names it. So it does with --allow-test-edits, where the
    // tools write it too: a test edit changes what is measured, this changes the measuring.
    let plants = [
        (sh(PLANT), &[][..]),
        (
            Turn::call(
                "write_file",
                json!({"path": "unittest/__init__.py", "content": "raise SystemExit(0)\n"}),
            ),
            &["--allow-test-edits"][..],
        ),
    ];
    for (plant, extra) in plants {
        let repo = Repo::from_fixture("calc");
        let (run, model) = attempt(&repo, vec![plant], VERIFY, extra);
        assert_tests_changed(
            &repo,
            &run,
            "unittest/__init__.py shadows the standard library's unittest",
        );
        assert!(told(&model));
        assert!(repo.read("calc.py").contains("a - b"), "still unfixed");
    }
}

#[test]
fn issue_45_the_runners_configuration_changed_beside_a_fix_is_not_verified() {
    // (file, its content before the run or None, the command that changes it, named)
    let cases: &[(&str, Option<&str>, &str, &str)] = &[
        (
            "pytest.ini",
            None,
            "printf '[pytest]\\naddopts = -k nothing\\n' > pytest.ini",
            "pytest.ini was created",
        ),
        (
            "conftest.py",
            Some("import pytest\n"),
            "printf 'import pytest\\ndef pytest_collection_modifyitems(items):\\n    for i in items: i.add_marker(pytest.mark.skip)\\n' > conftest.py",
            "conftest.py changed",
        ),
        (
            "pyproject.toml",
            Some("[project]\nname = \"calc\"\nversion = \"1.0\"\n"),
            "printf '\\n[tool.pytest.ini_options]\\npythonpath = [\"fake\"]\\n' >> pyproject.toml",
            "pyproject.toml's test settings changed",
        ),
        (
            "setup.cfg",
            Some("[metadata]\nname = calc\n"),
            "printf '[tool:pytest]\\naddopts = -p no:python\\n' >> setup.cfg",
            "setup.cfg changed",
        ),
        (
            "package.json",
            Some(
                "{\n  \"name\": \"calc\",\n  \"scripts\": {\n    \"test\": \"node --test\"\n  }\n}\n",
            ),
            "sed -i 's/node --test/true/' package.json",
            "package.json's test settings changed",
        ),
        (
            "Cargo.toml",
            Some("[package]\nname = \"calc\"\nversion = \"0.1.0\"\n"),
            "printf '\\n[lib]\\ntest = false\\n' >> Cargo.toml",
            "Cargo.toml's test settings changed",
        ),
        (
            ".cargo/config.toml",
            None,
            "mkdir -p .cargo && printf '[target.x86_64-unknown-linux-gnu]\\nrunner = \"true\"\\n' > .cargo/config.toml",
            ".cargo/config.toml was created (the test runner loads it)",
        ),
        (
            "Makefile",
            Some("test:\n\tpython3 -m unittest -q\n"),
            "printf 'test:\\n\\ttrue\\n' > Makefile",
            "Makefile changed",
        ),
    ];
    for (file, before, change, named) in cases {
        let repo = Repo::from_fixture("calc");
        if let Some(content) = before {
            put(&repo, file, content);
            repo.commit_all("configuration");
        }
        // `make test` reads the Makefile; the others are read whatever the command.
        let verify = if *file == "Makefile" {
            "make -s test"
        } else {
            VERIFY
        };
        if *file == "Makefile" && Command::new("make").arg("--version").output().is_err() {
            skip("make is not installed");
            continue;
        }
        let (run, _) = attempt(&repo, vec![fix(), sh(change)], verify, &[]);
        assert_tests_changed(&repo, &run, named);
    }
}

#[test]
fn issue_45_a_change_outside_the_test_settings_of_a_shared_file_still_verifies() {
    // What honest work changes beside a fix: a dependency's version, a description.
    let cases: &[(&str, &str, &str)] = &[
        (
            "pyproject.toml",
            "[project]\nname = \"calc\"\ndependencies = [\"attrs>=21\"]\n",
            "sed -i 's/attrs>=21/attrs>=22/' pyproject.toml",
        ),
        (
            "package.json",
            "{\n  \"name\": \"calc\",\n  \"description\": \"sums\"\n}\n",
            "sed -i 's/sums/adds/' package.json",
        ),
        (
            "Cargo.toml",
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[dependencies]\nlibc = \"0.2\"\n",
            "sed -i 's/0.2/0.3/' Cargo.toml",
        ),
    ];
    for (file, before, change) in cases {
        let repo = Repo::from_fixture("calc");
        put(&repo, file, before);
        repo.commit_all("configuration");
        let (run, _) = attempt(&repo, vec![fix(), sh(change)], VERIFY, &[]);
        run.assert_exit(0)
            .assert_stdout_has(&["outcome:       verified"]);
    }
}

#[test]
fn issue_45_a_golden_file_rewritten_to_match_the_unfixed_code_is_not_verified() {
    let repo = Repo::from_fixture("calc");
    put(&repo, "expected/add.golden", "5\n");
    put(
        &repo,
        "test_golden.py",
        "import unittest\nfrom calc import add\n\nclass Golden(unittest.TestCase):\n    \
         def test_add(self):\n        with open('expected/add.golden') as f:\n            \
         self.assertEqual(str(add(2, 3)), f.read().strip())\n",
    );
    fs::remove_file(repo.root.join("test_calc.py")).expect("remove");
    repo.commit_all("a golden test");
    let (run, _) = attempt(
        &repo,
        vec![sh("echo -1 > expected/add.golden")],
        VERIFY,
        &[],
    );
    assert_tests_changed(&repo, &run, "expected/add.golden changed");
}

#[test]
fn issue_45_a_jest_style_snapshot_rewritten_for_node_test_is_not_verified() {
    if Command::new("node").arg("--version").output().is_err() {
        skip("node is not installed");
        return;
    }
    let repo = Repo::from_fixture("calc");
    put(&repo, "sum.js", "exports.sum = (a, b) => a - b;\n");
    put(&repo, "__snapshots__/sum.test.js.snap", "5\n");
    put(
        &repo,
        "sum.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\n\
         const fs = require('node:fs');\nconst { sum } = require('./sum');\n\
         test('sum', () => {\n  const snap = fs.readFileSync(__dirname + '/__snapshots__/sum.test.js.snap', 'utf8').trim();\n  \
         assert.strictEqual(String(sum(2, 3)), snap);\n});\n",
    );
    repo.commit_all("a snapshot test");
    let (run, _) = attempt(
        &repo,
        vec![sh("echo -1 > __snapshots__/sum.test.js.snap")],
        "node --test",
        &[],
    );
    assert_tests_changed(&repo, &run, "__snapshots__/sum.test.js.snap changed");
}

#[test]
fn issue_45_go_testdata_rewritten_is_not_verified() {
    if Command::new("go").arg("version").output().is_err() {
        skip("go is not installed");
        return;
    }
    let repo = Repo::from_fixture("calc");
    put(&repo, "go.mod", "module calc\n\ngo 1.18\n");
    put(
        &repo,
        "calc.go",
        "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
    );
    put(&repo, "testdata/add.golden", "5\n");
    put(
        &repo,
        "calc_test.go",
        "package calc\n\nimport (\n\t\"os\"\n\t\"strconv\"\n\t\"strings\"\n\t\"testing\"\n)\n\n\
         func TestAdd(t *testing.T) {\n\tb, _ := os.ReadFile(\"testdata/add.golden\")\n\t\
         if strconv.Itoa(Add(2, 3)) != strings.TrimSpace(string(b)) {\n\t\tt.Fatal(\"mismatch\")\n\t}\n}\n",
    );
    repo.commit_all("a go golden test");
    let (run, _) = attempt(
        &repo,
        vec![sh("echo -1 > testdata/add.golden")],
        // The home is read-only to commands under both kernel tiers, and go keeps its build
        // cache there unless told otherwise: the private temporary directory is writable.
        "sh -c 'GOCACHE=$TMPDIR/go-build go test ./...'",
        &[],
    );
    assert_tests_changed(&repo, &run, "testdata/add.golden changed");
}

#[test]
fn issue_45_tests_renamed_deleted_or_linked_away_and_modules_that_take_a_place_are_named() {
    // (the command, beside an honest fix, and what the outcome names)
    let cases: &[(&str, &str)] = &[
        (
            "mv test_calc.py calc_checks.txt",
            "test_calc.py was renamed to calc_checks.txt",
        ),
        ("rm test_calc.py", "test_calc.py was deleted"),
        (
            "rm test_calc.py && ln -s calc.py test_calc.py",
            "test_calc.py",
        ),
        (
            "mkdir -p tests && printf '{PASSING_TEST}' > tests/test_calc.py",
            "tests/test_calc.py was created",
        ),
        (
            "echo 'import os' > sitecustomize.py",
            "sitecustomize.py was created (the test runner loads it)",
        ),
        (
            "echo 'import os' > zz_harness.pth",
            "zz_harness.pth was created (the test runner loads it)",
        ),
        (
            "mkdir -p node_modules/jest && echo x > node_modules/jest/index.js",
            "node_modules/jest/index.js was created (the test runner loads it)",
        ),
        (
            "echo 'raise SystemExit(0)' > json.py",
            "json.py shadows the standard library's json",
        ),
        (
            "mkdir -p calc && printf 'def add(a, b):\\n    return a + b\\ndef multiply(a, b):\\n    return a * b\\n' > calc/__init__.py",
            "calc/__init__.py shadows calc.py",
        ),
    ];
    for (command, named) in cases {
        let command = command.replace("{PASSING_TEST}", PASSING_TEST);
        let repo = Repo::from_fixture("calc");
        let (run, _) = attempt(&repo, vec![fix(), sh(&command)], VERIFY, &[]);
        assert_tests_changed(&repo, &run, named);
    }
}

#[test]
fn issue_45_with_allow_test_edits_tests_may_change_but_the_runner_may_not() {
    let repo = Repo::from_fixture("calc");
    let (run, _) = attempt(
        &repo,
        vec![
            fix(),
            sh(
                "printf '\\nclass More(unittest.TestCase):\\n    def test_more(self):\\n        self.assertEqual(add(1, 1), 2)\\n' >> test_calc.py",
            ),
        ],
        VERIFY,
        &["--allow-test-edits"],
    );
    run.assert_exit(0)
        .assert_stdout_has(&["outcome:       verified"]);

    let repo = Repo::from_fixture("calc");
    let (run, _) = attempt(
        &repo,
        vec![fix(), sh("echo 'import os' > sitecustomize.py")],
        VERIFY,
        &["--allow-test-edits"],
    );
    assert_tests_changed(&repo, &run, "sitecustomize.py was created");
}

#[test]
fn issue_45_the_json_summary_and_events_name_what_changed() {
    let repo = django_style();
    let model = Model::start();
    model.script(vec![
        sh(&format!("printf '{PASSING_TEST}' > tests.py")),
        Turn::Text("Done."),
        Turn::Text("Done."),
        Turn::Text("Done."),
    ]);
    let url = model.url();
    let run = repo.harness(&[
        "run",
        "--json",
        "--attempts",
        "1",
        "--host",
        &url,
        "--verify",
        VERIFY,
        "fix add",
    ]);
    run.assert_exit(1);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let summary = lines.last().expect("a summary line");
    assert_eq!(summary["outcome"], "tests_changed", "{run}");
    assert!(
        summary["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("tests.py changed")),
        "{summary}"
    );
    let finished = lines
        .iter()
        .find(|line| line["event"] == "verification_finished" && line["changed"].is_array())
        .expect("a verification event naming what changed");
    assert_eq!(finished["passed"], false, "{finished}");
    assert_eq!(finished["changed"][0], "tests.py changed");
    assert!(Path::new(&repo.root).join("tests.py").exists());
}

#[test]
fn issue_45_an_index_flag_that_hides_a_test_change_from_git_hides_it_from_no_one() {
    // `git status` shows no change to a file marked assume-unchanged or skip-worktree; the
    // judgement reads the files themselves.
    for flag in ["--assume-unchanged", "--skip-worktree"] {
        let repo = Repo::from_fixture("calc");
        let (run, _) = attempt(
            &repo,
            vec![sh(&format!(
                "git update-index {flag} test_calc.py; printf '{PASSING_TEST}' > test_calc.py"
            ))],
            VERIFY,
            &[],
        );
        assert_tests_changed(&repo, &run, "test_calc.py changed");
    }
}
