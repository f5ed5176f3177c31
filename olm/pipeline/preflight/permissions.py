"""Permission preflight: may the ClusterExtension's ServiceAccount do everything the rollout needs?

Every object of a revision is written with the ServiceAccount's identity, so a missing permission
would otherwise surface one object at a time, after the earlier phases were already applied. This
check lists every missing permission at once, before a revision exists.

What the ServiceAccount needs, per object of the rollout (`requirements`):

- `get`, `update`, `patch` and `delete` on the object's name, in its namespace (`""` for
  cluster-scoped kinds, whatever `metadata.namespace` says), and `create` on its resource in that
  namespace: server-side apply creates missing objects and patches existing ones, teardown deletes.
- Escalation, for each Role or ClusterRole of the rollout: Kubernetes lets a user write a role only
  when the user already holds every rule it grants (a Role: in its namespace; a ClusterRole:
  cluster-wide) or may `escalate` that role. Rules are expanded to verb x apiGroup x resource x
  resourceName (and nonResourceURL x verb for ClusterRoles); `*` stays `*`, because only a rule that
  itself says `*` covers granting `*`. A ClusterRole with an `aggregationRule` gets its rules from
  other roles later, so it needs `*` on everything (or `escalate`).
- Binding, for each RoleBinding or ClusterRoleBinding: when its `roleRef` is not part of the rollout,
  `bind` on that role (in the binding's namespace for a RoleBinding). Kubernetes also accepts a
  binding from a user who holds all the role's rules; this check does not read roles from the
  cluster, so it asks for `bind`, which is what an installer ServiceAccount is normally given. When
  the role is part of the rollout, holding its rules (checked above) suffices; if the ServiceAccount
  only may `escalate` that role, it needs `bind` on it as well.

Per revision, `revision_requirement(name)`: `update` on `clusterobjectsets/finalizers` of the
ClusterObjectSet the objects will belong to. Every object is applied with an ownerReference to its
revision that sets `blockOwnerDeletion`, and the API server's `OwnerReferencesPermissionEnforcement`
admission plugin (hardened clusters enable it) admits that only from a user who may update the
owner's finalizers. Upstream checks the same, under the revision's name.

Kinds are resolved to resources by the `resources(apiVersion, kind)` callback; kinds it does not
know are taken from CustomResourceDefinitions of the same rollout, and kinds still unknown are
skipped (`unresolved_kinds` lists them; applying them would fail on their own).

`missing_permissions(client, ...)` resolves kinds through discovery and asks the API server first
one SubjectAccessReview, `EVERYTHING`: whether the ServiceAccount may do anything to any resource
cluster-wide (`*` verbs, groups and resources, as `cluster-admin` may). RBAC allows that only from a
rule of wildcards bound cluster-wide, which covers every requirement below, `escalate` on every role
included (so no role's rules need holding), and the answer is then at once: nothing is missing.
Otherwise it asks one review per requirement (the revision's among them, when it is named), at most
`CONCURRENCY` at a time: first whether the ServiceAccount may `escalate` each role, then only the
rules of roles it may not. It returns the denied requirements, sorted;
`MissingPermissionsError(missing)` words them as upstream does.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from olm.api import names
from olm.compat.goformat import go_quote
from olm_runtime.client import Client, GroupVersionKind, NoKindMatch, errors, kinds

__all__ = [
    "CONCURRENCY",
    "EVERYTHING",
    "MissingPermissionsError",
    "PermissionCheckError",
    "Requirement",
    "Resources",
    "error_message",
    "missing_permissions",
    "requirements",
    "revision_requirement",
    "role_requirements",
    "unresolved_kinds",
]

Resources = Callable[[str, str], tuple[str, bool] | None]
"""`resources(apiVersion, kind)` -> `(plural, namespaced)`, or None when the kind is unknown."""

CONCURRENCY = 16
"""SubjectAccessReviews in flight at once: enough to hide round trips, few enough to leave the API
server's priority-and-fairness budget to the rest of the controller."""

OBJECT_VERBS = ("delete", "get", "patch", "update")
"""Verbs on each object's name; `create` is asked per resource and namespace, without a name."""

_RBAC = "rbac.authorization.k8s.io"
_ROLE_RESOURCES = {"Role": "roles", "ClusterRole": "clusterroles"}
_BINDING_KINDS = ("RoleBinding", "ClusterRoleBinding")
_CRD_GROUP = "apiextensions.k8s.io"


