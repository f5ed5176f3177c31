"""The pure parts of publishing realdata: reference rewriting and the fixture mapping rule, then
publishing through a recording pusher (the seam is `Pusher.push`; no registry is needed)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from olm import fbc
from olm_testkit.images import layout, realdata
from olm_testkit.images.registry import Reference

pytestmark = pytest.mark.skipif(
    not realdata.REALDATA.is_dir(), reason="shared/realdata is not beside the repo"
)


@dataclass
class Recorder:
    """Keeps what was pushed, as a registry would: by repository and digest or tag."""

    pushed: list[tuple[str, str]] = field(default_factory=list)
    images: dict[str, layout.Image] = field(default_factory=dict)

    def push(self, image: layout.Image, reference: Reference) -> str:
        self.pushed.append((reference.repository, reference.digest or f":{reference.tag}"))
        self.images[image.digest] = image
        return image.digest


def fresh_host() -> str:
    # The push cache is per process and keyed by host: a new host starts cold.
    return f"registry-{uuid.uuid4().hex[:6]}.invalid:5000"


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        pytest.param(
            "docker-registry.ns.svc.cluster.local:5000/bundles/registry-v1/test-operator:v1.0.0",
            ("docker-registry", "test-operator", "v1.0.0"),
            id="pushed-registry",
        ),
        pytest.param(
            "mirrored-registry.ns.svc.cluster.local:5000/bundles/registry-v1/test-operator:v1.0.0",
            ("mirrored-registry", "test-operator", "v1.0.0"),
            id="mirror-host",
        ),
        pytest.param("example.test/other/path:v1", None, id="not-a-fixture-image"),
        pytest.param("example.test/bundles/registry-v1/x@sha256:00", None, id="digest-not-a-tag"),
    ],
)
def test_fixture_source_parses_the_mapping_rule(image: str, expected: tuple[str, str, str] | None) -> None:
    assert realdata.fixture_source(image) == expected


@pytest.mark.parametrize(
    ("name", "tag"),
    [
        pytest.param("kube-green.v0.7.0", "kube-green.v0.7.0", id="plain"),
        pytest.param("sailoperator.v1.0.0+build/x", "sailoperator.v1.0.0_build_x", id="unsafe-characters"),
        pytest.param("-x", "x", id="no-leading-dash"),
        pytest.param("a" * 200, "a" * 128, id="at-most-128"),
    ],
)
def test_unpublished_ref_is_a_valid_local_tag(name: str, tag: str) -> None:
    assert realdata.unpublished_ref("h:1", "p/pkg-bundle", name) == f"h:1/p/pkg-bundle-unpublished:{tag}"


def test_rewrite_touches_only_bundle_images() -> None:
    stream = io.BytesIO(
        b"schema: olm.package\nname: p\n---\nschema: olm.bundle\nname: p.v1\npackage: p\nimage: old\n"
        b"properties: [{type: olm.package, value: {packageName: p, version: '1'}}]\n"
    )
    objects = realdata.rewrite_bundle_images(fbc.iter_stream(stream, "c.yaml"), lambda n, i: f"{n}|{i}")
    assert objects[0] == {"schema": "olm.package", "name": "p"}
    assert objects[1]["image"] == "p.v1|old"
    assert objects[1]["properties"][0]["value"]["version"] == "1"


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(root)).encode() + path.read_bytes())
    return digest.hexdigest()


def catalog_objects(directory: Path) -> list[Any]:
    return [orjson.loads(meta.blob) for meta in fbc.iter_metas(directory)]


def test_fixture_v1_maps_images_to_bundle_directories() -> None:
    source = realdata.REALDATA / realdata.FIXTURE_CATALOG
    before = tree_digest(source)
    pusher, host = Recorder(), fresh_host()
    published = realdata.publish_fixture_catalog(pusher, host, version="v1", repository_prefix="fx")

    assert tree_digest(source) == before, "the source catalog must never be edited"
    shared = {
        published.bundles[n] for n in ("test-operator.1.0.0", "test-operator.1.0.1", "test-operator.1.0.4")
    }
    assert len(shared) == 1
    assert next(iter(shared)).startswith(f"{host}/fx/test-operator@sha256:")
    assert published.unpublished == {"test-mirrored-operator.1.2.0", "dynamic-operator.1.2.0"}
    assert (
        published.bundles["test-mirrored-operator.1.2.0"]
        == f"{host}/fx/mirrored-registry/test-operator:v1.0.0"
    )
    # One push per distinct image, the catalog last, by tag.
    assert pusher.pushed[-1] == ("fx/catalog", ":latest")
    assert len(pusher.pushed) == len(set(pusher.pushed))
    images = {
        o["name"]: o["image"] for o in catalog_objects(published.directory) if o["schema"] == "olm.bundle"
    }
    assert images == dict(published.bundles)


def test_community_catalog_rewrites_available_and_missing_bundles() -> None:
    pusher, host = Recorder(), fresh_host()
    published = realdata.publish_community_catalog(
        pusher, host, packages=["cat-facts-operator", "sailoperator"], repository_prefix="c"
    )
    mapping = json.loads((realdata.REALDATA / realdata.BUNDLE_MAP).read_text())
    local = set(mapping["cat-facts-operator"]["map"]) | set(mapping["sailoperator"]["map"])
    assert set(published.bundles) - published.unpublished == local
    assert all(
        published.bundles[n].startswith(f"{host}/c/sailoperator-bundle-unpublished:")
        for n in published.unpublished
    )
    pushes = len(pusher.pushed)

    realdata.publish_community_catalog(pusher, host, packages=["cat-facts-operator"], repository_prefix="c")
    assert pusher.pushed[pushes:] == [("c/catalog", ":latest")], "bundles already pushed are not pushed again"


def test_custom_bundle_derived_with_kubernetes_yaml_semantics() -> None:
    # prometheus 0.56.3 holds an enum item written as a bare `=`, which PyYAML's safe loader rejects.
    pusher, host = Recorder(), fresh_host()
    source = realdata.real_bundle("prometheus", "0.56.3")
    marked: list[str] = []

    def edit(crd: dict[str, Any]) -> None:
        crd.setdefault("metadata", {}).setdefault("annotations", {})["e2e/edited"] = "yes"
        marked.append(crd["metadata"]["name"])

    package = realdata.CustomPackage(
        name="prom",
        bundles=(
            realdata.CustomBundle(version="0.56.3", source=source),
            realdata.CustomBundle(version="0.56.4", source=source, replaces="prom.v0.56.3", edit_crd=edit),
        ),
    )
    published = realdata.publish_custom_catalog(pusher, host, packages=[package], repository_prefix="u")
    assert set(published.bundles) == {"prom.v0.56.3", "prom.v0.56.4"}
    assert marked, "every CRD passes through edit_crd"
    derived = pusher.images[published.bundles["prom.v0.56.4"].rsplit("@", 1)[1]]
    files = layout_files(derived)
    csv = next(v for k, v in files.items() if k.endswith(".clusterserviceversion.yaml"))
    assert yaml.safe_load(csv)["spec"]["version"] == "0.56.4"
    alertmanager = next(v for k, v in files.items() if "alertmanagerconfigs" in k)
    assert '"="' in alertmanager.decode()
    channel = next(o for o in catalog_objects(published.directory) if o["schema"] == "olm.channel")
    assert channel["entries"] == [
        {"name": "prom.v0.56.3"},
        {"name": "prom.v0.56.4", "replaces": "prom.v0.56.3"},
    ]


def layout_files(image: layout.Image) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(image.layers[0].data))) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
