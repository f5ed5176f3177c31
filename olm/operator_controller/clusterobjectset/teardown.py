"""Releasing a revision's objects: when it is archived or deleted.

Phases are walked in reverse order. An object this revision controls is deleted; an object another
revision (or anyone else) now controls only loses this revision's ownerReference. A phase whose
deletions are still in progress (finalizers) stops the walk: the earlier phases wait, so for
example Services outlive the workloads that use them. Within a phase, aggregated ClusterRoles go
before the roles that feed them (`_aggregated_first`).

A revision deleted with its ClusterExtension carries the extension's removal policy
(`names.REMOVAL_POLICY_ANNOTATION`), which takes the CRDs out of that order and handles them first:

- `Retain`: each CRD this revision controls is kept (`_keep_crd`): its OLM labels and this
  revision's ownerReference are taken off, it is marked with the package it came from so the
  package's next installation adopts it, and a conversion webhook that goes away with the
  extension is replaced by `None` conversion where that is lossless (`conversion_on_removal`).
- `Cascade`: each CRD this revision controls is deleted, and the walk waits until the API server
  has deleted its custom resources and the CRD itself, so the extension's controller is still
  running while their finalizers are handled; the message names what is still waited on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from olm.api import names, ownership
from olm.api.extensionspec import RemovalPolicy
from olm.operator_controller.clusterobjectset import access
from olm.operator_controller.clusterobjectset.sources import ResolvedObject, ResolvedPhase
from olm_runtime import ownerrefs
from olm_runtime.client import Client, GroupVersionKind, NoKindMatch, PatchType, errors, kinds
from olm_runtime.client.client import object_kind

__all__ = ["KeptCRD", "Progress", "conversion_on_removal", "release_all"]

MAX_NAMED = 5
"""Custom resources named in one message while a cascading removal waits; the rest are counted."""

_OLM_LABELS = (names.OWNER_KIND_LABEL, names.OWNER_NAME_LABEL, names.REVISION_NAME_LABEL)


@dataclass(frozen=True)
class KeptCRD:
    """A CRD a `Retain` removal kept, and what happened to its conversion."""

    name: str
    conversion: str
    """Empty when the CRD converts nothing through the extension; otherwise what was done."""


@dataclass(frozen=True)
class Progress:
    done: bool
    """True once nothing of this revision remains."""
    waiting: str = ""
    """What a cascading removal still waits on, for the status."""
    kept: tuple[KeptCRD, ...] = ()
    """CRDs kept by this call (each is kept once: afterwards it is no longer this revision's)."""


def _is_gone(answer: Mapping[str, Any]) -> bool:
    return answer.get("kind") == "Status" or not (answer.get("metadata") or {}).get("deletionTimestamp")


def _is_crd(manifest: Mapping[str, Any]) -> bool:
    return manifest.get("kind") == kinds.CUSTOM_RESOURCE_DEFINITION.kind and str(
        manifest.get("apiVersion", "")
    ).startswith(kinds.CUSTOM_RESOURCE_DEFINITION.group + "/")


def _schema_key(version: Mapping[str, Any]) -> bytes:
    return orjson.dumps(version.get("schema") or {}, option=orjson.OPT_SORT_KEYS)


def conversion_on_removal(
    crd: Mapping[str, Any], removed_services: frozenset[tuple[str, str]]
) -> tuple[dict[str, Any] | None, str]:
    """What keeping `crd` does to its conversion when the Services `removed_services`
    (namespace, name) go away: the new `spec.conversion` (None: leave it) and a sentence for the
    Event. `None` conversion only rewrites `apiVersion`, so it loses nothing exactly when every
    version has the same schema; otherwise the webhook stays configured and the sentence says why."""
    spec = crd.get("spec") or {}
    conversion = spec.get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return None, ""
    client_config = (conversion.get("webhook") or {}).get("clientConfig") or {}
    service = client_config.get("service") or {}
    where = (str(service.get("namespace") or ""), str(service.get("name") or ""))
    if where not in removed_services:
        return None, ""  # served by something that stays
    versions = [v for v in spec.get("versions") or [] if isinstance(v, Mapping)]
    if len({_schema_key(v) for v in versions}) <= 1:
        return (
            {"strategy": "None"},
            f"its conversion webhook (Service {where[0]}/{where[1]}) is removed with the extension and "
            "all its versions share one schema, so it now uses None conversion",
        )
    listed = ", ".join(str(v.get("name")) for v in versions)
    return (
        None,
        f"it keeps its conversion webhook (Service {where[0]}/{where[1]}, removed with the extension): "
        f"its versions {listed} have different schemas, so None conversion could lose data; objects "
        "can be read only in the version they are stored in until a conversion webhook serves again",
    )


def _removed_services(phases: Sequence[ResolvedPhase]) -> frozenset[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for phase in phases:
        for source in phase.objects:
            manifest = source.manifest
            if manifest.get("kind") == "Service" and manifest.get("apiVersion") == "v1":
                metadata = manifest.get("metadata") or {}
                found.add((str(metadata.get("namespace") or ""), str(metadata.get("name") or "")))
    return frozenset(found)


@dataclass(frozen=True)
class _Live:
    gvk: GroupVersionKind
    namespace: str | None
    obj: Mapping[str, Any]


async def _live(client: Client, manifest: Mapping[str, Any]) -> _Live | None:
    """The object of `manifest` as it is now; None when it is absent or its kind is gone."""
    metadata = manifest.get("metadata") or {}
    name, namespace = str(metadata.get("name") or ""), metadata.get("namespace") or None
    try:
        gvk = object_kind(manifest)
        info = await client.resource_for(gvk)
    except (ValueError, NoKindMatch):
        return None
    namespace = namespace if info.namespaced else None
    try:
        return _Live(gvk, namespace, await client.get(gvk, name, namespace=namespace))
    except errors.NotFound:
        return None


async def _drop_reference(client: Client, found: _Live, me: ownership.Revision) -> None:
    refs = ownerrefs.owner_references(found.obj)
    if not any(r.get("uid") == me.uid for r in refs):
        return
    patch = ownership.guarded_patch(
        found.obj, {"ownerReferences": ownership.references_without(refs, me.uid)}
    )
    name = found.obj["metadata"]["name"]
    await client.patch(found.gvk, name, patch, namespace=found.namespace, patch_type=PatchType.MERGE)


def _controlled_by(live: Mapping[str, Any], me: ownership.Revision) -> bool:
    controller = ownerrefs.controller_of(live)
    return controller is not None and controller.get("uid") == me.uid


async def _delete_or_release(
    client: Client, me: ownership.Revision, manifest: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    """Delete the object of `manifest` when `me` controls it, else drop `me`'s reference to it; the
    object while its deletion is still in progress (finalizers), None once it is gone or released."""
    found = await _live(client, manifest)
    if found is None:
        return None
    if not _controlled_by(found.obj, me):
        await _drop_reference(client, found, me)
        return None
    if (found.obj.get("metadata") or {}).get("deletionTimestamp"):
        return found.obj
    try:
        answer = await client.delete(found.gvk, found.obj["metadata"]["name"], namespace=found.namespace)
    except errors.NotFound:
        return None
    return None if _is_gone(answer) else answer


async def _keep_crd(
    client: Client,
    me: ownership.Revision,
    live: Mapping[str, Any],
    removed_services: frozenset[tuple[str, str]],
) -> KeptCRD:
    """Let go of the CRD `live`, which `me` controls, leaving it working (one guarded patch)."""
    metadata = live["metadata"]
    labels = metadata.get("labels") or {}
    conversion, note = conversion_on_removal(live, removed_services)
    changes: dict[str, Any] = {
        "ownerReferences": ownership.references_without(ownerrefs.owner_references(live), me.uid),
        "labels": {key: None for key in _OLM_LABELS if key in labels},
    }
    package = me.labels.get(names.PACKAGE_NAME_LABEL)
    if package:
        changes["annotations"] = {names.RETAINED_PACKAGE_ANNOTATION: package}
    patch = ownership.guarded_patch(live, changes)
    if conversion is not None:
        patch["spec"] = {"conversion": {"strategy": conversion["strategy"], "webhook": None}}
    await client.patch(kinds.CUSTOM_RESOURCE_DEFINITION, metadata["name"], patch, patch_type=PatchType.MERGE)
    return KeptCRD(str(metadata["name"]), note)


async def _custom_resources_waited_on(client: Client, crd: Mapping[str, Any]) -> str:
    """What deleting `crd` waits on: its custom resources, the first ones named with their finalizers."""
    name = crd["metadata"]["name"]
    spec = crd.get("spec") or {}
    served = [v for v in spec.get("versions") or [] if v.get("served")]
    kind = str((spec.get("names") or {}).get("kind") or "")
    if not served or not kind:
        return f"CRD {name} is being deleted"
    gvk = GroupVersionKind(str(spec.get("group")), str(served[0]["name"]), kind)
    try:
        # Asked first, so that least-privilege RBAC (no list on the custom resources) leaves no
        # refused request in the audit log.
        if not await access.allowed(client, await client.resource_for(gvk), "list"):
            return f"CRD {name} is being deleted; the ServiceAccount may not list its custom resources"
        listed = await client.list(gvk)
    except (errors.APIError, NoKindMatch) as e:
        return f"CRD {name} is being deleted; its custom resources cannot be listed: {e}"
    items = listed.items
    if not items:
        return f"CRD {name} is being deleted"
    stuck = [i for i in items if (i.get("metadata") or {}).get("finalizers")]
    lines = []
    for item in stuck[:MAX_NAMED]:
        meta = item["metadata"]
        where = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]
        lines.append(f"{kind} {where} waits for finalizers {meta['finalizers']}")
    more = f"; and {len(stuck) - MAX_NAMED} more" if len(stuck) > MAX_NAMED else ""
    named = ("; " + "; ".join(lines) + more) if lines else ""
    return f"CRD {name} is being deleted: {len(items)} {kind} custom resource(s) remain{named}"


async def _cascade_crds(client: Client, me: ownership.Revision, crds: Sequence[ResolvedObject]) -> str:
    """Delete the CRDs `me` controls; what is still waited on ("" when they are all gone)."""
    waiting: list[str] = []
    for source in crds:
        if (deleting := await _delete_or_release(client, me, source.manifest)) is not None:
            waiting.append(await _custom_resources_waited_on(client, deleting))
    if not waiting:
        return ""
    return (
        "deleting custom resources before the rest of the extension (removal policy Cascade): "
        + "; ".join(waiting)
        + ". The extension's controller removes their finalizers; if it no longer runs, remove them "
        'by hand (kubectl patch <kind> <name> --type=merge -p \'{"metadata":{"finalizers":null}}\')'
    )


def _aggregated_first(objects: Sequence[ResolvedObject]) -> list[ResolvedObject]:
    """`objects` with the ClusterRoles that have an `aggregationRule` first. Deleting a role that
    aggregates into one of them makes the API server's aggregation controller re-apply that one's
    rules, and an apply creates what it does not find: if the aggregated role is deleted in
    between, it comes back, with no owner. Deleted first, it is gone from that controller's cache
    before any of its sources' deletions reaches it."""
    return sorted(objects, key=lambda source: "aggregationRule" not in source.manifest)


async def _release_phase(
    client: Client, me: ownership.Revision, phase: ResolvedPhase, skip_crds: bool
) -> bool:
    """Delete or release every object of `phase`; True when none of its deletions is in progress."""
    pending = False
    for source in _aggregated_first(phase.objects):
        if not (skip_crds and _is_crd(source.manifest)):
            pending = await _delete_or_release(client, me, source.manifest) is not None or pending
    return not pending


async def release_all(
    client: Client,
    me: ownership.Revision,
    phases: Sequence[ResolvedPhase],
    policy: RemovalPolicy | None = None,
) -> Progress:
    """Delete or release every object of `phases`, CRDs as `policy` says (None: like the rest)."""
    crds = [source for phase in phases for source in phase.objects if _is_crd(source.manifest)]
    kept: list[KeptCRD] = []
    if policy is RemovalPolicy.RETAIN:
        removed = _removed_services(phases)
        for source in crds:
            found = await _live(client, source.manifest)
            if found is None:
                continue
            if _controlled_by(found.obj, me):
                kept.append(await _keep_crd(client, me, found.obj, removed))
            else:
                await _drop_reference(client, found, me)
    elif policy is RemovalPolicy.CASCADE:
        waiting = await _cascade_crds(client, me, crds)
        if waiting:
            return Progress(False, waiting)
    for phase in reversed(phases):
        if not await _release_phase(client, me, phase, skip_crds=policy is not None):
            return Progress(False, kept=tuple(kept))
    return Progress(True, kept=tuple(kept))
