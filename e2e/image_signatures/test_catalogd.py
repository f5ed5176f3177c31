"""catalogd verifies catalog images against its `--signature-policy` before it unpacks them.

One catalogd for the module, with a policy whose scopes are namespaces of one repository prefix in
the session's registry: `signed` requires a cosign signature by the `trusted` key (default
`signedIdentity`, images pulled by digest), `by-tag` the same with `matchRepository` (images pulled
by tag, as cosign signs the repository name without a tag), `rejected` refuses everything, and the
global default accepts anything. A refused image leaves the catalog `Progressing=True/Retrying`
with a message naming the image, the rule and the scope, and nothing of it past its manifest is
downloaded (its config and layers are not in the blob cache).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from e2e.catalogd.conftest import Catalogs, write_catalog
from e2e.image_signatures.conftest import LABELS, SCOPE, sigstore_signed, write_policy
from olm import oci
from olm_runtime import conditions
from olm_runtime.client import Client
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.registry import Registry
from olm_testkit.catalogs import cluster_catalog, push_catalog
from olm_testkit.cosign import Cosign, KeyPair
from olm_testkit.images.registry import RegistryClient as PushClient
from olm_testkit.names import unique
from olm_testkit.processes import CatalogdProcess


@dataclass(frozen=True)
class Signed:
    """The module's catalogd and the registry namespaces its policy names."""

    process: CatalogdProcess
    host: str
    prefix: str

    def scope(self, namespace: str) -> str:
        return f"{self.host}/{self.prefix}/{namespace}"


@pytest.fixture(scope="module")
async def signed(
    control_plane: ControlPlane,
    olm_crds: None,
    registry: Registry,
    trusted: KeyPair,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Signed]:
    workdir = tmp_path_factory.mktemp("catalogd-signatures")
    prefix = unique("e2e-sig")
    scope = f"{registry.host}/{prefix}"
    policy = write_policy(
        workdir / "policy" / "policy.json",
        {
            f"{scope}/signed": sigstore_signed(trusted),
            f"{scope}/by-tag": sigstore_signed(trusted, type="matchRepository"),
            f"{scope}/rejected": [{"type": "reject"}],
        },
    )
    process = CatalogdProcess(
        control_plane, workdir, scope_selector=SCOPE, extra_args=(f"--signature-policy={policy}",)
    )
    async with process.running():
        yield Signed(process, registry.host, prefix)


@contextlib.asynccontextmanager
async def catalogs_of(signed: Signed, kube: Client) -> AsyncIterator[Catalogs]:
    catalogs = Catalogs(kube)
    try:
        yield catalogs
    except AssertionError as error:
        raise AssertionError(f"{error}\n--- catalogd log ---\n{signed.process.log_tail(120)}") from None
    finally:
        await catalogs.delete_all()


def push(pusher: PushClient, signed: Signed, tmp_path: Path, namespace: str) -> str:
    """A new catalog image (content of its own: no blob of it is cached yet) in
    `<prefix>/<namespace>/<unique>:v1`; its digest reference."""
    directory = write_catalog(tmp_path / unique("fbc"), unique("package"), ["1.0.0"])
    return push_catalog(pusher, directory, f"{signed.scope(namespace)}/{unique('catalog')}:v1")


def progressing(contains: str) -> Any:
    def check(catalog: dict[str, Any]) -> bool:
        condition = conditions.of(catalog, "Progressing")
        return condition.get("reason") == "Retrying" and contains in str(condition.get("message", ""))

    return check


def assert_nothing_downloaded(signed: Signed, pusher: PushClient, digest_ref: str) -> None:
    """None of the image's config and layers is in catalogd's blob cache, and nothing is unpacked."""
    reference = oci.Reference.parse(digest_ref)
    assert reference.digest is not None
    manifest = orjson.loads(pusher.manifest(reference.repository, str(reference.digest)))
    blobs = oci.BlobCache(signed.process.storage_dir / "blobs")
    for descriptor in (manifest["config"], *manifest["layers"]):
        assert blobs.get(oci.Digest.parse(descriptor["digest"])) is None, descriptor
    assert not list((signed.process.storage_dir / "unpack").glob("*/*")), "something was unpacked"


