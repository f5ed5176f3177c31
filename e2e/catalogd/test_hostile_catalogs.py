"""Hostile ClusterCatalogs the API server admits and only catalogd can judge, and its webhook's cases.

Each named case creates one ClusterCatalog against a real catalogd process and the real registry.
The expected outcome is the `Progressing` condition catalogd writes (status, reason and a substring
of its message), with nothing served; the webhook cases expect the API server's answer once the
name label is added. `e2e/api/test_hostile_specs.py` holds what admission alone refuses.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from e2e.catalogd.conftest import Env, create_through_webhook, webhook_catalog
from olm.api import names
from olm_runtime import conditions
from olm_runtime.client import errors
from olm_testkit.catalogs import cluster_catalog
from olm_testkit.images.layout import CATALOG_CONFIGS_LABEL, Blob, Image
from olm_testkit.images.registry import Reference as PushReference
from olm_testkit.names import unique

pytestmark = pytest.mark.e2e

BLOCKED = ("False", "Blocked")
RETRYING = ("True", "Retrying")


def _image(files: dict[str, bytes], labels: dict[str, str]) -> Image:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    config = json.dumps({"config": {"Labels": labels}}).encode()
    return Image(
        config=Blob(media_type="application/vnd.oci.image.config.v1+json", data=config),
        layers=(Blob(media_type="application/vnd.oci.image.layer.v1.tar", data=buffer.getvalue()),),
    )


def _pushed(image: Callable[[str], Image]) -> Callable[[Env, str], str]:
    """A case's ref: `image(nonce)` pushed to a fresh repository, by digest."""

    def ref(env: Env, nonce: str) -> str:
        repository = f"{env.registry.host}/e2e/hostile-{nonce}"
        digest = env.pusher.push(image(nonce), PushReference.parse(f"{repository}:v1"))
        return f"{repository}@{digest}"

    return ref


def _catalog(nonce: str) -> bytes:
    return json.dumps({"schema": "olm.package", "name": f"hostile-{nonce}"}).encode()


@dataclass(frozen=True)
class Case:
    id: str
    ref: Callable[[Env, str], str]
    """The `spec.source.image.ref`, given the environment and a nonce unique to the test."""
    progressing: tuple[str, str]
    """The `Progressing` condition's status and reason."""
    message: str


CASES_TABLE = [
    Case(
        "ref-uppercase-digest",
        lambda env, n: f"{env.registry.host}/e2e/{n}@sha256:" + "AB" * 32,
        BLOCKED,
        "is not a valid sha256 digest (64 lowercase hex digits)",
    ),
    Case(
        "ref-md5-digest",
        lambda env, n: f"{env.registry.host}/e2e/{n}@md5:" + "ab" * 16,
        BLOCKED,
        "digest algorithm 'md5' is not supported",
    ),
    Case(
        "ref-32-hex-digest",
        lambda env, n: f"{env.registry.host}/e2e/{n}@sha256:" + "ab" * 16,
        BLOCKED,
        "is not a valid sha256 digest",
    ),
    Case(
        "ref-repository-over-255-chars",
        lambda env, n: f"{env.registry.host}/e2e/{n}/" + "a" * 300 + ":v1",
        BLOCKED,
        "the repository name is longer than 255 characters",
    ),
    Case(
        "ref-port-out-of-range",
        lambda _, n: f"localhost:99999/e2e/{n}:v1",
        BLOCKED,
        "port 99999 is out of range",
    ),
    Case("ref-tag-not-in-registry", lambda env, n: f"{env.registry.host}/e2e/{n}:v1", RETRYING, "not found"),
    Case(
        "ref-digest-not-in-registry",
        lambda env, n: f"{env.registry.host}/e2e/{n}@sha256:" + hashlib.sha256(n.encode()).hexdigest(),
        BLOCKED,
        "not found",
    ),
    Case(
        "image-without-configs-label",
        _pushed(lambda n: _image({"configs/catalog.json": _catalog(n)}, {})),
        BLOCKED,
        "is not a catalog image",
    ),
    Case(
        "image-with-path-traversal",
        _pushed(
            lambda n: _image({"configs/../../../etc/x": _catalog(n)}, {CATALOG_CONFIGS_LABEL: "/configs"})
        ),
        BLOCKED,
        "'..' in a path is not allowed",
    ),
    Case(
        "image-with-invalid-catalog",
        _pushed(
            lambda n: _image(
                {"configs/catalog.json": b'{"schema": "olm.package"'}, {CATALOG_CONFIGS_LABEL: "/configs"}
            )
        ),
        BLOCKED,
        "invalid File-Based Catalog",
    ),
]


@pytest.mark.parametrize("case", [pytest.param(case, id=case.id) for case in CASES_TABLE])
async def test_hostile_catalog(env: Env, case: Case) -> None:
    nonce = unique("n")
    name = unique("hostile")
    await env.catalogs.create(cluster_catalog(name, case.ref(env, nonce)))

    def judged(obj: dict[str, Any]) -> bool:
        progressing = conditions.of(obj, "Progressing")
        return (progressing.get("status"), progressing.get("reason")) == case.progressing and (
            case.message in progressing.get("message", "")
        )

    found = await env.catalogs.wait(name, f"Progressing={case.progressing} saying {case.message!r}", judged)
    assert conditions.of(found, "Serving").get("status") != "True"
    assert "urls" not in found["status"]  # nothing served, not even in part


async def test_webhook_overwrites_a_forged_name_label(env: Env, webhook: str) -> None:
    name = unique("forged")
    created = await create_through_webhook(
        env, webhook_catalog(name, webhook, **{names.METADATA_NAME_LABEL: "operatorhubio"})
    )
    assert created["metadata"]["labels"][names.METADATA_NAME_LABEL] == name


async def test_webhook_name_over_63_chars_is_refused_whole(env: Env, webhook: str) -> None:
    await create_through_webhook(env, webhook_catalog(unique("ready"), webhook))  # the webhook is called
    name = unique("long") + "-" + "x" * 60
    with pytest.raises(errors.Invalid) as caught:
        await env.catalogs.create(webhook_catalog(name, webhook))
    # The label the webhook adds carries the name, and label values stop at 63 characters.
    assert "metadata.labels: Invalid value" in str(caught.value)
    assert "must be no more than 63 bytes" in str(caught.value)
    with pytest.raises(errors.NotFound):
        await env.catalogs.get(name)


CASES = len(CASES_TABLE) + 2
"""The table's cases and the two webhook cases."""
ACCEPTED = ["webhook-forged-name-label"]