@dataclass(frozen=True, order=True)
class Requirement:
    """One thing the ServiceAccount must be allowed to do. Ordering sorts namespaces first, so the
    cluster-wide (`""`) requirements come before the namespaced ones."""

    namespace: str
    """`""` for cluster-scoped resources and non-resource URLs."""
    api_group: str
    resource: str
    """Plural, with a subresource after a slash (`deployments/scale`); `""` for a non-resource URL."""
    resource_name: str
    """`""` when the permission is not limited to one name (`create`, rules without resourceNames)."""
    verb: str
    non_resource_url: str = ""


EVERYTHING = Requirement("", "*", "*", "", "*")
"""Any verb on any resource (subresources included) of any group, cluster-wide: what a rule of
wildcards in a role bound by a ClusterRoleBinding grants, and nothing less does."""


@dataclass(frozen=True)
class _Escalation:
    """A role of the rollout: the rules it grants, or else `escalate` on it (and then `bind` for the
    rollout's bindings that reference it)."""

    escalate: Requirement
    rules: frozenset[Requirement]
    binds: frozenset[Requirement]


@dataclass
class _Plan:
    direct: set[Requirement] = field(default_factory=set)
    escalations: list[_Escalation] = field(default_factory=list)
    unresolved: set[tuple[str, str]] = field(default_factory=set)


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata: Mapping[str, Any] = obj.get("metadata") or {}
    return metadata


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def _crd_resources(objects: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], tuple[str, bool]]:
    """(apiVersion, kind) -> (plural, namespaced) for the custom resources of the rollout's own CRDs,
    which discovery cannot know before they are installed."""
    table: dict[tuple[str, str], tuple[str, bool]] = {}
    for obj in objects:
        if obj.get("kind") != "CustomResourceDefinition" or _group(str(obj.get("apiVersion"))) != _CRD_GROUP:
            continue
        spec = obj.get("spec") or {}
        names = spec.get("names") or {}
        kind, plural = names.get("kind"), names.get("plural")
        if not kind or not plural:
            continue
        group = str(spec.get("group") or "")
        for version in spec.get("versions") or ():
            api_version = f"{group}/{version.get('name')}" if group else str(version.get("name"))
            table[(api_version, str(kind))] = (str(plural), spec.get("scope") == "Namespaced")
    return table


def role_requirements(role: Mapping[str, Any], *, namespace: str, cluster: bool) -> set[Requirement]:
    """Everything one Role (in `namespace`) or ClusterRole (`cluster`) grants, its rules expanded.
    Aggregated rules are filled in by the controller-manager later, from any ClusterRole that
    matches the selectors, so an aggregated ClusterRole counts as granting everything."""
    out: set[Requirement] = set()
    for rule in role.get("rules") or ():
        out |= _rule_requirements(namespace, rule, cluster=cluster)
    if cluster and role.get("aggregationRule"):
        out |= {Requirement("", "*", "*", "", "*"), Requirement("", "", "", "", "*", "*")}
    return out


def _rule_requirements(namespace: str, rule: Mapping[str, Any], *, cluster: bool) -> set[Requirement]:
    verbs = [str(v) for v in rule.get("verbs") or ()]
    out = {
        Requirement(namespace, str(group), str(resource), str(name), verb)
        for group, resource, name, verb in itertools.product(
            rule.get("apiGroups") or (),
            rule.get("resources") or (),
            rule.get("resourceNames") or ("",),
            verbs,
        )
    }
    if cluster:  # a Role cannot grant non-resource URLs; the API server rejects such rules
        out |= {
            Requirement("", "", "", "", verb, str(url))
            for url, verb in itertools.product(rule.get("nonResourceURLs") or (), verbs)
        }
    return out


def _role_key(kind: str, namespace: str, name: str) -> tuple[str, str, str]:
    return (kind, "" if kind == "ClusterRole" else namespace, name)


