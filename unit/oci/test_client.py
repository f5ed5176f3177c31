"""The registry client against a scripted registry at the HTTP seam: pulls, verification, auth, retries."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from olm import oci
from olm_testkit.images.layout import Blob, Image, catalog_image
from unit.oci.fakeregistry import FakeRegistry, serve


async def _no_wait(_: float) -> None:
    return None


FAST_RETRY = oci.RetryPolicy(attempts=3, initial_delay=0.01, sleep=_no_wait)


def _catalog(tmp_path: Path, text: str = '{"schema":"olm.package","name":"p"}\n') -> Image:
    root = tmp_path / "fbc"
    root.mkdir(exist_ok=True)
    (root / "catalog.json").write_text(text)
    return catalog_image(root)


@pytest.fixture
async def fake(tmp_path: Path) -> AsyncIterator[tuple[FakeRegistry, Path]]:
    async with serve(FakeRegistry(), tmp_path) as served:
        yield served


def _client(tmp_path: Path, ca: Path, **options: object) -> oci.RegistryClient:
    settings: dict[str, object] = {"cache_dir": tmp_path / "cache", "ca_files": (ca,), "retry": FAST_RETRY}
    settings.update(options)
    return oci.RegistryClient(oci.ClientOptions(**settings))  # type: ignore[arg-type]


async def test_tag_resolves_to_the_manifest_digest(fake: tuple[FakeRegistry, Path], tmp_path: Path) -> None:
    registry, ca = fake
    image = _catalog(tmp_path)
    digest = registry.push("catalogs/demo", "v1", image)
    async with _client(tmp_path, ca) as client:
        resolved = await client.resolve(oci.Reference.parse(f"{registry.host}/catalogs/demo:v1"))
    assert str(resolved) == digest == image.digest
    assert registry.count("HEAD", "manifests") == 1


async def test_head_without_digest_header_falls_back_to_hashing_the_manifest(
    fake: tuple[FakeRegistry, Path], tmp_path: Path
) -> None:
    registry, ca = fake
    registry.digest_on_head = False
    image = _catalog(tmp_path)
    registry.push("catalogs/demo", "v1", image)
    async with _client(tmp_path, ca) as client:
        resolved = await client.resolve(oci.Reference.parse(f"{registry.host}/catalogs/demo:v1"))
    assert str(resolved) == image.digest


async def test_pull_verifies_and_caches_everything(fake: tuple[FakeRegistry, Path], tmp_path: Path) -> None:
    registry, ca = fake
    image = _catalog(tmp_path)
    registry.push("catalogs/demo", "v1", image)
    reference = oci.Reference.parse(f"{registry.host}/catalogs/demo:v1")
    async with _client(tmp_path, ca) as client:
        pulled = await client.pull(reference)
        assert str(pulled.reference) == f"{registry.host}/catalogs/demo@{image.digest}"
        assert pulled.labels == {"operators.operatorframework.io.index.configs.v1": "/configs"}
        [(descriptor, path)] = pulled.layers
        assert path.read_bytes() == image.layers[0].data
        assert str(descriptor.digest) == image.layers[0].digest
    assert registry.count("GET", "blobs") == 2  # config and layer


async def test_second_pull_by_digest_makes_no_request_even_after_a_restart(
    fake: tuple[FakeRegistry, Path], tmp_path: Path
) -> None:
    registry, ca = fake
    image = _catalog(tmp_path)
    digest = registry.push("catalogs/demo", "v1", image)
    by_digest = oci.Reference.parse(f"{registry.host}/catalogs/demo@{digest}")
    async with _client(tmp_path, ca) as client:
        await client.pull(by_digest)
    before = len(registry.requests)
    async with _client(tmp_path, ca) as restarted:  # a new client on the same cache directory
        pulled = await restarted.pull(by_digest)
        assert restarted.statistics().blob_cache_hits == 2
    assert len(registry.requests) == before
    assert pulled.layers[0][1].read_bytes() == image.layers[0].data


async def test_second_pull_by_tag_costs_one_head(fake: tuple[FakeRegistry, Path], tmp_path: Path) -> None:
    registry, ca = fake
    registry.push("catalogs/demo", "v1", _catalog(tmp_path))
    reference = oci.Reference.parse(f"{registry.host}/catalogs/demo:v1")
    async with _client(tmp_path, ca) as client:
        await client.pull(reference)
        before = list(registry.requests)
        await client.pull(reference)
    assert [m for m, _ in registry.requests[len(before) :]] == ["HEAD"]


async def test_corrupted_blob_is_a_digest_mismatch_and_not_cached(
    fake: tuple[FakeRegistry, Path], tmp_path: Path
) -> None:
    registry, ca = fake
    image = _catalog(tmp_path)
    registry.push("catalogs/demo", "v1", image)
    registry.corrupt.add(image.layers[0].digest)
    async with _client(tmp_path, ca) as client:
        with pytest.raises(oci.DigestMismatch, match=r"expected sha256:"):
            await client.pull(oci.Reference.parse(f"{registry.host}/catalogs/demo:v1"))
        assert client.cache.get(oci.Digest.parse(image.layers[0].digest)) is None
    assert not list((tmp_path / "cache" / "tmp").iterdir())


@pytest.mark.parametrize(
    ("declared_size", "error"),
    [
        pytest.param(-5, oci.SizeMismatch, id="descriptor-claims-fewer-bytes"),
        pytest.param(+5, oci.SizeMismatch, id="descriptor-claims-more-bytes"),
    ],
)
async def test_layer_size_must_match_its_descriptor(
    fake: tuple[FakeRegistry, Path], tmp_path: Path, declared_size: int, error: type[Exception]
) -> None:
    registry, ca = fake
    image = _catalog(tmp_path)
    registry.push("catalogs/demo", "v1", image)
    manifest = json.loads(image.manifest)
    manifest["layers"][0]["size"] += declared_size
    data = json.dumps(manifest).encode()
    registry.put_manifest("catalogs/demo", "lying", "application/vnd.oci.image.manifest.v1+json", data)
    async with _client(tmp_path, ca) as client:
        with pytest.raises(error):
            await client.pull(oci.Reference.parse(f"{registry.host}/catalogs/demo:lying"))


async def test_blob_over_the_cap_is_refused_before_download(
    fake: tuple[FakeRegistry, Path], tmp_path: Path
) -> None:
    registry, ca = fake
    registry.push("catalogs/demo", "v1", _catalog(tmp_path, "x" * 10_000))
    async with _client(tmp_path, ca, max_blob_bytes=100) as client:
        with pytest.raises(oci.TooLarge, match="over the limit"):
            await client.pull(oci.Reference.parse(f"{registry.host}/catalogs/demo:v1"))
    assert registry.count("GET", "blobs") == 0


async def test_transient_errors_are_retried(fake: tuple[FakeRegistry, Path], tmp_path: Path) -> None:
    registry, ca = fake
    image = _catalog(tmp_path)
    registry.push("catalogs/demo", "v1", image)
    layer_path = f"/v2/catalogs/demo/blobs/{image.layers[0].digest}"
    registry.fail[f"/v2/catalogs/demo/manifests/{image.digest}"] = [503]
    registry.reset[layer_path] = 1
    async with _client(tmp_path, ca) as client:
        pulled = await client.pull(oci.Reference.parse(f"{registry.host}/catalogs/demo:v1"))
        assert client.statistics().retries == 2
    assert pulled.layers[0][1].read_bytes() == image.layers[0].data


async def test_retries_are_bounded(fake: tuple[FakeRegistry, Path], tmp_path: Path) -> None:
    registry, ca = fake
    registry.push("catalogs/demo", "v1", _catalog(tmp_path))
    registry.fail["/v2/catalogs/demo/manifests/v1"] = [503] * 10
    async with _client(tmp_path, ca) as client:
        with pytest.raises(oci.TransientError, match=r"HTTP 503 \(gave up after 3 attempts\)") as raised:
            await client.resolve(oci.Reference.parse(f"{registry.host}/catalogs/demo:v1"))
    assert raised.value.transient
    assert registry.count("HEAD", "manifests") == 3


async def test_unknown_tag_is_not_found(fake: tuple[FakeRegistry, Path], tmp_path: Path) -> None:
    registry, ca = fake
    async with _client(tmp_path, ca) as client:
        with pytest.raises(oci.NotFound):
            await client.pull(oci.Reference.parse(f"{registry.host}/catalogs/missing:v1"))


async def test_untrusted_certificate_is_a_tls_error_without_retries(
    fake: tuple[FakeRegistry, Path], tmp_path: Path
) -> None:
    registry, _ = fake
    registry.push("catalogs/demo", "v1", _catalog(tmp_path))
    async with oci.RegistryClient(oci.ClientOptions(cache_dir=tmp_path / "c", retry=FAST_RETRY)) as client:
        with pytest.raises(oci.TLSVerificationFailed):
            await client.resolve(oci.Reference.parse(f"{registry.host}/catalogs/demo:v1"))
    assert not registry.requests


def _keychain(host: str, user: str, password: str) -> oci.Keychain:
    return oci.Keychain.from_dockerconfigjson(
        json.dumps({"auths": {host: {"username": user, "password": password}}})
    )


@pytest.mark.parametrize("scheme", [pytest.param("basic", id="basic"), pytest.param("bearer", id="bearer")])
async def test_authenticated_pull(tmp_path: Path, scheme: str) -> None:
    async with serve(FakeRegistry(auth=scheme, users={"alice": "s3cret"}), tmp_path) as (registry, ca):
        registry.push("private/demo", "v1", _catalog(tmp_path))
        reference = oci.Reference.parse(f"{registry.host}/private/demo:v1")
        keychain = _keychain(registry.host, "alice", "s3cret")
        async with _client(tmp_path, ca, keychain=keychain) as client:
            pulled = await client.pull(reference)
            await client.pull(reference)  # credentials or token are reused
        assert pulled.layers
        assert registry.challenged == 1  # only the very first request went out without credentials
        assert len([p for p in registry.requests if "/token" in p[1]]) == (1 if scheme == "bearer" else 0)


@pytest.mark.parametrize("scheme", [pytest.param("basic", id="basic"), pytest.param("bearer", id="bearer")])
async def test_wrong_credentials_are_unauthorized(tmp_path: Path, scheme: str) -> None:
    async with serve(FakeRegistry(auth=scheme, users={"alice": "s3cret"}), tmp_path) as (registry, ca):
        registry.push("private/demo", "v1", _catalog(tmp_path))
        keychain = _keychain(registry.host, "alice", "wrong")
        async with _client(tmp_path, ca, keychain=keychain) as client:
            with pytest.raises(oci.Unauthorized, match="refused"):
                await client.resolve(oci.Reference.parse(f"{registry.host}/private/demo:v1"))


async def test_basic_auth_without_credentials_says_a_pull_secret_is_needed(tmp_path: Path) -> None:
    async with serve(FakeRegistry(auth="basic", users={"alice": "s3cret"}), tmp_path) as (registry, ca):
        client = _client(tmp_path, ca)
        async with client:
            with pytest.raises(oci.Unauthorized, match="no pull secret"):
                await client.resolve(oci.Reference.parse(f"{registry.host}/private/demo:v1"))


async def test_anonymous_bearer_token(tmp_path: Path) -> None:
    async with serve(FakeRegistry(auth="bearer"), tmp_path) as (registry, ca):
        image = _catalog(tmp_path)
        registry.push("public/demo", "v1", image)
        async with _client(tmp_path, ca) as client:
            digest = await client.resolve(oci.Reference.parse(f"{registry.host}/public/demo:v1"))
            assert client.statistics().token_requests == 1
        assert str(digest) == image.digest


async def test_index_picks_linux_amd64(fake: tuple[FakeRegistry, Path], tmp_path: Path) -> None:
    registry, ca = fake
    amd64 = _catalog(tmp_path, '{"schema":"olm.package","name":"amd64"}\n')
    arm64 = Image(config=Blob(media_type="application/vnd.oci.image.config.v1+json", data=b"{}"), layers=())
    amd64_digest = registry.push("catalogs/multi", "amd64", amd64)
    arm64_digest = registry.push("catalogs/multi", "arm64", arm64)
    index = {
        "schemaVersion": 2,
        "mediaType": oci.OCI_INDEX,
        "manifests": [
            {
                "mediaType": oci.OCI_MANIFEST,
                "digest": arm64_digest,
                "size": len(arm64.manifest),
                "platform": {"os": "linux", "architecture": "arm64"},
            },
            {
                "mediaType": oci.OCI_MANIFEST,
                "digest": amd64_digest,
                "size": len(amd64.manifest),
                "platform": {"os": "linux", "architecture": "amd64"},
            },
        ],
    }
    index_digest = registry.put_manifest("catalogs/multi", "v1", oci.OCI_INDEX, json.dumps(index).encode())
    async with _client(tmp_path, ca) as client:
        pulled = await client.pull(oci.Reference.parse(f"{registry.host}/catalogs/multi:v1"))
    assert str(pulled.reference.digest) == index_digest
    assert pulled.layers[0][1].read_bytes() == amd64.layers[0].data


async def test_a_refused_connection_is_named_in_the_error(tmp_path: Path) -> None:
    # A port nothing listens on: bound, then closed again.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with oci.RegistryClient(oci.ClientOptions(cache_dir=tmp_path / "c", retry=FAST_RETRY)) as client:
        with pytest.raises(oci.TransientError) as raised:
            await client.resolve(oci.Reference.parse(f"127.0.0.1:{port}/catalogs/demo:v1"))
    assert str(raised.value).endswith(
        ": ClientConnectorError: Connection refused (gave up after 3 attempts)"
    ), raised.value


@pytest.mark.parametrize(
    ("location", "cause"),
    [
        pytest.param("/v2/catalogs/demo/manifests/v1", "too many redirects", id="loop"),
        pytest.param("file:///etc/passwd", "file:///etc/passwd", id="to-a-file-url"),
    ],
)
async def test_a_bad_redirect_is_a_protocol_error(
    fake: tuple[FakeRegistry, Path], tmp_path: Path, location: str, cause: str
) -> None:
    registry, ca = fake
    registry.push("catalogs/demo", "v1", _catalog(tmp_path))
    registry.redirect["/v2/catalogs/demo/manifests/v1"] = location
    async with _client(tmp_path, ca) as client:
        with pytest.raises(oci.ProtocolError, match="the registry redirected badly") as raised:
            await client.resolve(oci.Reference.parse(f"{registry.host}/catalogs/demo:v1"))
    assert cause in str(raised.value)
