//! `harness batch TASKS --emit k8s --out DIR`: the Kubernetes manifests that run the task
//! file as an Indexed Job, one task line per completion index, each index running the
//! index contract (`harness batch TASKS --out OUT --resume`, the index from
//! `JOB_COMPLETION_INDEX`). [`k8s_manifests`] only renders: it reads no file and applies
//! nothing; [`Manifests::write`] puts the files in a directory `kubectl apply -k` takes.
//!
//! The directory holds `kustomization.yaml` and one JSON file per object (JSON is YAML, so
//! kubectl and kustomize read them as they are):
//!
//! - `configmap.json`: the task file, as `tasks.jsonl`, mounted read-only at
//!   [`TASKS_DIR`]. Each task's `host` is rewritten to the model Service, keeping its
//!   port; every other byte, bad lines and line numbers included, is the file's. A file
//!   whose ConfigMap would pass Kubernetes' 1 MiB limit is refused
//!   ([`Error::TooLargeForConfigMap`]), naming the way out: split the file.
//! - `job.json`: a `batch/v1` Job, `completionMode: Indexed`, one completion per task
//!   line, `parallelism` from `--jobs` (1 without it, Kubernetes' default), and a
//!   `podFailurePolicy` that follows the index contract: exit 2 (a line that is not a
//!   task) fails that index at once, a disruption (eviction, preemption) is retried
//!   without counting, and any other failure (no result written) is counted against
//!   `backoffLimitPerIndex`. A result is written to the claim [`RESULTS_CLAIM`], in a
//!   directory named after the Job, and the result's line goes to stdout and the
//!   termination message.
//! - `service.json`: [`MODEL_SERVICE`], selecting the pods labelled
//!   `app.kubernetes.io/name: harness-model` on each port the tasks' hosts name.
//! - `networkpolicy.json`: the Job's pods may reach that Service's pods and the cluster's
//!   DNS, nothing else, and nothing may reach them.
//! - `pvc.json`: the results claim.

mod kinds;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::Error;
use crate::slurm::index_limit;
use crate::spec::{Source, Tasks};
use kinds::{
    Capabilities, ClaimResources, ClaimSpec, ClaimVolume, ConfigMapBody, ConfigMapVolume,
    Container, ContainerSecurity, EgressRule, EmptyDir, EnvVar, ExitCodes, FailureRule, JobSpec,
    Labels, Metadata, NetworkPolicySpec, Object, Peer, PodCondition, PodFailurePolicy, PodSecurity,
    PodSpec, PodTemplate, PolicyPort, Profile, Selector, ServicePort, ServiceSpec, Spec, Volume,
    VolumeMount,
};

/// Where the task file is mounted in a pod: the ConfigMap's `tasks.jsonl` is in it. A task
/// whose `repo` is a relative path looks for it here, where there is none: in a pod a
/// repository is a git URL or an absolute path in the image or a volume.
pub const TASKS_DIR: &str = "/harness/tasks";

/// Where the results volume is mounted in a pod: the Job's `--out`.
pub const OUT_DIR: &str = "/harness/out";

/// The PersistentVolumeClaim the results go to (in the directory named after the Job).
pub const RESULTS_CLAIM: &str = "harness-results";

/// The Service the pods reach the model server by; each task's host names it.
pub const MODEL_SERVICE: &str = "harness-model";

/// The image the Job runs, as `deploy/Dockerfile` builds it; `kustomize edit set image`
/// renames it.
pub const IMAGE: &str = "harness:latest";

/// The variable naming a file the index contract also writes its result line to: the pod
/// sets it to the container's termination message path.
pub const RESULT_LINE_VARIABLE: &str = "HARNESS_RESULT_LINE_FILE";

/// Kubernetes' limit on one ConfigMap: 1 MiB, data and metadata together.
pub const CONFIGMAP_LIMIT: usize = 1024 * 1024;

/// Retries of one index after a counted failure.
pub const BACKOFF_LIMIT_PER_INDEX: u32 = 2;

/// How long a finished Job (and its pods, with their logs) stays for `kubectl` to read: a
/// day. The results stay on the volume either way.
pub const TTL_SECONDS: u32 = 24 * 60 * 60;

/// The port a task without a host reaches the model on: the default host's.
const DEFAULT_MODEL_PORT: u16 = 11434;

/// The label the model server's pods carry, which the Service and the NetworkPolicy select.
const MODEL_LABEL: &str = "harness-model";

