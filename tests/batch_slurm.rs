//! `harness batch --emit slurm`: the sbatch script the binary prints, and that script
//! submitted to a real one-node Slurm cluster (`support/slurm.rs`), whose collected results
//! must be a local `--jobs 2` batch's. The Slurm jobs reach the scripted model servers of
//! this test process over 127.0.0.1.
//!
//! The real cluster needs root and Debian's `slurm-wlm` and `munge`; it runs only under
//! `HARNESS_TEST_SLURM=1` (CI sets it after installing them), and otherwise says why it is
//! skipped and passes.

use std::fs;
use std::path::Path;
use std::time::Instant;

use crate::batch::{read_json, results_ids, task};
use crate::end_to_end::fix_script;
use crate::support::slurm::Slurm;
use crate::support::{Model, Repo, Turn, program};

/// Writes `lines` as the task file `outer/NAME`; returns its path.
fn task_file(repo: &Repo, name: &str, lines: &[String]) -> String {
    let path = repo.outer.join(name);
    fs::write(&path, lines.join("\n") + "\n").expect("write the task file");
    path.display().to_string()
}

#[test]
fn emit_slurm_prints_a_job_array_over_every_task_line() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    let mut long = task("long", "work", &model);
    long["timeout"] = 3600.into();
    let lines = [
        task("short", "work", &model).to_string(),
        r#"{"id": "bad", "repo": "work"}"#.to_owned(),
        long.to_string(),
    ];
    let tasks = task_file(&repo, "tasks.jsonl", &lines);

    // --out is relative to where the command runs; the script names it absolute.
    let run = repo.harness(&[
        "batch", &tasks, "--emit", "slurm", "--jobs", "2", "--out", "out",
    ]);
    run.assert_exit(0).assert_stderr_has(&[
        "harness: tasks.jsonl:2: \"task\": missing field `task`; its array task will exit 2 \
         without a result",
    ]);
    let out = repo.root.join("out");
    let sbatch: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| line.starts_with("#SBATCH"))
        .collect();
    assert_eq!(
        sbatch,
        [
            "#SBATCH --job-name=harness-tasks".to_owned(),
            "#SBATCH --array=0-2%2".to_owned(),
            // The larger budget, an hour, plus the last check's 10 minutes and 2 to start.
            "#SBATCH --time=01:12:00".to_owned(),
            format!("#SBATCH --output={}/slurm-%A_%a.out", out.display()),
        ]
    );
    let exec = format!(
        "exec {} batch {tasks} --out {} --resume",
        program(),
        out.display()
    );
    assert_eq!(run.stdout.lines().last(), Some(exec.as_str()), "{run}");
    assert!(
        run.stdout.contains("#     1  (not a task: tasks.jsonl:2:"),
        "{run}"
    );

    // Nothing ran; OUT is made, for Slurm to open the output files in, and ignored by git.
    assert!(model.chats().is_empty());
    let made: Vec<_> = fs::read_dir(&out)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(made, [".gitignore"]);
    assert_eq!(repo.git(&["status", "--porcelain"]), "");

    repo.harness(&["batch", &tasks, "--emit", "slurm", "--index", "0"])
        .assert_exit(2)
        .assert_stderr_has(&["'--emit <ENGINE>' cannot be used with '--index <I>'"]);
    let empty = task_file(&repo, "empty.jsonl", &[]);
    repo.harness(&["batch", &empty, "--emit", "slurm"])
        .assert_exit(2)
        .assert_stderr_has(&["empty.jsonl has no task lines: there is nothing to run"]);
}

/// The task lines of one batch, each task with a scripted model server of its own: one
/// that fixes the code, one that gives up, a line that is not a task, a repository that
/// does not exist.
struct Batch {
    tasks: String,
    models: [Model; 3],
}

impl Batch {
    fn new(repo: &Repo, name: &str) -> Batch {
        let solver = Model::start();
        solver.script(fix_script());
        let quitter = Model::start();
        quitter.script(vec![Turn::Text("Done.")]);
        let nobody = Model::start();
        let lines = [
            task("solved", "work", &solver).to_string(),
            task("unresolved", "work", &quitter).to_string(),
            r#"{"id": "bad", "repo": "work", "task": "t", "max_steps": "ten"}"#.to_owned(),
            task("missing", "no-such-repo", &nobody).to_string(),
        ];
        Batch {
            tasks: task_file(repo, name, &lines),
            models: [solver, quitter, nobody],
        }
    }
}

