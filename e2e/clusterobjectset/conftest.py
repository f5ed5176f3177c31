"""Fixtures of the ClusterObjectSet controller tests: the OLM CRDs, a Manager running the
controller in the test's event loop, a ServiceAccount to install as, and revision helpers.

Each test's controller reconciles only the revisions of that test: `Revisions` labels them with the
test's namespace as `testing_seams.SCOPE_LABEL`, and the manager's cache selects that label, which
every operator-controller process of the session excludes. So neither a process started by another
suite nor an earlier test's controller touches them, whatever order the tests run in."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.cli.rbac.leastprivilege import installer_rbac
from olm.operator_controller import clusterobjectset
from olm.operator_controller.clusterobjectset import identity
from olm.operator_controller.clusterobjectset.watches import DriftWatches
from olm.process import testing_seams
from olm_runtime import cache, conditions
from olm_runtime.client import Client, GroupVersionKind, errors, kinds
from olm_runtime.manager import Manager, ManagerOptions
from olm_runtime.testing import settle
from olm_runtime.testing.poll import eventually
from olm_testkit.plugin import Installer

CRD = GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
CLUSTER_ROLE_BINDING = GroupVersionKind("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding")

OPTIONS = clusterobjectset.Options(
    system_namespace="default",
    retry_interval=1.0,
    teardown_interval=0.5,
    deadline_minute_seconds=0.3,
    drift_poll_interval=2.0,
)
"""Fast retries and drift polls, and a progress-deadline minute of 0.3 s (so the API's minimum of
10 is 3 s)."""


def scope_selector(namespace: str) -> str:
    """The revisions of the test that owns `namespace`."""
    return f"{testing_seams.SCOPE_LABEL}={namespace}"


@pytest.fixture
async def manager(admin_client: Client, olm_crds: None, namespace: str) -> Manager:
    scoped = cache.CacheOptions(
        by_kind={CLUSTER_OBJECT_SET: cache.KindOptions(label_selector=scope_selector(namespace))}
    )
    return Manager(admin_client, options=ManagerOptions(metrics_bind_address="0", cache=scoped))


@contextlib.asynccontextmanager
async def running(
    manager: Manager, options: clusterobjectset.Options = OPTIONS
) -> AsyncIterator[DriftWatches]:
    """The controller set up with `options` and running in the test's loop; its drift watches, to
    look inside."""
    controller = await clusterobjectset.setup_with_manager(manager, options)
    reconciler = controller.reconciler
    assert isinstance(reconciler, clusterobjectset.Reconciler)
    task = asyncio.create_task(manager.run())
    try:
        yield reconciler.watches
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@pytest.fixture
async def controller_running(manager: Manager) -> AsyncIterator[None]:
    async with running(manager):
        yield


@pytest.fixture
async def account(namespace: str, installer: Installer) -> str:
    """A ServiceAccount in the test namespace bound to cluster-admin, to install revisions as."""
    return await installer(namespace)


async def olmctl_account(
    admin_client: Client, namespace: str, name: str, objects: list[dict[str, Any]]
) -> None:
    """ServiceAccount `name` with exactly what `olmctl rbac` would print for `objects`, once the API
    server's authorizer has seen each of its bindings."""
    await admin_client.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}}
    )
    rbac = installer_rbac(objects, extension_name=name, namespace=namespace, service_account=name)
    for document in rbac:
        await admin_client.apply(document, field_manager="e2e-drift-rbac", force=True)
    await settle.granted(admin_client, rbac)


async def delete_installer_rbac(admin_client: Client, name: str) -> None:
    for gvk in (kinds.CLUSTER_ROLE_BINDING, kinds.CLUSTER_ROLE):
        with contextlib.suppress(errors.NotFound):
            await admin_client.delete(gvk, f"{name}-installer")


def config_map(name: str, namespace: str, data: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data or {"k": "v"},
    }


def deployment(name: str, namespace: str) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "main", "image": "example.com/app:v1"}]},
            },
        },
    }


def inline(*objects: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"object": o} for o in objects]


