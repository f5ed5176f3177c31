"""Network faults between OLM's own Pods and between them and the API server, made by the kernel
of the real nodes (iptables rules, a stopped DNS server, a veth taken down, a kubelet killed),
never by the code under test: operator-controller's leader's node cut off from the API server,
catalogd cut off from operator-controller while its Pods stay Ready, the cluster's DNS stopped,
and a node with OLM's Pods on it lost.

Each drill resolves against a catalog operator-controller has never read (a new ClusterCatalog of
the demo image), so the outage is met by a request, not answered from its content cache, and
ends with the invariants of the process drills: one revision per change, no orphans, no object
owned twice. Figures are printed at the end of the session.

`make test` runs each drill once. `make soak` (`OLMPY_SOAK=1`) runs each `ROUNDS` times, a test of
its own per round (fresh namespace and extension), and holds the partition and the DNS outage
`HOLD` seconds longer once reported, checking the condition keeps naming the cause, word for word,
on every retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import os
import time
from collections.abc import AsyncIterator
from contextlib import ExitStack
from typing import Any
from urllib.parse import urlsplit

import pytest

from e2e.deployed import upgrade
from e2e.deployed.conftest import (
    CATALOGD,
    OPERATOR_CONTROLLER,
    SYSTEM_NAMESPACE,
    DemoExtensions,
    DeployedOLM,
    Figures,
    ServedCatalog,
    assert_no_orphans,
)
from e2e.deployed.test_deployed import content_path, pod_content_path
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.operator_controller import main as operator_controller_main
from olm.operator_controller.clusterextension.options import Options
from olm_runtime import conditions
from olm_runtime.client import PatchType, kinds
from olm_runtime.testing import process
from olm_runtime.testing.poll import eventually
from olm_testkit import audit, nodenet
from olm_testkit.catalogs import cluster_catalog, delete_catalog, serve_catalog
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient
from olm_testkit.names import unique
from olm_testkit.node import faults
from olm_testkit.toxiproxy import Toxiproxy

CATALOGD_SERVICE = f"catalogd-service.{names.DEFAULT_SYSTEM_NAMESPACE}.svc"
RETRY_INTERVAL = Options().retry_interval
"""How often operator-controller retries a resolution that failed (the shipped default)."""
LEASE_DURATION = 15.0
"""operator-controller's Lease duration (`LeaderElector`'s default, which the manifests keep)."""
WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})
LATENCY_MS = 200
LOSS = 0.05
SLOW_BOUND = 300.0
"""Seconds a catalog may take to serve, and then an extension to install, over the slow links."""
SOAK = os.environ.get("OLMPY_SOAK") == "1"
ROUNDS = 3 if SOAK else 1
HOLD = 6 * RETRY_INTERVAL if SOAK else 0.0
"""Seconds an outage is held once the condition names it."""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Under `make soak`, every drill runs `ROUNDS` times."""
    if ROUNDS > 1:
        metafunc.fixturenames.append("drill_round")
        metafunc.parametrize("drill_round", range(1, ROUNDS + 1), ids=lambda n: f"round-{n}")


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


@dataclasses.dataclass(frozen=True)
class Invariants:
    """What a drill's extension holds once it has converged, every one of them checked."""

    revisions: int
    secrets: int
    objects: int

    def __str__(self) -> str:
        return f"{self.revisions} / {self.secrets} / {self.objects}"


INVARIANTS_LABEL = "invariants: revisions / Secrets / objects (each owned once)"


async def assert_invariants(deployed: DeployedOLM, extensions: DemoExtensions, name: str) -> Invariants:
    """The invariants every drill ends with, as the process drills': the extension has exactly one
    revision, every Secret of it is referenced and owned by that revision, and every object it
    manages is owned by that revision and no other."""
    revisions, secrets = await extensions.revisions(name)
    assert len(revisions) == 1, [r["metadata"]["name"] for r in revisions]
    assert_no_orphans(revisions, secrets)
    (revision,) = revisions
    objects = await upgrade.managed_objects(deployed.kube, revision, SYSTEM_NAMESPACE)
    assert objects, revision["metadata"]["name"]
    expected = [(revision["metadata"]["name"], revision["metadata"]["uid"])]
    for obj in objects:
        owners = [
            (ref["name"], ref["uid"])
            for ref in obj["metadata"].get("ownerReferences") or []
            if ref.get("kind") == CLUSTER_OBJECT_SET.kind
        ]
        assert owners == expected, f"{obj['kind']} {obj['metadata']['name']}: owned by {owners}"
    return Invariants(revisions=len(revisions), secrets=len(secrets), objects=len(objects))


