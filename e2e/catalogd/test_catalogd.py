"""catalogd as a real process against the real control plane and registry.

One catalogd process serves the whole module (leader election off, webhook on, one poll minute is
one second); each test uses its own catalog names and image repositories.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest

from e2e.catalogd.conftest import (
    Env,
    create_through_webhook,
    fetch_all,
    source_metas,
    webhook_catalog,
    write_catalog,
)
from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG
from olm_runtime import conditions
from olm_runtime.client import GroupVersionKind, errors
from olm_runtime.testing.poll import eventually
from olm_testkit.catalogs import cluster_catalog, push_catalog
from olm_testkit.images.layout import CATALOG_CONFIGS_LABEL, Blob, Image, catalog_image, image_from_directory
from olm_testkit.images.registry import Reference as PushReference
from olm_testkit.names import unique

EVENT = GroupVersionKind("events.k8s.io", "v1", "Event")
REALDATA = Path(__file__).resolve().parents[3] / "shared" / "realdata" / "catalogs"


def _base(catalog: dict[str, Any]) -> str:
    return str(catalog["status"]["urls"]["base"])


async def test_catalog_becomes_serving_with_its_content_status_and_events(
    env: Env,
    tmp_path: Path,
) -> None:
    name, repo = unique("serve"), unique("e2e/serve")
    source = write_catalog(tmp_path / "v1", "serve-pkg", ["1.0.0", "1.1.0"])
    digest_ref = push_catalog(env.pusher, source, f"{env.registry.host}/{repo}:v1")
    await env.catalogs.create(cluster_catalog(name, f"{env.registry.host}/{repo}:v1"))

    served = await env.catalogs.wait_serving(name, digest_ref)
    status = served["status"]
    assert _base(served) == f"{env.catalogd.catalogs_url}/{name}"
    assert status["resolvedSource"] == {"type": "Image", "image": {"ref": digest_ref}}
    assert status["lastUnpacked"].endswith("Z")
    assert "." not in status["lastUnpacked"]
    assert conditions.of(served, "Progressing")["reason"] == "Succeeded"
    assert conditions.of(served, "Serving")["reason"] == "Available"
    assert served["metadata"]["finalizers"] == [names.DELETE_SERVER_CACHE_FINALIZER]
    code, metas = await fetch_all(env.ca, _base(served))
    assert code == 200
    assert metas == source_metas(source)

    async def unpack_events() -> bool:
        listed = await env.kube.list(EVENT, namespace="default", field_selector=f"regarding.name={name}")
        reasons = {item.get("reason") for item in listed.items}
        return {"UnpackStarted", "UnpackSucceeded"} <= reasons

    await eventually(unpack_events, what="UnpackStarted and UnpackSucceeded events")


async def test_a_new_image_pushed_to_the_tag_is_picked_up_by_polling(
    env: Env,
    tmp_path: Path,
) -> None:
    name, ref = unique("poll"), f"{env.registry.host}/{unique('e2e/poll')}:latest"
    first = push_catalog(env.pusher, write_catalog(tmp_path / "v1", "poll-pkg", ["1.0.0"]), ref)
    await env.catalogs.create(cluster_catalog(name, ref, poll_minutes=1))
    await env.catalogs.wait_serving(name, first)

    newer_source = write_catalog(tmp_path / "v2", "poll-pkg", ["1.0.0", "2.0.0"])
    second = push_catalog(env.pusher, newer_source, ref)
    served = await env.catalogs.wait_serving(name, second, timeout=30)
    code, metas = await fetch_all(env.ca, _base(served))
    assert (code, metas) == (200, source_metas(newer_source))


async def test_a_digest_reference_never_polls(
    env: Env,
    tmp_path: Path,
) -> None:
    ref = f"{env.registry.host}/{unique('e2e/digest')}:latest"
    first = push_catalog(env.pusher, write_catalog(tmp_path / "v1", "digest-pkg", ["1.0.0"]), ref)
    pinned, clock = unique("pinned"), unique("clock")
    await env.catalogs.create(cluster_catalog(pinned, first))
    await env.catalogs.create(cluster_catalog(clock, ref, poll_minutes=1))
    await env.catalogs.wait_serving(pinned, first)
    await env.catalogs.wait_serving(clock, first)
    before = await env.catalogs.get(pinned)

    second = push_catalog(env.pusher, write_catalog(tmp_path / "v2", "digest-pkg", ["1.0.0", "2.0.0"]), ref)
    await env.catalogs.wait_serving(clock, second, timeout=30)
    # The tag catalog keeps polling (one manifest HEAD per poll); three more polls later the pinned
    # catalog has not moved and nothing wrote to it.
    polls = await env.catalogd.metric("catalogd_registry_manifest_requests_total")

    async def three_more_polls() -> bool:
        return await env.catalogd.metric("catalogd_registry_manifest_requests_total") >= polls + 3

    await eventually(three_more_polls, what="three more polls of the tag catalog", timeout=30)
    after = await env.catalogs.get(pinned)
    assert after["status"]["resolvedSource"]["image"]["ref"] == first
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


def _no_label_image(directory: Path) -> Any:
    return image_from_directory(directory, prefix="configs", labels={})


def _corrupt_layer_image(directory: Path) -> Any:
    image = catalog_image(directory)
    garbage = Blob(
        media_type=image.layers[0].media_type, data=gzip.compress(b"this is not a tar archive" * 40)
    )
    return dataclasses.replace(image, layers=(garbage,))


@dataclasses.dataclass(frozen=True, kw_only=True)
class _SizeLyingImage(Image):
    """An image whose manifest gives its layer a size one byte larger than the blob."""

    @property
    def manifest(self) -> bytes:
        manifest = json.loads(super().manifest)
        manifest["layers"][0]["size"] += 1
        return json.dumps(manifest, separators=(",", ":")).encode()


def _size_mismatch_image(directory: Path) -> Any:
    image = catalog_image(directory)
    return _SizeLyingImage(config=image.config, layers=image.layers)


def _invalid_fbc_image(directory: Path) -> Any:
    broken = directory.parent / "invalid"
    broken.mkdir()
    # Two definitions of one bundle: still refused (upstream's resolver would keep only the last).
    bundle = {"schema": "olm.bundle", "name": "twice.v1", "package": "twice", "image": "r.io/twice:1"}
    (broken / "catalog.json").write_text(json.dumps(bundle) + "\n" + json.dumps(bundle) + "\n")
    return catalog_image(broken)


@pytest.mark.parametrize(
    ("build", "says"),
    [
        pytest.param(_no_label_image, CATALOG_CONFIGS_LABEL, id="no-configs-label"),
        pytest.param(_corrupt_layer_image, "not a readable tar archive", id="corrupt-layer"),
        pytest.param(_invalid_fbc_image, "invalid File-Based Catalog", id="invalid-fbc"),
        pytest.param(_size_mismatch_image, "its descriptor says", id="layer-size-mismatch"),
    ],
)
async def test_a_broken_new_image_keeps_the_old_content_served_and_says_why(
    env: Env,
    tmp_path: Path,
    build: Any,
    says: str,
) -> None:
    name, ref = unique("broken"), f"{env.registry.host}/{unique('e2e/broken')}:latest"
    good = write_catalog(tmp_path / "good", "broken-pkg", ["1.0.0"])
    first = push_catalog(env.pusher, good, ref)
    await env.catalogs.create(cluster_catalog(name, ref, poll_minutes=1))
    await env.catalogs.wait_serving(name, first)

    env.pusher.push(build(tmp_path / "good"), PushReference.parse(ref))

    def retrying(obj: dict[str, Any]) -> bool:
        progressing = conditions.of(obj, "Progressing")
        return progressing.get("reason") == "Retrying" and says in progressing.get("message", "")

    failing = await env.catalogs.wait(name, f"Progressing=Retrying mentioning {says!r}", retrying, timeout=30)
    assert conditions.of(failing, "Serving")["status"] == "True"
    assert failing["status"]["resolvedSource"]["image"]["ref"] == first
    assert (await fetch_all(env.ca, _base(failing))) == (200, source_metas(good))

    async def failure_event() -> bool:
        listed = await env.kube.list(EVENT, namespace="default", field_selector=f"regarding.name={name}")
        return any(e.get("reason") == "UnpackFailed" and e.get("type") == "Warning" for e in listed.items)

    await eventually(failure_event, what="an UnpackFailed Warning event")
    message = conditions.of(failing, "Progressing")["message"]
    assert "127.0.0.1:" not in message.replace(env.registry.host, "<registry>")  # no ephemeral addresses

    fixed_source = write_catalog(tmp_path / "fixed", "broken-pkg", ["1.0.0", "1.0.1"])
    fixed = push_catalog(env.pusher, fixed_source, ref)
    served = await env.catalogs.wait_serving(name, fixed, timeout=30)
    assert conditions.of(served, "Progressing")["reason"] == "Succeeded"


async def test_unavailable_stops_serving_and_available_serves_again(
    env: Env,
    tmp_path: Path,
) -> None:
    name, ref = unique("toggle"), f"{env.registry.host}/{unique('e2e/toggle')}:v1"
    source = write_catalog(tmp_path / "v1", "toggle-pkg", ["1.0.0"])
    digest_ref = push_catalog(env.pusher, source, ref)
    await env.catalogs.create(cluster_catalog(name, ref))
    base = _base(await env.catalogs.wait_serving(name, digest_ref))

    await env.kube.patch(CLUSTER_CATALOG, name, {"spec": {"availabilityMode": "Unavailable"}})

    def unavailable(obj: dict[str, Any]) -> bool:
        return conditions.of(obj, "Serving").get("reason") == "UserSpecifiedUnavailable"

    stopped = await env.catalogs.wait(name, "Serving=False/UserSpecifiedUnavailable", unavailable)
    assert conditions.of(stopped, "Serving")["status"] == "False"
    assert "resolvedSource" not in stopped["status"]
    assert "urls" not in stopped["status"]
    assert (await fetch_all(env.ca, base))[0] == 404
    assert not (env.catalogd.storage_dir / "catalogs" / name).exists()

    await env.kube.patch(CLUSTER_CATALOG, name, {"spec": {"availabilityMode": "Available"}})
    served = await env.catalogs.wait_serving(name, digest_ref)
    assert (await fetch_all(env.ca, _base(served))) == (200, source_metas(source))


async def test_deletion_removes_the_content_then_the_finalizer(
    env: Env,
    tmp_path: Path,
) -> None:
    name, ref = unique("delete"), f"{env.registry.host}/{unique('e2e/delete')}:v1"
    digest_ref = push_catalog(env.pusher, write_catalog(tmp_path / "v1", "delete-pkg", ["1.0.0"]), ref)
    await env.catalogs.create(cluster_catalog(name, ref))
    base = _base(await env.catalogs.wait_serving(name, digest_ref))

    await env.kube.delete(CLUSTER_CATALOG, name)

    async def gone() -> bool:
        try:
            await env.kube.get(CLUSTER_CATALOG, name)
        except errors.NotFound:
            return True
        return False

    await eventually(gone, what="the ClusterCatalog to be deleted (finalizer removed)")
    assert (await fetch_all(env.ca, base))[0] == 404
    assert not (env.catalogd.storage_dir / "catalogs" / name).exists()
    assert not (env.catalogd.storage_dir / "unpack" / name).exists()


async def test_the_webhook_labels_catalogs_with_their_name(env: Env, webhook: str) -> None:
    name = unique("labelled")
    await create_through_webhook(env, webhook_catalog(name, webhook))
    # An update that removes the label gets it back.
    patch = {"metadata": {"labels": {names.METADATA_NAME_LABEL: None, "other": "x"}}}
    updated = await env.kube.patch(CLUSTER_CATALOG, name, patch)
    assert updated["metadata"]["labels"] == {
        "e2e-webhook": webhook,
        "other": "x",
        names.METADATA_NAME_LABEL: name,
    }


async def test_a_restarted_catalogd_serves_again_without_downloading_blobs_again(
    env: Env,
    tmp_path: Path,
) -> None:
    kept, rebuilt = unique("kept"), unique("rebuilt")
    ref = f"{env.registry.host}/{unique('e2e/restart')}:v1"
    source = write_catalog(tmp_path / "v1", "restart-pkg", ["1.0.0", "1.2.0"])
    digest_ref = push_catalog(env.pusher, source, ref)
    await env.catalogs.create(cluster_catalog(kept, ref))
    await env.catalogs.create(cluster_catalog(rebuilt, digest_ref))
    await env.catalogs.wait_serving(kept, digest_ref)
    await env.catalogs.wait_serving(rebuilt, digest_ref)
    kept_version = os.readlink(env.catalogd.storage_dir / "catalogs" / kept / "current")

    assert env.catalogd.stop() == 0  # SIGTERM: a graceful, successful exit
    # One catalog's served content is lost while catalogd is down: it must be rebuilt from the blob cache.
    for entry in (env.catalogd.storage_dir / "catalogs" / rebuilt).iterdir():
        if entry.is_symlink():
            entry.unlink()
    env.catalogd.start()
    await env.catalogd.wait_ready()

    # Stored content is served as soon as catalogd is ready; lost content once a reconcile rebuilt it.
    assert (await fetch_all(env.ca, f"{env.catalogd.catalogs_url}/{kept}")) == (200, source_metas(source))

    async def rebuilt_served() -> bool:
        return (await fetch_all(env.ca, f"{env.catalogd.catalogs_url}/{rebuilt}")) == (
            200,
            source_metas(source),
        )

    await eventually(rebuilt_served, what=f"catalog {rebuilt} to be rebuilt from the blob cache", timeout=30)
    assert await env.catalogd.metric("catalogd_registry_blob_requests_total") == 0
    assert await env.catalogd.metric("catalogd_registry_blob_cache_hits_total") >= 1
    assert os.readlink(env.catalogd.storage_dir / "catalogs" / kept / "current") == kept_version


REAL_CATALOG_ROOTS = (
    "community-operators-prod-v4.20",
    "compliance-operator-fbc/v4.16-bundle-object",
    "compliance-operator-fbc/v4.20-csv-metadata",
    "kueue-fbc-v4.20",
    "upstream-example-deprecations-grokspawn",
    "upstream-fixture-operator-controller-e2e-test-catalog/v1/configs",
    "upstream-fixture-operator-controller-e2e-test-catalog/v2/configs",
)
"""Each a whole catalog (some directories of the real data hold several versions side by side)."""


def _real_catalogs() -> list[Any]:
    if not REALDATA.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{REALDATA} is absent"), id="absent")]
    return [pytest.param(REALDATA / root, id=root.replace("/", "-")) for root in REAL_CATALOG_ROOTS]


@pytest.mark.parametrize("source", _real_catalogs())
async def test_real_catalogs_are_served_unchanged(
    env: Env,
    source: Path,
) -> None:
    name = unique("real")
    ref = f"{env.registry.host}/e2e/real/{unique('catalog')}:v1"
    digest_ref = push_catalog(env.pusher, source, ref)
    await env.catalogs.create(cluster_catalog(name, ref))
    served = await env.catalogs.wait_serving(name, digest_ref, timeout=120)
    code, metas = await fetch_all(env.ca, _base(served))
    assert code == 200
    assert metas == source_metas(source)


UPSTREAM_SERVES = [
    {"schema": "olm.package", "name": "lax", "defaultChannel": "gone"},
    {"schema": "olm.channel", "package": "lax", "name": "stable", "entries": [{"name": "lax.v2"}, {}]},
    {
        "schema": "olm.bundle",
        "package": "lax",
        "name": "lax.v1",
        "image": "r.io/lax:1",
        "properties": [{"type": "olm.package", "value": {"packageName": "other", "version": "v1"}}],
    },
    {"schema": "olm.bundle", "package": "lax", "name": "lax.v3", "properties": "not-a-list"},
    {"schema": "olm.channel", "package": "undeclared", "name": "stable", "entries": []},
    {
        "schema": "olm.deprecations",
        "package": "lax",
        "entries": [{"reference": {"schema": "olm.bundle", "name": "x"}}],
    },
]
"""Breaks every model rule upstream's catalogd does not apply (docs/compat/catalog-rules.md)."""


async def test_a_catalog_upstream_serves_is_served_unchanged(env: Env, tmp_path: Path) -> None:
    source = tmp_path / "lax"
    source.mkdir()
    (source / "catalog.json").write_text("".join(json.dumps(o) + "\n" for o in UPSTREAM_SERVES))
    name, ref = unique("lax"), f"{env.registry.host}/{unique('e2e/lax')}:v1"
    digest_ref = push_catalog(env.pusher, source, ref)
    await env.catalogs.create(cluster_catalog(name, ref))
    served = await env.catalogs.wait_serving(name, digest_ref)
    assert (await fetch_all(env.ca, _base(served))) == (200, source_metas(source))
