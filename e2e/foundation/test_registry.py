"""Images built and pushed with hack/images come back from the registry by digest, byte for byte."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

from olm_runtime.testing.registry import Registry
from olm_testkit.images.layout import CATALOG_CONFIGS_LABEL, bundle_image, catalog_image
from olm_testkit.images.registry import Reference, RegistryClient


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_catalog_image_round_trips_by_digest(
    registry: Registry, pusher: RegistryClient, tmp_path: Path
) -> None:
    fbc = _write(tmp_path / "fbc", {"pkg/catalog.json": '{"schema":"olm.package","name":"pkg"}\n'})
    image = catalog_image(fbc)
    reference = Reference.parse(f"{registry.host}/catalogs/test:v1")

    digest = pusher.push(image, reference)

    assert digest == image.digest
    assert pusher.manifest("catalogs/test", digest) == image.manifest
    assert pusher.manifest("catalogs/test", "v1") == image.manifest
    manifest = json.loads(image.manifest)
    config = json.loads(pusher.blob("catalogs/test", manifest["config"]["digest"]))
    assert config["config"]["Labels"] == {CATALOG_CONFIGS_LABEL: "/configs"}
    layer = pusher.blob("catalogs/test", manifest["layers"][0]["digest"])
    assert layer == image.layers[0].data
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(layer))) as tar:
        member = tar.extractfile("configs/pkg/catalog.json")
        assert member is not None
        assert member.read() == (fbc / "pkg/catalog.json").read_bytes()


def test_bundle_image_carries_the_bundle_labels(
    registry: Registry, pusher: RegistryClient, tmp_path: Path
) -> None:
    bundle = _write(
        tmp_path / "bundle",
        {
            "manifests/csv.yaml": "kind: ClusterServiceVersion\n",
            "metadata/annotations.yaml": (
                "annotations:\n"
                "  operators.operatorframework.io.bundle.package.v1: demo\n"
                "  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n"
                "  unrelated.example.com/key: ignored\n"
            ),
        },
    )
    image = bundle_image(bundle)
    digest = pusher.push(image, Reference.parse(f"{registry.host}/bundles/demo:v0.1.0"))
    manifest = json.loads(pusher.manifest("bundles/demo", digest))
    config = json.loads(pusher.blob("bundles/demo", manifest["config"]["digest"]))
    assert config["config"]["Labels"] == {
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.package.v1": "demo",
    }