async def create_cat_facts(
    extensions: DemoExtensions, name: str, namespace: str, account: str, *, catalog: str
) -> None:
    """cat-facts-operator 1.1.2 from `catalog` only, watching its own namespace."""
    await extensions.create(
        name,
        "cat-facts-operator",
        namespace,
        account,
        version="1.1.2",
        selector=by_name(catalog),
        config={"watchNamespace": namespace},
    )


async def operator_controller_pod(deployed: DeployedOLM) -> dict[str, Any]:
    (pod,) = await deployed.pods(OPERATOR_CONTROLLER)
    return pod


async def catalogd_addresses(deployed: DeployedOLM) -> list[str]:
    return [str(pod["status"]["podIP"]) for pod in await deployed.pods(CATALOGD)]


async def catalogd_service_ip(deployed: DeployedOLM) -> str:
    service = await deployed.kube.get(kinds.SERVICE, "catalogd-service", namespace=SYSTEM_NAMESPACE)
    return str(service["spec"]["clusterIP"])


async def all_ready(deployed: DeployedOLM, deployment: str) -> bool:
    pods = await deployed.pods(deployment)
    return bool(pods) and all(conditions.of(pod, "Ready").get("status") == "True" for pod in pods)


def progressing_message(found: dict[str, Any]) -> str:
    return str(conditions.of(found, "Progressing").get("message", ""))


async def hold(extensions: DemoExtensions, name: str, outage: str) -> set[str]:
    """Keep an outage for `HOLD` seconds while checking the extension's condition names it on every
    read: retried, never hung. Returns the messages seen (a pooled connection's read timeout is
    reported first, new connections' connect timeouts after it)."""
    seen: set[str] = set()
    until = time.monotonic() + HOLD
    while time.monotonic() < until:
        message = progressing_message(await extensions.get(name))
        assert outage in message, message
        seen.add(message)
        await asyncio.sleep(1.0)  # the outage's length, not a wait for something to happen
    return seen


async def wait_outage_cleared(extensions: DemoExtensions, name: str, outage: str, *, timeout: float) -> None:
    """Until the extension's Progressing condition no longer names the outage."""

    async def cleared() -> bool:
        return outage not in progressing_message(await extensions.get(name))

    await eventually(cleared, what=f"{name}'s condition to stop naming {outage!r}", timeout=timeout)


@contextlib.asynccontextmanager
async def scaled(deployed: DeployedOLM, replicas: int) -> AsyncIterator[None]:
    """operator-controller at `replicas` until the block ends, then at one again: every Pod of the
    scale-down gone, and the Lease held by the one that stays."""
    await scale(deployed, replicas)
    try:
        yield
    finally:
        await scale(deployed, 1)


async def scale(deployed: DeployedOLM, replicas: int) -> None:
    kube = deployed.kube
    await kube.patch(
        kinds.DEPLOYMENT,
        OPERATOR_CONTROLLER,
        {"spec": {"replicas": replicas}},
        namespace=SYSTEM_NAMESPACE,
        patch_type=PatchType.MERGE,
    )

    async def settled() -> bool:
        listed = await kube.list(
            kinds.POD, namespace=SYSTEM_NAMESPACE, label_selector="app.kubernetes.io/name=operator-controller"
        )
        ready = [
            p["metadata"]["name"] for p in listed.items if conditions.of(p, "Ready").get("status") == "True"
        ]
        holder = await deployed.leader_pod(OPERATOR_CONTROLLER)
        return len(listed.items) == replicas and len(ready) == replicas and holder in ready

    await eventually(
        settled, what=f"operator-controller at {replicas} Ready replicas, one leading", timeout=180
    )


