"""The busybox image made from a static binary: what its layer holds, and that it is reproducible."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

from olm_testkit.images import busybox


def test_the_layer_holds_the_binary_its_applets_and_a_writable_tmp(tmp_path: Path) -> None:
    binary = tmp_path / "busybox"
    binary.write_bytes(b"\x7fELF pretend")
    image = busybox.image(binary)
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(image.layers[0].data))) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert members["bin/busybox"].mode == 0o755
        assert tar.extractfile(members["bin/busybox"]).read() == b"\x7fELF pretend"  # type: ignore[union-attr]
        for applet in busybox.APPLETS:
            assert members[f"bin/{applet}"].issym()
            assert members[f"bin/{applet}"].linkname == "busybox"
        assert members["tmp"].isdir()
        assert members["tmp"].mode == 0o1777
    config = json.loads(image.config.data)
    assert config["config"]["Env"] == ["PATH=/bin"]
    assert busybox.image(binary).digest == image.digest
