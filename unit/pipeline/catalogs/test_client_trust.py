"""The catalog client trusts what `--catalogd-cas-dir` holds now: a CA written into it (as the
kubelet updates a mounted Secret or ConfigMap) is used by the next request, without a restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from olm import fbc
from olm.catalogd.storage import Storage
from olm.pipeline import catalogs
from olm_runtime.testing.pki import CertificateAuthority
from olm_testkit.kubeletvolume import project
from unit.pipeline.catalogs.serving import serving

DIGEST = "sha256:" + "1" * 64
METAS = [
    {"schema": "olm.package", "name": "p", "defaultChannel": "stable"},
    {"schema": "olm.channel", "name": "stable", "package": "p", "entries": [{"name": "p.v1"}]},
    {"schema": "olm.bundle", "name": "p.v1", "package": "p", "image": "example.com/p:v1", "properties": []},
]


async def test_a_ca_written_into_the_cas_dir_is_trusted_by_the_next_request(tmp_path: Path) -> None:
    source = tmp_path / "fbc"
    source.mkdir()
    (source / "catalog.json").write_text("\n".join(json.dumps(m) for m in METAS) + "\n")
    storage = Storage(tmp_path / "store")
    await storage.store("demo", DIGEST, fbc.iter_metas(source))
    cas = tmp_path / "catalogd-cas"
    project(cas, {"ca.crt": CertificateAuthority.load_or_create(tmp_path / "unrelated").cert_pem})
    async with serving(storage, tmp_path) as running:
        ref = catalogs.CatalogRef(
            name="demo", digest=f"example.com/c@{DIGEST}", base_url=running.base("demo")
        )
        client = catalogs.CatalogClient(catalogs.ClientOptions(ca_dir=cas))
        try:
            with pytest.raises(catalogs.CatalogUnreachable, match="CERTIFICATE_VERIFY_FAILED"):
                await client.get_package(ref, "p")
            project(cas, {"ca.crt": running.ca_file.read_bytes()})
            content = await client.get_package(ref, "p")
        finally:
            await client.close()
    assert [bundle.name for bundle in content.bundles] == ["p.v1"]
