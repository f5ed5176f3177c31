"""Publish the real catalogs and bundles of `shared/realdata` into a local registry.

The data is read, never edited: each catalog is copied into a temporary FBC directory (as a JSON
stream, read with `olm.fbc`, so YAML means what it means to Kubernetes), its bundle image
references are rewritten there, and the copy is pushed as a catalog image.

Bundle image references are rewritten so that nothing ever reaches the internet:

- a bundle whose directory is here is built (`layout.bundle_image`) and pushed by digest; its
  `image` becomes that digest reference in the local registry;
- a bundle that is not here keeps its place in the graph, but its `image` becomes a reference in
  the local registry that was never pushed (`unpublished_ref`), so pulling it fails with "not
  found" rather than fetching from the public registry.

Community catalog (`catalogs/community-operators-prod-v4.20/<package>/catalog.yaml`): bundles are
found through `e2e-catalog-to-bundle-map.json` (bundle name to `bundle_dir`, checked against the
catalog's image); they are pushed to `<host>/<prefix>/<package>-bundle`.

Upstream fixture catalog (`catalogs/upstream-fixture-operator-controller-e2e-test-catalog/<v1|v2>`):
an image `<registry>/bundles/registry-v1/<name>:<tag>` is the directory
`upstream-fixtures/operator-controller-e2e-bundles/<name>/<tag>`, pushed to `<host>/<prefix>/<name>`.
Several bundles share one image there on purpose (test-operator 1.0.0, 1.0.1, 1.0.4, 1.3.0), and
so share one pushed digest. Only images of the registry whose first DNS label is
`docker-registry` are pushed: upstream's `mirrored-registry` and `dynamic-registry` hosts exist
only through registry mirror configuration, so their bundles get unpublished references
(`<host>/<prefix>/<label>/<name>:<tag>`) that a mirror test can point somewhere.

Images are built once per bundle directory and pushed once per repository and digest in a
process; the registry dedupes blobs between repositories.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import orjson
import yaml

from olm import fbc
from olm.pipeline.catalogs import PackageContent, parse_lines
from olm_testkit.images import layout
from olm_testkit.images.registry import Reference

REALDATA = Path(__file__).resolve().parents[2].parent / "shared" / "realdata"
"""The checkout has `shared/` beside it: `<repo>/../shared/realdata`."""
COMMUNITY_CATALOG = Path("catalogs/community-operators-prod-v4.20")
COMMUNITY_CATALOG_DIR = REALDATA / COMMUNITY_CATALOG
"""The community catalog's directory, one folder per package."""
BUNDLE_MAP = Path("e2e-catalog-to-bundle-map.json")
FIXTURE_CATALOG = Path("catalogs/upstream-fixture-operator-controller-e2e-test-catalog")
FIXTURE_BUNDLES = Path("upstream-fixtures/operator-controller-e2e-bundles")
FIXTURE_PUSHED_REGISTRY = "docker-registry"
"""The first DNS label of the fixture catalog's one real registry; other hosts are mirrors."""
_FIXTURE_IMAGE = re.compile(r"^(?P<host>[^/]+)/bundles/registry-v1/(?P<name>[^/:@]+):(?P<tag>[\w][\w.-]*)$")
_TAG_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


class Pusher(Protocol):
    """What publishing needs of `registry.RegistryClient`."""

    def push(self, image: layout.Image, reference: Reference) -> str: ...


def realdata() -> Path:
    """The realdata directory, or a clear error naming where it was expected."""
    if not REALDATA.is_dir():
        raise FileNotFoundError(
            f"{REALDATA} is missing: the real catalogs and bundles live in `shared/realdata` "
            "beside the repository checkout"
        )
    return REALDATA


@dataclass(frozen=True, kw_only=True)
class PublishedCatalog:
    ref: str
    """The catalog image by tag: `<host>/<prefix>/catalog:<tag>`."""
    digest_ref: str
    """The same image by digest (what a ClusterCatalog resolves the tag to)."""
    bundles: Mapping[str, str]
    """Every `olm.bundle` name to its image reference in the local registry."""
    unpublished: frozenset[str]
    """Bundle names whose reference was never pushed (pulling them fails)."""
    directory: Path
    """The rewritten FBC that was pushed (a temporary directory kept for the process)."""


# --- pure parts: reference rewriting ------------------------------------------------------------


