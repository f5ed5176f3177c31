"""Fault drill: operator-controller SIGKILLed at random moments while extensions of real bundles
are installed, upgraded and removed, cycle after cycle.

The module runs a catalogd of its own and one operator-controller. Each cycle installs
upstream's test-operator 1.0.0 in a fresh namespace, upgrades it to 1.2.0 and removes it. Every
step arms a killer task that SIGKILLs operator-controller a random time later (seeded; the seed is
printed, `OLMPY_SEED` replays one) and starts it again at once. A step arms only once the previous
step's kill has landed, so every step meets exactly one kill, wherever it happens to be by then.
After each step converges, checked against the API server:

- no orphan revision Secret: every Secret labelled with the extension is referenced by one of
  its revisions and owned by that revision (and none is left once the extension is gone);
- no duplicate revision: one revision per rollout (`<name>-1` for 1.0.0, `<name>-2` for 1.2.0);
- no object owned by two revisions: each object of the bundle names one ClusterObjectSet.

`make test` runs a few cycles (a couple of minutes); `OLMPY_SOAK=1` runs 20.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from e2e.faults import Figures
from e2e.faults.catalogs import create_catalog, create_test_operator, wait_catalog
from e2e.operator_controller.conftest import list_revisions, revision_states, wait_installed
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit.catalogs import delete_catalog
from olm_testkit.extensions import Extensions
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient
from olm_testkit.installer import create_cluster_admin_account
from olm_testkit.names import unique
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess

SYSTEM_NAMESPACE = names.DEFAULT_SYSTEM_NAMESPACE
CYCLES, SOAK_CYCLES = 6, 20
KILL_AFTER = (0.1, 2.5)
"""When an armed kill lands: seconds after the step arms it, just before its write (or after
operator-controller is ready again, if it is still recovering from the previous kill). A step takes
about 0.7 s without kills, so some kills land mid-reconcile and some after the step converged, in
the checks or in the next step's write."""
STEPS_PER_CYCLE = 3
STEP_TIMEOUT = 240.0
NAMESPACED = (
    kinds.CONFIG_MAP,
    kinds.DEPLOYMENT,
    kinds.SERVICE_ACCOUNT,
    kinds.SERVICE,
    kinds.ROLE,
    kinds.ROLE_BINDING,
    kinds.NETWORK_POLICY,
)
CLUSTER_SCOPED = (kinds.CUSTOM_RESOURCE_DEFINITION, kinds.CLUSTER_ROLE, kinds.CLUSTER_ROLE_BINDING)


