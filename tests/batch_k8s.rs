//! `harness batch --emit k8s`: the manifests the binary writes, and the Indexed Job they
//! describe emulated here, without a cluster: one `harness` process per completion index,
//! started with the container's command, arguments and environment read from `job.json`,
//! `JOB_COMPLETION_INDEX` set as Kubernetes sets it, `parallelism` at a time; each pod's
//! end judged by the Job's own `podFailurePolicy` and `backoffLimitPerIndex`. One pod is
//! killed (SIGKILL) mid-run and its index run again, as the Job's retry would; the
//! collected results must be a local `--jobs 2` batch's.
//!
//! What this does not emulate: the kubelet, volumes (the pods share a directory here), the
//! Service's name (its ports are the scripted servers' on 127.0.0.1) and the
//! NetworkPolicy. The manifests' schema and `kubectl kustomize` are checked in
//! `crates/harness-batch/tests/k8s_manifests.rs`.

use std::collections::{BTreeMap, VecDeque};
use std::fs;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use harness_stub_server::Reply;
use serde_json::Value;

use crate::batch::{read_json, results_ids, task};
use crate::end_to_end::fix_script;
use crate::support::{Model, Repo, Turn, source_root};

/// Writes `lines` as the task file `outer/NAME`; returns its path.
fn task_file(repo: &Repo, name: &str, lines: &[String]) -> String {
    let path = repo.outer.join(name);
    fs::write(&path, lines.join("\n") + "\n").expect("write the task file");
    path.display().to_string()
}

#[test]
fn emit_k8s_writes_the_manifests_into_out_and_runs_nothing() {
    let repo = Repo::from_fixture("calc");
    let model = Model::start();
    let lines = [
        task("short", "work", &model).to_string(),
        r#"{"id": "bad", "repo": "work"}"#.to_owned(),
    ];
    let tasks = task_file(&repo, "tasks.jsonl", &lines);
    let dir = repo.outer.join("manifests");
    let run = repo.harness(&[
        "batch",
        &tasks,
        "--emit",
        "k8s",
        "--jobs",
        "2",
        "--out",
        &dir.display().to_string(),
    ]);
    run.assert_exit(0)
        .assert_stderr_has(&[
            "harness: tasks.jsonl:2: \"task\": missing field `task`; its index will exit 2 \
             without a result",
            "harness: short: the repository \"work\" is a relative path, which a pod looks \
             for under /harness/tasks",
        ])
        .assert_stdout_has(&["wrote the Job harness-tasks in ", "kubectl apply -k "]);
    let mut made: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    made.sort();
    assert_eq!(
        made,
        [
            "configmap.json",
            "job.json",
            "kustomization.yaml",
            "networkpolicy.json",
            "pvc.json",
            "service.json"
        ]
    );
    let job = read_json(&dir.join("job.json"));
    assert_eq!(job["spec"]["completions"], 2);
    assert_eq!(job["spec"]["parallelism"], 2);
    assert!(model.chats().is_empty());

    // The image the Job names is deploy/Dockerfile's: the program it runs, the tools a
    // task needs, and the user the pod's securityContext runs as.
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsUser"], 1000);
    assert_eq!(pod["containers"][0]["image"], "harness:latest");
    let dockerfile = fs::read_to_string(source_root().join("deploy/Dockerfile")).unwrap();
    for part in [
        "docker build -f deploy/Dockerfile -t harness:latest .",
        "bubblewrap",
        " git ",
        "python3",
        "COPY --from=build /harness /usr/local/bin/harness",
        "USER 1000:1000",
    ] {
        assert!(dockerfile.contains(part), "the Dockerfile lacks {part:?}");
    }

    let empty = task_file(&repo, "empty.jsonl", &[]);
    repo.harness(&["batch", &empty, "--emit", "k8s", "--out", "m"])
        .assert_exit(2)
        .assert_stderr_has(&["empty.jsonl has no task lines: there is nothing to run"]);
}

