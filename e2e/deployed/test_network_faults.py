"""Network faults between OLM's own Pods, made by the kernel of the real nodes (iptables rules,
a stopped DNS server), never by the code under test: catalogd cut off from operator-controller
while its Pods stay Ready, and the cluster's DNS stopped.

Each drill resolves against a catalog operator-controller has never read (a new ClusterCatalog of
the demo image), so the outage is met by a request, not answered from its content cache, and
ends with the invariants of the process drills: one revision per change, no orphans. Figures are
printed at the end of the session.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import ExitStack
from typing import Any

import pytest

from e2e.deployed.conftest import (
    CATALOGD,
    OPERATOR_CONTROLLER,
    DemoExtensions,
    DeployedOLM,
    Figures,
    ServedCatalog,
    assert_no_orphans,
)
from olm.api import names
from olm.operator_controller.clusterextension.options import Options
from olm_runtime import conditions
from olm_runtime.testing.poll import eventually
from olm_testkit.catalogs import cluster_catalog, delete_catalog, serve_catalog
from olm_testkit.names import unique
from olm_testkit.node import faults

CATALOGD_SERVICE = f"catalogd-service.{names.DEFAULT_SYSTEM_NAMESPACE}.svc"
RETRY_INTERVAL = Options().retry_interval
"""How often operator-controller retries a resolution that failed (the shipped default)."""


@pytest.fixture
async def unread_catalog(deployed: DeployedOLM, demo_catalog: ServedCatalog) -> AsyncIterator[str]:
    """The demo catalog's image served under a new name, which operator-controller has not read."""
    name = unique("unread")
    await serve_catalog(deployed.kube, cluster_catalog(name, demo_catalog.published.digest_ref), timeout=120)
    try:
        yield name
    finally:
        await delete_catalog(deployed.kube, name)


def by_name(catalog: str) -> dict[str, Any]:
    return {"matchLabels": {names.METADATA_NAME_LABEL: catalog}}


async def operator_controller_pod(deployed: DeployedOLM) -> dict[str, Any]:
    (pod,) = await deployed.pods(OPERATOR_CONTROLLER)
    return pod


async def catalogd_addresses(deployed: DeployedOLM) -> list[str]:
    return [str(pod["status"]["podIP"]) for pod in await deployed.pods(CATALOGD)]


async def all_ready(deployed: DeployedOLM, deployment: str) -> bool:
    pods = await deployed.pods(deployment)
    return bool(pods) and all(conditions.of(pod, "Ready").get("status") == "True" for pod in pods)


def progressing_message(found: dict[str, Any]) -> str:
    return str(conditions.of(found, "Progressing").get("message", ""))


async def wait_outage_cleared(extensions: DemoExtensions, name: str, outage: str, *, timeout: float) -> None:
    """Until the extension's Progressing condition no longer names the outage."""

    async def cleared() -> bool:
        return outage not in progressing_message(await extensions.get(name))

    await eventually(cleared, what=f"{name}'s condition to stop naming {outage!r}", timeout=timeout)


