"""Upgrading OLM itself under installed extensions: what the deployed suite's start measures.

The session deploys the previous release of OLM (`previous_commit`: the newest release tag before
this checkout, else `PREVIOUS_LANDED`, the last commit that landed before release tags existed),
built here from git history with this checkout's `make release`; installs extensions with it; then
applies this checkout's release over it, as a user upgrades. `snapshot` records, before and after,
everything the upgrade must leave alone: each extension's installed bundle and revisions, the
revisions' content Secrets, every object the revisions manage (uid and resourceVersion) and the
extensions' Pods (uid and restarts). `wait_reconciled` decides when "after" is: the new
operator-controller holds the Lease and has reconciled every extension and revision.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import tempfile
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.operator_controller.clusterextension.reconciler import CONTROLLER_NAME as EXTENSIONS
from olm.operator_controller.clusterobjectset import sources
from olm.operator_controller.clusterobjectset.reconciler import CONTROLLER_NAME as REVISIONS
from olm.pipeline.preflight import crdupgradesafety
from olm_runtime.client import Client, GroupVersionKind, errors, kinds
from olm_runtime.testing.poll import eventually
from olm_testkit import metricsreader
from olm_testkit.release import artifacts, source, version

PREVIOUS_LANDED = "b36f4589f37309651c82fb4d42a58a9ce4a2bcc0"
"""The last commit that landed before this suite existed (no release tag yet): the OLM users
run today. Replaced by the newest release tag as soon as there is one."""
SECRET_LIMIT = 64 << 20
SETTLE_WINDOW = 3.0
"""Seconds a snapshot must stay the same to count as settled."""


def previous_commit(project_dir: Path) -> str:
    """The newest release tag reachable from HEAD, not on HEAD itself; else `PREVIOUS_LANDED`."""
    listed = source.git(project_dir, "tag", "--merged", "HEAD", "--no-contains", "HEAD").split()
    releases = [(parsed, tag) for tag in listed if (parsed := version.parse_tag(tag)) is not None]
    if not releases:
        return PREVIOUS_LANDED
    return max(releases, key=lambda pair: pair[0].key())[1]


@contextlib.contextmanager
def checkout(project_dir: Path, commit: str) -> Iterator[Path]:
    """A detached worktree of `commit`, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="olm-previous-") as scratch:
        tree = Path(scratch) / "tree"
        # Fails in a shallow clone, which lacks the previous release: the upgrade needs the history.
        source.git(project_dir, "worktree", "add", "--detach", "--quiet", str(tree), commit)
        try:
            yield tree
        finally:
            with contextlib.suppress(source.SourceError):  # never hide what failed inside
                source.git(project_dir, "worktree", "remove", "--force", str(tree))


def previous_release(project_dir: Path, out: Path, *, image_name: str) -> artifacts.Release:
    """`make release` (this checkout's) of the previous release's source."""
    with checkout(project_dir, previous_commit(project_dir)) as tree:
        return artifacts.make(tree, out, image_name=image_name)


@dataclass(frozen=True)
class Snapshot:
    extensions: dict[str, tuple[str, tuple[str, ...]]]
    """Extension -> (installed bundle version, active revisions)."""
    revisions: dict[str, str]
    """Every revision of the extensions -> uid."""
    secrets: dict[str, str]
    """Every content Secret of those revisions -> resourceVersion."""
    objects: dict[str, tuple[str, str]]
    """`Kind namespace/name` of every managed object -> (uid, resourceVersion)."""
    pods: dict[str, tuple[str, int]]
    """`namespace/name` of every Pod in the extensions' namespaces -> (uid, restarts)."""


