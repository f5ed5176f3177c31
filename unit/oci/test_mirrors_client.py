"""The registry client pulls through the mirrors of a registries.conf, against TLS registries on
loopback (the fake at the HTTP seam); a closed port stands for a mirror that is down."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from olm import oci
from olm_runtime.testing.process import free_ports
from olm_testkit.images.layout import catalog_image
from unit.oci.fakeregistry import FakeRegistry, serve

FAST_RETRY = oci.RetryPolicy(attempts=1)
SOURCE = "mirrored.example:5000"
"""A registry that exists only through the registries.conf (`.example` never resolves)."""


def _push(registry: FakeRegistry, tmp_path: Path, repository: str) -> str:
    (tmp_path / "fbc").mkdir(exist_ok=True)
    (tmp_path / "fbc" / "catalog.json").write_text('{"schema":"olm.package","name":"p"}\n')
    return registry.push(repository, "v1", catalog_image(tmp_path / "fbc"))


def _client(tmp_path: Path, conf: Path, ca: Path, **options: object) -> oci.RegistryClient:
    settings: dict[str, object] = {
        "cache_dir": tmp_path / "cache",
        "retry": FAST_RETRY,
        "registries_conf": conf,
        "ca_files": (ca,),
        **options,
    }
    return oci.RegistryClient(oci.ClientOptions(**settings))  # type: ignore[arg-type]


def _conf(tmp_path: Path, *mirrors: str, blocked: bool = False) -> Path:
    lines = [f'[[registry]]\nprefix = "{SOURCE}/team"\nlocation = "{SOURCE}/team"\n']
    lines.append(f"blocked = {str(blocked).lower()}\n")
    lines += [f'[[registry.mirror]]\nlocation = "{m}"\n' for m in mirrors]
    path = tmp_path / "registries.conf"
    path.write_text("".join(lines))
    return path


async def test_mirror_one_down_mirror_two_serves_and_the_image_keeps_its_name(tmp_path: Path) -> None:
    async with serve(FakeRegistry(), tmp_path) as (mirror, ca):
        digest = _push(mirror, tmp_path, "cache/team/catalog")
        (down,) = free_ports(1)
        conf = _conf(tmp_path, f"127.0.0.1:{down}/cache/team", f"{mirror.host}/cache/team")
        async with _client(tmp_path, conf, ca) as client:
            by_tag = oci.Reference.parse(f"{SOURCE}/team/catalog:v1")
            assert str(await client.resolve(by_tag)) == digest
            pulled = await client.pull(oci.Reference.parse(f"{SOURCE}/team/catalog@{digest}"))
        assert str(pulled.reference) == f"{SOURCE}/team/catalog@{digest}"
        assert ("GET", f"/v2/cache/team/catalog/manifests/{digest}") in mirror.requests


async def test_a_digest_pull_is_verified_against_the_digest_its_reference_names(tmp_path: Path) -> None:
    async with serve(FakeRegistry(), tmp_path) as (liar, ca):
        # The mirror answers for the digest with other content: refused, and the next source tried.
        _push(liar, tmp_path, "team/catalog")
        claimed = "sha256:" + "0" * 64
        manifest = next(iter(liar.manifests.values()))
        liar.manifests[("team/catalog", claimed)] = manifest
        conf = _conf(tmp_path, f"{liar.host}/team")
        async with _client(tmp_path, conf, ca) as client:
            with pytest.raises(oci.TransientError) as raised:
                await client.pull(oci.Reference.parse(f"{SOURCE}/team/catalog@{claimed}"))
        message = str(raised.value)
        assert message.startswith("every source failed (mirrors of ")
        assert f"[1] fetching manifest {liar.host}/team/catalog@{claimed}: the manifest hashes to" in message
        assert f"[2] fetching manifest {SOURCE}/team/catalog@{claimed}: " in message


async def test_a_blocked_source_with_no_mirror_is_refused_naming_the_rule(tmp_path: Path) -> None:
    async with serve(FakeRegistry(), tmp_path) as (_, ca):
        conf = _conf(tmp_path, blocked=True)
        async with _client(tmp_path, conf, ca) as client:
            with pytest.raises(oci.Blocked) as raised:
                await client.resolve(oci.Reference.parse(f"{SOURCE}/team/catalog:v1"))
    assert str(raised.value) == (
        f"resolving {SOURCE}/team/catalog:v1: registry {SOURCE} is blocked by {conf} "
        f"([[registry]] prefix '{SOURCE}/team' sets blocked = true)"
    )


async def test_a_blocked_source_is_still_served_by_its_mirror(tmp_path: Path) -> None:
    async with serve(FakeRegistry(), tmp_path) as (mirror, ca):
        digest = _push(mirror, tmp_path, "team/catalog")
        conf = _conf(tmp_path, f"{mirror.host}/team", blocked=True)
        async with _client(tmp_path, conf, ca) as client:
            pulled = await client.pull(oci.Reference.parse(f"{SOURCE}/team/catalog:v1"))
        assert str(pulled.reference) == f"{SOURCE}/team/catalog@{digest}"


async def test_credentials_are_those_of_the_host_contacted(tmp_path: Path) -> None:
    async with serve(FakeRegistry(auth="basic", users={"alice": "s3cret"}), tmp_path) as (mirror, ca):
        _push(mirror, tmp_path, "team/catalog")
        conf = _conf(tmp_path, f"{mirror.host}/team")
        reference = oci.Reference.parse(f"{SOURCE}/team/catalog:v1")
        for_source = {"auths": {SOURCE: {"username": "alice", "password": "s3cret"}}}
        keychain = oci.Keychain.from_dockerconfigjson(json.dumps(for_source))
        async with _client(tmp_path, conf, ca, keychain=keychain) as client:
            # The source's credentials are not sent to its mirror.
            with pytest.raises(oci.TransientError, match="no pull secret has any for it"):
                await client.resolve(reference)
            for_mirror = {"auths": {mirror.host: {"username": "alice", "password": "s3cret"}}}
            client.use_keychain(oci.Keychain.from_dockerconfigjson(json.dumps(for_mirror)))
            assert await client.resolve(reference)


async def test_a_changed_file_applies_to_the_next_pull(tmp_path: Path) -> None:
    async with serve(FakeRegistry(), tmp_path) as (mirror, ca):
        digest = _push(mirror, tmp_path, "team/catalog")
        conf = _conf(tmp_path, blocked=True)
        reference = oci.Reference.parse(f"{SOURCE}/team/catalog:v1")
        async with _client(tmp_path, conf, ca) as client:
            with pytest.raises(oci.Blocked):
                await client.resolve(reference)
            _conf(tmp_path, f"{mirror.host}/team", blocked=True)
            assert str(await client.resolve(reference)) == digest


async def test_blobs_missing_under_a_cached_manifest_come_through_the_mirrors(tmp_path: Path) -> None:
    async with serve(FakeRegistry(), tmp_path) as (mirror, ca):
        digest = _push(mirror, tmp_path, "team/catalog")
        (down,) = free_ports(1)
        conf = _conf(tmp_path, f"127.0.0.1:{down}/team", f"{mirror.host}/team", blocked=True)
        reference = oci.Reference.parse(f"{SOURCE}/team/catalog@{digest}")
        async with _client(tmp_path, conf, ca) as client:
            first = await client.pull(reference)
            # A pull cut short after the manifest was kept: its layers are not in the cache.
            for layer, _ in first.layers:
                client.cache.remove(layer.digest)
            mirror.requests.clear()
            again = await client.pull(reference)
        assert again.reference == first.reference
        assert [path.read_bytes() for _, path in again.layers] == [
            path.read_bytes() for _, path in first.layers
        ]
        assert [r for r in mirror.requests if "/manifests/" in r[1]] == []
        assert {r[1] for r in mirror.requests} == {
            f"/v2/team/catalog/blobs/{layer.digest}" for layer, _ in first.layers
        }
