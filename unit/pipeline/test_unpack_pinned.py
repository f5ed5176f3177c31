"""`pinned`: a bundle image by digest without a pull, spelled as the unpacker reports it."""

from __future__ import annotations

import pytest

from olm.pipeline.unpack import pinned

DIGEST = "sha256:" + "0" * 64


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        pytest.param(f"registry.test/b/x@{DIGEST}", f"registry.test/b/x@{DIGEST}", id="by digest"),
        pytest.param(f"registry.test/b/x:v1@{DIGEST}", f"registry.test/b/x@{DIGEST}", id="tag and digest"),
        pytest.param("registry.test/b/x:v1", None, id="tag only: only a pull tells the digest"),
        pytest.param("not a reference", None, id="malformed: the pull reports it"),
    ],
)
def test_pinned(image: str, expected: str | None) -> None:
    assert pinned(image) == expected
