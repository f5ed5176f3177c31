"""Image layout: reproducible layers, the right labels, safe inputs."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest

from olm_testkit.images.layout import CATALOG_CONFIGS_LABEL, bundle_image, catalog_image
from olm_testkit.images.registry import Reference


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_same_directory_gives_the_same_digest(tmp_path: Path) -> None:
    first = _tree(tmp_path / "a", {"p/index.json": "{}", "q.yaml": "x: 1"})
    second = _tree(tmp_path / "b", {"q.yaml": "x: 1", "p/index.json": "{}"})
    (second / "q.yaml").touch()  # a different mtime must not change the layer
    assert catalog_image(first).digest == catalog_image(second).digest


def test_catalog_layer_places_content_under_configs_with_fixed_owner_and_mode(tmp_path: Path) -> None:
    image = catalog_image(_tree(tmp_path / "fbc", {"pkg/catalog.json": "{}"}))
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(image.layers[0].data))) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert sorted(members) == ["configs", "configs/pkg", "configs/pkg/catalog.json"]
    assert all(m.uid == 0 and m.mtime == 0 for m in members.values())
    assert members["configs/pkg/catalog.json"].mode == 0o644
    config = json.loads(image.config.data)
    assert config["config"]["Labels"] == {CATALOG_CONFIGS_LABEL: "/configs"}


def test_bundle_without_annotations_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"metadata/annotations\.yaml is missing"):
        bundle_image(_tree(tmp_path / "b", {"manifests/csv.yaml": "kind: ClusterServiceVersion"}))


def test_symlinks_are_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path / "fbc", {"a.json": "{}"})
    (root / "link.json").symlink_to(root / "a.json")
    with pytest.raises(ValueError, match="symbolic links"):
        catalog_image(root)


@pytest.mark.parametrize(
    ("text", "repository", "tag", "digest"),
    [
        pytest.param("127.0.0.1:5000/catalogs/x:v1", "catalogs/x", "v1", None, id="tag"),
        pytest.param("127.0.0.1:5000/x", "x", "latest", None, id="default-tag"),
        pytest.param("127.0.0.1:5000/a/b@sha256:abc", "a/b", None, "sha256:abc", id="digest"),
    ],
)
def test_reference_parse(text: str, repository: str, tag: str | None, digest: str | None) -> None:
    reference = Reference.parse(text)
    assert (reference.host, reference.repository, reference.tag, reference.digest) == (
        "127.0.0.1:5000", repository, tag, digest,
    )  # fmt: skip
    assert str(reference) == (text if ":" in text.rsplit("/", 1)[-1] or digest else f"{text}:latest")