async def test_catalogd_partitioned_from_operator_controller_while_its_pods_stay_ready(
    deployed: DeployedOLM,
    *,
    extensions: DemoExtensions,
    demo_catalog: ServedCatalog,
    unread_catalog: str,
    namespace: str,
    figures: Figures,
) -> None:
    account = await extensions.installer(namespace)
    installed = unique("stays")
    await extensions.create(
        installed, "kube-green", namespace, account, version="0.7.1", selector=by_name(demo_catalog.name)
    )
    await extensions.wait_installed(installed, "0.7.1")
    before, _ = await extensions.revisions(installed)
    leader = await deployed.lease_holder(OPERATOR_CONTROLLER)
    pod = await operator_controller_pod(deployed)
    node = deployed.node_of(pod)
    catalogd = await catalogd_addresses(deployed)
    new = unique("partitioned")

    with faults.partitioned(node.network, source=pod["status"]["podIP"], destinations=catalogd):
        cut = time.monotonic()
        await extensions.create(
            new,
            "cat-facts-operator",
            namespace,
            account,
            version="1.1.2",
            selector=by_name(unread_catalog),
            config={"watchNamespace": namespace},
        )
        # The cause is in the condition, bounded by the client's timeouts: connect (10 s) for a
        # new connection, read (60 s) for a pooled one whose answer never comes.
        found = await extensions.wait_condition(
            new,
            "Progressing",
            "True",
            reason="Retrying",
            message_contains="content server unreachable",
            timeout=150,
        )
        reported = time.monotonic() - cut
        message = progressing_message(found)
        assert f"catalog {unread_catalog!r}" in message, message
        assert CATALOGD_SERVICE in message, message
        # Only the Service path is cut: catalogd's Pods stay Ready (the kubelet probes them from
        # the node), and the extension installed before keeps its condition and revision.
        assert await all_ready(deployed, CATALOGD)
        stayed = await extensions.get(installed)
        assert conditions.of(stayed, "Installed").get("status") == "True"
        healed = time.monotonic()

    await wait_outage_cleared(extensions, new, "content server unreachable", timeout=90)
    resolved = time.monotonic() - healed
    await extensions.wait_installed(new, "1.1.2")
    recovered = time.monotonic() - healed

    after, _ = await extensions.revisions(installed)
    assert [r["metadata"]["name"] for r in after] == [r["metadata"]["name"] for r in before]
    revisions, secrets = await extensions.revisions(new)
    assert len(revisions) == 1, [r["metadata"]["name"] for r in revisions]
    assert_no_orphans(revisions, secrets)
    assert await deployed.lease_holder(OPERATOR_CONTROLLER) == leader

    figures.add("partition oc -x- catalogd: faults (DROP rules, both ways)", str(2 * len(catalogd)))
    figures.add("partition oc -x- catalogd: cut -> condition names it", f"{reported:.1f} s ({message[-80:]})")
    figures.add("partition oc -x- catalogd: healed -> resolved", f"{resolved:.1f} s")
    figures.add("partition oc -x- catalogd: healed -> Installed", f"{recovered:.1f} s")
    figures.add("partition oc -x- catalogd: leader changes / revisions", f"0 / {len(revisions)}")


async def test_cluster_dns_stopped_names_the_name_that_failed_and_recovers(
    deployed: DeployedOLM,
    extensions: DemoExtensions,
    unread_catalog: str,
    namespace: str,
    figures: Figures,
) -> None:
    account = await extensions.installer(namespace)
    pod = await operator_controller_pod(deployed)
    node = deployed.node_of(pod)
    catalogd = await catalogd_addresses(deployed)
    name = unique("no-dns")
    outage = f"the name {CATALOGD_SERVICE} did not resolve"

    with ExitStack() as stack:
        for real_node in deployed.nodes:
            stack.enter_context(real_node.stopped("coredns"))
        stopped = time.monotonic()

        # A connection opened before DNS stopped needs no name: wait until operator-controller's
        # client has closed its idle ones (the node's conntrack shows none established).
        async def no_pooled_connection() -> bool:
            return faults.established(node.network, source=pod["status"]["podIP"], destinations=catalogd) == 0

        await eventually(
            no_pooled_connection, what="operator-controller's idle connections to close", timeout=90
        )
        await extensions.create(
            name,
            "cat-facts-operator",
            namespace,
            account,
            version="1.1.2",
            selector=by_name(unread_catalog),
            config={"watchNamespace": namespace},
        )
        found = await extensions.wait_condition(
            name, "Progressing", "True", reason="Retrying", message_contains=outage, timeout=90
        )
        reported = time.monotonic() - stopped
        message = progressing_message(found)
        restarted = time.monotonic()

    await wait_outage_cleared(extensions, name, outage, timeout=RETRY_INTERVAL + 30)
    resolved = time.monotonic() - restarted
    await extensions.wait_installed(name, "1.1.2")
    recovered = time.monotonic() - restarted

    revisions, secrets = await extensions.revisions(name)
    assert len(revisions) == 1, [r["metadata"]["name"] for r in revisions]
    assert_no_orphans(revisions, secrets)
    figures.add("cluster DNS stopped: CoreDNS servers stopped", str(len(deployed.nodes)))
    figures.add("cluster DNS stopped: stop -> condition names it", f"{reported:.1f} s ({message[-70:]})")
    figures.add("cluster DNS stopped: restarted -> resolved", f"{resolved:.1f} s")
    figures.add("cluster DNS stopped: restarted -> Installed", f"{recovered:.1f} s")
