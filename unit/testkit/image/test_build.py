"""What a build reports: references, sizes, labels from pyproject.toml."""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePosixPath

import pytest

from olm_testkit.image import build, layer
from olm_testkit.images import layout

PYPROJECT = """\
[project]
name = "olm-py"
version = "1.2.3"
description = "OLM in Python"
license = { text = "Apache-2.0" }
"""


def _layer(tmp_path: Path, name: str, text: str) -> layer.Layer:
    root = tmp_path / name
    root.mkdir()
    (root / "f").write_text(text)
    return layer.write(root, [PurePosixPath("f")], tmp_path / f"{name}.tar.gz")


def test_sizes_add_up_over_the_layers_and_the_digest_reference_names_the_repository(tmp_path: Path) -> None:
    layers = {"base": _layer(tmp_path, "base", "a" * 1000), "app": _layer(tmp_path, "app", "b")}
    config = layout.Blob(media_type=layout.CONFIG_MEDIA_TYPE, data=b"{}")
    local = build.LocalImage(
        image=layout.Image(config=config, layers=tuple(x.blob() for x in layers.values())), layers=layers
    )
    pushed = build.BuiltImage(
        reference="127.0.0.1:5000/olm-py/olm:dev", digest="sha256:abc", local=local, seconds={}
    )
    assert pushed.digest_ref == "127.0.0.1:5000/olm-py/olm@sha256:abc"
    assert pushed.compressed_size == sum(x.size for x in layers.values())
    assert pushed.unpacked_size == sum(x.unpacked_size for x in layers.values())


def test_labels_come_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        PYPROJECT + '\n[project.urls]\nSource = "https://example.invalid/olm"\n'
    )
    assert build.labels(tmp_path) == {
        "org.opencontainers.image.title": "olm-py",
        "org.opencontainers.image.version": "1.2.3",
        "org.opencontainers.image.description": "OLM in Python",
        "org.opencontainers.image.licenses": "Apache-2.0",
        "org.opencontainers.image.source": "https://example.invalid/olm",
    }


@pytest.mark.parametrize("remote", [pytest.param(None, id="no-remote"), pytest.param("origin", id="origin")])
def test_the_source_label_falls_back_to_the_git_remote(tmp_path: Path, remote: str | None) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    if remote:
        url = "https://example.invalid/olm.git"
        subprocess.run(["git", "-C", str(tmp_path), "remote", "add", remote, url], check=True)
    source = build.labels(tmp_path).get("org.opencontainers.image.source")
    assert source == ("https://example.invalid/olm.git" if remote else None)
