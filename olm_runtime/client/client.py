"""The dynamic client: every kind as plain dicts, addressed by GroupVersionKind.

Reads and writes go straight to the API server (there is no cache here; see `olm_runtime.cache` for
cache-backed reads). Objects passed to writes carry their own `apiVersion`, `kind` and `metadata`;
calls that address an object by name take the kind explicitly. Namespaced kinds need a namespace;
a namespace on a cluster-scoped object (common in hand-written manifests) is ignored.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Self

import orjson

from olm_runtime.client import errors
from olm_runtime.client._identity import IdentityCache
from olm_runtime.client.config import RestConfig, load_config
from olm_runtime.client.gvk import GroupVersionKind, ResourceInfo
from olm_runtime.client.options import (
    METADATA_LIST_ACCEPT,
    ObjectList,
    PatchType,
    Preconditions,
    PropagationPolicy,
    WatchEvent,
)
from olm_runtime.client.restmapper import RESTMapper
from olm_runtime.client.transport import Transport

__all__ = ["Client"]

Object = dict[str, Any]
DEFAULT_PAGE_SIZE = 500


def object_kind(obj: Mapping[str, Any]) -> GroupVersionKind:
    """The GroupVersionKind named by an object's `apiVersion` and `kind`."""
    try:
        return GroupVersionKind.from_api_version(str(obj["apiVersion"]), str(obj["kind"]))
    except KeyError as e:
        raise ValueError(f"object has no {e.args[0]}: {dict(obj.get('metadata') or {})}") from e


def _selectors(label_selector: str | None, field_selector: str | None) -> dict[str, str]:
    params = {}
    if label_selector:
        params["labelSelector"] = label_selector
    if field_selector:
        params["fieldSelector"] = field_selector
    return params