def unpublished_ref(host: str, repository: str, bundle_name: str) -> str:
    """A reference in the local registry that publishing never pushes: the tag is the bundle's
    name made tag-safe (at most 128 characters), in a repository marked `-unpublished`."""
    tag = _TAG_UNSAFE.sub("_", bundle_name).lstrip(".-")[:128] or "unpublished"
    return f"{host}/{repository}-unpublished:{tag}"


def fixture_source(image: str) -> tuple[str, str, str] | None:
    """`(registry label, bundle name, tag)` of an upstream fixture image reference, else None."""
    match = _FIXTURE_IMAGE.match(image)
    if match is None:
        return None
    return match["host"].split(".", 1)[0].split(":", 1)[0], match["name"], match["tag"]


def rewrite_bundle_images(metas: Iterable[fbc.Meta], new_image: Callable[[str, str], str]) -> list[Any]:
    """The catalog's objects with each `olm.bundle`'s `image` replaced by `new_image(name, image)`;
    other objects are unchanged."""
    objects = []
    for meta in metas:
        obj = orjson.loads(meta.blob)
        if meta.schema == fbc.SCHEMA_BUNDLE:
            obj["image"] = new_image(meta.name, str(obj.get("image") or ""))
        objects.append(obj)
    return objects


# --- building and pushing -----------------------------------------------------------------------

_images: dict[Path, layout.Image] = {}
_pushed: set[tuple[str, str, str]] = set()
_lock = threading.Lock()


def _bundle_image(bundle_dir: Path) -> layout.Image:
    key = bundle_dir.resolve()
    with _lock:
        image = _images.get(key)
    if image is None:
        image = layout.bundle_image(key)
        with _lock:
            _images[key] = image
    return image


def push_bundle(pusher: Pusher, host: str, repository: str, bundle_dir: Path) -> str:
    """Build `bundle_dir` and push it by digest to `<host>/<repository>`; the digest reference.

    Cheap the second time: the image is built once per directory and pushed once per repository
    and digest in this process."""
    image = _bundle_image(bundle_dir)
    key = (host, repository, image.digest)
    with _lock:
        done = key in _pushed
    if not done:
        pusher.push(image, Reference(host=host, repository=repository, digest=image.digest))
        with _lock:
            _pushed.add(key)
    return f"{host}/{repository}@{image.digest}"


def _write_stream(directory: Path, objects: Sequence[Any]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "catalog.json").open("wb") as handle:
        for obj in objects:
            handle.write(orjson.dumps(obj) + b"\n")


@functools.cache
def _scratch_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="olm-testkit-"))
    atexit.register(_remove_tree, root)
    return root


def _scratch(prefix: str) -> Path:
    """A new directory kept for the life of the process (a failing test can point at the catalog it
    published) and removed with every other one at its exit, so test sessions do not fill `/tmp`."""
    with _lock:
        root = _scratch_root()
    return Path(tempfile.mkdtemp(prefix=prefix, dir=root))


def _remove_tree(root: Path) -> None:
    # Bundles copied from the read-only realdata keep its modes: a directory must be made writable
    # again before its entries can go (root needs no such thing; other users do).
    for directory, _, _ in os.walk(root):
        os.chmod(directory, 0o700)
    shutil.rmtree(root, ignore_errors=True)


def _workdir() -> Path:
    return _scratch("realdata-fbc-")