async def test_the_leaders_node_cut_off_from_the_api_server_hands_over_and_the_old_leader_never_writes(
    deployed: DeployedOLM,
    *,
    extensions: DemoExtensions,
    demo_catalog: ServedCatalog,
    namespace: str,
    figures: Figures,
) -> None:
    api = urlsplit(deployed.control_plane.server)
    assert api.hostname is not None
    assert api.port is not None
    account = await extensions.installer(namespace)
    name = unique("handed-over")
    async with scaled(deployed, 2):
        pods = {p["metadata"]["name"]: p for p in await deployed.pods(OPERATOR_CONTROLLER)}
        # The manifests' spread puts the two replicas on the two nodes.
        assert len({deployed.node_of(p).name for p in pods.values()}) == 2, list(pods)
        old = await deployed.leader_pod(OPERATOR_CONTROLLER)
        node = deployed.node_of(pods[old])
        cut_at = datetime.datetime.now(datetime.UTC)

        with faults.cut_off(node.network, address=api.hostname, port=api.port):
            cut = time.monotonic()

            async def handed_over() -> bool:
                holder = await deployed.leader_pod(OPERATOR_CONTROLLER)
                return holder != old and holder in pods

            await eventually(
                handed_over, what="the other replica to take the Lease", timeout=3 * LEASE_DURATION
            )
            took_over = time.monotonic() - cut
            new = await deployed.leader_pod(OPERATOR_CONTROLLER)
            lease = await deployed.kube.get(
                kinds.LEASE, operator_controller_main.LEASE_NAME, namespace=SYSTEM_NAMESPACE
            )
            # From here on the old replica is deposed (the API server's clock and ours are this
            # machine's). Before, it was still the leader, and a renewal it sent as the rules went
            # in may have reached the API server.
            deposed_at = datetime.datetime.fromisoformat(lease["spec"]["acquireTime"])
            # The new leader works while the old one is still cut off.
            await create_cat_facts(extensions, name, namespace, account, catalog=demo_catalog.name)
            await extensions.wait_installed(name, "1.1.2")
            healed = time.monotonic()
        partition = healed - cut

        # The old Pod comes back: its process exited when it could not renew (the kubelet, cut
        # off too, restarted it and reports that once it reaches the API server again), and the
        # new process reads the Lease as a standby. It must have written nothing since the cut.
        restarts = 0

        async def back_as_standby() -> bool:
            nonlocal restarts
            pod = await deployed.kube.get(kinds.POD, old, namespace=SYSTEM_NAMESPACE)
            restarts = int(pod["status"]["containerStatuses"][0]["restartCount"])
            reads = [
                r
                for r in audit.by_pod(deployed.control_plane.audit_log, old, since=cut_at)
                if r.resource == "leases" and r.verb == "get" and r.code == 200
            ]
            ready = conditions.of(pod, "Ready").get("status") == "True"
            return restarts >= 1 and ready and len(reads) >= 2

        await eventually(
            back_as_standby,
            what=f"{old} to have restarted, be Ready and read the Lease again",
            timeout=240,
            interval=1.0,  # each poll reads the session's whole audit log
        )
        came_back = time.monotonic() - healed
        log = deployed.control_plane.audit_log
        requests = audit.by_pod(log, old, since=cut_at)
        late = [r for r in audit.by_pod(log, old, since=deposed_at) if r.verb in WRITES]
        # A Lease renewal the old leader sent while cut off, before it gave up leading, can still
        # arrive after the takeover, when the partition heals and TCP retransmits it; its
        # resourceVersion no longer matches, so it fails. Any other write, or any that
        # succeeded, is a deposed leader's write.
        delayed = [r.describe() for r in late if r.resource == "leases" and not 200 <= r.code < 300]
        writes = [r.describe() for r in late if r.describe() not in delayed]
        holder = await deployed.leader_pod(OPERATOR_CONTROLLER)

    figures.add("leader cut off: node partitioned from the API server for", f"{partition:.1f} s")
    figures.add("leader cut off: cut -> other replica holds the Lease", f"{took_over:.1f} s")
    figures.add("leader cut off: leader changes (old -> new)", f"1 ({old} -> {new})")
    figures.add("leader cut off: healed -> old Pod Ready, reading as standby", f"{came_back:.1f} s")
    figures.add(
        "leader cut off: old Pod's restarts / requests since the cut / writes once deposed",
        f"{restarts} / {len(requests)} / {len(writes)}",
    )
    figures.add(
        "leader cut off: renewals sent while cut off, arriving late, rejected",
        "; ".join(delayed) or "none",
    )
    assert writes == [], writes
    assert holder == new
    # A standby takes over once the record has stood still for the lease duration on its own
    # clock, reading it every 2-2.4 s: 15 to about 20 s after the cut.
    assert took_over <= LEASE_DURATION + 10, took_over
    invariants = await assert_invariants(deployed, extensions, name)
    figures.add(f"leader cut off: {INVARIANTS_LABEL}", str(invariants))


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
        await create_cat_facts(extensions, new, namespace, account, catalog=unread_catalog)
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
        held = await hold(extensions, new, "content server unreachable")
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
    invariants = await assert_invariants(deployed, extensions, new)
    assert await deployed.lease_holder(OPERATOR_CONTROLLER) == leader

    figures.add("partition oc -x- catalogd: faults (DROP rules, both ways)", str(2 * len(catalogd)))
    figures.add("partition oc -x- catalogd: cut -> condition names it", f"{reported:.1f} s ({message[-80:]})")
    if HOLD:
        figures.add(
            "partition oc -x- catalogd: held after reported / its messages",
            f"{HOLD:.0f} s / {[m[-60:] for m in sorted(held)]}",
        )
    figures.add("partition oc -x- catalogd: healed -> resolved", f"{resolved:.1f} s")
    figures.add("partition oc -x- catalogd: healed -> Installed", f"{recovered:.1f} s")
    figures.add("partition oc -x- catalogd: leader changes", "0")
    figures.add(f"partition oc -x- catalogd: {INVARIANTS_LABEL}", str(invariants))


