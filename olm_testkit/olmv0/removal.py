"""Remove what OLM v0 installed in a namespace, so that the next test finds nothing of it.

v0 itself keeps the CRDs it installed, and leaves some cluster-scoped objects behind (an
OperatorGroup's ClusterRoles, a bundle's own ClusterRoles); tests that run later in the session may
install the same package with OLM v1, which would find them in its way. `uninstall` removes those
too, and in an order that keeps v0 from putting anything back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from olm_runtime.client import Client, GroupVersionKind, errors, kinds
from olm_runtime.testing.poll import eventually
from olm_testkit.olmv0 import kinds as v0kinds
from olm_testkit.olmv0.install import installed_alongside

CLUSTER_SCOPED: dict[str, GroupVersionKind] = {
    gvk.kind: gvk
    for gvk in (
        kinds.CLUSTER_ROLE_BINDING,
        kinds.CLUSTER_ROLE,
        kinds.VALIDATING_WEBHOOK_CONFIGURATION,
        kinds.MUTATING_WEBHOOK_CONFIGURATION,
    )
}
"""What v0 makes outside the namespace for a CSV (from the bundle, or generated: its cluster RBAC,
its webhooks) or for an OperatorGroup (its ClusterRoles), besides CRDs."""


async def uninstall(
    kube: Client, namespace: str, *, target_namespaces: Iterable[str] = (), timeout: float = 60.0
) -> None:
    """Remove every v0 installation in `namespace`, read from the cluster (so a failed or upgraded
    install goes too), in an order that keeps v0 from putting anything back: its Subscriptions and
    InstallPlans first (v0 executes a plan again for a while after it completes, recreating what it
    finds missing), then its CSVs (v0's finalizer removes their Deployments, RBAC and webhooks; the
    OperatorGroup must outlive them), its OperatorGroups, and the namespace with
    `target_namespaces`; once those are gone (and with them any plan execution in flight), what v0
    left outside the namespace, the CRDs it installed for this namespace alone, and the
    cluster-scoped Operator objects it made for the namespace's packages."""
    crds = await installed_alongside(kube, namespace)
    outside = await _cluster_scoped_steps(kube, namespace)
    await _delete_all(kube, v0kinds.SUBSCRIPTION, namespace)
    plans = await _delete_all(kube, v0kinds.INSTALL_PLAN, namespace)
    await _deleted(kube, v0kinds.INSTALL_PLAN, plans, namespace=namespace, timeout=timeout)
    csvs = await _delete_all(kube, v0kinds.CLUSTER_SERVICE_VERSION, namespace)
    await _deleted(kube, v0kinds.CLUSTER_SERVICE_VERSION, csvs, namespace=namespace, timeout=timeout)
    await _delete_all(kube, v0kinds.OPERATOR_GROUP, namespace)
    namespaces = sorted({namespace, *target_namespaces})
    for name in namespaces:
        with contextlib.suppress(errors.NotFound):
            await kube.delete(kinds.NAMESPACE, name)
    await _deleted(kube, kinds.NAMESPACE, namespaces, timeout=timeout)
    outside += await _labelled_outside(kube, namespace)
    for gvk, name in outside:
        with contextlib.suppress(errors.NotFound):
            await kube.delete(gvk, name)
    for crd in crds:
        with contextlib.suppress(errors.NotFound):
            await kube.delete(kinds.CUSTOM_RESOURCE_DEFINITION, crd)
    await _deleted(kube, kinds.CUSTOM_RESOURCE_DEFINITION, crds, timeout=timeout)
    # v0 recreates an Operator object while objects labelled as its components exist; the
    # namespace's went with the namespace, the CRDs' just now.
    for operator in (await kube.list(v0kinds.OPERATOR)).items:
        if operator["metadata"]["name"].endswith(f".{namespace}"):
            with contextlib.suppress(errors.NotFound):
                await kube.delete(v0kinds.OPERATOR, operator["metadata"]["name"])


async def _cluster_scoped_steps(kube: Client, namespace: str) -> list[tuple[GroupVersionKind, str]]:
    """The cluster-scoped objects the namespace's InstallPlans made (a bundle's own ClusterRoles
    carry no label naming the namespace), but those of a CSV installed in another namespace too,
    which share them."""
    elsewhere = {
        csv["metadata"]["name"]
        for csv in (await kube.list(v0kinds.CLUSTER_SERVICE_VERSION)).items
        if csv["metadata"]["namespace"] != namespace
    }
    found = []
    for plan in (await kube.list(v0kinds.INSTALL_PLAN, namespace=namespace)).items:
        for step in (plan.get("status") or {}).get("plan") or []:
            resource = step["resource"]
            if resource["kind"] in CLUSTER_SCOPED and step.get("resolving") not in elsewhere:
                found.append((CLUSTER_SCOPED[resource["kind"]], resource["name"]))
    return found


async def _labelled_outside(kube: Client, namespace: str) -> list[tuple[GroupVersionKind, str]]:
    """Cluster-scoped objects labelled with an owner in `namespace` (a CSV's, an OperatorGroup's)."""
    selector = f"{v0kinds.OWNER_NAMESPACE_LABEL}={namespace}"
    return [
        (gvk, item["metadata"]["name"])
        for gvk in CLUSTER_SCOPED.values()
        for item in (await kube.list(gvk, label_selector=selector)).items
    ]


async def _delete_all(kube: Client, gvk: GroupVersionKind, namespace: str) -> list[str]:
    """Delete every `gvk` in `namespace`; their names."""
    names = [item["metadata"]["name"] for item in (await kube.list(gvk, namespace=namespace)).items]
    for name in names:
        with contextlib.suppress(errors.NotFound):
            await kube.delete(gvk, name, namespace=namespace)
    return names


async def _deleted(
    kube: Client, gvk: GroupVersionKind, names: Iterable[str], *, namespace: str | None = None, timeout: float
) -> None:
    """Until none of `names` exists; one that is back without a deletion timestamp (v0 recreated
    it) is deleted again."""
    for name in names:

        async def absent(name: str = name) -> bool:
            try:
                found = await kube.get(gvk, name, namespace=namespace)
            except errors.NotFound:
                return True
            if not found["metadata"].get("deletionTimestamp"):
                with contextlib.suppress(errors.NotFound):
                    await kube.delete(gvk, name, namespace=namespace)
            return False

        await eventually(absent, what=f"{gvk.kind} {name} to be gone", timeout=timeout)
