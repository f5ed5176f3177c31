"""The API server's audit log read against RBAC: which requests one credential made, which rule of a
set of roles allowed each, and which rules no request needed.

The control plane logs every request of a ServiceAccount at the `Metadata` level
(`ControlPlane.audit_log`); each event names the user and, for a bound token, its credential id
(`JTI=<the token's jti>`), so the requests of one process are told apart from those of another
process of the same ServiceAccount by the token it was given (`credential_id`).

Rules are compared with requests as the RBAC authorizer compares them: verb, API group, resource
(`resource/subresource`), the Role's namespace, and `resourceNames` (which a list or watch meets
only with a `metadata.name` field selector, as the authorizer reads it). Non-resource requests
(discovery, `/version`) are not matched: every authenticated user may make them, through the
default `system:discovery` and `system:public-info-viewer` roles, so no role of ours needs a rule
for them; `discovery` says which they are.
"""

from __future__ import annotations

import base64
import collections
import datetime
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "Grant",
    "Request",
    "bound_roles",
    "by_pod",
    "covers",
    "credential_id",
    "discovery",
    "granted_by_default",
    "grants",
    "read",
    "refused",
    "service_account_requests",
    "summary",
    "uncovered",
    "unused",
]

_CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"
_POD_NAME = "authentication.kubernetes.io/pod-name"
_DECISION = "authorization.k8s.io/decision"
_DISCOVERY_ROOTS = ("/api", "/apis", "/version", "/openapi")


