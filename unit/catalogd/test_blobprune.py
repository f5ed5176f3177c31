"""Blob cache pruning: what catalogs reference is kept, the rest goes, pulls in progress are safe."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson

from olm import oci
from olm.catalogd import blobprune

LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
MAX_MANIFEST = 1 << 20


def _blob(cache: oci.BlobCache, data: bytes) -> dict[str, Any]:
    digest = oci.Digest.of(data)
    cache.put(digest, data, max_size=1 << 20)
    return {"mediaType": LAYER, "digest": str(digest), "size": len(data)}


def _image(cache: oci.BlobCache, name: str, layers: list[dict[str, Any]]) -> oci.Digest:
    """A manifest (stored) with a config of its own and `layers`; its digest."""
    config = _blob(cache, orjson.dumps({"config": {"Labels": {"image": name}}}))
    config["mediaType"] = oci.OCI_CONFIG
    manifest = orjson.dumps(
        {"schemaVersion": 2, "mediaType": oci.OCI_MANIFEST, "config": config, "layers": layers}
    )
    return oci.Digest.parse(_blob(cache, manifest)["digest"])


def _index(cache: oci.BlobCache, manifests: list[oci.Digest]) -> oci.Digest:
    entries = [{"mediaType": oci.OCI_MANIFEST, "digest": str(d), "size": 1} for d in manifests]
    index = orjson.dumps({"schemaVersion": 2, "mediaType": oci.OCI_INDEX, "manifests": entries})
    return oci.Digest.parse(_blob(cache, index)["digest"])


def _catalog(name: str, ref: str | None) -> dict[str, Any]:
    status = {"resolvedSource": {"type": "Image", "image": {"ref": ref}}} if ref else {}
    return {"metadata": {"name": name}, "status": status}


def test_an_image_keeps_its_manifest_config_and_layers(tmp_path: Path) -> None:
    cache = oci.BlobCache(tmp_path)
    shared = _blob(cache, b"shared layer")
    image_a = _image(cache, "a", [shared, _blob(cache, b"a only")])
    image_b = _image(cache, "b", [shared, _blob(cache, b"b only")])
    before = set(cache.digests())

    keep = blobprune.referenced(cache, [image_b], max_manifest_bytes=MAX_MANIFEST)
    removed = cache.prune(keep)

    assert len(before) == 7  # two manifests, two configs, three layers
    assert len(keep) == 4
    assert set(cache.digests()) == keep
    assert image_a in removed
    assert oci.Digest.of(b"a only") in removed
    assert oci.Digest.parse(shared["digest"]) in keep  # still needed by b
    assert len(removed) == 3  # a's manifest, config and own layer


def test_an_index_keeps_every_cached_manifest_under_it(tmp_path: Path) -> None:
    cache = oci.BlobCache(tmp_path)
    amd64 = _image(cache, "amd64", [_blob(cache, b"amd64 layer")])
    arm64 = _image(cache, "arm64", [_blob(cache, b"arm64 layer")])
    missing = oci.Digest.of(b"a manifest never pulled")
    index = _index(cache, [amd64, arm64, missing])
    _blob(cache, b"unrelated")

    keep = blobprune.referenced(cache, [index], max_manifest_bytes=MAX_MANIFEST)
    cache.prune(keep)

    assert set(cache.digests()) == keep - {missing}
    assert {index, amd64, arm64, oci.Digest.of(b"amd64 layer"), oci.Digest.of(b"arm64 layer")} <= keep
    assert oci.Digest.of(b"unrelated") not in set(cache.digests())


def test_an_uncached_image_keeps_nothing_else(tmp_path: Path) -> None:
    cache = oci.BlobCache(tmp_path)
    _blob(cache, b"orphan")
    never_pulled = oci.Digest.of(b"not here")
    assert blobprune.referenced(cache, [never_pulled], max_manifest_bytes=MAX_MANIFEST) == {never_pulled}
    assert cache.prune({never_pulled}) == [oci.Digest.of(b"orphan")]


def test_image_digests_come_from_status_and_from_what_is_served() -> None:
    a, b, c = (oci.Digest.of(x) for x in (b"a", b"b", b"c"))
    catalogs = [
        _catalog("resolved", f"registry.test:5000/catalogs/a@{a}"),
        _catalog("never-resolved", None),
        _catalog("tag-only", "registry.test:5000/catalogs/a:latest"),
        _catalog("garbage", "::not a reference::"),
    ]
    served = {"resolved": str(b), "follower-behind": str(c), "broken": "nonsense"}
    assert blobprune.image_digests(catalogs, served) == {a, b, c}


async def test_a_prune_waits_for_pulls_in_progress() -> None:
    gate = blobprune.PullGate()
    pull_may_finish = asyncio.Event()
    events: list[str] = []

    async def pull(label: str, hold: asyncio.Event | None = None) -> None:
        async with gate.pulling():
            events.append(f"{label} started")
            if hold is not None:
                await hold.wait()
            events.append(f"{label} done")

    async def prune() -> None:
        async with gate.pruning():
            events.append("prune")

    first = asyncio.create_task(pull("first", pull_may_finish))
    await asyncio.sleep(0)  # one step of the loop: the first pull takes the gate
    pruning = asyncio.create_task(prune())
    await asyncio.sleep(0)  # one step: the prune starts waiting
    later = asyncio.create_task(pull("later"))
    await asyncio.sleep(0)
    assert events == ["first started"]  # the prune waits for it; the later pull waits for the prune
    pull_may_finish.set()
    await asyncio.gather(first, pruning, later)
    assert events == ["first started", "first done", "prune", "later started", "later done"]


async def test_pulls_share_the_gate() -> None:
    pulls = 3
    gate = blobprune.PullGate()
    inside = 0
    most = 0
    release = asyncio.Event()

    async def pull() -> None:
        nonlocal inside, most
        async with gate.pulling():
            inside += 1
            most = max(most, inside)
            await release.wait()
            inside -= 1

    tasks = [asyncio.create_task(pull()) for _ in range(pulls)]
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(*tasks)
    assert most == pulls
    async with gate.pruning():  # free again once they are done
        pass