async def test_a_catalog_image_signed_by_the_trusted_key_is_served(
    kube: Client, *, pusher: PushClient, signed: Signed, cosign: Cosign, trusted: KeyPair, tmp_path: Path
) -> None:
    ref = push(pusher, signed, tmp_path, "signed")
    cosign.sign(trusted, ref)
    async with catalogs_of(signed, kube) as catalogs:
        name = unique("signed")
        await catalogs.create(cluster_catalog(name, ref, labels=LABELS))
        await catalogs.wait_serving(name, ref)


async def test_a_tag_is_served_when_the_scope_matches_the_signed_repository(
    kube: Client, *, pusher: PushClient, signed: Signed, cosign: Cosign, trusted: KeyPair, tmp_path: Path
) -> None:
    digest_ref = push(pusher, signed, tmp_path, "by-tag")
    cosign.sign(trusted, digest_ref)
    tag_ref = f"{digest_ref.partition('@')[0]}:v1"
    async with catalogs_of(signed, kube) as catalogs:
        name = unique("by-tag")
        await catalogs.create(cluster_catalog(name, tag_ref, labels=LABELS))
        await catalogs.wait_serving(name, digest_ref)


async def test_an_unsigned_image_is_refused_until_it_is_signed(
    kube: Client, *, pusher: PushClient, signed: Signed, cosign: Cosign, trusted: KeyPair, tmp_path: Path
) -> None:
    ref = push(pusher, signed, tmp_path, "signed")
    reference = oci.Reference.parse(ref)
    assert reference.digest is not None
    signature_tag = f"{reference.name}:{reference.digest.algorithm}-{reference.digest.hex}.sig"
    expected = (
        f'image {ref} rejected by the signature policy: sigstoreSigned for scope "{signed.scope("signed")}": '
        f"no signature ({signature_tag} does not exist)"
    )
    async with catalogs_of(signed, kube) as catalogs:
        name = unique("unsigned")
        await catalogs.create(cluster_catalog(name, ref, labels=LABELS))
        found = await catalogs.wait(name, "the unsigned image refused", progressing(expected))
        assert conditions.of(found, "Serving").get("status") == "False"
        assert "resolvedSource" not in found.get("status", {})
        assert_nothing_downloaded(signed, pusher, ref)

        cosign.sign(trusted, ref)  # the retry after the backoff finds it
        await catalogs.wait_serving(name, ref, timeout=120)


async def test_an_image_signed_by_another_key_is_refused(
    kube: Client, *, pusher: PushClient, signed: Signed, cosign: Cosign, untrusted: KeyPair, tmp_path: Path
) -> None:
    ref = push(pusher, signed, tmp_path, "signed")
    cosign.sign(untrusted, ref)
    expected = (
        f'image {ref} rejected by the signature policy: sigstoreSigned for scope "{signed.scope("signed")}": '
        "no signature accepted of 1: not signed by a key the policy trusts"
    )
    async with catalogs_of(signed, kube) as catalogs:
        name = unique("untrusted")
        await catalogs.create(cluster_catalog(name, ref, labels=LABELS))
        found = await catalogs.wait(name, "the wrongly signed image refused", progressing(expected))
        assert conditions.of(found, "Serving").get("status") == "False"
        assert_nothing_downloaded(signed, pusher, ref)


async def test_a_reject_scope_refuses_even_a_signed_image(
    kube: Client, *, pusher: PushClient, signed: Signed, cosign: Cosign, trusted: KeyPair, tmp_path: Path
) -> None:
    ref = push(pusher, signed, tmp_path, "rejected")
    cosign.sign(trusted, ref)
    expected = (
        f'image {ref} rejected by the signature policy: reject for scope "{signed.scope("rejected")}": '
        "images of this scope are rejected"
    )
    async with catalogs_of(signed, kube) as catalogs:
        name = unique("rejected")
        await catalogs.create(cluster_catalog(name, ref, labels=LABELS))
        await catalogs.wait(name, "the image of a reject scope refused", progressing(expected))
        assert_nothing_downloaded(signed, pusher, ref)


async def test_the_insecure_accept_anything_default_serves_an_unsigned_image(
    kube: Client, *, pusher: PushClient, signed: Signed, tmp_path: Path
) -> None:
    ref = push(pusher, signed, tmp_path, "elsewhere")
    async with catalogs_of(signed, kube) as catalogs:
        name = unique("default")
        await catalogs.create(cluster_catalog(name, ref, labels=LABELS))
        await catalogs.wait_serving(name, ref)
