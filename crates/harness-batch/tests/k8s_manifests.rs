//! The manifests `harness batch --emit k8s` writes: pinned by snapshot files next to this
//! test, validated against the Kubernetes API's JSON schemas, and rendered by
//! `kubectl kustomize`. No cluster is needed, or used.
//!
//! The schemas are those `kubernetes-validate` (PyPI) ships, in the virtual environment
//! `.ci/run` makes at `~/.cache/harness/k8s-venv` (or the directory `HARNESS_K8S_SCHEMAS`
//! names). Without them, or without kubectl, a test says why it is skipped and passes,
//! except under CI (`CI` set), where it fails: CI installs both.
//!
//! Set `HARNESS_BLESS=1` to overwrite `snapshots/k8s/` with the current output after a
//! deliberate change, then review the snapshots' diff: it is what users apply.

use std::path::{Path, PathBuf};
use std::process::Command;

use harness_batch::{K8sOptions, Manifests, Tasks, k8s_manifests};
use serde_json::{Value, json};

/// The Kubernetes version the schemas are of: the oldest release where every field the
/// Job uses is on by default (`backoffLimitPerIndex` went GA in 1.33).
const KUBERNETES: &str = "v1.33.0-local-strict";

/// Three task lines: a default budget, a larger one on another model port, and a line
/// that is not a task.
const TASKS: &str = concat!(
    r#"{"id": "fix-add", "repo": "https://example.invalid/calc.git", "task": "make the failing test pass", "verify": "python3 -m unittest -q"}"#,
    "\n",
    r#"{"id": "port-parser", "repo": "https://example.invalid/parser.git", "ref": "v2", "task": "port it", "timeout": 3600, "host": "http://127.0.0.1:8080", "api": "openai"}"#,
    "\n\n",
    r#"{"id": "typo", "repo": "/data/calc", "task": "fix the typo", "max_steps": "ten"}"#,
    "\n",
);

fn manifests() -> Manifests {
    let tasks = Tasks::parse(Path::new("/srv/evals/tasks.jsonl"), TASKS);
    k8s_manifests(&tasks, &K8sOptions { jobs: Some(2) }).expect("manifests")
}

#[test]
fn the_manifests_match_the_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/k8s");
    let manifests = manifests();
    if std::env::var_os("HARNESS_BLESS").is_some() {
        manifests.write(&dir).expect("the snapshots are writable");
    }
    for (name, actual) in &manifests.files {
        let path = dir.join(name);
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|error| {
            panic!("{}: {error}; run with HARNESS_BLESS=1", path.display())
        });
        assert!(
            *actual == expected,
            "{name} changed; if that is intended, rerun with HARNESS_BLESS=1 and review the \
             snapshot's diff.\n--- actual\n{actual}"
        );
    }
}

#[test]
fn every_object_is_valid_by_the_kubernetes_api_schema_and_a_broken_one_is_not() {
    let Some(schemas) = schemas() else { return };
    let manifests = manifests();
    let objects: Vec<Value> = manifests
        .files
        .iter()
        .filter(|(name, _)| name.ends_with(".json"))
        .map(|(_, text)| serde_json::from_str(text).expect("JSON"))
        .collect();
    assert_eq!(objects.len(), 5);
    for object in &objects {
        let errors = schemas.errors(object);
        assert!(errors.is_empty(), "{}: {errors:#?}", object["kind"]);
    }

    // The same check fails a manifest with a misspelt field, a wrong type, a missing
    // required field, or a value the API does not have.
    let job = objects
        .iter()
        .find(|object| object["kind"] == "Job")
        .expect("a Job");
    let broken = |change: &dyn Fn(&mut Value)| {
        let mut broken = job.clone();
        change(&mut broken);
        broken
    };
    let cases = [
        broken(&|job| job["spec"]["completionMod"] = json!("Indexed")),
        broken(&|job| job["spec"]["parallelism"] = json!("two")),
        broken(&|job| {
            job["spec"]
                .as_object_mut()
                .expect("a spec")
                .remove("template");
        }),
        broken(&|job| job["spec"]["template"]["spec"]["containers"][0]["image"] = json!(7)),
        broken(&|job| job["apiVersion"] = json!("batch/v2")),
    ];
    for case in &cases {
        assert!(!schemas.errors(case).is_empty(), "accepted: {case}");
    }
}

