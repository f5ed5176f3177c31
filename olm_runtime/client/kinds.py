"""GroupVersionKinds of common built-in kinds, for the dict-based client:
`await client.get(kinds.CONFIG_MAP, "name", namespace="ns")`."""

from __future__ import annotations

from olm_runtime.client.gvk import GroupVersionKind

_CORE = ""
_APPS = "apps"
_RBAC = "rbac.authorization.k8s.io"

NAMESPACE = GroupVersionKind(_CORE, "v1", "Namespace")
CONFIG_MAP = GroupVersionKind(_CORE, "v1", "ConfigMap")
SECRET = GroupVersionKind(_CORE, "v1", "Secret")
SERVICE_ACCOUNT = GroupVersionKind(_CORE, "v1", "ServiceAccount")
SERVICE = GroupVersionKind(_CORE, "v1", "Service")
ENDPOINTS = GroupVersionKind(_CORE, "v1", "Endpoints")
POD = GroupVersionKind(_CORE, "v1", "Pod")
NODE = GroupVersionKind(_CORE, "v1", "Node")
EVENT = GroupVersionKind(_CORE, "v1", "Event")
PERSISTENT_VOLUME_CLAIM = GroupVersionKind(_CORE, "v1", "PersistentVolumeClaim")

DEPLOYMENT = GroupVersionKind(_APPS, "v1", "Deployment")
REPLICA_SET = GroupVersionKind(_APPS, "v1", "ReplicaSet")
STATEFUL_SET = GroupVersionKind(_APPS, "v1", "StatefulSet")
DAEMON_SET = GroupVersionKind(_APPS, "v1", "DaemonSet")

JOB = GroupVersionKind("batch", "v1", "Job")
CRON_JOB = GroupVersionKind("batch", "v1", "CronJob")

ROLE = GroupVersionKind(_RBAC, "v1", "Role")
ROLE_BINDING = GroupVersionKind(_RBAC, "v1", "RoleBinding")
CLUSTER_ROLE = GroupVersionKind(_RBAC, "v1", "ClusterRole")
CLUSTER_ROLE_BINDING = GroupVersionKind(_RBAC, "v1", "ClusterRoleBinding")

CUSTOM_RESOURCE_DEFINITION = GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
API_SERVICE = GroupVersionKind("apiregistration.k8s.io", "v1", "APIService")
ENDPOINT_SLICE = GroupVersionKind("discovery.k8s.io", "v1", "EndpointSlice")
LEASE = GroupVersionKind("coordination.k8s.io", "v1", "Lease")
EVENTS_EVENT = GroupVersionKind("events.k8s.io", "v1", "Event")
NETWORK_POLICY = GroupVersionKind("networking.k8s.io", "v1", "NetworkPolicy")
INGRESS = GroupVersionKind("networking.k8s.io", "v1", "Ingress")
POD_DISRUPTION_BUDGET = GroupVersionKind("policy", "v1", "PodDisruptionBudget")
PRIORITY_CLASS = GroupVersionKind("scheduling.k8s.io", "v1", "PriorityClass")
STORAGE_CLASS = GroupVersionKind("storage.k8s.io", "v1", "StorageClass")
VALIDATING_WEBHOOK_CONFIGURATION = GroupVersionKind(
    "admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration"
)
MUTATING_WEBHOOK_CONFIGURATION = GroupVersionKind(
    "admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration"
)
SUBJECT_ACCESS_REVIEW = GroupVersionKind("authorization.k8s.io", "v1", "SubjectAccessReview")
SELF_SUBJECT_ACCESS_REVIEW = GroupVersionKind("authorization.k8s.io", "v1", "SelfSubjectAccessReview")
SELF_SUBJECT_RULES_REVIEW = GroupVersionKind("authorization.k8s.io", "v1", "SelfSubjectRulesReview")
TOKEN_REVIEW = GroupVersionKind("authentication.k8s.io", "v1", "TokenReview")
