"""Reading OLM v0's installations, and the objects it made for one, from the cluster.

`installations` pairs each Subscription with the CSV it installed, the OperatorGroups and
InstallPlans of its namespace and the ClusterExtension a migration already wrote for it; a CSV
without a Subscription is an installation too (a migration deleted the Subscription before it was
interrupted, or someone created the CSV by hand). `v0_objects` lists what v0 made for one
installation among the kinds it creates; `live_object` reads one rendered object as it is now.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Final

from olm.api.kinds import CLUSTER_EXTENSION, OPERATOR_CONDITION
from olm.cli.migrate.v0 import (
    COPIED_FROM_LABEL,
    CSV,
    INSTALL_PLAN,
    MIGRATED_FROM_ANNOTATION,
    OPERATOR_GROUP,
    OWNER_LABEL,
    SUBSCRIPTION,
    Installation,
    made_by,
)
from olm_runtime.client import Client, GroupVersionKind, NoKindMatch, errors, kinds

__all__ = ["NoV0", "installations", "live_object", "v0_objects"]

V0_MADE_KINDS: Final = (
    kinds.DEPLOYMENT,
    kinds.SERVICE_ACCOUNT,
    kinds.SERVICE,
    kinds.CONFIG_MAP,
    kinds.SECRET,
    kinds.ROLE,
    kinds.ROLE_BINDING,
    OPERATOR_CONDITION,
)
"""The namespaced kinds v0 creates for a CSV (its InstallPlan steps and its Deployment installer)."""
V0_MADE_CLUSTER_KINDS: Final = (
    kinds.CLUSTER_ROLE,
    kinds.CLUSTER_ROLE_BINDING,
    GroupVersionKind("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration"),
    GroupVersionKind("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration"),
)
"""The cluster-scoped kinds v0's CSV finalizer deletes by its `olm.owner` labels."""


class NoV0(Exception):
    """OLM v0's API is not served: its CRDs are not installed."""


async def _items(client: Client, gvk: GroupVersionKind, namespace: str | None) -> list[dict[str, Any]]:
    return [dict(item) for item in (await client.list(gvk, namespace=namespace)).items]


def _by_namespace(objects: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for obj in objects:
        grouped[str(obj["metadata"].get("namespace") or "")].append(obj)
    return grouped


async def installations(client: Client, namespace: str | None) -> list[Installation]:
    """Every v0 installation (in `namespace`, or in all namespaces when None)."""
    try:
        subscriptions = await _items(client, SUBSCRIPTION, namespace)
        csvs = [
            c
            for c in await _items(client, CSV, namespace)
            if COPIED_FROM_LABEL not in (c["metadata"].get("labels") or {})
        ]
        groups = _by_namespace(await _items(client, OPERATOR_GROUP, namespace))
        plans = _by_namespace(await _items(client, INSTALL_PLAN, namespace))
    except NoKindMatch:
        raise NoV0("OLM v0 is not installed here: its Subscription API is not served") from None
    migrated: dict[str, Mapping[str, Any]] = {}
    for extension in await _items(client, CLUSTER_EXTENSION, None):
        origin = (extension["metadata"].get("annotations") or {}).get(MIGRATED_FROM_ANNOTATION)
        if origin:
            migrated[origin.split("/", 1)[0] + "/" + _package(extension)] = extension
    csv_by_key = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in csvs}
    found: list[Installation] = []
    claimed: set[tuple[str, str]] = set()
    for subscription in subscriptions:
        ns = subscription["metadata"]["namespace"]
        installed = str((subscription.get("status") or {}).get("installedCSV") or "")
        claimed.add((ns, installed))
        package = str((subscription.get("spec") or {}).get("name") or "")
        found.append(
            Installation(
                namespace=ns,
                subscription=subscription,
                csv=csv_by_key.get((ns, installed)),
                operator_groups=groups.get(ns, []),
                install_plans=plans.get(ns, []),
                extension=migrated.get(f"{ns}/{package}"),
            )
        )
    by_origin = {str(e["metadata"]["annotations"][MIGRATED_FROM_ANNOTATION]): e for e in migrated.values()}
    for key, csv in csv_by_key.items():
        if key in claimed:
            continue
        ns, name = key
        found.append(
            Installation(
                namespace=ns,
                subscription=None,
                csv=csv,
                operator_groups=groups.get(ns, []),
                install_plans=plans.get(ns, []),
                extension=by_origin.get(f"{ns}/{name}"),
            )
        )
    # A migration interrupted after it deleted the CSV: only its ClusterExtension is left to finish.
    for origin, unfinished in by_origin.items():
        ns, name = origin.split("/", 1)
        if (ns, name) not in csv_by_key and namespace in (None, ns):
            found.append(
                Installation(
                    namespace=ns,
                    subscription=None,
                    csv=None,
                    operator_groups=groups.get(ns, []),
                    install_plans=[],
                    extension=unfinished,
                )
            )
    return found


def _package(extension: Mapping[str, Any]) -> str:
    catalog = ((extension.get("spec") or {}).get("source") or {}).get("catalog") or {}
    return str(catalog.get("packageName") or "")


async def v0_objects(client: Client, installation: Installation) -> list[dict[str, Any]]:
    """What v0 made for `installation` among the kinds it creates (empty once its CSV is gone and
    its marks were taken off)."""
    found: list[dict[str, Any]] = []
    for gvk in V0_MADE_KINDS:
        try:
            found += [
                o for o in await _items(client, gvk, installation.namespace) if made_by(o, installation)
            ]
        except NoKindMatch:
            continue
    selector = f"{OWNER_LABEL}={installation.csv_name}"
    for gvk in V0_MADE_CLUSTER_KINDS:
        listed = await client.list(gvk, label_selector=selector)
        found += [dict(o) for o in listed.items if made_by(o, installation)]
    return found


async def live_object(client: Client, manifest: Mapping[str, Any]) -> dict[str, Any] | None:
    """The object `manifest` names as it is in the cluster (None: it does not exist)."""
    gvk = GroupVersionKind.from_api_version(manifest["apiVersion"], manifest["kind"])
    metadata = manifest["metadata"]
    try:
        return dict(await client.get(gvk, metadata["name"], namespace=metadata.get("namespace")))
    except errors.NotFound:
        return None
