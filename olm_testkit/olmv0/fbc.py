"""File-Based Catalogs for OLM v0 built from real registry+v1 bundle directories, bundles inline.

v0's catalog operator installs a bundle from the catalog's gRPC answer when that answer carries the
bundle's manifests, and otherwise unpacks the bundle image with a Job (an `InstallPlan` bundle
lookup), which cannot run on kwok's nodes. opm answers with the manifests (the `olm.bundle.object`
properties) only for a bundle whose `image` is empty: its `ListBundles`, which v0's resolver reads,
drops them whenever `image` is set (operator-registry pkg/cache `SendBundles`), and v0 then takes
`bundlePath` for a lookup (operator-lifecycle-manager pkg/controller/registry/resolver
`newOperatorFromBundle`, `ResolveSteps`). So every `olm.bundle` here has `image: ""`, and the image
reference a caller gives (where the same bundle is pushed for OLM v1) is recorded in its
`relatedImages`, where `opm render` of a bundle image puts the image too.

The bundle blobs are what `opm render <bundle directory>` writes (properties `olm.package`,
`olm.gvk` for every version of every CRD and owned APIService, `olm.gvk.required`, the CSV's and
`metadata/properties.yaml`'s own, then one `olm.bundle.object` per manifest: base64 of the object
as Go marshals it); e2e/migration checks them against opm itself. Channels are a plain `replaces`
chain in version order, named by the bundles' `channels.v1` annotation unless a package gives one.
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olm import semver
from olm.compat import gojson, kubeyaml
from olm_testkit.images import realdata

ANNOTATION_PACKAGE = "operators.operatorframework.io.bundle.package.v1"
ANNOTATION_CHANNELS = "operators.operatorframework.io.bundle.channels.v1"
ANNOTATION_DEFAULT_CHANNEL = "operators.operatorframework.io.bundle.channel.default.v1"
PROPERTIES_ANNOTATION = "olm.properties"
CATALOG_FILE = "catalog.json"


class CatalogError(ValueError):
    """The bundles cannot make a catalog this way; the message says which bundle and why."""


@dataclass(frozen=True, kw_only=True)
class CatalogBundle:
    """A registry+v1 bundle directory (`manifests/`, `metadata/annotations.yaml`)."""

    directory: Path
    image: str = ""
    """Where the same bundle is pushed as an image; kept in `relatedImages` (see the module doc)."""


@dataclass(frozen=True, kw_only=True)
class CatalogPackage:
    """The bundles of one package."""

    bundles: tuple[CatalogBundle, ...]
    channel: str | None = None
    """Put every bundle in this channel instead of the ones its annotations name."""
    default_channel: str | None = None
    """The package's default channel; else the one the newest bundle's default-channel annotation
    names among the package's channels, else the only channel."""


@dataclass(frozen=True)
class _Bundle:
    name: str
    package: str
    version: semver.Version
    channels: tuple[str, ...]
    default_channel: str
    blob: dict[str, Any]


def real_package(
    name: str,
    versions: Sequence[str] | None = None,
    *,
    images: Mapping[str, str] | None = None,
    channel: str | None = None,
    default_channel: str | None = None,
) -> CatalogPackage:
    """`bundles/<name>/<version>` of the realdata (every version when `versions` is None), with
    `images[version]` as each one's image reference when given."""
    root = realdata.realdata() / "bundles" / name
    chosen = sorted(p.name for p in root.iterdir()) if versions is None else list(versions)
    bundles = tuple(
        CatalogBundle(directory=realdata.real_bundle(name, version), image=(images or {}).get(version, ""))
        for version in chosen
    )
    return CatalogPackage(bundles=bundles, channel=channel, default_channel=default_channel)


def write_catalog(directory: Path, packages: Iterable[CatalogPackage]) -> Path:
    """Write each package as `<directory>/<package>/catalog.json` (a JSON stream); `directory`."""
    for package in packages:
        blobs = package_blobs(package)
        target = directory / blobs[0]["name"]
        target.mkdir(parents=True, exist_ok=True)
        (target / CATALOG_FILE).write_text("".join(json.dumps(blob) + "\n" for blob in blobs))
    return directory


