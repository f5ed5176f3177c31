"""A running registry client takes new credentials (`use_keychain`) and new CA bundles (`TrustStore`)
for its next request, against a TLS registry on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from olm import oci
from olm_runtime.testing.pki import CertificateAuthority
from olm_testkit.images.layout import catalog_image
from olm_testkit.kubeletvolume import project
from unit.oci.fakeregistry import FakeRegistry, serve

FAST_RETRY = oci.RetryPolicy(attempts=1)


def _keychain(host: str, user: str, password: str) -> oci.Keychain:
    return oci.Keychain.from_dockerconfigjson(
        json.dumps({"auths": {host: {"username": user, "password": password}}})
    )


def _push(registry: FakeRegistry, tmp_path: Path) -> oci.Reference:
    (tmp_path / "fbc").mkdir(exist_ok=True)
    (tmp_path / "fbc" / "catalog.json").write_text('{"schema":"olm.package","name":"p"}\n')
    registry.push("private/demo", "v1", catalog_image(tmp_path / "fbc"))
    return oci.Reference.parse(f"{registry.host}/private/demo:v1")


def _client(tmp_path: Path, **options: object) -> oci.RegistryClient:
    settings: dict[str, object] = {"cache_dir": tmp_path / "cache", "retry": FAST_RETRY, **options}
    return oci.RegistryClient(oci.ClientOptions(**settings))  # type: ignore[arg-type]


# --- credentials -------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", [pytest.param("basic", id="basic"), pytest.param("bearer", id="bearer")])
async def test_a_new_keychain_is_used_by_the_next_request(tmp_path: Path, scheme: str) -> None:
    async with serve(FakeRegistry(auth=scheme, users={"alice": "s3cret"}), tmp_path) as (registry, ca):
        reference = _push(registry, tmp_path)
        async with _client(
            tmp_path, ca_files=(ca,), keychain=_keychain(registry.host, "alice", "wrong")
        ) as client:
            with pytest.raises(oci.Unauthorized, match="refused"):
                await client.resolve(reference)
            client.use_keychain(_keychain(registry.host, "alice", "s3cret"))
            assert await client.resolve(reference)


async def test_a_removed_keychain_forgets_what_it_logged_in_with(tmp_path: Path) -> None:
    async with serve(FakeRegistry(auth="basic", users={"alice": "s3cret"}), tmp_path) as (registry, ca):
        reference = _push(registry, tmp_path)
        async with _client(
            tmp_path, ca_files=(ca,), keychain=_keychain(registry.host, "alice", "s3cret")
        ) as client:
            await client.resolve(reference)
            client.use_keychain(oci.Keychain())  # the pull Secret was deleted
            with pytest.raises(oci.Unauthorized, match="no pull secret"):
                await client.resolve(reference)


async def test_an_equal_keychain_keeps_the_tokens(tmp_path: Path) -> None:
    async with serve(FakeRegistry(auth="bearer", users={"alice": "s3cret"}), tmp_path) as (registry, ca):
        reference = _push(registry, tmp_path)
        async with _client(
            tmp_path, ca_files=(ca,), keychain=_keychain(registry.host, "alice", "s3cret")
        ) as client:
            await client.resolve(reference)
            client.use_keychain(_keychain(registry.host, "alice", "s3cret"))  # rewritten as it was
            await client.resolve(reference)
            assert client.statistics().token_requests == 1
            client.use_keychain(
                _keychain(registry.host, "alice", "s3cret").merged(_keychain("other", "b", "c"))
            )
            await client.resolve(reference)
            assert client.statistics().token_requests == 2


# --- trust -------------------------------------------------------------------------------------


async def test_a_ca_written_into_the_directory_is_trusted_by_the_next_request(tmp_path: Path) -> None:
    async with serve(FakeRegistry(), tmp_path) as (registry, ca):
        reference = _push(registry, tmp_path)
        cas = tmp_path / "cas"
        unrelated = CertificateAuthority.load_or_create(tmp_path / "unrelated")
        project(cas, {"ca.crt": unrelated.cert_pem})
        async with _client(tmp_path, ca_dir=cas) as client:
            with pytest.raises(oci.TLSVerificationFailed):
                await client.resolve(reference)
            project(cas, {"ca.crt": ca.read_bytes()})
            assert await client.resolve(reference)
            project(
                cas, {"ca.crt": unrelated.cert_pem}
            )  # trust taken away again: no pooled connection is reused
            with pytest.raises(oci.TLSVerificationFailed):
                await client.resolve(reference)


def test_the_context_is_rebuilt_only_when_a_bundle_changes(tmp_path: Path) -> None:
    first = CertificateAuthority.load_or_create(tmp_path / "first")
    second = CertificateAuthority.load_or_create(tmp_path / "second")
    cas = tmp_path / "cas"
    project(cas, {"ca.crt": first.cert_pem})
    trust = oci.TrustStore(directory=cas)
    context = trust.context()
    assert trust.context() is context
    assert trust.generation == 1

    project(cas, {"ca.crt": second.cert_pem})
    assert trust.context() is not context
    assert trust.generation == 2
    project(cas, {"ca.crt": second.cert_pem, "more.pem": first.cert_pem})
    assert len(trust.context().get_ca_certs()) >= 2
    assert trust.generation == 3


def test_an_unloadable_bundle_is_named_until_it_is_fixed(tmp_path: Path) -> None:
    good = CertificateAuthority.load_or_create(tmp_path / "good")
    cas = tmp_path / "cas"
    project(cas, {"ca.crt": good.cert_pem, "broken.pem": b"not a certificate\n"})
    trust = oci.TrustStore(directory=cas)
    for _ in range(2):  # the failure is remembered, not rebuilt on each call
        with pytest.raises(oci.TLSVerificationFailed, match=r"the CA bundle .*broken\.pem cannot be loaded"):
            trust.context()
    assert trust.generation == 1
    project(cas, {"ca.crt": good.cert_pem})
    assert trust.context()


def test_bundle_files_of_a_mounted_configmap_are_its_keys(tmp_path: Path) -> None:
    project(tmp_path, {"ca.crt": b"x", "extra.pem": b"y", "README": b"z"})
    assert oci.bundle_files(tmp_path) == (tmp_path / "ca.crt", tmp_path / "extra.pem")
    assert oci.bundle_files(tmp_path / "absent") == ()
    assert oci.bundle_files(None) == ()