#[test]
fn an_emulated_indexed_job_with_a_killed_pod_gives_the_results_of_a_local_batch() {
    let repo = Repo::from_fixture("calc");

    let local = Models::start(false);
    let local_tasks = task_file(&repo, "local.jsonl", &local.lines());
    let local_out = repo.outer.join("local-out");
    repo.harness(&[
        "batch",
        &local_tasks,
        "--jobs",
        "2",
        "--out",
        &local_out.display().to_string(),
    ])
    .assert_exit(2);

    // The solver's first answer comes late: its pod is killed while it waits.
    let remote = Models::start(true);
    let tasks = task_file(&repo, "k8s.jsonl", &remote.lines());
    let manifests = repo.outer.join("manifests");
    repo.harness(&[
        "batch",
        &tasks,
        "--emit",
        "k8s",
        "--jobs",
        "2",
        "--out",
        &manifests.display().to_string(),
    ])
    .assert_exit(0);
    let job = Job::read(&repo, &manifests);
    assert_eq!(job.parallelism, 2);
    assert_eq!(job.completions, 4);

    let mut pods: Vec<Pod> = Vec::new();
    let mut pending: VecDeque<usize> = (0..job.completions).collect();
    let mut tries: BTreeMap<usize, u32> = BTreeMap::new();
    let mut ended: BTreeMap<usize, &str> = BTreeMap::new();
    let mut killed = false;
    let deadline = Instant::now() + Duration::from_secs(120);
    while ended.len() < job.completions {
        assert!(Instant::now() < deadline, "the Job did not end: {ended:?}");
        while pods.len() < job.parallelism
            && let Some(index) = pending.pop_front()
        {
            let attempt = tries.entry(index).or_insert(0);
            *attempt += 1;
            pods.push(job.start(&repo, index, *attempt));
        }
        if !killed
            && !remote.solver.chats().is_empty()
            && let Some(pod) = pods.iter_mut().find(|pod| pod.index == 0)
        {
            pod.child.kill().expect("SIGKILL the pod's harness");
            killed = true;
        }
        let mut running = Vec::new();
        for mut pod in pods.drain(..) {
            let Some(status) = pod.child.try_wait().expect("wait for a pod") else {
                running.push(pod);
                continue;
            };
            // A container killed by a signal exits 128 + the signal, as the kubelet says.
            let code = status
                .code()
                .or_else(|| status.signal().map(|signal| 128 + signal))
                .expect("an exit status or a signal");
            match job.action(code) {
                "Succeeded" => {
                    ended.insert(pod.index, "succeeded");
                }
                "FailIndex" => {
                    ended.insert(pod.index, "failed");
                }
                "Count" if tries[&pod.index] <= job.backoff_limit_per_index => {
                    pending.push_back(pod.index);
                }
                action => panic!("index {} ended with {code}: {action}", pod.index),
            }
        }
        pods = running;
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(killed, "the solver's pod was never killed");
    assert_eq!(tries[&0], 2, "the killed index ran again");
    assert_eq!(
        ended.into_iter().collect::<Vec<_>>(),
        [
            (0, "succeeded"),
            (1, "succeeded"),
            (2, "failed"),
            (3, "succeeded")
        ]
    );

    let out = job.out.display().to_string();
    repo.harness(&["batch", "collect", &out])
        .assert_exit(0)
        .assert_stdout_has(&["3 tasks: 1 solved, 1 unresolved, 1 error, 0 timeout"]);
    let expected = [
        ("solved".to_owned(), 0, "solved".to_owned()),
        ("unresolved".to_owned(), 1, "unresolved".to_owned()),
        ("missing".to_owned(), 3, "error".to_owned()),
    ];
    assert_eq!(results_ids(&local_out), expected);
    assert_eq!(results_ids(&job.out), expected);
    let patch = fs::read_to_string(job.out.join("solved/patch.diff")).unwrap();
    assert!(patch.contains("+    return a + b"), "{patch}");

    // Each finished pod's termination message is its result line; the killed try left none.
    let message = |index: usize, attempt: u32| {
        fs::read_to_string(job.termination_log(index, attempt)).unwrap_or_default()
    };
    assert_eq!(message(0, 1), "");
    for (index, attempt, id) in [(0, 2, "solved"), (1, 1, "unresolved"), (3, 1, "missing")] {
        let line: Value = serde_json::from_str(&message(index, attempt)).expect("a JSON line");
        assert_eq!(line["id"], id, "{line}");
    }
    assert_eq!(message(2, 1), "");
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

/// The scripted model servers of one batch: one that fixes the code (after a long first
/// wait, when `slow_first`), one that gives up, one never asked.
struct Models {
    solver: Model,
    quitter: Model,
    nobody: Model,
}

impl Models {
    fn start(slow_first: bool) -> Models {
        let solver = Model::start();
        if slow_first {
            solver.server.reply(
                "POST",
                "/api/chat",
                Reply::ndjson("").delay_first_byte(Duration::from_secs(30)),
            );
        }
        solver.script(fix_script());
        let quitter = Model::start();
        quitter.script(vec![Turn::Text("Done.")]);
        Models {
            solver,
            quitter,
            nobody: Model::start(),
        }
    }

    /// A solved task, an unresolved one, a line that is not a task, and a repository that
    /// does not exist.
    fn lines(&self) -> Vec<String> {
        vec![
            task("solved", "work", &self.solver).to_string(),
            task("unresolved", "work", &self.quitter).to_string(),
            r#"{"id": "bad", "repo": "work", "task": "t", "max_steps": "ten"}"#.to_owned(),
            task("missing", "no-such-repo", &self.nobody).to_string(),
        ]
    }
}

/// What the emulation reads from `job.json` and the ConfigMap, with the pod's paths
/// mapped to this test's directories.
struct Job {
    completions: usize,
    parallelism: usize,
    backoff_limit_per_index: u32,
    rules: Vec<Value>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    out: PathBuf,
    logs: PathBuf,
}

/// One pod: the harness process of one try at one index.
struct Pod {
    index: usize,
    child: Child,
}

impl Job {
    fn read(repo: &Repo, manifests: &Path) -> Job {
        let job = read_json(&manifests.join("job.json"));
        let spec = &job["spec"];
        assert_eq!(spec["completionMode"], "Indexed");
        let pod = &spec["template"]["spec"];
        assert_eq!(pod["restartPolicy"], "Never");
        let container = &pod["containers"][0];
        assert_eq!(container["command"], serde_json::json!(["harness"]));

        // The ConfigMap's task file, beside the fixture's repository (a relative `repo` is
        // taken from the task file's directory, not the link's target), the Service's name
        // made 127.0.0.1: the Service forwards each port to the same port, as the scripted
        // servers listen.
        let config_map = read_json(&manifests.join("configmap.json"));
        let text = config_map["data"]["tasks.jsonl"]
            .as_str()
            .expect("the tasks");
        assert!(text.contains("http://harness-model:"), "{text}");
        // Laid out as the kubelet lays out a ConfigMap volume: the file is a link through
        // `..data` to a timestamped directory, which an update of the ConfigMap swaps.
        let data = repo.outer.join("..2026_12_07_22_00_00.000000000");
        fs::create_dir_all(&data).expect("the ConfigMap's data directory");
        fs::write(
            data.join("tasks.jsonl"),
            text.replace("http://harness-model:", "http://127.0.0.1:"),
        )
        .expect("write the pod's task file");
        std::os::unix::fs::symlink(data.file_name().expect("a name"), repo.outer.join("..data"))
            .expect("link ..data");
        let tasks = repo.outer.join("tasks.jsonl");
        std::os::unix::fs::symlink("..data/tasks.jsonl", &tasks).expect("link tasks.jsonl");
        let out = repo.outer.join("k8s-out");
        let logs = repo.outer.join("termination-logs");
        fs::create_dir_all(&logs).expect("a directory for the termination messages");

        let mounts: BTreeMap<String, String> = container["volumeMounts"]
            .as_array()
            .expect("as --emit k8s writes it")
            .iter()
            .map(|mount| {
                (
                    mount["name"]
                        .as_str()
                        .expect("as --emit k8s writes it")
                        .to_owned(),
                    mount["mountPath"]
                        .as_str()
                        .expect("as --emit k8s writes it")
                        .to_owned(),
                )
            })
            .collect();
        let tasks_in_pod = format!("{}/tasks.jsonl", mounts["tasks"]);
        let args = container["args"]
            .as_array()
            .expect("as --emit k8s writes it")
            .iter()
            .map(|arg| {
                let arg = arg.as_str().expect("as --emit k8s writes it");
                if arg == tasks_in_pod {
                    tasks.display().to_string()
                } else if arg == mounts["results"] {
                    out.display().to_string()
                } else {
                    arg.to_owned()
                }
            })
            .collect();
        let env = container["env"]
            .as_array()
            .expect("as --emit k8s writes it")
            .iter()
            .map(|var| {
                (
                    var["name"]
                        .as_str()
                        .expect("as --emit k8s writes it")
                        .to_owned(),
                    var["value"]
                        .as_str()
                        .expect("as --emit k8s writes it")
                        .to_owned(),
                )
            })
            .collect();
        let number = |value: &Value| {
            usize::try_from(value.as_u64().expect("as --emit k8s writes it"))
                .expect("as --emit k8s writes it")
        };
        Job {
            completions: number(&spec["completions"]),
            parallelism: number(&spec["parallelism"]),
            backoff_limit_per_index: u32::try_from(
                spec["backoffLimitPerIndex"]
                    .as_u64()
                    .expect("as --emit k8s writes it"),
            )
            .expect("as --emit k8s writes it"),
            rules: spec["podFailurePolicy"]["rules"]
                .as_array()
                .expect("as --emit k8s writes it")
                .clone(),
            args,
            env,
            out,
            logs,
        }
    }

    /// The file standing for try `attempt` at `index`'s `/dev/termination-log`.
    fn termination_log(&self, index: usize, attempt: u32) -> PathBuf {
        self.logs.join(format!("{index}-{attempt}"))
    }

    /// Starts try `attempt` at `index`: the container's arguments and environment, the
    /// termination message path made a file of this test's, `JOB_COMPLETION_INDEX` set.
    fn start(&self, repo: &Repo, index: usize, attempt: u32) -> Pod {
        let mut wrapper = vec!["env".to_owned(), format!("JOB_COMPLETION_INDEX={index}")];
        for (name, value) in &self.env {
            let value = if value == "/dev/termination-log" {
                self.termination_log(index, attempt).display().to_string()
            } else {
                value.clone()
            };
            wrapper.push(format!("{name}={value}"));
        }
        let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        Pod {
            index,
            child: repo.spawn_through(&wrapper, &args),
        }
    }

    /// What the Job does with a pod that exited `code`: `Succeeded` for 0, else the action
    /// of the first `podFailurePolicy` rule whose exit codes match (`Count` when none
    /// does, as Kubernetes counts an unmatched failure).
    fn action(&self, code: i32) -> &str {
        if code == 0 {
            return "Succeeded";
        }
        for rule in &self.rules {
            let Some(codes) = rule.get("onExitCodes") else {
                continue;
            };
            let listed = codes["values"]
                .as_array()
                .expect("as --emit k8s writes it")
                .iter()
                .any(|value| value.as_i64() == Some(i64::from(code)));
            let matches = match codes["operator"].as_str().expect("as --emit k8s writes it") {
                "In" => listed,
                "NotIn" => !listed,
                other => panic!("an operator Kubernetes does not have: {other}"),
            };
            if matches {
                return rule["action"].as_str().expect("as --emit k8s writes it");
            }
        }
        "Count"
    }
}