/// The container's name, which the failure policy's exit codes are read from.
const CONTAINER: &str = "harness";

/// The exit status of the index contract for a line that is not a task, or no such line.
const USAGE_EXIT: i32 = 2;

/// What the manifests are made for, besides the tasks.
#[derive(Clone, Copy, Debug, Default)]
pub struct K8sOptions {
    /// Pods run at once (`parallelism`); `None` is Kubernetes' default, 1.
    pub jobs: Option<usize>,
}

/// The rendered files: each name in the directory with its text, `kustomization.yaml`
/// first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifests {
    /// The files, by name.
    pub files: Vec<(String, String)>,
    /// The Job's name: the results are in `harness-results` under it.
    pub job: String,
    /// What will not work in a pod as the task file says, one line each: a task whose
    /// repository is a relative path (looked for under [`TASKS_DIR`], where there is none).
    pub warnings: Vec<String>,
}

impl Manifests {
    /// Writes every file into `dir` (made if missing), replacing files of the same name.
    ///
    /// # Errors
    ///
    /// The directory or a file cannot be written.
    pub fn write(&self, dir: &Path) -> Result<(), Error> {
        std::fs::create_dir_all(dir).map_err(|source| Error::Write {
            path: dir.to_owned(),
            source,
        })?;
        for (name, text) in &self.files {
            crate::atomic::write_atomic(&dir.join(name), text.as_bytes())?;
        }
        Ok(())
    }
}

/// The manifests that run `tasks` as an Indexed Job.
///
/// Each pod's `activeDeadlineSeconds` is the time one index may take, as the Slurm
/// script's time limit (the largest run budget, the last check, the start); the Job's is
/// that times the waves of `parallelism` and the tries of an index.
///
/// ```
/// use std::path::Path;
///
/// use harness_batch::{K8sOptions, Tasks, k8s_manifests};
///
/// let text = "{\"id\": \"a\", \"repo\": \"https://example.invalid/a.git\", \"task\": \"t\", \"host\": \"http://127.0.0.1:8080\"}\n{\"id\": \"b\"}\n";
/// let tasks = Tasks::parse(Path::new("/srv/my tasks.jsonl"), text);
/// let manifests = k8s_manifests(&tasks, &K8sOptions { jobs: Some(4) })?;
/// assert_eq!(manifests.job, "harness-my-tasks");
/// let job = &manifests.files.iter().find(|(name, _)| name == "job.json").unwrap().1;
/// assert!(job.contains("\"completionMode\": \"Indexed\""));
/// assert!(job.contains("\"completions\": 2,"));
/// let tasks = &manifests.files.iter().find(|(name, _)| name == "configmap.json").unwrap().1;
/// // The task reaches the model through the Service, on its own port.
/// assert!(tasks.contains(r#"\"host\":\"http://harness-model:8080\""#));
/// # Ok::<(), harness_batch::Error>(())
/// ```
///
/// # Errors
///
/// A task file without task lines ([`Error::NoTasks`]), or one too large for a ConfigMap
/// ([`Error::TooLargeForConfigMap`]).
pub fn k8s_manifests(tasks: &Tasks, options: &K8sOptions) -> Result<Manifests, Error> {
    let count = tasks.entries().len();
    if count == 0 {
        return Err(Error::NoTasks {
            path: tasks.path().to_owned(),
        });
    }
    let job = job_name(tasks.path());
    let (text, ports) = rewritten_tasks(tasks);
    let config_map = Object {
        api_version: "v1",
        kind: "ConfigMap",
        metadata: metadata(&format!("{job}-tasks"), &job),
        body: ConfigMapBody {
            data: BTreeMap::from([("tasks.jsonl".to_owned(), text)]),
        },
    };
    let config_map = to_json(&config_map);
    if config_map.len() > CONFIGMAP_LIMIT {
        return Err(Error::TooLargeForConfigMap {
            path: tasks.path().to_owned(),
            bytes: config_map.len(),
        });
    }
    let parallelism = options.jobs.unwrap_or(1).clamp(1, count);
    let limit = seconds(index_limit(tasks));
    let waves = u64::try_from(count.div_ceil(parallelism)).unwrap_or(u64::MAX);
    let tries = u64::from(BACKOFF_LIMIT_PER_INDEX) + 1;
    let job_deadline = limit.saturating_mul(waves).saturating_mul(tries);
    let files = vec![
        ("kustomization.yaml".to_owned(), kustomization(&job)),
        ("configmap.json".to_owned(), config_map),
        (
            "job.json".to_owned(),
            to_json(&job_object(&job, count, parallelism, limit, job_deadline)),
        ),
        ("service.json".to_owned(), to_json(&service(&job, &ports))),
        (
            "networkpolicy.json".to_owned(),
            to_json(&network_policy(&job, &ports)),
        ),
        ("pvc.json".to_owned(), to_json(&claim(&job))),
    ];
    Ok(Manifests {
        files,
        job,
        warnings: warnings(tasks),
    })
}

