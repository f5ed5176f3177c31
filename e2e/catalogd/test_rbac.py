"""catalogd's shipped RBAC is exactly what it uses, as the API server's audit log shows.

Two catalogd replicas run as the `catalogd` ServiceAccount of `manifests/catalogd` (a token of it,
nothing more), with leader election on a Lease in `olmv1-system` and the global pull Secret flag
of the shipped Deployment, and take one ClusterCatalog through its whole life: created and served,
a new image found by polling its tag, its spec changed to another image, made Unavailable and
Available again (so an Event repeats and its series is patched), the leader stopped so the other
replica takes over, deleted by the new leader (the finalizer path), both replicas stopped (the
Lease released). Secure `/metrics` is scraped on both (token and access reviews).

Then every request made with that token, read from the audit log, must be allowed and covered by a
rule of a role bound to the ServiceAccount, and every verb of every rule must have been used by at
least one request, but for the few in `NOT_EXERCISED`, each a path this lifecycle cannot reach.
`unit/catalogd/test_manifests.py` pins the rules themselves.

The replicas reconcile only catalogs labelled with this test's scope (`OLM_TESTING_SCOPE_SELECTOR`),
and every other catalogd of the suite ignores such catalogs, so none needs to be stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from e2e.catalogd.conftest import write_catalog
from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG
from olm.process import testing_seams
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing import settle
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit import audit
from olm_testkit.catalogs import cluster_catalog, delete_catalog, push_catalog, wait_catalog, wait_serving
from olm_testkit.deploy import kustomize
from olm_testkit.images.registry import RegistryClient as PushClient
from olm_testkit.names import unique
from olm_testkit.processes import CatalogdProcess, token_kubeconfig

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests" / "catalogd"
SERVICE_ACCOUNT = "catalogd"
USERNAME = f"system:serviceaccount:{names.DEFAULT_SYSTEM_NAMESPACE}:{SERVICE_ACCOUNT}"
FIELD_MANAGER = "e2e-manifests"
RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
_LEADING = re.compile(r"^leader_election_master_status\{[^}]*\} 1\.0$", re.MULTILINE)

NOT_EXERCISED = {
    ("list", "clustercatalogs"): (
        "the informer's paged list: it starts with a streaming list (a watch with sendInitialEvents), "
        "and lists only when the API server refuses those (WatchList off) or one fails"
    ),
    ("list", "secrets"): "the pull Secret informer's paged list, for the same reason",
}
"""Verbs (on a resource) that the role must grant for a path this test cannot reach, and why."""


def _shipped_rbac() -> list[dict[str, Any]]:
    return [d for d in kustomize.build(MANIFESTS) if d["kind"] in RBAC_KINDS]


@pytest.fixture
async def service_account_kubeconfig(kube: Client, control_plane: ControlPlane, tmp_path: Path) -> Path:
    """The shipped ServiceAccount and RBAC applied, in effect; a kubeconfig with a token of it."""
    rbac = _shipped_rbac()
    for document in rbac:
        await kube.apply(document, field_manager=FIELD_MANAGER, force=True)
    await settle.granted(kube, rbac)
    return await token_kubeconfig(
        kube,
        control_plane,
        namespace=names.DEFAULT_SYSTEM_NAMESPACE,
        name=SERVICE_ACCOUNT,
        path=tmp_path / "kubeconfig",
    )


@pytest.fixture
async def replicas(
    control_plane: ControlPlane, olm_crds: None, service_account_kubeconfig: Path, tmp_path: Path
) -> AsyncIterator[tuple[str, list[CatalogdProcess]]]:
    """The test's scope label value and two replicas as the shipped ServiceAccount (not started)."""
    scope = unique("rbac")
    lease = unique("catalogd-rbac")
    processes = [
        CatalogdProcess(
            control_plane,
            tmp_path / f"replica{i}",
            leader_elect=True,
            lease_namespace=names.DEFAULT_SYSTEM_NAMESPACE,
            lease_name=lease,
            kubeconfig=service_account_kubeconfig,
            scope_selector=f"{testing_seams.SCOPE_LABEL}={scope}",
            # As the shipped Deployment: the name its Role lets it watch (absent here: anonymous pulls).
            extra_args=(f"--global-pull-secret={names.DEFAULT_SYSTEM_NAMESPACE}/olm-global-pull-secret",),
        )
        for i in range(2)
    ]
    try:
        yield scope, processes
    finally:
        for process in processes:
            process.stop()


async def _leads(process: CatalogdProcess) -> bool:
    """Whether the replica holds the Lease, from its secure /metrics (a token and an access review)."""
    return _LEADING.search(await process.scrape()) is not None