def package_blobs(package: CatalogPackage) -> list[dict[str, Any]]:
    """The `olm.package`, `olm.channel` and `olm.bundle` blobs of one package."""
    bundles = sorted((_read(bundle) for bundle in package.bundles), key=lambda b: b.version)
    names = {b.package for b in bundles}
    if len(names) != 1:
        raise CatalogError(f"one package at a time: the bundles name {sorted(names)}")
    name = names.pop()
    channels: dict[str, list[str]] = {}
    for bundle in bundles:
        for channel in (package.channel,) if package.channel else bundle.channels:
            channels.setdefault(channel, []).append(bundle.name)
    default = package.default_channel or _default_channel(bundles, channels)
    if default not in channels:
        raise CatalogError(f"{name}: default channel {default!r} is none of {sorted(channels)}")
    return [
        {"schema": "olm.package", "name": name, "defaultChannel": default},
        *(_channel_blob(name, channel, members) for channel, members in sorted(channels.items())),
        *(bundle.blob for bundle in bundles),
    ]


def _default_channel(bundles: Sequence[_Bundle], channels: Mapping[str, list[str]]) -> str:
    # A bundle can name a default channel that only other bundles are in (etcd's clusterwide ones).
    annotated = [b.default_channel for b in bundles if b.default_channel in channels]
    if annotated:
        return annotated[-1]
    if len(channels) == 1:
        return next(iter(channels))
    raise CatalogError(f"{bundles[0].package}: no default channel annotated among {sorted(channels)}")


def _channel_blob(package: str, channel: str, members: list[str]) -> dict[str, Any]:
    entries: list[dict[str, Any]] = [{"name": members[0]}]
    entries += [{"name": name, "replaces": previous} for previous, name in itertools.pairwise(members)]
    return {"schema": "olm.channel", "package": package, "name": channel, "entries": entries}


# --- one bundle, as `opm render` writes it -------------------------------------------------------


def _read(bundle: CatalogBundle) -> _Bundle:
    annotations = _annotations(bundle.directory)
    if (bundle.directory / "metadata" / "dependencies.yaml").exists():
        raise CatalogError(f"{bundle.directory}: dependencies are not supported here")
    objects = _manifests(bundle.directory)
    csvs = [obj for obj in objects if obj.get("kind") == "ClusterServiceVersion"]
    if len(csvs) != 1:
        raise CatalogError(f"{bundle.directory}: {len(csvs)} ClusterServiceVersions, not one")
    csv = csvs[0]
    package = annotations[ANNOTATION_PACKAGE]
    version = str(csv["spec"]["version"])
    blob = {
        "schema": "olm.bundle",
        "name": csv["metadata"]["name"],
        "package": package,
        "image": "",
        "properties": _properties(bundle.directory, package, version, csv, objects),
        "relatedImages": _related_images(csv, bundle.image),
    }
    channels = tuple(c.strip() for c in annotations.get(ANNOTATION_CHANNELS, "").split(",") if c.strip())
    return _Bundle(
        name=csv["metadata"]["name"],
        package=package,
        version=semver.parse_version(version),
        channels=channels,
        default_channel=annotations.get(ANNOTATION_DEFAULT_CHANNEL, ""),
        blob=blob,
    )


def _annotations(directory: Path) -> dict[str, str]:
    document = kubeyaml.load_documents((directory / "metadata" / "annotations.yaml").read_bytes())[0]
    return {str(key): str(value) for key, value in document["annotations"].items()}


def _manifests(directory: Path) -> list[dict[str, Any]]:
    """Every object of `manifests/`, in file name order, as opm reads them (hidden files skipped).
    opm reads one object a file, the first, so a file holding more is refused, not cut short."""
    objects: list[dict[str, Any]] = []
    for path in sorted((directory / "manifests").iterdir()):
        if path.is_file() and not path.name.startswith("."):
            documents = [doc for doc in kubeyaml.load_documents(path.read_bytes(), str(path)) if doc]
            if len(documents) != 1:
                raise CatalogError(f"{path}: {len(documents)} objects; opm reads one object a file")
            objects += documents
    return objects