/// The tasks whose repository a pod cannot have: a relative path, taken from the task
/// file's directory, which in a pod is the ConfigMap's and holds nothing else.
fn warnings(tasks: &Tasks) -> Vec<String> {
    tasks
        .entries()
        .iter()
        .filter_map(|entry| entry.parsed.as_ref().ok())
        .filter(|spec| {
            matches!(spec.source(Path::new(TASKS_DIR)), Source::Local(_))
                && Path::new(&spec.repo).is_relative()
        })
        .map(|spec| {
            format!(
                "{}: the repository {:?} is a relative path, which a pod looks for under \
                 {TASKS_DIR}: use a git URL, or an absolute path in the image or a volume",
                spec.id, spec.repo
            )
        })
        .collect()
}

/// The task file with each task's host made the Service's, and the ports they name.
/// Bad lines and blank lines stay as they are, so line numbers and indices do not move.
fn rewritten_tasks(tasks: &Tasks) -> (String, BTreeSet<u16>) {
    let mut ports = BTreeSet::new();
    let mut by_line = BTreeMap::new();
    for entry in tasks.entries() {
        if let Ok(spec) = &entry.parsed {
            let port = spec
                .host
                .as_deref()
                .and_then(host_port)
                .unwrap_or(DEFAULT_MODEL_PORT);
            ports.insert(port);
            let mut spec = spec.clone();
            spec.host = Some(format!("http://{MODEL_SERVICE}:{port}"));
            // A TaskSpec is strings, numbers and booleans: it always serializes.
            by_line.insert(entry.line, serde_json::to_string(&spec).unwrap_or_default());
        }
    }
    let mut text = String::new();
    for (number, line) in tasks.text().lines().enumerate() {
        text.push_str(by_line.get(&(number + 1)).map_or(line, String::as_str));
        text.push('\n');
    }
    (text, ports)
}

