"""Workloads that really run on the real nodes: a ClusterObjectSet of one busybox Deployment whose
container is Ready while a file exists, applied as a cluster-admin ServiceAccount of its namespace.
"""

from __future__ import annotations

from typing import Any

from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.operator_controller.clusterobjectset import identity

READY_FILE = "/tmp/ready"
INSTALLER = "installer"
"""The ServiceAccount a namespace's revisions apply as."""


def deployment(name: str, namespace: str, image: str) -> dict[str, Any]:
    """A Deployment whose one container is Ready while `READY_FILE` exists (it creates it)."""
    labels = {"app": name}
    container = {
        "name": "main",
        "image": image,
        "command": ["sh", "-c", f"touch {READY_FILE} && exec sleep 86400"],
        "readinessProbe": {
            "exec": {"command": ["test", "-f", READY_FILE]},
            "periodSeconds": 1,
            "failureThreshold": 1,
        },
        "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True, "runAsUser": 65532},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"terminationGracePeriodSeconds": 1, "containers": [container]},
            },
        },
    }


def revision(
    name: str, namespace: str, workload: dict[str, Any], *, progress_deadline_minutes: int | None = None
) -> dict[str, Any]:
    """A first, active revision of `workload`, applied as `INSTALLER` of `namespace`."""
    spec: dict[str, Any] = {
        "revision": 1,
        "lifecycleState": "Active",
        "collisionProtection": "Prevent",
        "phases": [{"name": "deploy", "objects": [{"object": workload}]}],
    }
    if progress_deadline_minutes is not None:
        spec["progressDeadlineMinutes"] = progress_deadline_minutes
    return {
        "apiVersion": CLUSTER_OBJECT_SET.api_version,
        "kind": CLUSTER_OBJECT_SET.kind,
        "metadata": {
            "name": name,
            "annotations": {
                identity.SERVICE_ACCOUNT_NAME: INSTALLER,
                identity.SERVICE_ACCOUNT_NAMESPACE: namespace,
            },
        },
        "spec": spec,
    }
