"""`deploymentConfig`: OLM v0's SubscriptionConfig (minus `selector`) applied to every CSV Deployment.

Rules, as upstream applies them (OLM v0's `overrides/inject`, with upstream's merge-by-name change
for volumes):

- `env`: per container, an entry replaces the variable of the same name, otherwise it is appended;
- `envFrom`, `tolerations`: appended unless an equal entry exists;
- `volumes` (pod) and `volumeMounts` (per container): replace the entry of the same name, else append;
- `resources`: replaces every container's resources; `nodeSelector`: replaces the pod's;
- `affinity`: absent leaves it alone, `{}` erases it, a present sub-field (`nodeAffinity`,
  `podAffinity`, `podAntiAffinity`) replaces that part, an empty one erases that part;
- `annotations`: added to the Deployment and its pod template; existing keys win.

Absent (None) and empty differ, as nil and empty differ in Go: `nodeSelector: {}` clears it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, fields
from typing import Any

from olm.compat import gotypes, k8stypes

__all__ = ["DeploymentConfig", "apply_deployment_config", "parse_deployment_config"]

_TYPES: dict[str, gotypes.GoType] = {
    "nodeSelector": gotypes.Map(k8stypes.STR),
    "tolerations": gotypes.Slice(k8stypes.TOLERATION),
    "resources": k8stypes.RESOURCE_REQUIREMENTS,
    "envFrom": gotypes.Slice(k8stypes.RAW),
    "env": gotypes.Slice(k8stypes.ENV_VAR),
    "volumes": gotypes.Slice(k8stypes.VOLUME),
    "volumeMounts": gotypes.Slice(k8stypes.RAW),
    "affinity": k8stypes.RAW,
    "annotations": gotypes.Map(k8stypes.STR),
}


@dataclass(frozen=True)
class DeploymentConfig:
    """Customisations for the bundle's Deployments; a None field leaves Deployments untouched."""

    node_selector: dict[str, str] | None = None
    tolerations: list[dict[str, Any]] | None = None
    resources: dict[str, Any] | None = None
    env_from: list[dict[str, Any]] | None = None
    env: list[dict[str, Any]] | None = None
    volumes: list[dict[str, Any]] | None = None
    volume_mounts: list[dict[str, Any]] | None = None
    affinity: dict[str, Any] | None = None
    annotations: dict[str, str] | None = None


def _json_name(field_name: str) -> str:
    head, *rest = field_name.split("_")
    return head + "".join(part.title() for part in rest)


def parse_deployment_config(value: dict[str, Any]) -> DeploymentConfig:
    """Decode a `deploymentConfig` object as Go decodes it; raises gotypes.GoTypeError on bad types."""
    kwargs: dict[str, Any] = {}
    for f in fields(DeploymentConfig):
        name = _json_name(f.name)
        raw = value.get(name)
        if raw is not None:
            kwargs[f.name] = gotypes.roundtrip(_TYPES[name], raw, f"deploymentConfig.{name}")
    return DeploymentConfig(**kwargs)


def apply_deployment_config(deployment: dict[str, Any], config: DeploymentConfig | None) -> None:
    """Apply `config` to a rendered Deployment object in place."""
    if config is None:
        return
    pod = deployment["spec"]["template"].setdefault("spec", {})
    containers: list[dict[str, Any]] = pod.get("containers") or []
    for container in containers:
        if config.env:
            _merge_by_name(container.setdefault("env", []), config.env)
        if config.env_from:
            _append_missing(container.setdefault("envFrom", []), config.env_from)
        if config.volume_mounts:
            _merge_by_name(container.setdefault("volumeMounts", []), config.volume_mounts)
        if config.resources is not None:
            container["resources"] = copy.deepcopy(config.resources)
    if config.volumes:
        _merge_by_name(pod.setdefault("volumes", []), config.volumes)
    if config.tolerations:
        _append_missing(pod.setdefault("tolerations", []), config.tolerations)
    if config.node_selector is not None:
        pod["nodeSelector"] = dict(config.node_selector)
    _apply_affinity(pod, config.affinity)
    if config.annotations:
        for metadata in (
            deployment.setdefault("metadata", {}),
            deployment["spec"]["template"].setdefault("metadata", {}),
        ):
            annotations = metadata.setdefault("annotations", {})
            for key, value in config.annotations.items():
                annotations.setdefault(key, value)


def _merge_by_name(existing: list[dict[str, Any]], updates: list[dict[str, Any]]) -> None:
    index = {item.get("name"): i for i, item in enumerate(existing)}
    for update in updates:
        if update.get("name") in index:
            existing[index[update.get("name")]] = copy.deepcopy(update)
        else:
            existing.append(copy.deepcopy(update))


def _append_missing(existing: list[dict[str, Any]], updates: list[dict[str, Any]]) -> None:
    for update in updates:
        if update not in existing:
            existing.append(copy.deepcopy(update))


_PARTS = ("nodeAffinity", "podAffinity", "podAntiAffinity")


def _part_empty(name: str, value: Any) -> bool:
    if not value:
        return True
    if name == "nodeAffinity":
        required = value.get("requiredDuringSchedulingIgnoredDuringExecution")
        required_empty = not required or not required.get("nodeSelectorTerms")
        return required_empty and not value.get("preferredDuringSchedulingIgnoredDuringExecution")
    return not value.get("requiredDuringSchedulingIgnoredDuringExecution") and not value.get(
        "preferredDuringSchedulingIgnoredDuringExecution"
    )


def _apply_affinity(pod: dict[str, Any], affinity: dict[str, Any] | None) -> None:
    if affinity is None:
        return
    if all(affinity.get(part) is None for part in _PARTS):
        pod.pop("affinity", None)
        return
    current = dict(pod.get("affinity") or {})
    for part in _PARTS:
        value = affinity.get(part)
        if value is None:
            continue
        if _part_empty(part, value):
            current.pop(part, None)
        else:
            current[part] = copy.deepcopy(value)
    if all(_part_empty(part, current.get(part)) for part in _PARTS):
        pod.pop("affinity", None)
    else:
        pod["affinity"] = current
