"""Small registry+v1 bundles built in code, for tests of parsing, validators and rendering."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import yaml

from olm import registryv1

ANNOTATIONS = {
    "annotations": {
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
        "operators.operatorframework.io.bundle.package.v1": "sample",
        "operators.operatorframework.io.bundle.channels.v1": "stable,fast",
        "operators.operatorframework.io.bundle.channel.default.v1": "stable",
    }
}


def csv(
    *,
    name: str = "sample.v1.0.0",
    modes: tuple[str, ...] = ("AllNamespaces",),
    deployments: list[dict[str, Any]] | None = None,
    permissions: list[dict[str, Any]] | None = None,
    cluster_permissions: list[dict[str, Any]] | None = None,
    webhooks: list[dict[str, Any]] | None = None,
    owned: list[str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    all_modes = ("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces")
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": name, "annotations": annotations or {"capabilities": "Basic Install"}},
        "spec": {
            "version": "1.0.0",
            "installModes": [{"type": m, "supported": m in modes} for m in all_modes],
            "customresourcedefinitions": {
                "owned": [{"name": n, "kind": "X", "version": "v1"} for n in owned or []]
            },
            "webhookdefinitions": webhooks or [],
            "install": {
                "strategy": "deployment",
                "spec": {
                    "deployments": deployments if deployments is not None else [deployment()],
                    "permissions": permissions
                    if permissions is not None
                    else [{"serviceAccountName": "sample-sa", "rules": [rule("configmaps")]}],
                    "clusterPermissions": cluster_permissions
                    if cluster_permissions is not None
                    else [
                        {"serviceAccountName": "sample-sa", "rules": [rule("widgets", group="example.com")]}
                    ],
                },
            },
        },
    }


def rule(
    resource: str, *, group: str = "", verbs: tuple[str, ...] = ("get", "list", "watch")
) -> dict[str, Any]:
    return {"apiGroups": [group], "resources": [resource], "verbs": list(verbs)}


def deployment(name: str = "sample-controller", **pod: Any) -> dict[str, Any]:
    spec = {
        "containers": [
            {"name": "manager", "image": "example.com/sample:v1", "env": [{"name": "A", "value": "1"}]},
            {"name": "sidecar", "image": "example.com/sidecar:v1"},
        ],
        "serviceAccountName": "sample-sa",
    }
    spec.update(pod)
    return {
        "name": name,
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


def crd(name: str = "widgets.example.com") -> dict[str, Any]:
    plural, group = name.split(".", 1)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": group,
            "names": {"kind": "Widget", "plural": plural},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}
                    },
                }
            ],
        },
    }


def write(
    root: Path, manifests: dict[str, Any], *, annotations: Any = ANNOTATIONS, properties: Any = None
) -> Path:
    """Write a bundle directory; manifest values are objects (YAML) or lists of objects (multi-doc)."""
    (root / "manifests").mkdir(parents=True, exist_ok=True)
    (root / "metadata").mkdir(exist_ok=True)
    if annotations is not None:
        (root / "metadata" / "annotations.yaml").write_text(yaml.safe_dump(annotations))
    if properties is not None:
        (root / "metadata" / "properties.yaml").write_text(yaml.safe_dump(properties))
    for name, content in manifests.items():
        path = root / "manifests" / name
        if name.endswith(".json"):
            path.write_bytes(orjson.dumps(content))
        elif isinstance(content, list):
            path.write_text(yaml.safe_dump_all(content))
        else:
            path.write_text(content if isinstance(content, str) else yaml.safe_dump(content))
    return root


def files(manifests: dict[str, dict[str, Any]], package: str = "sample") -> dict[str, bytes]:
    annotations = copy.deepcopy(ANNOTATIONS)
    annotations["annotations"]["operators.operatorframework.io.bundle.package.v1"] = package
    out = {"metadata/annotations.yaml": yaml.safe_dump(annotations).encode()}
    out.update({f"manifests/{name}": yaml.safe_dump(obj).encode() for name, obj in manifests.items()})
    return out


def make(
    *,
    package: str = "sample",
    crds: list[dict[str, Any]] | None = None,
    others: list[dict[str, Any]] | None = None,
    **csv_args: Any,
) -> registryv1.RegistryV1:
    """A parsed bundle from a CSV built with `csv(**csv_args)`, CRDs and other objects."""
    manifests: dict[str, dict[str, Any]] = {"csv.yaml": csv(**csv_args)}
    for i, obj in enumerate([*(crds if crds is not None else [crd()]), *(others or [])]):
        manifests[f"obj{i}.yaml"] = obj
    return registryv1.parse_bundle(files(manifests, package))