/// The port in a host address (`http://127.0.0.1:8080/v1`, `localhost:11434`); `None`
/// when it names none.
fn host_port(host: &str) -> Option<u16> {
    let rest = host.split_once("://").map_or(host, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    // An IPv6 address holds colons of its own: the port follows its closing bracket.
    let after_address = authority
        .rsplit_once(']')
        .map_or(authority, |(_, tail)| tail);
    after_address.rsplit_once(':')?.1.parse().ok()
}

/// The Job.
fn job_object(
    job: &str,
    count: usize,
    parallelism: usize,
    limit: u64,
    deadline: u64,
) -> Object<Spec<JobSpec>> {
    let exit_codes = |operator, values| ExitCodes {
        container_name: CONTAINER,
        operator,
        values,
    };
    let rules = vec![
        // A line that is not a task: no retry can help.
        FailureRule {
            action: "FailIndex",
            on_exit_codes: Some(exit_codes("In", vec![USAGE_EXIT])),
            on_pod_conditions: Vec::new(),
        },
        // Evicted or preempted: the node's doing, not the task's; retried uncounted.
        FailureRule {
            action: "Ignore",
            on_exit_codes: None,
            on_pod_conditions: vec![PodCondition {
                kind: "DisruptionTarget",
                status: "True",
            }],
        },
        // Anything else is a result not written: counted, and retried up to the limit.
        FailureRule {
            action: "Count",
            on_exit_codes: Some(exit_codes("NotIn", vec![0, USAGE_EXIT])),
            on_pod_conditions: Vec::new(),
        },
    ];
    let mount = |name, mount_path, sub_path, read_only| VolumeMount {
        name,
        mount_path,
        sub_path,
        read_only,
    };
    let container = Container {
        name: CONTAINER,
        image: IMAGE,
        image_pull_policy: "IfNotPresent",
        command: vec!["harness".to_owned()],
        args: vec![
            "batch".to_owned(),
            format!("{TASKS_DIR}/tasks.jsonl"),
            "--out".to_owned(),
            OUT_DIR.to_owned(),
            "--resume".to_owned(),
        ],
        env: vec![EnvVar {
            name: RESULT_LINE_VARIABLE,
            value: "/dev/termination-log".to_owned(),
        }],
        termination_message_path: "/dev/termination-log",
        termination_message_policy: "FallbackToLogsOnError",
        security_context: ContainerSecurity {
            allow_privilege_escalation: false,
            capabilities: Capabilities { drop: vec!["ALL"] },
        },
        volume_mounts: vec![
            mount("tasks", TASKS_DIR, None, true),
            mount("results", OUT_DIR, Some(job.to_owned()), false),
            mount("tmp", "/tmp", None, false),
        ],
    };
    let volume = |name| Volume {
        name,
        config_map: None,
        persistent_volume_claim: None,
        empty_dir: None,
    };
    let volumes = vec![
        Volume {
            config_map: Some(ConfigMapVolume {
                name: format!("{job}-tasks"),
            }),
            ..volume("tasks")
        },
        Volume {
            persistent_volume_claim: Some(ClaimVolume {
                claim_name: RESULTS_CLAIM,
            }),
            ..volume("results")
        },
        Volume {
            empty_dir: Some(EmptyDir {}),
            ..volume("tmp")
        },
    ];
    Object {
        api_version: "batch/v1",
        kind: "Job",
        metadata: metadata(job, job),
        body: Spec {
            spec: JobSpec {
                completion_mode: "Indexed",
                completions: count,
                parallelism,
                backoff_limit_per_index: BACKOFF_LIMIT_PER_INDEX,
                pod_failure_policy: PodFailurePolicy { rules },
                active_deadline_seconds: deadline,
                ttl_seconds_after_finished: TTL_SECONDS,
                template: PodTemplate {
                    metadata: Metadata {
                        name: String::new(),
                        labels: labels(job),
                    },
                    spec: PodSpec {
                        restart_policy: "Never",
                        active_deadline_seconds: limit,
                        automount_service_account_token: false,
                        security_context: PodSecurity {
                            run_as_non_root: true,
                            run_as_user: 1000,
                            run_as_group: 1000,
                            fs_group: 1000,
                            seccomp_profile: Profile {
                                kind: "RuntimeDefault",
                            },
                        },
                        containers: vec![container],
                        volumes,
                    },
                },
            },
        },
    }
}

/// The model server's Service: one port per port the tasks name, to the same port.
fn service(job: &str, ports: &BTreeSet<u16>) -> Object<Spec<ServiceSpec>> {
    Object {
        api_version: "v1",
        kind: "Service",
        metadata: metadata(MODEL_SERVICE, job),
        body: Spec {
            spec: ServiceSpec {
                selector: model_selector().match_labels,
                ports: ports
                    .iter()
                    .map(|&port| ServicePort {
                        name: format!("model-{port}"),
                        protocol: "TCP",
                        port,
                        target_port: port,
                    })
                    .collect(),
            },
        },
    }
}

/// Egress to the model server's pods and the cluster DNS only; no ingress.
fn network_policy(job: &str, ports: &BTreeSet<u16>) -> Object<Spec<NetworkPolicySpec>> {
    let dns = |protocol| PolicyPort { protocol, port: 53 };
    let selector = |key: &str, value: &str| Selector {
        match_labels: Labels::from([(key.to_owned(), value.to_owned())]),
    };
    Object {
        api_version: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: metadata(&format!("{job}-egress"), job),
        body: Spec {
            spec: NetworkPolicySpec {
                pod_selector: Selector {
                    match_labels: labels(job),
                },
                policy_types: vec!["Ingress", "Egress"],
                egress: vec![
                    EgressRule {
                        to: vec![Peer {
                            namespace_selector: None,
                            pod_selector: model_selector(),
                        }],
                        ports: ports
                            .iter()
                            .map(|&port| PolicyPort {
                                protocol: "TCP",
                                port,
                            })
                            .collect(),
                    },
                    EgressRule {
                        to: vec![Peer {
                            namespace_selector: Some(selector(
                                "kubernetes.io/metadata.name",
                                "kube-system",
                            )),
                            pod_selector: selector("k8s-app", "kube-dns"),
                        }],
                        ports: vec![dns("UDP"), dns("TCP")],
                    },
                ],
            },
        },
    }
}

/// The results claim: one node's volume is enough for pods on one node; pods spread over
/// nodes need a `ReadWriteMany` storage class (docs/batch.md).
fn claim(job: &str) -> Object<Spec<ClaimSpec>> {
    Object {
        api_version: "v1",
        kind: "PersistentVolumeClaim",
        metadata: metadata(RESULTS_CLAIM, job),
        body: Spec {
            spec: ClaimSpec {
                access_modes: vec!["ReadWriteOnce"],
                resources: ClaimResources {
                    requests: BTreeMap::from([("storage", "10Gi")]),
                },
            },
        },
    }
}

/// `kustomization.yaml`, naming the objects in the order they are needed.
fn kustomization(job: &str) -> String {
    format!(
        "# Written by `harness batch --emit k8s` for the Job {job}.\n\
         # Apply with `kubectl apply -k DIR`; see docs/batch.md, \"On Kubernetes\".\n\
         apiVersion: kustomize.config.k8s.io/v1beta1\n\
         kind: Kustomization\n\
         resources:\n\
         - pvc.json\n\
         - configmap.json\n\
         - service.json\n\
         - networkpolicy.json\n\
         - job.json\n"
    )
}

fn metadata(name: &str, job: &str) -> Metadata {
    Metadata {
        name: name.to_owned(),
        labels: labels(job),
    }
}

/// The labels of everything the batch makes, its pods included.
fn labels(job: &str) -> Labels {
    Labels::from([
        (
            "app.kubernetes.io/name".to_owned(),
            "harness-batch".to_owned(),
        ),
        ("app.kubernetes.io/instance".to_owned(), job.to_owned()),
    ])
}

fn model_selector() -> Selector {
    Selector {
        match_labels: Labels::from([("app.kubernetes.io/name".to_owned(), MODEL_LABEL.to_owned())]),
    }
}

/// `harness-<the task file's stem>` as a Kubernetes name: lower-case letters, digits and
/// `-`, at most 52 characters (an Indexed Job's pod names add the index and a suffix).
fn job_name(tasks: &Path) -> String {
    let stem = tasks
        .file_stem()
        .map(|stem| stem.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let mut name = String::from("harness-");
    for c in stem.chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && name.ends_with('-')) {
            name.push(c);
        }
    }
    name.truncate(52);
    name.trim_end_matches('-').to_owned()
}