async def snapshot(kube: Client, extensions: Iterable[str], system_namespace: str) -> Snapshot:
    installed: dict[str, tuple[str, tuple[str, ...]]] = {}
    revisions: dict[str, str] = {}
    secrets: dict[str, str] = {}
    objects: dict[str, tuple[str, str]] = {}
    pods: dict[str, tuple[str, int]] = {}
    for name in extensions:
        extension = await kube.get(CLUSTER_EXTENSION, name)
        status = extension.get("status") or {}
        bundle = str(((status.get("install") or {}).get("bundle") or {}).get("version"))
        active = tuple(str(r["name"]) for r in status.get("activeRevisions") or ())
        installed[name] = (bundle, active)
        selector = f"{names.OWNER_NAME_LABEL}={name}"
        listed = {
            r["metadata"]["name"]: r
            for r in (await kube.list(CLUSTER_OBJECT_SET, label_selector=selector)).items
        }
        revisions.update((revision_name, r["metadata"]["uid"]) for revision_name, r in listed.items())
        for secret in (
            await kube.list(kinds.SECRET, namespace=system_namespace, label_selector=selector)
        ).items:
            secrets[secret["metadata"]["name"]] = secret["metadata"]["resourceVersion"]
        for revision_name in active:
            for obj in await managed_objects(kube, listed[revision_name], system_namespace):
                meta = obj["metadata"]
                key = f"{obj['kind']} {meta.get('namespace', '')}/{meta['name']}"
                objects[key] = (meta["uid"], meta["resourceVersion"])
        namespace = str(extension["spec"]["namespace"])
        for pod in (await kube.list(kinds.POD, namespace=namespace)).items:
            restarts = sum(
                c.get("restartCount", 0) for c in (pod.get("status") or {}).get("containerStatuses") or ()
            )
            pods[f"{namespace}/{pod['metadata']['name']}"] = (pod["metadata"]["uid"], restarts)
    return Snapshot(extensions=installed, revisions=revisions, secrets=secrets, objects=objects, pods=pods)