@dataclass
class _Catalog:
    """A catalog being written to a work directory, then pushed as `<host>/<prefix>/catalog`."""

    pusher: Pusher
    host: str
    prefix: str
    directory: Path = field(default_factory=_workdir)
    bundles: dict[str, str] = field(default_factory=dict)
    """Bundle name to the image reference the catalog gives it."""
    unpublished: set[str] = field(default_factory=set)
    """Bundles whose reference was never pushed."""

    def add_custom(self, custom: CustomPackage) -> None:
        """Write `custom` as a package of one channel, pushing each of its bundles."""
        objects: list[dict[str, Any]] = [
            {"schema": fbc.SCHEMA_PACKAGE, "name": custom.name, "defaultChannel": custom.channel}
        ]
        entries: list[dict[str, Any]] = []
        for item in custom.bundles:
            name = custom.bundle_name(item.version)
            bundle_dir = item.source
            if (
                item.edit_crd is not None
                or item.bundle_properties
                or item.version != _csv_version(item.source)
            ):
                bundle_dir = _derive(item, custom.name, name, _scratch("bundle-") / "b")
            ref = push_bundle(self.pusher, self.host, f"{self.prefix}/{custom.name}-bundle", bundle_dir)
            self.bundles[name] = ref
            package = {"packageName": custom.name, "version": item.version}
            objects.append(
                {
                    "schema": fbc.SCHEMA_BUNDLE,
                    "name": name,
                    "package": custom.name,
                    "image": ref,
                    "properties": [{"type": "olm.package", "value": package}, *item.properties],
                }
            )
            entry: dict[str, Any] = {"name": name}
            if item.replaces:
                entry["replaces"] = item.replaces
            if item.skips:
                entry["skips"] = list(item.skips)
            if item.skip_range:
                entry["skipRange"] = item.skip_range
            entries.append(entry)
        objects.append(
            {"schema": fbc.SCHEMA_CHANNEL, "name": custom.channel, "package": custom.name, "entries": entries}
        )
        _write_stream(self.directory / custom.name, objects)

    def push(self, tag: str) -> PublishedCatalog:
        reference = Reference(host=self.host, repository=f"{self.prefix}/catalog", tag=tag)
        digest = self.pusher.push(layout.catalog_image(self.directory), reference)
        return PublishedCatalog(
            ref=str(reference),
            digest_ref=f"{self.host}/{reference.repository}@{digest}",
            bundles=dict(self.bundles),
            unpublished=frozenset(self.unpublished),
            directory=self.directory,
        )


# --- community catalog --------------------------------------------------------------------------


def publish_community_catalog(
    pusher: Pusher,
    host: str,
    *,
    packages: Sequence[str],
    repository_prefix: str,
    tag: str = "latest",
    extra: Sequence[CustomPackage] = (),
) -> PublishedCatalog:
    """Publish the chosen packages of the community catalog (and `extra` custom packages, for
    real bundles whose package has no catalog here) as one catalog image."""
    root = realdata()
    bundle_map = json.loads((root / BUNDLE_MAP).read_text())
    catalog = _Catalog(pusher, host, repository_prefix)
    for package in packages:
        source = root / COMMUNITY_CATALOG / package
        if not source.is_dir():
            raise FileNotFoundError(f"package {package!r} has no catalog in {root / COMMUNITY_CATALOG}")
        local = (bundle_map.get(package) or {}).get("map") or {}
        repository = f"{repository_prefix}/{package}-bundle"

        def new_image(
            name: str, image: str, local: Mapping[str, Any] = local, repository: str = repository
        ) -> str:
            entry = local.get(name)
            # The map names the image it was made for; a catalog that moved on is not that bundle.
            if entry is not None and entry.get("image") == image:
                ref = push_bundle(pusher, host, repository, root / entry["bundle_dir"])
            else:
                ref = unpublished_ref(host, repository, name)
                catalog.unpublished.add(name)
            catalog.bundles[name] = ref
            return ref

        _write_stream(catalog.directory / package, rewrite_bundle_images(fbc.iter_metas(source), new_image))
    for custom in extra:
        catalog.add_custom(custom)
    return catalog.push(tag)


# --- upstream fixture catalog -------------------------------------------------------------------


def publish_fixture_catalog(
    pusher: Pusher, host: str, *, version: Literal["v1", "v2"], repository_prefix: str, tag: str = "latest"
) -> PublishedCatalog:
    """Publish upstream's e2e test catalog `v1` or `v2` with its bundles (see the module doc)."""
    root = realdata()
    source = root / FIXTURE_CATALOG / version / "configs"
    catalog = _Catalog(pusher, host, repository_prefix)

    def new_image(name: str, image: str) -> str:
        parsed = fixture_source(image)
        if parsed is None:
            raise ValueError(f"bundle {name}: {image!r} is not a fixture image reference")
        label, bundle, bundle_tag = parsed
        bundle_dir = root / FIXTURE_BUNDLES / bundle / bundle_tag
        if label == FIXTURE_PUSHED_REGISTRY and bundle_dir.is_dir():
            ref = push_bundle(pusher, host, f"{repository_prefix}/{bundle}", bundle_dir)
        else:
            repository = f"{repository_prefix}/{label}/{bundle}"
            ref = f"{host}/{repository}:{bundle_tag}"
            catalog.unpublished.add(name)
        catalog.bundles[name] = ref
        return ref

    _write_stream(catalog.directory, rewrite_bundle_images(fbc.iter_metas(source), new_image))
    return catalog.push(tag)