def _plan(objects: Sequence[Mapping[str, Any]], resources: Resources) -> _Plan:
    plan = _Plan()
    from_crds = _crd_resources(objects)
    roles: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    bindings: list[tuple[str, Mapping[str, Any]]] = []
    for obj in objects:
        api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
        metadata = _metadata(obj)
        name = str(metadata.get("name") or "")
        resolved = resources(api_version, kind) or from_crds.get((api_version, kind))
        if resolved is None:
            plan.unresolved.add((api_version, kind))
            continue
        plural, namespaced = resolved
        namespace = str(metadata.get("namespace") or "") if namespaced else ""
        if namespaced and not namespace:
            raise ValueError(f"{kind} {name} is namespaced but has no metadata.namespace")
        group = _group(api_version)
        plan.direct.update(Requirement(namespace, group, plural, name, verb) for verb in OBJECT_VERBS)
        plan.direct.add(Requirement(namespace, group, plural, "", "create"))
        if group == _RBAC and kind in _ROLE_RESOURCES:
            roles[_role_key(kind, namespace, name)] = obj
        elif group == _RBAC and kind in _BINDING_KINDS:
            bindings.append((namespace, obj))

    binds_by_role: dict[tuple[str, str, str], set[Requirement]] = {}
    for namespace, binding in bindings:
        ref = binding.get("roleRef") or {}
        ref_kind, ref_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
        if ref_kind not in _ROLE_RESOURCES:
            continue  # the API server rejects such a binding; nothing to authorise
        bind = Requirement(namespace, _RBAC, _ROLE_RESOURCES[ref_kind], ref_name, "bind")
        key = _role_key(ref_kind, namespace, ref_name)
        if key in roles:
            binds_by_role.setdefault(key, set()).add(bind)
        else:
            plan.direct.add(bind)

    for key, role in sorted(roles.items()):
        kind, namespace, name = key
        plan.escalations.append(
            _Escalation(
                escalate=Requirement(namespace, _RBAC, _ROLE_RESOURCES[kind], name, "escalate"),
                rules=frozenset(role_requirements(role, namespace=namespace, cluster=kind == "ClusterRole")),
                binds=frozenset(binds_by_role.get(key, ())),
            )
        )
    return plan


def revision_requirement(revision: str) -> Requirement:
    """`update` on the finalizers of ClusterObjectSet `revision`, which the objects applied as part
    of it name as their owner with `blockOwnerDeletion` (see module)."""
    return Requirement("", names.GROUP, "clusterobjectsets/finalizers", revision, "update")


def requirements(objects: Sequence[Mapping[str, Any]], resources: Resources) -> list[Requirement]:
    """Everything the ServiceAccount must be allowed to do to roll out `objects`, assuming it may not
    `escalate` the rollout's roles (so their rules count), deduplicated and sorted. Objects whose kind
    neither `resources` nor the rollout's CRDs know are skipped (see `unresolved_kinds`); a namespaced
    object without a namespace raises ValueError."""
    plan = _plan(objects, resources)
    out = set(plan.direct)
    for escalation in plan.escalations:
        out |= escalation.rules
    return sorted(out)


def unresolved_kinds(objects: Sequence[Mapping[str, Any]], resources: Resources) -> list[tuple[str, str]]:
    """(apiVersion, kind) of the objects `requirements` skips, sorted."""
    return sorted(_plan(objects, resources).unresolved)


# checking against the API server ----------------------------------------------------------------


