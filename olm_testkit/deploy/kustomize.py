"""The part of `kustomize build` that OLM's manifests use, nothing else: `resources`, `images`,
and `components` whose `patches` are inline JSON 6902 `add` operations on one named target.

`kubectl apply -k` is what users run; this reads the same kustomization files so the local cluster
applies exactly what they would, without needing kubectl. A kustomization that uses any other
field is refused rather than half-understood.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"
OLM_KUSTOMIZATIONS = (MANIFESTS / "catalogd", MANIFESTS / "operator-controller")
_UNDERSTOOD = frozenset({"apiVersion", "kind", "resources", "images", "components"})
_UNDERSTOOD_IN_COMPONENTS = frozenset({"apiVersion", "kind", "resources", "patches"})
_TARGET_FIELDS = ("group", "version", "kind", "name")


class KustomizeError(ValueError):
    pass


@dataclass(frozen=True, kw_only=True)
class ImageOverride:
    """One `images:` entry: containers whose image is `name` (any tag) get `new_ref` instead."""

    name: str
    new_ref: str

    def as_kustomize(self) -> dict[str, str]:
        """The entry as written in a kustomization.yaml (`newName` plus `newTag` or `digest`)."""
        if "@" in self.new_ref:
            new_name, _, digest = self.new_ref.partition("@")
            return {"name": self.name, "newName": new_name, "digest": digest}
        new_name, tag = split_tag(self.new_ref)
        entry = {"name": self.name, "newName": new_name}
        if tag:
            entry["newTag"] = tag
        return entry


def build(directory: Path, images: Sequence[ImageOverride] = ()) -> list[dict[str, Any]]:
    """The objects of the kustomization in `directory`, with its own and the given image overrides."""
    kustomization = _kustomization(directory, "Kustomization", _UNDERSTOOD)
    objects = _resources(directory, kustomization)
    for component in kustomization.get("components") or ():
        objects = _with_component(directory / component, objects)
    own = [
        ImageOverride(name=entry["name"], new_ref=_ref_of(entry))
        for entry in kustomization.get("images") or ()
    ]
    for obj in objects:
        for container in _containers(obj):
            for override in (*own, *images):
                if split_tag(str(container.get("image", "")))[0] == override.name:
                    container["image"] = override.new_ref
    return objects


def _kustomization(directory: Path, kind: str, understood: frozenset[str]) -> dict[str, Any]:
    kustomization: dict[str, Any] = yaml.safe_load((directory / "kustomization.yaml").read_text())
    unknown = set(kustomization) - understood
    if unknown:
        raise KustomizeError(f"{directory}/kustomization.yaml uses {sorted(unknown)}: not supported here")
    if kustomization.get("kind", "Kustomization") != kind:
        raise KustomizeError(f"{directory}/kustomization.yaml is a {kustomization.get('kind')}, not a {kind}")
    return kustomization


def _resources(directory: Path, kustomization: Mapping[str, Any]) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for resource in kustomization.get("resources") or ():
        path = directory / resource
        objects.extend(build(path) if path.is_dir() else _load(path))
    return objects


def _with_component(directory: Path, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`objects` plus the component's resources, then its patches applied to all of them."""
    component = _kustomization(directory, "Component", _UNDERSTOOD_IN_COMPONENTS)
    objects = [*objects, *_resources(directory, component)]
    for entry in component.get("patches") or ():
        target = entry.get("target") or {}
        if set(target) - set(_TARGET_FIELDS):
            supported = ", ".join(_TARGET_FIELDS)
            raise KustomizeError(f"patch target {target}: only {supported} are supported here")
        matches = [obj for obj in objects if _is_target(obj, target)]
        if len(matches) != 1:
            raise KustomizeError(f"{directory}: patch target {target} matches {len(matches)} objects, not 1")
        for operation in yaml.safe_load(entry["patch"]):
            _add(matches[0], operation, where=str(directory))
    return objects


def _is_target(obj: Mapping[str, Any], target: Mapping[str, str]) -> bool:
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    have = {"group": group, "version": version, "kind": obj.get("kind"), "name": obj["metadata"]["name"]}
    return all(have[key] == value for key, value in target.items())


def _add(obj: dict[str, Any], operation: Mapping[str, Any], *, where: str) -> None:
    """One JSON 6902 `add`; `-` as the last path segment appends to a list."""
    if operation.get("op") != "add":
        raise KustomizeError(f"{where}: patch operation {operation.get('op')!r} is not supported here")
    *parents, last = [part.replace("~1", "/").replace("~0", "~") for part in operation["path"].split("/")[1:]]
    node: Any = obj
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node.insert(len(node) if last == "-" else int(last), operation["value"])
    else:
        node[last] = operation["value"]


def images_in(objects: Sequence[Mapping[str, Any]]) -> set[str]:
    """Every container image the objects name."""
    return {str(container["image"]) for obj in objects for container in _containers(obj)}


def overlay(
    bases: Sequence[Path],
    images: Sequence[ImageOverride],
    *,
    relative_to: Path,
    components: Sequence[Path] = (),
) -> str:
    """A kustomization.yaml that lists `bases` and sets only the images: what a user writes to pick
    the image (and what `make run CLUSTER=kind` applies); plus `components` when given (an opt-in
    such as `manifests/shared-drift-watches`)."""
    document: dict[str, Any] = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(base, relative_to) for base in bases],
        "images": [image.as_kustomize() for image in images],
    }
    if components:
        document["components"] = [os.path.relpath(component, relative_to) for component in components]
    return yaml.safe_dump(document, sort_keys=False)


def _load(path: Path) -> Iterator[dict[str, Any]]:
    for document in yaml.safe_load_all(path.read_text()):
        if document:
            yield document


def _containers(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]


def shipped_image(directories: Sequence[Path] = OLM_KUSTOMIZATIONS) -> str:
    """The one image name (without tag) the kustomizations in `directories` run: what an overlay
    replaces."""
    names = {split_tag(ref)[0] for d in directories for ref in images_in(build(d))}
    if len(names) != 1:
        raise KustomizeError(f"the manifests name {len(names)} images, expected one: {sorted(names)}")
    return names.pop()


def split_tag(image: str) -> tuple[str, str]:
    """`name` and `tag` of `name[:tag]` (a port in the registry host is not a tag)."""
    name, _, digest = image.partition("@")
    if digest:
        return name, ""
    head, _, last = name.rpartition("/")
    if ":" in last:
        last, _, tag = last.partition(":")
        return f"{head}/{last}" if head else last, tag
    return name, ""


def _ref_of(entry: Mapping[str, str]) -> str:
    name = entry.get("newName") or entry["name"]
    if entry.get("digest"):
        return f"{name}@{entry['digest']}"
    return f"{name}:{entry['newTag']}" if entry.get("newTag") else name