# --- custom catalogs ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CustomBundle:
    """One version of a custom package, built from a real registry+v1 bundle directory.

    When `version` differs from the CSV's, or `edit_crd` or `bundle_properties` is given, a copy of
    the bundle is changed: the CSV's `spec.version` and name (`<csv base>.v<version>`), each CRD
    passed to `edit_crd` (which changes the decoded object in place), and `metadata/properties.yaml`."""

    version: str
    source: Path
    replaces: str | None = None
    """A bundle name of the same package."""
    skips: tuple[str, ...] = ()
    skip_range: str | None = None
    edit_crd: Callable[[dict[str, Any]], None] | None = None
    properties: tuple[dict[str, Any], ...] = ()
    """More properties of its catalog entry (after `olm.package`)."""
    bundle_properties: tuple[dict[str, Any], ...] = ()
    """Properties written to the bundle's own `metadata/properties.yaml`."""


@dataclass(frozen=True, kw_only=True)
class CustomPackage:
    name: str
    bundles: tuple[CustomBundle, ...]
    channel: str = "stable"
    """One channel holding every bundle, in the given order; the package's default channel."""
    bundle_prefix: str | None = None
    """Bundle names are `<bundle_prefix>.v<version>`; defaults to the package name."""

    def bundle_name(self, version: str) -> str:
        return f"{self.bundle_prefix or self.name}.v{version}"


def _load_all(path: Path) -> list[Any]:
    # Kubernetes semantics: a manifest may hold a bare `=` that PyYAML's safe loader rejects.
    documents = yaml.load_all(path.read_bytes(), Loader=fbc.KubernetesLoader)
    return [document for document in documents if document is not None]


def _derive(custom: CustomBundle, package: str, bundle_name: str, into: Path) -> Path:
    """A copy of `custom.source` with the version, package and CRDs changed; written as JSON
    (which is YAML), so no YAML emitter has to reproduce Kubernetes' reading of the source."""
    shutil.copytree(custom.source, into)
    for path in sorted((into / "manifests").iterdir()):
        if path.suffix not in (".yaml", ".yml", ".json"):
            continue
        documents = _load_all(path)
        for document in documents:
            kind = document.get("kind") if isinstance(document, dict) else None
            if kind == "ClusterServiceVersion":
                document["metadata"]["name"] = bundle_name
                document.setdefault("spec", {})["version"] = custom.version
                for key in ("replaces", "skips"):
                    document["spec"].pop(key, None)  # the catalog's graph is the truth
            elif kind == "CustomResourceDefinition" and custom.edit_crd is not None:
                custom.edit_crd(document)
        path.write_text("\n---\n".join(json.dumps(document) for document in documents) + "\n")
    annotations_file = into / "metadata" / "annotations.yaml"
    annotations = yaml.load(annotations_file.read_bytes(), Loader=fbc.KubernetesLoader)
    annotations["annotations"][f"{layout.BUNDLE_LABEL_PREFIX}package.v1"] = package
    annotations_file.write_text(json.dumps(annotations))
    if custom.bundle_properties:
        properties_file = into / "metadata" / "properties.yaml"
        properties_file.write_text(json.dumps({"properties": list(custom.bundle_properties)}))
    return into


def _csv_version(bundle_dir: Path) -> str | None:
    for path in sorted((bundle_dir / "manifests").iterdir()):
        if not path.name.endswith(".clusterserviceversion.yaml"):
            continue
        for document in _load_all(path):
            if isinstance(document, dict) and document.get("kind") == "ClusterServiceVersion":
                return str((document.get("spec") or {}).get("version"))
    return None


def publish_custom_catalog(
    pusher: Pusher,
    host: str,
    *,
    packages: Sequence[CustomPackage],
    repository_prefix: str,
    tag: str = "latest",
) -> PublishedCatalog:
    """A small catalog of custom packages (for upgrade tests), every bundle pushed."""
    catalog = _Catalog(pusher, host, repository_prefix)
    for package in packages:
        catalog.add_custom(package)
    return catalog.push(tag)


def real_bundle(package: str, version: str) -> Path:
    """`bundles/<package>/<version>` of the realdata, checked to exist."""
    path = realdata() / "bundles" / package / version
    if not path.is_dir():
        raise FileNotFoundError(f"no real bundle {package} {version} at {path}")
    return path


def read_package(directory: Path, package: str, catalog: str = "community-operators") -> PackageContent:
    """One package of a catalog directory, parsed as catalogd serves it and the resolver reads it."""
    blobs = [meta.blob for meta in fbc.iter_metas(directory / package)]
    return parse_lines(catalog, package, blobs)