def _review(requirement: Requirement, user: str, groups: list[str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"user": user, "groups": groups}
    if requirement.non_resource_url:
        spec["nonResourceAttributes"] = {"path": requirement.non_resource_url, "verb": requirement.verb}
    else:
        resource, _, subresource = requirement.resource.partition("/")
        attributes = {
            "namespace": requirement.namespace,
            "verb": requirement.verb,
            "group": requirement.api_group,
            "resource": resource,
            "subresource": subresource,
            "name": requirement.resource_name,
        }
        spec["resourceAttributes"] = {k: v for k, v in attributes.items() if v}
    return {
        "apiVersion": kinds.SUBJECT_ACCESS_REVIEW.api_version,
        "kind": "SubjectAccessReview",
        "spec": spec,
    }


class _Reviewer:
    """Asks the API server about requirements, each at most once, a bounded number at a time."""

    def __init__(self, client: Client, namespace: str, service_account: str) -> None:
        self._client = client
        self._user = f"system:serviceaccount:{namespace}:{service_account}"
        self._groups = [
            "system:serviceaccounts",
            f"system:serviceaccounts:{namespace}",
            "system:authenticated",
        ]
        self._limit = asyncio.Semaphore(CONCURRENCY)
        self._answers: dict[Requirement, bool] = {}
        self.reviews = 0

    async def _allowed(self, requirement: Requirement) -> bool:
        async with self._limit:
            # dry_run=False: a dry-run client would otherwise send dryRun=All, which a review ignores
            # on some servers and rejects on others; a review stores nothing either way.
            review = await self._client.create(_review(requirement, self._user, self._groups), dry_run=False)
        self.reviews += 1
        return bool((review.get("status") or {}).get("allowed"))

    async def allowed(self, requirements: Iterable[Requirement]) -> dict[Requirement, bool]:
        todo = sorted(set(requirements) - self._answers.keys())
        try:
            async with asyncio.TaskGroup() as tg:
                tasks = {r: tg.create_task(self._allowed(r)) for r in todo}
        except* errors.APIError as group:
            # One cause is enough for a status message; they are all the same in practice (403).
            raise PermissionCheckError(
                f"cannot check the permissions of ServiceAccount {self._user}: {group.exceptions[0]}"
            ) from None
        self._answers.update({r: task.result() for r, task in tasks.items()})
        return self._answers


async def _resource_table(
    client: Client, objects: Sequence[Mapping[str, Any]]
) -> dict[tuple[str, str], tuple[str, bool]]:
    async def lookup(api_version: str, kind: str) -> tuple[str, bool] | None:
        try:
            info = await client.resource_for(GroupVersionKind.from_api_version(api_version, kind))
        except (NoKindMatch, ValueError):
            return None
        return info.gvr.resource, info.namespaced

    wanted = sorted({(str(o.get("apiVersion") or ""), str(o.get("kind") or "")) for o in objects})
    async with asyncio.TaskGroup() as tg:
        tasks = {key: tg.create_task(lookup(*key)) for key in wanted}
    return {key: found for key, task in tasks.items() if (found := task.result()) is not None}


async def missing_permissions(
    client: Client,
    *,
    namespace: str,
    service_account: str,
    objects: Sequence[Mapping[str, Any]],
    revision: str | None = None,
) -> list[Requirement]:
    """The requirements of `objects` that ServiceAccount `namespace/service_account` is denied, sorted
    (empty when it may do everything); with `revision`, the name of the ClusterObjectSet that will
    own them, also its `revision_requirement`. `client` needs `create` on subjectaccessreviews."""
    table = await _resource_table(client, objects)
    plan = _plan(objects, lambda api_version, kind: table.get((api_version, kind)))
    if revision is not None:
        plan.direct.add(revision_requirement(revision))
    reviewer = _Reviewer(client, namespace, service_account)
    if (await reviewer.allowed([EVERYTHING]))[EVERYTHING]:
        return []  # one review instead of about a hundred for a typical bundle
    # Round one: the object permissions and whether each role may be escalated; round two only for
    # the roles that may not (their rules), or that may (the bindings that reference them).
    answers = await reviewer.allowed(plan.direct | {e.escalate for e in plan.escalations})
    needed = set(plan.direct)
    for escalation in plan.escalations:
        needed |= escalation.binds if answers[escalation.escalate] else escalation.rules
    answers = await reviewer.allowed(needed)
    return sorted(r for r in needed if not answers[r])


# the message ------------------------------------------------------------------------------------


def _line(scope: tuple[str, str, str, str, str], verbs: set[str]) -> str:
    namespace, group, resource, name, url = scope
    # Go's %q, as upstream prints the namespace; a lone "*" stands for the whole list, as upstream
    # collapses verbs that include it.
    shown = ",".join(["*"] if "*" in verbs else sorted(verbs))
    if url:
        return f"Namespace:{go_quote(namespace)} Verbs:[{shown}] NonResourceURLs:[{url}]"
    named = f" ResourceNames:[{name}]" if name else ""
    return (
        f"Namespace:{go_quote(namespace)} APIGroups:[{group}] Resources:[{resource}]{named} Verbs:[{shown}]"
    )


def error_message(missing: Iterable[Requirement]) -> str:
    """Upstream's wording: one line per namespace, group, resource and name (or non-resource URL) with
    its verbs, lines sorted."""
    return message_of(lines_of(missing))


def lines_of(missing: Iterable[Requirement]) -> list[str]:
    """The lines of `error_message`, one per scope, sorted, without the sentence that leads them."""
    verbs: dict[tuple[str, str, str, str, str], set[str]] = {}
    for r in missing:
        key = (r.namespace, r.api_group, r.resource, r.resource_name, r.non_resource_url)
        verbs.setdefault(key, set()).add(r.verb)
    return sorted(_line(scope, v) for scope, v in verbs.items())


def message_of(lines: Iterable[str]) -> str:
    """`error_message` from its lines."""
    return (
        "pre-authorization failed: service account requires the following permissions to manage "
        "cluster extension:\n  " + "\n  ".join(line.strip() for line in lines)
    )


class PermissionCheckError(Exception):
    """The API server would not answer the reviews (operator-controller may not create
    SubjectAccessReviews, or the server failed); retrying may help, the message says why."""


class MissingPermissionsError(Exception):
    """The ServiceAccount lacks permissions the rollout needs; `missing` lists them, sorted."""

    def __init__(self, missing: Iterable[Requirement]) -> None:
        self.missing = sorted(missing)
        super().__init__(error_message(self.missing))
