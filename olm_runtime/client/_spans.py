"""What an API server request is, read from its method and path, for its client span.

A span is named `<verb> <resource>` (`get clusterextensions`, `patch secrets`, `list pods`) with
HTTP semantic-convention attributes plus the Kubernetes ones the API server's own audit log uses:
the verb, the resource (and subresource), the namespace and the object's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Call:
    """One request as the API server's authorizer sees it."""

    verb: str
    resource: str
    """`<resource>` or `<resource>/<subresource>`; empty for discovery and other non-resource paths."""
    namespace: str
    name: str

    @property
    def span_name(self) -> str:
        return f"{self.verb} {self.resource}" if self.resource else self.verb


def _resource_parts(path: str) -> list[str] | None:
    """The segments after `/api/<v>` or `/apis/<group>/<v>`; None for any other path."""
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        return parts[2:]
    if len(parts) >= 3 and parts[0] == "apis":
        return parts[3:]
    return None


def describe(method: str, path: str, params: Mapping[str, str] | None = None) -> Call:
    """The verb, resource, namespace and name of `method path` (kube-apiserver's request info rules)."""
    method = method.upper()
    parts = _resource_parts(path)
    if not parts:
        return Call(verb=method.lower(), resource="", namespace="", name="")
    namespace = ""
    if parts[0] == "namespaces" and len(parts) >= 3:
        namespace, parts = parts[1], parts[2:]
    resource = parts[0]
    name = parts[1] if len(parts) >= 2 else ""
    if len(parts) >= 3:
        resource = f"{resource}/{parts[2]}"
    elif parts[0] == "namespaces" and len(parts) == 2:
        namespace = name  # a Namespace object is in the namespace it names, as audit logs say
    watching = (params or {}).get("watch") in ("true", "1")
    verb = {
        "GET": "watch" if watching else ("get" if name else "list"),
        "HEAD": "get",
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",  # server-side apply included, as the authorizer and audit log see it
        "DELETE": "delete" if name else "deletecollection",
    }.get(method, method.lower())
    return Call(verb=verb, resource=resource, namespace=namespace, name=name)