fn seconds(duration: Duration) -> u64 {
    duration.as_secs().max(1)
}

/// An object as indented JSON, ending in a line break.
fn to_json(object: &impl Serialize) -> String {
    // These types hold strings, numbers and maps with string keys: they always serialize.
    serde_json::to_string_pretty(object).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks(text: &str) -> Tasks {
        Tasks::parse(Path::new("/srv/evals/tasks.jsonl"), text)
    }

    fn file(manifests: &Manifests, name: &str) -> serde_json::Value {
        let text = &manifests
            .files
            .iter()
            .find(|(file, _)| file == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .1;
        serde_json::from_str(text).unwrap()
    }

    const TWO: &str = concat!(
        "{\"id\": \"a\", \"repo\": \"https://example.invalid/r.git\", \"task\": \"t\"}\n",
        "\n",
        "{\"id\": \"b\", \"repo\": \"/data/r\", \"task\": \"t\", \"host\": \"http://10.0.0.1:8080/v1\", \"timeout\": 600}\n",
        "{\"id\": \"c\", \"max_steps\": \"ten\"}\n",
    );

    #[test]
    fn one_completion_per_task_line_and_the_index_contract_s_failure_policy() {
        let manifests = k8s_manifests(&tasks(TWO), &K8sOptions { jobs: Some(2) }).unwrap();
        assert_eq!(manifests.job, "harness-tasks");
        let job = file(&manifests, "job.json");
        let spec = &job["spec"];
        assert_eq!(spec["completionMode"], "Indexed");
        assert_eq!(spec["completions"], 3);
        assert_eq!(spec["parallelism"], 2);
        assert_eq!(spec["backoffLimitPerIndex"], 2);
        let rules = &spec["podFailurePolicy"]["rules"];
        assert_eq!(rules[0]["action"], "FailIndex");
        assert_eq!(rules[0]["onExitCodes"]["values"], serde_json::json!([2]));
        assert_eq!(rules[1]["action"], "Ignore");
        assert_eq!(rules[2]["action"], "Count");
        let pod = &spec["template"]["spec"];
        assert_eq!(pod["restartPolicy"], "Never");
        // The default run's 30 minutes, the last check's 10, 2 to start.
        assert_eq!(pod["activeDeadlineSeconds"], 42 * 60);
        // Two waves of two pods, each index tried at most three times.
        assert_eq!(spec["activeDeadlineSeconds"], 42 * 60 * 2 * 3);
        let container = &pod["containers"][0];
        assert_eq!(
            container["args"],
            serde_json::json!([
                "batch",
                "/harness/tasks/tasks.jsonl",
                "--out",
                "/harness/out",
                "--resume"
            ])
        );
        assert_eq!(
            container["terminationMessagePolicy"],
            "FallbackToLogsOnError"
        );
        assert_eq!(container["volumeMounts"][1]["subPath"], "harness-tasks");
    }

    #[test]
    fn hosts_point_at_the_service_and_the_file_keeps_its_lines() {
        let manifests = k8s_manifests(&tasks(TWO), &K8sOptions::default()).unwrap();
        let config_map = file(&manifests, "configmap.json");
        let text = config_map["data"]["tasks.jsonl"].as_str().unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(
            lines[0].contains("\"host\":\"http://harness-model:11434\""),
            "{text}"
        );
        assert_eq!(lines[1], "");
        assert!(
            lines[2].contains("\"host\":\"http://harness-model:8080\""),
            "{text}"
        );
        assert_eq!(lines[3], "{\"id\": \"c\", \"max_steps\": \"ten\"}");
        // The file read back is the same tasks but for the hosts, at the same lines.
        let back = Tasks::parse(Path::new("tasks.jsonl"), text);
        assert_eq!(back.task(1).unwrap().timeout, Some(600));
        assert!(back.task(2).is_err());
        let ports: Vec<u64> = file(&manifests, "service.json")["spec"]["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|port| port["port"].as_u64().unwrap())
            .collect();
        assert_eq!(ports, [8080, 11434]);
        assert_eq!(file(&manifests, "job.json")["spec"]["parallelism"], 1);
        // A URL and an absolute path are a pod's to have; a relative path is not.
        assert!(manifests.warnings.is_empty(), "{:?}", manifests.warnings);
        let relative = tasks("{\"id\": \"a\", \"repo\": \"../calc\", \"task\": \"t\"}\n");
        let manifests = k8s_manifests(&relative, &K8sOptions::default()).unwrap();
        assert_eq!(
            manifests.warnings,
            [
                "a: the repository \"../calc\" is a relative path, which a pod looks for under \
              /harness/tasks: use a git URL, or an absolute path in the image or a volume"
            ]
        );
    }

    #[test]
    fn host_ports() {
        assert_eq!(host_port("http://127.0.0.1:8080"), Some(8080));
        assert_eq!(host_port("http://h:9/v1"), Some(9));
        assert_eq!(host_port("localhost:11434"), Some(11434));
        assert_eq!(host_port("http://[::1]:7000/"), Some(7000));
        assert_eq!(host_port("http://[::1]/"), None);
        assert_eq!(host_port("https://models.example"), None);
    }

    #[test]
    fn job_names_are_kubernetes_names() {
        assert_eq!(
            job_name(Path::new("/x/My_Tasks.v2.jsonl")),
            "harness-my-tasks-v2"
        );
        assert_eq!(job_name(Path::new("/x/--.jsonl")), "harness");
        let long = job_name(Path::new(&format!("/x/{}.jsonl", "a".repeat(100))));
        assert_eq!(long.len(), 52);
    }

    #[test]
    fn no_task_line_or_a_file_past_the_configmap_limit_is_an_error() {
        let error = k8s_manifests(&tasks("\n"), &K8sOptions::default()).unwrap_err();
        assert!(matches!(error, Error::NoTasks { .. }));
        let line = format!(
            "{{\"id\": \"a\", \"repo\": \"https://example.invalid/r.git\", \"task\": \"{}\"}}\n",
            "x".repeat(CONFIGMAP_LIMIT)
        );
        let error = k8s_manifests(&tasks(&line), &K8sOptions::default()).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("1 MiB"), "{message}");
        assert!(message.contains("split"), "{message}");
    }
}