async def managed_objects(
    kube: Client, revision: dict[str, Any], system_namespace: str
) -> list[dict[str, Any]]:
    """The live objects `revision` manages, read as they are now."""

    async def get_secret(namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return await kube.get(kinds.SECRET, name, namespace=namespace)
        except errors.NotFound:
            return None

    phases = await sources.resolve_phases(
        revision["spec"], get_secret, system_namespace=system_namespace, limit=SECRET_LIMIT
    )
    found = []
    for phase in phases:
        for resolved in phase.objects:
            manifest = resolved.manifest
            group, _, api_version = str(manifest["apiVersion"]).rpartition("/")
            gvk = GroupVersionKind(group, api_version, str(manifest["kind"]))
            meta = manifest["metadata"]
            # The rendered webhook configurations carry the install namespace, which the API server
            # drops for a cluster-scoped kind.
            namespaced = (await kube.resource_for(gvk)).namespaced
            found.append(
                await kube.get(gvk, meta["name"], namespace=meta.get("namespace") if namespaced else None)
            )
    return found


async def settled_snapshot(
    kube: Client, extensions: Iterable[str], system_namespace: str, *, timeout: float = 120
) -> Snapshot:
    """A snapshot equal to the one taken `SETTLE_WINDOW` seconds before it: cert-manager injecting
    a webhook's CA and Deployments reporting their Pods available still write just after an
    extension is Installed, and those writes are not the upgrade's."""
    wanted = list(extensions)
    previous = await snapshot(kube, wanted, system_namespace)
    latest = previous

    async def unchanged() -> bool:
        nonlocal previous, latest
        await asyncio.sleep(SETTLE_WINDOW)
        latest = await snapshot(kube, wanted, system_namespace)
        same = latest == previous
        previous = latest
        return same

    await eventually(unchanged, what="the extensions' objects to stop changing", timeout=timeout)
    return latest


async def crd_violations(kube: Client, objects: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Each CRD among `objects` checked against the one the cluster serves now, with the CRD
    upgrade-safety rules OLM applies to extensions."""
    found = {}
    for crd in objects:
        if crd.get("kind") != kinds.CUSTOM_RESOURCE_DEFINITION.kind:
            continue
        name = str(crd["metadata"]["name"])
        served = await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, name)
        found[name] = crdupgradesafety.violations(served, crd)
    return found


def differences(before: Snapshot, after: Snapshot) -> dict[str, list[str]]:
    """What changed, by part (empty lists when nothing did)."""
    changed: dict[str, list[str]] = {}
    for part in ("extensions", "revisions", "secrets", "objects", "pods"):
        old, new = getattr(before, part), getattr(after, part)
        changed[part] = sorted(
            f"{key}: {old.get(key)} -> {new.get(key)}"
            for key in old.keys() | new.keys()
            if old.get(key) != new.get(key)
        )
    return changed


# --- the new operator-controller has reconciled everything ----------------------------------------


def _samples(text: str, name: str, controller: str) -> list[tuple[dict[str, str], float]]:
    return [
        (sample.labels, sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and sample.labels.get("controller") == controller
    ]


def caught_up(text: str, controller: str, objects: int) -> bool:
    """Whether `controller` has reconciled `objects` times without failing (every result but
    `error` counts: an active revision's reconcile ends asking to be requeued) and has nothing
    queued or in flight, so each object it listed at start has been reconciled (a scrape's text)."""
    done = sum(
        value
        for labels, value in _samples(text, "controller_runtime_reconcile_total", controller)
        if labels.get("result") != "error"
    )
    queued = sum(value for _, value in _samples(text, "workqueue_depth", controller))
    working = sum(value for _, value in _samples(text, "controller_runtime_active_workers", controller))
    return done >= objects and queued == 0 and working == 0


@dataclass(frozen=True)
class Reconciled:
    pod: str
    seconds: float


async def wait_reconciled(
    kube: Client,
    *,
    system_namespace: str,
    lease: str,
    image: str,
    trust: ssl.SSLContext,
    token: str,
    extensions: int,
    revisions: int,
    timeout: float = 180,
) -> Reconciled:
    """Wait until the operator-controller Pod running `image` holds the Lease and has caught up on
    its `extensions` ClusterExtensions and `revisions` ClusterObjectSets (`caught_up`)."""
    started = time.monotonic()
    leader = ""

    async def done() -> bool:
        nonlocal leader
        listed = await kube.list(
            kinds.POD, namespace=system_namespace, label_selector="app.kubernetes.io/name=operator-controller"
        )
        new = [
            p
            for p in listed.items
            if p["spec"]["containers"][0]["image"] == image and not p["metadata"].get("deletionTimestamp")
        ]
        held = await kube.get(kinds.LEASE, lease, namespace=system_namespace)
        holder = str((held.get("spec") or {}).get("holderIdentity") or "")
        leader = next((p["metadata"]["name"] for p in new if holder.startswith(p["metadata"]["name"])), "")
        if not leader:
            return False
        pod = next(p for p in new if p["metadata"]["name"] == leader)
        status, text = await metricsreader.scrape(
            metricsreader.pod_metrics_url(pod),
            trust,
            f"operator-controller-service.{system_namespace}.svc",
            token,
        )
        return (
            status == 200
            and caught_up(text, EXTENSIONS, extensions)
            and caught_up(text, REVISIONS, revisions)
        )

    await eventually(
        done,
        what=f"the new operator-controller to lead and reconcile {extensions} extensions and {revisions} "
        "revisions",
        timeout=timeout,
    )
    return Reconciled(pod=leader, seconds=time.monotonic() - started)


async def catalog_source(kube: Client, name: str) -> str:
    found = await kube.get(CLUSTER_CATALOG, name)
    return str((((found.get("status") or {}).get("resolvedSource") or {}).get("image") or {}).get("ref"))


@contextlib.asynccontextmanager
async def namespaces(kube: Client, *wanted: str) -> AsyncIterator[None]:
    for name in wanted:
        await kube.apply(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}, field_manager="e2e-upgrade"
        )
    try:
        yield
    finally:
        for name in wanted:
            with contextlib.suppress(errors.NotFound):
                await kube.delete(kinds.NAMESPACE, name)
