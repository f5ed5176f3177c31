"""Waiting until the API server acts on configuration a test just wrote.

The API server applies several kinds of configuration through its own informer caches, so a request
made right after the write may still see the old state:

- a new webhook configuration is loaded a moment later: a create made in between skips the webhook
  (even with `failurePolicy: Fail`, which only covers a webhook that is called and fails);
- a new CRD answers 404, then 429/503 while its storage starts, for a moment after `Established`;
- RBAC is read from caches of Roles, ClusterRoles and their bindings, each its own informer: a
  request made right after a grant may be refused, and one made right after a revocation allowed.

Each function here polls (never sleeps a fixed time) until the API server shows the new state, with
a deadline, and fails naming what it waited for:

    await settle.crd_served(client, "widgets.example.com")
    await settle.allowed(client, settle.service_account(ns, "installer"), verb="*", resource="*")
    await settle.granted(client, rbac_documents)  # one rule of each binding among them
    await settle.mutating(client, config_map, applied=lambda cm: "tier" in cm["metadata"].get("labels", {}))

They never change what they probe: admission probes are dry-run creates (webhooks declaring
`sideEffects: None` or `NoneOnDryRun` are called for them) and access probes are
SubjectAccessReviews, so the client needs `create` on `subjectaccessreviews`.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from olm_runtime.client import Client, GroupVersionKind, errors, kinds
from olm_runtime.testing.poll import eventually

__all__ = [
    "Subject",
    "allowed",
    "allowed_path",
    "crd_served",
    "denied",
    "granted",
    "mutating",
    "service_account",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait: propagation takes milliseconds on an idle machine and a few seconds on a busy one."""


@dataclass(frozen=True)
class Subject:
    """Who a SubjectAccessReview asks about."""

    user: str
    groups: tuple[str, ...] = ()


def service_account(namespace: str, name: str) -> Subject:
    """The user and groups the API server gives ServiceAccount `namespace/name`'s tokens."""
    return Subject(
        f"system:serviceaccount:{namespace}:{name}",
        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"),
    )