async def test_cluster_dns_stopped_names_the_name_that_failed_and_recovers(
    deployed: DeployedOLM,
    extensions: DemoExtensions,
    unread_catalog: str,
    namespace: str,
    figures: Figures,
) -> None:
    account = await extensions.installer(namespace)
    pod = await operator_controller_pod(deployed)
    catalogd = [await catalogd_service_ip(deployed), *await catalogd_addresses(deployed)]
    name = unique("no-dns")
    outage = f"the name {CATALOGD_SERVICE} did not resolve"

    with ExitStack() as stack:
        for real_node in deployed.nodes:
            stack.enter_context(real_node.stopped("coredns"))
        stopped = time.monotonic()

        # A connection opened before DNS stopped needs no name: wait until operator-controller's
        # client has closed its idle ones (its Pod's socket table shows none established; the
        # node's conntrack may remember connections a partition drill closed long ago).
        async def no_pooled_connection() -> bool:
            return await deployed.connections(pod, peers=catalogd) == 0

        await eventually(
            no_pooled_connection, what="operator-controller's idle connections to close", timeout=90
        )
        await create_cat_facts(extensions, name, namespace, account, catalog=unread_catalog)
        found = await extensions.wait_condition(
            name, "Progressing", "True", reason="Retrying", message_contains=outage, timeout=90
        )
        reported = time.monotonic() - stopped
        message = progressing_message(found)
        held = await hold(extensions, name, outage)
        restarted = time.monotonic()

    await wait_outage_cleared(extensions, name, outage, timeout=RETRY_INTERVAL + 30)
    resolved = time.monotonic() - restarted
    await extensions.wait_installed(name, "1.1.2")
    recovered = time.monotonic() - restarted

    invariants = await assert_invariants(deployed, extensions, name)
    figures.add("cluster DNS stopped: CoreDNS servers stopped", str(len(deployed.nodes)))
    figures.add("cluster DNS stopped: stop -> condition names it", f"{reported:.1f} s ({message[-70:]})")
    if HOLD:
        figures.add(
            "cluster DNS stopped: held after reported / its messages",
            f"{HOLD:.0f} s / {[m[-60:] for m in sorted(held)]}",
        )
    figures.add("cluster DNS stopped: restarted -> resolved", f"{resolved:.1f} s")
    figures.add("cluster DNS stopped: restarted -> Installed", f"{recovered:.1f} s")
    figures.add(f"cluster DNS stopped: {INVARIANTS_LABEL}", str(invariants))