@dataclass
class Revisions:
    """Creates ClusterObjectSets (annotated with the installer identity) and cleans them up."""

    client: Client
    namespace: str
    service_account: str | None
    prefix: str = field(default_factory=lambda: f"cos-{uuid.uuid4().hex[:8]}")
    created: list[str] = field(default_factory=list)

    def name(self, suffix: str) -> str:
        return f"{self.prefix}-{suffix}"

    async def create(
        self,
        suffix: str,
        phases: list[tuple[str, list[dict[str, Any]]]],
        *,
        revision: int = 1,
        collision_protection: str = "Prevent",
        owner: str | None = None,
        extra_spec: dict[str, Any] | None = None,
        service_account: str | None = "default",
    ) -> dict[str, Any]:
        name = self.name(suffix)
        metadata: dict[str, Any] = {"name": name, "labels": {testing_seams.SCOPE_LABEL: self.namespace}}
        account = self.service_account if service_account == "default" else service_account
        if account:
            metadata["annotations"] = {
                identity.SERVICE_ACCOUNT_NAME: account,
                identity.SERVICE_ACCOUNT_NAMESPACE: self.namespace,
            }
        if owner:
            metadata["labels"] |= {
                names.OWNER_KIND_LABEL: "ClusterExtension",
                names.OWNER_NAME_LABEL: f"{self.prefix}-{owner}",
            }
        body = {
            "apiVersion": CLUSTER_OBJECT_SET.api_version,
            "kind": CLUSTER_OBJECT_SET.kind,
            "metadata": metadata,
            "spec": {
                "revision": revision,
                "lifecycleState": "Active",
                "collisionProtection": collision_protection,
                "phases": [{"name": n, "objects": objs} for n, objs in phases],
                **(extra_spec or {}),
            },
        }
        self.created.append(name)
        return await self.client.create(body)

    async def get(self, suffix: str) -> dict[str, Any]:
        return await self.client.get(CLUSTER_OBJECT_SET, self.name(suffix))

    async def condition(self, suffix: str, kind: str) -> dict[str, Any]:
        cos = await self.get(suffix)
        return dict(conditions.find((cos.get("status") or {}).get("conditions") or [], kind) or {})

    async def wait_for(
        self, suffix: str, kind: str, status: str, reason: str, *, contains: str = "", timeout: float = 60
    ) -> dict[str, Any]:
        found: dict[str, Any] = {}

        async def matches() -> bool:
            nonlocal found
            found = await self.condition(suffix, kind)
            return (
                found.get("status") == status
                and found.get("reason") == reason
                and contains in str(found.get("message"))
            )

        try:
            await eventually(matches, what=f"{kind}={status}/{reason} on {suffix}", timeout=timeout)
        except AssertionError as e:
            raise AssertionError(f"{e}; last seen: {found}") from None
        return found

    async def wait_event(self, suffix: str, reason: str, *, timeout: float = 30) -> list[str]:
        """The messages of the Events of `reason` about revision `suffix`, once there is one (the
        recorder writes them in the background; a cluster-scoped object's land in `default`)."""
        name = self.name(suffix)
        said: list[str] = []

        async def recorded() -> bool:
            listed = await self.client.list(kinds.EVENT, namespace="default")
            said[:] = [
                str(e.get("message") or "")
                for e in listed.items
                if (e.get("involvedObject") or {}).get("name") == name and e.get("reason") == reason
            ]
            return bool(said)

        await eventually(recorded, what=f"a {reason} Event about {name}", timeout=timeout)
        return said

    async def cleanup(self) -> None:
        for name in reversed(self.created):
            with contextlib.suppress(errors.NotFound):
                await self.client.delete(CLUSTER_OBJECT_SET, name)
            with contextlib.suppress(errors.NotFound):
                await self.client.patch(CLUSTER_OBJECT_SET, name, {"metadata": {"finalizers": None}})


@pytest.fixture
async def revisions(
    admin_client: Client, namespace: str, account: str, controller_running: None
) -> AsyncIterator[Revisions]:
    tracker = Revisions(admin_client, namespace, account)
    yield tracker
    await tracker.cleanup()


async def exists(client: Client, gvk: GroupVersionKind, name: str, namespace: str | None = None) -> bool:
    try:
        await client.get(gvk, name, namespace=namespace)
    except errors.NotFound:
        return False
    return True


def absent(
    client: Client, gvk: GroupVersionKind, name: str, namespace: str | None = None
) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return not await exists(client, gvk, name, namespace)

    return check


__all__ = ["CRD", "config_map", "deployment", "exists", "inline", "kinds"]
