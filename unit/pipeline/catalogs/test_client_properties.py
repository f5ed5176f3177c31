"""A client told which bundle properties to keep caches bundles with only those, whichever route
(`metas` or the `all` fallback) the content came by."""

from __future__ import annotations

from pathlib import Path

import pytest

from olm import fbc
from olm.catalogd.storage import Storage
from olm.pipeline import catalogs
from unit.pipeline.catalogs.serving import serving
from unit.pipeline.catalogs.test_client import COMMUNITY, DIGEST_1, _ref, _require

KEEP = frozenset({"olm.package"})


@pytest.mark.parametrize("metas", [True, False], ids=["metas", "all"])
async def test_bundles_keep_only_the_named_properties(tmp_path: Path, metas: bool) -> None:
    _require()
    storage = Storage(tmp_path / "store")
    await storage.store("community", DIGEST_1, fbc.iter_metas(COMMUNITY / "kube-green"))
    async with serving(storage, tmp_path, metas=metas) as running:
        client = catalogs.CatalogClient(
            catalogs.ClientOptions(ca_file=running.ca_file, bundle_properties=KEEP)
        )
        try:
            content = await client.get_package(_ref(running), "kube-green")
        finally:
            await client.close()
    whole = catalogs.parse_lines(
        "x", "kube-green", [m.blob for m in fbc.iter_metas(COMMUNITY / "kube-green")]
    )
    assert [b.name for b in content.bundles] == [b.name for b in whole.bundles]
    assert [b.version for b in content.bundles] == [b.version for b in whole.bundles]
    assert {p.type for b in content.bundles for p in b.properties} == KEEP
    assert {p.type for b in whole.bundles for p in b.properties} > KEEP
