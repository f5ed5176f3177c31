"""Objects shaped as the API server returns them: defaults applied, metadata filled in."""

from __future__ import annotations

from typing import Any

_MANAGED_FIELDS = [
    {
        "apiVersion": "olm.operatorframework.io/v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {".": {}, "f:namespace": {}}},
        "manager": "kubectl-client-side-apply",
        "operation": "Update",
        "time": "2025-01-02T03:04:05Z",
    }
]


def _metadata(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "uid": "5abdf57d-aedc-45d4-ba0d-a86e785fd34a",
        "resourceVersion": "21167",
        "generation": 5,
        "creationTimestamp": "2025-01-02T03:04:05Z",
        "managedFields": _MANAGED_FIELDS,
        **extra,
    }


def _condition(type_: str, status: str, reason: str, message: str = "") -> dict[str, Any]:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": 5,
        "lastTransitionTime": "2025-01-02T03:04:06Z",
    }


def cluster_extension() -> dict[str, Any]:
    return {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterExtension",
        "metadata": _metadata(
            "argocd",
            finalizers=["olm.operatorframework.io/cleanup-unpack-cache"],
            labels={"team": "platform"},
        ),
        "spec": {
            "namespace": "argocd",
            "serviceAccount": {"name": "argocd-installer"},
            "source": {
                "sourceType": "Catalog",
                "catalog": {
                    "packageName": "argocd-operator",
                    "version": ">=0.6.0, <1.0.0",
                    "channels": ["alpha"],
                    "selector": {"matchLabels": {"olm.operatorframework.io/metadata.name": "operatorhubio"}},
                    "upgradeConstraintPolicy": "CatalogProvided",
                },
            },
            "install": {"preflight": {"crdUpgradeSafety": {"enforcement": "Strict"}}},
            "config": {"configType": "Inline", "inline": {"watchNamespace": "argocd", "nested": {"x": None}}},
            "progressDeadlineMinutes": 30,
        },
        "status": {
            "conditions": [
                _condition(
                    "Installed", "True", "Succeeded", "Installed bundle quay.io/x@sha256:ab successfully"
                ),
                _condition("Progressing", "True", "Succeeded", "Desired state reached"),
            ],
            "install": {"bundle": {"name": "argocd-operator.v0.6.0", "version": "0.6.0"}},
            "activeRevisions": [{"name": "argocd-1"}],
        },
    }


def cluster_catalog() -> dict[str, Any]:
    return {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterCatalog",
        "metadata": _metadata(
            "operatorhubio", labels={"olm.operatorframework.io/metadata.name": "operatorhubio"}
        ),
        "spec": {
            "source": {
                "type": "Image",
                "image": {"ref": "quay.io/operatorhubio/catalog:latest", "pollIntervalMinutes": 10},
            },
            "priority": -100,
            "availabilityMode": "Available",
        },
        "status": {
            "conditions": [_condition("Serving", "True", "Available")],
            "resolvedSource": {
                "type": "Image",
                "image": {"ref": "quay.io/operatorhubio/catalog@sha256:" + "a" * 64},
            },
            "urls": {"base": "https://catalogd-service.olmv1-system.svc/catalogs/operatorhubio"},
            "lastUnpacked": "2025-01-02T03:04:07Z",
        },
    }


def cluster_object_set() -> dict[str, Any]:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "controller", "namespace": "my-app", "creationTimestamp": None},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "x:1"}]}}},
        "status": {},
    }
    return {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterObjectSet",
        "metadata": _metadata(
            "my-app-1",
            labels={
                "olm.operatorframework.io/owner-kind": "ClusterExtension",
                "olm.operatorframework.io/owner-name": "my-app",
            },
            ownerReferences=[
                {
                    "apiVersion": "olm.operatorframework.io/v1",
                    "kind": "ClusterExtension",
                    "name": "my-app",
                    "uid": "0f9b6a8e-1111-2222-3333-444455556666",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        ),
        "spec": {
            "revision": 1,
            "lifecycleState": "Active",
            "collisionProtection": "Prevent",
            "phases": [
                {
                    "name": "crds",
                    "collisionProtection": "IfNoController",
                    "objects": [{"ref": {"name": "my-app-1-abc", "namespace": "olmv1-system", "key": "k1"}}],
                },
                {"name": "deploy", "objects": [{"object": deployment, "collisionProtection": "None"}]},
            ],
            "progressDeadlineMinutes": 10,
            "progressionProbes": [
                {
                    "selector": {"type": "GroupKind", "groupKind": {"group": "apps", "kind": "Deployment"}},
                    "assertions": [
                        {"type": "ConditionEqual", "conditionEqual": {"type": "Available", "status": "True"}},
                        {
                            "type": "FieldsEqual",
                            "fieldsEqual": {"fieldA": "spec.replicas", "fieldB": "status.readyReplicas"},
                        },
                    ],
                },
                {
                    "selector": {"type": "Label", "label": {"matchLabels": {"app": "db"}}},
                    "assertions": [
                        {"type": "FieldValue", "fieldValue": {"fieldPath": "status.phase", "value": "Bound"}}
                    ],
                },
            ],
        },
        "status": {
            "conditions": [_condition("Succeeded", "True", "Succeeded", "Revision succeeded rolling out.")],
            "observedPhases": [{"name": "crds", "digest": "sha256:" + "0" * 64}],
        },
    }
