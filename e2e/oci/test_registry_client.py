"""The OCI client against the real `distribution` registry: resolve, pull, verify, cache, authenticate."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest

from e2e.oci.authregistry import htpasswd_registry, token_registry
from olm import fbc, oci
from olm.catalogd.storage import Storage
from olm.catalogd.unpack import Unpacker
from olm_runtime.testing.registry import Registry
from olm_testkit.images.layout import Image, catalog_image
from olm_testkit.images.registry import Reference, RegistryClient

REALDATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "realdata" / "catalogs"


class RequestLog:
    """Every request the client sends, seen from aiohttp's tracing hooks (independent of its counters)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.config = aiohttp.TraceConfig()
        self.config.on_request_start.append(self._record)

    async def _record(self, _: aiohttp.ClientSession, __: SimpleNamespace, params: Any) -> None:
        self.requests.append((params.method, params.url.path))

    def blob_gets(self) -> int:
        return sum(1 for method, path in self.requests if method == "GET" and "/blobs/" in path)


def _catalog_dir(tmp_path: Path, version: str = "1.0.0") -> Path:
    root = tmp_path / f"fbc-{version}"
    root.mkdir(parents=True, exist_ok=True)
    objects = [
        {"schema": "olm.package", "name": "demo", "defaultChannel": "stable"},
        {
            "schema": "olm.channel",
            "package": "demo",
            "name": "stable",
            "entries": [{"name": f"demo.v{version}"}],
        },
        {
            "schema": "olm.bundle",
            "package": "demo",
            "name": f"demo.v{version}",
            "image": "r.io/demo:1",
            "properties": [{"type": "olm.package", "value": {"packageName": "demo", "version": version}}],
        },
    ]
    (root / "catalog.json").write_text("\n".join(json.dumps(o) for o in objects))
    return root


def _push(registry: Registry, image: Image, repository: str, tag: str = "v1") -> str:
    client = RegistryClient(host=registry.host, ca_file=registry.ca_file)
    return client.push(image, Reference.parse(f"{registry.host}/{repository}:{tag}"))


def _options(registry: Registry, cache: Path, **extra: Any) -> oci.ClientOptions:
    return oci.ClientOptions(cache_dir=cache, ca_files=(registry.ca_file,), **extra)


@pytest.fixture
def repository() -> str:
    return f"e2e/oci-{uuid.uuid4().hex[:8]}"


async def test_tag_resolves_to_the_pushed_digest(registry: Registry, tmp_path: Path, repository: str) -> None:
    digest = _push(registry, catalog_image(_catalog_dir(tmp_path)), repository)
    async with oci.RegistryClient(_options(registry, tmp_path / "cache")) as client:
        resolved = await client.resolve(oci.Reference.parse(f"{registry.host}/{repository}:v1"))
    assert str(resolved) == digest


async def test_moving_the_tag_changes_the_resolved_digest(
    registry: Registry, tmp_path: Path, repository: str
) -> None:
    first = _push(registry, catalog_image(_catalog_dir(tmp_path, "1.0.0")), repository)
    reference = oci.Reference.parse(f"{registry.host}/{repository}:v1")
    async with oci.RegistryClient(_options(registry, tmp_path / "cache")) as client:
        assert str(await client.resolve(reference)) == first
        second = _push(registry, catalog_image(_catalog_dir(tmp_path, "2.0.0")), repository)
        assert str(await client.resolve(reference)) == second != first


async def test_pull_by_digest_is_verified_byte_for_byte(
    registry: Registry, tmp_path: Path, repository: str
) -> None:
    image = catalog_image(_catalog_dir(tmp_path))
    digest = _push(registry, image, repository)
    async with oci.RegistryClient(_options(registry, tmp_path / "cache")) as client:
        pulled = await client.pull(oci.Reference.parse(f"{registry.host}/{repository}@{digest}"))
    assert str(pulled.reference) == f"{registry.host}/{repository}@{digest}"
    assert pulled.labels["operators.operatorframework.io.index.configs.v1"] == "/configs"
    assert [path.read_bytes() for _, path in pulled.layers] == [layer.data for layer in image.layers]


async def test_blobs_are_not_downloaded_again_after_a_restart(
    registry: Registry, tmp_path: Path, repository: str
) -> None:
    digest = _push(registry, catalog_image(_catalog_dir(tmp_path)), repository)
    log = RequestLog()
    options = _options(registry, tmp_path / "cache", trace_configs=(log.config,))
    async with oci.RegistryClient(options) as client:
        await client.pull(oci.Reference.parse(f"{registry.host}/{repository}:v1"))
    assert log.blob_gets() == 2  # config and layer
    log.requests.clear()
    async with oci.RegistryClient(options) as restarted:  # same cache directory, new process state
        await restarted.pull(oci.Reference.parse(f"{registry.host}/{repository}:v1"))
        await restarted.pull(oci.Reference.parse(f"{registry.host}/{repository}@{digest}"))
        assert restarted.statistics().blob_requests == 0
    assert log.blob_gets() == 0
    assert log.requests == [("HEAD", f"/v2/{repository}/manifests/v1")]  # the tag lookup, nothing else