async def test_slow_and_lossy_links_to_the_registry_and_to_catalogd_still_converge(
    deployed: DeployedOLM,
    *,
    extensions: DemoExtensions,
    pusher: RegistryClient,
    toxiproxy: Toxiproxy,
    namespace: str,
    figures: Figures,
) -> None:
    """Every Pod's new connections to the registry, and operator-controller's to catalogd's
    Service, go through Toxiproxy (200 ms each way) with 5% of their packets dropped: a catalog
    never pulled before is served, and an extension from it installs, within the bound below."""
    host, _, registry_port = pusher.host.rpartition(":")
    published = await asyncio.to_thread(
        realdata.publish_community_catalog,
        pusher,
        pusher.host,
        packages=("cat-facts-operator",),
        repository_prefix=unique("slow"),
    )
    oc = await operator_controller_pod(deployed)
    oc_ip = str(oc["status"]["podIP"])
    catalogd = await catalogd_addresses(deployed)
    service = await deployed.kube.get(kinds.SERVICE, "catalogd-service", namespace=SYSTEM_NAMESPACE)
    proxy_ports = process.free_ports(2)
    to_registry = faults.Steer(
        sources=nodenet.POD_CIDRS, destination=host, port=int(registry_port), proxy=f"{host}:{proxy_ports[0]}"
    )
    to_catalogd = faults.Steer(
        sources=f"{oc_ip}/32",
        destination=service["spec"]["clusterIP"],
        port=443,
        proxy=f"{host}:{proxy_ports[1]}",
    )
    toxiproxy.proxy("registry", listen=to_registry.proxy, upstream=pusher.host)
    toxiproxy.proxy("catalogd", listen=to_catalogd.proxy, upstream=f"{catalogd[0]}:8443")
    catalog = unique("slow")
    name = unique("slow")
    try:
        for proxy in ("registry", "catalogd"):
            toxiproxy.latency(proxy, LATENCY_MS)
        with ExitStack() as stack:
            for node in deployed.nodes:
                stack.enter_context(faults.steered(node.network, [to_registry, to_catalogd], loss=LOSS))

            # Connections opened before keep their way: wait until none is left to the registry
            # or to catalogd, so every request of the drill meets the slow, lossy path (the
            # registry's are the nodes' containerd's too, so conntrack's view; operator-controller's
            # from its socket table, which forgets connections a partition drill closed).
            async def only_steered() -> bool:
                direct = sum(
                    faults.established(node.network, peers=[host], port=int(registry_port))
                    for node in deployed.nodes
                )
                peers = [service["spec"]["clusterIP"], *catalogd]
                return direct == 0 and await deployed.connections(oc, peers=peers) == 0

            await eventually(only_steered, what="connections opened before the drill to close", timeout=90)
            started = time.monotonic()
            await serve_catalog(
                deployed.kube, cluster_catalog(catalog, published.digest_ref), timeout=SLOW_BOUND
            )
            serving = time.monotonic() - started
            account = await extensions.installer(namespace)
            await create_cat_facts(extensions, name, namespace, account, catalog=catalog)
            await extensions.wait_installed(name, "1.1.2", timeout=SLOW_BOUND)
            installed = time.monotonic() - started - serving
            steered = {"registry": [0, 0], "catalogd": [0, 0]}
            for node in deployed.nodes:
                for key, steer in (("registry", to_registry), ("catalogd", to_catalogd)):
                    connections, dropped = faults.counts(node.network, steer)
                    steered[key][0] += connections
                    steered[key][1] += dropped
    finally:
        for proxy in ("registry", "catalogd"):
            toxiproxy.remove(proxy)
        await delete_catalog(deployed.kube, catalog)

    figures.add("slow links: latency each way / loss", f"{LATENCY_MS} ms / {LOSS:.0%}")
    figures.add("slow links: new catalog Serving after", f"{serving:.1f} s")
    figures.add("slow links: extension Installed after", f"{installed:.1f} s")
    for key, (connections, dropped) in steered.items():
        figures.add(f"slow links: {key} connections steered / packets dropped", f"{connections} / {dropped}")
    # The drill met the faults: the registry (catalogd's pull, the bundle's) and catalogd were
    # reached through the proxies, and packets were lost on the way.
    assert steered["registry"][0] > 0, steered
    assert steered["catalogd"][0] > 0, steered
    assert steered["registry"][1] + steered["catalogd"][1] > 0, steered
    invariants = await assert_invariants(deployed, extensions, name)
    figures.add(f"slow links: {INVARIANTS_LABEL}", str(invariants))


