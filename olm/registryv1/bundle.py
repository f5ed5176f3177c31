"""registry+v1 bundles: `metadata/annotations.yaml`, `manifests/`, optional `metadata/properties.yaml`.

`load_bundle(path)` reads an unpacked bundle directory; `parse_bundle(files)` reads the same layout
from a mapping of relative paths to bytes (what an image unpacker holds). The manifests directory
must be flat and hold exactly one ClusterServiceVersion; every other object is a CRD or one of
`others`. Properties from `metadata/properties.yaml` are appended to the CSV's `olm.properties`
annotation, as upstream does, so they reach the rendered Deployments' pod annotations.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from olm.compat import gojson, gotypes, k8stypes, kubeyaml
from olm.registryv1.clusterserviceversion import ClusterServiceVersion, parse_csv

__all__ = [
    "ANNOTATION_CHANNELS",
    "ANNOTATION_DEFAULT_CHANNEL",
    "ANNOTATION_MEDIATYPE",
    "ANNOTATION_PACKAGE",
    "MEDIATYPE_REGISTRY_V1",
    "BundleError",
    "RegistryV1",
    "load_bundle",
    "parse_bundle",
]

ANNOTATION_PACKAGE = "operators.operatorframework.io.bundle.package.v1"
ANNOTATION_CHANNELS = "operators.operatorframework.io.bundle.channels.v1"
ANNOTATION_DEFAULT_CHANNEL = "operators.operatorframework.io.bundle.channel.default.v1"
ANNOTATION_MEDIATYPE = "operators.operatorframework.io.bundle.mediatype.v1"
MEDIATYPE_REGISTRY_V1 = "registry+v1"
PROPERTY_ANNOTATION = "olm.properties"

_MANIFESTS = "manifests"
_ANNOTATIONS_FILE = "metadata/annotations.yaml"
_PROPERTIES_FILE = "metadata/properties.yaml"


class BundleError(ValueError):
    """The bundle is malformed; the message says which file and what is wrong."""


@dataclass(frozen=True)
class RegistryV1:
    """A parsed registry+v1 bundle. CRDs are Go-round-tripped; `others` are kept as read."""

    package_name: str
    csv: ClusterServiceVersion
    crds: tuple[dict[str, Any], ...] = ()
    others: tuple[dict[str, Any], ...] = ()
    channels: tuple[str, ...] = ()
    default_channel: str = ""
    properties: tuple[dict[str, Any], ...] = field(default=())


def load_bundle(root: str | Path) -> RegistryV1:
    """Read an unpacked registry+v1 bundle directory."""
    root = Path(root)
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_dir():
            if rel.startswith(f"{_MANIFESTS}/"):
                raise BundleError(_subdirectory_error(rel))
            continue
        if rel.startswith(f"{_MANIFESTS}/") or rel in (_ANNOTATIONS_FILE, _PROPERTIES_FILE):
            files[rel] = path.read_bytes()
    if not (root / _MANIFESTS).is_dir():
        raise BundleError(f'bundle has no "{_MANIFESTS}" directory')
    return parse_bundle(files)


def _subdirectory_error(rel: str) -> str:
    return (
        f'subdirectories are not allowed within the "{_MANIFESTS}" directory of the bundle image '
        f'filesystem: found "{rel}"'
    )


def parse_bundle(files: Mapping[str, bytes]) -> RegistryV1:
    """Parse a registry+v1 bundle from its files, keyed by slash-separated path relative to the root."""
    annotations = _annotations(files)
    manifests = sorted(p for p in files if p.startswith(f"{_MANIFESTS}/"))
    csvs: list[tuple[str, dict[str, Any]]] = []
    crds: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for path in manifests:
        if posixpath.dirname(path) != _MANIFESTS:
            raise BundleError(_subdirectory_error(posixpath.dirname(path)))
        for obj in _objects(path, files[path]):
            kind = obj.get("kind")
            if kind == "ClusterServiceVersion":
                csvs.append((path, obj))
            elif kind == "CustomResourceDefinition":
                crds.append(_roundtrip_crd(path, obj))
            else:
                others.append(obj)
    if not csvs:
        raise BundleError(f'no ClusterServiceVersion found in "{_MANIFESTS}"')
    if len(csvs) > 1:
        found = ", ".join(f'"{path}"' for path, _ in csvs)
        raise BundleError(f'more than one ClusterServiceVersion found in "{_MANIFESTS}": {found}')
    properties = _properties(files)
    csv_obj = _with_properties(csvs[0][1], properties)
    try:
        csv = parse_csv(csv_obj)
    except ValueError as err:
        raise BundleError(f'error parsing objects in "{csvs[0][0]}": {err}') from err
    channels = tuple(c.strip() for c in annotations.get(ANNOTATION_CHANNELS, "").split(",") if c.strip())
    return RegistryV1(
        package_name=annotations.get(ANNOTATION_PACKAGE, ""),
        csv=csv,
        crds=tuple(crds),
        others=tuple(others),
        channels=channels,
        default_channel=annotations.get(ANNOTATION_DEFAULT_CHANNEL, ""),
        properties=tuple(properties),
    )


def _annotations(files: Mapping[str, bytes]) -> dict[str, str]:
    if _ANNOTATIONS_FILE not in files:
        raise BundleError(f"{_ANNOTATIONS_FILE} not found in bundle")
    docs = _documents(_ANNOTATIONS_FILE, files[_ANNOTATIONS_FILE])
    body = docs[0] if docs else {}
    annotations = body.get("annotations") if isinstance(body, dict) else None
    if not isinstance(annotations, dict):
        raise BundleError(f'{_ANNOTATIONS_FILE} has no "annotations" mapping')
    values = {str(k): str(v) for k, v in annotations.items() if v is not None}
    mediatype = values.get(ANNOTATION_MEDIATYPE, MEDIATYPE_REGISTRY_V1)
    if mediatype != MEDIATYPE_REGISTRY_V1:
        raise BundleError(f'unsupported bundle media type "{mediatype}": only "{MEDIATYPE_REGISTRY_V1}"')
    return values


def _documents(path: str, data: bytes) -> list[Any]:
    try:
        return kubeyaml.load_documents(data, path)
    except (kubeyaml.ManifestYAMLError, UnicodeDecodeError) as err:
        raise BundleError(f'error parsing objects in "{path}": {err}') from err


def _objects(path: str, data: bytes) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for doc in _documents(path, data):
        if not isinstance(doc, dict):
            raise BundleError(f'error parsing objects in "{path}": a document is not an object')
        if isinstance(doc.get("items"), list) and str(doc.get("kind", "")).endswith("List"):
            items = doc["items"]
        else:
            items = [doc]
        for obj in items:
            if not isinstance(obj, dict) or not obj.get("kind"):
                raise BundleError(f"error parsing objects in \"{path}\": Object 'Kind' is missing")
            if not obj.get("apiVersion"):
                raise BundleError(f"error parsing objects in \"{path}\": Object 'apiVersion' is missing")
            out.append(obj)
    return out


def _roundtrip_crd(path: str, obj: dict[str, Any]) -> dict[str, Any]:
    try:
        crd: dict[str, Any] = gotypes.roundtrip(k8stypes.CRD, obj)
    except gotypes.GoTypeError as err:
        raise BundleError(f'error parsing objects in "{path}": CustomResourceDefinition: {err}') from err
    return crd


def _properties(files: Mapping[str, bytes]) -> list[dict[str, Any]]:
    data = files.get(_PROPERTIES_FILE)
    if not data:
        return []
    docs = _documents(_PROPERTIES_FILE, data)
    body = docs[0] if docs else {}
    props = body.get("properties") if isinstance(body, dict) else None
    if props is None:
        return []
    if not isinstance(props, list) or not all(isinstance(p, dict) for p in props):
        raise BundleError(f'failed to unmarshal {_PROPERTIES_FILE}: "properties" must be a list of objects')
    return [{"type": str(p.get("type", "")), "value": p.get("value")} for p in props]


def _with_properties(csv: dict[str, Any], properties: list[dict[str, Any]]) -> dict[str, Any]:
    """Append bundle properties to the CSV's olm.properties annotation (Go-marshalled JSON)."""
    if not properties:
        return csv
    metadata = csv.get("metadata") or {}
    annotations = (metadata.get("annotations") or {}) if isinstance(metadata, dict) else None
    if not isinstance(annotations, dict):
        raise BundleError(
            "failed to unmarshal the ClusterServiceVersion: its metadata and annotations must be objects"
        )
    metadata, annotations = dict(metadata), dict(annotations)
    existing: list[Any] = []
    if PROPERTY_ANNOTATION in annotations:
        try:
            existing = orjson.loads(annotations[PROPERTY_ANNOTATION])
        except orjson.JSONDecodeError as err:
            raise BundleError(
                f"failed to unmarshal csv.metadata.annotations['olm.properties']: {err}"
            ) from err
        if not isinstance(existing, list) or not all(isinstance(p, dict) for p in existing):
            raise BundleError(
                "failed to unmarshal csv.metadata.annotations['olm.properties']: not a list of objects"
            )
        existing = [{"type": p.get("type", ""), "value": p.get("value")} for p in existing]
    merged = [*existing, *({"type": p["type"], "value": _sorted(p["value"])} for p in properties)]
    annotations[PROPERTY_ANNOTATION] = gojson.dumps(merged)
    metadata["annotations"] = annotations
    return {**csv, "metadata": metadata}


def _sorted(value: Any) -> Any:
    """YAML-sourced values reach upstream as Go maps, which marshal with sorted keys."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value
