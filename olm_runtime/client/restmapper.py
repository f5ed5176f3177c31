"""Mapping kinds to resources through API discovery.

The mapper asks the server once (aggregated discovery: two requests for every group) and caches the
answer. When a kind or resource is missing it asks again, once per lookup, so CustomResourceDefinitions
installed after the first lookup are found; a kind still missing raises `NoKindMatch`. A CRD becomes
visible to discovery shortly after it is Established, so callers that just created one retry on
`NoKindMatch` for a moment.

Servers without aggregated discovery (before Kubernetes 1.30 unless enabled) are read one
group-version at a time, only for the group-versions asked about.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from olm_runtime.client import errors
from olm_runtime.client.gvk import GroupVersionKind, GroupVersionResource, ResourceInfo
from olm_runtime.client.transport import Requester

__all__ = ["NoKindMatch", "RESTMapper", "parse_aggregated", "parse_resource_list"]

_AGGREGATED = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)


class NoKindMatch(LookupError):
    """Discovery does not know the kind (or resource): its CRD is not installed (yet) or the group
    version is not served."""

    def __init__(self, what: GroupVersionKind | GroupVersionResource) -> None:
        super().__init__(f"no matches for {what}: is its CustomResourceDefinition installed?")
        self.what = what


def parse_aggregated(document: Mapping[str, Any]) -> list[ResourceInfo]:
    """Resources from an `APIGroupDiscoveryList` (the body of `/api` or `/apis`)."""
    infos: list[ResourceInfo] = []
    for group_entry in document.get("items") or ():
        group = str((group_entry.get("metadata") or {}).get("name") or "")
        for version_entry in group_entry.get("versions") or ():
            version = str(version_entry.get("version") or "")
            for resource in version_entry.get("resources") or ():
                kind = (resource.get("responseKind") or {}).get("kind")
                if not kind or not version:
                    continue
                infos.append(
                    ResourceInfo(
                        gvk=GroupVersionKind(group, version, str(kind)),
                        gvr=GroupVersionResource(group, version, str(resource["resource"])),
                        namespaced=resource.get("scope") == "Namespaced",
                        verbs=frozenset(resource.get("verbs") or ()),
                        subresources=frozenset(
                            str(s["subresource"])
                            for s in resource.get("subresources") or ()
                            if "subresource" in s
                        ),
                    )
                )
    return infos


def parse_resource_list(group: str, version: str, document: Mapping[str, Any]) -> list[ResourceInfo]:
    """Resources from an `APIResourceList` (the body of `/api/v1` or `/apis/<group>/<version>`)."""
    subresources: dict[str, set[str]] = {}
    entries = []
    for entry in document.get("resources") or ():
        name = str(entry.get("name") or "")
        parent, slash, sub = name.partition("/")
        if slash:
            subresources.setdefault(parent, set()).add(sub)
        elif name and entry.get("kind"):
            entries.append(entry)
    return [
        ResourceInfo(
            gvk=GroupVersionKind(group, version, str(entry["kind"])),
            gvr=GroupVersionResource(group, version, str(entry["name"])),
            namespaced=bool(entry.get("namespaced")),
            verbs=frozenset(entry.get("verbs") or ()),
            subresources=frozenset(subresources.get(str(entry["name"]), ())),
        )
        for entry in entries
    ]


class RESTMapper:
    """Kind <-> resource lookups from discovery, cached for the life of the mapper."""

    def __init__(self, transport: Requester) -> None:
        self._transport = transport
        self._by_kind: dict[GroupVersionKind, ResourceInfo] = {}
        self._by_resource: dict[GroupVersionResource, ResourceInfo] = {}
        self._aggregated: bool | None = None  # None until the server was first asked
        self._lock = asyncio.Lock()
        self._generation = 0  # bumps on every refresh, so concurrent misses share one

    async def resource_for(self, gvk: GroupVersionKind) -> ResourceInfo:
        """The resource serving `gvk`; raises `NoKindMatch` when discovery does not list it."""
        info = self._by_kind.get(gvk)
        if info is None:
            await self._refresh(gvk.group, gvk.version)
            info = self._by_kind.get(gvk)
            if info is None:
                raise NoKindMatch(gvk)
        return info

    async def kind_for(self, gvr: GroupVersionResource) -> GroupVersionKind:
        """The kind served by `gvr`; raises `NoKindMatch` when discovery does not list it."""
        info = self._by_resource.get(gvr)
        if info is None:
            await self._refresh(gvr.group, gvr.version)
            info = self._by_resource.get(gvr)
            if info is None:
                raise NoKindMatch(gvr)
        return info.gvk

    def add(self, infos: Iterable[ResourceInfo]) -> None:
        """Teach the mapper resources without asking the server (tests, well-known kinds)."""
        for info in infos:
            self._by_kind.setdefault(info.gvk, info)
            self._by_resource.setdefault(info.gvr, info)

    async def reset(self) -> None:
        """Forget everything; the next lookup asks the server again."""
        async with self._lock:
            self._by_kind.clear()
            self._by_resource.clear()
            self._generation += 1

    async def _refresh(self, group: str, version: str) -> None:
        seen = self._generation
        async with self._lock:
            if self._generation != seen:
                return  # another task refreshed while this one waited
            if self._aggregated is not False:
                infos = await self._aggregated_discovery()
                if infos is not None:
                    self._aggregated = True
                    self._by_kind.clear()
                    self._by_resource.clear()
                    self.add(infos)
                    self._generation += 1
                    return
                self._aggregated = False
            self._replace_group_version(group, version, await self._group_version(group, version))
            self._generation += 1

    def _replace_group_version(self, group: str, version: str, infos: list[ResourceInfo]) -> None:
        for gvk in [k for k in self._by_kind if (k.group, k.version) == (group, version)]:
            del self._by_kind[gvk]
        for gvr in [r for r in self._by_resource if (r.group, r.version) == (group, version)]:
            del self._by_resource[gvr]
        self.add(infos)

    async def _aggregated_discovery(self) -> list[ResourceInfo] | None:
        infos: list[ResourceInfo] = []
        for path in ("/api", "/apis"):
            document = orjson.loads(
                await self._transport.request("GET", path, headers={"Accept": _AGGREGATED})
            )
            if document.get("kind") != "APIGroupDiscoveryList":
                return None
            infos.extend(parse_aggregated(document))
        return infos

    async def _group_version(self, group: str, version: str) -> list[ResourceInfo]:
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            document = orjson.loads(await self._transport.request("GET", path))
        except errors.NotFound:
            return []
        return parse_resource_list(group, version, document)