#[test]
fn a_slurm_job_array_gives_the_results_of_a_local_batch() {
    if std::env::var_os("HARNESS_TEST_SLURM").is_none() {
        #[allow(clippy::print_stderr)] // a skipped test says why, on stderr
        {
            eprintln!(
                "skipped: set HARNESS_TEST_SLURM=1, as root with slurm-wlm and munge installed, \
                 to submit to a real Slurm cluster"
            );
        }
        return;
    }
    if let Some(why) = Slurm::missing() {
        panic!("{why} (required under HARNESS_TEST_SLURM=1)");
    }
    let repo = Repo::from_fixture("calc");

    let local = Batch::new(&repo, "local.jsonl");
    let local_out = repo.outer.join("local-out");
    repo.harness(&[
        "batch",
        &local.tasks,
        "--jobs",
        "2",
        "--out",
        &local_out.display().to_string(),
    ])
    .assert_exit(2);

    let started = Instant::now();
    let slurm = Slurm::start();
    let up = started.elapsed();
    let remote = Batch::new(&repo, "slurm.jsonl");
    let slurm_out = repo.outer.join("slurm-out");
    let slurm_out_arg = slurm_out.display().to_string();
    let emitted = repo.harness(&[
        "batch",
        &remote.tasks,
        "--emit",
        "slurm",
        "--jobs",
        "2",
        "--out",
        &slurm_out_arg,
    ]);
    emitted.assert_exit(0);
    let script = repo.outer.join("job.sh");
    fs::write(&script, &emitted.stdout).expect("write the script");

    // sbatch hands the job its own environment: the tests' home and no colour. --wait
    // returns when every index ended, with the highest exit status: the bad line's 2, as a
    // local batch with a bad line exits 2. A hung cluster fails the test (timeout's 124)
    // rather than holding it for the array's time limit.
    let submitted = Instant::now();
    let conf = slurm.conf().display().to_string();
    let submit = repo.shell(
        &format!("timeout 300 sbatch --wait {}", script.display()),
        &[("SLURM_CONF", &conf)],
    );
    let ran = submitted.elapsed();
    assert_eq!(submit.code, Some(2), "{submit}\n{}", slurm.logs());
    assert!(submit.stdout.contains("Submitted batch job"), "{submit}");

    repo.harness(&["batch", "collect", &slurm_out_arg])
        .assert_exit(0)
        .assert_stdout_has(&["3 tasks: 1 solved, 1 unresolved, 1 error, 0 timeout"]);
    let expected = [
        ("solved".to_owned(), 0, "solved".to_owned()),
        ("unresolved".to_owned(), 1, "unresolved".to_owned()),
        ("missing".to_owned(), 3, "error".to_owned()),
    ];
    assert_eq!(results_ids(&local_out), expected);
    assert_eq!(results_ids(&slurm_out), expected);
    // Each run asked its own servers: the Slurm jobs reached this process's.
    for batch in [&local, &remote] {
        assert!(!batch.models[0].chats().is_empty());
        assert!(!batch.models[1].chats().is_empty());
    }
    let patch = fs::read_to_string(slurm_out.join("solved/patch.diff")).unwrap();
    assert!(patch.contains("+    return a + b"), "{patch}");
    assert_eq!(
        read_json(&slurm_out.join("missing/result.json"))["error"],
        read_json(&local_out.join("missing/result.json"))["error"]
    );

    // One output file per index; the bad line's holds its error, and it has no result.
    let outputs = slurm_outputs(&slurm_out);
    assert_eq!(
        outputs.iter().map(|(index, _)| *index).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    assert!(
        outputs[2]
            .1
            .contains("slurm.jsonl:3: \"max_steps\": invalid type: string \"ten\""),
        "{}",
        outputs[2].1
    );
    assert!(!slurm_out.join("bad").exists());
    assert_eq!(repo.git(&["status", "--porcelain"]), "");

    #[allow(clippy::print_stderr)] // the timing goes into docs/batch.md
    {
        eprintln!(
            "slurm: daemons up in {:.1} s; sbatch --wait of 4 indices, 2 at a time: {:.1} s",
            up.as_secs_f64(),
            ran.as_secs_f64()
        );
    }
}

/// The `slurm-JOB_INDEX.out` files in `out`, by index, with what each holds.
fn slurm_outputs(out: &Path) -> Vec<(u32, String)> {
    let mut outputs: Vec<(u32, String)> = fs::read_dir(out)
        .expect("the output directory")
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let index = name
                .strip_prefix("slurm-")?
                .strip_suffix(".out")?
                .rsplit_once('_')?
                .1
                .parse()
                .ok()?;
            Some((index, fs::read_to_string(entry.path()).ok()?))
        })
        .collect();
    outputs.sort();
    outputs
}
