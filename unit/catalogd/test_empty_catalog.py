"""An empty catalog (every file ignored, say) is served as an empty body, not a broken response."""

from __future__ import annotations

from pathlib import Path

from olm.catalogd.sections import SectionReader
from olm.catalogd.storage import Storage
from unit.catalogd.serving import serving

DIGEST = "sha256:" + "e" * 64


def test_a_zero_length_section_reads_as_the_end(tmp_path: Path) -> None:
    path = tmp_path / "empty"
    path.write_bytes(b"")
    reader = SectionReader(path, [(0, 0)], None)
    try:
        assert reader.read(1024) == b""
    finally:
        reader.close()


async def test_an_empty_catalog_is_served_as_an_empty_body(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "store")
    await storage.store("empty", DIGEST, [])
    async with serving(storage, tmp_path) as served:
        for path in ("all", "metas?schema=olm.package"):
            async with served.session.get(f"{served.base}/empty/api/v1/{path}") as response:
                assert response.status == 200
                assert await response.read() == b""
