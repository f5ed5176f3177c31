"""Small value types for client calls: patch types, deletion options, results of list and watch."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "METADATA_LIST_ACCEPT",
    "METADATA_WATCH_ACCEPT",
    "ObjectList",
    "PatchType",
    "Preconditions",
    "PropagationPolicy",
    "WatchEvent",
]

METADATA_LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
"""The `Accept` of a list that wants each item's metadata only (PartialObjectMetadata); a server
that cannot serve it falls back to full objects."""
METADATA_WATCH_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
"""The `Accept` of a watch whose events carry metadata only."""


class PatchType(enum.StrEnum):
    """How the server interprets a patch body; the value is the request's Content-Type."""

    MERGE = "application/merge-patch+json"
    """RFC 7386 JSON merge patch: maps merge, lists are replaced, `None` deletes a key."""
    JSON = "application/json-patch+json"
    """RFC 6902 JSON patch: a list of `{"op": ..., "path": ..., "value": ...}` operations."""
    STRATEGIC = "application/strategic-merge-patch+json"
    """Strategic merge patch: merges lists by key (e.g. containers by name); built-in kinds only."""
    APPLY = "application/apply-patch+yaml"
    """Server-side apply (use `Client.apply`); the body is JSON, which is valid YAML."""


class PropagationPolicy(enum.StrEnum):
    """What happens to an object's dependents (objects it owns) when it is deleted."""

    ORPHAN = "Orphan"
    """Dependents are kept and their ownerReferences to the object removed."""
    BACKGROUND = "Background"
    """The object goes at once; the garbage collector deletes dependents afterwards."""
    FOREGROUND = "Foreground"
    """The object stays (with a `foregroundDeletion` finalizer) until blocking dependents are gone."""


@dataclass(frozen=True, kw_only=True)
class Preconditions:
    """Delete only if the stored object still has this uid and/or resourceVersion (else Conflict)."""

    uid: str | None = None
    resource_version: str | None = None

    def to_json(self) -> dict[str, str]:
        body = {}
        if self.uid is not None:
            body["uid"] = self.uid
        if self.resource_version is not None:
            body["resourceVersion"] = self.resource_version
        return body


@dataclass(frozen=True)
class ObjectList:
    """The items of a list (each with `apiVersion` and `kind` filled in) and the list's resourceVersion,
    from which a watch continues without missing a change."""

    items: list[dict[str, Any]]
    resource_version: str
    continue_token: str | None = None
    """Set by `Client.list_page` when more pages follow; pass it back as `continue_token`."""


class WatchEvent(NamedTuple):
    """One watch event: `type` is ADDED, MODIFIED, DELETED or BOOKMARK (ERROR events are raised)."""

    type: str
    object: dict[str, Any]
