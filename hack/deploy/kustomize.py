"""The part of `kustomize build` that OLM's manifests use: `resources` and `images`, nothing else.

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
_UNDERSTOOD = frozenset({"apiVersion", "kind", "resources", "images"})


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
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    unknown = set(kustomization) - _UNDERSTOOD
    if unknown:
        raise KustomizeError(f"{directory}/kustomization.yaml uses {sorted(unknown)}: not supported here")
    objects: list[dict[str, Any]] = []
    for resource in kustomization.get("resources") or ():
        path = directory / resource
        objects.extend(build(path) if path.is_dir() else _load(path))
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


def images_in(objects: Sequence[Mapping[str, Any]]) -> set[str]:
    """Every container image the objects name."""
    return {str(container["image"]) for obj in objects for container in _containers(obj)}


def overlay(bases: Sequence[Path], images: Sequence[ImageOverride], *, relative_to: Path) -> str:
    """A kustomization.yaml that lists `bases` and sets only the images: what a user writes to pick
    the image (and what `make run CLUSTER=kind` applies)."""
    document = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(base, relative_to) for base in bases],
        "images": [image.as_kustomize() for image in images],
    }
    return yaml.safe_dump(document, sort_keys=False)


def _load(path: Path) -> Iterator[dict[str, Any]]:
    for document in yaml.safe_load_all(path.read_text()):
        if document:
            yield document


def _containers(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]


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