class Client:
    """Talks to the API server with dicts. Create with `await Client.connect()`, close with `close()`
    (or `async with`). `impersonating` and `for_service_account` return clients for other identities
    that share this client's connections and discovery cache.

    `field_manager` names this client in `managedFields` on every write (required by `apply`);
    `dry_run` makes every write a dry run (the server validates and admits, and stores nothing).
    """

    def __init__(
        self,
        transport: Transport,
        *,
        mapper: RESTMapper | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        _owns_transport: bool = False,
        _identities: IdentityCache | None = None,
    ) -> None:
        self.transport = transport
        self.mapper = mapper if mapper is not None else RESTMapper(transport)
        self.field_manager = field_manager
        self.dry_run = dry_run
        self._owns_transport = _owns_transport
        self._identities = _identities if _identities is not None else IdentityCache(transport)

    @classmethod
    async def connect(
        cls, config: RestConfig | None = None, *, field_manager: str | None = None, dry_run: bool = False
    ) -> Client:
        """A client with its own connection pools, from `config` or else `load_config()`."""
        config = config if config is not None else await load_config()
        transport = await Transport.create(config)
        return cls(transport, field_manager=field_manager, dry_run=dry_run, _owns_transport=True)

    @property
    def config(self) -> RestConfig:
        return self.transport.config

    async def close(self) -> None:
        """Close the connection pools (a no-op on derived clients, which share their parent's)."""
        if self._owns_transport:
            await self.transport.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # identity -----------------------------------------------------------------------------------

    def _derive(self, config: RestConfig) -> Client:
        return Client(
            self.transport.with_config(config),
            mapper=self.mapper,
            field_manager=self.field_manager,
            dry_run=self.dry_run,
            _identities=self._identities,
        )

    def impersonating(self, user: str, groups: Sequence[str] = ()) -> Client:
        """A client that acts as `user` in `groups` (Impersonate-User/-Group headers). Requests stay
        authenticated as this client, which needs RBAC permission to `impersonate` them."""
        return self._derive(
            dataclasses.replace(self.config, impersonate_user=user, impersonate_groups=tuple(groups))
        )

    def for_service_account(
        self, namespace: str, name: str, *, audiences: tuple[str, ...] = (), expiration_seconds: int = 3600
    ) -> Client:
        """A client authenticated as a ServiceAccount with tokens from its TokenRequest subresource.

        The root client (the one this client was derived from, or this one) requests the tokens and
        needs `create` on `serviceaccounts/token`. Tokens are cached and renewed at 80% of their
        lifetime; all clients for the same account share one token.
        """
        provider = self._identities.service_account(
            namespace, name, audiences=audiences, expiration_seconds=expiration_seconds
        )
        return self._derive(self.config.with_identity(token_provider=provider))

    # discovery ----------------------------------------------------------------------------------

    async def resource_for(self, gvk: GroupVersionKind) -> ResourceInfo:
        """Discovery's answer for `gvk` (resource name, scope, verbs); raises `NoKindMatch`."""
        return await self.mapper.resource_for(gvk)

    async def _path(
        self,
        gvk: GroupVersionKind,
        *,
        namespace: str | None = None,
        name: str | None = None,
        subresource: str | None = None,
    ) -> str:
        info = await self.mapper.resource_for(gvk)
        return info.path(namespace=namespace, name=name, subresource=subresource)

    async def _object_path(
        self, obj: Mapping[str, Any], *, named: bool, subresource: str | None = None
    ) -> str:
        info = await self.mapper.resource_for(object_kind(obj))
        metadata = obj.get("metadata") or {}
        name = metadata.get("name")
        if named and not name:
            raise ValueError(f"{info.gvk.kind} object has no metadata.name")
        namespace = metadata.get("namespace") if info.namespaced else None
        if info.namespaced and not namespace:
            raise ValueError(f"{info.gvk.kind} {name or ''} is namespaced but has no metadata.namespace")
        return info.path(namespace=namespace, name=name if named else None, subresource=subresource)

    def _write_params(
        self, dry_run: bool | None, field_manager: str | None, *, force: bool | None = None
    ) -> dict[str, str]:
        params = {}
        if self.dry_run if dry_run is None else dry_run:
            params["dryRun"] = "All"
        if manager := field_manager or self.field_manager:
            params["fieldManager"] = manager
        if force is not None:
            params["force"] = "true" if force else "false"
        return params

    async def _call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        accept: str | None = None,
    ) -> Object:
        data = await self.transport.request(
            method,
            path,
            params=params,
            body=None if body is None else orjson.dumps(body),
            content_type=content_type if body is not None else None,
            headers=None if accept is None else {"Accept": accept},
        )
        result: Object = orjson.loads(data)
        return result

    # reads --------------------------------------------------------------------------------------

    async def get(self, gvk: GroupVersionKind, name: str, *, namespace: str | None = None) -> Object:
        """One object; raises `errors.NotFound` when it does not exist."""
        return await self._call("GET", await self._path(gvk, namespace=namespace, name=name))

    async def list_page(
        self,
        gvk: GroupVersionKind,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        metadata_only: bool = False,
    ) -> ObjectList:
        """One page of a list (all of it when `limit` is None); `continue_token` asks for the next.
        `metadata_only` asks for each item's metadata alone (PartialObjectMetadata), as
        controller-runtime's metadata client does: a list of Secrets without their data."""
        params = _selectors(label_selector, field_selector)
        if limit is not None:
            params["limit"] = str(limit)
        if continue_token:
            params["continue"] = continue_token
        if resource_version is not None:
            params["resourceVersion"] = resource_version
        if resource_version_match:
            params["resourceVersionMatch"] = resource_version_match
        path = await self._path(gvk, namespace=namespace)
        body = await self._call(
            "GET", path, params=params, accept=METADATA_LIST_ACCEPT if metadata_only else None
        )
        items: list[Object] = body.get("items") or []
        for item in items:
            item["apiVersion"] = gvk.api_version
            item["kind"] = gvk.kind
        metadata = body.get("metadata") or {}
        return ObjectList(items, str(metadata.get("resourceVersion") or ""), metadata.get("continue") or None)

    async def list(
        self,
        gvk: GroupVersionKind,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        metadata_only: bool = False,
    ) -> ObjectList:
        """Every matching object (its metadata only with `metadata_only`), fetched `page_size` at a
        time, with the resourceVersion of the list. If the continuation expires between pages
        (410), the list is retried in one request."""

        async def fetch(limit: int | None, continue_token: str | None = None) -> ObjectList:
            return await self.list_page(
                gvk,
                namespace=namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=limit,
                continue_token=continue_token,
                resource_version=resource_version,
                resource_version_match=resource_version_match,
                metadata_only=metadata_only,
            )

        page = await fetch(page_size)
        items = page.items
        while page.continue_token:
            try:
                page = await fetch(page_size, page.continue_token)
            except errors.Gone:
                return await fetch(None)
            items.extend(page.items)
        return ObjectList(items, page.resource_version)

    def watch(
        self,
        gvk: GroupVersionKind,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        allow_bookmarks: bool = True,
        send_initial_events: bool = False,
        timeout_seconds: int | None = None,
        read_timeout: float | None = None,
    ) -> AbstractAsyncContextManager[AsyncIterator[WatchEvent]]:
        """Watch changes after `resource_version` (usually a list's): `async with client.watch(...)
        as events: async for event in events: ...`.

        One HTTP stream, no reconnects: iteration ends when the server closes the stream (after
        `timeout_seconds`), an ERROR event raises its typed error (e.g. `errors.Gone` when the
        resourceVersion is too old), and `read_timeout` bounds the silence between events.
        `send_initial_events` asks for the current state as ADDED events first (WatchList), ended
        by a BOOKMARK annotated `k8s.io/initial-events-end`.
        """
        params = _selectors(label_selector, field_selector)
        params["watch"] = "true"
        if resource_version is not None:
            params["resourceVersion"] = resource_version
        if allow_bookmarks:
            params["allowWatchBookmarks"] = "true"
        if send_initial_events:
            params["sendInitialEvents"] = "true"
            params["resourceVersionMatch"] = "NotOlderThan"
        if timeout_seconds is not None:
            params["timeoutSeconds"] = str(timeout_seconds)
        return self._watch(gvk, namespace, params, read_timeout)

    @contextlib.asynccontextmanager
    async def _watch(
        self, gvk: GroupVersionKind, namespace: str | None, params: dict[str, str], read_timeout: float | None
    ) -> AsyncIterator[AsyncIterator[WatchEvent]]:
        path = await self._path(gvk, namespace=namespace)
        async with self.transport.stream(path, params=params, timeout=read_timeout) as lines:
            yield _Events(lines)

    # writes -------------------------------------------------------------------------------------

    async def create(
        self, obj: Mapping[str, Any], *, dry_run: bool | None = None, field_manager: str | None = None
    ) -> Object:
        """Create `obj` (its name may come from `metadata.generateName`); `errors.AlreadyExists`
        if the name is taken. Returns the object as stored."""
        path = await self._object_path(obj, named=False)
        return await self._call("POST", path, params=self._write_params(dry_run, field_manager), body=obj)

    async def update(
        self, obj: Mapping[str, Any], *, dry_run: bool | None = None, field_manager: str | None = None
    ) -> Object:
        """Replace `obj`; with `metadata.resourceVersion` set, `errors.Conflict` if it changed since."""
        path = await self._object_path(obj, named=True)
        return await self._call("PUT", path, params=self._write_params(dry_run, field_manager), body=obj)

    async def patch(
        self,
        gvk: GroupVersionKind,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
        subresource: str | None = None,
        dry_run: bool | None = None,
        field_manager: str | None = None,
    ) -> Object:
        """Patch one object (or its subresource). `patch` is a dict, or a list of operations for
        `PatchType.JSON`. For server-side apply use `apply`."""
        path = await self._path(gvk, namespace=namespace, name=name, subresource=subresource)
        params = self._write_params(dry_run, field_manager)
        return await self._call("PATCH", path, params=params, body=patch, content_type=patch_type.value)

    async def apply(
        self,
        obj: Mapping[str, Any],
        *,
        field_manager: str | None = None,
        force: bool = False,
        subresource: str | None = None,
        dry_run: bool | None = None,
    ) -> Object:
        """Server-side apply: make the fields in `obj` owned by `field_manager` and set as given.

        Fields this manager set before and leaves out now are removed; other managers' fields stay.
        A field another manager owns with a different value raises `errors.Conflict` unless `force`
        takes it over. The object is created if it does not exist.
        """
        manager = field_manager or self.field_manager
        if not manager:
            raise ValueError("server-side apply needs a field manager (argument or Client(field_manager=))")
        path = await self._object_path(obj, named=True, subresource=subresource)
        params = self._write_params(dry_run, manager, force=force)
        return await self._call("PATCH", path, params=params, body=obj, content_type=PatchType.APPLY.value)

    async def delete(
        self,
        gvk: GroupVersionKind,
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: PropagationPolicy | None = None,
        preconditions: Preconditions | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool | None = None,
    ) -> Object:
        """Delete one object. Returns the server's answer: a Status when it is gone at once, or the
        object (with `deletionTimestamp`) while finalizers hold it. `errors.NotFound` if absent;
        `errors.Conflict` if `preconditions` do not match."""
        options: Object = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if propagation_policy is not None:
            options["propagationPolicy"] = propagation_policy.value
        if preconditions is not None:
            options["preconditions"] = preconditions.to_json()
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if self.dry_run if dry_run is None else dry_run:
            options["dryRun"] = ["All"]
        path = await self._path(gvk, namespace=namespace, name=name)
        return await self._call("DELETE", path, body=options)

    # subresources -------------------------------------------------------------------------------

    async def update_status(
        self, obj: Mapping[str, Any], *, dry_run: bool | None = None, field_manager: str | None = None
    ) -> Object:
        """Replace the status of `obj` (the status subresource ignores changes outside `status`)."""
        path = await self._object_path(obj, named=True, subresource="status")
        return await self._call("PUT", path, params=self._write_params(dry_run, field_manager), body=obj)

    async def patch_status(
        self,
        gvk: GroupVersionKind,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
        dry_run: bool | None = None,
        field_manager: str | None = None,
    ) -> Object:
        """`patch(..., subresource="status")`."""
        return await self.patch(
            gvk,
            name,
            patch,
            namespace=namespace,
            patch_type=patch_type,
            subresource="status",
            dry_run=dry_run,
            field_manager=field_manager,
        )

    async def get_subresource(
        self, gvk: GroupVersionKind, name: str, subresource: str, *, namespace: str | None = None
    ) -> Object:
        """Read a subresource, e.g. `scale` of a Deployment."""
        return await self._call(
            "GET", await self._path(gvk, namespace=namespace, name=name, subresource=subresource)
        )

    async def create_subresource(
        self,
        gvk: GroupVersionKind,
        name: str,
        subresource: str,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        dry_run: bool | None = None,
    ) -> Object:
        """POST to a subresource, e.g. `token` of a ServiceAccount (a TokenRequest) or `eviction`."""
        path = await self._path(gvk, namespace=namespace, name=name, subresource=subresource)
        return await self._call("POST", path, params=self._write_params(dry_run, None), body=body)

    async def update_subresource(
        self,
        gvk: GroupVersionKind,
        name: str,
        subresource: str,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        dry_run: bool | None = None,
        field_manager: str | None = None,
    ) -> Object:
        """PUT a subresource, e.g. `scale`."""
        path = await self._path(gvk, namespace=namespace, name=name, subresource=subresource)
        return await self._call("PUT", path, params=self._write_params(dry_run, field_manager), body=body)


class _Events:
    """Parses watch lines into `WatchEvent`s, raising ERROR events as typed errors."""

    def __init__(self, lines: AsyncIterator[bytes]) -> None:
        self._lines = lines

    def __aiter__(self) -> _Events:
        return self

    async def __anext__(self) -> WatchEvent:
        line = await self._lines.__anext__()
        event = orjson.loads(line)
        kind, obj = event.get("type"), event.get("object")
        if kind == "ERROR" or not isinstance(obj, dict):
            raise errors.from_status(
                obj if isinstance(obj, dict) else {"message": line.decode(errors="replace")}
            )
        return WatchEvent(str(kind), obj)