async def test_a_node_with_olm_pods_lost_moves_them_and_changes_nothing_installed(
    deployed: DeployedOLM,
    *,
    extensions: DemoExtensions,
    demo_catalog: ServedCatalog,
    namespace: str,
    figures: Figures,
) -> None:
    # Not the first node: the API server and registry listen on the host end of its network.
    lost = deployed.nodes[-1]
    assert lost.network != deployed.nodes[0].network
    catalogd_before = await deployed.pods(CATALOGD)
    on_lost = [p["metadata"]["name"] for p in catalogd_before if deployed.node_of(p) is lost]
    survivor = [p["metadata"]["name"] for p in catalogd_before if deployed.node_of(p) is not lost]
    assert len(on_lost) == len(survivor) == 1, [p["spec"]["nodeName"] for p in catalogd_before]
    on_lost += [
        p["metadata"]["name"] for p in await deployed.pods(OPERATOR_CONTROLLER) if deployed.node_of(p) is lost
    ]
    account = await extensions.installer(namespace)
    name = unique("unmoved")
    await create_cat_facts(extensions, name, namespace, account, catalog=demo_catalog.name)
    before = await extensions.wait_installed(name, "1.1.2")
    revisions_before, _ = await extensions.revisions(name)
    # A probe through the API server's proxy that meets the lost replica waits for its connect
    # timeout; this one's is shorter, so a probe says "failed" instead of holding the test up.
    rest = dataclasses.replace(deployed.control_plane.rest, timeout=5.0)
    probes: list[tuple[float, bool, bool]] = []
    """(seconds since the loss, the Service answered, the surviving replica answered)"""

    def answered(path: str) -> bool:
        try:
            status, _ = rest.raw("GET", path)
        except OSError:  # timed out
            return False
        return status == 200

    async def probe(since: float) -> None:
        service = await asyncio.to_thread(answered, content_path(demo_catalog.name, "olm.package"))
        direct = await asyncio.to_thread(answered, pod_content_path(survivor[0], demo_catalog.name))
        probes.append((time.monotonic() - since, service, direct))

    with lost.stopped("kubelet"), lost.network.link_down():
        cut = time.monotonic()

        async def replaced() -> bool:
            await probe(cut)
            for deployment, replicas in ((CATALOGD, 2), (OPERATOR_CONTROLLER, 1)):
                pods = await deployed.pods(deployment)
                ready = [p for p in pods if conditions.of(p, "Ready").get("status") == "True"]
                if len(ready) != replicas or any(deployed.node_of(p) is lost for p in ready):
                    return False
            return True

        # The node controller marks the node unreachable after its grace period (50 s), and the
        # manifests tolerate that for 60 s: the Pods are replaced on the other node after both.
        await eventually(replaced, what="OLM's Pods replaced off the lost node", timeout=240, interval=1.0)
        moved = time.monotonic() - cut
        node = await deployed.kube.get(kinds.NODE, lost.name)
        assert conditions.of(node, "Ready").get("status") == "Unknown"
        # Catalog content through the Service, now served by the replicas on the other node.
        await probe(cut)
        assert probes[-1][1], probes[-1]
        restored = time.monotonic()

    async def rejoined() -> bool:
        node = await deployed.kube.get(kinds.NODE, lost.name)
        return conditions.of(node, "Ready").get("status") == "True"

    await eventually(rejoined, what=f"{lost.name} to be Ready again", timeout=120)
    rejoined_after = time.monotonic() - restored
    after = await extensions.get(name)
    revisions_after, _ = await extensions.revisions(name)
    service_failed = [t for t, service, _ in probes if not service]
    direct_failed = [t for t, _, direct in probes if not direct]
    figures.add("node lost: OLM Pods on it", ", ".join(on_lost))
    figures.add("node lost: cut -> Pods replaced on the other node", f"{moved:.1f} s")
    figures.add("node lost: content probes / Service failures", f"{len(probes)} / {len(service_failed)}")
    figures.add(
        "node lost: Service failures from / until",
        f"{min(service_failed):.0f} / {max(service_failed):.0f} s" if service_failed else "none",
    )
    figures.add("node lost: surviving replica failures", str(len(direct_failed)))
    figures.add("node lost: restored -> node Ready again", f"{rejoined_after:.1f} s")
    # The surviving replica served throughout; nothing installed changed.
    assert direct_failed == [], direct_failed
    assert [r["metadata"]["name"] for r in revisions_after] == [
        r["metadata"]["name"] for r in revisions_before
    ]
    invariants = await assert_invariants(deployed, extensions, name)
    figures.add(f"node lost: {INVARIANTS_LABEL}", str(invariants))
    assert conditions.of(after, "Installed").get("status") == "True"
    assert after["status"]["install"] == before["status"]["install"]