@pytest.fixture(scope="module")
async def catalogd(
    control_plane: ControlPlane, kube: Client, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[CatalogdProcess]:
    process = CatalogdProcess(control_plane, tmp_path_factory.mktemp("catalogd"), webhook=False)
    async with process.running():
        yield process


@pytest.fixture(scope="module")
async def catalog(
    kube: Client, catalogd: CatalogdProcess, registry: Registry, pusher: RegistryClient
) -> AsyncIterator[str]:
    """Upstream's e2e test catalog v1 with its real bundles, served; its name."""
    published = await asyncio.to_thread(
        realdata.publish_fixture_catalog,
        pusher,
        registry.host,
        version="v1",
        repository_prefix=unique("e2e-sigkill"),
    )
    name = unique("e2e-sigkill")
    await create_catalog(kube, name, published.digest_ref)
    try:
        await wait_catalog(kube, name, "serving", serving_ref=published.digest_ref)
        yield name
    finally:
        await delete_catalog(kube, name)


@dataclass
class Killer:
    """SIGKILLs `process` once per `arm()`, a random time later, and starts it again at once."""

    process: OperatorControllerProcess
    rng: random.Random
    kills: int = 0
    armed: asyncio.Queue[None] = field(default_factory=asyncio.Queue, repr=False)
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    async def arm(self) -> None:
        """Arm the next kill once the previous one has landed, so each step meets its own kill."""
        await self.landed()
        self.armed.put_nowait(None)

    async def landed(self) -> None:
        """Wait until every armed kill has landed; raises what made the killer fail, if it did."""
        assert self.task is not None
        joined = asyncio.ensure_future(self.armed.join())
        await asyncio.wait([joined, self.task], timeout=120, return_when=asyncio.FIRST_COMPLETED)
        joined.cancel()
        if self.task.done():
            self.task.result()
        assert self.armed.empty(), "the armed kill did not land within 120 s"

    async def _run(self) -> None:
        while True:
            await self.armed.get()
            await self.process.wait_ready(timeout=120)
            await asyncio.sleep(self.rng.uniform(*KILL_AFTER))  # when the crash comes: the fault
            assert self.process.kill() == -9, self.process.log_tail()
            self.kills += 1
            self.process.start()
            self.armed.task_done()

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Land the kill still armed, then stop; operator-controller is left running and ready."""
        if self.task is not None:
            try:
                await self.landed()
            finally:
                self.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self.task
        if self.process.process is None:
            self.process.start()
        await self.process.wait_ready(timeout=120)


@pytest.fixture(scope="module")
async def operator_controller(
    control_plane: ControlPlane, kube: Client, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[OperatorControllerProcess]:
    process = OperatorControllerProcess(control_plane, tmp_path_factory.mktemp("operator-controller"))
    async with process.running():
        yield process


@dataclass
class Tally:
    cycles: int = 0
    converged: int = 0
    orphans: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    doubly_owned: list[str] = field(default_factory=list)


async def revision_secrets(kube: Client, extension: str) -> list[dict[str, Any]]:
    listed = await kube.list(
        kinds.SECRET, namespace=SYSTEM_NAMESPACE, label_selector=f"{names.OWNER_NAME_LABEL}={extension}"
    )
    return [dict(s) for s in listed.items]


def orphans(revisions: list[dict[str, Any]], secrets: list[dict[str, Any]]) -> list[str]:
    """Secrets no revision references, or not owned by the revision that does."""
    referencing = {
        entry["ref"]["name"]: revision["metadata"]["uid"]
        for revision in revisions
        for phase in revision["spec"]["phases"]
        for entry in phase["objects"]
        if "ref" in entry
    }
    found = []
    for secret in secrets:
        owner = referencing.get(secret["metadata"]["name"])
        uids = [r["uid"] for r in secret["metadata"].get("ownerReferences") or []]
        if owner is None or uids != [owner]:
            found.append(f"Secret {secret['metadata']['name']} (owners {uids})")
    return found


async def doubly_owned(kube: Client, namespace: str) -> list[str]:
    """Objects in `namespace` (and cluster-scoped ones) that name more than one revision."""
    found = []
    for gvk, where in [(k, namespace) for k in NAMESPACED] + [(k, None) for k in CLUSTER_SCOPED]:
        for item in (await kube.list(gvk, namespace=where)).items:
            revisions = [
                ref["name"]
                for ref in item["metadata"].get("ownerReferences") or []
                if ref.get("kind") == CLUSTER_OBJECT_SET.kind
            ]
            if len(revisions) > 1:
                found.append(f"{gvk.kind} {item['metadata']['name']}: {revisions}")
    return found


async def check_converged(
    kube: Client, tally: Tally, name: str, namespace: str, expected: dict[str, str]
) -> None:
    """Count what breaks an invariant once `name` has converged on `expected` revision states."""
    revisions = await list_revisions(kube, name)
    states = revision_states(revisions)
    if set(states) != set(expected):
        tally.duplicates.append(f"{name}: revisions {states}, expected {expected}")
    tally.orphans += orphans(revisions, await revision_secrets(kube, name))
    tally.doubly_owned += await doubly_owned(kube, namespace)


async def settled(extensions: Extensions, name: str, active: str) -> None:
    """Wait until `active` is the only active revision the extension reports."""

    async def one_active() -> bool:
        found = await extensions.get(name)
        listed = [r["name"] for r in (found.get("status") or {}).get("activeRevisions") or []]
        return listed == [active]

    await eventually(one_active, what=f"{name} to report only {active} active", timeout=STEP_TIMEOUT)


async def one_cycle(kube: Client, catalog: str, killer: Killer, tally: Tally) -> None:
    """Install 1.0.0, upgrade to 1.2.0, remove; count what breaks an invariant at each step."""
    namespace = unique("t-sigkill")
    await kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    account = unique("installer")
    extensions = Extensions(kube)
    name = unique("kill")
    try:
        await create_cluster_admin_account(kube, namespace, account, binding=account)
        await create_test_operator(extensions, name, namespace, account, catalog)
        await killer.arm()
        await wait_installed(extensions, name, "1.0.0", timeout=STEP_TIMEOUT)
        await settled(extensions, name, f"{name}-1")
        await check_converged(kube, tally, name, namespace, {f"{name}-1": "Active"})

        await extensions.patch_spec(name, {"source": {"catalog": {"version": "1.2.0"}}})
        await killer.arm()
        await wait_installed(extensions, name, "1.2.0", timeout=STEP_TIMEOUT)
        await settled(extensions, name, f"{name}-2")
        await check_converged(kube, tally, name, namespace, {f"{name}-1": "Archived", f"{name}-2": "Active"})

        await killer.arm()
        await extensions.delete_and_wait_gone(name, timeout=STEP_TIMEOUT)

        async def released() -> bool:  # the garbage collector removes what the revisions owned
            return not await revision_secrets(kube, name) and not await list_revisions(kube, name)

        with contextlib.suppress(AssertionError):
            await eventually(released, what=f"{name}'s revisions and Secrets to be collected", timeout=60)
        tally.orphans += [f"{name}: {s['metadata']['name']} left" for s in await revision_secrets(kube, name)]
        tally.duplicates += [
            f"{name}: {r['metadata']['name']} left" for r in await list_revisions(kube, name)
        ]
        tally.converged += 1
    finally:
        tally.cycles += 1
        for created in list(extensions.created):
            await extensions.delete_and_wait_gone(created, timeout=STEP_TIMEOUT)
        with contextlib.suppress(errors.NotFound):
            await kube.delete(kinds.CLUSTER_ROLE_BINDING, account)
        with contextlib.suppress(errors.NotFound):
            await kube.delete(kinds.NAMESPACE, namespace)


def seed() -> int:
    """`OLMPY_SEED` to replay a run, else a fresh one."""
    return int(os.environ.get("OLMPY_SEED") or random.SystemRandom().randrange(1 << 32))


async def test_sigkill_cycles_converge_without_orphans_duplicates_or_double_owners(
    kube: Client,
    catalog: str,
    operator_controller: OperatorControllerProcess,
    *,
    soak: bool,
    figures: Figures,
) -> None:
    chosen = seed()
    print(f"\nsigkill drill seed: {chosen} (OLMPY_SEED={chosen} replays the kill schedule)")
    killer = Killer(operator_controller, random.Random(chosen))
    tally = Tally()
    cycles = SOAK_CYCLES if soak else CYCLES
    started = time.monotonic()
    killer.start()
    try:
        for _ in range(cycles):
            await one_cycle(kube, catalog, killer, tally)
    finally:
        await killer.stop()
        figures(
            {
                "seed": chosen,
                "kills": killer.kills,
                "cycles": tally.cycles,
                "extensions converged": tally.converged,
                "orphan revision Secrets": len(tally.orphans),
                "duplicate revisions": len(tally.duplicates),
                "objects owned by two revisions": len(tally.doubly_owned),
                "duration (s)": round(time.monotonic() - started, 1),
            }
        )
    assert tally.converged == cycles
    assert tally.orphans == []
    assert tally.duplicates == []
    assert tally.doubly_owned == []
    assert killer.kills == STEPS_PER_CYCLE * cycles, "every step's kill should land"
