"""Valid objects of the three kinds, and a helper that derives variants from them."""

from __future__ import annotations

import copy
from typing import Any, Final

__all__ = ["DELETE", "cluster_catalog", "cluster_extension", "cluster_object_set", "configmap", "with_"]

DIGEST: Final = "sha256:" + "ab" * 32


class _Delete:
    def __repr__(self) -> str:
        return "DELETE"


DELETE: Final = _Delete()
"""A value for `with_` that removes the key instead of setting it."""


def with_(obj: dict[str, Any], *changes: tuple[str, Any]) -> dict[str, Any]:
    """A deep copy of `obj` with each dotted path set (or removed, for `DELETE`).

    Numeric path parts index lists: `spec.phases.0.name`.
    """
    result = copy.deepcopy(obj)
    for path, value in changes:
        *parents, last = path.split(".")
        node: Any = result
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
        key: Any = int(last) if isinstance(node, list) else last
        if value is DELETE:
            del node[key]
        else:
            node[key] = copy.deepcopy(value)
    return result


def cluster_extension(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterExtension",
        "metadata": {"name": name},
        "spec": {
            "namespace": "argocd",
            "serviceAccount": {"name": "argocd-installer"},
            "source": {"sourceType": "Catalog", "catalog": {"packageName": "argocd-operator"}},
        },
    }


def cluster_catalog(name: str, ref: str = "quay.io/operatorhubio/catalog:latest") -> dict[str, Any]:
    return {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterCatalog",
        "metadata": {"name": name},
        "spec": {"source": {"type": "Image", "image": {"ref": ref}}},
    }


def configmap(name: str = "settings") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "my-app"},
        "data": {"key": "value"},
    }


def cluster_object_set(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterObjectSet",
        "metadata": {"name": name},
        "spec": {
            "revision": 1,
            "lifecycleState": "Active",
            "collisionProtection": "Prevent",
            "phases": [
                {"name": "configuration", "objects": [{"object": configmap()}]},
                {
                    "name": "deploy",
                    "objects": [
                        {"ref": {"name": f"{name}-content", "namespace": "olmv1-system", "key": "k"}}
                    ],
                },
            ],
        },
    }


def probe(selector: dict[str, Any], *assertions: dict[str, Any]) -> dict[str, Any]:
    return {"selector": selector, "assertions": list(assertions)}


GROUP_KIND_SELECTOR: Final = {"type": "GroupKind", "groupKind": {"group": "apps", "kind": "Deployment"}}
CONDITION_EQUAL: Final = {"type": "ConditionEqual", "conditionEqual": {"type": "Available", "status": "True"}}