async def _series_count(kube: Client, catalog: str, reason: str) -> int:
    """The highest occurrence count of catalogd's Events `reason` about `catalog` (1 without series)."""
    listed = await kube.list(kinds.EVENTS_EVENT, namespace="default")
    return max(
        (
            int((e.get("series") or {}).get("count") or 1)
            for e in listed.items
            if (e.get("regarding") or {}).get("name") == catalog
            and e.get("reportingController") == "catalogd"
            and e.get("reason") == reason
        ),
        default=0,
    )


async def _has_series(kube: Client, name: str) -> bool:
    return await _series_count(kube, name, "UnpackStarted") >= 2


async def _gone(kube: Client, name: str) -> bool:
    try:
        await kube.get(CLUSTER_CATALOG, name)
    except errors.NotFound:
        return True
    return False


async def test_every_request_is_covered_and_every_rule_is_used(
    *,
    kube: Client,
    control_plane: ControlPlane,
    registry: Registry,
    pusher: PushClient,
    replicas: tuple[str, list[CatalogdProcess]],
    service_account_kubeconfig: Path,
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    scope, (first, second) = replicas
    audit_from = control_plane.audit_log.stat().st_size
    name = unique("rbac")
    tag = f"{registry.host}/{unique('e2e/rbac')}:latest"
    try:
        first.start()
        await first.wait_ready()
        await eventually(lambda: _leads(first), what="the first replica to lead")
        second.start()
        await second.wait_ready()

        # Created and served.
        v1 = push_catalog(pusher, write_catalog(tmp_path / "v1", "rbac-pkg", ["1.0.0"]), tag)
        await kube.create(
            cluster_catalog(name, tag, labels={testing_seams.SCOPE_LABEL: scope}, poll_minutes=1)
        )
        await wait_serving(kube, name, v1)

        # Polled: a new image under the tag is found (one poll minute lasts a second in tests).
        v2 = push_catalog(pusher, write_catalog(tmp_path / "v2", "rbac-pkg", ["1.0.0", "2.0.0"]), tag)
        await wait_serving(kube, name, v2, timeout=30)

        # Updated to another image.
        other = f"{registry.host}/{unique('e2e/rbac-other')}:v1"
        v3 = push_catalog(pusher, write_catalog(tmp_path / "v3", "other-pkg", ["0.1.0"]), other)
        await kube.patch(CLUSTER_CATALOG, name, {"spec": {"source": {"image": {"ref": other}}}})
        await wait_serving(kube, name, v3)

        # Unavailable, then Available: the same image is unpacked again, so its Events repeat and
        # their series is patched.
        await kube.patch(CLUSTER_CATALOG, name, {"spec": {"availabilityMode": "Unavailable"}})
        await wait_catalog(
            kube,
            name,
            "Serving False (UserSpecifiedUnavailable)",
            lambda c: any(
                x["type"] == "Serving" and x["reason"] == "UserSpecifiedUnavailable"
                for x in (c.get("status") or {}).get("conditions") or []
            ),
        )
        await kube.patch(CLUSTER_CATALOG, name, {"spec": {"availabilityMode": "Available"}})
        await wait_serving(kube, name, v3)
        await eventually(
            lambda: _has_series(kube, name),
            what=f"the UnpackStarted Event of {name} to count a repeat",
        )

        # Leader change: the leader stops (releasing the Lease), the other replica takes over.
        assert first.stop() == 0, first.log_tail()
        await eventually(lambda: _leads(second), what="the second replica to lead", timeout=60)

        # Deleted: the new leader removes the content and its finalizer.
        await delete_catalog(kube, name)
        assert await _gone(kube, name)
        assert second.stop() == 0, second.log_tail()
    except AssertionError as error:
        logs = "\n".join(f"--- {p.workdir.name} ---\n{p.log_tail(100)}" for p in (first, second))
        raise AssertionError(f"{error}\n{logs}") from None
    finally:
        if not await _gone(kube, name):  # a failure above: the replicas may be gone, so no finalizer
            with contextlib.suppress(errors.NotFound):
                await kube.patch(CLUSTER_CATALOG, name, {"metadata": {"finalizers": None}})
                await kube.delete(CLUSTER_CATALOG, name)

    config = json.loads(await asyncio.to_thread(service_account_kubeconfig.read_text))
    credential = audit.credential_id(config["users"][0]["user"]["token"])
    requests = await asyncio.to_thread(
        audit.read, control_plane.audit_log, audit_from, username=USERNAME, credential=credential
    )
    grants = audit.grants(audit.bound_roles(_shipped_rbac(), names.DEFAULT_SYSTEM_NAMESPACE, SERVICE_ACCOUNT))
    print(f"lifecycle: {time.monotonic() - started:.1f}s, {len(requests)} requests")
    for line, count in audit.summary(requests).items():
        print(f"  {count:5d}  {line}")

    assert audit.refused(requests) == []
    assert audit.uncovered(requests, grants) == []
    unused = [
        g.describe() for g in audit.unused(grants, requests) if (g.verb, g.resource) not in NOT_EXERCISED
    ]
    assert unused == [], "\n".join(unused)
