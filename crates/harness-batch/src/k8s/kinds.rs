//! The few Kubernetes objects `--emit k8s` writes, as serde types holding only the fields
//! it sets: `v1` ConfigMap, PersistentVolumeClaim and Service, `networking.k8s.io/v1`
//! NetworkPolicy and `batch/v1` Job. Field names are the API's (camelCase); the schema
//! test in `tests/k8s_manifests.rs` holds them to the Kubernetes API's JSON schemas, so a
//! misspelt or misplaced field fails there rather than on a cluster.
//!
//! Why not `k8s-openapi`: measured here (0.28, one API version, a cold debug build on this
//! 2-core machine) it builds in about 30 s with `jiff` and `base64` beside it, into a
//! 46 MB library per profile, to type every kind of every API group; five kinds need
//! about 200 lines, and the schema test checks them as strictly.

use std::collections::BTreeMap;

use serde::Serialize;

/// Labels or a selector's `matchLabels`, in a stable order.
pub(crate) type Labels = BTreeMap<String, String>;

/// Any object: its kind, its name and labels, and the rest of it flattened in.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Object<T> {
    pub(crate) api_version: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) metadata: Metadata,
    #[serde(flatten)]
    pub(crate) body: T,
}

#[derive(Debug, Default, Serialize)]
pub(crate) struct Metadata {
    /// Empty in a pod template, whose pods Kubernetes names.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) name: String,
    #[serde(skip_serializing_if = "Labels::is_empty")]
    pub(crate) labels: Labels,
}

/// A ConfigMap's body.
#[derive(Debug, Serialize)]
pub(crate) struct ConfigMapBody {
    pub(crate) data: BTreeMap<String, String>,
}

/// Any object whose body is a `spec`.
#[derive(Debug, Serialize)]
pub(crate) struct Spec<T> {
    pub(crate) spec: T,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClaimSpec {
    pub(crate) access_modes: Vec<&'static str>,
    pub(crate) resources: ClaimResources,
}

#[derive(Debug, Serialize)]
pub(crate) struct ClaimResources {
    pub(crate) requests: BTreeMap<&'static str, &'static str>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ServiceSpec {
    pub(crate) selector: Labels,
    pub(crate) ports: Vec<ServicePort>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ServicePort {
    pub(crate) name: String,
    pub(crate) protocol: &'static str,
    pub(crate) port: u16,
    pub(crate) target_port: u16,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NetworkPolicySpec {
    pub(crate) pod_selector: Selector,
    pub(crate) policy_types: Vec<&'static str>,
    pub(crate) egress: Vec<EgressRule>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Selector {
    pub(crate) match_labels: Labels,
}

#[derive(Debug, Serialize)]
pub(crate) struct EgressRule {
    pub(crate) to: Vec<Peer>,
    pub(crate) ports: Vec<PolicyPort>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Peer {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) namespace_selector: Option<Selector>,
    pub(crate) pod_selector: Selector,
}

#[derive(Debug, Serialize)]
pub(crate) struct PolicyPort {
    pub(crate) protocol: &'static str,
    pub(crate) port: u16,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobSpec {
    pub(crate) completion_mode: &'static str,
    pub(crate) completions: usize,
    pub(crate) parallelism: usize,
    pub(crate) backoff_limit_per_index: u32,
    pub(crate) pod_failure_policy: PodFailurePolicy,
    pub(crate) active_deadline_seconds: u64,
    pub(crate) ttl_seconds_after_finished: u32,
    pub(crate) template: PodTemplate,
}

#[derive(Debug, Serialize)]
pub(crate) struct PodFailurePolicy {
    pub(crate) rules: Vec<FailureRule>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FailureRule {
    pub(crate) action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) on_exit_codes: Option<ExitCodes>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) on_pod_conditions: Vec<PodCondition>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExitCodes {
    pub(crate) container_name: &'static str,
    pub(crate) operator: &'static str,
    pub(crate) values: Vec<i32>,
}

#[derive(Debug, Serialize)]
pub(crate) struct PodCondition {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) status: &'static str,
}

#[derive(Debug, Serialize)]
pub(crate) struct PodTemplate {
    pub(crate) metadata: Metadata,
    pub(crate) spec: PodSpec,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PodSpec {
    pub(crate) restart_policy: &'static str,
    pub(crate) active_deadline_seconds: u64,
    pub(crate) automount_service_account_token: bool,
    pub(crate) security_context: PodSecurity,
    pub(crate) containers: Vec<Container>,
    pub(crate) volumes: Vec<Volume>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PodSecurity {
    pub(crate) run_as_non_root: bool,
    pub(crate) run_as_user: u32,
    pub(crate) run_as_group: u32,
    pub(crate) fs_group: u32,
    pub(crate) seccomp_profile: Profile,
}

#[derive(Debug, Serialize)]
pub(crate) struct Profile {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Container {
    pub(crate) name: &'static str,
    pub(crate) image: &'static str,
    pub(crate) image_pull_policy: &'static str,
    pub(crate) command: Vec<String>,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<EnvVar>,
    pub(crate) termination_message_path: &'static str,
    pub(crate) termination_message_policy: &'static str,
    pub(crate) security_context: ContainerSecurity,
    pub(crate) volume_mounts: Vec<VolumeMount>,
}

#[derive(Debug, Serialize)]
pub(crate) struct EnvVar {
    pub(crate) name: &'static str,
    pub(crate) value: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContainerSecurity {
    pub(crate) allow_privilege_escalation: bool,
    pub(crate) capabilities: Capabilities,
}

#[derive(Debug, Serialize)]
pub(crate) struct Capabilities {
    pub(crate) drop: Vec<&'static str>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VolumeMount {
    pub(crate) name: &'static str,
    pub(crate) mount_path: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sub_path: Option<String>,
    pub(crate) read_only: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Volume {
    pub(crate) name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) config_map: Option<ConfigMapVolume>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) persistent_volume_claim: Option<ClaimVolume>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) empty_dir: Option<EmptyDir>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ConfigMapVolume {
    pub(crate) name: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClaimVolume {
    pub(crate) claim_name: &'static str,
}

#[derive(Debug, Serialize)]
pub(crate) struct EmptyDir {}
