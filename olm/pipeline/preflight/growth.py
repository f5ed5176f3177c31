"""Permission growth between two revisions of an extension (roadmap F14).

What an extension is granted is what the Roles and ClusterRoles of its objects grant (the
bundle's `permissions` and `clusterPermissions`, rendered). `granted(objects)` expands their rules
exactly as the permission preflight does (verb x apiGroup x resource x resourceName, and
nonResourceURL x verb for ClusterRoles; an aggregated ClusterRole counts as everything, because
the controller-manager fills it from any ClusterRole that matches). `added(candidate, installed)`
is what the candidate grants that nothing the installed revision grants covers (worded with the
permission preflight's `lines_of`, so the two messages read alike): a `*` covers any
value, a rule without resourceNames covers every name, and a ClusterRole's rule (bound
cluster-wide) covers the same rule in any namespace. So renaming or splitting roles, narrowing a
rule or moving it from a ClusterRole into a Role is not growth; a new verb, resource or group is.
The Role of OLM's OperatorCondition contract (`render.is_operator_condition_role`) is not the
bundle's and is left out: each version's names its own condition, which is not growth either.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from olm.pipeline.preflight.permissions import Requirement, lines_of, role_requirements
from olm.pipeline.render import is_operator_condition_role

__all__ = ["added", "added_permissions", "granted"]

_RBAC = "rbac.authorization.k8s.io"


def granted(objects: Iterable[Mapping[str, Any]]) -> frozenset[Requirement]:
    """Every permission the Roles and ClusterRoles among `objects` grant, expanded (the contract's
    Role aside)."""
    out: set[Requirement] = set()
    for obj in objects:
        if is_operator_condition_role(obj):
            continue
        kind = obj.get("kind")
        if str(obj.get("apiVersion") or "").rpartition("/")[0] == _RBAC and kind in ("Role", "ClusterRole"):
            cluster = kind == "ClusterRole"
            namespace = "" if cluster else str((obj.get("metadata") or {}).get("namespace") or "")
            out |= role_requirements(obj, namespace=namespace, cluster=cluster)
    return frozenset(out)


def _matches(held: str, wanted: str) -> bool:
    return held in ("*", wanted)


def _covers(held: Requirement, wanted: Requirement) -> bool:
    if held.namespace not in ("", wanted.namespace):
        return False
    if wanted.non_resource_url or held.non_resource_url:
        url = held.non_resource_url
        prefix = url.endswith("*") and wanted.non_resource_url.startswith(url[:-1])
        return (
            bool(wanted.non_resource_url)
            and (url == wanted.non_resource_url or prefix)
            and _matches(held.verb, wanted.verb)
        )
    return (
        _matches(held.api_group, wanted.api_group)
        and _matches(held.resource, wanted.resource)
        and held.resource_name in ("", wanted.resource_name)
        and _matches(held.verb, wanted.verb)
    )


def added(candidate: Iterable[Requirement], installed: Iterable[Requirement]) -> list[Requirement]:
    """The candidate's permissions that no installed permission covers, sorted."""
    held = tuple(installed)
    return sorted(r for r in set(candidate) if not any(_covers(h, r) for h in held))


def added_permissions(
    candidate: Iterable[Mapping[str, Any]], installed: Iterable[Mapping[str, Any]]
) -> list[str]:
    """What the Roles and ClusterRoles among `candidate` grant that those among `installed` do not,
    one line per namespace, group, resource and name (or URL) with its verbs."""
    return lines_of(added(granted(candidate), granted(installed)))
