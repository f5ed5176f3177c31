"""The image config says how the image runs; layouts and archives are readable and reproducible."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from olm_testkit.image import build, oci
from olm_testkit.images import layout


def _image(text: str = "layer") -> layout.Image:
    layer = layout.Blob(media_type=layout.LAYER_MEDIA_TYPE, data=text.encode())
    config = oci.config_blob(diff_ids=["sha256:aa"], history=["made by a test"], labels={})
    return layout.Image(config=config, layers=(layer,))


def test_the_olm_config_runs_operator_controller_as_65532_from_the_virtualenv() -> None:
    blob = oci.config_blob(
        diff_ids=["sha256:1", "sha256:2"],
        history=["base", "deps"],
        labels={"b": "2", "a": "1"},
        user=build.USER,
        env=build.ENV,
        entrypoint=build.ENTRYPOINT,
    )
    config = json.loads(blob.data)
    runtime = config["config"]
    assert runtime["User"] == "65532:65532"
    assert runtime["Entrypoint"] == ["operator-controller"]
    assert runtime["Env"][0].startswith("PATH=/opt/olm/bin:")
    assert {"PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1"} <= set(runtime["Env"])
    assert list(runtime["Labels"]) == ["a", "b"]
    assert config["rootfs"] == {"type": "layers", "diff_ids": ["sha256:1", "sha256:2"]}
    assert [h["created_by"] for h in config["history"]] == ["base", "deps"]
    assert config["created"] == oci.CREATED, "no build time: the same layers give the same digest"


def test_every_layer_needs_a_history_line() -> None:
    with pytest.raises(ValueError, match="2 layers but 1 history"):
        oci.config_blob(diff_ids=["sha256:1", "sha256:2"], history=["base"], labels={})


def test_layout_holds_every_blob_and_names_the_manifest(tmp_path: Path) -> None:
    image = _image()
    oci.write_layout(image, tmp_path, ref_name="dev")
    assert json.loads((tmp_path / "oci-layout").read_text()) == {"imageLayoutVersion": "1.0.0"}
    index = json.loads((tmp_path / "index.json").read_text())
    (entry,) = index["manifests"]
    assert entry["digest"] == image.digest
    assert entry["annotations"] == {oci.REF_NAME_ANNOTATION: "dev"}
    blobs = tmp_path / "blobs" / "sha256"
    assert (blobs / image.digest.removeprefix("sha256:")).read_bytes() == image.manifest
    for blob in (*image.layers, image.config):
        assert (blobs / blob.digest.removeprefix("sha256:")).read_bytes() == blob.data


def test_writing_a_name_again_replaces_it_and_keeps_other_names(tmp_path: Path) -> None:
    oci.write_layout(_image("one"), tmp_path, ref_name="dev")
    oci.write_layout(_image("two"), tmp_path, ref_name="other")
    newest = _image("three")
    oci.write_layout(newest, tmp_path, ref_name="dev")
    manifests = json.loads((tmp_path / "index.json").read_text())["manifests"]
    names = {m["annotations"][oci.REF_NAME_ANNOTATION]: m["digest"] for m in manifests}
    assert names == {"other": _image("two").digest, "dev": newest.digest}


def test_archive_is_the_layout_as_a_reproducible_tar(tmp_path: Path) -> None:
    oci.write_archive(_image(), tmp_path / "a.tar", ref_name="dev")
    oci.write_archive(_image(), tmp_path / "b.tar", ref_name="dev")
    assert (tmp_path / "a.tar").read_bytes() == (tmp_path / "b.tar").read_bytes()
    with tarfile.open(tmp_path / "a.tar") as tar:
        names = tar.getnames()
        assert {"oci-layout", "index.json"} <= set(names)
        assert {m.mtime for m in tar.getmembers()} == {0}
    assert f"blobs/sha256/{_image().digest.removeprefix('sha256:')}" in names


def test_an_archive_reads_back_as_the_image_it_was_written_from(tmp_path: Path) -> None:
    image = _image()
    oci.write_archive(image, tmp_path / "a.tar", ref_name="v1.2.0")
    read = oci.read_archive(tmp_path / "a.tar", ref_name="v1.2.0")
    assert read.digest == image.digest
    assert read.layers == image.layers
    with pytest.raises(ValueError, match=r"0 images named 'v1\.3\.0'"):
        oci.read_archive(tmp_path / "a.tar", ref_name="v1.3.0")


def test_an_archive_with_a_changed_blob_is_refused(tmp_path: Path) -> None:
    image = _image()
    oci.write_archive(image, tmp_path / "a.tar", ref_name="dev")
    layer = f"blobs/sha256/{image.layers[0].digest.removeprefix('sha256:')}"
    with tarfile.open(tmp_path / "a.tar") as original, tarfile.open(tmp_path / "b.tar", "w") as changed:
        for member in original.getmembers():
            data = original.extractfile(member) if member.isfile() else None
            if member.name == layer:
                member.size = len(b"other")
                changed.addfile(member, io.BytesIO(b"other"))
            else:
                changed.addfile(member, data)
    with pytest.raises(ValueError, match="does not match its digest"):
        oci.read_archive(tmp_path / "b.tar", ref_name="dev")