async def crd_served(client: Client, name: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
    """Until CRD `name` is Established and every served version of it can be listed."""

    async def served() -> bool:
        try:
            crd = await client.get(kinds.CUSTOM_RESOURCE_DEFINITION, name)
        except errors.NotFound:
            return False
        status = {c.get("type"): c.get("status") for c in (crd.get("status") or {}).get("conditions") or []}
        if status.get("Established") != "True":
            return False
        spec = crd["spec"]
        for version in spec["versions"]:
            if not version.get("served"):
                continue
            gvk = GroupVersionKind(spec["group"], version["name"], spec["names"]["kind"])
            try:
                await client.list_page(gvk, limit=1)  # one item is enough: the kind answers
            except (errors.NotFound, errors.TooManyRequests, errors.ServiceUnavailable, LookupError):
                return False  # LookupError: discovery does not list the kind yet
        return True

    await eventually(served, what=f"CRD {name} to be served", timeout=timeout)


def _review(subject: Subject, attributes: Mapping[str, str]) -> dict[str, Any]:
    """A SubjectAccessReview of `subject` for the request `attributes` describe: a `path` makes it a
    non-resource request (`nonResourceAttributes`), anything else a resource request."""
    given = {k: v for k, v in attributes.items() if v}
    field = "nonResourceAttributes" if "path" in given else "resourceAttributes"
    return {
        "apiVersion": kinds.SUBJECT_ACCESS_REVIEW.api_version,
        "kind": kinds.SUBJECT_ACCESS_REVIEW.kind,
        "spec": {"user": subject.user, "groups": list(subject.groups), field: given},
    }


async def _access(client: Client, subject: Subject, want: bool, timeout: float, **attributes: str) -> None:
    async def settled() -> bool:
        review = await client.create(_review(subject, attributes))
        return bool(review["status"].get("allowed")) is want

    verdict = "allow" if want else "refuse"
    who = subject.user or f"groups {', '.join(subject.groups)}"
    shown = " ".join(f"{k}={v}" for k, v in attributes.items() if v)
    await eventually(settled, what=f"the API server to {verdict} {who}: {shown}", timeout=timeout)


async def allowed(
    client: Client,
    subject: Subject,
    *,
    verb: str,
    resource: str,
    group: str = "",
    namespace: str = "",
    name: str = "",
    subresource: str = "",
    timeout: float = DEFAULT_TIMEOUT,
) -> None:
    """Until the authorizer allows `subject` the request described (`*` matches any verb, group or
    resource, so `verb="*", resource="*", group="*"` waits for a cluster-admin grant)."""
    await _access(
        client,
        subject,
        True,
        timeout,
        verb=verb,
        group=group,
        resource=resource,
        subresource=subresource,
        namespace=namespace,
        name=name,
    )


async def denied(
    client: Client,
    subject: Subject,
    *,
    verb: str,
    resource: str,
    group: str = "",
    namespace: str = "",
    name: str = "",
    subresource: str = "",
    timeout: float = DEFAULT_TIMEOUT,
) -> None:
    """Until the authorizer refuses `subject` the request described (after a revocation)."""
    await _access(
        client,
        subject,
        False,
        timeout,
        verb=verb,
        group=group,
        resource=resource,
        subresource=subresource,
        namespace=namespace,
        name=name,
    )


async def allowed_path(
    client: Client, subject: Subject, *, verb: str, path: str, timeout: float = DEFAULT_TIMEOUT
) -> None:
    """Until the authorizer allows `subject` `verb` on the non-resource URL `path` (e.g. `get` on
    `/metrics`: a ClusterRole's `nonResourceURLs` rule, which only a ClusterRoleBinding grants)."""
    await _access(client, subject, True, timeout, verb=verb, path=path)


_BINDINGS = {"RoleBinding", "ClusterRoleBinding"}
_ROLES = {"Role": kinds.ROLE, "ClusterRole": kinds.CLUSTER_ROLE}


def _bound_subject(subject: Mapping[str, Any], binding_namespace: str) -> Subject:
    """Who a binding's `subjects` entry stands for, as a SubjectAccessReview names them."""
    kind, name = subject["kind"], subject["name"]
    if kind == "ServiceAccount":
        # A RoleBinding may leave its ServiceAccounts' namespace out: then it is its own.
        return service_account(subject.get("namespace") or binding_namespace, name)
    if kind == "Group":
        return Subject("", (name,))
    return Subject(name)


def _rule_request(rule: Mapping[str, Any], namespace: str) -> dict[str, str] | None:
    """A request `rule` allows, from its first verb, group, resource and name (wildcards as written:
    RBAC matches a rule's own values, `*` included); in `namespace` when the binding is a
    RoleBinding. None for a non-resource rule under a RoleBinding, which grants nothing."""
    verb = rule["verbs"][0]
    if rule.get("nonResourceURLs"):
        return None if namespace else {"verb": verb, "path": rule["nonResourceURLs"][0]}
    resource, _, subresource = rule["resources"][0].partition("/")
    return {
        "verb": verb,
        "group": rule["apiGroups"][0],
        "resource": resource,
        "subresource": subresource,
        "namespace": namespace,
        "name": (rule.get("resourceNames") or [""])[0],
    }


async def granted(
    client: Client, rbac: Iterable[Mapping[str, Any]], *, timeout: float = DEFAULT_TIMEOUT
) -> None:
    """Until every RoleBinding and ClusterRoleBinding among `rbac` is in effect, as far as one rule
    shows: each subject of each binding is allowed a request of the first rule (the first the
    binding can grant) of the role it refers to. The authorizer reads Roles, ClusterRoles and each
    kind of binding through informers of their own, so one binding can be seen before another, or
    before its role: one allowed request per binding shows that binding and its role were seen.
    The roles are taken from `rbac`, else read from the API server (a binding to `cluster-admin`);
    a role with no rules grants nothing to wait for."""
    documents = list(rbac)
    roles = {
        (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d
        for d in documents
        if d["kind"] in _ROLES
    }
    for binding in documents:
        if binding["kind"] not in _BINDINGS:
            continue
        namespace = binding["metadata"].get("namespace", "") if binding["kind"] == "RoleBinding" else ""
        ref = binding["roleRef"]
        key = (ref["kind"], namespace if ref["kind"] == "Role" else "", ref["name"])
        role = roles.get(key) or await client.get(_ROLES[ref["kind"]], ref["name"], namespace=key[1] or None)
        requests = (_rule_request(rule, namespace) for rule in role.get("rules") or [])
        request = next((r for r in requests if r is not None), None)
        if request is None:
            continue
        for subject in binding.get("subjects") or []:
            await _access(client, _bound_subject(subject, namespace), True, timeout, **request)


def _probe(obj: Mapping[str, Any]) -> dict[str, Any]:
    """`obj` under a name of its own, so probes never meet each other or a real object."""
    probe = copy.deepcopy(dict(obj))
    metadata = probe.setdefault("metadata", {})
    metadata.pop("generateName", None)
    metadata["name"] = f"{metadata.get('name') or 'settle-probe'}-{uuid.uuid4().hex[:8]}"[:253]
    return probe


async def mutating(
    client: Client,
    probe: Mapping[str, Any],
    *,
    applied: Callable[[Mapping[str, Any]], bool],
    what: str = "the mutating webhook to be called",
    timeout: float = DEFAULT_TIMEOUT,
) -> None:
    """Until a dry-run create of `probe` (renamed each time) comes back with `applied(returned)`
    true: the API server has loaded a mutating webhook or policy that matches `probe`."""

    async def in_effect() -> bool:
        return applied(await client.create(_probe(probe), dry_run=True))

    await eventually(in_effect, what=what, timeout=timeout)
