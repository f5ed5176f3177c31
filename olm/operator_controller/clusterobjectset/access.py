"""How far an identity may watch a kind: in every namespace, in one, or not at all.

Drift informers run as the revision's ServiceAccount, which may lack `list` or `watch` on a kind:
`olmctl rbac` grants most kinds only verbs on named objects. The answer comes from the API server
itself (SelfSubjectAccessReviews sent with the identity's own token, which every authenticated user
may create), so it matches what a watch would meet, whatever the source of the grant.
"""

from __future__ import annotations

import asyncio
import enum
from typing import Any

from olm_runtime.client import Client, ResourceInfo, kinds

__all__ = ["Reach", "allowed", "may_watch_everything", "watch_reach"]

WATCH_VERBS = ("list", "watch")
"""An informer lists, then watches; both must be allowed."""


class Reach(enum.Enum):
    ALL_NAMESPACES = "all namespaces"
    """Cluster-wide list and watch (the only reach for a cluster-scoped kind)."""
    NAMESPACE = "namespace"
    """List and watch in the object's namespace only."""
    NONE = "none"
    """Neither: the objects are read by GET, by name, when the revision is reconciled."""


async def _review(client: Client, attributes: dict[str, Any]) -> bool:
    """Whether `client`'s identity may do what the resource `attributes` describe."""
    review = {
        "apiVersion": kinds.SELF_SUBJECT_ACCESS_REVIEW.api_version,
        "kind": kinds.SELF_SUBJECT_ACCESS_REVIEW.kind,
        "spec": {"resourceAttributes": attributes},
    }
    answer = await client.create(review)
    return bool((answer.get("status") or {}).get("allowed"))


async def allowed(client: Client, resource: ResourceInfo, verb: str, namespace: str = "") -> bool:
    """Whether `client`'s identity may `verb` `resource` (in `namespace`; "" for every namespace)."""
    attributes: dict[str, Any] = {
        "verb": verb,
        "group": resource.gvr.group,
        "version": resource.gvr.version,
        "resource": resource.gvr.resource,
    }
    if namespace:
        attributes["namespace"] = namespace
    return await _review(client, attributes)


async def may_watch_everything(client: Client) -> bool:
    """Whether `client`'s identity may list and watch every resource of every group in all
    namespaces (RBAC allows it only from a rule of wildcards bound cluster-wide, as `cluster-admin`
    has): two reviews that answer for every kind the identity will ever watch."""
    everything = ({"verb": verb, "group": "*", "resource": "*"} for verb in WATCH_VERBS)
    return all(await asyncio.gather(*(_review(client, attributes) for attributes in everything)))


async def _may_watch(client: Client, resource: ResourceInfo, namespace: str) -> bool:
    answers = await asyncio.gather(*(allowed(client, resource, verb, namespace) for verb in WATCH_VERBS))
    return all(answers)


async def watch_reach(client: Client, resource: ResourceInfo, namespace: str | None) -> Reach:
    """The widest watch `client`'s identity may open on `resource` for an object in `namespace`
    (None for a cluster-scoped object). Raises `errors.APIError` when a review cannot be made."""
    if await _may_watch(client, resource, ""):
        return Reach.ALL_NAMESPACES
    if resource.namespaced and namespace and await _may_watch(client, resource, namespace):
        return Reach.NAMESPACE
    return Reach.NONE