#[test]
fn kubectl_kustomize_renders_the_directory() {
    if Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_err()
    {
        skip_or_fail("kubectl is not installed, so `kubectl kustomize` cannot render");
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    manifests().write(dir.path()).expect("write the manifests");
    let output = Command::new("kubectl")
        .arg("kustomize")
        .arg(dir.path())
        .output()
        .expect("kubectl runs");
    let rendered = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for kind in [
        "kind: ConfigMap",
        "kind: Job",
        "kind: NetworkPolicy",
        "kind: PersistentVolumeClaim",
        "kind: Service",
        "completionMode: Indexed",
        "name: harness-tasks-tasks",
    ] {
        assert!(rendered.contains(kind), "{kind} missing from:\n{rendered}");
    }
}

/// The Kubernetes API's schemas, one per kind, sharing the definitions file.
struct Schemas {
    dir: PathBuf,
    registry: jsonschema::Registry<'static>,
}

impl Schemas {
    /// What is wrong with `object` by its kind's schema; empty when it is valid.
    fn errors(&self, object: &Value) -> Vec<String> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default().to_lowercase();
        // `v1` is the core group; `networking.k8s.io/v1` is named by its first word.
        let name = match api_version.split_once('/') {
            Some((group, version)) => {
                let group = group.split('.').next().unwrap_or(group);
                format!("{kind}-{group}-{version}.json")
            }
            None => format!("{kind}-{api_version}.json"),
        };
        let path = self.dir.join(name);
        // A kind or version with no schema file is the first error.
        let Ok(text) = std::fs::read_to_string(&path) else {
            return vec![format!("no schema {}", path.display())];
        };
        let schema: Value = serde_json::from_str(&text).expect("a schema is JSON");
        let validator = jsonschema::options()
            .with_registry(&self.registry)
            .build(&schema)
            .expect("the schema compiles");
        let errors: Vec<String> = validator
            .iter_errors(object)
            .map(|error| format!("{}: {error}", error.instance_path()))
            .collect();
        errors
    }
}

/// The schemas, or `None` (after saying why) where they are not installed outside CI.
fn schemas() -> Option<Schemas> {
    let dir = std::env::var_os("HARNESS_K8S_SCHEMAS")
        .map(PathBuf::from)
        .or_else(venv_schemas);
    let Some(dir) = dir.filter(|dir| dir.join("_definitions.json").is_file()) else {
        skip_or_fail(&format!(
            "no Kubernetes schemas: `.ci/run` installs kubernetes-validate into \
             ~/.cache/harness/k8s-venv (or set HARNESS_K8S_SCHEMAS to a {KUBERNETES} directory)"
        ));
        return None;
    };
    let text = std::fs::read_to_string(dir.join("_definitions.json")).expect("readable");
    let definitions: Value = serde_json::from_str(&text).expect("the definitions are JSON");
    let registry = jsonschema::Registry::new()
        .add("https://kubernetes.io/api/_definitions.json", definitions)
        .expect("the definitions register")
        .prepare()
        .expect("the registry builds");
    Some(Schemas { dir, registry })
}

/// `kubernetes-validate`'s schemas of [`KUBERNETES`] in the CI's virtual environment.
fn venv_schemas() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let lib = Path::new(&home).join(".cache/harness/k8s-venv/lib");
    let python = std::fs::read_dir(&lib)
        .ok()?
        .filter_map(Result::ok)
        .find(|entry| entry.file_name().to_string_lossy().starts_with("python3"))?;
    Some(
        python
            .path()
            .join("site-packages/kubernetes_validate/kubernetes-json-schema")
            .join(KUBERNETES),
    )
}

/// Outside CI, a missing tool skips the test, saying so; under CI it fails it.
fn skip_or_fail(why: &str) {
    assert!(std::env::var_os("CI").is_none(), "{why} (CI must have it)");
    #[allow(clippy::print_stderr)] // a skipped test says why, on stderr
    {
        eprintln!("skipped: {why}");
    }
}