def _property(type_: str, value: Any, *, sort_keys: bool = False) -> tuple[str, str, Any]:
    """(type, the value's bytes as Go marshals them, which opm sorts by, the value)."""
    return (type_, gojson.dumps(value, sort_keys=sort_keys), value)


def _properties(
    directory: Path, package: str, version: str, csv: dict[str, Any], objects: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    found = [_property("olm.package", {"packageName": package, "version": version})]
    found += [_property("olm.gvk", gvk) for gvk in _provided(csv, objects)]
    found += [_property("olm.gvk.required", gvk) for gvk in _required(csv)]
    found += [_property(p["type"], p["value"]) for p in _declared(csv)]
    found += [_property(p["type"], p["value"], sort_keys=True) for p in _properties_file(directory)]
    unique = sorted({(t, raw): value for t, raw, value in found}.items())
    # opm sorts by type and value, then moves the objects after the rest.
    objects_sorted = sorted(_property("olm.bundle.object", _object_value(obj)) for obj in objects)
    return [{"type": t, "value": value} for (t, _), value in unique] + [
        {"type": t, "value": value} for t, _, value in objects_sorted
    ]


def _object_value(obj: dict[str, Any]) -> dict[str, str]:
    return {"data": base64.b64encode(gojson.dumps(obj, sort_keys=True).encode()).decode()}


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "kind": kind, "version": version}


def _provided(csv: dict[str, Any], objects: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Every version of every CRD among the manifests, and the CSV's owned APIServices."""
    provided = [
        _gvk(crd["spec"]["group"], version["name"], crd["spec"]["names"]["kind"])
        for crd in objects
        if crd.get("kind") == "CustomResourceDefinition"
        for version in crd["spec"].get("versions") or []
    ]
    apis = (csv["spec"].get("apiservicedefinitions") or {}).get("owned") or []
    return provided + [_gvk(api["group"], api["version"], api["kind"]) for api in apis]


def _required(csv: dict[str, Any]) -> list[dict[str, str]]:
    crds = (csv["spec"].get("customresourcedefinitions") or {}).get("required") or []
    apis = (csv["spec"].get("apiservicedefinitions") or {}).get("required") or []
    return [_gvk(crd["name"].split(".", 1)[1], crd["version"], crd["kind"]) for crd in crds] + [
        _gvk(api["group"], api["version"], api["kind"]) for api in apis
    ]


def _declared(csv: dict[str, Any]) -> list[dict[str, Any]]:
    """The CSV's own `olm.properties` annotation (a JSON list of properties)."""
    raw = (csv["metadata"].get("annotations") or {}).get(PROPERTIES_ANNOTATION)
    return list(json.loads(raw)) if raw else []


def _properties_file(directory: Path) -> list[dict[str, Any]]:
    path = directory / "metadata" / "properties.yaml"
    if not path.exists():
        return []
    return list(kubeyaml.load_documents(path.read_bytes(), str(path))[0].get("properties") or [])


def _related_images(csv: dict[str, Any], image: str) -> list[dict[str, str]]:
    """The CSV's relatedImages, then `image` and the images of its Deployments' containers where
    not listed yet, sorted by image (as `opm render` of a bundle image lists them)."""
    related = [
        {"name": str(r.get("name") or ""), "image": r["image"]}
        for r in csv["spec"].get("relatedImages") or []
    ]
    seen = {r["image"] for r in related}
    deployments = ((csv["spec"].get("install") or {}).get("spec") or {}).get("deployments") or []
    pod_specs = [d["spec"]["template"]["spec"] for d in deployments]
    candidates = [image] if image else []
    candidates += [
        c["image"] for spec in pod_specs for c in (*spec.get("initContainers", []), *spec["containers"])
    ]
    for candidate in candidates:
        if candidate not in seen:
            related.append({"name": "", "image": candidate})
            seen.add(candidate)
    return sorted(related, key=lambda r: r["image"])