async def test_descriptor_size_that_lies_is_refused(
    registry: Registry, tmp_path: Path, repository: str
) -> None:
    image = catalog_image(_catalog_dir(tmp_path))
    _push(registry, image, repository)
    manifest = json.loads(image.manifest)
    manifest["layers"][0]["size"] -= 10
    client = RegistryClient(host=registry.host, ca_file=registry.ca_file)
    status, _, body = client._request(
        "PUT",
        f"/v2/{repository}/manifests/lying",
        json.dumps(manifest).encode(),
        {"Content-Type": "application/vnd.oci.image.manifest.v1+json"},
    )
    if status != 201:
        pytest.skip(f"this registry refuses manifests whose sizes lie (HTTP {status}: {body[:120]!r})")
    async with oci.RegistryClient(_options(registry, tmp_path / "cache")) as oci_client:
        with pytest.raises(oci.SizeMismatch, match="longer than"):
            await oci_client.pull(oci.Reference.parse(f"{registry.host}/{repository}:lying"))
        assert oci_client.cache.get(oci.Digest.parse(image.layers[0].digest)) is None


async def test_corrupted_blob_in_registry_storage_is_a_digest_mismatch(
    registry: Registry, tmp_path: Path, repository: str
) -> None:
    image = catalog_image(_catalog_dir(tmp_path, "3.1.4"))  # content unique to this test
    _push(registry, image, repository)
    hex_ = image.layers[0].digest.split(":")[1]
    stored = (
        registry.state_dir
        / "data"
        / "docker"
        / "registry"
        / "v2"
        / "blobs"
        / "sha256"
        / hex_[:2]
        / hex_
        / "data"
    )
    original = stored.read_bytes()
    stored.write_bytes(bytes([original[0] ^ 0xFF]) + original[1:])  # same length, wrong content
    try:
        async with oci.RegistryClient(_options(registry, tmp_path / "cache")) as client:
            with pytest.raises(oci.DigestMismatch, match=f"expected {image.layers[0].digest}"):
                await client.pull(oci.Reference.parse(f"{registry.host}/{repository}:v1"))
            assert client.cache.get(oci.Digest.parse(image.layers[0].digest)) is None
    finally:
        stored.write_bytes(original)


async def test_unknown_tag_is_not_found(registry: Registry, tmp_path: Path, repository: str) -> None:
    async with oci.RegistryClient(_options(registry, tmp_path / "cache")) as client:
        with pytest.raises(oci.NotFound, match="not found"):
            await client.resolve(oci.Reference.parse(f"{registry.host}/{repository}:missing"))


def _keychain(host: str, user: str, password: str) -> oci.Keychain:
    secret = {"auths": {host: {"username": user, "password": password}}}
    return oci.Keychain.from_dockerconfigjson(json.dumps(secret))


@pytest.fixture
async def authenticated(
    request: pytest.FixtureRequest, registry: Registry, tmp_path: Path
) -> AsyncIterator[Any]:
    users = {"alice": "correct horse"}
    if request.param == "basic":
        with htpasswd_registry(registry, tmp_path / "auth", users) as auth:
            yield auth
    else:
        pair = registry.options.ca.issue("token-service", common_name="token-service", hosts=["127.0.0.1"])
        async with token_registry(registry, tmp_path / "auth", users, pair) as auth:
            yield auth


@pytest.mark.parametrize("authenticated", ["basic", "bearer"], indirect=True)
async def test_pull_with_credentials_from_a_pull_secret(
    authenticated: Any, registry: Registry, tmp_path: Path, repository: str
) -> None:
    image = catalog_image(_catalog_dir(tmp_path))
    digest = _push(registry, image, repository)  # pushed through the open registry, same storage
    reference = oci.Reference.parse(f"{authenticated.host}/{repository}:v1")
    anonymous = _options(registry, tmp_path / "anon")
    async with oci.RegistryClient(anonymous) as client:
        with pytest.raises(oci.Unauthorized):
            await client.pull(reference)
    wrong = _options(registry, tmp_path / "wrong", keychain=_keychain(authenticated.host, "alice", "nope"))
    async with oci.RegistryClient(wrong) as client:
        with pytest.raises(oci.Unauthorized, match="refused"):
            await client.pull(reference)
    good = _options(
        registry, tmp_path / "good", keychain=_keychain(authenticated.host, "alice", "correct horse")
    )
    async with oci.RegistryClient(good) as client:
        pulled = await client.pull(reference)
        await client.resolve(reference)
        tokens = client.statistics().token_requests
    assert str(pulled.reference.digest) == digest
    assert [path.read_bytes() for _, path in pulled.layers] == [layer.data for layer in image.layers]
    assert tokens == (
        1 if authenticated.mode == "bearer" else 0
    )  # one token serves every request of the pull


@pytest.mark.skipif(not REALDATA.is_dir(), reason=f"the real catalogs are not present at {REALDATA}")
@pytest.mark.parametrize(
    "catalog",
    [
        "community-operators-prod-v4.20",
        "compliance-operator-fbc/v4.16-bundle-object",
        "kueue-fbc-v4.20",
        "upstream-fixture-operator-controller-e2e-test-catalog/v1/configs",
    ],
)
async def test_real_catalog_image_round_trips_meta_for_meta(
    registry: Registry, tmp_path: Path, repository: str, catalog: str
) -> None:
    source = tmp_path / "source"
    shutil.copytree(
        REALDATA / catalog, source
    )  # hack/images refuses nothing here; the copy is read-only-safe
    digest = _push(registry, catalog_image(source), repository)
    async with oci.RegistryClient(_options(registry, tmp_path / "cache")) as client:
        unpacked = await Unpacker(client, tmp_path / "unpack").unpack(
            "real", oci.Reference.parse(f"{registry.host}/{repository}:v1")
        )
    assert str(unpacked.reference.digest) == digest
    stored = await Storage(tmp_path / "store").store(
        "real", digest, fbc.checked(fbc.iter_metas(unpacked.path))
    )
    expected = [json.loads(m.blob) for m in fbc.iter_metas(REALDATA / catalog)]
    assert [json.loads(line) for line in stored.all_path.read_text().splitlines()] == expected