@dataclass(frozen=True, kw_only=True)
class Request:
    """One request as the audit log records it."""

    verb: str
    """The authorizer's verb: get, list, watch, create, update, patch, delete."""
    group: str
    """API group; empty for the core group (and for non-resource requests)."""
    resource: str
    """`resource` or `resource/subresource`; empty for a non-resource request."""
    namespace: str
    name: str
    """The object's name; for a list or watch, that of its `metadata.name` field selector."""
    path: str
    """The request URI without its query."""
    code: int
    """The response's status code."""
    allowed: bool
    """What the authorizer decided."""

    def describe(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        named = f" {self.name}" if self.name else ""
        if not self.resource:
            return f"{self.verb} {self.path} -> {self.code}"
        return f"{self.verb} {self.resource}.{self.group or 'core'}{named}{where} -> {self.code}"


@dataclass(frozen=True, kw_only=True)
class Grant:
    """One verb on one resource that one rule of a role grants (a rule is the product of its lists)."""

    role: str
    """`Kind/name` of the role, for messages."""
    namespace: str
    """The Role's namespace; empty for a ClusterRole (every namespace, and cluster-scoped objects)."""
    group: str
    resource: str
    verb: str
    name: str
    """One of the rule's `resourceNames`; empty when the rule names none (any object)."""

    def describe(self) -> str:
        named = f" {self.name}" if self.name else ""
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{self.role}: {self.verb} {self.resource}.{self.group or 'core'}{named}{where}"


def credential_id(token: str) -> str:
    """The credential id the audit log records for a bound ServiceAccount token: `JTI=<jti>`."""
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return f"JTI={claims['jti']}"


def _request(event: Mapping[str, Any]) -> Request:
    ref = event.get("objectRef") or {}
    resource = str(ref.get("resource") or "")
    if resource and ref.get("subresource"):
        resource = f"{resource}/{ref['subresource']}"
    return Request(
        verb=str(event["verb"]),
        group=str(ref.get("apiGroup") or ""),
        resource=resource,
        namespace=str(ref.get("namespace") or ""),
        name=str(ref.get("name") or ""),
        path=str(event["requestURI"]).split("?", 1)[0],
        code=int((event.get("responseStatus") or {}).get("code") or 0),
        allowed=(event.get("annotations") or {}).get(_DECISION) == "allow",
    )


def _events(log: Path, offset: int = 0) -> Iterator[dict[str, Any]]:
    """The events logged from byte `offset` of `log` on."""
    with log.open("rb") as lines:
        lines.seek(offset)
        for line in lines:
            if line.strip():
                yield json.loads(line)


def read(log: Path, offset: int, *, username: str, credential: str) -> list[Request]:
    """The requests of `username` with the token whose credential id is `credential`, logged from
    byte `offset` of `log` on, each once (a watch is logged when it starts and when it ends)."""
    requests: dict[str, Request] = {}
    for event in _events(log, offset):
        user = event.get("user") or {}
        if user.get("username") != username or credential not in (user.get("extra") or {}).get(
            _CREDENTIAL_ID, ()
        ):
            continue
        requests.setdefault(str(event["auditID"]), _request(event))
    return list(requests.values())


def by_pod(log: Path, pod: str, *, since: datetime.datetime) -> list[Request]:
    """The requests made with a token bound to the Pod `pod` (whichever container run of it) that
    the API server received at or after `since`, each once, in the order logged."""
    requests: dict[str, Request] = {}
    for event in _events(log):
        extra = (event.get("user") or {}).get("extra") or {}
        if pod not in extra.get(_POD_NAME, ()):
            continue
        if datetime.datetime.fromisoformat(event["requestReceivedTimestamp"]) >= since:
            requests.setdefault(str(event["auditID"]), _request(event))
    return list(requests.values())


def service_account_requests(
    log: Path, *, since: datetime.datetime, until: datetime.datetime, offset: int = 0
) -> list[tuple[str, Request]]:
    """The requests of ServiceAccounts outside `kube-*` namespaces that the API server received in
    [since, until), logged from byte `offset` of `log` on, each once, with the account
    (`namespace:name`) that made it."""
    requests: dict[str, tuple[str, Request]] = {}
    for event in _events(log, offset):
        user = str((event.get("user") or {}).get("username") or "")
        account = user.removeprefix("system:serviceaccount:")
        if account == user or account.startswith("kube-"):
            continue
        if since <= datetime.datetime.fromisoformat(event["requestReceivedTimestamp"]) < until:
            requests.setdefault(str(event["auditID"]), (account, _request(event)))
    return list(requests.values())


def bound_roles(documents: Iterable[Mapping[str, Any]], namespace: str, name: str) -> list[Mapping[str, Any]]:
    """The Roles and ClusterRoles among `documents` that their bindings grant ServiceAccount
    `namespace/name`."""
    documents = list(documents)
    subject = {"kind": "ServiceAccount", "name": name, "namespace": namespace}
    bound = {
        (b["roleRef"]["kind"], b["roleRef"]["name"])
        for b in documents
        if b["kind"] in ("ClusterRoleBinding", "RoleBinding") and subject in b["subjects"]
    }
    return [r for r in documents if (r["kind"], r["metadata"]["name"]) in bound]


def grants(roles: Iterable[Mapping[str, Any]]) -> list[Grant]:
    """Every verb on every resource (and resource name) that the resource rules of `roles` grant."""
    expanded: list[Grant] = []
    for role in roles:
        label = f"{role['kind']}/{role['metadata']['name']}"
        namespace = str(role["metadata"].get("namespace") or "") if role["kind"] == "Role" else ""
        for rule in role.get("rules") or ():
            expanded += [
                Grant(role=label, namespace=namespace, group=group, resource=resource, verb=verb, name=name)
                for group in rule.get("apiGroups") or ()
                for resource in rule.get("resources") or ()
                for verb in rule["verbs"]
                for name in rule.get("resourceNames") or ("",)
            ]
    return expanded


def covers(grant: Grant, request: Request) -> bool:
    """Whether `grant` allows `request` (never a non-resource request)."""
    return (
        bool(request.resource)
        and grant.verb in (request.verb, "*")
        and grant.group in (request.group, "*")
        and grant.resource in (request.resource, "*")
        and (not grant.namespace or grant.namespace == request.namespace)
        and (not grant.name or grant.name == request.name)
    )


def discovery(request: Request) -> bool:
    """A read of discovery or the version: allowed to every authenticated user by default roles."""
    return (
        not request.resource
        and request.verb == "get"
        and any(request.path == root or request.path.startswith(f"{root}/") for root in _DISCOVERY_ROOTS)
    )


_SELF_REVIEWS = frozenset({"selfsubjectaccessreviews", "selfsubjectrulesreviews"})


def granted_by_default(request: Request) -> bool:
    """A request every authenticated user may make through Kubernetes' default roles, so no role of
    ours grants it: discovery and the version (`system:discovery`, `system:public-info-viewer`), and
    asking what oneself may do (`system:basic-user`)."""
    return discovery(request) or (
        request.verb == "create"
        and request.group == "authorization.k8s.io"
        and request.resource in _SELF_REVIEWS
    )


def refused(requests: Iterable[Request]) -> list[str]:
    """The requests the authorizer refused, described."""
    return [r.describe() for r in requests if not r.allowed or r.code == 403]


def uncovered(requests: Iterable[Request], grants: Iterable[Grant]) -> list[str]:
    """The requests no grant allows (but those every user may make), described."""
    grants = list(grants)
    return [
        r.describe() for r in requests if not granted_by_default(r) and not any(covers(g, r) for g in grants)
    ]


def unused(grants: Iterable[Grant], requests: Iterable[Request]) -> list[Grant]:
    """The grants no request needed."""
    requests = list(requests)
    return [g for g in grants if not any(covers(g, r) for r in requests)]


def summary(requests: Iterable[Request]) -> dict[str, int]:
    """How many requests of each `verb resource.group` (`get <discovery>` for the non-resource
    ones), sorted: what a reviewer reads to see what a process did."""
    counts = collections.Counter(
        f"{r.verb} {r.resource}.{r.group or 'core'}" if r.resource else f"{r.verb} <discovery>"
        for r in requests
    )
    return dict(sorted(counts.items()))
